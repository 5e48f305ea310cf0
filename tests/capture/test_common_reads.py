"""CommonElementReads: a repeated ``x[i]`` becomes a copy of the first read, unless
something in between may have written an array."""
import numpy as np
import pytest
from numba import njit

import adjit
from numba.core import ir, types

from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture
from adjit.testing import check_grad

VEC = (types.float64[::1],)
X4 = np.array([0.7, -1.1, 0.4, 1.9])


def _element_reads(fn, argtypes=VEC):
    typed = normalise(capture(fn, argtypes))
    return [s for b in typed.func_ir.blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
            and s.value.op in ("getitem", "static_getitem")]


def cube_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * x[i]
    return s


def test_repeated_reads_are_shared():
    assert len([s for s in _element_reads(cube_sum) if s.value.value.name == "x"]) == 1
    check_grad(cube_sum, X4)


def read_write_read(x):
    y = np.zeros(2)
    y[0] = x[0]
    a = y[0]
    y[0] = a * x[1]
    b = y[0]  # not a: y[0] was written in between
    return a + b * x[2]


def _jvp_value(fn, x):
    """The primal value as the generated (normalised) program computes it."""
    return adjit.jvp(fn)(x, np.ones_like(x))[0]


def test_reads_around_a_write_stay_apart():
    reads = [s for s in _element_reads(read_write_read) if s.value.value.name == "y"]
    assert len(reads) == 2
    assert _jvp_value(read_write_read, X4) == 0.7 + 0.7 * -1.1 * 0.4
    check_grad(read_write_read, X4)


@njit
def _scale_in_place(y, c):
    for i in range(y.shape[0]):
        y[i] *= c


def read_call_read(x):
    y = np.arange(4.0) + 1.0  # no tangent: the helper runs as it is under jvp
    a = y[1]
    _scale_in_place(y, 3.0)
    return a * y[1] * x[0]


def test_reads_around_a_call_with_arrays_stay_apart():
    reads = [s for s in _element_reads(read_call_read) if s.value.value.name == "y"]
    assert len(reads) == 2
    assert _jvp_value(read_call_read, X4) == pytest.approx(2.0 * 6.0 * 0.7)


def read_sort_read(x):
    w = np.array([3.0, 1.0, 2.0])
    a = w[0]
    w.sort()  # the array is the receiver, not an argument
    return a * w[0] * x[0]


def test_reads_around_a_method_that_writes_its_receiver_stay_apart():
    reads = [s for s in _element_reads(read_sort_read) if s.value.value.name == "w"]
    assert len(reads) == 2
    assert _jvp_value(read_sort_read, X4) == pytest.approx(3.0 * 1.0 * 0.7)
