"""Tuples holding arrays that reverse mode still refuses, by name, in grad (forward mode
handles each of them, checked against finite differences), and a helper storing into a
record or a @jitclass made from differentiated values, which both modes refuse. The
supported forms are in tests/corpus/array_tuples.py,
run in every mode by tests/test_idioms.py."""
import numba
import numpy as np
import pytest
from numba.experimental import jitclass

import adjit
from adjit.testing import check_grad, check_jvp


@numba.njit
def _pair(x):
    return x * 2.0, np.sin(x)


@numba.njit
def _scale_first(t):
    t[0][0] = 2.0 * t[1][0]
    return np.sum(t[0] * t[1])


@numba.njit
def _relay(x):
    return _pair(x)


def writes_into_tuple_item(x):
    return _scale_first((x.copy(), x * x))


def relays_tuple(x):
    a, b = _relay(x)
    return np.sum(a * b)


def reads_item_twice(x):
    t = _pair(x)
    a = t[0]
    b = t[0]
    return np.sum(a * b)


@numba.njit
def _zero_first(*arrays):
    for a in arrays:
        a[0] = 0.0
    return np.sum(arrays[0] * arrays[1])


@numba.njit
def _fill_first(t):
    t[0][0] = t[1][1] * 3.0
    return np.sum(t[0] * t[1])


def writes_into_returned_tuple(x):
    t = _pair(x)
    return _fill_first(t)


@numba.njit
def _swap_and_write(t):
    a, b = t
    a[0] = b[0] * 2.0
    return (b, a)


def writes_into_carried_tuple(x):
    t = (x.copy(), x * x)
    for _ in range(3):
        t = _swap_and_write(t)
    return np.sum(t[0] * t[1])


@numba.njit
def _pick(t, c):
    if c > 0:
        return t
    return (t[1], t[0])


def returns_tuple_argument(x):
    t = (x * 2.0, np.cos(x))
    for i in range(3):
        t = _pick(t, i - 1)
    a, b = t
    return np.sum(a * b * b)


def writes_while_iterating(x):
    return _zero_first(x.copy(), 2.0 * x)


@numba.njit
def _pair_of(x):
    return x, np.sin(x)


def iterates_returned_tuple(x):
    s = 0.0
    for a in _pair_of(x):
        s += np.sum(a * a)
    return s


def workspace_read_back(x, ws):
    """A workspace tuple argument (an RK45 stepper's ``ws``): an item is filled through
    a name, then read back through the tuple."""
    k1 = ws[0]
    for i in range(x.size):
        k1[i] = x[i] * x[i]
    return np.sum(ws[0] * x) + ws[2] * x[0]


@numba.njit
def _fill_stage(x, ws):
    k1, k2 = ws[0], ws[1]
    k1[:] = x * x
    k2[:] = k1 * x


def workspace_filled_by_helper(x, ws):
    _fill_stage(x, ws)
    return np.sum(ws[1]) + np.sum(np.sin(ws[0]))


def workspace_at_variable_index(x, ws):
    """The same through ``ws[k]`` with ``k`` known only at run time (a tuple of arrays
    alone: Numba indexes only those at a variable index)."""
    k = int(x[0] > 0.0)
    b = ws[k]
    for i in range(x.size):
        b[i] = x[i] * x[i]
    return np.sum(ws[k] * x)


def _workspace(n=3):
    return (np.zeros(n), np.zeros(n), 0.5)


X = np.linspace(0.1, 0.5, 3)
REFUSED = [
    (writes_into_tuple_item, (X,), "a tuple of arrays, to '_scale_first', which writes into "
                                   "its arrays"),
    (relays_tuple, (X,), "returning a tuple of arrays that another call made"),
    # passed on (a call's result, a tuple carried through a loop): named as written
    (writes_into_returned_tuple, (X,), "passing 't', a tuple of arrays, to '_fill_first', "
                                       "which writes into its arrays"),
    (returns_tuple_argument, (X,), "returning the tuple argument 't' itself in function "
                                   "'_pick'"),
    (writes_into_carried_tuple, (X,), "passing 't', a tuple of arrays, to "
                                      "'_swap_and_write', which writes into its arrays"),
    (reads_item_twice, (X,), "reading item 0 of the tuple 't' into two array variables"),
    (writes_while_iterating, (X,), "writing into 'a', an array read out of a tuple at a "
                                   "variable index"),
    (iterates_returned_tuple, (X,), "reading an array out of '_pair_of\\(...\\)' at a "
                                    "variable index"),
]


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_reverse_mode_refuses(f, args, message):
    with pytest.raises(adjit.UnsupportedError, match=message):
        adjit.grad(f)(*args)


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_forward_mode_differentiates(f, args, message):
    check_jvp(f, *args)


@pytest.mark.parametrize("f, make", [
    (workspace_read_back, _workspace), (workspace_filled_by_helper, _workspace),
    (workspace_at_variable_index, lambda: (np.zeros(3), np.zeros(3)))],
    ids=lambda v: getattr(v, "__name__", ""))
def test_a_workspace_tuple_argument_written_and_read_back(f, make):
    """jvp gave a tangent of 0 for values read back through the tuple (``ws[0]`` again):
    the tuple argument had no tangent. Reverse mode refuses the write by name."""
    v = np.array([1.0, -0.5, 2.0])
    tangent = adjit.jvp(f)(X, make(), v)[1]
    expected = (f(X + 1e-6 * v, make()) - f(X - 1e-6 * v, make())) / 2e-6
    assert tangent == pytest.approx(expected, rel=1e-7)
    check_jvp(f, X, make())
    with pytest.raises(adjit.UnsupportedError, match="inside a tuple argument|a tuple of arrays"
                       "|out of a tuple at a variable index"):
        adjit.grad(f)(X, make())


