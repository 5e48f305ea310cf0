"""NumPy functions declared non-differentiable (indices, counts, tests, rounding) and
``np.take``, used as Numba code uses them beside differentiated values: the derivative
flows through the values they select and nowhere else, in every mode."""
import numba
import numpy as np
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def selections(x, edges):
    k = np.searchsorted(edges, x[0]) + np.digitize(x[1], edges)
    order = np.argsort(x)
    positive = np.flatnonzero(x > 0.0)
    count = np.count_nonzero(x > 0.5)
    first = np.nonzero(x > 0.0)[0][0]
    s = np.trunc(x[0]) + np.round(x[1]) + (1.0 if np.isinf(x[2]) else 0.0)
    picked = np.take(x, order)
    return (np.sum(picked * x) + x[order[0]] * k + count * x[positive[0]] ** 2
            + s * x[first] * x[2])


X = np.array([0.35, 1.2, -0.7, 2.15])
EDGES = np.array([-1.0, 0.0, 1.0, 2.0])


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_nondiff_selections_in_every_mode(mode):
    {"grad": lambda: check_grad(selections, X, EDGES, argnums=0),
     "jvp": lambda: check_jvp(selections, X, EDGES),
     "hvp": lambda: check_hvp(selections, X, EDGES, argnums=0)}[mode]()


def test_closed_form():
    """d/dx of sum(x[argsort(x)] * x) is x[order] scattered back plus x itself, etc.:
    checked against an independent evaluation of the same formula."""
    import adjit
    g = adjit.grad(selections)(X, EDGES)
    order = np.argsort(X)
    k = np.searchsorted(EDGES, X[0]) + np.digitize(X[1], EDGES)
    expected = X[order].copy()
    expected[order] += X
    expected[order[0]] += k
    pos = np.flatnonzero(X > 0.0)[0]
    expected[pos] += 2 * np.count_nonzero(X > 0.5) * X[pos]
    s = np.trunc(X[0]) + np.round(X[1])
    first = np.nonzero(X > 0.0)[0][0]
    expected[first] += s * X[2]
    expected[2] += s * X[first]
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def binned_residuals(x, h):
    """Bin indices by ``astype`` of a differentiated array (a cell list, a histogram by
    hand): the indices carry no derivative, the residuals do."""
    idx = (x / h).astype(np.int64)
    inside = (x > 0.0).astype(np.bool_)
    s = 0.0
    for i in range(x.shape[0]):
        s += (x[i] - idx[i] * h) ** 2 + inside[i] * x[i]
    return s + np.sum(idx * x)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_integer_casts_of_differentiated_arrays_in_every_mode(mode):
    """``x.astype(np.int64)`` was refused as an array op without a rule; like ``int(v)``
    its result has no derivative (refused before in every mode)."""
    {"grad": lambda: check_grad(binned_residuals, X, 0.25, argnums=0),
     "jvp": lambda: check_jvp(binned_residuals, X, 0.25),
     "hvp": lambda: check_hvp(binned_residuals, X, 0.25, argnums=0)}[mode]()
    if mode == "grad":
        import adjit
        idx = (X / 0.25).astype(np.int64)
        expected = 2 * (X - idx * 0.25) + (X > 0.0) + idx
        np.testing.assert_allclose(adjit.grad(binned_residuals)(X, 0.25), expected,
                                   rtol=1e-12)


def integer_stores(x, a):
    """Differentiated floats stored into an integer array (truncated, as by ``int``)."""
    ia = np.zeros(3, dtype=np.int64)
    ia[0] = x[0] * 3.7 * a
    ia[1:] = x[1:3] * 10.0
    return ia[0] * a + np.sum(ia * x[:3]) + x[3] * a


XI = np.array([0.71, 0.33, -0.47, 1.2])  # no element at a truncation step


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_floats_stored_into_an_integer_array_in_every_mode(mode):
    """grad took such a store as non-differentiable; forward mode refused it as a write
    into a constant array."""
    {"grad": lambda: check_grad(integer_stores, XI, 0.9),
     "jvp": lambda: check_jvp(integer_stores, XI, 0.9),
     "hvp": lambda: check_hvp(integer_stores, XI, 0.9)}[mode]()
    if mode == "jvp":
        import adjit
        ia = np.array([int(XI[0] * 3.7 * 0.9), int(XI[1] * 10.0), int(XI[2] * 10.0)])
        _, tangent = adjit.jvp(integer_stores)(XI, 0.9, np.ones(4), 1.0)
        assert tangent == pytest.approx(np.sum(ia) + 0.9 + ia[0] + XI[3], rel=1e-12)
