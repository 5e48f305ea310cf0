"""NumPy functions computed by adjit's own ``@njit`` helpers, which adjit derives.

A composite is not a primitive: ``capture/composites.py`` replaces the call by calls of
small primitives registered here, each with its own rule: pairwise joins (linear in both
arguments), one-row/one-column views of a vector, ``logabsdet`` and the two parts of
``eigh``.

- ``np.concatenate((a, b, ...)[, axis])``, ``np.hstack``, ``np.vstack``, ``np.stack``
  (of vectors, ``axis`` 0 or 1) and ``np.column_stack`` of float arrays: a chain of
  pairwise joins.
- ``np.linalg.slogdet(a)``: ``(slogdet_sign(a), logabsdet(a))``, where ``logabsdet`` has the
  standard rule ``d log|det A| = tr(A^-1 dA)`` and the sign has no derivative.
- ``np.linalg.eigh(a)``: ``(eigenvalues(a), eigenvectors(a))`` (rules in ``linalg.py``), and
  ``np.linalg.eigvalsh(a)`` is ``eigenvalues(a)``; ``np.linalg.svd(a[, full_matrices])``:
  ``(svd_u, svd_s, svd_vt)`` of the same arguments, unread ones without a derivative.
- ``np.interp(x, xp, fp)`` of a scalar or a 1-D ``x``: a plain ``@njit`` helper
  (bisection, then the linear piece), which adjit derives like any user helper, so it
  is differentiable in ``x`` and ``fp`` (and in ``xp``, through the piece's formula).
- ``np.linspace(start, stop[, num])`` of real endpoints: a helper computing Numba's
  points, differentiable in both endpoints.
- ``np.bincount(idx, weights=w[, minlength])`` of float weights: a helper that sums
  each weight into its bin (a scatter-add loop), differentiable in ``w``.
- ``np.convolve(a, v, mode)`` and ``np.correlate(a, v[, mode])`` of float vectors: the
  full convolution (``np.convolve``'s bilinear rule), of ``v[::-1]`` for a correlation,
  then NumPy's window of it for ``mode``.

The tuple is built in the function, so unpacking it (``w, v = np.linalg.eigh(a)``) reads
the items directly and no tuple of arrays needs an adjoint.

Test cases: ``tests/rules/test_array_ops.py``.
"""
import math

import numpy as np

from ..compile.inline_library import internal_jit
from .arrays import defarrayvjp
from .core import nondiff
from .primitive import PRIMITIVES, Primitive
from .registry import _name, deflinear_array, defnonlinear
from .linalg import (eigenvalues, eigenvectors, qr_q, qr_r, svd_s, svd_s_unread, svd_u,
                     svd_u_unread, svd_vt, svd_vt_unread)
from .lstsq import (lstsq_rank, lstsq_residuals, lstsq_singular_values,
                    lstsq_singular_values_unread, lstsq_solution)


@internal_jit
def join_rows(a, b):
    """``np.concatenate((a, b))`` along axis 0, for 1-D or 2-D ``a`` and ``b``."""
    n = a.shape[0]
    out = np.empty((n + b.shape[0],) + a.shape[1:])
    out[:n] = a
    out[n:] = b
    return out


@internal_jit
def join_columns(a, b):
    """``np.concatenate((a, b), axis=1)`` for 2-D ``a`` and ``b``."""
    m = a.shape[1]
    out = np.empty((a.shape[0], m + b.shape[1]))
    out[:, :m] = a
    out[:, m:] = b
    return out


@internal_jit
def as_row(v):
    """A 1-D ``v`` as a one-row matrix (how ``np.vstack`` and ``np.stack`` see it)."""
    out = np.empty((1, v.shape[0]))
    out[0, :] = v
    return out


@internal_jit
def as_column(v):
    """A 1-D ``v`` as a one-column matrix (how ``np.column_stack`` sees it)."""
    out = np.empty((v.shape[0], 1))
    out[:, 0] = v
    return out


# The joins are linear in both arguments jointly: each argument's tangent term joins it
# with zeros, and each adjoint is the argument's block of the result's adjoint.
def _rows_jvp_a(ans, a, b, da):
    return join_rows(da, np.zeros_like(b))


def _rows_jvp_b(ans, a, b, db):
    return join_rows(np.zeros_like(a), db)


