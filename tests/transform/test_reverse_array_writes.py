"""Reverse mode over array writes and arrays allocated in the function (DESIGN §3 "Adjoint
storage"): element writes transfer the shadow to the written value and restore the
overwritten primal value; anything the reverse pass could not undo is refused."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp

X6 = np.array([0.4, -0.3, 1.1, 0.9, -1.4, 0.2])
A23 = np.array([[0.5, -0.2, 1.1], [0.3, 0.9, -0.7]])


def write_into_argument(x):
    x[0] = x[0] * 2.0
    x[1] = x[1] + x[0]
    return x[0] * x[1] + x[2]


def scaled_tail(x):
    y = x.copy()
    y[1:] *= 2.0
    y[::2] += x[1::2]
    return np.sum(y)


def test_augmented_assignment_into_a_slice_closed_form():
    # y[1:] *= 2 updates the view, then Python stores it back into y[1:]: that store must
    # not clear the adjoint the view just received (it gave [1, 0, 0, 0] once)
    x = np.array([0.3, -0.7, 0.5, 0.9])
    np.testing.assert_allclose(adjit.grad(scaled_tail)(x), [1.0, 3.0, 2.0, 3.0], rtol=0)
    np.testing.assert_allclose(adjit.jvp(scaled_tail)(x, np.ones(4))[1], 9.0, rtol=1e-15)


def written_at_repeated_indices(x, idx):
    y = np.zeros_like(x)
    y[idx] = x[0] * x[1]
    return np.sum(y)


def test_a_repeated_index_takes_one_adjoint():
    # y[[0, 2, 0]] = x0 x1 writes two positions: the sum is 2 x0 x1 (it gave 3 x0 x1)
    x, idx = np.array([0.3, -0.7, 0.5]), np.array([0, 2, 0])
    np.testing.assert_allclose(adjit.grad(written_at_repeated_indices)(x, idx),
                               [2 * x[1], 2 * x[0], 0.0], rtol=1e-15)


def running_update(x):
    y = x.copy()
    y[1:] += y[:-1]
    return np.sum(y * x)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_in_place_update_from_an_overlapping_view_is_refused(mode):
    # Numba computes y[1:] += y[:-1] element by element (a running sum), NumPy from the
    # old values: adjit's rewrite followed NumPy, so jvp's value differed from the primal
    x = np.array([0.3, -0.7, 0.5])
    with pytest.raises(adjit.UnsupportedError, match="another view of the same array"):
        adjit.grad(running_update)(x) if mode == "grad" else adjit.jvp(running_update)(x, x)


def row_operations(A0, i, j):
    """Hand-written elimination: one row (column) updated from another, constant or not."""
    A = A0.copy()
    A[1, :] -= A[0, :]
    A[:, 2] += 0.5 * A[:, 0]
    A[i, :] -= A[j, :]
    return np.sum(A ** 3)


def shifted_within_a_row(A0):
    A = A0.copy()
    A[1, 1:] -= A[1, :-1]
    return np.sum(A ** 2)


@pytest.mark.parametrize("rows", [(2, 0), (1, 1)])
def test_in_place_updates_between_whole_rows_or_columns(rows):
    # A[1, :] -= A[0, :] was refused as an overlapping view, though whole rows are the
    # same elements or disjoint ones (Numba's result is NumPy's)
    A = np.array([[0.5, -0.2, 1.1], [0.3, 0.9, -0.7], [1.2, -0.4, 0.6]])
    check_grad(row_operations, A, *rows)
    check_jvp(row_operations, A, *rows)
    check_hvp(row_operations, A, *rows)


def test_a_shifted_update_within_one_row_stays_refused():
    with pytest.raises(adjit.UnsupportedError, match="another view of the same array"):
        adjit.grad(shifted_within_a_row)(np.eye(3))


@numba.njit
def _tail(y):
    return y[1:]


def writes_through_a_returned_view(x):
    y = x.copy()
    t = _tail(y)
    t *= 2.0
    return np.sum(y * x)


def reads_a_returned_view(x):
    y = x * x
    return np.sum(_tail(y) * x[:-1])


def test_writing_into_a_view_a_helper_returned_is_refused():
    # the returned view was treated as a new array: the write's adjoint never reached y
    x = np.array([0.3, -0.7, 0.5, 0.9])
    with pytest.raises(adjit.UnsupportedError, match="a view of an argument that '_tail"):
        adjit.grad(writes_through_a_returned_view)(x)
    check_grad(reads_a_returned_view, x)  # reading it is fine
    from adjit.testing import check_jvp
    check_jvp(writes_through_a_returned_view, x)  # forward mode follows the view


def parent_written_after_returned_view(x):
    y = x.copy()
    t = _tail(y)
    y *= 2.0          # changes t's values too
    return np.sum(t * t)


def argument_written_after_returned_view(x):
    t = _tail(x)
    x[2] = 3.0 * x[2]
    return np.sum(t * t)


@pytest.mark.parametrize("f", [parent_written_after_returned_view,
                               argument_written_after_returned_view])
def test_writing_into_the_parent_of_a_view_a_helper_returned_is_refused(f):
    # grad was [0, 8, 12, 16] for the first (want [0, 16, 24, 32]): the view's shadow
    # was its own, so the write's effect on its values was lost; forward mode is right
    x = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(adjit.UnsupportedError, match="while '_tail\\(...\\)' returns a view"):
        adjit.grad(f)(x.copy())
    with pytest.raises(adjit.UnsupportedError, match="returns a view"):
        adjit.hvp(f)(x.copy(), x.copy())
    from adjit.testing import check_jvp
    check_jvp(f, x)


@numba.njit
def _rk_step(t, y, k):
    k[0] = y[0] * 2.0  # a scratch buffer
    return t + 1.0, y * k[0] + np.sin(y)


@numba.njit
def _integrate(t, y, k, steps):
    while t < steps:
        t, y = _rk_step(t, y, k)
    return t, y  # the argument y itself when the loop takes no step


def fixed_step_integration(y0, steps):
    k = np.zeros(3)
    t, y = _integrate(0.0, y0, k, steps)
    return np.sum(y ** 2) + k[0]


def integration_then_argument_written(y0, steps):
    k = np.zeros(3)
    t, y = _integrate(0.0, y0, k, steps)
    y0[0] = 5.0 * y0[0]  # y is y0 itself when no step was taken
    return np.sum(y ** 2)


@pytest.mark.parametrize("steps", [2, 0])
def test_a_helper_that_may_return_its_argument_beside_a_scratch_array(steps):
    """The helper's result is a new array or, with no step taken, its argument y: it
    may share y's memory, not the scratch array k's, so writing k is fine (it was
    refused); writing y0 afterwards is refused, saying why."""
    from adjit.testing import check_hvp, check_jvp
    y0 = np.array([0.3, 0.5, 0.2])
    for check in (check_grad, check_jvp, check_hvp):
        check(fixed_step_integration, y0.copy(), steps)
    if steps == 0:
        np.testing.assert_allclose(adjit.grad(fixed_step_integration)(y0.copy(), 0), 2 * y0,
                                   rtol=1e-15)
    with pytest.raises(adjit.UnsupportedError,
                       match="may share memory with its arguments") as err:
        adjit.grad(integration_then_argument_written)(y0.copy(), steps)
    assert "a loop that ran no steps" in str(err.value)


def test_write_into_argument_closed_form_and_restored():
    x = X6.copy()
    g = check_grad(write_into_argument, x)       # also checks x is unchanged
    x0, x1, x2 = X6[:3]
    # y = 2 x0 (x1 + 2 x0) + x2
    np.testing.assert_allclose(g[:3], [2 * x1 + 8 * x0, 2 * x0, 1.0], rtol=1e-15)
    assert not g[3:].any()


def prefix_sum_in_place(x):
    for i in range(1, len(x)):
        x[i] = x[i - 1] + x[i]
    return x[-1] * x[2] + np.dot(x, x)


def local_then_reduce(x):
    y = np.empty_like(x)
    for i in range(len(x)):
        y[i] = x[i] ** 3
    return np.sum(y) + y.mean()


def write_through_view(a):
    row = a[1]
    row[2] = row[0] * row[1]
    return np.sum(a[1]) * a[0, 0]


def local_2d_with_views(a):
    y = np.zeros((a.shape[0], a.shape[1]))
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            y[i, j] = math.sin(a[i, j]) * (i + j)
    s = 0.0
    for row in y:
        s += row[0] * row[-1]
    return s + np.sum(y) + np.mean(y[1])


@numba.njit
def _scale_in_place(v, c):
    for i in range(len(v)):
        v[i] *= c


def callee_writes_argument(x, c):
    _scale_in_place(x, c)
    return x[0] * x[1] + x[2]


def float32_local(x):
    y = np.zeros(x.shape[0], np.float32)
    for i in range(len(x)):
        y[i] = x[i] * x[i]
    return y[0] * y[1] + y[2]


@pytest.mark.parametrize("f, args, argnums", [
    (prefix_sum_in_place, (X6,), 0),
    (local_then_reduce, (X6,), 0),
    (write_through_view, (A23,), 0),
    (local_2d_with_views, (A23,), 0),
    (callee_writes_argument, (X6, 1.3), (0, 1)),
    (float32_local, (X6.astype(np.float32),), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_match_finite_differences(f, args, argnums):
    check_grad(f, *[a.copy() if isinstance(a, np.ndarray) else a for a in args],
               argnums=argnums)


def allocated_in_loop(x):
    # a new array per iteration, of a changing shape: each gets a fresh shadow
    s = 0.0
    for k in range(3):
        y = np.zeros(len(x) - k)
        for i in range(len(y)):
            y[i] = x[i + k] * (k + 1)
        for i in range(len(y)):
            s += y[i] * y[0]
    return s


def allocated_in_branch(x, c):
    if c > 0:
        y = np.empty_like(x)
        for i in range(len(x)):
            y[i] = math.sin(x[i])
        return np.sum(y) * y[1]
    return x[0]


def scratch_row_per_sample(a, w):
    s = 0.0
    for row in a:
        h = np.empty(2)
        for j in range(2):
            h[j] = math.tanh(row[j] * w[j] + row[j + 1])
        s += np.sum(h) ** 2
    return s


@pytest.mark.parametrize("f, args, argnums", [
    (allocated_in_loop, (X6,), 0),
    (allocated_in_branch, (X6, 1.0), 0),
    (allocated_in_branch, (X6, -1.0), 0),
    (scratch_row_per_sample, (A23, np.array([0.3, -0.2])), (0, 1)),
], ids=["loop", "branch-taken", "branch-not-taken", "per-sample"])
def test_arrays_allocated_in_loops_and_branches(f, args, argnums):
    check_grad(f, *args, argnums=argnums)


def test_allocated_in_loop_closed_form():
    # s = sum_k (k+1)^2 x_k sum_{i>=k} x_i
    g = adjit.grad(allocated_in_loop)(X6)
    expected = np.zeros(6)
    for k in range(3):
        w = (k + 1) ** 2
        expected[k] += w * X6[k:].sum()
        expected[k:] += w * X6[k]
    np.testing.assert_allclose(g, expected, rtol=1e-14)


def returns_local_array(x):
    y = np.zeros(3)
    y[0] = x[0] * x[1]
    y[2] = math.sin(x[2])
    return y


def test_vjp_of_a_returned_local_array():
    x = X6[:3].copy()
    y, (xbar,) = adjit.vjp(returns_local_array)(x, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(y, [x[0] * x[1], 0.0, math.sin(x[2])])
    np.testing.assert_allclose(xbar, [x[1], x[0], 3 * math.cos(x[2])], rtol=1e-15)


def returns_argument(x):
    x[1] = x[0] * 3.0
    return x


def test_vjp_of_a_returned_argument():
    x = X6[:3].copy()
    _, (xbar,) = adjit.vjp(returns_argument)(x, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(xbar, [1.0 + 6.0, 0.0, 3.0])


# -- the reverse pass needs old contents of arrays it cannot restore: refused or saved ----

@numba.njit
def _fill(b, v):
    for i in range(len(b)):
        b[i] = v


def overwritten_by_call(x, buf):
    _fill(buf, 1.0)
    a = buf[0] * x          # saved as a scalar: buf changes again before the reverse pass
    _fill(buf, 5.0)
    return a * buf[0]


def overwritten_by_slice(x, buf):
    buf[:] = 2.0
    a = buf[1] * x
    buf[:] = 7.0
    return a + buf[1]


@numba.njit
def _set_and_double(buf, x):
    buf[0] = 3.0
    return x * 2.0


def overwritten_by_derived_call(x, buf):
    a = buf[0] * x          # read before the callee overwrites buf[0]
    n = _set_and_double(buf, x)
    return a * n


@numba.njit
def _set_and_count(buf, x):
    buf[0] = 3.0
    return 1


def overwritten_by_primal_only_call(x, buf):
    a = buf[0] * x
    n = _set_and_count(buf, 1.0)
    return a * n


def test_element_reads_of_arrays_modified_later_are_saved():
    assert adjit.grad(overwritten_by_call)(0.7, np.zeros(2)) == 5.0
    assert adjit.grad(overwritten_by_slice)(0.7, np.zeros(2)) == 2.0
    # f = 2 buf0 x^2 with buf0 = 2 before the call
    gx, gbuf = adjit.grad(overwritten_by_derived_call, argnums=(0, 1))(0.5, np.array([2.0]))
    assert gx == pytest.approx(4.0) and gbuf == pytest.approx([0.5])
    assert adjit.grad(overwritten_by_primal_only_call)(0.5, np.array([2.0])) == 2.0


def whole_array_read_after_call(x, buf, w):
    _fill(buf, 2.0)
    s = np.dot(buf, w) * x
    _fill(buf, 3.0)
    return s


def local_array_to_callee(x):
    y = np.zeros(3)
    _fill(y, x[0])
    return y[1]


def local_array_values_in_rule(x, w):
    y = np.empty_like(x)
    for i in range(len(x)):
        y[i] = x[i] * 2
    return np.dot(y, w)


def broadcast_into_selection(x):
    y = np.zeros((2, 3))
    y[:, :] = x  # a 1-D array written into a 2-D selection
    return y[1, 2]


def slice_write_of_active_values(x):
    y = np.zeros(4)
    y[1:3] = x[:2]
    return y[1]


def in_place_array_operator(x):
    x *= 2.0
    return x[0]


def test_array_read_between_two_calls_that_fill_it():
    """``buf`` is read by ``np.dot`` between two fills: the record keeps a snapshot taken
    before the second fill. (The second fill, a call with no differentiated input, is not
    undone: ``buf`` ends as the primal leaves it.)"""
    from adjit.testing import numerical_grad
    args = (0.5, np.zeros(3), np.array([1.0, 2.0, -0.5]))
    got = adjit.grad(whole_array_read_after_call, (0, 2))(*args)
    want = numerical_grad(whole_array_read_after_call, *args, argnums=(0, 2))
    assert np.allclose(got[0], want[0], rtol=1e-7) and np.allclose(got[1], want[1], rtol=1e-7)
    assert got[0] == pytest.approx(2.0 * 2.5) and np.allclose(got[1], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("f, args, argnums", [
    (local_array_to_callee, (X6,), 0),
    (local_array_values_in_rule, (X6, X6), (0, 1)),
    (slice_write_of_active_values, (X6,), 0),
    (in_place_array_operator, (X6.copy(),), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_arrays_saved_for_the_reverse_pass(f, args, argnums):
    """Arrays the reverse pass reads after they were written (or that live only in the
    function) are kept on the tape: by reference, as a copy, or as a snapshot taken just
    before a later write in the same block."""
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f, args, argnums", [
    (broadcast_into_selection, (np.array([0.5, 0.2, 0.1]),), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_unsupported_writes_are_refused(f, args, argnums):
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(f, argnums=argnums)(*args)


def test_hvp_through_array_writes():
    def local_cubes(x):
        y = np.zeros(x.shape[0])
        for i in range(len(x)):
            y[i] = x[i] ** 3
        s = 0.0
        for i in range(len(y)):
            s += y[i] * x[i]
        return s
    v = np.linspace(0.5, 1.0, 6)
    np.testing.assert_allclose(adjit.hvp(local_cubes)(X6, v), 12 * X6 ** 2 * v, rtol=1e-12)


# -- which arguments a callee may write (decides activity and what the reverse may read) ----

@numba.njit
def _weighted_sines(w, x):
    s = 0.0
    for i in range(w.shape[0]):
        s += w[i] * math.sin(x * i)
    return s


@numba.njit
def _writes_second_through_view(a, b):
    row = b[1:]
    row[0] = a[0]
    return a[0]


@numba.njit
def _forwards_write(a, b):
    return _writes_second_through_view(b, a)


def test_callee_write_analysis():
    from numba import types
    from adjit.capture.effects import callee_writes
    vec = types.float64[::1]
    assert callee_writes(_weighted_sines, (vec, types.float64)) == frozenset()
    assert callee_writes(_scale_in_place, (vec, types.float64)) == {0}
    assert callee_writes(_writes_second_through_view, (vec, vec)) == {1}
    assert callee_writes(_forwards_write, (vec, vec)) == {0}


def weights_not_differentiated(x, w):
    return _weighted_sines(w, x) ** 2


def test_read_only_array_passed_to_callee_needs_no_gradient():
    w = np.linspace(0.1, 1.0, 4)
    g = check_grad(weights_not_differentiated, 0.3, w)
    s = sum(w[i] * math.sin(0.3 * i) for i in range(4))
    ds = sum(w[i] * i * math.cos(0.3 * i) for i in range(4))
    assert g == pytest.approx(2 * s * ds, rel=1e-12)


def list_item_overwritten(x, lst):
    lst[0] = 2.0
    a = x * lst[0]          # saved: a typed list is not restored on the way back
    lst[0] = 7.0
    return a


def int_array_argument_written(x, idx):
    idx[0] = 2
    a = x * idx[0]
    idx[0] = 9
    return a * idx[1]


def test_reads_of_other_mutable_containers_are_saved():
    from numba.typed import List
    assert adjit.grad(list_item_overwritten)(0.5, List([1.0, 2.0])) == 2.0
    idx = np.array([1, 5])
    assert adjit.grad(int_array_argument_written)(0.5, idx) == 10.0
    assert idx.tolist() == [1, 5]          # argument writes are undone by the reverse pass


def _filled(x, y):
    a = np.full(4, x)
    a[1] = y * y  # the overwritten entry takes nothing back to x
    b = np.full_like(a, x * y)
    return np.sum(a * b) + math.sin(a[0])


def _filled_in_loop(x):
    t = 0.0
    for k in range(3):
        a = np.full((2, 2), x * (k + 1.0), dtype=np.float64)
        a[0, 0] = 1.0
        t += np.sum(a * a)
    return t


def test_a_differentiated_fill_value_in_every_mode():
    # closed form: 3 of 4 entries of a hold x, all of b hold x*y
    x, y = 0.7, 1.3
    gx = 3 * (2 * x * y) + (y * y) * y + math.cos(x)
    gy = 3 * x * x + (2 * y * x * y + y * y * x)
    np.testing.assert_allclose(adjit.grad(_filled, argnums=(0, 1))(x, y), (gx, gy),
                               rtol=1e-13)
    check_grad(_filled_in_loop, 0.4)
    for f, args in ((_filled, (x, y)), (_filled_in_loop, (0.4,))):
        check_jvp(f, *args)  # (the tangent of np.full was zero before)
        check_hvp(f, *args, argnums=0)


def _scaled_in_turn(x):
    # a local array written in place and read whole in between: the reverse pass must
    # see it as it was at each read (it was reading its final values)
    w = np.ones(3)
    s = 0.0
    for i in range(3):
        w[i] *= 2.0
        s += np.sum(w * x)
        w[i] /= 2.0
    return s


def test_local_array_written_between_whole_reads():
    x = np.array([0.1, 0.2, 0.3])
    g = check_grad(_scaled_in_turn, x)
    np.testing.assert_allclose(g, [4.0, 4.0, 4.0], rtol=1e-14)
