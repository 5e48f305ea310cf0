"""Forward mode over the tape calls of a reverse program (forward-over-reverse): a
record's tangents travel on the tape with it, below its primal items.
"""
import numpy as np
from numba.core import ir, types

from ..ir.builder import clone_stmt
from ..ir.nodes import global_values
from ..runtime import tape as tape_rt
from ..ir.value_types import is_float
from .tangents import differentiable_items


def fwd_tape_push(ctx, stmt, e):
    """fwd: ``push(rec)`` / ``push((tangents of rec's float items..., *rec))``: one push,
    tangents below the primal items (a record may end with a block id that the next
    reverse block pops on its own, so the primal items must stay on top)."""
    tape, rec = stmt.value.args
    typ = ctx.typeof(rec.name)
    if isinstance(typ, types.BaseTuple) and differentiable_items(typ):
        tan = ctx.tangent(e, rec)
        items = [_in_layout_of(e, e.item(tan, k, hint="t"), typ.types[index])
                 for k, index in enumerate(differentiable_items(typ))]
        items += [e.item(rec, k, hint="p") for k in range(len(typ.types))]
        e.call(tape_rt.tape_push, [tape, e.tuple(items, hint="duals")], hint="pushed")
    elif is_float(typ):
        e.call(tape_rt.tape_push, [tape, e.tuple([ctx.tangent(e, rec), rec])], hint="pushed")
    else:
        e.stmt(clone_stmt(stmt))


def _in_layout_of(e, tangent, primal_type):
    """``tangent`` in the layout of its C- or F-ordered primal, as the pop reads it
    (``tangent_type``): ``np.linalg.inv`` returns an F-ordered array whose tangent
    ``-(A^-1 dA A^-1)`` is C-ordered, and reading one as the other transposes it. A
    tangent already in that layout is passed on as it is, not copied."""
    layout = getattr(types.unliteral(primal_type), "layout", None)
    if layout == "C":
        return e.call(np.ascontiguousarray, [tangent], hint="t")
    if layout == "F":
        return e.call(np.asfortranarray, [tangent], hint="t")
    return tangent


def fwd_tape_pop(ctx, stmt, e):
    """fwd: ``rec = pop()`` / then pop the tangent record that lies below it."""
    typ = ctx.typeof(stmt.target.name)
    tape = stmt.value.args[0]
    e.stmt(clone_stmt(stmt))
    if isinstance(typ, types.BaseTuple) and differentiable_items(typ):
        e.call(tape_rt.pop_record(tangent_type(typ)), [tape], target=ctx.dot(stmt.target.name))
    elif is_float(typ):
        e.call(tape_rt.pop_record(typ), [tape], target=ctx.dot(stmt.target.name))


def tangent_type(typ, depth=0):
    """The type a popped tangent is read as: floats keep theirs, a tuple becomes the
    tuple of its differentiable items' tangent types (ints drop out, at any depth). An
    array item of a record keeps its primal's type (the push converts the tangent to that
    layout: ``_in_layout_of``); an array inside a nested tuple, which the push does not
    convert, is read by its strides (layout 'A')."""
    typ = types.unliteral(typ)
    if isinstance(typ, types.BaseTuple):
        return types.Tuple([tangent_type(typ.types[k], depth + 1)
                            for k in differentiable_items(typ)])
    if isinstance(typ, types.Array) and depth > 1:
        return typ.copy(layout="A", readonly=False)
    return typ


def early_record_tangents(blocks, typeof):
    """For each record written item by item (``tape_reserve`` then ``tape_put``s, see
    ``reverse.forward_pass.push_record``): ``slot name -> (tangent words, {item offset:
    tangent offset})``. The tangents of its float items form the record below it, in
    item order, as ``fwd_tape_push`` lays out a whole record's; the items are scalars.
    ``typeof`` is the function's own (offsets are literal types)."""
    loads = global_values(blocks)
    floats = {}
    for block in blocks.values():
        for stmt in block.body:
            value = getattr(stmt, "value", None)
            if (isinstance(value, ir.Expr) and value.op == "call"
                    and loads.get(value.func.name) is tape_rt.tape_put):
                slot, offset, item = value.args
                found = floats.setdefault(slot.name, [])
                if isinstance(types.unliteral(typeof(item.name)), types.Float):
                    found.append(typeof(offset.name).literal_value)
    return {slot: (len(offsets), {off: k for k, off in enumerate(sorted(offsets))})
            for slot, offsets in floats.items()}


def fwd_tape_reserve(ctx, stmt, e):
    """fwd: reserve the record of the tangents first, so that it lies below the primal
    record (``ctx.dot(slot)`` is its slot)."""
    tangent_words, _ = ctx.early_records.get(stmt.target.name, (0, {}))
    if tangent_words:
        e.call(tape_rt.tape_reserve, [stmt.value.args[0], e.const(tangent_words)],
               target=ctx.dot(stmt.target.name))
    e.stmt(clone_stmt(stmt))


def fwd_tape_put(ctx, stmt, e):
    """fwd: write the item, and a float item's tangent at its place in the record below."""
    e.stmt(clone_stmt(stmt))
    slot, offset, item = stmt.value.args
    _, tangent_offsets = ctx.early_records[slot.name]
    at = tangent_offsets.get(ctx.fn.typeof(offset.name).literal_value)
    if at is not None:
        e.call(tape_rt.tape_put, [e.var(ctx.dot(slot.name)), e.const(at),
                                  ctx.tangent(e, item)], hint="put")