def _rows_vjp_a(g, ans, a, b, shadow):
    shadow += g[:a.shape[0]]


def _rows_vjp_b(g, ans, a, b, shadow):
    shadow += g[a.shape[0]:]


def _columns_jvp_a(ans, a, b, da):
    return join_columns(da, np.zeros_like(b))


def _columns_jvp_b(ans, a, b, db):
    return join_columns(np.zeros_like(a), db)


def _columns_vjp_a(g, ans, a, b, shadow):
    shadow += g[:, :a.shape[1]]


def _columns_vjp_b(g, ans, a, b, shadow):
    shadow += g[:, a.shape[1]:]


def _row_transpose(g, shadow):
    shadow += g[0, :]


def _column_transpose(g, shadow):
    shadow += g[:, 0]


defnonlinear([join_rows], [_rows_vjp_a, _rows_vjp_b], [_rows_jvp_a, _rows_jvp_b],
             nargs=(2,))
defnonlinear([join_columns], [_columns_vjp_a, _columns_vjp_b],
             [_columns_jvp_a, _columns_jvp_b], ndims=(2,), nargs=(2,))
deflinear_array([as_row], _row_transpose, ndims=(1,))
deflinear_array([as_column], _column_transpose, ndims=(1,))


@internal_jit
def slogdet_sign(a):
    """The sign of ``det(a)``: piecewise constant, so it has no derivative."""
    return np.linalg.slogdet(a)[0]


@internal_jit
def logabsdet(a):
    """``log|det(a)|``, the second item of ``np.linalg.slogdet``."""
    return np.linalg.slogdet(a)[1]


def _logabsdet_update(g, ans, a, shadow):
    """``A_bar = g A^-T``."""
    shadow += g * np.linalg.inv(a).T


def _logabsdet_tangent(ans, a, da):
    """``d log|det A| = tr(A^-1 dA)``."""
    return np.sum(np.linalg.inv(a).T * da)


nondiff(slogdet_sign)
defarrayvjp((logabsdet,), [_logabsdet_update], [_logabsdet_tangent], ndims=(2,))

@internal_jit
def interp_scalar(x, xp, fp):
    """``np.interp(x, xp, fp)`` for a scalar ``x``: the linear piece ``x`` falls in
    (found by bisection, an integer search with no derivative), clamped at both ends."""
    n = xp.shape[0]
    if x <= xp[0]:
        return fp[0]
    if x >= xp[n - 1]:
        return fp[n - 1]
    lo, hi = 0, n - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xp[mid] <= x:
            lo = mid
        else:
            hi = mid
    t = (x - xp[lo]) / (xp[hi] - xp[lo])
    return fp[lo] + t * (fp[hi] - fp[lo])


