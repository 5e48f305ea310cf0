"""What carries a tangent in forward mode, and what a tangent is called: shared by the
forward pass (``forward.py``) and every forward handler module, which therefore never
import the pass that drives them."""
from numba.core import types

from ..ir.value_types import is_differentiable


def tangent_suffix(names):
    """The suffix that names tangents (``x%dot``) in a function whose variables are
    ``names``: ``%dot``, unless the function already has such names (a JVP program
    differentiated again in forward mode, ``jvp`` of code calling ``adjit.jvp``), then
    ``%dot1``, ``%dot2``, ... whichever no variable contains. The tangent of its ``x``
    must not be its own ``x%dot``: both would be assigned, and a number would be
    wrong."""
    suffix, level = "%dot", 0
    while any(suffix in name for name in names):
        level += 1
        suffix = f"%dot{level}"
    return suffix


def differentiable_items(typ):
    """Positions of a tuple type's items that carry tangents."""
    return [k for k, t in enumerate(typ.types) if has_tangent(t)]


def has_tangent(typ):
    """Floats, float arrays and tuples holding any of these carry a tangent."""
    typ = types.unliteral(typ)
    if is_differentiable(typ):
        return True
    if isinstance(typ, types.BaseTuple):
        return bool(differentiable_items(typ))
    return False
