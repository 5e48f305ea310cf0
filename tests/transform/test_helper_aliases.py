"""Helpers whose result or loop variables share memory with their arguments (found by a
bug hunt over physics and statistics code, each one a wrong gradient before):

- a helper that returns its argument unchanged (a validity check) is that argument, not a
  new array: its result has the argument's shadow;
- a helper that returns a reshape view of its argument, or one of two arguments chosen at
  run time, is refused where the function writes through the result;
- rows written through ``for i, row in enumerate(U)`` or ``zip(U, V)`` inside a helper
  are writes of ``U``.

Every mode is checked against finite differences."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _check_finite(v):
    if not np.all(np.isfinite(v)):
        raise ValueError("non-finite input")
    return v


@numba.njit
def _ident(v):
    return v


def checked_squares(x):
    z = _check_finite(x)
    return np.sum(z * z * x)


def write_through_returned(x):
    y = x.copy()
    s = y[0] * y[0]
    z = _ident(y)
    z[0] = 10.0 * x[1]  # writes y[0]
    return s + y[0] * x[2]


@numba.njit
def _scale_rows(U, w):
    for i, row in enumerate(U):
        row *= w[i]


@numba.njit
def _copy_columns(U, V):
    for a, b in zip(U, V):
        a[0] = b[1] * 2.0


@numba.njit
def _shift_pairs(U, V):
    for k, (a, b) in enumerate(zip(U, V)):
        a[1] = b[0] * (k + 1.0)


def rows_scaled(X, w):
    Y = X.copy()
    s = np.sum(Y * Y)
    _scale_rows(Y, w)
    return s + np.sum(Y * Y)


def rows_zipped(X, Z):
    A = X.copy()
    s = np.sum(A * A)
    _copy_columns(A, Z)
    _shift_pairs(A, Z)
    return s + np.sum(A ** 3)


X4 = np.array([0.5, 1.0, -0.3, 0.8])
M = np.array([[0.5, 1.0], [-0.3, 0.8]])
W = np.array([2.0, 3.0])

CASES = [(checked_squares, (X4,), 0), (write_through_returned, (X4,), 0),
         (rows_scaled, (M, W), (0, 1)), (rows_zipped, (M, M[::-1].copy()), (0, 1))]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_grad(f, args, argnums):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp(f, args, argnums):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_hvp(f, args, argnums):
    check_hvp(f, *args, argnums=argnums)


def test_a_checked_argument_keeps_its_gradient():
    """The closed form: d/dx sum(x**3) = 3 x**2 (it was all zeros)."""
    assert np.allclose(adjit.grad(checked_squares)(X4), 3 * X4 ** 2)


@numba.njit
def _as_grid(u, nx, ny):
    return u.reshape((nx, ny))


@numba.njit
def _set_boundary(u, c):
    U = _as_grid(u, 2, 2)
    U[0, :] = c


@numba.njit
def _pick(a, b, flag):
    if flag:
        return a
    return b


def boundary_in_caller(u0):
    u = u0.copy()
    s = np.sum(u * u)
    U = _as_grid(u, 2, 2)
    U[0, :] = 0.0
    return s + np.sum(u)


def boundary_in_helper(u0):
    u = u0.copy()
    s = np.sum(u * u)
    _set_boundary(u, 0.5)
    return s + np.sum(u ** 3)


def write_through_picked(x, y):
    a = x.copy()
    b = y.copy()
    z = _pick(a, b, x[0] > 0)
    z[0] = 3.0
    return np.sum(a * a * b)


@pytest.mark.parametrize("f,args", [(boundary_in_caller, (X4,)), (boundary_in_helper, (X4,)),
                                    (write_through_picked, (X4, X4[::-1].copy()))])
def test_writes_through_a_returned_view_are_refused(f, args):
    """Reverse mode cannot give such a result its argument's shadow: refused by name
    (the gradients were wrong: [2, 3, 0.4, 2.6] for [1, 2, 0.4, 2.6])."""
    with pytest.raises(adjit.UnsupportedError, match="a view of an argument that"):
        adjit.grad(f)(*args)
