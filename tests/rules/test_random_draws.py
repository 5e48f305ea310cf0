"""``rules/random_draws.py``: ``np.random.normal`` with differentiated ``loc`` and
``scale`` (it was refused). The stream is seeded inside the function, so finite
differences see the same draws; every mode against them, the values against Numba's
own, and the stream a gradient leaves against the one the primal leaves."""
import numba
import numpy as np

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


def unseeded(p):
    return np.random.normal(p[0], p[1]) * p[0] + np.sum(np.random.normal(p[1], 2.0, 3))


P = np.array([0.3, 0.7])


def test_grad():
    check_grad(noisy_loss, P)


def test_jvp():
    check_jvp(noisy_loss, P)


def test_hvp():
    check_hvp(noisy_loss, P)


def test_value_is_numbas_and_the_pathwise_derivative():
    """The same draws as Numba's np.random.normal; d/dloc = 1 and d/dscale = the
    standard draw, for a stream held fixed."""
    value, grad = adjit.value_and_grad(noisy_loss)(P)
    assert value == numba.njit(noisy_loss)(P)

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
