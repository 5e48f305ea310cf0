"""``sum_sin_1000``: ``np.sum(np.sin(x))`` over 1000 random normals."""
import numpy as np

NAME = "sum_sin_1000"
ARGNUMS = 0
REFERENCE = {"mooncake": (2.4, 2.7), "enzyme": (2.0, 2.2)}


def sum_sin_1000(x):
    """Vectorised ufunc followed by a reduction."""
    return np.sum(np.sin(x))


def hand_grad(x):
    """d sum(sin(x)) / dx = cos(x)."""
    return np.cos(x)


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = sum_sin_1000
