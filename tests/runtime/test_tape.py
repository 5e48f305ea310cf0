"""Tests of the native tape runtime (adjit.runtime): exactness, LIFO order, growth,
zero steady-state allocation, thread safety (prange and nogil Python threads), inlining.

The njit functions are module-level so every test shares one compilation.
"""

import re
import threading
import time

import numpy as np
import pytest
from numba import njit, prange, types
from numba.core import errors
from numba.core.runtime import _nrt_python, rtsys

from adjit.runtime import (
    current_depth, pop_record, record_words, runtime_stats, tape_acquire, tape_depth,
    tape_push, tape_set_depth, truncate_current,
)

MIXED = types.Tuple((types.float64, types.float32, types.int64, types.int32,
                     types.boolean, types.uint64))
NESTED = types.Tuple((types.complex128, types.UniTuple(types.int16, 2), types.int8))
pop_mixed = pop_record(MIXED)
pop_nested = pop_record(NESTED)
pop_u8 = pop_record(types.uint8)
pop_empty = pop_record(types.Tuple(()))
pop_f64 = pop_record(types.float64)
pop_pair = pop_record(types.Tuple((types.float64, types.int32)))


@njit
def roundtrip(f64, f32, i64, i32, b, u64):
    """Push three kinds of records per element, pop everything back in LIFO order."""
    n = f64.shape[0]
    t = tape_acquire()
    d0 = tape_depth(t)
    for i in range(n):
        tape_push(t, (f64[i], f32[i], i64[i], i32[i], b[i], u64[i]))
        tape_push(t, np.uint8(i & 255))
        tape_push(t, ())
        tape_push(t, (complex(f64[i], -f64[i]), (np.int16(i), np.int16(-i)), np.int8(i % 100)))
    pushed = tape_depth(t) - d0
    o64 = np.empty_like(f64)
    o32 = np.empty_like(f32)
    oi64 = np.empty_like(i64)
    oi32 = np.empty_like(i32)
    ob = np.empty_like(b)
    ou64 = np.empty_like(u64)
    order_ok = True
    for j in range(n):
        i = n - 1 - j
        z, (s0, s1), s2 = pop_nested(t)
        order_ok &= (s0 == np.int16(i)) and (s1 == np.int16(-i)) and s2 == np.int8(i % 100)
        order_ok &= (z.real == f64[i] or np.isnan(z.real))
        pop_empty(t)
        order_ok &= pop_u8(t) == np.uint8(i & 255)
        o64[i], o32[i], oi64[i], oi32[i], ob[i], ou64[i] = pop_mixed(t)
    return pushed, tape_depth(t) - d0, order_ok, (o64, o32, oi64, oi32, ob, ou64)


@njit
def fill(n):
    """Push n scalars, pop them; returns their sum and the depth delta."""
    t = tape_acquire()
    d0 = tape_depth(t)
    for i in range(n):
        tape_push(t, i * 0.5)
    s = 0.0
    for i in range(n):
        s += pop_f64(t)
    return s, tape_depth(t) - d0


@njit(nogil=True)
def churn(seed, reps, m):
    """Repeatedly push/pop m seed-dependent records; a checksum exposes any mixing."""
    t = tape_acquire()
    d0 = tape_depth(t)
    acc = 0.0
    for r in range(reps):
        for k in range(m):
            tape_push(t, (seed * 1000.0 + k + r, np.int32(seed - k)))
        for k in range(m):
            a, b = pop_pair(t)
            acc = acc * 0.5 + a + b
        if tape_depth(t) != d0:
            return -1.0
    return acc


def churn_expected(seed, reps, m):
    """Pure-Python value of churn()."""
    acc = 0.0
    for r in range(reps):
        for k in range(m - 1, -1, -1):
            acc = acc * 0.5 + (seed * 1000.0 + k + r) + (seed - k)
    return acc


