"""``simple_mlp``: ``np.sum((Y - W2 @ relu(W1 @ X))**2)``, differentiated wrt all four arrays.

All four arguments are differentiated, as in the Mooncake.jl / Enzyme reference numbers.
Matrix products go through BLAS, which numba only provides when scipy is installed.
"""
import numba
import numpy as np

NAME = "simple_mlp"
#: relative cost of a first compile (seconds of a first --quick run), for ``--jobs``
COMPILE_WEIGHT = 16
ARGNUMS = (0, 1, 2, 3)
REFERENCE = {"mooncake": (4.7, 4.7), "enzyme": (3.3, 3.3)}


@numba.njit
def relu(z):
    """Rectifier written the numpy way: z times a boolean mask."""
    return z * (z >= 0)


def simple_mlp(W2, W1, Y, X):
    """Squared error of a one-hidden-layer network; calls the jitted helper ``relu``."""
    return np.sum((Y - W2 @ relu(W1 @ X)) ** 2)


def hand_grad(W2, W1, Y, X):
    """Backpropagation written out by hand with four extra matrix products."""
    Z = W1 @ X
    H = Z * (Z >= 0)
    R2 = 2.0 * (Y - W2 @ H)
    dH = -(W2.T @ R2)
    dZ = dH * (Z >= 0)
    return -(R2 @ H.T), dZ @ X.T, R2, W1.T @ dZ


def make_inputs(rng):
    """W2: 128x256, W1: 256x128, Y: 128x70, X: 128x70 random normals."""
    return (rng.standard_normal((128, 256)), rng.standard_normal((256, 128)),
            rng.standard_normal((128, 70)), rng.standard_normal((128, 70)))


primal = simple_mlp
