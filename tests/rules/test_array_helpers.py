"""NumPy array functions computed by ``rules/array_helpers.py`` composites, in reverse
mode, forward mode and forward-over-reverse, against finite differences; their values
against Numba's. A registered composite of that module without a case fails
``test_every_composite_has_a_case``."""
import numba
import numpy as np
import pytest

import adjit
from adjit.rules import array_helpers
from adjit.rules.composites import helper_plans
from adjit.rules.registry import _name
from adjit.testing import check_grad, check_hvp, check_jvp

X5 = np.array([0.9, 0.35, 1.7, 0.2, 1.1])
M34 = np.random.default_rng(7).uniform(0.05, 1.0, (3, 4))


def vandermonde(x):
    # default N (decreasing powers), a given N, increasing powers
    return (np.sum(np.vander(x) ** 2) + np.sum(np.vander(x, 3, increasing=True) * x[0])
            + np.sum(np.vander(x, N=2)))


def replaced_non_finite(x):
    # NaN (where x < 0.3) and +inf (where x > 1.5) take no adjoint; the rest pass through
    y = np.where(x > 1.5, np.inf, np.where(x < 0.3, np.nan, x * x))
    return (np.sum(np.nan_to_num(np.where(x > 1.5, x, y)) * x)
            + np.sum(np.nan_to_num(y, nan=1.5, posinf=2.0, neginf=-1.0) ** 2))


def replaced_in_a_matrix(a):
    return np.sum(np.nan_to_num(np.log(a - 0.3)) ** 2)  # log of negatives: NaN


def differences(x):
    return np.sum(np.ediff1d(x) ** 2) + np.sum(np.ediff1d(np.outer(x, x)) * x[0])


def real_parts(x):
    return np.sum(np.real(x) * x) + np.real(x[0]) ** 2


def float_powers(x):
    return np.sum(np.float_power(x, 1.5)) + np.sum(np.float_power(x, x)) \
        + np.float_power(x[0], 2.5)


CASES = [
    (vandermonde, (X5,), ["np.vander"]),
    (replaced_non_finite, (X5,), ["np.nan_to_num"]),
    (replaced_in_a_matrix, (M34,), []),
    (differences, (X5,), ["np.ediff1d"]),
    (real_parts, (X5,), ["np.real"]),
    (float_powers, (X5,), ["np.float_power"]),
]
IDS = [c[0].__name__ for c in CASES]


def test_every_composite_has_a_case():
    covered = {name for case in CASES for name in case[2]}
    mine = {_name(f) for f, by_rank in helper_plans().items()
            if any(getattr(h, "__module__", None) == array_helpers.__name__
                   for h in by_rank.values())}
    assert mine and mine <= covered, f"no test case for {sorted(mine - covered)}"


@pytest.mark.parametrize("f,args,_", CASES, ids=IDS)
def test_grad(f, args, _):
    check_grad(f, *args)


@pytest.mark.parametrize("f,args,_", CASES, ids=IDS)
def test_jvp(f, args, _):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args,_", CASES, ids=IDS)
def test_hvp(f, args, _):
    check_hvp(f, *args)


@pytest.mark.parametrize("f,args,_", CASES, ids=IDS)
def test_values_are_numbas(f, args, _):
    """The helpers compute what Numba computes, to the last bit."""
    value, _grad = adjit.value_and_grad(f)(*args)
    assert value == numba.njit(f)(*args)


def test_vander_of_float32_is_float64_as_numbas():
    x = X5.astype(np.float32)
    expected = numba.njit(lambda x: np.vander(x, 3))(x)
    assert expected.dtype == np.float64
    w = np.arange(15.0).reshape(5, 3)
    value, g = adjit.value_and_grad(lambda x: np.sum(np.vander(x, 3) * w))(x)
    assert value == pytest.approx(np.sum(expected * w), rel=1e-14)
    # d/dx_i sum_j w_ij x_i^(2-j) = 2 w_i0 x_i + w_i1
    np.testing.assert_allclose(g, 2.0 * w[:, 0] * x + w[:, 1], rtol=1e-6)


def _cleaned_in_place(x):
    y = np.where(x > 1.5, np.nan, x * 2.0)
    np.nan_to_num(y, copy=False)
    return np.sum(y * x)


def _constants_cleaned_in_place(x, data):
    d = data.copy()
    np.nan_to_num(d, copy=False, nan=0.5)
    return np.sum(x * d)


def _cleaned_copy_returned(x):
    y = np.where(x > 1.5, np.nan, x * 2.0)
    z = np.nan_to_num(y, copy=False)  # z is y
    z[0] = 3.0 * x[0]
    return np.sum(y * x) + np.sum(z)


@pytest.mark.parametrize("f, args", [(_cleaned_in_place, (X5,)),
                                     (_cleaned_copy_returned, (X5,)),
                                     (_constants_cleaned_in_place,
                                      (X5, np.array([1.0, np.nan, 2.0, np.inf, -1.0])))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_nan_to_num_in_place(f, args):
    """With ``copy=False`` Numba writes into its argument and returns it; so does the
    helper adjit picks for a constant ``copy=False``."""
    value, _grad = adjit.value_and_grad(f)(*args)
    assert value == numba.njit(f)(*args)
    check_grad(f, *args)
    check_jvp(f, *args)
    check_hvp(f, *args)


def test_nan_to_num_of_constants_in_place_has_the_closed_form():
    data = np.array([1.0, np.nan, 2.0, np.inf, -1.0])
    expected = np.array([1.0, 0.5, 2.0, np.finfo(np.float64).max, -1.0])
    np.testing.assert_array_equal(adjit.grad(_constants_cleaned_in_place)(X5, data), expected)


def _cleaned_as_told(x, copy):
    y = np.log(x - 0.3)
    np.nan_to_num(y, copy=copy)
    return np.sum(y * y)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_nan_to_num_with_copy_known_only_at_run_time_is_refused_with_advice(mode):
    """Whether the call writes into ``y`` decides its rule, so a ``copy`` that is an
    argument is refused, saying to write it as a constant (it said "no rule covers this
    call on arrays")."""
    x = np.array([0.2, 1.5, 2.5])
    run = {"grad": lambda: adjit.grad(_cleaned_as_told)(x, False),
           "jvp": lambda: adjit.jvp(_cleaned_as_told)(x, False, x)}[mode]
    with pytest.raises(adjit.UnsupportedError, match="copy=, which must be a constant"):
        run()
