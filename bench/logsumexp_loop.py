"""``logsumexp_loop``: two-pass numerically stable log-sum-exp with loops, x: 1000."""
import math

import numpy as np

NAME = "logsumexp_loop"
ARGNUMS = 0


def logsumexp_loop(x):
    """First pass finds the maximum m, second sums exp(x - m); returns m + log(sum)."""
    m = -np.inf
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def hand_grad(x):
    """softmax(x), computed with the same two passes plus a normalising one."""
    m = -np.inf
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    g = np.empty_like(x)
    s = 0.0
    for i in range(x.shape[0]):
        g[i] = math.exp(x[i] - m)
        s += g[i]
    for i in range(x.shape[0]):
        g[i] /= s
    return g


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = logsumexp_loop
