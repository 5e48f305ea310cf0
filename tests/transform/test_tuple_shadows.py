"""Forward mode over a reverse pass (hvp) that adds into an array's shadow through a tuple
of shadows: read at a variable index (``u[k]`` of ``u = (sq(x), x)``) or passed to a
helper that takes a tuple or ``*arrays``. The shadow's tangent was left out of the
activity analysis, so hvp dropped the term through it (grad and jvp were right)."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp


@numba.njit
def _square(x):
    return x * x


@numba.njit
def _cube_sum(t):
    return np.sum(t[0] * t[0] * t[0])


@numba.njit
def _sum_of_squares(*arrays):
    s = 0.0
    for a in arrays:
        s += np.sum(a * a)
    return s


def tuple_to_a_helper(x):  # sum(x^6)
    return _cube_sum((_square(x),))


def star_arrays_helper(x):  # sum(x^4) + sum(x^2)
    return _sum_of_squares(_square(x), x)


def variable_index(x):  # the same, the loop in the function itself
    u = (_square(x), x)
    r = 0.0
    for k in range(2):
        r += np.sum(u[k] * u[k])
    return r


X = np.linspace(0.1, 1.0, 4)
V = np.array([1.0, -0.5, 2.0, 0.3])
HESSIAN_DIAGONAL = {tuple_to_a_helper: 30 * X ** 4,
                    star_arrays_helper: 12 * X ** 2 + 2,
                    variable_index: 12 * X ** 2 + 2}


@pytest.mark.parametrize("f", list(HESSIAN_DIAGONAL))
def test_hvp_through_a_tuple_of_shadows(f):
    np.testing.assert_allclose(adjit.hvp(f)(X, V), HESSIAN_DIAGONAL[f] * V, rtol=1e-12)
    check_grad(f, X)
    check_hvp(f, X)
