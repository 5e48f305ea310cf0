"""Random draws whose parameters are differentiated, computed by adjit's own ``@njit``
helpers (``capture/composites.py`` replaces the call), which adjit derives like any user
helper that draws random numbers.

``np.random.normal(loc, scale)`` is, in Numba, ``loc + scale * g`` with ``g`` the next
standard normal draw of the same stream ``np.random.standard_normal()`` takes. The
helpers compute exactly that, so values and the stream are unchanged, and the derivative
is the pathwise one (reparameterisation): 1 for ``loc``, ``g`` for ``scale``, the stream
held fixed. The reverse pass keeps the draws of the forward sweep (it never draws
again). Test cases: ``tests/rules/test_random_draws.py``.
"""
import numpy as np
from numba.core import types

from ..compile.inline_library import internal_jit
from .composites import defcomposite


@internal_jit
def normal_scalar(loc, scale):
    """``np.random.normal(loc, scale)``: one draw."""
    return loc + scale * np.random.standard_normal()


@internal_jit
def normal_sized(loc, scale, size):
    """``np.random.normal(loc, scale, size)``: an array of ``size`` draws, in C order."""
    out = np.empty(size)
    flat = out.reshape(out.size)
    for i in range(out.size):
        flat[i] = loc + scale * np.random.standard_normal()
    return out


def choose_normal(argtypes):
    """The helper of a ``np.random.normal`` call with numbers for ``loc`` and ``scale``:
    one draw, or an integer (or tuple of integers) ``size`` of them."""
    if len(argtypes) < 2 or not all(isinstance(t, (types.Float, types.Integer))
                                    for t in argtypes[:2]):
        return None
    if len(argtypes) == 2 or isinstance(argtypes[2], (types.NoneType, types.Omitted)):
        return normal_scalar
    size = argtypes[2]
    if isinstance(size, types.Integer) or (isinstance(size, types.UniTuple)
                                           and isinstance(size.dtype, types.Integer)):
        return normal_sized
    return None


defcomposite(np.random.normal, choose_normal, ranks=(0,))
