"""Idioms of real Numba code: a helper whose omitted default is a module-level NumPy
array (``def wsum(x, w=WEIGHTS)``), an ``@njit`` function or a tuple
(``def calc(u, func=update, tag=(0, 1))``), and unpacking a float array into scalars
(``a, b, c = params``, as arch's recursions do). All in every mode, against finite
differences."""
import numba
import numpy as np
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp

WEIGHTS = np.array([1.0, 2.0, 0.5])
KERNEL = np.array([[1.0, 0.2], [0.3, 2.0]])


@numba.njit
def weighted_squares(x, w=WEIGHTS, scale=2.0):
    return scale * np.sum(w * x * x)


@numba.njit
def quadratic_form(v, m=KERNEL):
    return v @ (m @ v)


def with_array_defaults(x):
    return weighted_squares(np.sin(x)) + quadratic_form(x[:2]) + weighted_squares(x, scale=0.5)


@numba.njit
def unpacked_recursion(params, y):
    omega, alpha, beta = params
    sigma2 = omega / (1.0 - alpha - beta)
    total = 0.0
    for t in range(y.shape[0]):
        total += np.log(sigma2) + y[t] ** 2 / sigma2
        sigma2 = omega + alpha * y[t] ** 2 + beta * sigma2
    return 0.5 * total


@numba.njit
def square_in_place(u, c):
    u[:] = c * u * u


@numba.njit
def iterate(u0, n=2, func=square_in_place, c=1.5, tag=(0, 1)):
    """laplace-style driver: an @njit function and a tuple as defaults."""
    u = u0.copy()
    for _ in range(n + tag[0]):
        func(u, c)
    return u


@numba.njit
def iterate_star(u0, n=2, func=square_in_place, args=(1.5,)):
    """laplace_test's driver: ``func(u, *args)`` with ``args`` a defaulted tuple."""
    u = u0.copy()
    for _ in range(n):
        func(u, *args)
    return u


def with_star_arguments(x):
    return np.sum(iterate_star(x) * np.array([1.0, 2.0, 3.0]))


def with_function_default(x):
    return np.sum(iterate(x) * np.array([1.0, 2.0, 3.0]))


X = np.array([0.3, -0.4, 0.9])
PARAMS = np.array([0.1, 0.15, 0.7])
Y = np.array([0.2, -0.5, 0.3, 0.8, -0.1])
CASES = [(with_array_defaults, (X,)), (unpacked_recursion, (PARAMS, Y)),
         (with_function_default, (X,)), (with_star_arguments, (X,))]


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
@pytest.mark.parametrize("f,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_every_mode(f, args, mode):
    {"grad": lambda: check_grad(f, *args),
     "jvp": lambda: check_jvp(f, *args),
     "hvp": lambda: check_hvp(f, *args)}[mode]()


def test_array_default_closed_form():
    import adjit
    x = np.array([0.3, -0.4, 0.9])
    expected = (2.0 * 2.0 * WEIGHTS * np.sin(x) * np.cos(x) + 0.5 * 2.0 * WEIGHTS * x)
    expected[:2] += (KERNEL + KERNEL.T) @ x[:2]
    np.testing.assert_allclose(adjit.grad(with_array_defaults)(x), expected, rtol=1e-12)


def test_function_default_closed_form():
    import adjit
    # two squarings with c = 1.5: u -> 1.5 u^2 -> 3.375 u^4
    np.testing.assert_allclose(adjit.grad(with_function_default)(X),
                               13.5 * X ** 3 * np.array([1.0, 2.0, 3.0]), rtol=1e-12)
