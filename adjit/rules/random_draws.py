"""Random draws whose parameters are differentiated, computed by adjit's own ``@njit``
helpers (``capture/composites.py`` replaces the call), which adjit derives like any user
helper that draws random numbers.

Each helper computes what Numba's implementation computes from the same draw of the same
stream, so values and the stream are unchanged, and the derivative is the pathwise one
(reparameterisation), the draw held fixed:

- ``np.random.normal(loc, scale)``: ``loc + scale * g``, ``g`` the next
  ``np.random.standard_normal()``;
- ``np.random.uniform(low, high)``: ``low + (high - low) * u``, ``u`` the next
  ``np.random.random()``;
- ``np.random.exponential(scale)``: ``-log(1 - u) * scale``.

The reverse pass keeps the draws of the forward sweep (it never draws again). Test cases:
``tests/rules/test_random_draws.py``.
"""
import math

import numpy as np
from numba.core import types
from numba.core.cgutils import is_nonelike

from ..compile.inline_library import internal_jit
from .composites import defcomposite


@internal_jit
def normal_scalar(loc, scale=1.0):
    """``np.random.normal(loc, scale)``: one draw."""
    return loc + scale * np.random.standard_normal()


@internal_jit
def normal_sized(loc, scale, size):
    """``np.random.normal(loc, scale, size)``: ``size`` draws, in C order."""
    out = np.empty(size)
    flat = out.reshape(out.size)
    for i in range(out.size):
        flat[i] = loc + scale * np.random.standard_normal()
    return out


@internal_jit
def uniform_scalar(low, high):
    """``np.random.uniform(low, high)``: one draw."""
    return low + (high - low) * np.random.random()


@internal_jit
def uniform_sized(low, high, size):
    """``np.random.uniform(low, high, size)``: ``size`` draws, in C order."""
    out = np.empty(size)
    flat = out.reshape(out.size)
    for i in range(out.size):
        flat[i] = low + (high - low) * np.random.random()
    return out


@internal_jit
def exponential_scalar(scale):
    """``np.random.exponential(scale)``: one draw."""
    return -math.log(1.0 - np.random.random()) * scale


@internal_jit
def exponential_sized(scale, size):
    """``np.random.exponential(scale, size)``: ``size`` draws, in C order."""
    out = np.empty(size)
    flat = out.reshape(out.size)
    for i in range(out.size):
        flat[i] = -math.log(1.0 - np.random.random()) * scale
    return out


def _sized(typ):
    return isinstance(typ, types.Integer) or (isinstance(typ, types.UniTuple)
                                              and isinstance(typ.dtype, types.Integer))


def _chooser(nparams, scalar, sized, fewer=None):
    """A ``defcomposite`` chooser for a draw of ``nparams`` number parameters then an
    optional ``size``: ``scalar`` without a size, ``sized`` with an integer (or tuple of
    integers) one, ``fewer`` for one parameter fewer (``normal(loc)``); None otherwise,
    and Numba's own implementation runs."""
    def choose(argtypes):
        params, rest = argtypes[:nparams], argtypes[nparams:]
        if len(rest) > 1 or not all(isinstance(t, (types.Float, types.Integer))
                                    for t in params):
            return None
        if len(params) < nparams:
            return fewer if len(params) == nparams - 1 else None
        if not rest or is_nonelike(rest[0]):
            return scalar
        return sized if _sized(rest[0]) else None
    return choose


defcomposite(np.random.normal, _chooser(2, normal_scalar, normal_sized, normal_scalar),
             ranks=(0,))
defcomposite(np.random.uniform, _chooser(2, uniform_scalar, uniform_sized), ranks=(0,))
defcomposite(np.random.exponential, _chooser(1, exponential_scalar, exponential_sized),
             ranks=(0,))
