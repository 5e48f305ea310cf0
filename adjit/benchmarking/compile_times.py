"""Time to first derivative, each figure from a fresh process (``adjit bench --compile``).

Compile time depends on what a process has compiled before (Numba's registries, shared
callees, adjit's own rule kernels), so every figure is measured in a new Python process:

- ``primal``: ``numba.njit(f)`` and its first call;
- ``grad``, ``jvp``, ``hvp``: the transform and its first call, with nothing on disk
  (adjit's rule kernels compiled too);
- ``warm``: ``grad`` again in a new process that finds the rule kernels the ``grad``
  process left on disk (``compile/kernel_cache.py``): the first gradient of a new
  function on a machine where adjit has run before;
- ``cached``: ``grad(f, cache=True)``'s first call in a process started after another
  process wrote the disk cache (a fresh ``NUMBA_CACHE_DIR`` per workload).

Each process first compiles a one-line ``@njit`` function, so Numba's one-off start-up
(loading its typing and lowering registries, about half a second) is charged to no
column. Run as ``python -m adjit.benchmarking.compile_times NAME WHAT`` it measures one
figure and prints it as JSON.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

KINDS = ("primal", "grad", "warm", "jvp", "hvp", "cached")


def _inputs(workload):
    """The workload's first inputs and a tangent per float argument (as the runner)."""
    import numpy as np

    from . import checks
    rng = np.random.default_rng(0)
    inputs = tuple(workload.make_inputs(rng))
    tangents = tuple(checks.random_like(inputs[i], rng)
                     for i in checks.float_arg_indices(inputs))
    return inputs, tangents


def measure(name, kind):
    """Seconds to build and first call ``kind`` of the suite workload ``name``, in this
    (fresh) process."""
    import numba

    import adjit

    from .workloads import discover
    numba.njit(lambda v: v + 1.0)(1.0)  # Numba's start-up, charged to nothing
    (workload,) = [w for w in discover(f"^{name}$")]
    inputs, tangents = _inputs(workload)
    f, argnums = workload.primal, workload.argnums
    start = time.perf_counter()
    if kind == "primal":
        py_func = getattr(f, "py_func", f)
        numba.njit(py_func)(*inputs)
    elif kind in ("grad", "cached", "write"):
        g = adjit.grad(f, argnums=argnums, cache=kind != "grad")
        g(*inputs)
        if kind == "cached" and not sum(g.stats.cache_hits.values()):
            raise RuntimeError("the gradient was compiled, not loaded from the disk cache")
    elif kind == "jvp":
        adjit.jvp(f)(*inputs, *tangents)
    elif kind == "hvp":
        adjit.hvp(f, argnums=argnums)(*inputs, *tangents)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return time.perf_counter() - start


def _in_fresh_process(name, kind, env):
    """``measure(name, kind)`` in a new interpreter; seconds, or None if it failed."""
    proc = subprocess.run([sys.executable, "-m", "adjit.benchmarking.compile_times", name,
                           kind], capture_output=True, text=True, env=env, timeout=1800)
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
    except (ValueError, IndexError, KeyError):
        return None


def compile_times(name, kinds=KINDS, progress=None):
    """``{kind + "_first_s": seconds}`` for one suite workload, each from a fresh process
    with its own empty ``NUMBA_CACHE_DIR``, so none finds adjit's rule kernels on disk;
    ``warm`` is ``grad`` again, in the directory where the ``grad`` process wrote them;
    ``cached`` follows a process that wrote the derivative itself."""
    say = progress or (lambda msg: None)
    out = {}
    with tempfile.TemporaryDirectory(prefix="adjit-bench-cache-") as root:
        def env_for(kind):
            """An environment whose NUMBA_CACHE_DIR belongs to ``kind``."""
            directory = os.path.join(root, kind)
            os.makedirs(directory, exist_ok=True)
            return dict(os.environ, NUMBA_CACHE_DIR=directory)
        for kind in kinds:
            say(f"    first {kind} in a fresh process")
            if kind == "warm":
                out["warm_first_s"] = _in_fresh_process(name, "grad", env_for("grad"))
                continue
            env = env_for(kind)
            if kind == "cached" and _in_fresh_process(name, "write", env) is None:
                out["cached_first_s"] = None
                continue
            out[f"{kind}_first_s"] = _in_fresh_process(name, kind, env)
    return out


def main(argv):
    name, kind = argv
    try:
        print(json.dumps({"seconds": measure(name, kind)}))
    except Exception as exc:  # reported as a missing figure, with the reason on stderr
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
