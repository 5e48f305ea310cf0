"""Loops inside loops: rectangular, triangular, three deep, inner while."""
import math

from . import Case


def rectangular(x):
    s = 0.0
    for i in range(4):
        for j in range(3):
            s += x * i - j * x * x
    return s


def triangular(x):
    s = 0.0
    for i in range(5):
        for j in range(i):
            s = s + math.sin(x * (i - j))
    return s


def three_deep(x, y):
    s = 0.0
    for i in range(3):
        for j in range(2):
            for k in range(2):
                s += x ** (i + 1) * y ** (j + k)
    return s


def inner_while(x):
    s = 0.0
    for i in range(4):
        j = 0
        t = x
        while j < i:
            t = t * x
            j += 1
        s += t
    return s


def carried_through_both(x):
    # the inner loop updates a value carried by the outer loop
    a = x
    for i in range(3):
        for j in range(3):
            a = a * 0.8 + 0.1 * x
        a = a * a
    return a


def inner_zero_trip(x):
    s = x
    for i in range(3):
        for j in range(i, 1):
            s = s * x
        s = s + 1.0
    return s


CASES = [
    Case(rectangular, (0.7,)),
    Case(triangular, (0.4,)),
    Case(three_deep, (0.9, 1.2), (0, 1)),
    Case(inner_while, (1.3,)),
    Case(carried_through_both, (0.9,)),
    Case(inner_zero_trip, (0.8,)),
]
