"""float32 scalars and arrays; float32 mixed with float64."""
import math

import numba
import numpy as np

from . import Case

X8 = np.array([0.5, -0.25, 1.25, 0.75, -1.5, 0.1, 0.9, -0.6], dtype=np.float32)
X80 = np.random.default_rng(7).standard_normal(80).astype(np.float32)
A23 = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]], dtype=np.float32)


def scalar_poly(x):
    return x * x * x - np.float32(2.0) * x


def scalar_math(x):
    return math.sin(x) * math.exp(x)


def scalar_mixed_with_float64(x, y):
    # x: float32, y: float64 -> the product is float64
    return x * y + x


def array_sum_squares(x):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def array_large_tanh(x):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        s += np.tanh(x[i])
    return s


def array_2d(a):
    s = np.float32(0.0)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j] * np.float32(i + j + 1)
    return s


def branch_float32(x):
    if x > np.float32(0.5):
        return x * x
    return -x


def float32_weights_as_float64(w, x):
    # mixed precision: float32 weights read as float64 arrays (a converting copy)
    v = np.asarray(w, dtype=np.float64)
    u = np.asarray(x, np.float64)
    return np.sum(np.sin(v) * u) + np.sum(v * v)


@numba.vectorize(["float32(float32)", "float64(float64)"])
def _halve(x):
    return 0.5 * x


def typed_vectorize_of_a_product(W, X):
    # a float32(float32) ufunc makes float32 arrays, though its kernel alone computes
    # float64 (0.5 * x): an element read of its result once read the tape as float32
    out = _halve(X @ W)
    return out[0, 0] * out[0, 0] + out[1, 1]


def typed_vectorize_of_scalars(x):
    y = _halve(x[0]) * x[1]
    return y * y


CASES = [
    Case(scalar_poly, (np.float32(1.3),)),
    Case(scalar_math, (np.float32(0.4),)),
    Case(scalar_mixed_with_float64, (np.float32(0.75), 1.7), (0, 1)),
    Case(array_sum_squares, (X8,)),
    Case(array_large_tanh, (X80,)),
    Case(array_2d, (A23,)),
    Case(branch_float32, (np.float32(1.25),)),
    Case(float32_weights_as_float64, (X8, X8.astype(np.float64) * 0.5), (0, 1)),
    Case(typed_vectorize_of_a_product, (A23[:, :2].copy(), A23[:, 1:].copy()), (0, 1)),
    Case(typed_vectorize_of_scalars, (X8,)),
]
