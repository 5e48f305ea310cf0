"""custom_vjp (``adjit.extend.custom_vjp``, ``defvjp``): a hand-written forward and
backward pass, checked in grad, jvp and hvp against finite differences; a deliberately
wrong backward pass shows in every mode (the rule is used, not the body); calls the rule
does not cover are refused by name."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.extend import custom_vjp, defvjp
from adjit.testing import check_grad, check_hvp, check_jvp


@custom_vjp
@numba.njit
def softplus_times(x, y):
    return math.log1p(math.exp(x)) * y


@numba.njit
def _softplus_times_fwd(x, y):
    s = 1.0 / (1.0 + math.exp(-x))
    return softplus_times(x, y), (s, x, y)


@numba.njit
def _softplus_times_bwd(res, g):
    s, x, y = res
    return (g * s * y, g * math.log1p(math.exp(x)))


softplus_times.defvjp(_softplus_times_fwd, _softplus_times_bwd)


def scalar_user(x, y):
    return softplus_times(x * x, y) + math.sin(softplus_times(y, x))


def scalar_loop(x):
    s = 0.0
    for i in range(5):
        s += softplus_times(x * i, x) * 0.1 + s * 0.01
    return s


@custom_vjp
def weighted_squares(a, b):  # a plain function: custom_vjp compiles it
    return np.sum(a * a * b)


weighted_squares.defvjp(lambda a, b: (weighted_squares(a, b), (a, b)),
                        lambda res, g: (2.0 * g * res[0] * res[1], g * res[0] * res[0]))


def array_user(a, b):
    return 2.0 * weighted_squares(np.sin(a), b) + np.sum(a)


A = np.array([0.3, -0.7, 1.1])
B = np.array([1.5, 0.2, -0.4])
CASES = [(scalar_user, (0.4, 1.3), (0, 1)), (scalar_loop, (0.7,), 0),
         (array_user, (A, B), (0, 1)),
         (array_user, (np.arange(6.0).reshape(2, 3) / 5, np.ones((2, 3)) + 0.5), (0, 1))]
IDS = ["scalars", "in_a_loop", "arrays", "matrices"]


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_grad(f, args, argnums):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp(f, args, argnums):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args,argnums", CASES[:3], ids=IDS[:3])
def test_hvp(f, args, argnums):
    check_hvp(f, *args, argnums=argnums)


@custom_vjp
@numba.njit
def _scaled(x):
    return 2.0 * x


# deliberately not the derivative of 2 x: the transforms must use this rule
defvjp(_scaled, lambda x: (2.0 * x, x), lambda x, g: (3.0 * g * x,))


def _uses_scaled(x):
    return _scaled(x) * 2.0


def test_the_rule_is_what_every_mode_uses():
    """d/dx 2 * scaled(x) by the (wrong on purpose) rule is 2 * 3 x, not 4."""
    x = 0.5
    assert adjit.grad(_uses_scaled)(x) == pytest.approx(6.0 * x, rel=1e-14)
    assert adjit.jvp(_uses_scaled)(x, 1.0)[1] == pytest.approx(6.0 * x, rel=1e-14)
    assert adjit.hvp(_uses_scaled)(x, 1.0) == pytest.approx(6.0, rel=1e-14)


@custom_vjp
@numba.njit
def _doubled(a):
    return 2.0 * a


_doubled.defvjp(lambda a: (2.0 * a, 0.0), lambda r, g: (2.0 * g,))


def _sum_doubled(a):
    return np.sum(_doubled(a))


def test_an_array_result_is_refused_by_name_in_every_mode():
    """The rule is for float results; an array result was refused as a helper
    'writing into its arguments' in reverse mode, which it does not do."""
    for transform, args in ((adjit.grad, (A,)), (adjit.jvp, (A, A)), (adjit.hvp, (A, A))):
        with pytest.raises(adjit.UnsupportedError,
                           match=r"(?s)'_doubled'.*custom vjp .*returns array"):
            transform(_sum_doubled)(*args)


def test_bad_registrations_are_argument_errors():
    with pytest.raises(adjit.ArgumentError, match="expects an @numba.njit function"):
        defvjp(lambda x: x, _softplus_times_fwd, _softplus_times_bwd)
    with pytest.raises(adjit.ArgumentError, match="takes 1 to 4 arguments"):
        custom_vjp(lambda a, b, c, d, e: a).defvjp(lambda *a: 0, lambda r, g: 0)
    with pytest.raises(adjit.ArgumentError, match="fwd must be a function"):
        custom_vjp(lambda x: x).defvjp(3, lambda r, g: (g,))
    with pytest.raises(adjit.ArgumentError, match="expects the function"):
        adjit.extend.defderiv(3, lambda x: 1.0)


@custom_vjp
@numba.njit
def _total(a):
    return np.sum(a)


# bwd's cotangent has one element too many: NumPy's broadcasting took it silently
_total.defvjp(lambda a: (np.sum(a), a.shape[0]), lambda n, g: (g * np.ones(n + 1),))


@custom_vjp
@numba.njit
def _product(x, y):
    return x * y


_product.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))  # one for two


def test_a_bwd_that_does_not_fit_is_the_users_error_not_adjits():
    """A cotangent of the wrong shape gave a gradient without an error (grad) or Numba's
    broadcasting error (jvp); a bwd with too few cotangents was reported as an internal
    error of adjit's."""
    a = np.array([0.1, -0.4, 0.7])
    with pytest.raises(ValueError, match="custom vjp of '_total'.*shape is not its argument"):
        adjit.grad(lambda a: _total(a) * 3.0)(a)
    with pytest.raises(ValueError, match="custom vjp of '_total'.*shape is not its argument"):
        adjit.jvp(lambda a: _total(a) * 3.0)(a, np.ones(3))
    with pytest.raises(adjit.UnsupportedError, match="(?s)custom vjp.*one cotangent per arg"):
        adjit.grad(lambda x, y: _product(x, y), argnums=1)(0.5, 2.0)


