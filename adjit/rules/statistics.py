"""NumPy statistics and summation functions computed by adjit's own ``@njit`` helpers,
which adjit derives like any user helper (``capture/composites.py`` replaces the call).

Each helper computes what NumPy computes, from primitives that have rules (``np.sort``,
``np.max``, ``@``, element reads), so its derivative follows: the median's adjoint goes
to the middle element(s) of the sorted array, a percentile's to the two elements it
interpolates between (and to ``q`` through the interpolation weight), ``np.ptp``'s to the
maximum and the minimum, and the ``nan*`` reductions skip NaN elements in both the value
and the derivative. ``defcomposite`` registers one function; the rank of argument 0
chooses the helper. Test cases: ``tests/rules/test_statistics.py``.
"""
import math

import numpy as np

from ..compile.inline_library import internal_jit
from .composites import absent, defcomposite


@internal_jit
def _sorted(a):
    """The elements of ``a`` in ascending order, as a new 1-D array (NaNs last)."""
    return np.sort(a.flatten())


@internal_jit
def ptp(a):
    """``np.ptp``: the maximum minus the minimum."""
    return np.max(a) - np.min(a)


@internal_jit
def median(a):
    """``np.median``: the middle element of the sorted array, or the mean of the middle
    two; NaN when ``a`` holds a NaN, as NumPy's."""
    s = _sorted(a)
    n = s.shape[0]
    if n == 0 or np.isnan(s[n - 1]):
        return np.nan
    h = n // 2
    if n % 2 == 1:
        return s[h]
    return 0.5 * (s[h - 1] + s[h])


@internal_jit
def quantile(a, q):
    """``np.quantile(a, q)`` for a scalar ``q`` in [0, 1], NumPy's default ('linear')
    method: interpolate between the sorted elements around position ``q (n - 1)``."""
    return _quantile_of_sorted(_sorted(a), q)


@internal_jit
def _quantile_of_sorted(s, q):
    """``quantile`` of the already sorted 1-D ``s``."""
    n = s.shape[0]
    if not 0.0 <= q <= 1.0:
        raise ValueError("Quantiles must be in the range [0, 1]")
    if n == 0 or np.isnan(s[n - 1]):
        return np.nan
    position = q * (n - 1)
    lo = min(int(math.floor(position)), n - 1)
    hi = min(lo + 1, n - 1)
    return s[lo] + (position - lo) * (s[hi] - s[lo])


@internal_jit
def percentile(a, q):
    """``np.percentile(a, q)`` for a scalar ``q`` in [0, 100]."""
    if not 0.0 <= q <= 100.0:
        raise ValueError("Percentiles must be in the range [0, 100]")
    return quantile(a, q / 100.0)


@internal_jit
def quantiles(a, q):
    """``np.quantile(a, q)`` for a 1-D array ``q``: one quantile per entry."""
    s = _sorted(a)  # once, for every level
    out = np.empty(q.shape[0])
    for j in range(q.shape[0]):
        out[j] = _quantile_of_sorted(s, q[j])
    return out


@internal_jit
def percentiles(a, q):
    """``np.percentile(a, q)`` for a 1-D array ``q``."""
    if q.shape[0] and not (q.min() >= 0.0 and q.max() <= 100.0):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return quantiles(a, q / 100.0)


def _by_q(scalar, per_entry):
    """A chooser (``defcomposite``): the helper for a number ``q`` or a 1-D array ``q``
    of numbers; None leaves other forms to their refusal."""
    def choose(argtypes):
        from numba.core import types
        q = argtypes[1] if len(argtypes) > 1 else None
        if isinstance(q, (types.Integer, types.Float)):
            return scalar
        if (isinstance(q, types.Array) and q.ndim == 1
                and isinstance(q.dtype, (types.Integer, types.Float))):
            return per_entry
        return None
    return choose


@internal_jit
def nansum(a):
    """``np.nansum``: the sum of the elements that are not NaN."""
    x = a.flatten()
    total = 0.0
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            total += x[i]
    return total


@internal_jit
def nanmean(a):
    """``np.nanmean``: the mean of the elements that are not NaN (NaN if there are none)."""
    x = a.flatten()
    total = 0.0
    count = 0
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            total += x[i]
            count += 1
    return total / count if count > 0 else np.nan


@internal_jit
def nanvar(a):
    """``np.nanvar``: the mean squared deviation from ``nanmean`` of the elements that
    are not NaN (NaN if there are none), as Numba computes it."""
    x = a.flatten()
    m = nanmean(x)
    total = 0.0
    count = 0
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            d = x[i] - m
            total += d * d
            count += 1
    return total / count if count > 0 else np.nan


@internal_jit
def nanstd(a):
    """``np.nanstd``: the square root of ``nanvar``."""
    return np.sqrt(nanvar(a))


@internal_jit
def nanprod(a):
    """``np.nanprod``: the product of the elements that are not NaN (1 if there are
    none)."""
    x = a.flatten()
    total = 1.0
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            total *= x[i]
    return total


