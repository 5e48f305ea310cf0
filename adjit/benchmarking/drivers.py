"""Compiled driver loops that time a callable inside ``@njit`` code.

A benchmark never times a call from Python: that costs 100-400 ns of dispatch, more than a
small primal. Instead the inputs of P repeats are generated beforehand and packed, one array
per argument position, with the repeat index first (``X[j]`` is argument ``x`` of repeat
``j``; scalars become 1-D arrays). A generated ``@njit`` driver of the right arity receives
the dispatcher to time as a first-class argument and calls it ``n`` times, cycling through
the P inputs, so every call sees a different input than the one before::

    def driver(f, n, a0, a1):
        acc = 0.0
        p = a0.shape[0]
        j = 0
        for i in range(n):
            out = f(a0[j], a1[j])
            acc += out[0].flat[i % out[0].size] + out[1].flat[i % out[1].size]
            j += 1
            if j == p:
                j = 0
        return acc

One element of every output array (and every scalar) is added to ``acc`` and returned, so
the call cannot be removed, while the consuming cost is O(1) whatever the output size.
Which element depends on the loop counter, so LLVM (which inlines the whole gradient into
the driver) cannot prove any element unread and drop the work that computes it: reading
always element 0 let it delete most of a gradient whose elements are independent, and
made ratios swing between runs.
Drivers are generated per (arity, output structure) and compiled once per dispatcher type.
"""
import statistics
import time
from dataclasses import dataclass

import numba
import numpy as np

_DRIVERS = {}


def structure_of(value):
    """Describe a callable's output: 's' for a scalar, ('a', ndim, size) or a tuple of those."""
    if isinstance(value, tuple):
        return tuple(structure_of(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("a", value.ndim, int(value.size))
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return "s"
    raise TypeError(f"cannot time a callable returning {type(value).__name__}")


def _consume_expr(var, st):
    """Source of an O(1) float expression that depends on the value ``var`` of structure ``st``."""
    if st == "s":
        return f"{var}"
    if isinstance(st, tuple) and st and st[0] == "a":
        _, ndim, size = st
        if ndim == 0 or size == 0:
            return f"{var}.size"
        return f"{var}.flat[i % {var}.size]"
    if isinstance(st, tuple):
        parts = [_consume_expr(f"{var}[{i}]", sub) for i, sub in enumerate(st)]
        return " + ".join(parts) if parts else "0.0"
    raise TypeError(f"bad output structure {st!r}")


def driver_source(arity, structure):
    """Python source of the driver loop for ``arity`` arguments and output ``structure``."""
    if arity < 1:
        raise ValueError("a benchmarked function needs at least one argument")
    names = [f"a{k}" for k in range(arity)]
    call = ", ".join(f"{a}[j]" for a in names)
    expr = _consume_expr("out", structure)
    return (
        f"def driver(f, n, {', '.join(names)}):\n"
        f"    acc = 0.0\n"
        f"    p = a0.shape[0]\n"
        f"    j = 0\n"
        f"    for i in range(n):\n"
        f"        out = f({call})\n"
        f"        acc += {expr}\n"
        f"        j += 1\n"
        f"        if j == p:\n"
        f"            j = 0\n"
        f"    return acc\n"
    )


def get_driver(arity, structure):
    """The compiled (lazily, by numba) driver for ``arity`` and ``structure``, cached."""
    key = (arity, structure)
    drv = _DRIVERS.get(key)
    if drv is None:
        namespace = {}
        exec(compile(driver_source(arity, structure), "<adjit-bench-driver>", "exec"),
             namespace)  # generated from integers and fixed templates only
        drv = numba.njit(namespace["driver"])
        _DRIVERS[key] = drv
    return drv


def pack_inputs(input_sets):
    """Pack P input tuples into one array per argument position (repeat index first)."""
    if not input_sets:
        raise ValueError("no inputs to pack")
    arity = len(input_sets[0])
    packed = []
    for k in range(arity):
        vals = [s[k] for s in input_sets]
        v0 = vals[0]
        if isinstance(v0, np.ndarray):
            if any(v.shape != v0.shape or v.dtype != v0.dtype for v in vals):
                raise ValueError(f"argument {k} changes shape or dtype between repeats")
            packed.append(np.ascontiguousarray(np.stack(vals)))
        elif isinstance(v0, (bool, np.bool_)):
            packed.append(np.array(vals, dtype=np.bool_))
        elif isinstance(v0, (int, np.integer)):
            packed.append(np.array(vals, dtype=np.int64))
        elif isinstance(v0, (float, np.floating)):
            dtype = v0.dtype if isinstance(v0, np.floating) else np.float64
            packed.append(np.array(vals, dtype=dtype))
        else:
            raise TypeError(f"cannot pack argument {k} of type {type(v0).__name__} "
                            f"for a compiled driver")
    return packed


def unpack_input(packed, j):
    """Input tuple number ``j`` back out of packed arrays, as Python would pass it."""
    out = []
    for arr in packed:
        v = arr[j]
        out.append(v.copy() if isinstance(v, np.ndarray) else v.item())
    return tuple(out)


def input_nbytes(inputs):
    """Bytes taken by one input tuple (scalars count 8)."""
    return sum(v.nbytes if isinstance(v, np.ndarray) else 8 for v in inputs)


@dataclass
class Timing:
    """Per-call seconds: best (min over rounds) and median, from ``rounds`` x ``calls``."""

    best: float
    median: float
    calls: int
    rounds: int


def run_driver(fn, packed, structure, n):
    """Call ``fn`` ``n`` times inside the compiled driver; return wall seconds for the loop."""
    drv = get_driver(len(packed), structure)
    t0 = time.perf_counter()
    drv(fn, n, *packed)
    return time.perf_counter() - t0


def calibrate(fn, packed, structure, target_s, min_calls=1, max_calls=10_000_000):
    """Number of calls for one round to last about ``target_s`` (compiles the driver too)."""
    run_driver(fn, packed, structure, 1)  # compile driver and warm up
    n = max(min_calls, 1)
    while True:
        t = run_driver(fn, packed, structure, n)
        if t >= target_s / 10 or n >= max_calls:
            break
        n = min(max_calls, n * 10)
    per_call = t / n
    if per_call <= 0:
        return max_calls
    return int(min(max_calls, max(min_calls, target_s / per_call)))


def time_callable(fn, packed, structure, calls, rounds):
    """Time ``rounds`` rounds of ``calls`` calls (driver must already be compiled)."""
    per_call = [run_driver(fn, packed, structure, calls) / calls for _ in range(rounds)]
    return Timing(min(per_call), statistics.median(per_call), calls, rounds)
