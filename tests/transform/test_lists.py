"""Lists of floats in every mode: the corpus programs (tests/corpus/lists.py) under
forward-over-reverse, and the refusals of what a list holding differentiated values
cannot do. (grad and jvp of the same programs run in test_corpus / test_forward.)"""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp
from corpus.lists import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hvp_of_list_programs(case):
    check_hvp(case.fn, *case.args, argnums=case.argnums)


def test_list_gradient_matches_closed_form():
    from corpus.lists import append_then_iterate
    x = np.linspace(0.1, 0.9, 5)
    np.testing.assert_allclose(adjit.grad(append_then_iterate)(x),
                               np.cos(x * x) * 2 * x, rtol=1e-13)


def _pop(x):
    L = [x[0], x[1]]
    L.append(x[2])
    return L.pop() * 2.0


@numba.njit
def _total(values):
    t = 0.0
    for v in values:
        t += v
    return t


def _passed_to_helper(x):
    L = []
    for v in x:
        L.append(v * v)
    return _total(L)


def _sliced(x):
    L = [v * 2.0 for v in x]
    t = 0.0
    for v in L[1:]:
        t += v
    return t


def _list_argument(x, L):
    L.append(x * x)
    return L[-1]


def _list_of_arrays(x):
    L = [x, x * 2.0]
    return np.sum(L[0] * L[1])


def _list_of_arrays_filled(x):
    L = [np.zeros(3)] * 3
    for i in range(3):
        L[i] = x * i
    return np.sum(L[1])


@numba.njit
def _simulate_path(x):
    path = [x[0]]
    for _ in range(3):
        path.append(path[-1] * 1.5)
    return path, path[-1]


def _list_in_returned_tuple(x):
    path, payoff = _simulate_path(x)
    return payoff * x[1]


def _binomial_levels(x):
    """A binomial tree's levels as a list of lists (a finance textbook's pricer)."""
    n = 3
    v = [[0.0 for j in range(i + 1)] for i in range(n + 1)]
    for j in range(n + 1):
        v[n][j] = x[0] * 1.1 ** j
    return v[n][n] * x[1]


def _list_of_returned_tuple_read(x):
    path, payoff = _simulate_path(x)
    return path[0] * payoff  # reverse mode said "putting differentiated values into"


@pytest.mark.parametrize("func, words", [
    (_pop, "'L.pop(...)' on a list holding differentiated values"),
    (_passed_to_helper, "passing 'L', a list which holds differentiated values, to "
                        "'_total'"),
    # jvp raised internal errors for these two (a TypingError, "0 is not in list")
    (_list_of_arrays, "list"),
    (_list_in_returned_tuple, "a tuple holding a list"),
    (_list_of_returned_tuple_read, "a tuple holding a list"),
    # jvp raised a TypingError; grad named an SSA temporary, "made outside the function"
    (_binomial_levels, "a list inside a list ('v[...]') holding differentiated values"),
    (_list_of_arrays_filled, "list of arrays"),  # it showed Numba's type name
])
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_what_a_list_cannot_do_is_refused_in_every_mode(func, words, mode):
    x = np.array([0.3, 0.6, 0.9])
    call = {"grad": lambda: adjit.grad(func)(x),
            "jvp": lambda: adjit.jvp(func)(x, np.ones(3)),
            "hvp": lambda: adjit.hvp(func)(x, np.ones(3))}[mode]
    with pytest.raises(adjit.UnsupportedError) as err:
        call()
    assert words in str(err.value)
    assert func.__name__ in str(err.value)
    assert "internal error" not in str(err.value)


def test_a_slice_of_a_list_has_a_tangent_but_no_adjoint():
    # forward mode slices the tangent list in step; reverse mode refuses the slice
    x = np.array([0.3, 0.6, 0.9])
    check_jvp(_sliced, x)
    for transform in (lambda: adjit.grad(_sliced)(x),
                      lambda: adjit.hvp(_sliced)(x, np.ones(3))):
        with pytest.raises(adjit.UnsupportedError,
                           match="slicing a list holding differentiated values"):
            transform()


