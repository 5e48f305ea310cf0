"""Arrays written in place after the reverse pass needs their values (found by a bug hunt
over NumPy-heavy code):

- the result of a rule that reads its own result (``np.cumprod``, ``np.linalg.solve``,
  ``inv``, ``cholesky``) overwritten in the block that made it: the rule must see the
  result as it was made (the gradients were wrong, silently);
- a Fortran-ordered array (an argument passed as ``X.T``, the result of ``inv``, 2-D
  ``solve`` or ``eigh``) read, then written: its snapshot keeps its layout (the
  generated code did not compile).

Every mode is checked against finite differences."""
import numba
import numpy as np
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp


def cumprod_overwritten(x):
    y = np.cumprod(x)
    y[1] = 2.0 * y[0]
    return np.sum(y * y)


def solve_overwritten(a, b):
    x = np.linalg.solve(a, b)
    x[1] = 3.0 * x[0]
    return np.sum(x * x)


def cholesky_overwritten(s):
    low = np.linalg.cholesky(s)
    low[1, 0] = 0.0
    return np.sum(low * low * low)


def inverse_column_scaled(a):
    ai = np.linalg.inv(a)
    ai[:, 0] *= 2.0
    return np.sum(ai * a)


def transposed_argument_written(x, c):
    s = np.sum(np.sin(x) * x)
    x[:, 0] *= c
    return s + np.sum(x * x * x)


def solved_rows_written(a, b):
    x = np.linalg.solve(a, b)
    s = np.sum(x * x)
    x[0, :] = 2.0 * x[1, :]
    return s + np.sum(x * x * a)


A = np.array([[3.0, 1.0, 0.0], [0.5, 2.0, 0.1], [0.2, 0.4, 2.5]])
B = np.array([1.0, 0.2, 0.3])
X4 = np.array([0.3, 1.2, -0.7, 0.45])

CASES = [
    (cumprod_overwritten, (X4,), 0),
    (solve_overwritten, (A, B), (0, 1)),
    # not symmetric: cholesky reads the lower triangle, and the checks perturb every entry
    (cholesky_overwritten, (A @ A.T + np.triu(A, 1) * 0.1,), 0),
    (inverse_column_scaled, (A,), 0),
    (transposed_argument_written, (A.copy().T, 0.7), (0, 1)),
    (solved_rows_written, (A, A.T @ A), (0, 1)),
]
IDS = [c[0].__name__ for c in CASES]


def _args(args):
    return tuple(a.copy().T.copy().T if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_grad(f, args, argnums):
    check_grad(f, *_args(args), argnums=argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp(f, args, argnums):
    check_jvp(f, *_args(args))


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_hvp(f, args, argnums):
    check_hvp(f, *_args(args), argnums=argnums)


@numba.njit
def _accumulate_4d(x, out):
    for i in range(2):
        for j in range(2):
            out[i, j, 0, 0] += x[i] * x[j]


def filled_4d(x):
    # numba-examples' fbcorr: a helper accumulating into a 4-D output
    out = np.zeros((2, 2, 1, 1))
    _accumulate_4d(x, out)
    return np.sum(out.reshape(4) * np.arange(1.0, 5.0))


def test_a_4d_array_a_helper_writes_under_hvp():
    """The reverse pass snapshots the 4-D array; forward mode over it copies it too
    (hvp refused 'np.copy', which the user never wrote)."""
    x = np.array([0.3, 0.7])
    check_grad(filled_4d, x)
    check_jvp(filled_4d, x)
    check_hvp(filled_4d, x)
