"""``scalar_loop_branch``: a scalar loop whose body branches on the running sum."""
import math

import numpy as np

NAME = "scalar_loop_branch"
ARGNUMS = 0


def scalar_loop_branch(x):
    """s += sin(x i) x while s < 10, otherwise s -= x^2 / 2; 1000 iterations."""
    s = 0.0
    for i in range(1000):
        if s < 10.0:
            s += math.sin(x * i) * x
        else:
            s -= 0.5 * x * x
    return s


def hand_grad(x):
    """Forward-mode by hand: carry ds/dx alongside s through the same branches."""
    s = 0.0
    ds = 0.0
    for i in range(1000):
        if s < 10.0:
            t = math.sin(x * i)
            s += t * x
            ds += math.cos(x * i) * i * x + t
        else:
            s -= 0.5 * x * x
            ds -= x
    return ds


def tape_grad(x, taken, cosines):
    """Reverse mode by hand, as a tape-based tool computes it: the forward loop records
    each branch taken and ``cos(x i)`` (into arrays allocated once), the reverse loop
    replays them backwards. The floor of the compile time of any such gradient
    (``python -m adjit.benchmarking.compile_floors``)."""
    s = 0.0
    for i in range(1000):
        taken[i] = s < 10.0
        if taken[i]:
            cosines[i] = math.cos(x * i)
            s += math.sin(x * i) * x
        else:
            s -= 0.5 * x * x
    xbar = 0.0
    for i in range(999, -1, -1):
        if taken[i]:
            xbar += cosines[i] * i * x + math.sin(x * i)
        else:
            xbar -= x
    return xbar


def make_inputs(rng):
    """x: one random normal (a Python float)."""
    return (float(rng.standard_normal()),)


primal = scalar_loop_branch
