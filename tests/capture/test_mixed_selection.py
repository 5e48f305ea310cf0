"""Fancy reads of a matrix that mix an index array or mask with a slice or an integer
(``X[idx, :]``, ``X[idx, 1:]``, ``X[idx, 2]``, ``X[1:3, idx]``, ``X[mask, 0]``):
``MixedReadsToTake`` reads the view of the other axis, then gathers from it. In every
mode against finite differences, with repeated indices (whose adjoints accumulate), a
module-level index array (Numba's ``static_getitem``) and a local one."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp

BATCH = np.array([0, 2, 3, 2])  # module level: a constant to Numba; 2 repeats
X = np.random.default_rng(11).uniform(-1.0, 1.0, (5, 4))


def row_reads(X, w):
    """Rows by a module-level index array beside a full slice, a tail slice and an
    integer; rows by a mask beside an integer."""
    mask = X[:, 0] > 0.0
    return (np.sum(X[BATCH, :] ** 2 * w) + np.sum(np.sin(X[BATCH, 1]))
            + np.sum(X[BATCH, 1:] ** 3) + np.sum(X[mask, 0] ** 2 * w[1])
            + np.sum(X[BATCH, -1] * X[BATCH, :2].sum()))


def column_reads(X):
    """Columns by a local index array (computed) beside an integer and a slice."""
    order = np.argsort(X[0])
    return np.sum(np.sin(X[1, order[:3]])) + np.sum(X[1:4, order] ** 2 * np.arange(4.0))


def minibatch_loss(w, X, y, batch):
    """A least-squares loss on a minibatch of rows, as a training loop takes it."""
    Xb = X[batch, :]
    r = Xb @ w - y[batch]
    return 0.5 * np.sum(r * r) / batch.shape[0]


def row_writes(X):
    """Scatters into rows beside a full slice, a tail slice and an integer, into a row at
    an index array, and the augmented forms (a read and a write of the same places)."""
    Y = X.copy()
    Y[BATCH[:2], 1:] = np.sin(X[1:3, :3])
    Y[BATCH[:2], 0] = 0.0
    Y[2, BATCH[:1]] = X[4, 1] ** 2
    Z = np.zeros((5, 4))
    Z[BATCH[1:3], :] = X[:2] * 2.0
    j = np.argsort(X[:, 0])[:2]
    Z[j, :] += np.cos(X[1:3])
    Y[X[:, 1] > 0.0, 2] *= 3.0
    return np.sum(Y ** 3) + np.sum(Z * Z * X)


W = np.array([0.3, -0.5, 0.8, 1.1])
CASES = [(row_reads, (X, W), (0, 1)), (column_reads, (X,), 0),
         (minibatch_loss, (W, X, np.arange(5.0), BATCH), (0, 1)), (row_writes, (X,), 0)]


@pytest.mark.parametrize("f,args,argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_every_mode(f, args, argnums):
    check_grad(f, *args, argnums=argnums)
    check_jvp(f, *args)
    check_hvp(f, *args, argnums=argnums)


def test_minibatch_gradient_closed_form():
    """d/dw of 0.5 |Xb w - yb|^2 / b is Xb^T (Xb w - yb) / b, repeated rows counted twice."""
    y = np.arange(5.0)
    Xb = X[BATCH, :]
    expected = Xb.T @ (Xb @ W - y[BATCH]) / BATCH.shape[0]
    got = adjit.grad(minibatch_loss)(W, X, y, BATCH)
    assert np.allclose(got, expected, rtol=1e-13, atol=1e-15)


EDGES_I = np.array([0, 2, 4, 2, -1])  # module level; the pair (2, 3) repeats
EDGES_J = np.array([1, 3, 0, 3, 2])


def pointwise_reads(X, w):
    """``X[rows, cols]`` with two index arrays: module-level ones (a repeated pair, a
    negative row), and local ones computed from the data."""
    rows, cols = np.argsort(X[:, 1]), np.argsort(X[0])
    return (np.sum(X[EDGES_I, EDGES_J] ** 2 * w[0]) + np.sum(np.sin(X[rows[:3], cols[1:4]]))
            + np.sum(X[BATCH, BATCH] * X[EDGES_I[:4], BATCH]))


def take_with_axis(X, w):
    """``np.take`` along an axis of a matrix (rows, columns, a negative axis) and of a
    vector, with a repeated index."""
    return (np.sum(np.take(X, BATCH, axis=0) ** 2) + np.sum(np.cos(np.take(X, BATCH[:3], axis=1)))
            + np.sum(np.take(X, BATCH[1:], axis=-1) * w[0]) + np.sum(np.take(w, BATCH, axis=0) ** 3))


@pytest.mark.parametrize("f", [pointwise_reads, take_with_axis], ids=lambda f: f.__name__)
def test_pointwise_and_take_every_mode(f):
    check_grad(f, X, W, argnums=(0, 1))
    check_jvp(f, X, W)
    check_hvp(f, X, W, argnums=(0, 1))


def test_pointwise_gradient_closed_form():
    """d/dX of sum(X[i, j]^2) is 2 X at each pair, counted once per time it is read."""
    def squares(X):
        return np.sum(X[EDGES_I, EDGES_J] ** 2)
    expected = np.zeros_like(X)
    for i, j in zip(EDGES_I, EDGES_J):
        expected[i, j] += 2.0 * X[i, j]
    assert np.allclose(adjit.grad(squares)(X), expected, rtol=1e-14, atol=0.0)


def test_pointwise_values_match_numpy():
    """The rewrite reads what NumPy reads, and a length mismatch or an index out of bounds
    raises as NumPy's indexing does."""
    def read(X, i, j):
        return np.sum(X[i, j] * np.arange(i.shape[0]))
    assert np.isclose(adjit.value_and_grad(read)(X, EDGES_I, EDGES_J)[0],
                      read(X, EDGES_I, EDGES_J))
    with pytest.raises(IndexError):
        adjit.grad(read)(X, EDGES_I, EDGES_J[:2])
    with pytest.raises(IndexError):
        adjit.grad(read)(X, EDGES_I, EDGES_J + 4)


def test_grid_index_arrays_are_still_refused_by_name():
    """``X[I, J]`` with 2-D index arrays has no rewrite: refused, naming the read."""
    def grid(X, I):
        return np.sum(X[I, I] ** 2)
    with pytest.raises(adjit.UnsupportedError, match="indexing an array with an array"):
        adjit.grad(grid)(X, np.array([[0, 1], [2, 3]]))
