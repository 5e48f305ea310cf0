"""One array's memory passed twice to a helper that writes into it (``fill(y, y)``,
``step(H[t], H[t + 1])``, ``drift(S[:, 0], S[:, 1])``): reverse mode differentiates views
that are separate memory (rows at different offsets, columns) and refuses the others by
name, since a derived reverse assumes separate arrays; forward mode passes one tangent
twice and is right."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _fill_from_first(out, arr):
    for j in range(arr.shape[0]):
        out[j] = math.sin(arr[0])


def same_array_twice(x):
    y = x * x
    _fill_from_first(y, y)  # reads arr[0] after writing out[0]: the same memory
    return np.sum(y * x)


def test_one_array_passed_twice_to_a_helper_that_writes_it_is_refused():
    # the derived reverse assumed separate arrays (found by the fuzzer, seed 60606 #63:
    # d/da0 -0.1360 against -0.1349); forward mode passes one tangent twice and is right
    x = np.array([0.3, -0.7, 0.5])
    with pytest.raises(adjit.UnsupportedError, match="the same array's memory"):
        adjit.grad(same_array_twice)(x)
    check_jvp(same_array_twice, x)


def _same_row_twice(x):
    H = np.zeros((3, x.shape[0]))
    H[0] = x
    t = 1
    _fill_from_first(H[t], H[t + 0])  # one row: the same memory, though written apart
    return np.sum(H * H)


def _iterated_row_and_a_row(x):
    H = np.zeros((3, x.shape[0]))
    H[0] = x
    for row in H[:2]:
        _fill_from_first(H[2], row)
    return np.sum(H * H)


def test_the_same_row_twice_is_still_refused():
    """``step(H[t], H[t + 1])`` (rows at different offsets) is accepted; ``H[t]`` and
    ``H[t + 0]`` are one row and stay refused, and so does a row of an iteration beside
    a row (an internal error once: the iteration's row view needs a location)."""
    for f in (_same_row_twice, _iterated_row_and_a_row):
        with pytest.raises(adjit.UnsupportedError, match="the same array's memory"):
            adjit.grad(f)(np.array([0.3, -0.7, 0.5]))


@numba.njit
def _drift(q, p, dt):
    for i in range(q.shape[0]):
        q[i] += dt * p[i] * p[i]


def _drift_columns(S0, dt):
    S = S0.copy()  # column 0 = positions, column 1 = momenta
    _drift(S[:, 0], S[:, 1], dt)
    return np.sum(S[:, 0] ** 2) + np.sum(S * S0)


def _drift_one_column_twice(S0, dt):
    S = S0.copy()
    _drift(S[:, 0], S[:, 0], dt)
    return np.sum(S * S)


def _drift_first_and_last_columns(S0, dt):
    S = S0.copy()
    _drift(S[:, 0], S[:, -1], dt)  # one column when S has one
    return np.sum(S * S)


def test_two_columns_of_one_array_passed_to_a_helper_that_writes_one():
    """``S[:, 0]`` and ``S[:, 1]`` are separate memory, as rows at different offsets are:
    differentiated in every mode. One column twice, or columns 0 and -1, stay refused,
    and the message shows the indices as written."""
    S0 = np.arange(6.0).reshape(3, 2) / 5.0
    check_grad(_drift_columns, S0, 0.1)
    check_jvp(_drift_columns, S0, 0.1)
    check_hvp(_drift_columns, S0, 0.1)
    with pytest.raises(adjit.UnsupportedError, match=r"'S\[:, 0\]' and 'S\[:, 0\]', the same"):
        adjit.grad(_drift_one_column_twice)(S0, 0.1)
    with pytest.raises(adjit.UnsupportedError, match=r"'S\[:, 0\]' and 'S\[:, -1\]'"):
        adjit.grad(_drift_first_and_last_columns)(S0, 0.1)


@numba.njit
def _rate_into(y, out, k=1.0):
    for i in range(y.size):
        out[i] = -k * y[i] ** 2


def _halves_of_a_state(y0, k):
    # the state vector's first half read, its second half written: y[:n] and y[n:]
    n = y0.size
    state = np.zeros(2 * n)
    state[:n] = y0
    for _ in range(3):
        _rate_into(state[:n], out=state[n:], k=k)
        state[:n] += 0.1 * state[n:]
    return np.sum(state * state)


_HALF = 3


def _halves_by_a_module_constant(y0, k):
    state = np.zeros(2 * _HALF)
    state[:_HALF] = y0
    _rate_into(state[:_HALF], state[_HALF:], k)
    _rate_into(state[len(y0):], state[:len(y0)], k)  # and by len() written twice
    return np.sum(state * state * state)


def _overlapping_slices(y0, k):
    # y[:n] and y[n - 1:] share an element
    n = y0.size
    state = np.zeros(2 * n)
    state[:n] = y0
    _rate_into(state[:n], state[n - 1:-1], k)
    return np.sum(state * state)


def test_complementary_slices_of_one_array_are_separate_memory():
    """``rhs(state[:n], out=state[n:])`` reads one half and writes the other: refused in
    grad and hvp as the same array's memory. Slices that overlap stay refused."""
    y0 = np.array([0.3, 1.2, -0.5])
    check_grad(_halves_of_a_state, y0, 0.7, argnums=(0, 1))
    check_jvp(_halves_of_a_state, y0, 0.7)
    check_hvp(_halves_of_a_state, y0, 0.7, argnums=(0, 1))
    check_grad(_halves_by_a_module_constant, y0, 0.7, argnums=(0, 1))
    check_hvp(_halves_by_a_module_constant, y0, 0.7, argnums=(0, 1))
    with pytest.raises(adjit.UnsupportedError, match="the same array's memory"):
        adjit.grad(_overlapping_slices)(y0, 0.7)


@numba.njit
def _pull_together(pi, pj, c):
    for k in range(pi.shape[0]):
        d = c * (pj[k] - pi[k])
        pi[k] += d
        pj[k] -= d


def _project_edges(x):
    p = x.reshape(3, 2).copy()
    edges = np.array([[0, 1], [1, 2]])
    for e in range(edges.shape[0]):
        _pull_together(p[edges[e, 0]], p[edges[e, 1]], 0.25)
    return np.sum(p ** 3)


def test_two_rows_a_helper_writes_both_of_are_refused_with_what_to_do():
    """Rows picked by an index array may be one row; the helper writes both, so copying
    the read one (the usual hint) does not apply: the message says to write the update
    in the function."""
    x = np.linspace(0.1, 0.6, 6)
    with pytest.raises(adjit.UnsupportedError, match=r"write the update in the function itself"):
        adjit.grad(_project_edges)(x)
    check_jvp(_project_edges, x)
