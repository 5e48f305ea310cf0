"""Emitting the product of a seed with one partial derivative, shared by both modes."""

import operator

from ..rules.core import MINUS_ONE, ONE, ArgPartial, FuncPartial, adjoint_product


def emit_partial(e, partial, g, ans, args, guard=True):
    """``g * d`` for one partial derivative ``d`` (see ``rules.core``): an adjoint's
    contribution in reverse mode (``g`` the output adjoint), a tangent term in forward mode
    (``g`` the input tangent). Arguments the partial does not read are passed as 0.0, so
    the reverse pass never saves them. The product is ``adjoint_product(g, d)``: a zero
    seed contributes 0 even when ``d`` is inf/NaN; ``guard=False`` multiplies plainly (whole
    arrays of tangents and partials in forward mode)."""
    if partial is ONE:
        return g
    if partial is MINUS_ONE:
        return e.neg(g)
    if isinstance(partial, ArgPartial):
        return _product(e, g, args[partial.index], guard)
    if isinstance(partial, FuncPartial):
        call_args = [ans] if partial.takes_ans else []
        for i, a in enumerate(args):
            call_args.append(a if i in partial.reads_args else e.const(0.0, hint="unused"))
        if partial.takes_ans and not partial.reads_ans:
            call_args[0] = e.const(0.0, hint="unused")
        d = e.call(partial.jit, call_args, hint="d")
        return _product(e, g, d, guard)
    raise TypeError(partial)


def _product(e, g, d, guard):
    """``g * d``, where a zero seed contributes 0 even when ``d`` is inf or NaN: in
    reverse mode a value that never reaches the output, in forward mode a value whose
    tangent is exactly zero (``atan2(0 * u, 0.0)`` has tangent 0, not 0 * nan)."""
    if not guard:
        return e.binop(operator.mul, g, d, hint="prod")
    return e.call(adjoint_product, [g, d], hint="prod")
