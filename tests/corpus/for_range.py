"""for loops over range(): start/stop/step, negative step, zero-trip loops."""
import math

import numpy as np

from adjit.suite.rosenbrock_loop import rosenbrock_loop

from . import Case


def range_stop(x):
    s = 0.0
    for i in range(5):
        s = s + x * i
    return s


def range_start_stop(x):
    s = 1.0
    for i in range(2, 6):
        s = s * x + i
    return s


def range_step(x):
    s = 0.0
    for i in range(1, 10, 3):
        s += math.sin(x * i)
    return s


def range_negative_step(x):
    s = x
    for i in range(6, 0, -2):
        s = s * x / i + 1.0
    return s


def zero_trip(x):
    s = x * 2.0
    for i in range(3, 3):
        s = s * x
    return s


def zero_trip_negative(x):
    s = x * x
    for i in range(0, 5, -1):
        s = s + 100.0 * x
    return s


def loop_carried_product(x):
    p = 1.0
    for _ in range(7):
        p *= x
    return p


def loop_variable_unused(x, y):
    a = x
    for _ in range(4):
        a = a * y + x
    return a


def loop_after_loop(x):
    s = 0.0
    for i in range(3):
        s += x * (i + 1)
    t = s
    for i in range(4):
        t = t * 0.5 + s
    return t


def loop_with_branch(x):
    s = 0.0
    for i in range(8):
        if i % 2 == 0:
            s += x * i
        else:
            s -= x * x
    return s


def horner(x):
    # polynomial by Horner's rule with coefficients computed from the loop index
    p = 0.0
    for i in range(6, -1, -1):
        p = p * x + (i + 1) * 0.5
    return p


CASES = [
    Case(range_stop, (1.7,)),
    Case(range_start_stop, (0.9,)),
    Case(range_step, (0.3,)),
    Case(range_negative_step, (1.4,)),
    Case(zero_trip, (0.8,)),
    Case(zero_trip_negative, (0.8,)),
    Case(loop_carried_product, (1.1,)),
    Case(loop_variable_unused, (0.5, 0.7), (0, 1)),
    Case(loop_after_loop, (1.2,)),
    Case(loop_with_branch, (0.6,)),
    Case(horner, (0.8,)),
]


# range loops over arrays: the reverse pass rebuilds the index from the trip counter


def indexed_start_step(x):
    s = 0.0
    for i in range(1, x.shape[0] - 1, 2):
        s += x[i - 1] * x[i] * x[i] - x[i + 1]
    return s


def indexed_backwards(x):
    s = 0.0
    for i in range(x.shape[0] - 1, 0, -1):
        s = s * 0.5 + x[i] * x[i - 1]
    return s


def indexed_nested(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i, x.shape[0], 2):
            s += x[i] * x[j] * (j - i + 1)
    return s


def index_after_loop(x):
    s = 0.0
    last = 0
    for i in range(2, x.shape[0]):
        s += x[i] * x[i - 2]
        last = i
    return s * x[last]


# the benchmark's loop: x[i] read three times, small + - * trees recomputed in reverse
rosenbrock_terms = rosenbrock_loop


_X7 = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 0.6, 1.3])

CASES += [
    Case(indexed_start_step, (_X7,)),
    Case(indexed_backwards, (_X7,)),
    Case(indexed_nested, (_X7,)),
    Case(index_after_loop, (_X7,)),
    Case(rosenbrock_terms, (_X7,)),
]
