"""Lists of floats: ``append`` in loops, comprehensions, typed ``List``, negative indices,
element writes, literals, and lists made afresh in every iteration of a loop."""
import math

import numba
import numpy as np
from numba.typed import List

from . import Case


def append_then_iterate(x):
    res = []
    for i in range(x.shape[0]):
        res.append(x[i] * x[i])
    s = 0.0
    for v in res:
        s += math.sin(v)
    return s


def comprehension_indexed(x):
    r = [math.exp(v) for v in x]
    t = 0.0
    for i in range(len(r)):
        t += r[i] * (i + 1)
    return t


def filtered_comprehension_local(x):
    r = [v * v for v in x if v > 0.3]
    t = 0.0
    for v in r:
        t += v
    return t


def typed_list(x):
    L = List()
    for i in range(x.shape[0]):
        L.append(x[i] ** 3)
    s = 0.0
    for i in range(len(L)):
        s += L[i] * L[len(L) - 1 - i]
    return s


def recurrence_negative_index(x):
    # reads L[-1] while the list grows: the position is resolved when it is read
    L = [x[0]]
    for i in range(1, x.shape[0]):
        L.append(0.5 * L[-1] + math.cos(x[i]))
    return L[-1] * L[0] + L[-2]


def element_writes(x, y):
    L = [x, y, x * y]
    L[1] = L[1] * L[2]
    L[-1] = math.sin(L[0])
    return L[0] + L[1] * L[2]


def list_per_iteration(x):
    total = 0.0
    for j in range(3):
        row = []
        for i in range(x.shape[0]):
            row.append(x[i] * (j + 1.0))
        total += row[j] * row[-1]
    return total


def empty_list_typed(x):
    L = List.empty_list(numba.float64)
    for v in x:
        L.append(v)
    return L[0] * L[1]


def array_from_filtered(x):
    # Numba keeps this list (the filter): np.array takes it as a whole
    a = np.array([v * v for v in x if v > 0.3])
    return np.sum(a * a) + a[0]


def whole_list_functions(x):
    L = [math.sin(v) for v in x]
    L.append(x[0] * x[1])
    b = np.asarray(L)
    return sum(L) * max(L) - min(L) + b[-1] * b[0]


@numba.njit
def _ema(data, period, smoothing=2.0):
    # an exponential moving average as trading-indicator code writes it
    size = len(data)
    weight = smoothing / (period + 1)
    out = np.array([np.nan] * size)  # an array of a constant list, then written
    out[0] = data[0]
    for i in range(1, size):
        out[i] = (data[i] * weight) + (out[i - 1] * (1 - weight))
    out[:period - 1] = np.nan
    return out


def moving_average_of_constant_list(x):
    s = _ema(x, 3)[2:]
    return np.sum(s * s)


CASES = [
    Case(append_then_iterate, (np.linspace(0.1, 0.9, 5),)),
    Case(comprehension_indexed, (np.linspace(-0.4, 0.6, 4),)),
    Case(filtered_comprehension_local, (np.array([0.1, 0.5, 0.9, 0.2, 0.7]),)),
    Case(typed_list, (np.linspace(0.2, 1.1, 4),)),
    Case(recurrence_negative_index, (np.linspace(0.1, 0.8, 5),)),
    Case(element_writes, (0.7, 1.3), (0, 1)),
    Case(list_per_iteration, (np.linspace(0.3, 1.2, 4),)),
    Case(empty_list_typed, (np.array([0.4, 1.5, 2.0]),)),
    Case(array_from_filtered, (np.array([0.1, 0.5, 0.9, 0.2, 0.7]),)),
    Case(whole_list_functions, (np.array([0.3, 1.2, -0.4, 0.8]),)),
    Case(moving_average_of_constant_list, (np.linspace(1.0, 2.0, 6),)),
]
