"""FuseElementwiseSums (``adjit/capture/fused_sums.py``): ``np.sum`` of a tree of
elementwise operations becomes one loop computing the tree on each element. Each case is
checked against finite differences in grad, jvp and hvp; the value against the primal's,
bit for bit (the loop adds in ``np.sum``'s order); and whether it was fused, from the
captured IR.
"""
import numpy as np
import pytest
from numba import njit

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp
from fusion_counts import allocations_per_call, count_fused


def _fused(f, *args):
    """How many sums of ``f`` at ``args`` became fused loops."""
    return count_fused("fused_sum", f, *args)


def sin_times_x(x):
    return np.sum(np.sin(x) * x)


def sum_of_sin(x):
    return np.sum(np.sin(x))


def gaussian_bump(X):
    return np.sum(np.exp(-X * X) * np.cos(X) + np.tanh(X))


def nested_calls(x):
    return np.sum(np.sin(np.cos(np.exp(x))))


def scaled_residuals(x, mu, s):
    return np.sum((x - mu) ** 2.0 / s + 0.5 * np.log(s) * x)


def relu_energy(z):
    return np.sum(z * (z > 0.0) * z + 0.1 * z)


def two_operands(a, b):
    return np.sum(np.sin(a) * b + a * np.exp(b))


def method_sum(x):
    return (np.cos(x) * x * 3.0).sum()


def mean_squared_error(y, p):
    """``(y - p) ** 2`` is ``d * d`` (SquareToMultiply): ``d`` read twice, both in the
    tree, is one node."""
    return np.mean((y - p) ** 2)


def mean_of_method_sum(x):
    return (np.cos(x) * x * 3.0).sum() + np.mean(np.sin(x) * x)


def loss_with_matmul(w, X, y):
    """A least-squares loss as written: the residual is a product's, then squared."""
    return np.sum((X @ w - y) ** 2) + 1e-2 * np.sum(np.sqrt(w * w + 1.0))


@njit
def _energy_of(state, k):
    return np.sum(k * np.cosh(state) - state * state)


def helper_with_keywords(x):
    return _energy_of(k=0.5, state=x) + np.sum(np.sin(x) * np.sin(x))


_rng = np.random.default_rng(7)
X1 = _rng.standard_normal(9)
X2 = _rng.standard_normal((4, 3))
X3 = _rng.standard_normal((2, 3, 2))

CASES = [
    (sin_times_x, (X1,), 0),
    (gaussian_bump, (X2,), 0),
    (gaussian_bump, (X3,), 0),
    (gaussian_bump, (np.asfortranarray(X2),), 0),
    (gaussian_bump, (X2[:, ::2],), 0),
    (nested_calls, (X2,), 0),
    (scaled_residuals, (X1, 0.3, 1.7), (0, 1, 2)),
    (relu_energy, (X1,), 0),
    (two_operands, (X2, X2[::-1].copy()), (0, 1)),
    (two_operands, (X2[:, :1].copy(), X2[:1, :].copy()), (0, 1)),
    (method_sum, (X1,), 0),
    (mean_squared_error, (X2, X2[::-1].copy()), (0, 1)),
    (mean_of_method_sum, (np.asfortranarray(X2),), 0),
    (loss_with_matmul, (X1[:3].copy(), X2, X2[:, 0].copy()), 0),
    (helper_with_keywords, (X1,), 0),
]
IDS = ["sin_times_x", "2d", "3d", "fortran", "strided_view",
       "nested_calls", "numbers", "comparison", "two_operands", "broadcast_length_one",
       "method_sum", "mean_squared_error", "mean_and_method_sum",
       "loss_with_matmul", "helper_with_keywords"]


@pytest.mark.parametrize("f, args, argnums", CASES, ids=IDS)
def test_fused_sums_in_every_mode(f, args, argnums):
    assert _fused(f, *args) >= 1
    check_grad(f, *args, argnums=argnums)
    check_jvp(f, *args)
    check_hvp(f, *args, argnums=argnums)
    value, _ = adjit.value_and_grad(f, argnums=argnums)(*args)
    assert value == njit(f)(*args)  # the same additions in the same order


def test_a_lower_rank_operand_is_computed_before_the_loop():
    """``X * v`` (v broadcast along rows) is not fused itself; it is an operand."""
    def rows(X, v):
        return np.sum(np.sin(X * v) * X)
    X, v = X2, X2[0].copy()
    assert _fused(rows, X, v) == 1
    check_grad(rows, X, v, argnums=(0, 1))
    check_hvp(rows, X, v, argnums=(0, 1))


