"""Quick start: gradients of a Numba-style loop, checked against finite differences.

Run: python examples/quickstart.py
"""
import math

import numba
import numpy as np

import adjit
import adjit.testing


@numba.njit
def rosenbrock(x):
    """A loop over an array, the way a Numba user writes it (adjit takes plain Python
    functions too; this one is @njit because rosenbrock_scaled calls it)."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


@adjit.grad
def dsoftplus_sum(x, scale):
    """Branches and math calls are fine too; @adjit.grad makes the gradient directly."""
    s = 0.0
    for v in x:
        s += math.log1p(math.exp(scale * v)) if v < 20.0 else scale * v
    return s


def main():
    x = np.linspace(-1.0, 1.5, 6)
    g = adjit.grad(rosenbrock)(x)
    print("grad rosenbrock:", g)
    adjit.testing.check_grad(rosenbrock, x)

    # gradients are Numba dispatchers: call them from compiled code
    rosen_grad = adjit.grad(rosenbrock)

    @numba.njit
    def gradient_descent(x, steps, lr):
        x = x.copy()
        for _ in range(steps):
            x -= lr * rosen_grad(x)
        return x

    x_opt = gradient_descent(np.zeros(4), 20000, 1e-3)
    print("after gradient descent:", x_opt, "f =", rosenbrock(x_opt))
    assert rosenbrock(x_opt) < 1e-3

    print("d/dx softplus sum:", dsoftplus_sum(x, 0.5))
    value, (gx, gscale) = adjit.value_and_grad(rosenbrock_scaled, argnums=(0, 1))(x, 2.0)
    print("value_and_grad with two argnums:", value, gx, gscale)


def rosenbrock_scaled(x, a):
    return a * rosenbrock(x)


if __name__ == "__main__":
    main()
