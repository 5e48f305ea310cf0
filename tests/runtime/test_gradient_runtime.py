"""Runtime properties of generated gradients: no allocation, prange safety, tape depth."""
import math

import numba
import numpy as np
from numba.core.runtime import _nrt_python, rtsys

import adjit
from adjit.runtime import current_depth


def loop_branch(x):
    s = 0.0
    for i in range(50):
        if s < 3.0:
            s += math.sin(x * i) * x
        else:
            s -= 0.5 * x * x
    return s


dloop = adjit.grad(loop_branch)


@numba.njit
def drive(x0, n):
    acc = 0.0
    for k in range(n):
        acc += dloop(x0 + 1e-4 * k)
    return acc


@numba.njit(parallel=True)
def grads_parallel(xs):
    out = np.empty_like(xs)
    for i in numba.prange(xs.shape[0]):
        out[i] = dloop(xs[i])
    return out


@numba.njit
def grads_serial(xs):
    out = np.empty_like(xs)
    for i in range(xs.shape[0]):
        out[i] = dloop(xs[i])
    return out


def test_no_heap_allocation_per_call_in_compiled_loop():
    drive(0.3, 100)  # warm-up: compile, create and size the tape
    _nrt_python.memsys_enable_stats()
    before, tape_before = rtsys.get_allocation_stats(), adjit.runtime_stats()
    total = drive(0.3, 20000)
    after, tape_after = rtsys.get_allocation_stats(), adjit.runtime_stats()
    assert math.isfinite(total)
    assert after.alloc - before.alloc == 0
    assert tape_after["growths"] == tape_before["growths"]
    assert current_depth() == 0


def test_prange_gradients_equal_serial():
    xs = np.linspace(-2.0, 2.0, 4001)
    expected = grads_serial(xs)
    for _ in range(3):
        assert np.array_equal(grads_parallel(xs), expected)
    h = 1e-6
    fd = (loop_branch(xs[7] + h) - loop_branch(xs[7] - h)) / (2 * h)
    assert abs(expected[7] - fd) < 1e-5 * max(1.0, abs(fd))
