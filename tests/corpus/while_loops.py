"""while loops with integer counters and float-carried state."""
import math

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
