"""``large_single_block``: ``x[0] * x[1]**400`` as 400 sequential multiplies in one basic block.

The body is deliberately written out line by line (no loop, no branch) so that the whole
function is a single basic block of 400 dependent multiplications.
"""
import numpy as np

NAME = "large_single_block"
#: relative cost of a first compile (seconds of a first --quick run), for ``--jobs``
COMPILE_WEIGHT = 22
ARGNUMS = 0
REFERENCE = {"mooncake": (4.5, 4.5), "enzyme": (2.2, 2.2)}


def large_single_block(x):
    """x[0] * x[1] ** 400, one multiply per line."""
    b = x[1]
    y = x[0] * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    y = y * b
    return y


def hand_grad(x):
    """(x1**400, 400 * x0 * x1**399)."""
    g = np.empty_like(x)
    p = x[1] ** 399
    g[0] = p * x[1]
    g[1] = 400.0 * x[0] * p
    return g


#: the multiplies by ``x[1]``, for the tape-written references below
N_MULTIPLIES = 400


def tape_grad(x, ys):
    """The gradient as a tape-based AD tool computes it, written by hand: the forward
    chain storing each partial product into ``ys`` (the tape, allocated once), then the
    reverse chain. It is the floor of every gradient that records and replays the
    chain: two dependent chains of 400 multiplies, where the primal has one
    (``python -m adjit.benchmarking.floors``)."""
    b = x[1]
    y = x[0]
    for k in range(N_MULTIPLIES):
        ys[k] = y
        y = y * b
    ybar, bbar = 1.0, 0.0
    for k in range(N_MULTIPLIES - 1, -1, -1):
        bbar += ybar * ys[k]
        ybar = ybar * b
    return ybar, bbar


def tape_hvp(x, v, ys, yds):
    """The Hessian times ``v`` by forward mode over ``tape_grad``, written by hand: each
    step of both chains is a multiply and then an add (``y%dot * b + y * b%dot``)."""
    b, bdot = x[1], v[1]
    y, ydot = x[0], v[0]
    for k in range(N_MULTIPLIES):
        ys[k], yds[k] = y, ydot
        ydot = ydot * b + y * bdot
        y = y * b
    ybar, ybardot, bbardot = 1.0, 0.0, 0.0
    for k in range(N_MULTIPLIES - 1, -1, -1):
        bbardot += ybardot * ys[k] + ybar * yds[k]
        ybardot = ybardot * b + ybar * bdot
        ybar = ybar * b
    return ybardot, bbardot


def make_inputs(rng):
    """x near [0.9, 0.99]: small uniform jitter so inputs vary per repeat."""
    return (np.array([rng.uniform(0.89, 0.91), rng.uniform(0.985, 0.995)]),)


primal = large_single_block
