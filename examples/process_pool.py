"""Minimise from several starting points in parallel: SciPy's BFGS with ``jac=`` from adjit,
run over a ``ProcessPoolExecutor``.

The gradient is built with ``cache=True``, so the parent compiles it once and writes it to
disk (beside this file, in ``__pycache__``, as ``numba.njit(cache=True)`` does). Each
worker receives it by pickle; a pickled transform is "this transform of this function",
and the worker rebuilds it and loads the compiled code from the disk cache instead of
deriving and compiling it again. Workers are started with "spawn", as on macOS and
Windows, so nothing is inherited from the parent's memory.
"""
import concurrent.futures
import multiprocessing

import numba
import numpy as np
from scipy.optimize import minimize, rosen_der

import adjit


@numba.njit
def rosenbrock(x):
    s = 0.0
    for i in range(x.size - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def solve(start, jac):
    """One local minimisation: the minimiser, and how often the worker loaded the gradient
    from the disk cache."""
    result = minimize(rosenbrock, start, jac=jac, method="BFGS", options={"gtol": 1e-10})
    hits = sum(jac.stats.cache_hits.values())
    return result.x, hits


def main():
    drosen = adjit.grad(rosenbrock, cache=True)
    starts = [np.array([-1.2, 1.0, 0.5, 2.0]), np.array([2.0, -1.5, 0.3, 0.7]),
              np.array([0.0, 0.0, 0.0, 0.0]), np.array([1.5, 1.5, -0.5, 1.0])]
    drosen(starts[0])  # compile once here; this writes the disk cache
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        results = list(pool.map(solve, starts, [drosen] * len(starts)))
    for start, (x, hits) in zip(starts, results):
        print(f"from {start} -> {np.round(x, 6)} (cache hits in the worker: {hits})")
        # 4-D Rosenbrock has a second local minimum near (-0.78, 0.61, 0.38, 0.15): check
        # against SciPy's own gradient from the same start, and that the gradient vanishes
        reference = minimize(rosenbrock, start, jac=rosen_der, method="BFGS",
                             options={"gtol": 1e-10}).x
        assert np.allclose(x, reference, atol=1e-6), (start, x, reference)
        assert np.abs(rosen_der(x)).max() < 1e-6
        np.testing.assert_allclose(drosen(x), rosen_der(x), rtol=1e-10, atol=1e-12)
        assert hits >= 1, "the worker compiled the gradient instead of loading it"


if __name__ == "__main__":
    main()
