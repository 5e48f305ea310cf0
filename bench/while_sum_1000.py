"""``_sum_1000``: a while loop adding ``x[n]``."""
import numpy as np

NAME = "_sum_1000"
ARGNUMS = 0
REFERENCE = {"mooncake": (6.2, 6.6), "enzyme": (1.05, 1.15)}


def while_sum_1000(x):
    """Sum written as an explicit while loop with scalar indexing."""
    s = 0.0
    n = 0
    while n < x.shape[0]:
        s += x[n]
        n += 1
    return s


def hand_grad(x):
    """d sum(x) / dx = 1, written as a loop like the primal."""
    g = np.empty_like(x)
    n = 0
    while n < x.shape[0]:
        g[n] = 1.0
        n += 1
    return g


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = while_sum_1000
