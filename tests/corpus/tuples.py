"""Tuples of floats: returned by calls, passed to calls, unpacked, carried around loops."""
import math

import numba

from . import Case


@numba.njit
def polar(r, theta):
    return r * math.cos(theta), r * math.sin(theta)


@numba.njit
def mixed(x):
    # floats and an int: only the floats have adjoints
    return math.sin(x) * 2.0, 7, x * 3.0


@numba.njit
def inner_product(t, u):
    return t[0] * u[0] + t[1] * u[1]


@numba.njit
def rotate(t, c):
    return t[0] * c - t[1], t[1] * c + t[0]


def unpack_call(r, theta):
    x, y = polar(r, theta)
    return x * x * y + math.exp(y)


def mixed_items(x):
    a, n, b = mixed(x)
    return a * n + b * a


def tuple_into_call(x, y):
    t = (x * y, math.sin(x))
    return inner_product(t, t) + inner_product(t, (y, 2.0))


def tuple_through_loop(x, n):
    t = (x, 2.0)
    for i in range(n):
        t = (t[1] * x, t[0] + math.sin(t[1]))
    return t[0] - t[1]


def call_in_loop(x, c):
    t = (x, 1.0)
    for i in range(4):
        t = rotate(t, c)
    return t[0] * t[1]


def tuple_branch(x, y):
    if x > 0:
        t = polar(x, y)
    else:
        t = (y, x)
    return t[0] + 3.0 * t[1]


def loop_over_tuple_of_floats(x, y):
    # a tuple of differentiated floats iterated (read at the loop's index)
    s = 0.0
    for p in (x, 2.0 * y, 3.0, x * y):
        s += p * math.sin(p)
    return s


def tuple_read_at_variable_index(x, n):
    t = (x, x * x, 0.5)
    s = 0.0
    for i in range(n):
        s += t[i % 3] * t[-1 - i % 2]
    return s


CASES = [
    Case(unpack_call, (1.3, 0.4), (0, 1)),
    Case(mixed_items, (0.6,)),
    Case(tuple_into_call, (0.7, 1.1), (0, 1)),
    Case(tuple_through_loop, (0.6, 4)),
    Case(call_in_loop, (0.3, 0.9), (0, 1)),
    Case(tuple_branch, (0.8, 0.5), (0, 1)),
    Case(loop_over_tuple_of_floats, (0.7, 0.4), (0, 1)),
    Case(tuple_read_at_variable_index, (0.9, 5)),
]
