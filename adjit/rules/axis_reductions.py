"""Reductions along one axis that Numba itself does not compile: ``np.mean``, ``np.var``,
``np.std``, ``np.max``/``np.amax``, ``np.min``/``np.amin``, ``np.prod`` and
``np.linalg.norm`` with an integer ``axis=`` (Numba 0.68 types only ``np.sum`` with one).

Two parts, both keyed by the same helpers:
- a Numba ``@overload`` per function that accepts an integer ``axis`` and computes the
  reduction with the ``@njit`` helper for the array's rank. It is tried only where Numba's
  own implementation refuses the call, so every call Numba already compiles is unchanged;
  with adjit imported, a plain ``@njit`` function can call ``np.mean(x, axis=1)`` too;
- a composite (``defcomposite``): adjit replaces the call with the same helper and derives
  the helper like any user ``@njit`` function. A lane's maximum gets the whole adjoint of
  its first maximal element (as ``np.max`` does), a norm of a zero lane has the zero
  subgradient.

Only the function forms are covered: Numba keeps array methods (``x.mean(axis=0)``) in
one template per name, which a second one would replace. Ranks 1 to 3; a negative axis
counts from the end; ``keepdims``, ``out``, ``ddof`` and tuples of axes are not
supported. Test cases: ``tests/rules/test_axis_reductions.py``.
"""
import math

import numpy as np
from numba.core import types
from numba.extending import overload

from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from .composites import absent
from .statistics import defcomposite


@internal_jit
def axis_index(axis, ndim):
    """``axis`` as a position in ``range(ndim)`` (NumPy's message when it is not)."""
    ax = axis + ndim if axis < 0 else axis
    if ax < 0 or ax >= ndim:
        raise ValueError("axis is out of bounds for the array's dimension")
    return ax


@internal_jit
def _lane_norm(v):
    return np.linalg.norm(v.copy())  # a contiguous copy: Numba's norm of a view


def _over_lanes(reduce):
    """The ``(rank 1, rank 2, rank 3)`` helpers applying the 1-D ``reduce`` (a NumPy
    reduction with a rule, or an ``@njit`` helper) to each lane along ``axis``; the
    branches write into one result allocated first, so no view or
    array is chosen by a branch."""

    @internal_jit
    def rank1(a, axis):
        axis_index(axis, 1)
        return reduce(a)

    @internal_jit
    def rank2(a, axis):
        ax = axis_index(axis, 2)
        n = a.shape[1] if ax == 0 else a.shape[0]
        out = np.empty(n, dtype=np.float64)
        if ax == 0:
            for j in range(n):
                out[j] = reduce(a[:, j])
        else:
            for i in range(n):
                out[i] = reduce(a[i, :])
        return out

    @internal_jit
    def rank3(a, axis):
        ax = axis_index(axis, 3)
        n0 = a.shape[1] if ax == 0 else a.shape[0]
        n1 = a.shape[1] if ax == 2 else a.shape[2]
        out = np.empty((n0, n1), dtype=np.float64)
        for i in range(n0):
            for j in range(n1):
                if ax == 0:
                    out[i, j] = reduce(a[:, i, j])
                elif ax == 1:
                    out[i, j] = reduce(a[i, :, j])
                else:
                    out[i, j] = reduce(a[i, j, :])
        return out

    return rank1, rank2, rank3


@internal_jit
def mean_axis(a, axis):
    """``np.mean(a, axis)``: the axis sum (which has a rule) over the axis length."""
    ax = axis_index(axis, a.ndim)
    return np.sum(a, axis=ax) / a.shape[ax]


@internal_jit
def mean_axis_1d(a, axis):
    """``np.mean`` of a 1-D array along axis 0 (a scalar)."""
    axis_index(axis, 1)
    return np.mean(a)


#: NumPy function -> {rank: helper(a, axis)}
AXIS_HELPERS = {np.mean: {1: mean_axis_1d, 2: mean_axis, 3: mean_axis}}
for _funcs, _lane in (((np.max, np.amax), np.max), ((np.min, np.amin), np.min),
                      ((np.prod,), np.prod), ((np.var,), np.var), ((np.std,), np.std)):
    for _func in _funcs:
        AXIS_HELPERS[_func] = dict(zip((1, 2, 3), _over_lanes(_lane)))
_NORM = dict(zip((1, 2, 3), _over_lanes(_lane_norm)))


def _norm_helper(rank):
    """``np.linalg.norm(x, ord, axis)`` with ``ord`` None: the helper takes NumPy's
    parameters in NumPy's order."""
    lanes = _NORM[rank]

    @internal_jit
    def norm_axis(x, ord, axis):
        return lanes(x, axis)

    return norm_axis


NORM_HELPERS = {rank: _norm_helper(rank) for rank in (1, 2, 3)}