def test_the_mean_of_no_elements_is_nan_as_numbas():
    empty = np.zeros((0, 3))
    value, g = adjit.value_and_grad(mean_squared_error, argnums=(0, 1))(empty, empty)
    assert np.isnan(value) and np.isnan(njit(mean_squared_error)(empty, empty))
    assert g[0].shape == (0, 3) and g[1].shape == (0, 3)


def test_shapes_that_do_not_broadcast_raise_value_error():
    with pytest.raises(ValueError):
        njit(two_operands)(X1, X1[:4].copy())
    with pytest.raises(ValueError):
        adjit.grad(two_operands)(X1, X1[:4].copy())


def test_division_by_zero_gives_inf_as_the_arrays_do():
    def ratio(x, y):
        return np.sum(x / y + x)
    x, y = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    value, g = adjit.value_and_grad(ratio)(x, y)
    assert value == np.inf and g[1] == 2.0 and np.isinf(g[0])


def copied_then_written(x):
    y = x.copy()
    t = np.sin(y) * y
    y[0] = 0.0          # after t was computed: t must keep the old y[0]
    return np.sum(t * 2.0 + y)


def written_by_a_ufunc_between(x):
    y = x.copy()
    t = np.cos(y) * y
    np.sin(x, y)        # writes y (its out argument) after t was computed
    return np.sum(t * 2.0 + y)


def reused_temporary(x):
    t = np.sin(x) * x
    return np.sum(t * x) + t[0]


def integer_power(x):
    return np.sum(np.sin(x) ** 3)


def float32_operand(x, w):
    return np.sum(np.sin(x) * w)


@pytest.mark.parametrize("f, args, fused", [
    (copied_then_written, (X1,), 1),
    (written_by_a_ufunc_between, (X1,), 1),
    (reused_temporary, (X1,), 0),
    (sum_of_sin, (X2,), 0),
    (integer_power, (X1,), 0),
    (float32_operand, (X1, X1.astype(np.float32)), 0),
], ids=["written_between", "written_by_a_ufunc", "reused_temporary", "one_operation",
        "integer_power", "float32_operand"])
def test_trees_left_alone_or_cut(f, args, fused):
    """A write between the tree and the sum cuts the tree: ``t``, made before the write,
    is a fused map, and the sum of ``t * 2.0 + y`` reads it as an operand (a second
    round of the passes). A temporary also read outside the tree (leaving one operation,
    ``t * x``), a single operation (its rule's gradient is one loop already), an integer
    power (a number's multiplies, an array's calls pow) and a float32 operand stay as
    written. Their derivatives and values are right."""
    assert _fused(f, *args) == fused
    value = adjit.value_and_grad(f)(*args)[0]
    if fused:  # the fused sum adds as np.sum does (the array rules' ** 3 may round apart)
        assert value == njit(f)(*args)
    assert value == pytest.approx(njit(f)(*args), rel=1e-14)
    check_grad(f, *args)
    check_hvp(f, *args)


_hvp_of_sin_times_x = adjit.hvp(sin_times_x)


def test_a_third_derivative_of_a_fused_sum():
    """jvp over hvp: the fused loop is scalar code, which forward mode derives again.
    d/dt sum(H(x + t) 1) = sum(-3 sin x - x cos x)."""
    ones = np.ones_like(X1)
    outer = njit(lambda x, v: np.sum(_hvp_of_sin_times_x(x, v)))
    _, third = adjit.jvp(outer)(X1, ones, ones, np.zeros_like(X1))
    np.testing.assert_allclose(third, np.sum(-3.0 * np.sin(X1) - X1 * np.cos(X1)),
                               rtol=1e-12)


_grad_of_bump = adjit.grad(gaussian_bump)


@njit
def _gradients(X, n):
    total = 0.0
    for _ in range(n):
        total += _grad_of_bump(X)[0, 0]
    return total


def test_a_fused_gradient_allocates_only_its_result_in_a_compiled_loop():
    """Three elementwise temporaries and their adjoints were arrays; fused, a gradient
    allocates the gradient it returns and nothing else (50 more calls: 50 more
    allocations)."""
    assert allocations_per_call(_gradients, X2) == 1


def test_adjit_fuse_sums_0_leaves_sums_to_the_array_rules(monkeypatch):
    from adjit import config

    def bump(X):  # (a function of its own: captures are cached per function)
        return np.sum(np.exp(-X * X) * np.cos(X))
    monkeypatch.setattr(config, "FUSE_SUMS", False)
    assert _fused(bump, X2) == 0
    check_grad(bump, X2)
