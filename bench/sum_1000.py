"""``sum_1000``: ``np.sum(x)`` over 1000 random normals."""
import numpy as np

NAME = "sum_1000"
ARGNUMS = 0
REFERENCE = {"mooncake": (1.55, 1.9), "enzyme": (7.3, 8.3)}


def sum_1000(x):
    """Library reduction."""
    return np.sum(x)


def hand_grad(x):
    """d sum(x) / dx = 1."""
    return np.ones_like(x)


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = sum_1000
