"""Straight-line code: a single basic block, no control flow."""
import math

from . import Case


def add_mul(x, y):
    return x * y + x


def reuse_value(x):
    # the same SSA value used several times
    a = x * x
    return a * a + a * x - 3.0 * a


def division(x, y):
    return (x + 1.0) / (y * y + 1.0) - x / y


def constants_only_left(x):
    return 2.0 - x / 4.0 + 1.5 * x


def power_int(x):
    return x ** 3 - 2.0 * x ** 2


def power_float(x, y):
    return x ** y + y ** 1.5


def unary_minus(x):
    y = -x
    return -(y * y * y) + -x


def long_chain(x):
    a = x + 1.0
    b = a * x
    c = b - a / 3.0
    d = c * c + b
    e = d / (a * a)
    f = e * x - c
    g = f * f * 0.1 + e
    return g - d * 0.01


def inplace_ops(x, y):
    s = x
    s += y
    s *= x
    s -= 0.5 * y
    s /= (1.0 + y * y)
    return s


def unused_value(x, y):
    z = x * y  # dead
    w = math.sin(y)  # dead
    return x * 3.0


def ignores_argument(x, y):
    # gradient with respect to y is exactly 0
    return x * x


CASES = [
    Case(add_mul, (1.5, -0.7), (0, 1)),
    Case(reuse_value, (0.8,)),
    Case(division, (1.3, 0.9), (0, 1)),
    Case(constants_only_left, (2.5,)),
    Case(power_int, (1.7,)),
    Case(power_float, (1.3, 2.2), (0, 1)),
    Case(unary_minus, (0.6,)),
    Case(long_chain, (0.7,)),
    Case(inplace_ops, (1.1, 0.4), (0, 1)),
    Case(unused_value, (0.5, 0.25), (0, 1)),
    Case(ignores_argument, (0.5, 2.0), (0, 1)),
]
