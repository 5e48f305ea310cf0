"""Integer arguments next to floats; the gradient is only taken with respect to floats."""
import numpy as np

from . import Case

COEF = np.array([3, -1, 2, 5], dtype=np.int64)


def power_by_loop(x, n):
    p = 1.0
    for _ in range(n):
        p *= x
    return p


def int_first(n, x):
    return x * n + x ** 2


def int_between_floats(x, k, y):
    s = 0.0
    for i in range(k):
        s += x * i + y
    return s * y


def int_array_coefficients(x, c):
    # polynomial with integer coefficients from an int array
    p = 0.0
    for i in range(c.shape[0]):
        p = p * x + c[i]
    return p


def int_in_condition(x, n):
    if n > 3:
        return x * x * n
    return x - n


def int_arithmetic_on_args(x, n, m):
    k = (n * m + 3) // 2 - n % 3
    return x * k + x * x


CASES = [
    Case(power_by_loop, (1.2, 5)),
    Case(int_first, (3, 0.8), 1),
    Case(int_between_floats, (0.6, 4, 1.3), (0, 2)),
    Case(int_array_coefficients, (0.7, COEF)),
    Case(int_in_condition, (1.4, 5), id="int_in_condition_big"),
    Case(int_in_condition, (1.4, 2), id="int_in_condition_small"),
    Case(int_arithmetic_on_args, (0.9, 4, 7)),
]
