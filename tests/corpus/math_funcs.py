"""Compositions of math-module and NumPy scalar functions."""
import math

import numpy as np

from . import Case


def exp_sin_log(x):
    return math.exp(math.sin(x)) * math.log(1.0 + x * x)


def softplus(x):
    return math.log1p(math.exp(x))


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def gaussian_logpdf(x, mu, sigma):
    z = (x - mu) / sigma
    return -0.5 * z * z - math.log(sigma) - 0.5 * math.log(2.0 * math.pi)


def polar(x, y):
    r = math.hypot(x, y)
    t = math.atan2(y, x)
    return r * math.cos(2.0 * t)


def tanh_chain(x):
    y = x
    for _ in range(3):
        y = math.tanh(2.0 * y + 0.1)
    return y


def numpy_scalar_mix(x):
    return np.sqrt(np.exp(x) + 1.0) * np.arctan(x) - np.log(x)


def inverse_trig(x):
    return math.asin(x) * math.acos(x * 0.5) + math.atan(x)


def erf_mix(x):
    return math.erf(x) * math.erfc(0.5 * x) + math.expm1(x * 0.1)


def logs_of_all_bases(x):
    return math.log10(x) + math.log2(x) * math.log(x) + math.log1p(x)


def sqrt_pow(x, y):
    return math.sqrt(x * y) + math.pow(x, y) - np.power(y, 0.5)


def hyperbolic(x):
    return math.sinh(x) * math.cosh(0.5 * x) - np.tanh(x) ** 2


CASES = [
    Case(exp_sin_log, (0.7,)),
    Case(softplus, (0.4,)),
    Case(sigmoid, (-0.3,)),
    Case(gaussian_logpdf, (0.3, -0.2, 1.4), (0, 1, 2)),
    Case(polar, (0.6, 0.8), (0, 1)),
    Case(tanh_chain, (0.2,)),
    Case(numpy_scalar_mix, (1.3,)),
    Case(inverse_trig, (0.35,)),
    Case(erf_mix, (0.45,)),
    Case(logs_of_all_bases, (2.3,)),
    Case(sqrt_pow, (1.4, 2.1), (0, 1)),
    Case(hyperbolic, (0.55,)),
]


def builtin_pow(y, z):
    """The builtin ``pow``, as ``**`` and ``math.pow``."""
    return pow(y, 2) + pow(y, z) * 0.5


CASES += [Case(builtin_pow, (1.3, 0.7), (0, 1))]
