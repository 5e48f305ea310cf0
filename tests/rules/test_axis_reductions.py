"""Reductions along an axis that Numba itself does not compile (``rules/axis_reductions.py``):
the values of plain ``@njit`` code against NumPy, and derivatives in reverse mode, forward
mode and forward-over-reverse against finite differences."""
import numba
import numpy as np
import pytest
from numba.core import types

from adjit.rules import axis_reductions
from adjit.rules.composites import helper_plans
from adjit.rules.registry import _name
from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(5)
V5 = RNG.uniform(-1.0, 1.0, 5)
M34 = RNG.uniform(-1.0, 1.0, (3, 4))
T234 = RNG.uniform(0.2, 1.0, (2, 3, 4))


def rows_and_columns(a):
    return (np.sum(np.mean(a, axis=1) ** 2) + np.sum(np.max(a, axis=0) * np.min(a, -1).sum())
            + np.sum(np.var(a, axis=0)) + np.sum(np.std(a, 1))
            + np.sum(np.prod(a, axis=0)) + np.sum(np.linalg.norm(a, axis=1))
            + np.sum(np.amax(a, axis=-1)) - np.sum(np.amin(a, axis=0)))


def along_a_vector(a):
    return (np.mean(a, axis=0) * np.max(a, 0) + np.var(a, axis=-1)
            + np.linalg.norm(a, axis=0) + np.std(a, axis=0) * np.min(a, axis=0)
            + np.prod(a, axis=0))


def along_each_axis_3d(a):
    return (np.sum(np.mean(a, axis=2) ** 2) + np.sum(np.max(a, axis=1))
            + np.sum(np.var(a, axis=0)) + np.sum(np.linalg.norm(a, axis=0))
            + np.sum(np.prod(a, 2)))


def vector_norms(x):
    # np.linalg.norm(x, ord) of a vector, NumPy's ords (0 counts nonzeros: no derivative)
    return (np.linalg.norm(x, np.inf) * np.linalg.norm(x, 1) + np.linalg.norm(x, -np.inf)
            + np.linalg.norm(x * x, 3) + np.linalg.norm(x, ord=2) * np.linalg.norm(x, 0))


def matrix_norms(a):
    # np.linalg.norm(A, ord) of a matrix: column and row sums (±1, ±inf) and the
    # extreme singular values (±2)
    return (np.linalg.norm(a, 1) + 2.0 * np.linalg.norm(a, np.inf) + np.linalg.norm(a, -1)
            + np.linalg.norm(a, -np.inf) + np.linalg.norm(a, 2) * np.linalg.norm(a, ord=-2))


def float32_norms(a):
    # float32 matrix and vector norms of an ord: in float64, as Numba returns them (the
    # float64 helpers after a conversion; ord=2 is left to matrix_norms: compiling it
    # again for float32 costs most of a minute)
    return (np.linalg.norm(a, 1) * np.linalg.norm(a, -np.inf) + np.linalg.norm(a[0], 3)
            + np.linalg.norm(a[1], np.inf))


def keyword_helper(a, w):
    # the reductions as users write them in loops that fill an output
    out = np.empty(a.shape[0])
    col = np.mean(a, axis=0)
    for i in range(a.shape[0]):
        out[i] = np.sum((a[i] - col) ** 2 * w)
    return np.sum(out) + np.sum(np.std(a, axis=0) * w)


CASES = [
    (rows_and_columns, (M34,), 0, ["np.mean", "np.max", "np.min", "np.var", "np.std",
                                   "np.prod", "np.linalg.norm", "np.amax", "np.amin"]),
    (along_a_vector, (V5,), 0, []),
    (vector_norms, (V5,), 0, []),
    (matrix_norms, (M34,), 0, []),
    (float32_norms, (M34.astype(np.float32),), 0, []),
    (along_each_axis_3d, (T234,), 0, []),
    (keyword_helper, (M34, V5[:4] + 2.0), (0, 1), []),
]
IDS = [c[0].__name__ for c in CASES]


def lanes_and_sums(a):
    # hvp compiles one derived helper per lane kind, each for about 20 s at -O1: one lane
    # reduction and the axis sum stand for the rest
    return np.sum(np.var(a, axis=1) ** 2) + np.sum(np.mean(a, axis=0) ** 3)


HVP_CASES = [(lanes_and_sums, (M34,), 0, []), (vector_norms, (V5,), 0, []),
             (matrix_norms, (M34,), 0, []), (float32_norms, (M34.astype(np.float32),), 0, [])]


def test_every_axis_reduction_has_a_case():
    covered = {name for case in CASES for name in case[3]}
    mine = {_name(f) for f, by_rank in helper_plans().items()
            if any(h.__module__ == axis_reductions.__name__ for h in by_rank.values())}
    assert mine and mine <= covered, f"no test case for {sorted(mine - covered)}"


@pytest.mark.parametrize("func", sorted(axis_reductions.AXIS_HELPERS, key=_name))
@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 0), ((3, 4), -1),
                                         ((2, 3, 4), 1), ((2, 3, 4), -3)])
def test_njit_values_match_numpy(func, shape, axis):
    """With adjit imported, plain @njit code computes NumPy's values."""
    a = RNG.uniform(0.5, 1.5, shape)
    got = numba.njit(lambda a, axis: func(a, axis=axis))(a, axis)
    np.testing.assert_allclose(got, func(a, axis=axis), rtol=1e-12)


def test_njit_norm_matches_numpy():
    a = RNG.uniform(-1.0, 1.0, (2, 3, 4))
    for axis in (0, 1, 2, -1):
        got = numba.njit(lambda a, axis: np.linalg.norm(a, axis=axis))(a, axis)
        np.testing.assert_allclose(got, np.linalg.norm(a, axis=axis), rtol=1e-12)


def test_values_through_the_helpers_match_numpy():
    """adjit computes values through its helpers (what value_and_grad returns)."""
    import adjit
    for f, args, argnums, _ in CASES:
        value, _grad = adjit.value_and_grad(f, argnums=argnums)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12), f.__name__


def test_axis_out_of_range_raises_as_numpy():
    with pytest.raises(ValueError, match="out of bounds"):
        numba.njit(lambda a: np.mean(a, axis=2))(M34)


def test_calls_numba_compiles_are_unchanged():
    """Without an axis, Numba's own implementations (and adjit's rules for them) run."""
    f = numba.njit(lambda a: np.mean(a) + np.max(a) + np.var(a) + np.linalg.norm(a))
    assert f(M34) == pytest.approx(np.mean(M34) + np.max(M34) + np.var(M34)
                                   + np.linalg.norm(M34), rel=1e-12)
    mine = [h for by_rank in helper_plans().values() for h in by_rank.values()
            if h.__module__ == axis_reductions.__name__]
    assert mine and not any(_takes_one(h) for h in mine)  # np.mean(a) stays Numba's


def _takes_one(helper):
    """Whether a composite helper (or the helper a chooser picks for ``f(x)``) could
    replace a one-argument call."""
    import inspect
    if not hasattr(helper, "py_func"):  # a chooser
        return any(helper([t]) is not None for t in (types.float64[:], types.float64[:, :]))
    params = list(inspect.signature(helper.py_func).parameters.values())
    return all(p.default is not p.empty for p in params[1:])


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_grad(f, args, argnums, _):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_jvp(f, args, argnums, _):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args,argnums,_", HVP_CASES, ids=[c[0].__name__ for c in HVP_CASES])
def test_hvp(f, args, argnums, _):
    check_hvp(f, *args, argnums=argnums)
