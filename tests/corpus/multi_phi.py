"""Several variables updated in the same loop or branch: several phis in one block."""
import math

from . import Case


def fibonacci_like(x, y):
    a = x
    b = y
    for _ in range(6):
        a, b = b, a + b
    return b


def swap_in_loop(x, y):
    a = x
    b = y
    for _ in range(5):
        a, b = b, a
        a = a * 1.1
    return a * 2.0 + b


def rotation(x):
    # (c, s) rotated by a fixed angle, both updated together
    c = x
    s = 0.5 * x
    ca = math.cos(0.3)
    sa = math.sin(0.3)
    for _ in range(4):
        c, s = ca * c - sa * s, sa * c + ca * s
    return c * s + s


def three_accumulators(x):
    s0 = 0.0
    s1 = 0.0
    s2 = 1.0
    for i in range(5):
        s0 += x
        s1 += x * s0
        s2 *= 1.0 + x * 0.1 * i
    return s0 + s1 * s2


def branch_updates_many(x, y):
    a = x
    b = y
    c = x * y
    if x > y:
        a = a * 2.0
        b = b + x
        c = c - 1.0
    else:
        a = y
        b = x * x
    return a * b + c


def loop_branch_phis(x):
    a = x
    b = 1.0
    for i in range(6):
        if i % 2 == 0:
            a, b = a * b, b + 0.1
        else:
            a, b = a + b, b * x
    return a + b


def unchanged_through_loop(x, y):
    # y flows through the loop without being modified (loop-invariant phi)
    s = 0.0
    z = y
    for i in range(4):
        s += x * z
    return s + z * z


CASES = [
    Case(fibonacci_like, (0.3, 0.7), (0, 1)),
    Case(swap_in_loop, (0.9, 1.7), (0, 1)),
    Case(rotation, (1.2,)),
    Case(three_accumulators, (0.6,)),
    Case(branch_updates_many, (1.5, 0.5), (0, 1), id="branch_updates_many_then"),
    Case(branch_updates_many, (0.5, 1.5), (0, 1), id="branch_updates_many_else"),
    Case(loop_branch_phis, (0.8,)),
    Case(unchanged_through_loop, (0.4, 1.3), (0, 1)),
]
