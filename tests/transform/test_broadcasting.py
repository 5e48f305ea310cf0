"""NumPy broadcasting in elementwise operations, and ``x[:, None]`` views, in every mode:
the adjoint of a broadcast operand sums over the axes it was broadcast along."""
import numpy as np
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(11)
COL = RNG.uniform(-1.0, 1.0, (3, 1))
ROW = RNG.uniform(-1.0, 1.0, (1, 4))
VEC = RNG.uniform(-1.0, 1.0, 4)
MAT = RNG.uniform(-1.0, 1.0, (3, 4))
X = 0.3 * np.arange(5.0)


def size_one_axes(c, r):
    return np.sum(np.sin(c * r) + c / (2.0 + r))


def rank_extension(m, v):
    return np.sum((m - v) ** 2 * np.exp(v))


def newaxis_kernel(x):
    # the pairwise-difference kernel of Gaussian-process code
    d = x[:, None] - x[None, :]
    return np.sum(np.exp(-0.5 * d * d))


def newaxis_product(x, w):
    return np.sum(np.sin(x[:, np.newaxis] * w[np.newaxis, :]) * w)


def pairwise_outer_3d(m):
    # (3, 4, 1) * (3, 1, 4): every row's outer product with itself, then reductions
    c = m[:, :, None] * m[:, None, :]
    return np.sum(np.sin(c) * c) + np.max(c) + np.mean(c * c)


def rank_extension_3d(m, v):
    # a (2, 3, 4) tensor made by reshape, minus a (3, 4) matrix and a (4,) vector
    t = np.exp(0.1 * m.reshape((2, 3, 4)))
    return np.sum((t - MAT * v) ** 2)


def zero_d_argument(z, x):
    # a 0-d array (np.array(2.5)) reduced like any array
    return np.sum(z) * np.sum(x) + np.prod(z) * np.max(z) + np.sum(np.sin(z * x))


CASES = [(size_one_axes, (COL, ROW), (0, 1)), (rank_extension, (MAT, VEC), (0, 1)),
         (newaxis_kernel, (X,), 0), (newaxis_product, (X, X[::-1].copy()), (0, 1)),
         (pairwise_outer_3d, (MAT,), 0), (rank_extension_3d, (RNG.uniform(-1, 1, 24), VEC),
                                           (0, 1)),
         (zero_d_argument, (np.array(0.7), X), (0, 1))]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_grad(f, args, argnums):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp(f, args, argnums):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_hvp(f, args, argnums):
    check_hvp(f, *args, argnums=argnums)


def test_shapes_that_do_not_broadcast_raise():
    import adjit
    with pytest.raises(ValueError):
        adjit.grad(rank_extension)(MAT, np.ones(3))


X4 = RNG.uniform(-1.0, 1.0, (2, 2, 3, 3))


def sum_of_4d(x):
    return np.sum(x * x)


def ufunc_of_4d(x):
    return np.sum(np.sin(x) * x)


def loops_over_4d(x):
    # element reads and views of 4-D arrays are plain indexing: supported
    s = 0.0
    for n in range(x.shape[0]):
        s += np.sum(x[n] * x[n]) + np.tanh(x[n, 1, 2, 0])
    return s


@pytest.mark.parametrize("f", [sum_of_4d, ufunc_of_4d])
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_rank_4_array_operations_are_refused_in_every_mode(f, mode):
    # reductions and elementwise operations handle ranks 0 to 3: a 4-D operand is refused
    # by name in both modes (forward mode once failed inside Numba's typing instead)
    import adjit
    call = {"grad": lambda: adjit.grad(f)(X4), "jvp": lambda: adjit.jvp(f)(X4, X4),
            "hvp": lambda: adjit.hvp(f)(X4, X4)}[mode]
    with pytest.raises(adjit.UnsupportedError, match="rank .0, 1, 2, 3.*4d"):
        call()


@pytest.mark.parametrize("check", [check_grad, check_jvp, check_hvp])
def test_rank_4_element_reads_and_views(check):
    check(loops_over_4d, X4)


# Forward mode: the tangent of an elementwise result has the result's shape, and is a new
# array. A scalar or row tangent (only a float or a broadcast row carries one) made views
# and element reads of the result fail to compile (fuzzer, seed 60606 #727), and the
# tangent of ``x + 1.0`` was ``x``'s own, so a write into the result changed the caller's
# tangent and the jvp.
def constant_minus_float_viewed(x):
    y = np.zeros(4) - x[0]
    return np.sum(y[::-1] * x)


def constant_column_minus_row(v):
    y = np.zeros((3, 1)) - v
    return y[1, 2] * y[2, 3] + np.sum(y)


def constant_minus_row_matmul(v):
    y = np.zeros((3, 4)) - v
    return np.sum(y.T @ y) + np.sum(y[:, 1])


def plus_constant_then_written(x):
    y = x + 1.0
    y[0] = 5.0
    return np.sum(y * x)


FORWARD_SHAPES = [constant_minus_float_viewed, constant_column_minus_row,
                  constant_minus_row_matmul, plus_constant_then_written]


@pytest.mark.parametrize("f", FORWARD_SHAPES, ids=[f.__name__ for f in FORWARD_SHAPES])
def test_elementwise_tangents_take_the_result_shape_in_every_mode(f):
    import numba
    g = numba.njit(f)
    v = np.array([0.3, -0.2, 0.5, 0.7])
    check_jvp(g, v)      # also checks the given tangent is left unchanged
    check_grad(g, v)
    check_hvp(g, v)
