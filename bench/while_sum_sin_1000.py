"""``_sum_sin_1000``: a while loop adding ``sin(x[n])``."""
import math

import numpy as np

NAME = "_sum_sin_1000"
ARGNUMS = 0
REFERENCE = {"mooncake": (3.0, 3.8), "enzyme": (2.5, 3.2)}


def while_sum_sin_1000(x):
    """Sum of sines written as a while loop over scalars (math.sin)."""
    s = 0.0
    n = 0
    while n < x.shape[0]:
        s += math.sin(x[n])
        n += 1
    return s


def hand_grad(x):
    """cos(x[n]) for every n, written as a loop."""
    g = np.empty_like(x)
    n = 0
    while n < x.shape[0]:
        g[n] = math.cos(x[n])
        n += 1
    return g


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = while_sum_sin_1000
