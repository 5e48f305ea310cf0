"""break and continue inside for and while loops."""
from . import Case


def continue_int_condition(x):
    s = 0.0
    for i in range(10):
        if i % 3 == 0:
            continue
        s += x * i
    return s


def break_int_condition(x):
    s = 0.0
    for i in range(100):
        if i == 7:
            break
        s = s * 0.5 + x * x
    return s


def break_value_condition(x):
    # stops when the accumulated value exceeds a threshold
    s = 0.0
    for i in range(50):
        s += x * (i + 1)
        if s > 20.0:
            break
    return s * x


def continue_value_condition(x, y):
    s = 0.0
    for i in range(8):
        t = x * i - y
        if t < 0.0:
            continue
        s += t * t
    return s


def while_break_continue(x):
    i = 0
    s = 0.0
    while i < 20:
        i += 1
        if i % 2 == 1:
            continue
        if i > 12:
            break
        s = s + x / i
    return s


def break_in_nested(x):
    s = 0.0
    for i in range(5):
        for j in range(5):
            if j > i:
                break
            s += x * (i - j) + 0.1 * x * x
    return s


CASES = [
    Case(continue_int_condition, (1.3,)),
    Case(break_int_condition, (0.9,)),
    Case(break_value_condition, (1.1,)),
    Case(continue_value_condition, (0.7, 1.8), (0, 1)),
    Case(while_break_continue, (2.0,)),
    Case(break_in_nested, (0.6,)),
]
