"""while loops with integer counters and float-carried state."""
import math

import numpy as np

from . import Case


def while_counter(x):
    i = 0
    s = 0.0
    while i < 6:
        s = s + x * x * i
        i += 1
    return s


def while_two_counters(x, y):
    i = 0
    j = 10
    s = x
    while i < j:
        s = s * 0.9 + y * i
        i += 2
        j -= 1
    return s


def while_true_break(x):
    i = 0
    s = 1.0
    while True:
        s = s * x + 0.5
        i += 1
        if i == 5:
            break
    return s


def while_decay(x):
    # fixed-trip while whose body mixes scalar math
    k = 0
    y = x
    while k < 5:
        y = math.tanh(y) + 0.3 * x
        k += 1
    return y


def while_loop_else_path(x):
    i = 0
    s = 0.0
    while i < 4:
        if s < 1.0:
            s = s + x
        else:
            s = s * x
        i += 1
    return s


CASES = [
    Case(while_counter, (1.3,)),
    Case(while_two_counters, (0.8, 0.3), (0, 1)),
    Case(while_true_break, (0.7,)),
    Case(while_decay, (0.4,)),
    Case(while_loop_else_path, (0.6,)),
]


# while loops over arrays: bottom-tested counted loops, the index rebuilt from the count


def while_rosenbrock(x):
    s = 0.0
    i = 0
    while i < x.size - 1:
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        i += 1
    return s


def while_may_skip(x, n):
    # n = 0 skips the loop: the exit's reverse must go straight back to the preheader
    s = x[0]
    i = 0
    while i < n:
        s = s * x[i] + 1.0
        i += 1
    return s


def while_counting_down(x):
    s = 0.0
    i = x.shape[0] - 1
    while i >= 1:
        s = s * 0.5 + x[i] * x[i - 1]
        i -= 2
    return s


def nested_while(x):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        j = i
        while j < x.shape[0]:
            s += x[i] * x[j]
            j += 1
        i += 1
    return s


_X6 = np.array([0.3, -1.2, 0.8, 1.1, -0.4, 0.6])

CASES += [
    Case(while_rosenbrock, (_X6,)),
    Case(while_may_skip, (_X6, 4)),
    Case(while_may_skip, (_X6, 0)),
    Case(while_counting_down, (_X6,)),
    Case(nested_while, (_X6,)),
]
