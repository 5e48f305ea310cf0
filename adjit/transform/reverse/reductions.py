"""Reverse mode of a call a reduction rule covers (``rules/arrays.py``: ``np.sum``,
``np.dot`` of vectors, ``x @ y`` ...; a custom vjp of array arguments): one shadow update
per active array argument, ``g`` times the partial for a float beside them."""
import operator

from numba.core import types

from ...ir.value_types import is_differentiable, is_float
from ...rules import NONDIFF, lookup
from ...rules.arrays import lookup_array
from ...rules.classify import call_name
from .context import bar


def apply_array_rule(ctx, stmt, e, prim, args):
    """rev: ``update_k(g, y, *args, a_k%shadow)`` for every active array argument of a
    primitive from float arrays to a float (``np.sum``, ``np.dot``, ``x @ y`` ...)."""
    rule, target = lookup_array(prim), stmt.target
    name = call_name(prim)
    if rule is None and lookup(prim) is NONDIFF and not is_differentiable(
            ctx.typeof(target.name)):
        return  # declared without a derivative: ``x is None``, ``x is not y``
    if rule is None or len(args) != rule.arity or not ctx.active_float(target):
        what = "with these arguments" if rule is not None else "on arrays"
        raise ctx.unsupported(f"'{name}' {what} returning {ctx.typeof(target.name)}",
                              stmt.loc, "array-valued operations, and reductions with an "
                              "axis or other options, have no rule yet")
    scalar_partials = getattr(rule, "scalar_partials", None)  # (a custom vjp's)
    for a in args:
        typ = ctx.typeof(a.name)
        if (ctx.is_active(a) or a.name in ctx.act.carriers) and not (
                isinstance(typ, types.Array) and typ.ndim in rule.ndims) and not (
                scalar_partials and is_float(typ) and a.name not in ctx.act.carriers):
            raise ctx.unsupported(f"'{name}' applied to {typ}", stmt.loc,
                                  f"the rule handles float arrays of rank {rule.ndims}")
    g = e.var(bar(target.name))
    ans = target if rule.reads_ans else e.const(ctx.zero_like(target.name), hint="unused")
    shadows = {k: ctx.shadow_of(a, stmt.loc, e) for k, a in enumerate(args)
               if ctx.active_array(a)}
    # an argument whose values the rule never reads is passed as its shadow (same shape):
    # arrays allocated in the function have no primal in the reverse pass
    passed = [a if rule.reads_args[k] or k not in shadows else shadows[k]
              for k, a in enumerate(args)]
    for k, shadow in shadows.items():
        if rule.updates[k] is not None:
            e.call(rule.updates[k], [g, ans] + passed + [shadow], hint="void")
    for k, a in enumerate(args):  # a float beside the arrays: a_k%bar += g * d_k
        if scalar_partials and ctx.active_float(a):
            d = e.call(scalar_partials[k], list(args), hint="partial")
            ctx.accumulate(e, a, e.binop(operator.mul, g, d, hint="term"))
    ctx.reset(e, target.name)