@njit(parallel=True)
def par_pushpop(n, m):
    """Each prange iteration pushes i-dependent records on its thread's tape, pops them."""
    out = np.zeros(n)
    for i in prange(n):
        t = tape_acquire()
        d0 = tape_depth(t)
        for k in range(m):
            tape_push(t, (i * 1.5 + k, np.int32(i - k)))
        s = 0.0
        for k in range(m):
            a, b = pop_pair(t)
            s = s * 0.5 + a + b
        out[i] = s + (tape_depth(t) - d0) * 1e6
    return out


@njit
def serial_expected(n, m):
    """Serial value of par_pushpop()."""
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(m - 1, -1, -1):
            s = s * 0.5 + (i * 1.5 + k) + np.int32(i - k)
        out[i] = s
    return out


@njit
def leave_records(n):
    """Push n two-word records and leave them (as an exception mid-sweep would), then
    cut the tape back to n words with tape_set_depth."""
    t = tape_acquire()
    d0 = tape_depth(t)
    for i in range(n):
        tape_push(t, (i, i))
    tape_set_depth(t, d0 + n)
    return tape_depth(t) - d0


def _special_inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    f64 = rng.standard_normal(n)
    f64[:6] = [np.nan, -0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308]
    f64[6] = np.frombuffer(np.uint64(0x7FF0000000000ABC).tobytes(), np.float64)[0]
    f32 = rng.standard_normal(n).astype(np.float32)
    f32[:4] = np.array([np.nan, -0.0, 1e-45, np.inf], np.float32)
    i64 = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    i64[:2] = [-2**63, 2**63 - 1]
    i32 = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32)
    i32[:2] = [-2**31, -1]
    b = rng.random(n) < 0.5
    u64 = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    u64[:2] = [2**64 - 1, 2**63]
    return f64, f32, i64, i32, b, u64


def test_roundtrip_mixed_records_bit_exact_lifo():
    ins = _special_inputs(5000)
    pushed, left, order_ok, outs = roundtrip(*ins)
    assert record_words(MIXED) == 6 and record_words(NESTED) == 5
    assert pushed == 5000 * (6 + 1 + 0 + 5)
    assert left == 0
    assert order_ok
    for a, b in zip(ins, outs):
        assert a.dtype == b.dtype
        assert a.tobytes() == b.tobytes()   # bit-exact (NaN payloads, -0.0, denormals)
    assert current_depth() == 0


def test_pop_record_cached_and_typing_errors():
    assert pop_record(MIXED) is pop_mixed
    assert pop_record(types.Tuple((types.float64, types.float64))) is \
        pop_record(types.UniTuple(types.float64, 2))
    with pytest.raises(errors.TypingError):
        pop_record(types.unicode_type)

    @njit
    def bad(a):
        tape_push(tape_acquire(), a)

    with pytest.raises(errors.TypingError, match="unsupported tape record type"):
        bad("text")


ARRAY_RECORD = types.Tuple((types.float64[:], types.float64, types.Array(types.float64, 2, "A")))
pop_arrays = pop_record(ARRAY_RECORD)


@njit
def array_round_trip(x, y):
    """Push arrays (a temporary, and a strided view), drop the local references, pop."""
    t = tape_acquire()
    tape_push(t, (x * 2.0, 3.0, y[:, 1:]))
    a, b, c = pop_arrays(t)
    return a.sum() + b + c.sum()


def test_arrays_round_trip_by_reference():
    """An array record holds a reference: the temporary ``x * 2.0`` outlives its
    variable, views keep their strides, and the depth is restored."""
    x, y = np.arange(4.0), np.arange(9.0).reshape(3, 3)
    depth = current_depth()
    assert array_round_trip(x, y) == 2 * x.sum() + 3.0 + y[:, 1:].sum()
    enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(1000):
            array_round_trip(x, y)
        after = rtsys.get_allocation_stats()
    finally:
        if not enabled:
            _nrt_python.memsys_disable_stats()
    assert current_depth() == depth
    # every temporary pushed was freed after its pop: no reference leaked
    assert after.alloc - before.alloc == after.free - before.free >= 1000


