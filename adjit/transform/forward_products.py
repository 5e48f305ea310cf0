"""Forward mode over adjit's guarded products (``rules.core``), which appear in the
reverse-mode code that ``jvp(grad(f))`` and ``hvp`` differentiate: each product's
tangent by the product rule, with the same guard."""
import operator

from numba.core import types

from ..ir.builder import clone_stmt
from ..rules.classify import callee_object
from ..rules.core import (adjoint_product_branch, adjoint_product_chain, adjoint_product_sum,
                          adjoint_product_sum_pair)
from .partials import branch_checked


def fwd_adjoint_product(ctx, stmt, e):
    """fwd: ``y = adjoint_product(g, d)`` (reverse-mode code) / ``y%dot =
    adjoint_product(g%dot, d) + adjoint_product(g, d%dot)``: the product rule, with a zero
    factor contributing nothing, so an adjoint that is zero with a zero tangent (a value
    that never reaches the output) stays out of the Hessian too. A select-checked product
    of a reverse sweep's loop, or of a long straight-line reverse sweep
    (``ctx.chain_as_branch``), becomes a branch-checked one, and its tangent one
    ``adjoint_product_sum`` (``branch_checked``). Pairs and pairs of sums have their own
    handlers."""
    args = stmt.value.args
    func = stmt.value.func
    if len(args) in _TUPLE_FORMS:
        return _TUPLE_FORMS[len(args)](ctx, stmt, e)
    chain = len(args) == 2 and branch_checked(ctx, callee_object(ctx.fn, func))
    if chain:
        e.call(adjoint_product_branch, list(args), target=stmt.target)
    else:
        e.stmt(clone_stmt(stmt))
    if not ctx.active(stmt.target):
        return
    if len(args) == 4 or chain:  # each product of a sum; a product checked by a branch
        func = adjoint_product_branch
    g, d = args[:2]
    if chain and ctx.active(g) and ctx.active(d):
        total = e.call(adjoint_product_sum, [ctx.tangent(e, g), d, g, ctx.tangent(e, d)],
                       hint="tan")
        ctx.set_tangent(e, stmt.target, total)
        return
    ctx.set_tangent(e, stmt.target, _product_rule(ctx, e, args, func))


def _product_rule(ctx, e, args, func):
    """The tangent of ``g1 * d1 (+ g2 * d2)`` (``args`` the factors in pairs), each term
    a guarded product ``func``; None when no factor has a tangent."""
    total = None
    for g, d in zip(args[::2], args[1::2]):
        for seed, factor in ((g, d), (d, g)):
            if ctx.active(seed):
                term = e.call(func, [ctx.tangent(e, seed), factor] if seed is g
                              else [factor, ctx.tangent(e, seed)], hint="tan")
                total = term if total is None else e.binop(operator.add, total, term,
                                                           hint="tan")
    return total


def fwd_adjoint_product_pair(ctx, stmt, e):
    """fwd: ``(p1, p2) = adjoint_product_pair(g, d1, d2)`` / ``(p1%dot, p2%dot)``, each by
    the product rule: both with one NaN check (``adjoint_product_sum_pair``) where every
    factor has a tangent, else each with its own."""
    e.stmt(clone_stmt(stmt))
    if not ctx.active(stmt.target):
        return
    g, d1, d2 = stmt.value.args
    if all(ctx.active(v) for v in (g, d1, d2)):
        dg = ctx.tangent(e, g)
        e.call(adjoint_product_sum_pair, [dg, d1, g, ctx.tangent(e, d1),
                                          dg, d2, g, ctx.tangent(e, d2)],
               target=ctx.dot(stmt.target.name))
        return
    form = adjoint_product_branch if ctx.chain_as_branch else adjoint_product_chain
    items = [_product_rule(ctx, e, [g, d], form) for d in (d1, d2)]
    _tangent_pair(ctx, stmt, e, items)


def fwd_adjoint_product_sum_pair(ctx, stmt, e):
    """fwd: ``(s1, s2) = adjoint_product_sum_pair(...)`` (an hvp's code, for a third
    derivative) / each sum's tangent by the product rule."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(stmt.target):
        args = stmt.value.args
        _tangent_pair(ctx, stmt, e, [_product_rule(ctx, e, args[k:k + 4],
                                                   adjoint_product_branch) for k in (0, 4)])


def _tangent_pair(ctx, stmt, e, items):
    """Assign the tuple of ``items`` (None: a zero) as the tangent of pair ``stmt``."""
    dtype = ctx.typeof(stmt.target.name).dtype
    items = [e.const(0.0, hint="tan") if t is None and dtype == types.float64
             else e.call(dtype, [e.const(0.0, hint="tan")], hint="tan") if t is None
             else t for t in items]
    e.assign(e.tuple(items, hint="tantup"), target=ctx.dot(stmt.target.name))


#: handlers by argument count of the guarded products that return two values
_TUPLE_FORMS = {3: fwd_adjoint_product_pair, 8: fwd_adjoint_product_sum_pair}
