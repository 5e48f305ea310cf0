"""Calls to other @numba.njit functions: helpers, shared helpers, nesting, recursion."""
import math

import numba
import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from . import Case


@numba.njit
def square(x):
    return x * x


@numba.njit
def poly(x, a):
    return a * x * x + 2.0 * x + 1.0


@numba.njit
def inner(x):
    return math.sin(x) * x


@numba.njit
def middle(x):
    return inner(x) + square(x)


@numba.njit
def outer(x):
    return middle(x) * 2.0 + inner(x * 0.5)


@numba.njit
def helper_with_loop(x, n):
    s = 0.0
    for i in range(n):
        s += x ** i
    return s


@numba.njit
def helper_with_branch(x):
    if x > 0.0:
        return x * x
    return -x


@numba.njit
def sincos(x):
    return math.sin(x), math.cos(x)


@numba.njit
def rpow(x, n):
    # recursive power
    if n == 0:
        return 1.0
    return x * rpow(x, n - 1)


@numba.njit
def fast_pow(x, n):
    # recursive power by squaring: two recursive call sites
    if n == 0:
        return 1.0
    if n % 2 == 0:
        h = fast_pow(x, n // 2)
        return h * h
    return x * fast_pow(x, n - 1)


def call_helper(x):
    return square(x) + 1.0


def helper_several_places(x, y):
    return square(x) + square(y) * square(x + y)


def helper_two_args(x, a):
    return poly(x, a) * poly(a, x)


def nested_calls(x):
    return outer(x)


def call_in_loop(x):
    s = 0.0
    for i in range(4):
        s += square(x + i) * 0.1
    return s


def call_helper_with_loop(x):
    return helper_with_loop(x, 5) * x


def call_helper_with_branch(x, y):
    return helper_with_branch(x) + helper_with_branch(y)


def call_returning_tuple(x):
    s, c = sincos(x)
    return s * c + s


def call_recursive(x):
    return rpow(x, 5) + x


def call_recursive_two_sites(x):
    return fast_pow(x, 11)


CASES = [
    Case(call_helper, (1.3,)),
    Case(helper_several_places, (0.4, 0.6), (0, 1)),
    Case(helper_two_args, (0.7, 1.9), (0, 1)),
    Case(nested_calls, (0.8,)),
    Case(call_in_loop, (0.2,)),
    Case(call_helper_with_loop, (0.9,)),
    Case(call_helper_with_branch, (0.5, -0.7), (0, 1)),
    Case(call_returning_tuple, (0.6,)),
    Case(call_recursive, (1.2,)),
    Case(call_recursive_two_sites, (1.1,)),
    # the function under test is itself a dispatcher
    Case(outer, (0.8,), id="dispatcher_outer"),
    Case(rpow, (1.3, 4), id="dispatcher_recursive"),
]


@register_jitable
def softplus(x, beta=1.0):
    # a library-style helper: plain Python, compiled by Numba when jitted code calls it
    return math.log1p(math.exp(beta * x)) / beta


def call_register_jitable(x, y):
    return softplus(x, beta=2.0) * softplus(y) + softplus(x * y)


CASES += [Case(call_register_jitable, (0.4, -0.9), (0, 1))]


def logistic(x, scale=1.0):
    """Pure Python; jitted code reaches it through the ``@overload`` below."""
    return 1.0 / (1.0 + np.exp(-x / scale))


@overload(logistic)
def _logistic_overload(x, scale=1.0):
    # a library-style overload: one implementation per argument kind
    if isinstance(x, types.Float):
        def scalar_impl(x, scale=1.0):
            return 1.0 / (1.0 + math.exp(-x / scale))
        return scalar_impl
    if isinstance(x, types.Array):
        def array_impl(x, scale=1.0):
            out = np.empty_like(x)
            for i in range(x.size):
                out[i] = 1.0 / (1.0 + math.exp(-x[i] / scale))
            return out
        return array_impl
    return None


def call_user_overload(x, v):
    # the implementation Numba chose for each call's types is what adjit derives
    return logistic(x, scale=2.0) * np.sum(logistic(v) * v) + logistic(x * v[0])


CASES += [Case(call_user_overload, (0.4, np.array([0.3, -1.2, 0.8])), (0, 1))]
