"""``naive_map_sin_cos_exp``: an explicit loop writing ``sin(cos(exp(x)))`` into a new array."""
import math

import numpy as np

NAME = "naive_map_sin_cos_exp"
ARGNUMS = 0


def naive_map_sin_cos_exp(x):
    """Allocate y, fill it element by element in a double loop, then reduce."""
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = math.sin(math.cos(math.exp(x[i, j])))
    return np.sum(y)


def hand_grad(x):
    """cos(cos(e^x)) * -sin(e^x) * e^x elementwise."""
    g = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            e = math.exp(x[i, j])
            g[i, j] = -math.cos(math.cos(e)) * math.sin(e) * e
    return g


def make_inputs(rng):
    """x: 10x10 random normals."""
    return (rng.standard_normal((10, 10)),)


primal = naive_map_sin_cos_exp
