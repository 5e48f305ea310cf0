"""NumPy's statistics functions (``rules/statistics.py`` composites) and the scalar ufuncs
added with them in reverse mode, forward mode and forward-over-reverse, against finite differences. Cases are grouped so that each
function compiles once per mode; a registered composite without a case fails
``test_every_composite_has_a_case``."""
import numpy as np
import pytest

from adjit.rules import statistics
from adjit.rules.composites import helper_plans
from adjit.rules.registry import _name
from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(11)
V7 = np.array([0.9, -0.3, 1.7, 0.2, 1.1, -1.4, 0.6])   # distinct: no ties in sorts
V6 = np.array([0.4, 1.3, -0.8, 2.1, 0.05, -1.2])
M34 = RNG.uniform(-1.0, 1.0, (3, 4))
SQ3 = np.array([[1.2, 0.3, -0.2], [0.1, 0.9, 0.4], [-0.3, 0.2, 1.1]])


def order_statistics(x):
    # odd and even lengths, a percentile between two elements, the range
    return (np.median(x) * np.median(x[1:]) + np.percentile(x * x, 30.0)
            + np.quantile(np.sin(x), q=0.8) + np.ptp(x) ** 2)


def quantile_level(x, q):
    # the interpolation weight depends on q (the derivative in q is the slope between
    # the two sorted elements)
    return np.quantile(x, q) + np.percentile(x, 100.0 * q) * q


def several_levels(x, q):
    # an array of levels (it was an internal error): one quantile per entry
    return np.sum(np.percentile(x * x, np.array([10.0, 50.0, 90.0])) * q) \
        + np.sum(np.quantile(np.sin(x), q) ** 2)


def nan_reductions(x):
    y = np.where(x > 1.5, np.nan, x * x)  # the NaN element takes no adjoint
    return np.nansum(y) * np.nanmean(y) + np.nanmax(y) - np.nanmin(np.sin(y))


def nan_spread(x):
    y = np.where(x > 1.5, np.nan, x * x)
    return np.nanvar(y) + np.nanstd(np.sin(y)) * np.nanprod(y + 1.0)


def weighted(x, w):
    return np.average(x, weights=w) + np.average(x * x) + np.trapezoid(x * x, x=np.cumsum(w)) \
        + np.trapezoid(np.sin(x), dx=0.5)


def covariance(m):
    return np.sum(np.cov(m) ** 2) + np.sum(np.sin(np.corrcoef(m)))


def covariance_options(m):
    # variables in columns (dpbench's PCA: np.cov(data, rowvar=False)), bias, ddof
    return (np.sum(np.cov(m, rowvar=False) ** 2) + np.sum(np.cov(m, bias=True) * m[:, :3])
            + np.sum(np.cov(m, ddof=0) ** 2) + np.sum(np.corrcoef(m, rowvar=False) ** 2))


def vector_covariance(x):
    # np.cov of one variable: its variance, as a 0-d array
    return np.cov(x) * x[0] + np.cov(x, bias=True) ** 2 + np.cov(x, ddof=2)


def paired_covariance(x, y):
    # a second array y of further variables: 1-D pairs (a 2 x 2 matrix), rowvar, bias
    return (np.sum(np.cov(x, y) ** 2) + np.corrcoef(x, y)[0, 1]
            + np.sum(np.cov(x, y, bias=True)) + np.sum(np.corrcoef(x, y, rowvar=False)))


def paired_matrix_covariance(m, y):
    # a 2-D m and a 1-D y; variables in columns with rowvar=False
    return (np.sum(np.cov(m, y) ** 2) + np.sum(np.corrcoef(m, y) ** 2)
            + np.sum(np.cov(m.T, y, rowvar=False, ddof=0) ** 2))


def scalar_ufuncs(x, y):
    return np.sum(np.logaddexp(x, y) + np.logaddexp2(x, 2.0 * y) + np.reciprocal(y)
                  + np.sinc(x) + np.remainder(x, 0.7) * x + np.fmod(y, 0.4) * y
                  + np.copysign(x, y) * y)


X2 = RNG.uniform(0.2, 1.4, 6)
CASES = [
    (order_statistics, (V7,), 0, ["np.median", "np.percentile", "np.quantile", "np.ptp"]),
    (quantile_level, (V7, 0.37), (0, 1), []),
    (several_levels, (V7, np.array([0.15, 0.55, 0.85])), (0, 1), []),
    (nan_reductions, (V6,), 0, ["np.nansum", "np.nanmean", "np.nanmax", "np.nanmin"]),
    (nan_spread, (V6,), 0, ["np.nanvar", "np.nanstd", "np.nanprod"]),
    (weighted, (V6, np.abs(V6) + 0.5), (0, 1), ["np.average", "np.trapezoid"]),
    (covariance, (M34,), 0, ["np.cov", "np.corrcoef"]),
    (covariance_options, (M34,), 0, []),
    (vector_covariance, (V6,), 0, []),
    (paired_covariance, (V6, np.sin(V6) + V6 ** 2), (0, 1), []),
    (paired_matrix_covariance, (M34[:2, :], np.cos(M34[2, :])), (0, 1), []),
    (scalar_ufuncs, (X2, X2[::-1] + 0.1), (0, 1), []),
]
IDS = [c[0].__name__ for c in CASES]


def test_every_composite_has_a_case():
    covered = {name for case in CASES for name in case[3]}
    mine = {_name(f) for f, by_rank in helper_plans().items()
            if any(h.__module__ == statistics.__name__ for h in by_rank.values())}
    assert mine <= covered, f"no test case for {sorted(mine - covered)}"


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_grad(f, args, argnums, _):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_jvp(f, args, argnums, _):
    check_jvp(f, *args)


# covariance is left out of hvp for compile time (a minute at -O1): its helper's products
# and axis sums are covered under hvp by test_array_ops
HVP_CASES = [c for c in CASES if c[0] not in (covariance, covariance_options,
                                              paired_matrix_covariance)]


@pytest.mark.parametrize("f,args,argnums,_", HVP_CASES, ids=[c[0].__name__ for c in HVP_CASES])
def test_hvp(f, args, argnums, _):
    check_hvp(f, *args, argnums=argnums)


def test_values_match_numpy():
    """The helpers compute NumPy's values (what value_and_grad and jvp return)."""
    import adjit
    for f, args, argnums, _ in CASES:
        value, _grad = adjit.value_and_grad(f, argnums=argnums)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12, abs=1e-12), f.__name__


def _spread(x):
    return np.ptp(x) ** 2 + np.sum(np.cov(np.vstack((x, x * x))))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_float32_arrays_are_refused_with_the_conversion_to_make(mode):
    """The helpers behind np.ptp and np.cov take float64 arrays: the refusal says to
    convert, not to register a rule or drop an axis= option."""
    import adjit
    x = np.array([0.3, 1.2, -0.4, 0.8], dtype=np.float32)
    with pytest.raises(adjit.UnsupportedError, match=r"x.astype\(np.float64\)"):
        if mode == "grad":
            adjit.grad(_spread)(x)
        else:
            adjit.jvp(_spread)(x, np.ones(4, np.float32))
    check_grad(_spread, x.astype(np.float64))
