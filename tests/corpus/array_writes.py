"""Writing into arrays (allocated inside the function, or arguments), then reading them
back."""
import math

import numpy as np

from . import Case

X6 = np.array([0.4, -0.3, 1.1, 0.9, -1.4, 0.2])


def map_then_sum(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = math.sin(math.cos(math.exp(x[i])))
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i]
    return s


def zeros_accumulate(x):
    n = x.shape[0]
    acc = np.zeros(n)
    for k in range(3):
        for i in range(n):
            acc[i] += x[i] * (k + 1)
    s = 0.0
    for i in range(n):
        s += acc[i] * acc[i]
    return s


def overwrite_slot(x):
    y = np.zeros(2)
    y[0] = x[0] * x[1]
    y[0] = y[0] * x[2] + 1.0  # overwrites a value that is still needed
    y[1] = y[0] * y[0]
    return y[1] + y[0]


def prefix_sum(x):
    n = len(x)
    c = np.empty(n)
    c[0] = x[0]
    for i in range(1, n):
        c[i] = c[i - 1] + x[i]
    s = 0.0
    for i in range(n):
        s += c[i] * c[i]
    return s


def scalar_into_array(x, y):
    buf = np.empty(3)
    buf[0] = x
    buf[1] = y * x
    buf[2] = buf[0] + buf[1]
    return buf[2] * buf[0]


CASES = [
    Case(map_then_sum, (X6,)),
    Case(zeros_accumulate, (X6,)),
    Case(overwrite_slot, (X6,)),
    Case(prefix_sum, (X6,)),
    Case(scalar_into_array, (0.7, 1.3), (0, 1)),
]



def local_matrix(a):
    y = np.zeros((a.shape[0], a.shape[1]))
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            y[i, j] = math.sin(a[i, j]) * (i + j)
    s = 0.0
    for row in y:
        s += row[0] * row[-1]
    return s


def scratch_argument(x, buf):
    # buf is not differentiated; the reverse pass still needs its old contents
    buf[0] = 1.0
    a = buf[0] * x
    buf[0] = 5.0
    return a * buf[0]


A23 = np.array([[0.5, -0.2, 1.1], [0.3, 0.9, -0.7]])

CASES += [
    Case(local_matrix, (A23,)),
    Case(scratch_argument, (0.7, np.zeros(2))),
]
