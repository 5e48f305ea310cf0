"""Run workloads: compile, check correctness, then time primal / gradient / jvp / hvp.

Every row is a flat dict (see ``ROW_KEYS``). Status is ``ok``, ``wrong`` (gradient disagrees
with its reference; never timed), ``unsupported: <first line>`` (adjit or numba refused to
compile the gradient), ``error: <first line>`` (it compiled but raised) or
``primal failed: <first line>`` (numba cannot compile or run the primal itself).
"""
import os
import platform
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Optional

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError

from . import checks, drivers

ROW_KEYS = (
    "name", "status", "primal_s", "primal_median_s", "grad_s", "grad_median_s", "ratio",
    "ratio_median", "hand_s", "hand_ratio", "jvp_s", "jvp_ratio", "hvp_s", "hvp_ratio",
    "primal_compile_s", "grad_compile_s", "primal_first_s", "grad_first_s", "jvp_first_s",
    "hvp_first_s", "cached_first_s", "warm_first_s", "hand_status", "jvp_status", "hvp_status",
    "ref_enzyme", "ref_mooncake", "argnums", "calls", "pool", "rounds", "origin", "error",
)


@dataclass
class Config:
    """How hard to measure: rounds, seconds per round, input pool size, fixed repeat count."""

    rounds: int = 7
    target_s: float = 0.05
    pool_bytes: int = 8 << 20
    max_pool: int = 64
    repeat: Optional[int] = None
    check_inputs: int = 2
    fd_dirs: int = 3
    seed: int = 0
    compile_times: bool = False  # also time first derivatives in fresh processes
    disk_cache: bool = False  # primals and derivatives through the disk cache

    @classmethod
    def quick(cls, repeat=None):
        """Few rounds, short rounds, tiny input pool, compiled code from the disk cache
        (written by the first such run) and calls timed from Python (no driver to
        compile): a smoke test, which a repeated run finishes in well under a minute,
        where compiling every derivative takes minutes."""
        return cls(rounds=2, target_s=0.002, max_pool=4, repeat=repeat, check_inputs=1,
                   fd_dirs=2, disk_cache=True)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BORING = ("Failed in ", "During: ", "- Resolution failure", "No implementation of function")


def first_line(exc):
    """The first informative line of an exception message (numba banners skipped)."""
    lines = [_ANSI.sub("", ln).strip() for ln in str(exc).splitlines()]
    lines = [ln for ln in lines if ln]
    useful = [ln for ln in lines if not ln.startswith(_BORING)]
    text = (useful or lines or [type(exc).__name__])[0]
    return text[:200]


def classify(exc):
    """Status for an exception from compiling or calling a derivative."""
    try:
        from adjit.errors import AdjitError
    except ImportError:  # pragma: no cover
        AdjitError = ()
    if isinstance(exc, (AdjitError, NumbaError, NotImplementedError)):
        return f"unsupported: {first_line(exc)}"
    return f"error: {type(exc).__name__}: {first_line(exc)}"


def _full_error(exc):
    """A bounded full message for the JSON ``error`` field."""
    return _ANSI.sub("", f"{type(exc).__name__}: {exc}")[:4000]