@internal_jit
def nanmax(a):
    """``np.nanmax``: the first maximal element among those that are not NaN."""
    x = a.flatten()
    best = np.nan
    for i in range(x.shape[0]):
        if not np.isnan(x[i]) and (np.isnan(best) or x[i] > best):
            best = x[i]
    return best


@internal_jit
def nanmin(a):
    """``np.nanmin``: the first minimal element among those that are not NaN."""
    x = a.flatten()
    best = np.nan
    for i in range(x.shape[0]):
        if not np.isnan(x[i]) and (np.isnan(best) or x[i] < best):
            best = x[i]
    return best


@internal_jit
def average(a, axis=None, weights=None):
    """``np.average(a, weights=w)`` (Numba has no ``axis``): the weighted mean."""
    if weights is None:
        return np.mean(a)
    if a.shape != weights.shape:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    scale = np.sum(weights)
    if scale == 0.0:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return np.sum(a * weights) / scale


@internal_jit
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid`` of a 1-D ``y``: the trapezoidal rule on points ``x`` (or with
    spacing ``dx``)."""
    n = y.shape[0]
    if n < 2:
        return 0.0
    if x is None:
        return dx * (np.sum(y) - 0.5 * (y[0] + y[n - 1]))
    total = 0.0
    for i in range(n - 1):
        total += (x[i + 1] - x[i]) * (y[i + 1] + y[i])
    return 0.5 * total


@internal_jit
def _covariance(v, ddof):
    """The covariance of the rows of 2-D ``v``, normalised by ``n - ddof``."""
    n = v.shape[1]
    centred = v - np.expand_dims(np.sum(v, axis=1) / n, 1)
    return (centred @ centred.T) / (n - ddof)


@internal_jit
def _rows(m, rowvar):
    """The variables of one array of ``np.cov`` as the rows of a new 2-D array (a 1-D
    array is one variable; columns are variables if not ``rowvar``), as NumPy reads them."""
    a = np.atleast_2d(m)
    if rowvar or a.shape[0] == 1:
        return a.copy()
    return a.T.copy()


@internal_jit
def _variables(m, y, rowvar):
    """The variables of ``np.cov(m, y, rowvar)`` as the rows of one 2-D array: ``m``'s,
    then ``y``'s."""
    if y is None:
        return _rows(m, rowvar)
    return np.concatenate((_rows(m, rowvar), _rows(y, rowvar)))


@internal_jit
def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """``np.cov`` of a 2-D ``m`` (and a second array ``y`` of further variables) with
    NumPy's parameters: ``rowvar=False`` (variables in columns), ``bias``, ``ddof``."""
    d = 0 if bias else 1
    if ddof is not None:
        d = ddof
    return _covariance(_variables(m, y, rowvar), d)


@internal_jit
def cov_vector(m, y=None, rowvar=True, bias=False, ddof=None):
    """``np.cov`` of a 1-D ``m`` (one variable): its variance as a 0-d array, as NumPy
    returns it."""
    n = m.shape[0]
    return cov(m.reshape(1, n), y, rowvar, bias, ddof).reshape(())


def choose_vector_cov(argtypes):
    """The helper of ``np.cov`` of a 1-D ``m``: its variance, or with a second array
    ``y`` (a chooser, ``defcomposite``), ``cov``: the 2 x 2 covariance matrix of the two."""
    return cov_vector if absent(argtypes[1] if len(argtypes) > 1 else None) else cov


@internal_jit
def corrcoef(x, y=None, rowvar=True):
    """``np.corrcoef`` of a 2-D ``x`` (and a second array ``y`` of further variables):
    the covariance scaled by the standard deviations, clipped to [-1, 1] as NumPy does."""
    c = cov(x, y, rowvar)
    d = np.sqrt(np.diag(c))
    return np.clip(c / np.outer(d, d), -1.0, 1.0)


def choose_vector_corrcoef(argtypes):
    """``np.corrcoef`` of a 1-D ``x`` with a second array ``y`` (a chooser); alone, a
    1-D ``x`` correlates with itself, which needs no helper, and is left to its rule.
    ``corrcoef`` gives the 2 x 2 correlation matrix of the two."""
    return None if absent(argtypes[1] if len(argtypes) > 1 else None) else corrcoef


defcomposite(np.ptp, ptp)
defcomposite(np.median, median)
defcomposite(np.quantile, _by_q(quantile, quantiles))
defcomposite(np.percentile, _by_q(percentile, percentiles))
defcomposite(np.nansum, nansum)
defcomposite(np.nanmean, nanmean)
defcomposite(np.nanvar, nanvar)
defcomposite(np.nanstd, nanstd)
defcomposite(np.nanprod, nanprod)
defcomposite(np.nanmax, nanmax)
defcomposite(np.nanmin, nanmin)
defcomposite(np.average, average)
if hasattr(np, "trapezoid"):  # NumPy 2
    defcomposite(np.trapezoid, trapezoid, ranks=(1,))
defcomposite(np.cov, cov, ranks=(2,))
defcomposite(np.cov, choose_vector_cov, ranks=(1,))
defcomposite(np.corrcoef, corrcoef, ranks=(2,))
defcomposite(np.corrcoef, choose_vector_corrcoef, ranks=(1,))