_RECORD = np.dtype([("a", "f8"), ("b", "f8")])


@numba.njit
def _store_square(g, x):
    g["a"] = x * x


def stores_into_a_record(x, recs):
    _store_square(recs[0], x)
    return recs[0]["a"] + 1.0


def test_a_helper_storing_into_a_record_is_refused():
    # nothing follows a float stored into a record: refused, never a silent zero
    recs = np.zeros(2, dtype=_RECORD)
    with pytest.raises(adjit.UnsupportedError, match="may store them into 'recs\\[0\\]'"):
        adjit.grad(stores_into_a_record)(1.5, recs)
    with pytest.raises(adjit.UnsupportedError):
        adjit.jvp(stores_into_a_record)(1.5, recs, 1.0)


@jitclass([("S", numba.float64)])
class _Spot:
    def __init__(self, s):
        self.S = s


def value_object(s):
    spot = _Spot(s)
    return spot.S * spot.S


def test_a_jitclass_made_from_differentiated_values_is_refused_by_field():
    with pytest.raises(adjit.UnsupportedError, match="reading '.S' of 'spot', a @jitclass"):
        adjit.grad(value_object)(2.0)
    with pytest.raises(adjit.UnsupportedError, match="_Spot"):
        adjit.jvp(value_object)(2.0, 1.0)


@numba.njit
def _double_first_by_second(t):
    for i in range(t[0].shape[0]):
        t[0][i] = 2.0 * t[1][i] * t[0][i]


@numba.njit
def _drift_state(state, dt):
    pos, vel = state
    pos += dt * vel


@numba.njit
def _weighted_state(state):
    pos, vel = state
    return np.sum(pos * vel)


def _writes_through_a_tuple(x):
    y = x.copy()
    _double_first_by_second((y, x))
    return np.sum(y ** 2)


def _steps_a_state_tuple(x):
    pos = x.copy()
    vel = x * x
    for _ in range(2):
        _drift_state((pos, vel), 0.1)
    return np.sum(pos ** 2) + _weighted_state((pos, vel))


def test_a_helper_writing_arrays_inside_a_tuple_argument_is_refused_in_reverse_mode():
    """``b((y, x))`` writing ``t[0][i]`` and ``step((pos, vel), dt)`` updating ``pos``:
    reverse mode ignored the writes (grad 2x for 16x^3), as it would any write a call
    makes through a tuple. Refused by name; forward mode is right; a helper that only
    reads a tuple of arrays still differentiates."""
    x = np.array([0.5, -1.0, 1.5])
    with pytest.raises(adjit.UnsupportedError, match=r"passing '\(y, x\)', a tuple of arrays, "
                                                     r"to '_double_first_by_second'"):
        adjit.grad(_writes_through_a_tuple)(x)
    with pytest.raises(adjit.UnsupportedError, match=r"'\(pos, vel\)', a tuple of arrays"):
        adjit.grad(_steps_a_state_tuple)(x)
    _, tangent = adjit.jvp(_writes_through_a_tuple)(x, np.ones(3))
    assert tangent == pytest.approx(np.sum(16.0 * x ** 3))
    check_jvp(_steps_a_state_tuple, x)
    check_grad(lambda x: _weighted_state((x, x * x)), x)


@jitclass([("rest", numba.float64[:])])
class _Springs:
    def __init__(self, rest):
        self.rest = rest

    def shrink(self, s):
        for e in range(self.rest.shape[0]):
            self.rest[e] *= s


def _energy_then_shrink(x, springs):
    y = np.sum(x * x * springs.rest)  # d/dx = 2 x rest, rest as it is here
    springs.shrink(0.5)
    return y


@numba.njit
def _scale_each(arrays, s):
    for a in arrays:
        a *= s


def _energy_then_scale_list(x, arrays):
    w = arrays[0]
    y = np.sum(x * x * w)
    _scale_each(arrays, 3.0)
    return y


def test_a_helper_writing_arrays_of_a_list_or_object_is_refused_in_reverse_mode():
    """The same through a typed List (``for a in L: a *= s``) and a ``@jitclass`` method
    (``self.rest[e] *= s``): reverse mode read the arrays back after the helper changed
    them (a gradient 3 times too large, or half). Refused by name; forward mode is right."""
    from numba.typed import List
    x, w = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -1.0])
    with pytest.raises(adjit.UnsupportedError,
                       match=r"'springs', an object holding arrays, to '_Springs.shrink'"):
        adjit.grad(_energy_then_shrink)(x, _Springs(w.copy()))
    assert adjit.jvp(_energy_then_shrink)(x, _Springs(w.copy()), np.ones(3))[1] == (
        pytest.approx(np.sum(2 * x * w)))
    arrays = List()
    arrays.append(w.copy())
    with pytest.raises(adjit.UnsupportedError, match=r"'arrays', a list of arrays, to '_scale_each'"):
        adjit.grad(_energy_then_scale_list)(x, arrays)
    arrays = List()
    arrays.append(w.copy())
    assert adjit.jvp(_energy_then_scale_list)(x, arrays, np.ones(3))[1] == (
        pytest.approx(np.sum(2 * x * w)))