def machine_info():
    """CPU model, core count, OS and the versions that matter for the numbers."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {
        "cpu": cpu or platform.machine(), "cores": os.cpu_count(),
        "machine": platform.machine(), "platform": platform.platform(),
        "python": platform.python_version(), "numba": numba.__version__,
        "numpy": np.__version__, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    info["blas_threads"] = {v: os.environ.get(v) for v in
                            ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    for mod in ("llvmlite", "scipy", "adjit"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:
            info[mod] = None
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        info["adjit_commit"] = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True, timeout=5).stdout.strip() or None
    except Exception:
        info["adjit_commit"] = None
    return info


def _adjit_transform(name):
    """``adjit.<name>`` or None when the transform does not exist (yet)."""
    try:
        import adjit
    except ImportError:  # pragma: no cover
        return None
    return getattr(adjit, name, None)


def _jit(fn, cache=False):
    """A numba dispatcher for ``fn`` (unchanged if it already is one)."""
    return fn if isinstance(fn, Dispatcher) else numba.njit(fn, cache=cache)


def _compile_and_call(make, args):
    """Build a callable with ``make()``, call it once on ``args``; return (fn, out, seconds)."""
    t0 = time.perf_counter()
    fn = make()
    out = fn(*args)
    return fn, out, time.perf_counter() - t0


def _ref_str(rng):
    """'lo-hi' (or 'x') for a published ratio range, None if absent."""
    if not rng:
        return None
    lo, hi = rng
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


class WorkloadRun:
    """State and steps for benchmarking one workload; ``run()`` returns its row."""

    def __init__(self, workload, config, progress=None, transforms=None):
        """``transforms`` maps 'grad'/'jvp'/'hvp' to factories, overriding adjit's (for tests)."""
        self.w = workload
        self.cfg = config
        self.say = progress or (lambda msg: None)
        self.transforms = transforms or {}
        self.rng = np.random.default_rng(config.seed)
        self.row = {k: None for k in ROW_KEYS}
        self.row.update(name=workload.name, origin=workload.origin,
                        argnums=list(workload.argnums_tuple), rounds=config.rounds,
                        ref_enzyme=_ref_str(workload.reference.get("enzyme")),
                        ref_mooncake=_ref_str(workload.reference.get("mooncake")))

    def transform(self, name):
        """The factory for transform ``name``: an override, or adjit's own (through the
        disk cache when the config says so)."""
        if self.transforms.get(name):
            return self.transforms[name]
        factory = _adjit_transform(name)
        if factory is None or not self.cfg.disk_cache:
            return factory
        return lambda *args, **kwargs: factory(*args, cache=True, **kwargs)

    # -- inputs ---------------------------------------------------------------------------
    def make_pool(self):
        """Pre-generate the P input tuples (and matching random tangents) used for timing."""
        first = tuple(self.w.make_inputs(self.rng))
        nbytes = max(1, drivers.input_nbytes(first))
        pool = int(min(self.cfg.max_pool, max(2, self.cfg.pool_bytes // nbytes)))
        if self.cfg.repeat:
            pool = max(1, min(pool, self.cfg.repeat))
        self.inputs = [first] + [tuple(self.w.make_inputs(self.rng)) for _ in range(pool - 1)]
        self.float_idx = checks.float_arg_indices(first)
        self.tangents = [tuple(checks.random_like(inp[i], self.rng) for i in self.float_idx)
                         for inp in self.inputs]
        self.packed = drivers.pack_inputs(self.inputs)
        self.packed_tan = drivers.pack_inputs([a + t for a, t in zip(self.inputs, self.tangents)])
        self.row["pool"] = pool

    def _check_sets(self):
        """Indices of the pool inputs used for correctness checks."""
        return range(min(self.cfg.check_inputs, len(self.inputs)))

    # -- steps ----------------------------------------------------------------------------
    def primal(self):
        """Compile and run the primal; False (with a status) if numba cannot."""
        try:
            cache = self.cfg.disk_cache
            self.primal_fn, out, dt = _compile_and_call(lambda: _jit(self.w.primal, cache),
                                                        self.inputs[0])
        except Exception as exc:
            self.row.update(status=f"primal failed: {first_line(exc)}", error=_full_error(exc))
            return False
        self.row["primal_compile_s"] = dt
        if not isinstance(out, (float, np.floating)):
            self.row["status"] = (f"primal failed: returns {type(out).__name__}; "
                                  f"a gradient needs a float scalar")
            return False
        return True

    def hand(self):
        """Compile and verify the hand-written gradient against finite differences."""
        self.hand_fn = None
        if self.w.hand_grad is None:
            return
        try:
            cache = self.cfg.disk_cache
            fn, _, _ = _compile_and_call(lambda: _jit(self.w.hand_grad, cache), self.inputs[0])
            for j in self._check_sets():
                out = fn(*self.inputs[j])
                checks.check_structure(out, self.inputs[j], self.w.argnums)
                checks.check_grad_fd(self.primal_fn, out, self.inputs[j], self.w.argnums,
                                     self.rng, self.cfg.fd_dirs)
        except checks.CheckFailed as exc:
            self.row["hand_status"] = f"wrong: {exc}"
            return
        except Exception as exc:
            self.row["hand_status"] = classify(exc)
            return
        self.row["hand_status"] = "ok"
        self.hand_fn = fn

    def grad(self):
        """Build adjit's gradient, time its first call, and check it; True if correct."""
        self.grad_fn = None
        factory = self.transform("grad")
        if factory is None:
            self.row["status"] = "unsupported: adjit.grad is not available"
            return False
        argnums = self.w.argnums
        try:
            fn, _, dt = _compile_and_call(lambda: factory(self.w.primal, argnums=argnums),
                                          self.inputs[0])
        except Exception as exc:
            self.row.update(status=classify(exc), error=_full_error(exc))
            return False
        self.row["grad_compile_s"] = dt
        try:
            for j in self._check_sets():
                out = fn(*self.inputs[j])
                checks.check_structure(out, self.inputs[j], argnums)
                if self.hand_fn is not None:
                    checks.compare_grads(out, self.hand_fn(*self.inputs[j]), argnums)
                else:
                    checks.check_grad_fd(self.primal_fn, out, self.inputs[j], argnums,
                                         self.rng, self.cfg.fd_dirs)
        except checks.CheckFailed as exc:
            self.row.update(status="wrong", error=str(exc))
            return False
        except Exception as exc:
            self.row.update(status=classify(exc), error=_full_error(exc))
            return False
        self.row["status"] = "ok"
        self.grad_fn = fn
        return True

    def forward(self, kind):
        """Build and check ``adjit.jvp`` or ``adjit.hvp``; return the callable or None."""
        factory = self.transform(kind)
        if factory is None:
            self.row[f"{kind}_status"] = "unavailable"
            return None
        ref_grad = self.hand_fn or self.grad_fn
        if kind == "hvp" and ref_grad is None:
            self.row["hvp_status"] = "unchecked: no verified gradient to compare with"
            return None
        argnums = self.w.argnums

        def make():
            """jvp(f); hvp(f, argnums) falling back to hvp(f) for the default argnums."""
            if kind == "jvp":
                return factory(self.w.primal)
            try:
                return factory(self.w.primal, argnums=argnums)
            except TypeError:
                if argnums != 0:
                    raise
                return factory(self.w.primal)
        try:
            fn, _, _ = _compile_and_call(make, self.inputs[0] + self.tangents[0])
            for j in self._check_sets():
                args = self.inputs[j] + self.tangents[j]
                if kind == "jvp":
                    checks.check_jvp(self.primal_fn, fn(*args), self.inputs[j],
                                     self.tangents[j], self._all_grads(ref_grad, j))
                else:
                    checks.check_hvp(ref_grad, fn(*args), self.inputs[j], self.tangents[j],
                                     argnums)
        except checks.CheckFailed as exc:
            self.row[f"{kind}_status"] = f"wrong: {exc}"
            return None
        except Exception as exc:
            self.row[f"{kind}_status"] = classify(exc)
            return None
        self.row[f"{kind}_status"] = "ok"
        return fn

    def _all_grads(self, ref_grad, j):
        """The verified gradients of every float argument at input set ``j`` (in order),
        or None when argnums does not cover them all."""
        idx = checks.float_arg_indices(self.inputs[j])
        nums = self.w.argnums if isinstance(self.w.argnums, tuple) else (self.w.argnums,)
        if ref_grad is None or tuple(nums) != tuple(idx):
            return None
        g = ref_grad(*self.inputs[j])
        return g if isinstance(g, tuple) else (g,)

    # -- timing ---------------------------------------------------------------------------
    def timer(self, fn, packed, label):
        """Calibrate ``fn`` (compiling its driver loop); return ``(one_round, calls)`` for
        ``drivers.time_interleaved`` (may raise)."""
        if self.cfg.disk_cache:  # --quick: nothing to compile, see python_round
            one_round, calls = drivers.python_round(fn, packed, self.cfg.target_s,
                                                    len(self.inputs), calls=self.cfg.repeat)
            self.say(f"    timing {label} from Python: {self.cfg.rounds} x {calls}")
            return one_round, calls
        structure = drivers.structure_of(fn(*drivers.unpack_input(packed, 0)))
        if self.cfg.repeat:
            drivers.run_driver(fn, packed, structure, 1)  # compile the driver and warm up
            calls = self.cfg.repeat
        else:
            calls = drivers.calibrate(fn, packed, structure, self.cfg.target_s,
                                      min_calls=len(self.inputs))
        self.say(f"    timing {label}: {self.cfg.rounds} x {calls} calls")
        return (lambda: drivers.run_driver(fn, packed, structure, calls)), calls

    def time(self, fn, packed, label):
        """Time ``fn`` alone; return a Timing (may raise)."""
        result = drivers.time_interleaved({label: self.timer(fn, packed, label)},
                                          self.cfg.rounds)[label]
        if isinstance(result, Exception):
            raise result
        return result

    def timed(self, jvp_fn, hvp_fn):
        """Calibrate every callable there is, then time them side by side, one round of
        each in turn (``drivers.time_interleaved``). Returns ``{label: Timing or
        exception}``; the primal's exception ends the row."""
        timers = {}
        for label, fn, packed in (("primal", self.primal_fn, self.packed),
                                  ("grad", self.grad_fn, self.packed),
                                  ("hand", self.hand_fn, self.packed),
                                  ("jvp", jvp_fn, self.packed_tan),
                                  ("hvp", hvp_fn, self.packed_tan)):
            if fn is None:
                continue
            try:
                timers[label] = self.timer(fn, packed, label)
            except Exception as exc:
                timers[label] = exc
        ready = {k: v for k, v in timers.items() if not isinstance(v, Exception)}
        self.say(f"    timing {', '.join(ready)} side by side, {self.cfg.rounds} rounds")
        return {**timers, **drivers.time_interleaved(ready, self.cfg.rounds)}

    def run(self):
        """All steps for this workload; returns the finished row."""
        self.make_pool()
        self.say("    compiling primal")
        if not self.primal():
            return self.row
        if self.w.hand_grad is not None:
            self.say("    checking hand-written gradient")
            self.hand()
        else:
            self.hand_fn = None
        self.say("    compiling and checking adjit.grad")
        self.grad()
        timings = self.timed(self.forward("jvp"), self.forward("hvp"))
        t_primal = timings.pop("primal")
        if isinstance(t_primal, Exception):
            self.row.update(status=f"primal failed: timing: {first_line(t_primal)}",
                            error=_full_error(t_primal))
            return self.row
        base = t_primal.best
        self.row.update(primal_s=base, primal_median_s=t_primal.median, calls=t_primal.calls)
        t = timings.pop("grad", None)
        if isinstance(t, Exception):
            self.row.update(status=f"error: timing: {first_line(t)}", error=_full_error(t))
        elif t is not None:
            self.row.update(grad_s=t.best, grad_median_s=t.median, ratio=t.best / base,
                            ratio_median=drivers.paired_median_ratio(t, t_primal))
        for label, t in timings.items():
            if isinstance(t, Exception):
                self.row[f"{label}_status"] = f"error: timing: {first_line(t)}"
                continue
            self.row[f"{label}_s"] = t.best
            self.row[f"{label}_ratio"] = t.best / base
        return self.row


def warm_up():
    """Compile one tiny driver so numba's one-off start-up cost is not charged to a row."""
    fn = numba.njit(lambda x: x[0])
    packed = drivers.pack_inputs([(np.zeros(1),), (np.ones(1),)])
    drivers.run_driver(fn, packed, "s", 2)


def error_row(name, exc):
    """The row of a workload whose harness failed (not its derivative): reported, and
    the run goes on."""
    row = {k: None for k in ROW_KEYS}
    row.update(name=name, status=f"error: {type(exc).__name__}: {first_line(exc)}",
               error=_full_error(exc))
    return row


def run_workloads(workloads, config=None, progress=None, transforms=None):
    """Benchmark ``workloads`` in order; return the list of row dicts."""
    config = config or Config()
    say = progress or (lambda msg: None)
    warm_up()
    rows = []
    for i, w in enumerate(workloads, 1):
        say(f"[{i}/{len(workloads)}] {w.name}")
        t0 = time.perf_counter()
        try:
            row = WorkloadRun(w, config, say, transforms).run()
        except Exception as exc:  # a harness or input-generation failure: report, go on
            row = error_row(w.name, exc)
        if config.compile_times and w.origin.startswith("adjit.suite"):
            from .compile_times import compile_times
            row.update(compile_times(w.name, progress=say))
        say(f"    -> {row['status']} ({time.perf_counter() - t0:.1f}s)")
        rows.append(row)
    return rows
