"""Forward mode of lists of floats: a list holding differentiated values has a tangent
list, built, appended to and indexed in step with it (see ``ir/lists.py``).

Element reads and writes need nothing special (``fwd_getitem`` / ``fwd_setitem`` index
the tangent list like an array); this module makes the tangent list and keeps
``append`` in step.
"""
import operator

from numba.core import ir, types

from ..ir.builder import clone_stmt, clone_value
from ..ir.nodes import single_definition
from ..ir.lists import (ARRAY_MAKERS, LIST_OF_ARRAYS_ADVICE, check_method, is_float_list,
                       list_method, list_reduction, nested_list_refusal)
from ..rules.lists import list_argmax, list_argmin


def fwd_build_list(ctx, stmt, e):
    """fwd: ``L = [a, b]`` / ``L%dot = [a%dot, b%dot]`` (zeros for constant items)."""
    e.stmt(clone_stmt(stmt))
    holds = any(ctx.active(v) for v in stmt.value.items)
    if not (ctx.active(stmt.target) or holds):
        return
    typ = ctx.typeof(stmt.target.name)
    if not is_float_list(typ):  # a list of arrays: not carried
        kind = ("list of arrays" if isinstance(getattr(typ, "dtype", None), types.Array)
                else str(typ))
        raise ctx.unsupported(f"a {kind} holding differentiated values", stmt.loc,
                              LIST_OF_ARRAYS_ADVICE)
    items = [ctx.tangent(e, v) for v in stmt.value.items]
    e.assign(ir.Expr.build_list(items, stmt.loc), target=ctx.dot(stmt.target.name))


def refuse_nested_list_write(ctx, stmt):
    """A write of differentiated values into a list inside a list (``v[n][j] = ...``):
    refused by name, as reverse mode refuses it."""
    nested = nested_list_refusal(ctx.fn.func_ir.blocks, ctx.typeof, stmt.target.name,
                                 stmt.loc)
    if nested is not None:
        raise ctx.unsupported(*nested)


def fwd_repeated_list(ctx, stmt, e, base, count):
    """fwd: ``L = [0.0] * n`` / ``L%dot = [0.0] * n``: a list of constants repeated (its
    items may later be written with differentiated values)."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(base):
        raise ctx.unsupported("repeating a list that holds differentiated values",
                              stmt.loc, "fill the list with a loop instead")
    if ctx.active(stmt.target):
        made = single_definition(ctx.fn.func_ir.blocks, base.name)
        if not (isinstance(made, ir.Expr) and made.op == "build_list"):
            raise ctx.unsupported("repeating a list made elsewhere", stmt.loc,
                                  "repeat a list literal ([0.0] * n), or fill a loop")
        zero = ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name).dtype)
        zeros = e.assign(ir.Expr.build_list([zero] * len(made.items), stmt.loc),
                         hint="zeros")  # as many as the repeated list: [0.0, 1.0] * n
        e.assign(ir.Expr.binop(operator.mul, zeros, count, stmt.loc),
                 target=ctx.dot(stmt.target.name))


def fwd_list_new(ctx, stmt, e, cls):
    """fwd: ``L = List()`` / ``L%dot = List()``: an empty list of the same kind."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(stmt.target):
        e.assign(clone_value(stmt.value), target=ctx.dot(stmt.target.name))


def fwd_list_method(ctx, stmt, e, cls):
    """fwd: ``L.append(v)`` / ``L%dot.append(v%dot)``; other methods of a list holding
    differentiated values are refused (as in reverse mode)."""
    e.stmt(clone_stmt(stmt))
    lst, method = list_method(ctx.fn, stmt.value)
    if not ctx.active(lst):
        return
    check_method(method, lst, stmt.loc, ctx.unsupported)
    bound = e.assign(ir.Expr.getattr(e.var(ctx.dot(lst.name)), method, stmt.loc), hint="meth")
    e.call(bound, [ctx.tangent(e, a) for a in stmt.value.args], hint="void")


def fwd_list_reduction(ctx, stmt, e, cls):
    """fwd: ``y = sum(L)`` / ``np.array(L)`` / ``y%dot = sum(L%dot)`` / ``np.array(L%dot)``
    (same call on the tangent list); ``y = max(L)`` / ``y%dot = L%dot[argmax(L)]``."""
    e.stmt(clone_stmt(stmt))
    func, lst = list_reduction(ctx.fn, stmt.value)
    if not ctx.active(stmt.target):
        return
    if not ctx.active(lst):  # an array of constants that later writes make active
        ctx.set_tangent(e, stmt.target, ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name)))
        return
    if func is sum or func in ARRAY_MAKERS:
        call = clone_value(stmt.value)
        call.args = [e.var(ctx.dot(lst.name))] + list(call.args[1:])
        e.assign(call, target=ctx.dot(stmt.target.name))
        return
    k = e.call(list_argmax if func is max else list_argmin, [lst], hint="k")
    e.assign(ir.Expr.getitem(e.var(ctx.dot(lst.name)), k, stmt.loc),
             target=ctx.dot(stmt.target.name))
