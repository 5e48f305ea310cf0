"""``rules/random_draws.py``: ``np.random.normal``, ``uniform`` and ``exponential``
with differentiated parameters (they were refused). The stream is seeded inside the function, so finite
differences see the same draws; every mode against them, the values against Numba's
own, and the stream a gradient leaves against the one the primal leaves."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


def noisy_loss(p):
    np.random.seed(7)
    s = 0.0
    for i in range(5):
        s += np.random.normal(p[0], p[1]) ** 2
    z = np.random.normal(p[0] * 2.0, np.exp(p[1]), 6)
    w = np.random.normal(0.0, 1.0, (2, 3))
    return s + np.sum(np.sin(z)) * np.sum(w)


def other_draws(p):
    np.random.seed(5)
    u = np.random.uniform(p[0], p[0] + p[1] ** 2, 4)
    e = np.random.exponential(p[1], (2, 2))
    return (np.sum(u * u) + np.random.uniform(-p[1], p[0]) * np.sum(e)
            + np.random.exponential(1.0 + p[0]) + np.random.normal(p[1]))


def unseeded(p):
    return (np.random.normal(p[0], p[1]) * p[0] + np.sum(np.random.normal(p[1], 2.0, 3))
            + np.random.uniform(p[0], 2.0) * np.random.exponential(p[1]))


P = np.array([0.3, 0.7])


CASES = [noisy_loss, other_draws]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad(f):
    check_grad(f, P)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp(f):
    check_jvp(f, P)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hvp(f):
    check_hvp(f, P)


def test_value_is_numbas_and_the_pathwise_derivative():
    """The same draws as Numba's np.random.normal; d/dloc = 1 and d/dscale = the
    standard draw, for a stream held fixed."""
    for f in CASES:
        value, _ = adjit.value_and_grad(f)(P)
        assert value == numba.njit(f)(P), f.__name__

    def one_draw(p):
        np.random.seed(3)
        return np.random.normal(p[0], p[1])
    np.random.seed(3)  # NumPy's legacy stream: the same Box-Muller draws as Numba's
    g = np.random.standard_normal()
    np.testing.assert_allclose(adjit.grad(one_draw)(P), [1.0, g], rtol=1e-15)


@numba.njit
def _seed(k):
    np.random.seed(k)


@numba.njit
def _next():
    return np.random.random()


def test_a_gradient_draws_what_the_primal_draws():
    """The reverse pass reuses the forward sweep's draws: after a gradient the stream is
    where the primal leaves it."""
    primal = numba.njit(unseeded)
    _seed(11)
    primal(P)
    after_primal = _next()
    _seed(11)
    adjit.grad(unseeded)(P)
    assert _next() == after_primal
    _seed(11)
    adjit.hvp(unseeded)(P, P)
    assert _next() == after_primal
