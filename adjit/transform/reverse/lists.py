"""Reverse mode of lists of floats: the shadow of a list is a float array.

``L%lshadow`` (named by the statement that made ``L``, see ``ir/lists.py``) holds
the adjoint of each element by position. Going backwards:
- ``y = L[i]``: ``L%lshadow[i] += y%bar`` (growing the shadow; ``i`` is the position the
  forward pass saw, a negative index resolved against the length at that point);
- ``L[i] = v``: ``v%bar += L%lshadow[i]``, and the slot is cleared;
- ``L.append(v)``: ``v%bar += L%lshadow[n]`` with ``n`` the length before the append,
  and the slot is cleared;
- ``L = [a, b]`` / ``L = List()``: the items take their slots, and the shadow starts
  afresh for the list the previous loop iteration made (every return block starts it
  empty too).
The list's values never reach the reverse pass: element reads are saved as scalars.
"""
import numpy as np
from numba.core import ir, types

from ...ir.builder import fresh_name
from ...ir.lists import (ARRAY_MAKERS, check_method, is_float_list, list_in_tuple_refusal,
                        list_method, list_reduction, list_root, makes_list,
                        nested_list_refusal)
from ...rules.lists import (list_argmax, list_argmin, list_index, shadow_add,
                            shadow_add_array, shadow_add_prefix, shadow_take)
from .context import bar


def list_shadow(root):
    return f"{root}%lshadow"


def active_list(ctx, var):
    """Whether ``var`` is a float list holding differentiated values."""
    return (isinstance(var, ir.Var) and var.name in ctx.act.carriers
            and is_float_list(ctx.typeof(var.name)))


def made_lists(ctx):
    """``{root name: dtype}`` of the active lists made in the function (found once per
    context)."""
    found = ctx.__dict__.get("_made_lists")
    if found is not None:
        return found
    found = {}
    for block in ctx.blocks.values():
        for stmt in block.body:
            if (isinstance(stmt, ir.Assign) and stmt.target.name in ctx.act.carriers
                    and makes_list(ctx.fn, stmt, ctx.definition)):
                typ = ctx.typeof(stmt.target.name)
                found[stmt.target.name] = getattr(typ, "dtype", None) or typ.item_type
    ctx._made_lists = found
    return found


def shadow_name(ctx, var, loc):
    """The shadow variable of active list ``var``; refuses lists not made here."""
    root = list_root(ctx.blocks, var.name, ctx.definition)
    if root not in made_lists(ctx):
        raise ctx.unsupported(*_list_from_outside(ctx, root, var, loc))
    return list_shadow(root)


def _list_from_outside(ctx, root, var, loc):
    """The refusal of a differentiated list the function did not make: where it came
    out of a helper's tuple (``L, s = mk(x)``), that tuple, as forward mode says."""
    made = ctx.definition(root)
    if isinstance(made, ir.Expr) and made.op in ("static_getitem", "exhaust_iter"):
        source = made.value
        if made.op == "static_getitem":
            unpacked = ctx.definition(source.name)
            if isinstance(unpacked, ir.Expr) and unpacked.op == "exhaust_iter":
                source = unpacked.value
        typ = ctx.typeof(source.name)
        if isinstance(typ, types.BaseTuple):
            return list_in_tuple_refusal(typ, ctx.defs[root][0][1].loc)
    nested = nested_list_refusal(ctx.blocks, ctx.typeof, root, loc)
    if nested is not None:
        return nested
    return (f"a list holding differentiated values ({ctx.user_name(var.name)}) made outside "
            "the function or returned by a call", loc,
            "make the list in the function being differentiated")


def start_shadows(ctx, e):
    """Every active list starts with an empty shadow (a return block's reverse)."""
    for root, dtype in sorted(made_lists(ctx).items()):
        e.call(np.zeros, [e.const(0, hint="n"), e.glob(getattr(np, str(dtype)))],
               target=list_shadow(root))


def saved_position(ctx, e, lst, index):
    """Have the forward pass save the position ``lst[index]`` refers to just before
    ``stmt`` (``len(lst)`` when ``index`` is None); return its name."""
    if index is None:
        return saved_call(ctx, e, len, [lst])
    if isinstance(index, int):
        const = fresh_name("$lidx")
        ctx.synthetic_types[const] = types.intp
        e.forward_before(const, ir.Const(index, e.loc))
        index = ir.Var(lst.scope, const, e.loc)
    return saved_call(ctx, e, list_index, [lst, index])


def saved_call(ctx, e, func, args):
    """Have the forward pass save the integer ``func(*args)`` just before ``stmt``;
    return its name."""
    from numba.core.registry import cpu_target
    loc = e.loc
    fvar, pos = fresh_name("$lpos_fn"), fresh_name("lpos")
    ctx.synthetic_types[pos] = types.intp
    ctx.synthetic_types[fvar] = cpu_target.typing_context.resolve_value_type(func)
    e.forward_before(fvar, ir.Global(func.__name__, func, loc))
    e.forward_before(pos, ir.Expr.call(ir.Var(args[0].scope, fvar, loc), list(args), (), loc))
    return pos