@internal_jit
def interp_array(x, xp, fp):
    """``np.interp`` of a 1-D array of points."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = interp_scalar(x[i], xp, fp)
    return out


@internal_jit
def fill_diagonal(a, val):
    """``np.fill_diagonal(a, val)`` of a 2-D array with a scalar ``val``: element writes
    ``a[i, i] = val`` (the reverse pass saves and restores what they overwrite)."""
    for i in range(min(a.shape[0], a.shape[1])):
        a[i, i] = val


@internal_jit
def append_value(arr, values, axis=None):
    """``np.append(arr, v)`` of a number ``v``: ``arr`` flattened, then ``v``."""
    flat = arr.ravel()
    n = flat.shape[0]
    out = np.empty(n + 1)
    out[:n] = flat
    out[n] = values
    return out


@internal_jit
def append_array(arr, values, axis=None):
    """``np.append(arr, values)`` of an array: both flattened, one after the other."""
    flat, tail = arr.ravel(), values.ravel()
    n = flat.shape[0]
    out = np.empty(n + tail.shape[0])
    out[:n] = flat
    out[n:] = tail
    return out


def absent(typ):
    """Whether a chooser's argument type says the argument was not given (None, an
    omitted default, or no type at all)."""
    from numba.core import types
    return typ is None or isinstance(typ, (types.NoneType, types.Omitted))


def _flattened_float64(argtypes):
    """Whether a call of ``np.append`` / ``np.delete`` has a float64 array first and no
    ``axis`` after its second argument (NumPy then works on the flattened array)."""
    from numba.core import types
    return argtypes[0].dtype == types.float64 and all(absent(t) for t in argtypes[2:])


@internal_jit
def linspace(start, stop, num=50):
    """``np.linspace(start, stop, num)`` of real endpoints, computed as Numba computes it
    (``start + i * step``, the last point exactly ``stop``): linear in both endpoints, so
    a grid whose length or origin is a parameter differentiates (``np.linspace(0.0, L,
    n)``)."""
    out = np.empty(num, np.float64)
    if num == 0:
        return out
    div = num - 1
    if div > 0:
        step = (stop - start) / div
        for i in range(num):
            out[i] = start + i * step
        out[num - 1] = stop
    else:
        out[0] = start
    return out


def choose_linspace(argtypes):
    """The ``np.linspace`` helper when both endpoints are real numbers; None leaves other
    calls (complex endpoints) to Numba."""
    from numba.core import types
    real = (types.Integer, types.Float)
    return linspace if all(isinstance(t, real) for t in argtypes[:2]) else None


@internal_jit
def arange(start, stop, step):
    """``np.arange(start, stop, step)`` of real numbers with a float among them, computed
    as Numba computes it (``start + i * step``, ``ceil((stop - start) / step)`` points):
    linear in the origin and the spacing, so a grid whose origin or step is a parameter
    differentiates (``np.arange(0.0, T, dt)``); the stop only sets the length, an
    integer with no derivative."""
    if step == 0:
        raise ValueError("Maximum allowed size exceeded")
    n = max(int(math.ceil((stop - start) / step)), 0)
    out = np.empty(n, np.float64)
    for i in range(n):
        out[i] = start + i * step
    return out


@internal_jit
def arange_to(stop):
    """``np.arange(stop)`` of a float: ``arange(0, stop, 1)``."""
    return arange(0, stop, 1)


@internal_jit
def arange_between(start, stop):
    """``np.arange(start, stop)`` with a float: ``arange(start, stop, 1)``."""
    return arange(start, stop, 1)


def choose_arange(argtypes):
    """The ``np.arange`` helper for real bounds with a float among them and no ``dtype``;
    None leaves integer ranges (no derivative) and other calls to Numba."""
    from numba.core import types
    given = [t for t in argtypes if not absent(t)]
    if len(given) != len(argtypes) and any(not absent(t) for t in argtypes[len(given):]):
        return None  # a gap: a default between given arguments
    if not (1 <= len(given) <= 3 and all(isinstance(t, (types.Integer, types.Float))
                                         for t in given)
            and any(isinstance(t, types.Float) for t in given)):
        return None
    return {1: arange_to, 2: arange_between, 3: arange}[len(given)]


def choose_append(argtypes):
    """The ``np.append`` helper for these argument types: a float64 ``arr``, a number or
    an array of numbers, and no ``axis`` (NumPy then flattens both); None leaves the call
    to its refusal."""
    from numba.core import types
    values = argtypes[1]
    if not _flattened_float64(argtypes):
        return None
    numbers = (types.Integer, types.Float)
    if isinstance(values, types.Array) and isinstance(values.dtype, numbers):
        return append_array
    return append_value if isinstance(values, numbers) else None


@internal_jit
def delete(arr, obj, axis=None):
    """``np.delete(arr, obj)`` without ``axis``: the flattened ``arr`` without the
    positions ``obj`` (an integer, negative ones from the end, or an array of them); the
    mask read is a gather, so the kept elements take their adjoints."""
    flat = arr.ravel()
    keep = np.ones(flat.shape[0], dtype=np.bool_)
    keep[obj] = False
    return flat[keep]


def choose_delete(argtypes):
    """The ``np.delete`` helper: a float64 ``arr``, integer positions, no ``axis``."""
    from numba.core import types
    obj = argtypes[1]
    if not _flattened_float64(argtypes):
        return None
    if isinstance(obj, types.Integer) or (isinstance(obj, types.Array) and obj.ndim == 1
                                          and isinstance(obj.dtype, types.Integer)):
        return delete
    return None


@internal_jit
def bincount_weighted(x, weights, minlength=0):
    """``np.bincount(x, weights, minlength)`` of float weights: ``out[x[i]] += w[i]``,
    with as many bins as the largest index needs (at least ``minlength``)."""
    if x.shape[0] != weights.shape[0]:
        raise ValueError("weights and list don't have the same length")
    bins = max(minlength, 0)
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise ValueError("first argument must be non-negative")
        bins = max(bins, x[i] + 1)
    out = np.zeros(bins, dtype=np.float64)
    for i in range(x.shape[0]):
        out[x[i]] += weights[i]
    return out


def choose_bincount(argtypes):
    """The ``np.bincount`` helper when ``weights`` is a 1-D float array and the indices
    are integers; None leaves unweighted counts (integers, no derivative) to Numba."""
    from numba.core import types
    if len(argtypes) < 2 or not all(isinstance(t, types.Array) and t.ndim == 1
                                    for t in argtypes[:2]):
        return None
    ok = isinstance(argtypes[0].dtype, types.Integer) and isinstance(
        argtypes[1].dtype, types.Float)
    return bincount_weighted if ok else None


@internal_jit
def _mode_window(full, n, m, mode, same_start):
    """NumPy's ``mode`` part of a full convolution or correlation of lengths ``n``,
    ``m``: all of it, the centred ``max(n, m)`` points starting at ``same_start``, or
    the points where the shorter input overlaps the longer one entirely."""
    lo, hi = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "same":
        return full[same_start:same_start + hi].copy()
    if mode == "valid":
        return full[lo - 1:hi].copy()
    raise ValueError("mode must be one of 'full', 'same' or 'valid'")


@internal_jit
def convolve_mode(a, v, mode="full"):
    """``np.convolve(a, v, mode)``: the full convolution (a bilinear rule), windowed."""
    n, m = a.shape[0], v.shape[0]
    return _mode_window(np.convolve(a, v), n, m, mode, (min(n, m) - 1) // 2)


@internal_jit
def correlate_mode(a, v, mode="valid"):
    """``np.correlate(a, v, mode)`` of real vectors: the full convolution of ``a`` with
    ``v`` reversed, windowed; NumPy centres 'same' one point later when ``v`` is the
    longer input."""
    n, m = a.shape[0], v.shape[0]
    start = (min(n, m) - 1) // 2 if n >= m else min(n, m) // 2
    return _mode_window(np.convolve(a, v[::-1]), n, m, mode, start)


def _float_vectors(argtypes):
    """Whether the first two arguments are 1-D float arrays (and a mode may follow)."""
    from numba.core import types
    return len(argtypes) in (2, 3) and all(
        isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Float)
        for t in argtypes[:2])


def choose_convolve(argtypes):
    """With a ``mode``: the windowing helper; without, the bilinear rule of
    ``np.convolve`` applies directly (None)."""
    return convolve_mode if len(argtypes) == 3 and _float_vectors(argtypes) else None


def choose_correlate(argtypes):
    """``np.correlate`` of float vectors (its default mode is 'valid')."""
    return correlate_mode if _float_vectors(argtypes) else None


class Composite(Primitive):
    """A NumPy function that the capture pass (``capture/composites.py``) replaces by
    calls of adjit's own helpers, which both modes then derive or rule like any call.
    ``shape`` says how the call is replaced:

    - ``"helper"``: ``plan`` is ``{rank of argument 0 (0: a scalar): helper}``; a plain
      Python function in place of a helper chooses one from the argument types (or None);
    - ``"parts"``: ``plan`` is a tuple of primitives, one per item of the returned tuple,
      each called with the same arguments; ``unread`` maps a part to the stand-in used
      when nothing reads that item (same value, no derivative needed);
    - ``"stacking"``: ``plan`` is ``{item rank: (per-item helper or None, pairwise
      join)}``, and ``axes`` is ``(ranks the result adds, {axis: plans})`` for a constant
      ``axis`` argument.
    """

    family = "composite"
    kind = "derived"

    def __init__(self, name, shape, plan, unread=None, axes=None, float64_only=False):
        self.name, self.shape, self.plan = name, shape, plan
        self.unread, self.axes = unread or {}, axes
        self.float64_only = float64_only  # parts whose rules compute in float64

    def matches(self, argtypes, result_type):
        """A helper composite covers the ranks of argument 0 it has a helper for; a
        ``float64_only`` one, float64 arrays (float32 is left to the refusal by name)."""
        from numba.core import types
        if self.float64_only and any(isinstance(t, types.Array) and t.dtype != types.float64
                                     for t in argtypes):
            return False
        if self.shape != "helper" or not argtypes:
            return True
        first = argtypes[0]
        return (first.ndim if isinstance(first, types.Array) else 0) in self.plan


def lookup_composite(func):
    """The ``Composite`` registered for ``func``, or None."""
    return PRIMITIVES.get(func, "composite")


def helper_plans():
    """``{function: {rank: helper}}`` of every composite computed by a helper (the
    coverage tests read it)."""
    found = {key: lookup_composite(key) for key in PRIMITIVES.keys("composite")}
    return {key: c.plan for key, c in found.items() if c.shape == "helper"}


def defcomposite(func, helper, ranks=(1, 2, 3)):
    """Compute NumPy's ``func`` by the ``@njit`` ``helper`` when argument 0 has one of
    ``ranks`` (0: a scalar). The helper takes NumPy's parameters in NumPy's order, and
    may be a chooser: a plain function of the argument types returning a helper or None
    (given literal types, such as a constant ``copy=False``, if its ``literal_types`` is
    true; else plain ones)."""
    found = lookup_composite(func)
    plan = dict(found.plan) if found is not None and found.shape == "helper" else {}
    plan.update({rank: helper for rank in ranks})
    PRIMITIVES.register([func], Composite(_name(func), "helper", plan))


def defparts(func, parts, unread=None, float64_only=False):
    """``func`` returns a tuple: compute it as the tuple of ``parts``, each called with
    the same arguments (``np.linalg.eigh`` -> ``(eigenvalues(a), eigenvectors(a))``);
    ``float64_only``: the parts' rules handle float64 arrays only."""
    PRIMITIVES.register([func], Composite(_name(func), "parts", tuple(parts), unread,
                                          float64_only=float64_only))


