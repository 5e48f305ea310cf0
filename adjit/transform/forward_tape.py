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
from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from numba.core.extending import overload
from numba.np.numpy_support import as_dtype
from ..rules.core import deflinear


def fwd_tape_push(ctx, stmt, e):
    """fwd: ``push(rec)`` / ``push((tangents of rec's float items..., *rec))``: one push,
    tangents below the primal items (a record may end with a block id that the next
    reverse block pops on its own, so the primal items must stay on top). Each tangent
    goes in its primal's type (``record_form``), as ``fwd_tape_pop`` reads it; the push
    is checked against that (``checked_push``)."""
    tape, rec = stmt.value.args
    typ = types.unliteral(ctx.typeof(rec.name))
    if isinstance(typ, types.BaseTuple) and differentiable_items(typ):
        tan = ctx.tangent(e, rec)
        items = [in_record_form(e, e.item(tan, k, hint="t"), rec, index, typ.types[index])
                 for k, index in enumerate(differentiable_items(typ))]
        items += [e.item(rec, k, hint="p") for k in range(len(typ.types))]
        expected = types.Tuple(list(tangent_type(typ).types) + list(typ.types))
        e.call(tape_rt.checked_push(expected), [tape, e.tuple(items, hint="duals")],
               hint="pushed")
    elif is_float(typ):
        tan = as_float_type(e, ctx.tangent(e, rec), typ)
        e.call(tape_rt.checked_push(types.Tuple([typ, typ])), [tape, e.tuple([tan, rec])],
               hint="pushed")
    else:
        e.stmt(clone_stmt(stmt))


def record_form_impl(tangent, primal):
    """``tangent`` in the type and layout of its primal, as a record's pop reads it."""


@overload(record_form_impl, jit_options=INTERNAL_JIT_OPTIONS)
def _record_form(tangent, primal):
    """The identity when the tangent has its primal's type (the common case); else a
    conversion: a float32 primal's tangent that a forward rule computed in float64
    (``np.linalg.cholesky``, ``np.cumprod``) would be read as float32 words, and an
    F-ordered primal's C-ordered tangent (``np.linalg.inv``) transposed."""
    if isinstance(primal, types.Float) and isinstance(tangent, types.Number):
        if tangent == primal:
            return lambda tangent, primal: tangent
        cast = as_dtype(primal).type
        return lambda tangent, primal: cast(tangent)
    if not (isinstance(primal, types.Array) and isinstance(tangent, types.Array)):
        return lambda tangent, primal: tangent
    same_dtype = tangent.dtype == primal.dtype
    if primal.ndim == 0:  # has no layout to convert (np.ascontiguousarray makes it 1-D)
        if same_dtype:
            return lambda tangent, primal: tangent
        dt = as_dtype(primal.dtype)
        return lambda tangent, primal: tangent.astype(dt)
    if primal.layout == "C":
        if same_dtype:
            return lambda tangent, primal: np.ascontiguousarray(tangent)
        dt = as_dtype(primal.dtype)
        return lambda tangent, primal: np.ascontiguousarray(tangent.astype(dt))
    if primal.layout == "F":
        if same_dtype:
            return lambda tangent, primal: np.asfortranarray(tangent)
        dt = as_dtype(primal.dtype)
        return lambda tangent, primal: np.asfortranarray(tangent.astype(dt))
    if same_dtype:
        return lambda tangent, primal: tangent
    dt = as_dtype(primal.dtype)
    return lambda tangent, primal: tangent.astype(dt)


record_form = internal_jit(lambda tangent, primal: record_form_impl(tangent, primal))
# a conversion, linear in the tangent: forward mode over an hvp (a third derivative)
# converts the tangent's tangent the same way
deflinear(record_form, 0)


def as_float_type(e, value, typ):
    """``value`` in the float type ``typ`` by Numba's own conversion (``np.float64(v)``),
    which compiles nothing of its own (``record_form`` is a compile per signature)."""
    return e.call(as_dtype(types.unliteral(typ)).type, [value], hint="t")


def in_record_form(e, tangent, rec, index, typ):
    """Item ``index`` of a record's tangent in its primal's type: a float by
    ``as_float_type``, an array by ``record_form``."""
    if is_float(typ):
        return as_float_type(e, tangent, typ)
    return e.call(record_form, [tangent, e.item(rec, index, hint="p")], hint="t")


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
    layout: ``record_form``); an array inside a nested tuple, which the push does not
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
                    and tape_rt.is_put(loads.get(value.func.name))):
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
