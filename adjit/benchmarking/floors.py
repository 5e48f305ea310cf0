"""What a tape-based gradient and HVP of ``large_single_block`` cost at best, measured.

``python -m adjit.benchmarking.floors`` times, in one run and in compiled loops over
varying inputs (best of several rounds), the primal, adjit's ``grad`` and ``hvp``, and
the same derivatives written by hand the way a tape-based AD tool computes them
(``tape_grad`` and ``tape_hvp`` of the suite's ``large_single_block``, their tapes
allocated once). The primal is one chain of 400 dependent multiplies; any gradient that
records the chain and replays it backwards runs two such chains, and the HVP's two chains
take a multiply and an add per step. No code written this way goes below those floors,
which is why issue 13's bars for this row (grad 2.0, hvp 4) are not reached.
"""
import time

import numba
import numpy as np

import adjit


def _drivers(primal, grad, hvp, tape_grad, tape_hvp):
    """``@njit`` loops calling each function over the rows of the input arrays."""
    @numba.njit
    def run_primal(xs, vs, ys, yds):
        s = 0.0
        for i in range(xs.shape[0]):
            s += primal(xs[i])
        return s

    @numba.njit
    def run_grad(xs, vs, ys, yds):
        s = 0.0
        for i in range(xs.shape[0]):
            s += grad(xs[i])[i % 2]
        return s

    @numba.njit
    def run_tape_grad(xs, vs, ys, yds):
        s = 0.0
        for i in range(xs.shape[0]):
            s += tape_grad(xs[i], ys)[i % 2]
        return s

    @numba.njit
    def run_hvp(xs, vs, ys, yds):
        s = 0.0
        for i in range(xs.shape[0]):
            s += hvp(xs[i], vs[i])[i % 2]
        return s

    @numba.njit
    def run_tape_hvp(xs, vs, ys, yds):
        s = 0.0
        for i in range(xs.shape[0]):
            s += tape_hvp(xs[i], vs[i], ys, yds)[i % 2]
        return s

    return {"primal": run_primal, "grad": run_grad, "tape grad": run_tape_grad,
            "hvp": run_hvp, "tape hvp": run_tape_hvp}


def measure(rounds=15, calls=2000, seed=0):
    """Seconds per call of each function (best of ``rounds``), after checking that the
    hand-written derivatives give adjit's values."""
    from ..suite import large_single_block as w
    tape_grad, tape_hvp = numba.njit(w.tape_grad), numba.njit(w.tape_hvp)
    grad, hvp = adjit.grad(w.primal), adjit.hvp(w.primal)
    rng = np.random.default_rng(seed)
    xs = np.array([w.make_inputs(rng)[0] for _ in range(calls)])
    vs = rng.standard_normal((calls, 2))
    ys, yds = np.empty(w.N_MULTIPLIES), np.empty(w.N_MULTIPLIES)
    np.testing.assert_allclose(tape_grad(xs[0], ys), grad(xs[0]), rtol=1e-12)
    np.testing.assert_allclose(tape_hvp(xs[0], vs[0], ys, yds), hvp(xs[0], vs[0]),
                               rtol=1e-12)
    loops = _drivers(numba.njit(w.primal), grad, hvp, tape_grad, tape_hvp)
    best = {}
    for name, loop in loops.items():
        loop(xs, vs, ys, yds)  # compile
        best[name] = float("inf")
    for _ in range(rounds):  # interleaved, so a slow moment hits every function alike
        for name, loop in loops.items():
            start = time.perf_counter()
            loop(xs, vs, ys, yds)
            best[name] = min(best[name], (time.perf_counter() - start) / calls)
    return best


def report(best):
    """The timings as lines of text, each with its ratio to the primal."""
    return "\n".join(f"{name:<10} {seconds * 1e9:8.1f} ns  {seconds / best['primal']:5.2f} "
                     "x primal" for name, seconds in best.items())


if __name__ == "__main__":
    print(report(measure()))
