"""An argument the function (or a helper it calls) writes into is restored by the reverse pass, also where a
block reads the argument's values between its writes (found by a bug hunt over physics
code). There the reverse pass binds the argument's name to a snapshot of its values, and
the restoring writes went into the snapshot: the caller's array kept the written values,
and ``hvp``, which runs the gradient at the point its tangents move, was wrong. Restores
now write through the argument's own memory (``shadows.argument_memory``)."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp

# (the weights are made in the function, an integer array the product's reverse reads:
# its block then saves x's values as snapshots around the write)
def written_then_weighted(x):
    x[0] = x[0] * x[1]
    return np.sum(x * np.arange(1, 4).reshape(x.shape))


def slice_written_then_read(x):
    x[1:] = x[1:] * x[0]
    return np.sum(x * np.arange(1, 4).reshape(x.shape)) + x[2] * x[1]


def written_through_a_view(x):
    row = x[0:2]
    row[0] = x[0] * x[2]
    return np.sum(x * np.arange(1, 4).reshape(x.shape))


def written_in_a_loop(x):
    s = 0.0
    for i in range(2):
        x[i] = x[i] * x[i + 1]
        s += np.sum(x * np.arange(1, 4).reshape(x.shape)) * x[i]
    return s


@numba.njit
def _kick(p, v, dt):
    for i in range(p.shape[0]):
        v[i] += dt * p[i] * p[(i + 1) % p.shape[0]]
        p[i] += dt * v[i]


def helper_writes_then_caller_reads(p):
    """A leapfrog-like helper writes the argument and a local velocity (an n-body
    integrator in the hunt): the helper's reverse got the caller's snapshot, and its
    restores went there."""
    v = np.zeros_like(p)
    _kick(p, v, 0.1)
    _kick(p, v, 0.1)
    return np.sum(p * p) + np.sum(p * np.arange(1, 4).reshape(p.shape))


CASES = [written_then_weighted, slice_written_then_read, written_through_a_view,
         written_in_a_loop, helper_writes_then_caller_reads]
X = np.array([1.1, 2.0, 3.0])
V = np.array([0.3, -1.0, 0.5])


@pytest.mark.parametrize("f", CASES)
def test_every_reverse_transform_leaves_the_argument_as_it_was(f):
    calls = {"grad": lambda x: adjit.grad(f)(x),
             "value_and_grad": lambda x: adjit.value_and_grad(f)(x),
             "vjp": lambda x: adjit.vjp(f)(x, 1.0),
             "hvp": lambda x: adjit.hvp(f)(x, V.copy())}
    for name, call in calls.items():
        x = X.copy()
        call(x)
        np.testing.assert_array_equal(x, X, err_msg=f"{name} left the argument changed")


@pytest.mark.parametrize("f", CASES)
def test_derivatives_match_finite_differences(f):
    check_grad(f, X.copy())
    check_jvp(f, X.copy())
    check_hvp(f, X.copy())


@pytest.mark.parametrize("f", CASES)
def test_hvp_matches_differences_of_finite_difference_gradients(f):
    """The reference takes no adjit derivative: central differences of central
    differences of the primal (each call on a fresh copy, as the primal writes x)."""
    def value(x):
        return f(x.copy())

    def fd_grad(x, h=1e-5):
        return np.array([(value(x + h * e) - value(x - h * e)) / (2 * h) for e in np.eye(3)])

    h = 1e-4
    expected = (fd_grad(X + h * V) - fd_grad(X - h * V)) / (2 * h)
    np.testing.assert_allclose(adjit.hvp(f)(X.copy(), V.copy()), expected,
                               rtol=1e-4, atol=1e-5)
