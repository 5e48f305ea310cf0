"""Array reductions and products (adjit/rules/arrays.py) against finite differences, in
reverse mode (shadow updates) and through their forward-mode tangents, 1-D and 2-D."""
import operator

import numpy as np
import pytest

import adjit
from adjit.rules.arrays import lookup_array
from adjit.testing import check_grad

RNG = np.random.default_rng(11)
V5 = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
W5 = np.array([1.1, 0.5, -0.9, 0.2, 1.7])
M34 = RNG.uniform(0.5, 1.5, (3, 4)) * np.sign(RNG.standard_normal((3, 4)))


# each result is squared so that the adjoint reaching the rule is not 1
def f_sum(x): return np.sum(x) ** 2
def f_sum_method(x): return x.sum() ** 2
def f_sum_builtin(x): return sum(x) ** 2
def f_mean(x): return np.mean(x) ** 2
def f_mean_method(x): return x.mean() ** 2
def f_prod(x): return np.prod(x) ** 2
def f_prod_method(x): return x.prod() ** 2
def f_max(x): return np.max(x) ** 2
def f_max_method(x): return x.max() ** 2
def f_amax(x): return np.amax(x) ** 2
def f_min(x): return np.min(x) ** 2
def f_min_method(x): return x.min() ** 2
def f_norm(x): return np.linalg.norm(x) ** 2
def f_dot(x, y): return np.dot(x, y) ** 2
def f_matmul(x, y): return (x @ y) ** 2
def f_vdot(x, y): return np.vdot(x, y) ** 2


def g_prod(x): return np.prod(x)
def g_max(x): return np.max(x)
def g_min(x): return np.min(x)
def g_norm(x): return np.linalg.norm(x)


UNARY = [f_sum, f_sum_method, f_mean, f_mean_method, f_prod, f_prod_method, f_max,
         f_max_method, f_amax, f_min, f_min_method]
BINARY = [f_dot, f_matmul, f_vdot]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", UNARY + [f_norm], ids=lambda f: f.__name__)
def test_unary_rules_1d(f, dtype):
    check_grad(f, V5.astype(dtype))


@pytest.mark.parametrize("f", UNARY, ids=lambda f: f.__name__)
def test_unary_rules_2d(f):
    check_grad(f, M34)


def test_builtin_sum_of_array():
    check_grad(f_sum_builtin, V5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", BINARY, ids=lambda f: f.__name__)
def test_binary_rules(f, dtype):
    check_grad(f, V5.astype(dtype), W5.astype(dtype), argnums=(0, 1))


def dot_self(x):
    return np.dot(x, x)


def test_same_array_twice():
    np.testing.assert_allclose(adjit.grad(dot_self)(V5), 2 * V5, rtol=1e-15)


def test_prod_with_zeros_is_exact():
    one_zero = np.array([0.3, 0.0, 2.0, 5.0])
    two_zeros = np.array([0.3, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(adjit.grad(g_prod)(one_zero), [0.0, 3.0, 0.0, 0.0])
    np.testing.assert_array_equal(adjit.grad(g_prod)(two_zeros), np.zeros(4))


def test_max_and_min_go_to_the_first_extremum():
    x = np.array([1.0, 3.0, -2.0, 3.0, -2.0])
    np.testing.assert_array_equal(adjit.grad(g_max)(x), [0, 1, 0, 0, 0])
    np.testing.assert_array_equal(adjit.grad(g_min)(x), [0, 0, 1, 0, 0])


def test_norm_at_zero_is_zero():
    np.testing.assert_array_equal(adjit.grad(g_norm)(np.zeros(3)), np.zeros(3))


def sum_rows_views(a):
    return np.sum(a[1]) * np.dot(a[0], a[2]) + np.max(a[:, 1])


def test_reductions_of_views():
    check_grad(sum_rows_views, M34)


# -- forward-mode tangents: dy = sum_k tangent_k(ans, *args, da_k) --------------------------

TANGENT_CASES = [(np.sum, (V5,)), (np.sum, (M34,)), (np.mean, (M34,)), (np.prod, (V5,)),
                 (np.prod, (M34,)), (np.max, (M34,)), (np.min, (V5,)),
                 (np.linalg.norm, (V5,)), (np.dot, (V5, W5)), (operator.matmul, (V5, W5))]


@pytest.mark.parametrize("prim, args", TANGENT_CASES,
                         ids=[f"{getattr(p, '__name__', p)}-{a[0].ndim}d"
                              for p, a in TANGENT_CASES])
def test_tangents_match_finite_differences(prim, args):
    rule = lookup_array(prim)
    ans = prim(*args)
    for k in range(len(args)):
        da = RNG.standard_normal(args[k].shape)
        h = 1e-6
        plus = list(args)
        minus = list(args)
        plus[k] = args[k] + h * da
        minus[k] = args[k] - h * da
        fd = (prim(*plus) - prim(*minus)) / (2 * h)
        assert rule.tangents[k](ans, *args, da) == pytest.approx(fd, rel=1e-6, abs=1e-8)


# -- refused ----------------------------------------------------------------------------

def sum_axis(x): return np.sum(x, 0)
def sum_axis_4d(x): return np.sum(np.sum(x, 0))
def norm_2d(a): return np.linalg.norm(a)
def sum_of_broadcast(a, w): return np.sum(a + w)


def test_sum_of_broadcast():
    check_grad(sum_of_broadcast, M34, W5[:4], argnums=(0, 1))


def test_frobenius_norm_of_a_matrix():
    g = check_grad(norm_2d, M34)
    assert np.allclose(g, M34 / np.sqrt(np.sum(M34 * M34)))


def test_sum_along_the_only_axis_is_the_whole_sum():
    g = check_grad(sum_axis, V5)
    np.testing.assert_array_equal(g, np.ones_like(V5))


@pytest.mark.parametrize("f, args", [(sum_axis_4d, (np.ones((2, 3, 4, 2)),))])
def test_unsupported_array_operations_are_refused(f, args):
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(f)(*args)
