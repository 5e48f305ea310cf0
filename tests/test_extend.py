"""The rule-author API (adjit.extend), step by step along its escalation order."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.extend import ONE, defderiv, nondiff
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def derived_softplus(x):
    return math.log1p(math.exp(x))


@numba.njit
def noisy_sign(x):
    return 1.0 if x >= 0 else -1.0


@numba.njit
def ruled_softplus(x):
    return math.log1p(math.exp(x))


@numba.njit
def ruled_shift(x, y):
    return x + y + 0.0


nondiff(noisy_sign)
defderiv(ruled_softplus, lambda x: 1.0 / (1.0 + math.exp(-x)))
defderiv(ruled_shift, ONE, lambda x, y: 2.0)  # deliberately "wrong": proves the rule is used


def use_derived(x):
    return derived_softplus(x) * 2.0


def use_nondiff(x):
    return noisy_sign(x) * x * x


def use_ruled(x):
    return ruled_softplus(x) * 3.0


def use_shift(x, y):
    return ruled_shift(x, y)


def test_step1_derived_rule():
    check_grad(use_derived, 0.3)
    check_jvp(use_derived, 0.3)


def test_step2_nondiff_contributes_nothing():
    # sign(x) is held constant: d/dx [sign(x) * x^2] = 2 sign(x) x = 3 at x = -1.5
    assert adjit.grad(use_nondiff)(-1.5) == pytest.approx(3.0)
    assert adjit.jvp(use_nondiff)(-1.5, 1.0)[1] == pytest.approx(3.0)


def test_step3_one_line_rule_in_both_modes():
    check_grad(use_ruled, 0.3)
    check_jvp(use_ruled, 0.3)
    assert adjit.grad(use_shift, argnums=(0, 1))(1.0, 2.0) == (1.0, 2.0)
    assert adjit.jvp(use_shift)(1.0, 2.0, 1.0, 1.0)[1] == 3.0


def test_rule_is_used_for_hessians_too():
    hv = adjit.hvp(use_ruled)(0.3, 1.0)
    s = 1.0 / (1.0 + math.exp(-0.3))
    assert hv == pytest.approx(3.0 * s * (1.0 - s))


@numba.njit
def doubled(a):
    return a * 2.0


def _adds_three_times(g, shadow):
    shadow += 3.0 * g  # deliberately "wrong" (the truth is 2 g): proves the rule is used


def array_rule_user(x):
    return np.sum(doubled(x) * x)


def test_user_array_rule_is_used_in_both_modes():
    """``deflinear_array`` on a user's @njit function: reverse mode uses the registered
    transpose, forward mode applies the function to the tangent."""
    from adjit.extend import deflinear_array
    deflinear_array([doubled], _adds_three_times)
    x = np.array([0.5, -1.0, 2.0])
    # d/dx sum(D(x) * x) = D^T x + D(x) with D^T = 3 (the rule), D = 2 (the function)
    assert np.allclose(adjit.grad(array_rule_user)(x), 3.0 * x + 2.0 * x)
    t = np.array([1.0, 0.0, -1.0])
    _, tan = adjit.jvp(array_rule_user)(x, t)
    assert tan == pytest.approx(np.sum(2.0 * t * x + 2.0 * x * t))


@numba.njit
def weighted_energy(a, w):
    total = 0.0
    for i in range(a.shape[0]):
        total += w[i] * a[i] ** 2
    return 0.5 * total


def energy_user(x, w):
    return weighted_energy(np.sin(x), w) * x[0]


@numba.njit
def sum_of_squares(a):
    return np.sum(a * a)


def squares_user(x):
    return sum_of_squares(x)


def test_a_partial_that_reads_its_element_inside_a_comprehension():
    """The element read only inside a comprehension (a closure cell in the bytecode, not
    LOAD_FAST) counted as unread: reverse mode passed the shadow in its place (grad
    [0, 0, 0]) and forward mode the tangent (2 v.v instead of 2 x.v)."""
    from adjit.extend import defelementwise
    from adjit.rules.primitive import PRIMITIVES
    defelementwise([sum_of_squares], lambda g, ans, n, a: g * sum([a for _ in range(2)]))
    try:
        x, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 0.0])
        np.testing.assert_allclose(adjit.grad(squares_user)(x), 2.0 * x, rtol=1e-15)
        assert adjit.jvp(squares_user)(x, v)[1] == pytest.approx(2.0 * x @ v, rel=1e-15)
    finally:
        PRIMITIVES.remove(sum_of_squares, "reduction")


def test_user_reduction_rule_in_every_mode():
    """``defelementwise`` on a user's @njit reduction: the registered partials, not the
    function's body, are used in every mode. The partial for ``a`` is deliberately 3/2 of
    the true one; the expected values use the same factor, so a mode that derived the body
    instead of using the rule fails."""
    from adjit.extend import defelementwise
    from adjit.rules.primitive import PRIMITIVES
    x = np.array([0.3, -0.8, 1.1])
    w = np.array([1.0, 2.0, 0.5])
    defelementwise([weighted_energy], lambda g, ans, n, a, w: 1.5 * g * w * a,
                   lambda g, ans, n, a, w: 0.5 * g * a * a)
    try:
        e = weighted_energy(np.sin(x), w)
        dadx = 1.5 * w * np.sin(x) * np.cos(x)       # the rule's (scaled) gradient in x
        expected = dadx * x[0]
        expected[0] += e
        assert np.allclose(adjit.grad(energy_user)(x, w), expected, rtol=1e-12)
        t = np.array([1.0, -0.5, 0.25])
        _, tan = adjit.jvp(energy_user)(x, w, t, np.zeros(3))
        assert tan == pytest.approx(expected @ t, rel=1e-12)
        # forward-over-reverse differentiates the rule's update helper; with the true
        # partials registered (a scaled rule makes no consistent Hessian), it matches
        # finite differences of the gradient
        defelementwise([weighted_energy], lambda g, ans, n, a, w: g * w * a,
                       lambda g, ans, n, a, w: 0.5 * g * a * a)
        check_grad(energy_user, x, w, argnums=(0, 1))
        check_hvp(energy_user, x, w, argnums=(0, 1))
    finally:
        PRIMITIVES.remove(weighted_energy, "reduction")