@custom_vjp
@numba.njit
def _scaled_total(a, s):
    return s * np.sum(a)


_scaled_total.defvjp(lambda a, s: (s * np.sum(a), (a, s)),
                     lambda r, g: (g * r[1] * np.ones_like(r[0]), g * np.sum(r[0])))


@custom_vjp
@numba.njit
def _pair(x):
    return x * x, 2.0 * x


_pair.defvjp(lambda x: (_pair(x), x), lambda x, g: (g,))


def _scaled_in_a_loop(a, s):
    t = 0.0
    for i in range(3):
        t += _scaled_total(a * (i + 1.0), s * s + i) * 0.1
    return t


def test_a_float_beside_arrays_in_every_mode():
    """d/ds of s * sum(a) is sum(a): reverse mode refused a differentiated float beside
    arrays (the reduction shape takes array adjoints only); it takes g * d_s now."""
    a = np.array([1.0, 2.0])
    assert adjit.grad(_scaled_total, argnums=1)(a, 2.0) == pytest.approx(3.0, rel=1e-15)
    assert adjit.jvp(_scaled_total)(a, 2.0, np.ones(2), 1.0)[1] == pytest.approx(7.0)
    b = np.array([1.0, 2.0, -0.5])
    check_grad(_scaled_in_a_loop, b, 0.7, argnums=(0, 1))
    check_jvp(_scaled_in_a_loop, b, 0.7)
    check_hvp(_scaled_in_a_loop, b, 0.7, argnums=(0, 1))


def test_a_tuple_result_is_refused_with_its_reason():
    """It said no rule was registered."""

    def unpacks(x):
        p, q = _pair(x)
        return p + q
    with pytest.raises(adjit.UnsupportedError, match=r"(?s)'_pair'.*returns UniTuple"):
        adjit.grad(unpacks)(0.3)
