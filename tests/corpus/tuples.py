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


CASES = [
    Case(unpack_call, (1.3, 0.4), (0, 1)),
    Case(mixed_items, (0.6,)),
    Case(tuple_into_call, (0.7, 1.1), (0, 1)),
    Case(tuple_through_loop, (0.6, 4)),
    Case(call_in_loop, (0.3, 0.9), (0, 1)),
    Case(tuple_branch, (0.8, 0.5), (0, 1)),
]
