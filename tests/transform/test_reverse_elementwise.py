"""Reverse mode through elementwise array operations: ufuncs with a scalar rule, array
arithmetic, a scalar operand, and chains whose values the reverse pass recomputes."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad

X1 = np.linspace(0.1, 0.9, 10)
Y1 = np.linspace(1.0, 2.0, 10)
X2 = np.linspace(0.1, 0.9, 100).reshape(10, 10)


def sum_sin(x):
    return np.sum(np.sin(x))


def chain(x):
    return np.sum(np.sin(np.cos(np.exp(x))))


def squares(x, y):
    return np.sum((x * y - 2.0) ** 2)


def scaled(x, s):
    return np.sum(s * x) + np.sum(x / s) - np.sum(-x)


def dot_exp(x, y):
    return np.dot(np.exp(x), y)


def loop_over_sin(x):
    z = np.sin(x)
    s = 0.0
    for i in range(z.shape[0]):
        s += z[i] * z[i]
    return s


def in_loop(x):
    s = 0.0
    for k in range(3):
        z = np.tanh(x * (k + 1.0))
        s += np.sum(z * np.sqrt(x))
    return s


@pytest.mark.parametrize("x", [X1, X2], ids=["1d", "2d"])
def test_sum_sin(x):
    check_grad(sum_sin, x)


def test_chain_2d():
    check_grad(chain, X2)


def test_binary_ops_and_power():
    check_grad(squares, X1, Y1, argnums=(0, 1))


def test_scalar_operand_takes_the_sum():
    check_grad(scaled, X1, 1.5, argnums=(0, 1))
    check_grad(scaled, X2, 0.7, argnums=(0, 1))


def test_dot_reads_recomputed_exp():
    check_grad(dot_exp, X1, Y1, argnums=(0, 1))


def test_element_reads_of_a_ufunc_result():
    check_grad(loop_over_sin, X1)


def test_elementwise_result_allocated_in_a_loop():
    check_grad(in_loop, X1)


def written_then_read(x):
    z = np.exp(x)
    z[0] = 0.0
    return np.dot(z, x)


def broadcast(x, r):
    return np.sum(x + r)


def test_written_result_is_saved_as_a_copy():
    """A ufunc result written after it was made cannot be recomputed: the record keeps a
    copy of it, taken where the reverse pass reads it."""
    check_grad(written_then_read, X1)


def test_broadcasting_different_ranks():
    check_grad(broadcast, X2, X2[0].copy(), argnums=(0, 1))


def test_broadcasting_a_length_one_axis():
    check_grad(broadcast, X2, X2[:1].copy(), argnums=(0, 1))


def test_shapes_that_do_not_broadcast_raise_at_run_time():
    with pytest.raises(ValueError):
        adjit.grad(broadcast, (0, 1))(X2, X2[:, :1].T.copy()[:, :2])


def sine_residual(y, m):
    return np.sum(np.sin(y - m))


def test_a_result_read_only_for_its_shape_is_not_computed_by_the_gradient(monkeypatch):
    """``np.sin(y - m)`` takes its shape from ``y - m``, which the reverse pass reads
    anyway, so the gradient's forward sweep computes neither the sine nor the sum (it
    computed the sine only for its shape). (Through the array rules: fused, the sum is
    one loop, ``capture/fused_sums.py``.)"""
    from numba.core import types
    from adjit import config
    monkeypatch.setattr(config, "FUSE_SUMS", False)
    from adjit.ir.dead_code import discard_result
    from adjit.transform.reverse.forward_pass import build_forward
    from adjit.transform.reverse.program import derive
    y, m = X2, np.cos(X2)
    check_grad(sine_residual, y, m)
    gy, gm = adjit.grad(sine_residual, (0, 1))(y, m)
    np.testing.assert_allclose(gy, np.cos(y - m), rtol=1e-14)
    np.testing.assert_allclose(gm, -np.cos(y - m), rtol=1e-14)
    arr = types.float64[:, ::1]
    ctx, rev = derive(sine_residual, (arr, arr), (0, 1)).analysis()
    ops = [stmt.value.op + getattr(stmt.value._kws.get("fn"), "__name__", "")
           for block in discard_result(build_forward(ctx, rev)).values()
           for stmt in block.body if hasattr(stmt, "value") and hasattr(stmt.value, "op")]
    assert ops.count("call") == 1 and "binopsub" in ops, ops  # the tape push only


def _remainders(x):
    """``%`` and ``//`` on float arrays (and a scalar over an array, a broadcast one)."""
    return (np.sum((x * 2.0) % 0.7 * x) + np.sum(1.3 % (x + 2.0))
            + np.sum(np.outer(x, x) % x) + np.sum((x * 3.0) // 0.5 * x))


def test_remainder_and_floor_division_operators_on_arrays_in_every_mode():
    """``x % c`` and ``x // c`` on arrays are elementwise like ``np.mod`` (reverse mode
    refused them as an array it could not account for; forward mode took them)."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.95, -0.65, 1.25])
    check_grad(_remainders, x)
    check_jvp(_remainders, x)
    check_hvp(_remainders, x)
    # d/dx of (3x // 0.5) x is floor(6x): 5, -4, 7, beside the remainders' 5.5, 1.9, 6
    np.testing.assert_allclose(adjit.grad(_remainders)(x), [10.5, -2.1, 13.0], rtol=1e-12)
