"""Where the compile time of a derivative goes (``ADJIT_TIMING=1``).

The first call of a transform captures typed IR, builds derivative IR and compiles
several generated functions through Numba and LLVM, nested inside each other (the
transform's IR calls its forward and reverse passes, which Numba compiles while lowering
it). ``phase(kind, label)`` times one of those steps; when the outermost one ends, a tree
is printed to stderr with each step's own (exclusive) time, then the totals per kind:

    adjit timing: grad_f  1.92 s
      numba  grad_f                0.31 s   (LLVM 0.22 s)
        transform  grad_f          0.01 s
          capture  f               0.09 s
        numba  f_fwd_tape          0.52 s   (LLVM 0.41 s)
      ...
      totals: capture 0.09 s, transform 0.12 s, numba 1.71 s (LLVM 1.20 s)

``numba`` is Numba's typing and lowering plus LLVM; ``LLVM`` is the part of it that Numba
spent holding its LLVM lock (optimisation and machine code), as Numba's own event timers
report it.
"""
import contextlib
import sys
import threading
import time

from .. import config

_local = threading.local()


class _Step:
    __slots__ = ("kind", "label", "elapsed", "llvm", "children")

    def __init__(self, kind, label):
        self.kind, self.label = kind, label
        self.elapsed, self.llvm, self.children = 0.0, 0.0, []

    def own(self):
        """Time not spent in nested steps."""
        return self.elapsed - sum(c.elapsed for c in self.children)

    def own_llvm(self):
        return max(0.0, self.llvm - sum(c.llvm for c in self.children if c.kind == "numba"))


@contextlib.contextmanager
def phase(kind, label):
    """Time one step (``capture``, ``transform`` or ``numba``) of building a derivative;
    yields the step (``note_llvm`` adds Numba's LLVM time to it). Free when timing is
    off."""
    if not config.TIMING:
        yield None
        return
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    step = _Step(kind, label)
    start = time.perf_counter()
    stack.append(step)
    try:
        yield step
    finally:
        step.elapsed = time.perf_counter() - start
        stack.pop()
        if stack:
            stack[-1].children.append(step)
        else:
            print(report(step), file=sys.stderr, flush=True)


def note_llvm(step, cres):
    """Record the LLVM time Numba measured for the compile result ``cres``."""
    if step is not None and cres is not None:
        timers = (getattr(cres, "metadata", None) or {}).get("timers", {})
        step.llvm = timers.get("llvm_lock", 0.0)


def report(root):
    """The text of the timing tree under ``root`` and the totals per kind."""
    lines = [f"adjit timing: {root.label}  {root.elapsed:.3f} s"]
    totals = {}

    def walk(step, depth):
        totals[step.kind] = totals.get(step.kind, 0.0) + step.own()
        if step.kind == "numba":
            totals["LLVM"] = totals.get("LLVM", 0.0) + step.own_llvm()
        llvm = f"   (LLVM {step.own_llvm():.3f} s)" if step.kind == "numba" else ""
        name = f"{'  ' * depth}{step.kind}  {step.label}"
        lines.append(f"  {name:<48} {step.own():.3f} s{llvm}")
        for child in step.children:
            walk(child, depth + 1)

    walk(root, 0)
    parts = [f"{k} {totals[k]:.3f} s" for k in ("capture", "transform", "numba", "LLVM")
             if k in totals]
    lines.append("  totals: " + ", ".join(parts))
    return "\n".join(lines)
