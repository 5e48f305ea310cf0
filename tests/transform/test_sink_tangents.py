"""Forward mode computes array tangents late (``transform/sink_tangents.py``) and drops
the tangents nothing reads, so a primal temporary is freed before its tangent is
allocated. The order must never move a tangent past a write to what it reads."""
import io

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _kron_sum(a, b):
    return np.sum(np.kron(a, b))


def _program_lines(func, *args):
    """The generated program's statements, as ``adjit.show`` prints them."""
    return [line.strip() for line in adjit.show(func, *args, file=io.StringIO()).splitlines()
            if " = " in line]


def _call_of(lines, function):
    """The index of the statement calling the global ``function``, and its target."""
    name = next(line.split(" = ")[0] for line in lines if f"global({function}:" in line)
    index = next(i for i, line in enumerate(lines) if f"call {name}(" in line)
    return index, lines[index].split(" = ")[0]


_A = np.random.default_rng(0).standard_normal((3, 2))
_B = np.random.default_rng(1).standard_normal((2, 4))


def test_the_kron_tangent_is_computed_after_the_product_is_summed():
    # the 5 MB product of the benchmark was alive while its tangent was allocated:
    # glibc returned both to the kernel on every call (jvp 7.7 primal calls, now 1.9)
    lines = _program_lines(adjit.jvp(_kron_sum), _A, _B)
    summed, _ = _call_of(lines, "sum")
    _, product = _call_of(lines, "kron")
    assert _call_of(lines, "bilinear_tangent")[0] > summed
    # np.sum's tangent reads only its argument's tangent, not the product
    _, reduction = _call_of(lines, "tangent")
    reduction = next(line for line in lines if line.startswith(reduction + " = "))
    assert f"{product}," not in reduction and f"{product})" not in reduction


def test_hvp_computes_no_tangent_of_a_product_it_only_takes_the_shape_of():
    lines = _program_lines(adjit.jvp(adjit.grad(_kron_sum, (0, 1))), _A, _B)
    assert not any("bilinear_tangent" in line for line in lines)
    # the product's cotangent is written with the constant seed only: it has no tangent
    # array, and each factor's update runs once for the value and once for the tangent
    # (it ran three times, the third adding a product of zeros)
    assert sum("call $kron_update_a" in line for line in lines) == 2


def test_kron_sum_derivatives_against_the_closed_form():
    # sum(kron(a, b)) = sum(a) sum(b)
    va, vb = np.ones_like(_A) * 0.5, np.arange(8.0).reshape(2, 4)
    value, tangent = adjit.jvp(_kron_sum)(_A, _B, va, vb)
    assert value == pytest.approx(_A.sum() * _B.sum())
    assert tangent == pytest.approx(va.sum() * _B.sum() + _A.sum() * vb.sum())
    ha, hb = adjit.hvp(_kron_sum, argnums=(0, 1))(_A, _B, va, vb)
    np.testing.assert_allclose(ha, np.full_like(_A, vb.sum()))
    np.testing.assert_allclose(hb, np.full_like(_B, va.sum()))
    check_grad(_kron_sum, _A, _B, argnums=(0, 1))
    check_jvp(_kron_sum, _A, _B)
    check_hvp(_kron_sum, _A, _B, argnums=(0, 1))


@numba.njit
def _overwrite(x):
    for i in range(x.shape[0]):
        x[i] = 2.0 * x[i]


@numba.njit
def _sine_then_write(x):
    """The tangent of ``np.sin(x)`` reads ``x``; the writes after it must come after it."""
    y = np.sin(x)
    z = np.exp(y)
    x[0] = 3.0 * x[1]
    _overwrite(x)
    return np.sum(z * x)


@numba.njit
def _sine_then_write_copy(x):
    return _sine_then_write(x.copy())


def test_a_tangent_does_not_move_past_writes_to_what_it_reads():
    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grad(_sine_then_write_copy, x)
    check_jvp(_sine_then_write_copy, x)
    check_hvp(_sine_then_write_copy, x)


@numba.njit
def _chain(x, w):
    """Elementwise temporaries whose tangents feed one another, and one nobody reads."""
    a = np.sin(x) * w
    b = np.cos(a) + x
    unused = np.exp(a)
    return np.sum(b * a) + unused.shape[0]


def test_chains_and_unread_tangents_keep_their_values():
    x, w = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.5, -2.0])
    check_grad(_chain, x, w, argnums=(0, 1))
    check_jvp(_chain, x, w)
    check_hvp(_chain, x, w, argnums=(0, 1))