def test_growth_then_steady_state():
    fill(1)                                     # make sure this thread has a tape
    st0 = runtime_stats()
    assert st0["capacity_words"] >= st0["initial_words"] == 4096
    n = st0["capacity_words"] + 1               # one word more than fits
    s, left = fill(n)
    assert s == 0.5 * n * (n - 1) / 2 and left == 0
    st1 = runtime_stats()
    assert st1["growths"] == st0["growths"] + 1
    assert st1["capacity_words"] == 2 * st0["capacity_words"]
    for _ in range(3):                          # same workload: no further growth
        assert fill(n) == (s, 0)
    st2 = runtime_stats()
    assert st2["growths"] == st1["growths"]
    assert st2["capacity_words"] == st1["capacity_words"]
    assert st2["depth_words"] == 0


def test_zero_heap_allocation_after_warmup():
    enabled = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        fill(20000)                             # warm-up: compile, grow the tape
        before_nrt = rtsys.get_allocation_stats()
        before = runtime_stats()
        s, left = fill(20000)
        after_nrt = rtsys.get_allocation_stats()
        after = runtime_stats()
    finally:
        if not enabled:
            _nrt_python.memsys_disable_stats()
    assert left == 0 and s == 0.5 * 20000 * 19999 / 2
    assert after_nrt.alloc - before_nrt.alloc == 0
    assert after_nrt.free - before_nrt.free == 0
    assert after_nrt.mi_alloc - before_nrt.mi_alloc == 0
    assert after_nrt.mi_free - before_nrt.mi_free == 0
    for key in ("growths", "tapes", "capacity_words"):
        assert after[key] == before[key]


def test_prange_threads_have_independent_tapes():
    n, m = 400, 3000                            # m > initial capacity / 2 words: grows
    got = par_pushpop(n, m)
    want = serial_expected(n, m)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(par_pushpop(n, m), want)
    assert current_depth() == 0


def test_python_threads_nogil():
    reps, m = 300, 700
    churn(0, 1, 10)                             # compile outside the threads
    st0 = runtime_stats()
    results = {}
    barrier = threading.Barrier(2)

    def worker(seed):
        barrier.wait()
        results[seed] = (churn(seed, reps, m), current_depth())

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in (1, 2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for seed in (1, 2):
        assert results[seed] == (churn_expected(seed, reps, m), 0)
    st1 = runtime_stats()
    assert st1["tapes"] == st0["tapes"] + 2     # one fresh tape per new thread
    # The key destructor frees a thread's tape once the OS thread has fully exited.
    deadline = time.monotonic() + 5.0
    while runtime_stats()["tapes_freed"] < st0["tapes_freed"] + 2:
        assert time.monotonic() < deadline, "thread tapes were not freed"
        time.sleep(0.01)


def test_fresh_thread_has_no_tape():
    seen = []
    th = threading.Thread(target=lambda: seen.append((current_depth(), runtime_stats())))
    th.start()
    th.join()
    depth, st = seen[0]
    assert depth == 0 and st["capacity_words"] == 0 and st["depth_words"] == 0


def test_set_depth_and_truncate_current():
    assert current_depth() == 0
    assert leave_records(100) == 100
    assert current_depth() == 100
    with pytest.raises(ValueError):
        truncate_current(101)
    truncate_current(50)
    assert current_depth() == 50
    truncate_current()
    assert current_depth() == 0


def test_fast_path_is_inlined():
    fill(1)
    llvm = fill.inspect_llvm(fill.signatures[0])
    calls = set(re.findall(r"call [^@]*@(adjit_\w+)", llvm))
    # only the cold slow paths remain as calls; push/pop/depth are inlined
    assert calls <= {"adjit_tape_grow", "adjit_tape_create"}
    assert "adjit_tape_grow" in calls


def test_current_depth_zero_at_end():
    assert current_depth() == 0
    assert runtime_stats()["depth_words"] == 0
