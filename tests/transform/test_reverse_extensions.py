"""Reverse-mode extensions: views of active arrays, tuples of floats, array reductions."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad

A34 = np.random.default_rng(7).standard_normal((3, 4))
X5 = np.array([0.3, -1.2, 0.8, 2.1, -0.4])


# -- views --------------------------------------------------------------------------------

@numba.njit
def _weighted(v, w):
    s = 0.0
    for j in range(v.shape[0]):
        s += v[j] * w[j]
    return s


def rows_through_call(a, w):
    s = 0.0
    for row in a:
        s += _weighted(row, w) ** 2
    return s


def test_row_view_passed_to_derived_call():
    ga, gw = check_grad(rows_through_call, A34, A34[1], argnums=(0, 1))
    t = A34 @ A34[1]
    np.testing.assert_allclose(ga, 2 * t[:, None] * A34[1][None, :], rtol=1e-12)
    np.testing.assert_allclose(gw, 2 * A34.T @ t, rtol=1e-12)


def row_times_row(a):
    s = 0.0
    for i in range(a.shape[0] - 1):
        r, q = a[i], a[i + 1]
        s += r[0] * q[3]
    return s


def test_row_views_closed_form():
    g = adjit.grad(row_times_row)(A34)
    expected = np.zeros_like(A34)
    for i in range(A34.shape[0] - 1):
        expected[i, 0] += A34[i + 1, 3]
        expected[i + 1, 3] += A34[i, 0]
    np.testing.assert_array_equal(g, expected)


def strided_slice(x):
    y = x[::-2]
    return y[0] * y[1] * y[2]


def test_negative_step_slice():
    g = check_grad(strided_slice, X5)
    assert g[1] == 0.0 and g[3] == 0.0


def fancy_index(x, idx):
    y = x[idx]
    return y[0]


def mask_index(x):
    y = x[x > 0]
    return y[0]


def view_through_branch(a, c):
    if c > 0:
        r = a[0]
    else:
        r = a[1]
    return r[0] * r[1]


def test_integer_array_and_mask_reads_are_gathers():
    # rewritten to np.take (capture/selection.py): the adjoint goes back where it was read
    g = check_grad(fancy_index, X5, np.array([3, 1]))
    assert np.array_equal(g, np.eye(5)[3])
    g = check_grad(mask_index, X5)
    assert np.array_equal(g, np.eye(5)[int(np.argmax(X5 > 0))])


def rows_index(a, idx):
    y = a[idx, idx]  # 2-D index arrays (1-D ones, rows ``a[idx]`` and ``a[idx, 1:]`` are
    return y[0, 0]   # gathers: selection.py)


@pytest.mark.parametrize("f, args", [
    (view_through_branch, (A34, 1.0)),
    (rows_index, (A34, np.array([[1, 2]]))),
])
def test_copies_and_merged_views_are_refused(f, args):
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(f)(*args)


def test_fancy_index_error_names_the_indexing_line():
    with pytest.raises(adjit.UnsupportedError, match="y = a\\[idx, idx\\]"):
        adjit.grad(rows_index)(A34, np.array([[1, 2]]))


# -- tuples of floats ---------------------------------------------------------------------

@numba.njit
def _sincos(x):
    return math.sin(x), math.cos(x)


@numba.njit
def _halves32(x):
    return x * np.float32(0.5), np.int64(3), x * x


def unpack_sincos(x):
    s, c = _sincos(x)
    return s * c + s


def test_call_returning_tuple_closed_form():
    x = 0.6
    expected = math.cos(2 * x) + math.cos(x)
    assert adjit.grad(unpack_sincos)(x) == pytest.approx(expected, rel=1e-14)


def float32_items(x):
    a, n, b = _halves32(x)
    return a * b + a * np.float32(n)


def test_float32_tuple_items_stay_float32():
    x = np.float32(0.75)
    g = adjit.grad(float32_items)(x)
    expected = 1.5 * x * x + 1.5          # d/dx (0.5 x^3 + 1.5 x)
    assert g == pytest.approx(expected, rel=1e-6)


def two_outputs(x, y):
    return x * y, math.sin(x) + y


def test_vjp_of_tuple_output_takes_tuple_cotangent():
    value, (xbar, ybar) = adjit.vjp(two_outputs)(0.5, 2.0, (1.0, 10.0))
    assert value == pytest.approx((1.0, math.sin(0.5) + 2.0))
    assert xbar == pytest.approx(2.0 + 10.0 * math.cos(0.5))
    assert ybar == pytest.approx(0.5 + 10.0)


@numba.njit
def _tuple_arg_returns_tuple(t, c):
    return t[1] * c, t[0] * t[1]


def nested_tuple_calls(x, c):
    t = (x, 2.0 * x)
    for _ in range(3):
        t = _tuple_arg_returns_tuple(t, c)
    return t[0] + t[1]


def test_tuple_arguments_and_results_of_calls():
    check_grad(nested_tuple_calls, 0.4, 1.2, argnums=(0, 1))


def tuple_variable_index(x):
    t = (x, 2 * x)
    s = 0.0
    for i in range(2):
        s += t[i]
    return s


def tuple_iteration(x):
    s = 0.0
    for v in (x, 2 * x):
        s += v
    return s


@numba.njit
def _first(t):
    return t[0][0]


def tuple_of_arrays_to_call(x):
    return _first((x, x))


def max_of_tuple(x, y):
    return max((x, y))


@pytest.mark.parametrize("f, args", [
    (max_of_tuple, (0.5, 0.7)),
])
def test_unsupported_tuple_uses_are_refused(f, args):
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(f)(*args)


@pytest.mark.parametrize("f", [tuple_variable_index, tuple_iteration])
def test_tuple_of_floats_read_at_a_variable_index(f):
    """Refused in reverse mode once; each item's adjoint now takes its share."""
    assert adjit.grad(f)(0.5) == 3.0
    assert adjit.hvp(f)(0.5, 1.0) == 0.0


