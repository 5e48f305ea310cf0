"""Elementwise array operations in reverse mode: ``np.sin(x)``, ``x * y``, ``2.0 * x``,
``-x``, ``x ** 2`` on 1-D/2-D float arrays, differentiated with the scalar rules; array
comparisons (``z >= 0``) make boolean masks, with no derivative.

Their result is a new array, handled like an allocation in the function (``y%shadow``,
zeroed, see ``shadows.py``). Its primal values never reach the reverse pass through the
tape (which holds scalars only): when an update needs them (``exp``'s partial reads
``ans``, ``np.dot(np.exp(x), y)`` reads ``exp(x)``) the reverse pass recomputes the
elementwise expression chain from arrays it may read (``Shadows.readable``).
"""
from numba.core import types

from ...rules import NONDIFF, lookup
from ...rules.core import ZERO
from ...rules.elementwise import elementwise_update, reads_ans, reads_operand
from ...rules.classify import COMPARE, elementwise_parts


def rev_elementwise(ctx, stmt, e):
    """fwd: ``y = sin(x)``, ``a * b``, ``-a`` on arrays (a new array) / rev:
    ``x%shadow[i] += y%shadow[i] * d(x[i])``; a scalar operand takes the sum."""
    prim, operands = elementwise_parts(ctx.fn, stmt.value)
    target = stmt.target
    if prim in COMPARE:
        return  # a boolean mask
    rule = lookup(prim)
    if rule is None or rule is NONDIFF:
        raise ctx.unsupported(f"'{getattr(prim, '__name__', prim)}' on arrays", stmt.loc,
                              "no differentiation rule is registered for it")
    for a in operands:
        if (a.name in ctx.act.carriers and not ctx.is_active(a)
                and not is_mask(ctx.typeof(a.name))):
            raise ctx.unsupported(f"an elementwise operation on {ctx.typeof(a.name)}",
                                  stmt.loc)
    if not ctx.active_array(target):
        if any(ctx.is_active(a) for a in operands):
            raise ctx.unsupported("an elementwise operation with an inactive result",
                                  stmt.loc)
        return
    g = ctx.shadow_of(target, stmt.loc, e)
    for k, a in enumerate(operands):
        partial = rule.partial(k)
        if not ctx.is_active(a) or partial is ZERO:
            continue
        if not (ctx.active_array(a) or ctx.active_float(a)):
            raise ctx.unsupported(f"an elementwise operation on {ctx.typeof(a.name)}",
                                  stmt.loc)
        ans = target if reads_ans(partial) else g
        passed = []
        for j, b in enumerate(operands):
            if reads_operand(partial, j):
                passed.append(b)
            elif isinstance(ctx.typeof(b.name), types.Array):
                passed.append(g)   # same rank; its values are not read
            else:
                passed.append(e.const(0.0, hint="unused"))
        update = elementwise_update(partial, len(operands))
        if ctx.active_array(a):
            e.call(update, [g, ans] + passed + [ctx.shadow_of(a, stmt.loc, e)], hint="void")
        else:
            total = e.call(update, [g, ans] + passed + [e.const(0.0, hint="noshadow")],
                           hint="sum")
            ctx.accumulate(e, a, total)




def is_mask(typ):
    """A boolean or integer array: it carries no derivative."""
    return isinstance(typ, types.Array) and isinstance(typ.dtype, (types.Boolean,
                                                                   types.Integer))
