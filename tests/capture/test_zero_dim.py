"""0-d arrays (``adjit/capture/zero_dim.py``): operators, ufuncs and reductions of 0-d
arrays are scalar code, ``np.asarray(s)`` of a scalar is ``np.full((), s)``, and an
in-place update of a 0-d array writes ``a[()]``. Each case in grad, jvp and hvp."""
import numpy as np
import pytest
from numba import njit

from adjit.testing import check_grad, check_hvp, check_jvp


@njit
def zero_d_argument(a):
    return np.sum(a * a) + np.sin(a[()]) + a.max() * np.mean(np.exp(a))


@njit
def scalar_to_zero_d(x):
    a = np.asarray(x)
    b = np.array(x * x)
    return np.sum(a * a * 3.0) + np.sum(np.exp(b))


@njit
def sum_of_a_scalar(v):
    s = np.sum(v)
    return np.sum(np.asarray(s)) * np.sum(s)


@njit
def zero_d_accumulator(x):
    acc = np.zeros(())
    for i in range(x.shape[0]):
        acc[()] = acc[()] + x[i] * x[i]
    return np.sum(acc)


@njit
def inplace_zero_d(x):
    acc = np.zeros(())
    for i in range(x.shape[0]):
        acc += np.sin(x[i])
    acc *= x[0]
    return acc[()]


@njit
def broadcast_zero_d(a, v):
    return np.sum(a * v * v) + np.sum(np.sqrt(a))


@njit
def _boxed(s):
    return np.asarray(s * 2.0)


@njit
def helper_returns_zero_d(x):
    return np.sum(_boxed(x[0]) * x[1])


@njit
def _accumulate_cubes(s, x):
    for i in range(x.shape[0]):
        s[()] += x[i] * x[i] * x[i]


@njit
def helper_writes_zero_d(x):
    s = np.zeros(())
    _accumulate_cubes(s, x)  # the reverse pass snapshots s: a 0-d np.copy
    return s[()] * x[0]


@njit
def copied_zero_d(x):
    s = np.zeros(())
    s[()] = x[0] * x[1]
    t = s.copy()
    t *= x[2]
    return np.sum(np.copy(t)) * x[1]


def scalar_item(x):
    """``.item()`` of a NumPy scalar (a reduction, a sum method) is the scalar itself."""
    return np.sum(x * x).item() * x[1:].sum().item() + np.float64(x[0]).item() ** 3


VEC = np.array([0.3, -0.5, 0.8])
CASES = {
    "scalar_item": (scalar_item, (VEC,)),
    "zero_d_argument": (zero_d_argument, (np.array(0.7),)),
    "scalar_to_zero_d": (scalar_to_zero_d, (0.7,)),
    "sum_of_a_scalar": (sum_of_a_scalar, (VEC,)),
    "zero_d_accumulator": (zero_d_accumulator, (VEC,)),
    "inplace_zero_d": (inplace_zero_d, (VEC,)),
    "broadcast_zero_d": (broadcast_zero_d, (np.array(1.3), VEC)),
    "helper_returns_zero_d": (helper_returns_zero_d, (VEC,)),
    "helper_writes_zero_d": (helper_writes_zero_d, (VEC,)),
    "copied_zero_d": (copied_zero_d, (VEC,)),
}
CHECKS = {"grad": check_grad, "jvp": check_jvp, "hvp": check_hvp}


@pytest.mark.parametrize("mode", list(CHECKS))
@pytest.mark.parametrize("case", list(CASES))
def test_zero_d_arrays(case, mode):
    f, args = CASES[case]
    CHECKS[mode](f, *args)


def test_zero_d_closed_form():
    # d/da [a^2 + sin a + a e^a] at a 0-d array, and the gradient keeps the 0-d shape
    import adjit
    a = np.array(0.7)
    g = adjit.grad(zero_d_argument)(a)
    assert isinstance(g, np.ndarray) and g.shape == ()
    want = 2 * 0.7 + np.cos(0.7) + np.exp(0.7) * (1 + 0.7)
    np.testing.assert_allclose(g, want, rtol=1e-13)
    np.testing.assert_allclose(adjit.grad(scalar_to_zero_d)(0.7),
                               6 * 0.7 + 2 * 0.7 * np.exp(0.49), rtol=1e-13)


def test_zero_d_written_by_a_helper_hessian():
    # f = x0 * sum(x^3): H = 6 x0 diag(x) + 3 (e0 x^2' + x^2 e0'); hvp was refused
    # (forward mode turned the 0-d snapshot's tangent 1-D)
    import adjit
    x, v = VEC, np.array([0.2, 0.7, -0.4])
    e0 = np.eye(3)[0]
    hess = 6 * x[0] * np.diag(x) + 3 * (np.outer(e0, x * x) + np.outer(x * x, e0))
    np.testing.assert_allclose(adjit.hvp(helper_writes_zero_d)(x, v), hess @ v, rtol=1e-12)
    # copied_zero_d = x0 x1^2 x2
    a, b, c = x
    hess = np.array([[0, 2 * b * c, b * b], [2 * b * c, 2 * a * c, 2 * a * b],
                     [b * b, 2 * a * b, 0]])
    np.testing.assert_allclose(adjit.hvp(copied_zero_d)(x, v), hess @ v, rtol=1e-12)
