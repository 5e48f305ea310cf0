"""What a gradient written by hand costs Numba to compile, against the primal (issue 12).

``python -m adjit.benchmarking.compile_floors`` compiles, each in a fresh process with
an empty ``NUMBA_CACHE_DIR`` and after Numba's start-up (as ``compile_times`` does, with
adjit imported), ``scalar_loop_branch``'s primal and its reverse-mode gradient written by
hand (``tape_grad``: a forward loop recording the branches and ``cos(x i)``, then the
reverse loop). No gradient that records and replays the loop compiles in less, since
Numba compiles both loops; adjit's own first gradient adds its capture and transform.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def measure(kind):
    """Seconds to compile and first call ``kind`` (``primal`` or ``tape_grad``) here."""
    import numba

    import adjit  # noqa: F401  (as in compile_times: Numba's registries as adjit leaves them)
    from ..suite import scalar_loop_branch as w
    numba.njit(lambda v: v + 1.0)(1.0)  # Numba's start-up, charged to nothing
    start = time.perf_counter()
    if kind == "primal":
        numba.njit(w.primal)(0.3)
    else:
        numba.njit(w.tape_grad)(0.3, np.zeros(1000, np.bool_), np.zeros(1000))
    return time.perf_counter() - start


def in_fresh_processes(kind, repeats=3):
    """The best of ``repeats`` fresh processes, each with its own empty cache directory."""
    best = float("inf")
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="adjit-floor-") as cache:
            proc = subprocess.run(
                [sys.executable, "-m", "adjit.benchmarking.compile_floors", kind],
                capture_output=True, text=True, check=True,
                env=dict(os.environ, NUMBA_CACHE_DIR=cache))
        best = min(best, json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])
    return best


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps({"seconds": measure(sys.argv[1])}))
    else:
        primal, hand = in_fresh_processes("primal"), in_fresh_processes("tape_grad")
        print(f"scalar_loop_branch: primal {primal * 1e3:.1f} ms, hand-written tape "
              f"gradient {hand * 1e3:.1f} ms ({hand / primal:.2f} x the primal)")
