"""``capture/tuple_builds.TupleSumToAdds`` and ``DivmodToBuild``: ``sum`` of a tuple of
floats and ``divmod`` of floats had no rule and were refused; they become additions of the
tuple's items and ``(a // b, a % b)``. Every mode against finite differences, and the
closed forms."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _terms(x):
    return (x[0] * x[1], math.sin(x[2]), 2.0)


def tuple_sums(x):
    t = _terms(x)
    return sum(t) * x[0] + sum((x[0], x[1] ** 2, 3))


def divmod_phase(x):
    q, r = divmod(x[0] * 3.0, 1.5)
    turns, angle = divmod(x[1] * x[2], 2.0 * math.pi)
    return q + r * x[1] + math.cos(angle) * r + turns


X = np.array([0.7, 1.3, 5.4])
CASES = [tuple_sums, divmod_phase]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad(f):
    check_grad(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp(f):
    check_jvp(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hvp(f):
    check_hvp(f, X)


def test_closed_forms():
    x0, x1, x2 = X
    s = x0 * x1 + math.sin(x2) + 2.0
    expected = [s + x0 * x1 + 1.0, x0 * x0 + 2.0 * x1, x0 * math.cos(x2)]
    np.testing.assert_allclose(adjit.grad(tuple_sums)(X), expected, rtol=1e-14)
    r = (x0 * 3.0) % 1.5
    angle = (x1 * x2) % (2.0 * math.pi)
    expected = [3.0 * x1 + 3.0 * math.cos(angle),
                r - math.sin(angle) * x2 * r, -math.sin(angle) * x1 * r]
    np.testing.assert_allclose(adjit.grad(divmod_phase)(X), expected, rtol=1e-13)
