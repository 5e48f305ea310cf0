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


@numba.njit
def _assign_and_move(c, X):
    labels = np.array([np.argmin(np.array([np.sum((X[i] - c[k]) ** 2)
                                           for k in range(c.shape[0])]))
                       for i in range(X.shape[0])])
    for k in range(c.shape[0]):
        c[k] = 0.5 * c[k] + 0.5 * X[k]
    return c, labels


def centroids_moved(c0, X):
    """A k-means step in a helper that updates its argument and returns it beside the
    labels, an integer array made by a comprehension (the labels were taken for memory
    that may share the argument's, and the write was refused)."""
    c = c0.copy()
    c, labels = _assign_and_move(c, X)
    c, labels = _assign_and_move(c, X)
    return np.sum(c * c * X[labels[:3]])


X4 = np.array([0.5, 1.0, -0.3, 0.8])
M = np.array([[0.5, 1.0], [-0.3, 0.8]])
W = np.array([2.0, 3.0])

CASES = [(checked_squares, (X4,), 0), (write_through_returned, (X4,), 0),
         (rows_scaled, (M, W), (0, 1)), (rows_zipped, (M, M[::-1].copy()), (0, 1)),
         (centroids_moved, (np.array([[0.1, 0.2], [0.9, 0.4], [0.3, 1.1]]),
                            np.array([[0.0, 0.1], [1.0, 0.5], [0.4, 1.0], [0.8, 0.8]])),
          (0, 1))]
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


@numba.njit
def _flat(a):
    return a.ravel()


@numba.njit
def _tail(a):
    return a[1:]


@numba.njit
def _tail_of_tail(a):
    return _tail(a)


@numba.njit
def _set_first(a, v):
    a[0] = v * v


@numba.njit
def _split(a):
    return a[1:], np.sum(a)


@numba.njit
def _first_of(t):
    return t[0]


@numba.njit
def _with_row(x):
    a = np.outer(x, x)
    return a, a[0]


def through_ravel(x):
    y = x * 2.0
    r = _flat(y)
    r[0] = x[1] * x[1]
    return np.sum(y * y)


def through_nested_view(x):
    y = x * 2.0
    t = _tail_of_tail(y)
    t[0] = x[0] * x[0]
    return np.sum(y * y)


def helper_writes_returned_view(x):
    y = x * 2.0
    _set_first(_tail(y), x[0])
    return np.sum(y * y)


def through_tuple_item(x):
    y = x * 2.0
    t, s = _split(y)
    t[0] = x[0] * x[0]
    return np.sum(y * y) + s


def parent_of_tuple_argument_item(x):
    y = x * 2.0
    w = _first_of((y, x))
    y[1] = x[0] * x[0]
    return np.sum(w * w)


def items_sharing_memory(x):
    a, r = _with_row(x)
    a[0, 1] = 3.0 * x[2]
    return np.sum(r * r)


def read_only_view(x):
    t = _tail(x * 2.0)
    return np.sum(t * t * x[:-1])


@pytest.mark.parametrize("f", [through_ravel, through_nested_view, helper_writes_returned_view,
                               through_tuple_item, parent_of_tuple_argument_item,
                               items_sharing_memory])
def test_memory_a_helper_returned_and_something_else_names_is_not_written(f):
    """An array a helper returned that is not provably its own memory (a ravel, a view
    from a nested helper, a tuple item, an item of a tuple argument, a view of another
    returned item): writing through it, or into what it views, is refused in reverse
    mode (each was a silently wrong gradient: the write was not seen); jvp is right."""
    x = np.array([0.3, 0.7, 1.1])
    with pytest.raises(adjit.UnsupportedError, match="a view of"):
        adjit.grad(f)(x)
    check_jvp(f, x)


def test_reading_a_returned_view_still_differentiates():
    x = np.array([0.3, 0.7, 1.1])
    check_grad(read_only_view, x)
    check_hvp(read_only_view, x)


@numba.njit
def _doubled_into(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
    return out


@numba.njit
def _doubled(x):
    out = np.empty(x.shape[0])
    return _doubled_into(x, out)


def written_fresh_result(x):
    y = _doubled(x)  # fresh: the helper's own buffer, filled by another helper
    y[0] = x[1] ** 2
    return np.sum(y * y * x)


def test_a_result_a_helper_made_through_another_helper_may_be_written():
    x = np.array([0.3, 0.7, 1.1])
    check_grad(written_fresh_result, x)
    check_jvp(written_fresh_result, x)
    check_hvp(written_fresh_result, x)
