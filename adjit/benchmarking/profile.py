"""Where a gradient's time goes (``adjit bench --profile NAME``).

For one suite workload, measured in one run with the benchmark drivers (compiled loops
over varying inputs, best of several rounds):

- the primal, the whole gradient, and the forward sweep alone (the gradient's forward
  pass, pushing its tape records, which are then dropped); the reverse sweep is the
  difference. A forward sweep whose records hold arrays is not timed alone: only the
  reverse sweep releases those arrays, so alone it would leak them, and each call would
  fault fresh pages in (this once read ``simple_mlp``'s forward sweep as 1.9 times its
  primal);
- the words and bytes the forward sweep pushes on the tape per call;
- heap allocations per call (Numba's NRT counters, over the compiled loop) of the primal
  and of the gradient;
- whether LLVM vectorised the loops: the vector operations (``<4 x double>`` and the
  like) in the optimised LLVM IR of the primal and of the gradient.
"""
import contextlib
import re
from dataclasses import dataclass, replace

import numba
from numba.core.runtime import _nrt_python, rtsys

from . import drivers
from .report import fmt_time
from .runner import Config, WorkloadRun

_VECTOR = re.compile(r"<(\d+) x (double|float)>")


@dataclass
class Profile:
    """The measurements of one workload (seconds per call, counts per call)."""

    name: str
    primal_s: float
    grad_s: float
    forward_s: float  # None when the records hold arrays (not measured alone)
    tape_words: int
    primal_allocs: float
    grad_allocs: float
    primal_vector_ops: int
    grad_vector_ops: int

    def report(self):
        """The profile as a few aligned lines of text."""
        rows = [("primal", self.primal_s, 1.0),
                ("gradient", self.grad_s, self.grad_s / self.primal_s)]
        if self.forward_s is not None:
            reverse = max(0.0, self.grad_s - self.forward_s)
            rows += [("  forward sweep", self.forward_s, self.forward_s / self.primal_s),
                     ("  reverse sweep (gradient - forward)", reverse,
                      reverse / self.primal_s)]
        out = [f"adjit profile: {self.name}"]
        out += [f"  {label:<38} {fmt_time(t):>10}  {r:6.2f} x primal" for label, t, r in rows]
        if self.forward_s is None:
            out.append(f"  {'forward sweep, reverse sweep':<38} not timed apart: the "
                       "records hold arrays, which only the reverse sweep releases")
        facts = [
            ("tape pushed per call", f"{self.tape_words} words ({8 * self.tape_words} bytes)"),
            ("heap allocations per call",
             f"primal {self.primal_allocs:g}, gradient {self.grad_allocs:g}"),
            ("vector operations in optimised IR",
             f"primal {self.primal_vector_ops}, gradient {self.grad_vector_ops} "
             "(0: no loop was vectorised)"),
        ]
        out += [f"  {label:<38} {text}" for label, text in facts]
        return "\n".join(out)


def vector_ops(dispatcher):
    """How many vector-typed values the optimised LLVM IR of ``dispatcher`` (all its
    compiled signatures) contains."""
    return sum(len(_VECTOR.findall(text)) for text in dispatcher.inspect_llvm().values())


def forward_sweep(fwd_tape):
    """An ``@njit`` function running only ``fwd_tape`` (a gradient's forward pass): it
    pushes the records, drops them again and returns how many words it pushed."""
    from ..runtime import tape_acquire, tape_depth, tape_set_depth

    @numba.njit
    def sweep(*args):
        tape = tape_acquire()
        depth = tape_depth(tape)
        fwd_tape(tape, *args)
        pushed = tape_depth(tape) - depth
        tape_set_depth(tape, depth)
        return float(pushed)
    return sweep


@contextlib.contextmanager
def _nrt_statistics():
    """Numba's NRT allocation counters on while the body runs (as they were after)."""
    was_enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        yield
    finally:
        if not was_enabled:
            _nrt_python.memsys_disable_stats()


def leaks(fn, packed, calls):
    """Whether ``fn`` (a forward sweep) leaves NRT allocations unfreed per call: arrays
    held by the records it pushes and drops."""
    with _nrt_statistics():
        before = rtsys.get_allocation_stats()
        drivers.run_driver(fn, packed, "s", calls)
        after = rtsys.get_allocation_stats()
    return (after.alloc - before.alloc) > (after.free - before.free)


def allocations_per_call(fn, packed, structure, calls):
    """NRT allocations per call of ``fn`` in the compiled driver: the difference between
    runs of ``2 * calls`` and ``calls`` calls, so the driver's own allocations cancel."""
    counts = []
    with _nrt_statistics():
        for n in (calls, 2 * calls):
            before = rtsys.get_allocation_stats().alloc
            drivers.run_driver(fn, packed, structure, n)
            counts.append(rtsys.get_allocation_stats().alloc - before)
    return (counts[1] - counts[0]) / calls


def profile(workload, config=None, progress=None):
    """Measure ``workload`` (a suite ``Workload``); returns a ``Profile``."""
    from ..transform.reverse.program import derive
    # compiled in this process, not loaded from the disk cache (--quick's), whose code
    # Numba cannot show (vector_ops reads the optimised IR), and timed in compiled loops
    config = replace(config or Config(), disk_cache=False)
    run = WorkloadRun(workload, config, progress)
    run.make_pool()
    run.hand_fn = None  # the gradient is checked against finite differences
    if not run.primal() or not run.grad():
        raise RuntimeError(f"{workload.name}: {run.row['status']}")
    argtypes = tuple(numba.typeof(a) for a in run.inputs[0])
    program = derive(workload.primal, argtypes, workload.argnums_tuple)
    sweep = forward_sweep(program.fwd_tape)
    words = int(sweep(*run.inputs[0]))
    calls = max(len(run.inputs), 100)
    alone = [("primal", run.primal_fn), ("grad", run.grad_fn)]
    if not leaks(sweep, run.packed, calls):
        alone.append(("forward sweep", sweep))
    timings = {label: run.time(fn, run.packed, label) for label, fn in alone}
    allocs = [allocations_per_call(fn, run.packed,
                                   drivers.structure_of(fn(*run.inputs[0])), calls)
              for fn in (run.primal_fn, run.grad_fn)]
    forward = timings.get("forward sweep")
    return Profile(workload.name, timings["primal"].best, timings["grad"].best,
                   forward and forward.best, words, allocs[0], allocs[1],
                   vector_ops(run.primal_fn), vector_ops(run.grad_fn))
