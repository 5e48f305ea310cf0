"""Reverse mode through matrix products producing arrays (``A @ B``, ``np.dot(A, B)``,
2-D @ 2-D, 2-D @ 1-D and 1-D @ 2-D, and ``np.kron``), recomputed where a later update reads them,
and through an ``@njit`` helper returning an array (the ``simple_mlp`` benchmark's
shape)."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
Y = RNG.standard_normal((3, 5))


def sum_matmul(a, b):
    return np.sum(a @ b)


def squared_matvec(a, x):
    return np.sum((a @ x) ** 2)


def tanh_dot(w, x, y):
    return np.sum(np.tanh(np.dot(w, x)) * y)


@numba.njit
def relu(z):
    return z * (z >= 0)


def mlp(w2, w1, y, x):
    return np.sum((y - w2 @ relu(w1 @ x)) ** 2)


@pytest.mark.parametrize("argnum", [0, 1])
def test_sum_matmul(argnum):
    check_grad(sum_matmul, A, B, argnums=argnum)


@pytest.mark.parametrize("argnum", [0, 1])
def test_squared_matvec(argnum):
    check_grad(squared_matvec, A, V, argnums=argnum)


@pytest.mark.parametrize("argnum", [0, 1, 2])
def test_tanh_dot(argnum):
    check_grad(tanh_dot, A, B, Y, argnums=argnum)


@pytest.mark.parametrize("argnum", [0, 1, 2, 3])
def test_mlp(argnum):
    w2, w1 = RNG.standard_normal((3, 6)), RNG.standard_normal((6, 4))
    y, x = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))
    check_grad(mlp, w2, w1, y, x, argnums=argnum)


def test_mlp_matches_backpropagation():
    w2, w1 = RNG.standard_normal((3, 6)), RNG.standard_normal((6, 4))
    y, x = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))
    z = w1 @ x
    h = z * (z >= 0)
    r = 2.0 * (y - w2 @ h)
    dz = -(w2.T @ r) * (z >= 0)
    expected = (-(r @ h.T), dz @ x.T, r, w1.T @ dz)
    got = adjit.grad(mlp, argnums=(0, 1, 2, 3))(w2, w1, y, x)
    for g, want in zip(got, expected):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


def dot_matrix_vector(a, w):
    return np.dot(a, w)[0]


def test_element_of_a_matrix_vector_product():
    check_grad(dot_matrix_vector, A, V, argnums=0)


# Kronecker products: C[i*p + k, j*q + l] = A[i, j] * B[k, l]


def weighted_kron(a, b, w):
    return np.sum(np.kron(a, b) * w)


def squared_kron(a, b):
    c = np.kron(a, b)
    return np.sum(c * c)


KA = RNG.standard_normal((2, 3))
KB = RNG.standard_normal((4, 2))
KW = RNG.standard_normal((8, 6))


def test_kron_gradient_is_the_adjoint_contraction():
    """Dot-product test: <d kron(A, B), W> with dC = kron(dA, B) + kron(A, dB) equals
    <dA, Abar> + <dB, Bbar> for the gradients of sum(kron(A, B) * W)."""
    ga, gb = adjit.grad(weighted_kron, argnums=(0, 1))(KA, KB, KW)
    da, db = RNG.standard_normal(KA.shape), RNG.standard_normal(KB.shape)
    lhs = np.sum((np.kron(da, KB) + np.kron(KA, db)) * KW)
    assert np.sum(da * ga) + np.sum(db * gb) == pytest.approx(lhs, rel=1e-13)
    check_grad(weighted_kron, KA, KB, KW, argnums=(0, 1))


def test_kron_of_vectors_and_recomputed_product():
    a, b = KA[0].copy(), KB[:, 0].copy()
    check_grad(weighted_kron, a, b, RNG.standard_normal(a.size * b.size), argnums=(0, 1))
    check_grad(squared_kron, KA, KB, argnums=(0, 1))  # the reverse pass rebuilds kron(A, B)


def logistic_steps(y, X, w):
    # a row vector times a matrix (np.dot(v, X), v @ X), as logistic-regression code
    # writes the gradient step
    for _ in range(2):
        w = w - 0.1 * np.dot((1.0 / (1.0 + np.exp(-y * (X @ w))) - 1.0) * y, X)
    return np.sum(w * w) + np.sum(np.tanh(V[:3] @ X))


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_vector_times_matrix(mode):
    y, X, w = np.array([1.0, -1.0, 1.0]), A, RNG.standard_normal(4)
    if mode == "grad":
        check_grad(logistic_steps, y, X, w, argnums=(1, 2))
    elif mode == "jvp":
        check_jvp(logistic_steps, y, X, w)
    else:
        check_hvp(logistic_steps, y, X, w, argnums=(1, 2))