def defstacking(func, plans, axes=None):
    """``func((a, b, ...))`` of a tuple built in place is a chain of pairwise joins:
    ``plans`` is ``{item rank: (per-item helper or None, join)}``; ``axes`` gives the
    plans for a constant ``axis`` (see ``Composite``)."""
    PRIMITIVES.register([func], Composite(_name(func), "stacking", plans, axes=axes))


defcomposite(np.interp, interp_scalar, ranks=(0,))
defcomposite(np.interp, interp_array, ranks=(1,))
defcomposite(np.linspace, choose_linspace, ranks=(0,))
defcomposite(np.arange, choose_arange, ranks=(0,))
defcomposite(np.fill_diagonal, fill_diagonal, ranks=(2,))
defcomposite(np.linalg.eigvalsh, eigenvalues, ranks=(2,))
defcomposite(np.append, choose_append)
defcomposite(np.delete, choose_delete)
defcomposite(np.bincount, choose_bincount, ranks=(1,))
defcomposite(np.convolve, choose_convolve, ranks=(1,))
defcomposite(np.correlate, choose_correlate, ranks=(1,))

_ROWS = {1: (None, join_rows), 2: (None, join_rows)}
_VECTOR_ROWS = {1: (as_row, join_rows)}
defstacking(np.concatenate, _ROWS, axes=(0, {0: _ROWS, 1: {2: (None, join_columns)}}))
defstacking(np.hstack, {1: (None, join_rows), 2: (None, join_columns)})
defstacking(np.vstack, {1: (as_row, join_rows), 2: (None, join_rows)})
defstacking(np.stack, _VECTOR_ROWS, axes=(1, {0: _VECTOR_ROWS, 1: {1: (as_column, join_columns)}}))
defstacking(np.column_stack, {1: (as_column, join_columns), 2: (None, join_columns)})

defparts(np.linalg.slogdet, (slogdet_sign, logabsdet))
defparts(np.linalg.eigh, (eigenvalues, eigenvectors))
defparts(np.linalg.qr, (qr_q, qr_r))
defparts(np.linalg.svd, (svd_u, svd_s, svd_vt),
         unread={svd_u: svd_u_unread, svd_s: svd_s_unread, svd_vt: svd_vt_unread})
defparts(np.linalg.lstsq, (lstsq_solution, lstsq_residuals, lstsq_rank, lstsq_singular_values),
         unread={lstsq_singular_values: lstsq_singular_values_unread}, float64_only=True)
