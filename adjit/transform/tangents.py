"""What carries a tangent in forward mode, and what a tangent is called: shared by the
forward pass (``forward.py``) and every forward handler module, which therefore never
import the pass that drives them."""
import functools

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
    """Positions of a tuple type's items that carry tangents (a new list)."""
    return list(_differentiable_items(typ))


@functools.lru_cache(maxsize=4096)
def _differentiable_items(typ):
    """``differentiable_items``, remembered per type: forward mode over a reverse pass
    asks it of one record type for each of the record's items (395 items in
    ``large_single_block``'s, 470,000 calls of ``has_tangent``)."""
    return tuple(k for k, t in enumerate(typ.types) if has_tangent(t))


def has_tangent(typ):
    """Floats, float arrays and tuples holding any of these carry a tangent."""
    typ = types.unliteral(typ)
    if is_differentiable(typ):
        return True
    if isinstance(typ, types.BaseTuple):
        return bool(_differentiable_items(typ))
    return False
