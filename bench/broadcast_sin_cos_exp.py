"""``broadcast_sin_cos_exp``: ``np.sum(np.sin(np.cos(np.exp(x))))``."""
import numpy as np

NAME = "broadcast_sin_cos_exp"
#: relative cost of a first compile (seconds of a first --quick run), for ``--jobs``
COMPILE_WEIGHT = 5
ARGNUMS = 0


def broadcast_sin_cos_exp(x):
    """Three chained ufuncs (each allocating a temporary) and a reduction."""
    return np.sum(np.sin(np.cos(np.exp(x))))


def hand_grad(x):
    """cos(cos(e^x)) * -sin(e^x) * e^x, vectorised."""
    e = np.exp(x)
    return -np.cos(np.cos(e)) * np.sin(e) * e


def make_inputs(rng):
    """x: 10x10 random normals."""
    return (rng.standard_normal((10, 10)),)


primal = broadcast_sin_cos_exp