def test_a_list_argument_that_takes_differentiated_values_is_refused():
    L = numba.typed.List([1.0, 2.0])
    with pytest.raises(adjit.UnsupportedError, match=r"a list holding differentiated values "
                       r"\('L'\) made outside the function"):
        adjit.grad(_list_argument)(0.5, L)


def _appends_while_iterating(x):
    L = [x[0]]
    for v in L:
        if v < 1.0:
            L.append(v * 2.0 + x[1])
    return L[-1]


def test_iterating_a_list_that_grows_in_the_loop():
    # Python visits the appended items too: forward mode follows the list itself,
    # reverse mode refuses (the loop is not rewritten into an index loop)
    x = np.array([0.3, 0.05])
    check_jvp(_appends_while_iterating, x)
    with pytest.raises(adjit.UnsupportedError):
        adjit.grad(_appends_while_iterating)(x)
    assert math.isfinite(_appends_while_iterating(x))


def _preallocated_list(x):
    n = x.shape[0]
    L = [0.0] * n  # preallocated, then filled by index
    for i in range(n):
        L[i] = x[i] * x[i]
    s = 0.0
    for i in range(n):
        s += L[i] * (i + 1)
    return s


def _preallocated_in_a_loop(x):
    total = 0.0
    for k in range(2):
        L = 3 * [0.0]
        for i in range(3):
            L[i] = math.sin(x[i] * (k + 1))
        total += L[0] * L[1] + L[2]
    return total


def _repeated_differentiated_item(x):
    L = [x[0]] * 3
    return L[1] * 2.0


def _repeated_constants(x):
    L = [0.0, 1.0] * 2  # four items: forward mode made a tangent list of two
    for i in range(4):
        L[i] = L[i] + x[i] * x[i]
    return L[0] + L[1] * L[2] + L[3]


@pytest.mark.parametrize("f", [_preallocated_list, _preallocated_in_a_loop,
                               _repeated_constants])
def test_a_list_of_zeros_filled_by_index(f):
    """``L = [0.0] * n`` is a list made anew (it was refused as "made outside the
    function" in reverse mode, and had no forward rule)."""
    x = np.array([0.3, 0.5, 0.7])
    check_grad(f, x)
    check_jvp(f, x)
    check_hvp(f, x)
    if f is _preallocated_list:
        np.testing.assert_allclose(adjit.grad(f)(x), 2 * x * np.arange(1, 4), rtol=1e-14)
        np.testing.assert_allclose(adjit.hvp(f)(x, np.ones(3)), 2.0 * np.arange(1, 4),
                                   rtol=1e-14)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_repeating_a_list_of_differentiated_values_is_refused(mode):
    x = np.array([0.3, 0.5, 0.7])
    with pytest.raises(adjit.UnsupportedError, match="repeating a list"):
        if mode == "grad":
            adjit.grad(_repeated_differentiated_item)(x)
        else:
            adjit.jvp(_repeated_differentiated_item)(x, np.ones(3))


@numba.njit
def _smooth(data):
    res = list(data[:2])
    for i in range(2, len(data)):
        res.append(0.5 * (data[i] + data[i - 1]))
    return np.array(res)


def _smoothed_energy(x):
    return np.sum(_smooth(x) ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_list_of_an_array_is_refused_with_the_loop_to_write(mode):
    """grad said the helper was "writing into its arguments", which it never does."""
    x = np.linspace(0.1, 2.0, 6)
    call = (lambda: adjit.grad(_smoothed_energy)(x)) if mode == "grad" else (
        lambda: adjit.jvp(_smoothed_energy)(x, np.ones(6)))
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'list' in function '_smooth'.*res = \[a\[0\]\]"):
        call()
