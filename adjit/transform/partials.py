"""Emitting the product of a seed with one partial derivative, shared by both modes."""

import operator

from numba.core.analysis import compute_cfg_from_blocks

from ..rules.core import (MINUS_ONE, ONE, ArgPartial, FuncPartial, adjoint_product,
                          adjoint_product_chain)


def product_form(blocks):
    """The guarded product for a function with these (primal) blocks: the select form
    where there is a loop (it vectorises), the NaN-branch form in straight-line code
    (it keeps a chain of products at multiply speed). See ``rules.core``."""
    has_loop = bool(compute_cfg_from_blocks(blocks).loops())
    return adjoint_product if has_loop else adjoint_product_chain


def emit_partial(e, partial, g, ans, args, guard=True, product=adjoint_product):
    """``g * d`` for one partial derivative ``d`` (see ``rules.core``): an adjoint's
    contribution in reverse mode (``g`` the output adjoint), a tangent term in forward mode
    (``g`` the input tangent). Arguments the partial does not read are passed as 0.0, so
    the reverse pass never saves them. The product is ``product(g, d)``, one of the
    guarded products (``product_form``): a zero seed contributes 0 even when ``d`` is
    inf/NaN; ``guard=False`` multiplies plainly (whole arrays of tangents and partials in
    forward mode)."""
    if partial is ONE:
        return g
    if partial is MINUS_ONE:
        return e.neg(g)
    if isinstance(partial, ArgPartial):
        return emit_product(e, g, args[partial.index], product if guard else None)
    if isinstance(partial, FuncPartial):
        call_args = [ans] if partial.takes_ans else []
        for i, a in enumerate(args):
            call_args.append(a if i in partial.reads_args else e.const(0.0, hint="unused"))
        if partial.takes_ans and not partial.reads_ans:
            call_args[0] = e.const(0.0, hint="unused")
        d = e.call(partial.jit, call_args, hint="d")
        return emit_product(e, g, d, product if guard else None)
    raise TypeError(partial)


def emit_product(e, g, d, product):
    """``g * d``, where a zero seed contributes 0 even when ``d`` is inf or NaN: in
    reverse mode a value that never reaches the output, in forward mode a value whose
    tangent is exactly zero (``atan2(0 * u, 0.0)`` has tangent 0, not 0 * nan)."""
    if not product:
        return e.binop(operator.mul, g, d, hint="prod")
    return e.call(product, [g, d], hint="prod")
