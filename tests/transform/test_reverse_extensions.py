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


@pytest.mark.parametrize("f, args", [
    (fancy_index, (X5, np.array([1, 2]))),
    (mask_index, (X5,)),
    (view_through_branch, (A34, 1.0)),
])
def test_copies_and_merged_views_are_refused(f, args):
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(f)(*args)


def test_fancy_index_error_names_the_indexing_line():
    with pytest.raises(adjit.UnsupportedError, match="y = x\\[idx\\]"):
        adjit.grad(fancy_index)(X5, np.array([1, 2]))