def test_tuple_of_arrays_passed_to_a_call():
    g = adjit.grad(tuple_of_arrays_to_call)(X5)
    np.testing.assert_array_equal(g, np.eye(X5.shape[0])[0])  # d t[0][0] / dx


def test_hvp_through_tuple_call():
    hv = adjit.hvp(unpack_sincos)(0.6, 1.0)
    assert hv == pytest.approx(-2 * math.sin(1.2) - math.sin(0.6), rel=1e-12)


def unpack_array(x):
    a, b, c = x
    return a * b + math.sin(c)


def unpack_rows(a):
    r, s, t = a
    return r[0] * s[1]


def test_unpacking_an_array():
    x = np.array([0.5, -1.5, 0.25])
    g = check_grad(unpack_array, x)
    np.testing.assert_allclose(g, [x[1], x[0], math.cos(x[2])], rtol=1e-15)
    # rows unpacked are row views (they were refused)
    a = A34[:3].copy()
    g = check_grad(unpack_rows, a)
    want = np.zeros_like(a)
    want[0, 0], want[1, 1] = a[1, 1], a[0, 0]
    np.testing.assert_allclose(g, want, rtol=1e-15)


def through_complex(x):
    z = x * 1j + 1.0
    return abs(z)


def test_complex_intermediates_are_refused():
    # complex values carry no adjoint: the result would silently lose x's derivative
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(through_complex)(0.5)


@numba.njit
def _ruled_twice(x):
    return 2.0 * x


def use_ruled_twice(x):
    return _ruled_twice(x) * x


def test_registered_rule_wins_over_deriving_an_njit_callee():
    from adjit.rules.core import defderiv
    from adjit.rules.primitive import PRIMITIVES
    defderiv(_ruled_twice, lambda x: 5.0)       # deliberately not 2: proves the rule is used
    try:
        assert adjit.grad(use_ruled_twice)(1.5) == pytest.approx(5.0 * 1.5 + 3.0)
    finally:
        PRIMITIVES.remove(_ruled_twice, "scalar")
