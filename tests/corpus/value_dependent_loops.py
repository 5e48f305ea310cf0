"""Loops whose trip count depends on float values."""

from . import Case


def halve_until_small(x):
    while x > 1.0:
        x = x / 2.0
    return x


def halve_count_used(x):
    k = 0
    y = x
    while y > 1.0:
        y = y / 2.0
        k += 1
    return y * k + y


def grow_until(x):
    s = x
    while s < 100.0:
        s = s * 1.7 + x
    return s


def newton_sqrt(x):
    y = x
    for _ in range(30):
        y = 0.5 * (y + x / y)
        if abs(y * y - x) < 1e-300:
            break
    return y


def newton_sqrt_while(x):
    # converged fixed-point iteration; trip count is set by the value of x
    y = x
    k = 0
    while k < 50 and abs(y * y - x) > 1e-10 * x:
        y = 0.5 * (y + x / y)
        k += 1
    return y


def accumulate_until(x, y):
    s = 0.0
    n = 0
    while s < 10.0:
        s += x + y * n
        n += 1
    return s * y


CASES = [
    Case(halve_until_small, (5.3,)),
    Case(halve_count_used, (11.0,)),
    Case(grow_until, (1.3,)),
    Case(newton_sqrt, (2.7,)),
    Case(newton_sqrt_while, (2.7,)),
    Case(accumulate_until, (0.7, 0.45), (0, 1)),
]
