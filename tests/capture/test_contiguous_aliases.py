"""Calls that share a C-contiguous array's memory (``x.ravel()``, ``np.ravel``,
``np.ascontiguousarray``, ``np.asarray``) and ufuncs whose out= overlaps an input.

Each of the first three gave a silently wrong gradient (and the ravel one a wrong jvp):
adjit took the result for a copy, so writes through it never reached the parent.
"""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp

XM = np.random.default_rng(5).uniform(-1.0, 1.0, (3, 4))


def ravel_method_written(X):
    Y = X.copy()
    r = Y.ravel()
    r[5] = X[0, 0] * X[2, 3]
    r *= 2.0
    return np.sum(Y * X)


def np_ravel_slice_updated(X):
    Y = X * X
    r = np.ravel(Y)
    r[1:4] += X[2, :3]
    return np.sum(Y * Y)


def ascontiguous_alias_updated(x):
    y = x * 2.0
    z = np.ascontiguousarray(y)
    z *= x
    return np.sum(y * x)


def asarray_alias_written(x):
    y = x * x
    z = np.asarray(y)
    z[1] = np.sin(x[0])
    return np.sum(y * x)


def asarray_with_dtype(X):
    """``np.asarray(x, dtype=np.float64)`` of a float64 array is the array itself (it
    was refused: no rule took the dtype), also of a strided view, as in Numba."""
    y = X * X
    z = np.asarray(y, dtype=np.float64)
    z[0, 1] = np.sin(X[0, 0])
    w = np.asarray(y[:, ::2], np.float64)
    w *= X[1, 1]
    return np.sum(y * X)


def ravel_of_a_column_copies(X):
    c = X[:, 1].ravel()  # not contiguous: Numba copies, writes stay in the copy
    c[0] = 5.0
    return np.sum(X * X) + np.sum(c * c)


CASES = [(ravel_method_written, XM), (np_ravel_slice_updated, XM),
         (ascontiguous_alias_updated, XM[0].copy()), (asarray_alias_written, XM[1].copy()),
         (ravel_of_a_column_copies, XM), (asarray_with_dtype, XM)]


@pytest.mark.parametrize("f,x", CASES, ids=[c[0].__name__ for c in CASES])
def test_every_mode_matches_finite_differences(f, x):
    g = numba.njit(f)
    check_grad(g, x.copy())
    check_jvp(g, x.copy())
    check_hvp(g, x.copy())


def test_ravel_closed_form():
    # Y = 2 X except Y[1, 1] = 2 X[0, 0] X[2, 3]; value sum(Y * X)
    g = adjit.grad(numba.njit(ravel_method_written))(XM.copy())
    want = 4.0 * XM
    want[1, 1] = 2.0 * XM[0, 0] * XM[2, 3]
    want[0, 0] += 2.0 * XM[2, 3] * XM[1, 1]
    want[2, 3] += 2.0 * XM[0, 0] * XM[1, 1]
    np.testing.assert_allclose(g, want, rtol=1e-12)


@numba.njit
def running_product(x):
    y = x.copy()
    np.multiply(y[:-1], x[1:], y[1:])  # Numba: y[k] = y[k-1] x[k], element by element
    return np.sum(y * x)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_ufunc_whose_out_overlaps_an_input_is_refused(mode):
    x = np.array([0.3, -0.7, 0.5, 1.1])
    with pytest.raises(adjit.UnsupportedError, match="out= array is another view"):
        adjit.grad(running_product)(x) if mode == "grad" else adjit.jvp(running_product)(x, x)


@numba.njit
def cube_of_raveled_head(X):
    return np.sum(X.ravel()[:5] ** 3)


def test_a_non_contiguous_tangent_of_a_contiguous_argument():
    # x.ravel() is a reshape view; jvp and hvp copy such a tangent to C order first
    # (Numba's reshape takes C-contiguous arrays only)
    dX = np.random.default_rng(6).uniform(-1.0, 1.0, (3, 8))[:, ::2]
    want = np.zeros((3, 4))
    want.flat[:5] = 3.0 * XM.flat[:5] ** 2 * dX.flat[:5]
    assert adjit.jvp(cube_of_raveled_head)(XM, dX)[1] == pytest.approx(want.sum())
    want_h = np.zeros((3, 4))
    want_h.flat[:5] = 6.0 * XM.flat[:5] * dX.flat[:5]
    np.testing.assert_allclose(adjit.hvp(cube_of_raveled_head)(XM, dX), want_h, rtol=1e-12)


def ravel_of_a_slice_written(x):
    y = np.ravel(x[::1])  # typed non-contiguous: Numba copies, its tangent must be a copy
    y[0] = 5.0 * x[1]
    return np.sum(y * x) + np.sum(x * x)


def argument_written_through_ravel(X):
    r = X.ravel()         # a view of the argument: jvp must copy the caller's tangent
    r[0] = 3.0 * X[1, 1]
    return np.sum(X * X)


@pytest.mark.parametrize("f,x", [(ravel_of_a_slice_written, XM[0].copy()),
                                 (argument_written_through_ravel, XM)],
                         ids=["ravel_of_a_slice_written", "argument_written_through_ravel"])
def test_the_given_tangent_is_left_unchanged(f, x):
    # jvp wrote into the caller's tangent in both (check_jvp checks it is unchanged)
    g = numba.njit(f)
    check_jvp(g, x.copy())
    check_grad(g, x.copy())
    check_hvp(g, x.copy())
