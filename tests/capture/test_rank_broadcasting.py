"""Elementwise kernels (``@vectorize`` ufuncs, ``np.where``, ``np.clip``) whose operands
have lower rank than the result broadcast along its trailing axes, as in NumPy
(``adjit/capture/vectorize.py``). Each case in grad, jvp and hvp, for both arguments."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.vectorize
def _softplus_affine(x, w, b):
    return math.log1p(math.exp(w * x + b))


def row_weights(X, w):  # (3, 4) against (4,)
    return np.sum(_softplus_affine(X, w, 0.3) ** 2)


def plane_in_volume(T, P):  # (2, 3, 4) against (3, 4)
    return np.sum(_softplus_affine(T, P, 0.1) * T)


def clip_to_row_bounds(X, lo):  # the bound is a row
    return np.sum(np.clip(X, lo, 1.0) ** 2)


def where_row_in_volume(T, r):  # (2, 3, 4) against (4,)
    return np.sum(np.where(T > r, T * r, r) ** 2)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
T = RNG.standard_normal((2, 3, 4))
ROW = np.array([-0.45, 0.15, -0.25, 0.35])
CASES = {
    "row_weights": (row_weights, (X, ROW)),
    "plane_in_volume": (plane_in_volume, (T, RNG.standard_normal((3, 4)))),
    "clip_to_row_bounds": (clip_to_row_bounds, (X, ROW)),
    "where_row_in_volume": (where_row_in_volume, (T, ROW)),
}


@pytest.mark.parametrize("argnum", [0, 1])
@pytest.mark.parametrize("case", list(CASES))
def test_grad_and_hvp(case, argnum):
    f, args = CASES[case]
    check_grad(f, *args, argnums=argnum)
    check_hvp(f, *args, argnums=argnum)


@pytest.mark.parametrize("case", list(CASES))
def test_jvp(case):
    f, args = CASES[case]
    check_jvp(f, *args)


def test_row_gradient_closed_form():
    # d/dw sum(softplus(w x + b)^2) = sum over rows of 2 sp(z) sigmoid(z) x
    z = ROW * X + 0.3
    sp, sig = np.log1p(np.exp(z)), 1.0 / (1.0 + np.exp(-z))
    want = np.sum(2.0 * sp * sig * X, axis=0)
    np.testing.assert_allclose(adjit.grad(row_weights, argnums=1)(X, ROW), want, rtol=1e-12)
    # the row's Hessian is diagonal: sum over rows of x^2 (2 sig^2 + 2 sp sig (1 - sig))
    v = np.array([0.3, -0.2, 0.5, 0.1])
    hess_diag = np.sum(X * X * (2 * sig * sig + 2 * sp * sig * (1 - sig)), axis=0)
    np.testing.assert_allclose(adjit.hvp(row_weights, argnums=1)(X, ROW, v), hess_diag * v,
                               rtol=1e-12)


def test_shapes_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="could not be broadcast"):
        adjit.grad(row_weights, argnums=1)(X, np.ones(3))
