"""Compiled driver loops that time a callable inside ``@njit`` code.

A benchmark never times a call from Python: that costs 100-400 ns of dispatch, more than a
small primal. Instead the inputs of P repeats are generated beforehand and packed, one array
per argument position, with the repeat index first (``X[j]`` is argument ``x`` of repeat
``j``; scalars become 1-D arrays). One ``@njit`` driver receives the dispatcher to time as
a first-class argument and the packed arrays as a tuple, and calls it ``n`` times, cycling
through the P inputs, so every call sees a different input than the one before::

    def driver(f, n, packed):
        acc = 0.0
        j = 0
        for i in range(n):
            acc += consume(f(*inputs_at(packed, j)), i)
            j = (j + 1) % P

``consume`` adds one element of every output array (and every scalar) to ``acc``, so the
call cannot be removed, while the consuming cost is O(1) whatever the output size.
Which element depends on the loop counter, so LLVM (which inlines the whole gradient into
the driver) cannot prove any element unread and drop the work that computes it: reading
always element 0 let it delete most of a gradient whose elements are independent, and
made ratios swing between runs. Numba compiles the driver once per dispatcher type and
argument types; nothing is generated as source.
"""
import statistics
import time
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import types
from numba.extending import overload


def structure_of(value):
    """Describe a callable's output: 's' for a scalar, ('a', ndim, size) or a tuple of those."""
    if isinstance(value, tuple):
        return tuple(structure_of(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("a", value.ndim, int(value.size))
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return "s"
    raise TypeError(f"cannot time a callable returning {type(value).__name__}")


def consume(out, i):
    """An O(1) float that depends on output ``out``: element ``i % size`` of each array
    (its size for a 0-d or empty one), each scalar itself, summed over a tuple."""


@overload(consume)
def _consume_impl(out, i):
    if isinstance(out, types.Array):
        if out.ndim == 0:
            return lambda out, i: float(out.size)
        return lambda out, i: out.flat[i % out.size] if out.size else 0.0
    if isinstance(out, (types.Number, types.Boolean)):
        return lambda out, i: out
    if isinstance(out, types.BaseTuple):
        if len(out) == 0:
            return lambda out, i: 0.0
        return lambda out, i: consume(out[0], i) + consume(out[1:], i)
    return None


def inputs_at(packed, j):
    """The argument tuple of repeat ``j``: item ``j`` of each packed array."""


@overload(inputs_at)
def _inputs_at_impl(packed, j):
    if len(packed) == 0:
        return lambda packed, j: ()
    return lambda packed, j: (packed[0][j],) + inputs_at(packed[1:], j)


@numba.njit
def _driver(f, n, packed):
    """Call ``f`` ``n`` times on the packed inputs in turn; return the consumed sum."""
    acc = 0.0
    p = packed[0].shape[0]
    j = 0
    for i in range(n):
        acc += consume(f(*inputs_at(packed, j)), i)
        j += 1
        if j == p:
            j = 0
    return acc


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
    """Per-call seconds: best (min over rounds) and median, from ``rounds`` x ``calls``;
    ``samples`` holds each round's per-call time, in round order."""

    best: float
    median: float
    calls: int
    rounds: int
    samples: tuple = ()


def timing_of(samples, calls):
    """The Timing of per-call ``samples``, one per round."""
    return Timing(min(samples), statistics.median(samples), calls, len(samples),
                  tuple(samples))


def paired_median_ratio(a, b):
    """The median over rounds of ``a``'s time over ``b``'s in the same round: rounds timed
    side by side share the machine's speed of the moment, so their ratio does not move
    with it (a plain median over median does, when the machine speeds up or slows down
    between the two callables' rounds)."""
    return statistics.median(x / y for x, y in zip(a.samples, b.samples))


def time_interleaved(rounds_of, rounds):
    """Time several callables round by round: ``rounds_of`` maps a label to
    ``(one_round, calls)``, where ``one_round()`` returns the wall seconds of ``calls``
    calls. Each round runs every label once, in order, so all of them see the same
    machine; a label whose round raises is dropped (its exception is returned instead).
    Returns ``{label: Timing or exception}``."""
    samples = {label: [] for label in rounds_of}
    failed = {}
    for _ in range(rounds):
        for label, (one_round, calls) in rounds_of.items():
            if label in failed:
                continue
            try:
                samples[label].append(one_round() / calls)
            except Exception as exc:  # reported on the row, the other labels go on
                failed[label] = exc
    return {label: failed.get(label) or timing_of(samples[label], rounds_of[label][1])
            for label in rounds_of}


def run_driver(fn, packed, structure, n):
    """Call ``fn`` ``n`` times inside the compiled driver; return wall seconds for the loop.
    (``structure``, the output's shape as ``structure_of`` gives it, is not needed: the
    driver follows the output's type.)"""
    if not packed:
        raise ValueError("a benchmarked function needs at least one argument")
    args = tuple(packed)
    t0 = time.perf_counter()
    _driver(fn, n, args)
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


def python_round(fn, packed, target_s, min_calls=1, calls=None):
    """``--quick``'s timer: ``(one_round, calls)`` for calls made from Python, cycling
    through the packed inputs. No driver is compiled (a driver inlines the derivative and
    optimises it again, which costs as much as compiling it), so a smoke test with
    derivatives from the disk cache compiles nothing; each call includes Python's
    dispatch (100-400 ns)."""
    sets = [unpack_input(packed, j) for j in range(packed[0].shape[0])]

    def run(n):
        t0 = time.perf_counter()
        for i in range(n):
            fn(*sets[i % len(sets)])
        return time.perf_counter() - t0

    per_call = run(1)
    if not calls:
        calls = int(max(min_calls, 1, min(1_000_000, target_s / max(per_call, 1e-7))))
    return (lambda: run(calls)), calls

