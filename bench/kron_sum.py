"""``kron_sum``: ``np.sum(np.kron(a, b))`` with a: 20x20 and b: 40x40."""
import numpy as np

NAME = "kron_sum"
#: relative cost of a first compile (seconds of a first --quick run), for ``--jobs``
COMPILE_WEIGHT = 9
ARGNUMS = (0, 1)
REFERENCE = {"mooncake": (3.3, 41.0), "enzyme": (9.8, 12.4)}


def kron_sum(a, b):
    """Sum of an 800x800 Kronecker product."""
    return np.sum(np.kron(a, b))


def hand_grad(a, b):
    """sum(kron(a, b)) = sum(a) * sum(b), so each gradient is the other sum."""
    return np.full_like(a, np.sum(b)), np.full_like(b, np.sum(a))


def make_inputs(rng):
    """a: 20x20 and b: 40x40 random normals."""
    return (rng.standard_normal((20, 20)), rng.standard_normal((40, 40)))


primal = kron_sum
