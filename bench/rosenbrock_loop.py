"""``rosenbrock_loop``: ``sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2`` as a loop, x: 1000."""
import numpy as np

NAME = "rosenbrock_loop"
ARGNUMS = 0


def rosenbrock_loop(x):
    """Extended Rosenbrock function written as a scalar loop."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        s += 100.0 * a * a + b * b
    return s


def hand_grad(x):
    """Each term touches x[i] and x[i+1]; accumulate both contributions in one loop."""
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * a * x[i] - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * a
    return g


def make_inputs(rng):
    """x: 1000 random normals."""
    return (rng.standard_normal(1000),)


primal = rosenbrock_loop
