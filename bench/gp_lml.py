"""``gp_lml``: Gaussian-process log marginal likelihood, via a Cholesky factorisation.

x = 0.0, 0.2, ... (128 points), noise variance s = 1.0, y random normal (it varies per
repeat). Kernel ``K[i, j] = exp(-(x_i - x_j)**2 / 2)``; covariance ``C = K + s I``;
value ``log N(y | 0, C)``. Differentiated wrt x, y and s.
``np.linalg.cholesky`` and ``np.dot`` need scipy (LAPACK/BLAS) under numba.
"""
import numpy as np

NAME = "gp_lml"
#: relative cost of a first compile (seconds of a first --quick run), for ``--jobs``
COMPILE_WEIGHT = 26
ARGNUMS = (0, 1, 2)
REFERENCE = {"mooncake": (8.4, 8.4), "enzyme": (6.6, 6.6)}
N_POINTS = 128


def gp_lml(x, y, s):
    """log N(y | 0, K(x) + s I) with a broadcast kernel, LAPACK Cholesky and a loop solve."""
    n = x.shape[0]
    d = x[:, None] - x[None, :]
    K = np.exp(-0.5 * d * d)
    C = K + s * np.eye(n)
    L = np.linalg.cholesky(C)
    # Forward substitution z = L^{-1} y, so that y^T C^{-1} y = z . z
    z = np.empty(n)
    for i in range(n):
        acc = y[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    logdet_half = np.sum(np.log(np.diag(L)))
    return -0.5 * np.dot(z, z) - logdet_half - 0.5 * n * np.log(2.0 * np.pi)


def hand_grad(x, y, s):
    """G = (a a^T - C^-1) / 2 with a = C^-1 y; then dy = -a, ds = tr G, dx from dK/dx."""
    n = x.shape[0]
    d = x[:, None] - x[None, :]
    K = np.exp(-0.5 * d * d)
    C = K + s * np.eye(n)
    L = np.linalg.cholesky(C)
    Linv = np.linalg.inv(L)
    Cinv = Linv.T @ Linv
    a = Cinv @ y
    G = 0.5 * (np.outer(a, a) - Cinv)
    dx = -2.0 * np.sum(G * d * K, axis=1)
    return dx, -a, np.trace(G)


def make_inputs(rng):
    """The fixed grid x, random normal y, s = 1.0."""
    x = 0.2 * np.arange(N_POINTS, dtype=np.float64)
    return (x, rng.standard_normal(N_POINTS), 1.0)


primal = gp_lml