def _reducible(a, axis):
    """Whether the overloads take this call: a float64 array of rank 1-3 and an integer
    axis (everything else is left to Numba, which refuses or computes it)."""
    return (isinstance(a, types.Array) and a.ndim in (1, 2, 3)
            and a.dtype == types.float64 and isinstance(axis, types.Integer))


def _register(func, by_rank):
    """The ``@overload`` of ``func(a, axis)`` and its composite, from one helper table."""

    @overload(func, jit_options=INTERNAL_JIT_OPTIONS)
    def reduce_along(a, axis=None):
        if not _reducible(a, axis):
            return None
        helper = by_rank[a.ndim]

        def impl(a, axis=None):
            return helper(a, axis)
        return impl

    for rank, helper in by_rank.items():
        defcomposite(func, helper, ranks=(rank,))


def _register_norm():
    """``np.linalg.norm(x, axis=k)``: vector norms of the lanes (``ord`` None only)."""

    @overload(np.linalg.norm, jit_options=INTERNAL_JIT_OPTIONS)
    def norm_along(x, ord=None, axis=None):
        if not (_reducible(x, axis) and (ord is None or isinstance(
                ord, (types.NoneType, types.Omitted)))):
            return None
        helper = NORM_HELPERS[x.ndim]

        def impl(x, ord=None, axis=None):
            return helper(x, None, axis)
        return impl

    defcomposite(np.linalg.norm, choose_norm, ranks=(1, 2, 3))


@internal_jit
def vector_norm_ord(x, ord, axis=None):
    """``np.linalg.norm(x, ord)`` of a 1-D ``x``, NumPy's vector norms: the largest or
    smallest magnitude (``ord=±inf``, adjoint to the first such element), the count of
    nonzeros (``ord=0``, no derivative), and ``sum(|x|**ord) ** (1/ord)`` otherwise."""
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a)
    if ord == -np.inf:
        return np.min(a)
    if ord == 0:
        count = 0
        for i in range(x.shape[0]):
            if x[i] != 0.0:
                count += 1
        return float(count)
    if ord == 1:
        return np.sum(a)
    if ord == 2:
        return np.linalg.norm(x)
    return np.sum(a ** ord) ** (1.0 / ord)


@internal_jit
def matrix_norm_ord(x, ord, axis=None):
    """``np.linalg.norm(x, ord)`` of a 2-D ``x``, NumPy's matrix norms: the largest or
    smallest column (``ord=±1``) or row (``ord=±inf``) sum of magnitudes, and the largest
    or smallest singular value (``ord=±2``), the square root of an eigenvalue of
    ``x.T @ x`` or ``x @ x.T``, whichever is smaller (its derivative needs that
    eigenvalue simple, as the singular value's does). Other orders raise NumPy's ``ValueError``."""
    a = np.abs(x)
    if ord == 1:
        return np.max(np.sum(a, axis=0))
    if ord == -1:
        return np.min(np.sum(a, axis=0))
    if ord == np.inf:
        return np.max(np.sum(a, axis=1))
    if ord == -np.inf:
        return np.min(np.sum(a, axis=1))
    if ord == 2 or ord == -2:
        gram = x.T @ x if x.shape[0] >= x.shape[1] else x @ x.T  # min(m, n) values
        values = np.linalg.eigvalsh(gram)
        return math.sqrt(max(np.max(values) if ord == 2 else np.min(values), 0.0))
    raise ValueError("Invalid norm order for matrices.")


@internal_jit
def vector_norm_ord_float32(x, ord, axis=None):
    """``vector_norm_ord`` of a float32 ``x``: Numba's norm of float32 returns a float64
    computed in float64, and so does this."""
    return vector_norm_ord(x.astype(np.float64), ord)


@internal_jit
def matrix_norm_ord_float32(x, ord, axis=None):
    """``matrix_norm_ord`` of a float32 ``x``, in float64 as Numba's norm returns it."""
    return matrix_norm_ord(x.astype(np.float64), ord)


_NORM_ORD = {(types.float64, 1): vector_norm_ord, (types.float64, 2): matrix_norm_ord,
             (types.float32, 1): vector_norm_ord_float32,
             (types.float32, 2): matrix_norm_ord_float32}


def choose_norm(argtypes):
    """The helper of a ``np.linalg.norm`` call Numba's own rule does not cover: lane norms
    for an integer ``axis``, or the vector or matrix norm of a numeric ``ord``."""
    x = argtypes[0]
    ord_type = argtypes[1] if len(argtypes) > 1 else None
    axis = argtypes[2] if len(argtypes) > 2 else None
    if isinstance(axis, types.Integer) and absent(ord_type):
        return NORM_HELPERS.get(x.ndim)
    if not (absent(axis) and isinstance(ord_type, (types.Integer, types.Float))):
        return None
    return _NORM_ORD.get((x.dtype, x.ndim))


for _func, _by_rank in AXIS_HELPERS.items():
    _register(_func, _by_rank)
_register_norm()
