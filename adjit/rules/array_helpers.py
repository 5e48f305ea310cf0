"""NumPy array functions computed by adjit's own ``@njit`` helpers, derived like any user
helper (``capture/composites.py`` replaces the call): each computes what Numba computes,
in the same order of operations, from primitives that have rules.

- ``np.vander``: each column the elementwise product of ``x`` and the column before it,
  as Numba fills it, so its values and its derivative (``k x**(k-1)`` by the product
  rule) follow;
- ``np.nan_to_num``: NaN and infinite elements replaced by constants (derivative 0),
  the others kept (derivative 1), in a new array or, for a constant ``copy=False``,
  written back into the argument, which is returned;
- ``np.ediff1d`` without ``to_begin``/``to_end``: the flat differences;
- ``np.real`` of a float array or number: itself;
- ``np.float_power`` of float64 values: ``np.power``, which Numba computes alike.

Test cases: ``tests/rules/test_array_helpers.py``.
"""
import numpy as np
from numba.core import types

from ..compile.inline_library import internal_jit
from .composites import absent, defcomposite


@internal_jit
def vander(x, N=None, increasing=False):
    """``np.vander`` of a 1-D float ``x``: ``N`` columns (``len(x)`` by default) of the
    powers of ``x``, decreasing unless ``increasing``, in float64 (as Numba promotes with
    ``int``)."""
    n = x.shape[0]
    m = n if N is None else N
    if m < 0:
        raise ValueError("Negative dimensions are not allowed")
    out = np.empty((n, m))
    for k in range(m):
        col = k if increasing else m - 1 - k
        prev = col - 1 if increasing else col + 1
        for i in range(n):
            out[i, col] = 1.0 if k == 0 else x[i] * out[i, prev]
    return out


@internal_jit
def _replaced_non_finite(x, nan, posinf, neginf):
    """A new array of ``x`` with NaN replaced by ``nan`` and infinities by ``posinf``
    and ``neginf`` (the largest finite floats when None)."""
    low = np.finfo(x.dtype).min if neginf is None else neginf
    high = np.finfo(x.dtype).max if posinf is None else posinf
    out = np.empty_like(x)
    flat_in = np.ravel(x)
    flat = out.reshape(-1)
    for i in range(flat.shape[0]):
        v = flat_in[i]
        if np.isnan(v):
            flat[i] = nan
        elif np.isinf(v):
            flat[i] = high if v > 0 else low
        else:
            flat[i] = v
    return out


@internal_jit
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num`` of a float array, into a new array (``copy`` true)."""
    return _replaced_non_finite(x, nan, posinf, neginf)


@internal_jit
def nan_to_num_in_place(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num(x, copy=False)``: written back into ``x``, which is returned, as
    Numba does."""
    x[...] = _replaced_non_finite(x, nan, posinf, neginf)
    return x


def choose_nan_to_num(argtypes):
    """The helper of ``np.nan_to_num`` of a float array, by ``copy``, which must be a
    constant (a chooser given literal types)."""
    if not isinstance(argtypes[0].dtype, types.Float):
        return None
    copy = argtypes[1] if len(argtypes) > 1 else types.Omitted(True)
    value = (copy.value if isinstance(copy, types.Omitted) else
             copy.literal_value if isinstance(copy, types.BooleanLiteral) else None)
    return None if value is None else nan_to_num if value else nan_to_num_in_place


choose_nan_to_num.literal_types = True


@internal_jit
def ediff1d(ary, to_end=None, to_begin=None):
    """``np.ediff1d(ary)``: the differences of consecutive elements of ``ary`` flattened."""
    flat = ary.flatten()
    return flat[1:] - flat[:-1]


def choose_ediff1d(argtypes):
    """``ediff1d`` for a call without ``to_end`` and ``to_begin`` (a chooser)."""
    return ediff1d if all(absent(t) for t in argtypes[1:]) else None


@internal_jit
def real(val):
    """``np.real`` of a float array or number: itself (NumPy returns the array)."""
    return val


def choose_real(argtypes):
    """``real`` of a float or integer array or number (a chooser; complex ones keep
    their own rule, or refusal)."""
    t = argtypes[0]
    return None if isinstance(getattr(t, "dtype", t), types.Complex) else real


@internal_jit
def float_power(x1, x2):
    """``np.float_power`` of float64 operands: ``np.power`` (Numba computes both with
    the same ``pow``)."""
    return np.power(x1, x2)


def choose_float_power(argtypes):
    """``float_power`` when every operand is float64 (others would be converted first)."""
    return float_power if all(getattr(t, "dtype", t) == types.float64
                              for t in argtypes[:2]) else None


defcomposite(np.vander, vander, ranks=(1,))
defcomposite(np.nan_to_num, choose_nan_to_num)
defcomposite(np.ediff1d, choose_ediff1d)
defcomposite(np.real, choose_real, ranks=(0, 1, 2, 3))
defcomposite(np.float_power, choose_float_power, ranks=(0, 1, 2, 3))
