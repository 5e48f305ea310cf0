"""Implicit and explicit int-to-float and float-width conversions."""
import numba
import numpy as np

from . import Case


def float_of_int(x, n):
    return x * float(n) + float(n * n)


def implicit_mul(x, i):
    return x * i + i * x * x


def implicit_add(x, n):
    return (x + n) * (n - x)


def true_division_of_ints(x, n, m):
    return x * (n / m) + n / (x + m)


def numpy_float64_of_int(x, n):
    return np.float64(n) * x * x


def float_of_float(x):
    return float(x) * 3.0 + x


def float32_to_float64(x):
    # x: float32
    y = np.float64(x)
    return y * y + x


def loop_index_as_float(x):
    s = 0.0
    for i in range(5):
        s += x * float(i) + i * i * x
    return s


def int_accumulator_promoted(x):
    k = 0
    s = x
    for i in range(4):
        k += i
        s = s * 0.5 + k
    return s * x


def numba_type_as_cast(x):
    # numba.float64(v) used as a cast, as np.float64(v) is
    s = numba.float64(x) * x
    for i in range(3):
        s += numba.float64(i) * numba.float64(x * x)
    return s


CASES = [
    Case(float_of_int, (0.7, 3)),
    Case(implicit_mul, (1.1, 4)),
    Case(implicit_add, (0.4, 3)),
    Case(true_division_of_ints, (1.2, 7, 2)),
    Case(numpy_float64_of_int, (0.9, 5)),
    Case(float_of_float, (0.6,)),
    Case(float32_to_float64, (np.float32(0.8),)),
    Case(loop_index_as_float, (0.3,)),
    Case(int_accumulator_promoted, (1.5,)),
    Case(numba_type_as_cast, (0.8,)),
]
