"""What carries a tangent in forward mode, and what a tangent is called: shared by the
forward pass (``forward.py``) and every forward handler module, which therefore never
import the pass that drives them."""
from numba.core import types

from ..ir.value_types import is_differentiable


def dot(name):
    """Name of the tangent of variable ``name``."""
    return f"{name}%dot"


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