def take_slot(ctx, e, shadow, pos, value):
    """``value%bar += shadow[pos]`` and clear the slot."""
    g = e.call(shadow_take, [e.var(shadow), e.var(pos)], hint="lbar")
    ctx.accumulate(e, value, g)


def list_element_index(ctx, expr, loc):
    """The integer index of ``L[i]`` (a Var, or an int for a constant); slices refused."""
    if expr.op == "getitem":
        index = expr.index
        ok = isinstance(ctx.typeof(index.name), types.Integer)
    else:
        index = expr.index_var if expr.index_var is not None else expr.index
        ok = isinstance(expr.index, int)
    if not ok:
        raise ctx.unsupported("slicing a list holding differentiated values", loc,
                              "read its elements one at a time, or use an array")
    return index


def rev_list_read(ctx, stmt, e):
    """fwd: ``y = L[i]`` (and the position) / rev: ``L%lshadow[pos] += y%bar``."""
    expr, target = stmt.value, stmt.target
    index = list_element_index(ctx, expr, stmt.loc)
    if not ctx.active_float(target):
        return
    shadow = shadow_name(ctx, expr.value, stmt.loc)
    pos = saved_position(ctx, e, expr.value, index)
    e.call(shadow_add, [e.var(shadow), e.var(pos), e.var(bar(target.name))],
           target=shadow)
    ctx.reset(e, target.name)


def rev_list_write(ctx, stmt, e):
    """fwd: ``L[i] = v`` (and the position) / rev: ``v%bar += L%lshadow[pos]``, cleared."""
    index = (stmt.index if isinstance(stmt, ir.SetItem)
             else stmt.index_var if stmt.index_var is not None else stmt.index)
    if isinstance(stmt, ir.SetItem) and not isinstance(ctx.typeof(index.name), types.Integer):
        raise ctx.unsupported("writing a slice of a list holding differentiated values",
                              stmt.loc, "write its elements one at a time, or use an array")
    shadow = shadow_name(ctx, stmt.target, stmt.loc)
    pos = saved_position(ctx, e, stmt.target, index)
    take_slot(ctx, e, shadow, pos, stmt.value)


def rev_list_method(ctx, stmt, e, cls):
    """fwd: ``L.append(v)`` (and ``len(L)`` before it) / rev: ``v%bar += L%lshadow[n]``,
    cleared. Other methods of a list holding differentiated values are refused."""
    lst, method = list_method(ctx.fn, stmt.value, ctx.definition)
    if not active_list(ctx, lst):
        return
    check_method(method, lst, stmt.loc, ctx.unsupported)
    shadow = shadow_name(ctx, lst, stmt.loc)
    pos = saved_position(ctx, e, lst, None)
    take_slot(ctx, e, shadow, pos, stmt.value.args[0])


def rev_list_new(ctx, stmt, e, cls=None):
    """fwd: ``L = [a, b]`` / ``List()`` / rev: ``a%bar += L%lshadow[0]`` ..., then an
    empty shadow for the list an earlier iteration made."""
    root = stmt.target.name
    if root not in made_lists(ctx):
        return
    shadow = list_shadow(root)
    if isinstance(stmt.value, ir.Expr) and stmt.value.op == "build_list":
        for k, item in enumerate(stmt.value.items):
            if ctx.active_float(item):
                take_slot(ctx, e, shadow, e.const(k, hint="k").name, item)
    dtype = made_lists(ctx)[root]
    e.call(np.zeros, [e.const(0, hint="n"), e.glob(getattr(np, str(dtype)))], target=shadow)


def rev_list_reduction(ctx, stmt, e, cls):
    """fwd: ``y = sum(L)`` / ``max(L)`` / ``min(L)`` / ``a = np.array(L)`` (and the
    length or position it used) / rev: ``L%lshadow[:n] += y%bar``, ``L%lshadow[k] +=
    y%bar``, ``L%lshadow[:len(a)] += a%shadow``."""
    func, lst = list_reduction(ctx.fn, stmt.value, ctx.definition)
    if not active_list(ctx, lst):
        return
    shadow = shadow_name(ctx, lst, stmt.loc)
    target = stmt.target
    if func in ARRAY_MAKERS:
        if ctx.active_array(target):
            e.call(shadow_add_array, [e.var(shadow), ctx.shadow_of(target, stmt.loc, e)],
                   target=shadow)
        return
    if not ctx.active_float(target):
        return
    g = e.var(bar(target.name))
    if func is sum:
        n = saved_call(ctx, e, len, [lst])
        e.call(shadow_add_prefix, [e.var(shadow), e.var(n), g], target=shadow)
    else:
        k = saved_call(ctx, e, list_argmax if func is max else list_argmin, [lst])
        e.call(shadow_add, [e.var(shadow), e.var(k), g], target=shadow)
    ctx.reset(e, target.name)
