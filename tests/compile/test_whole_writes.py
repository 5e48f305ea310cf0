"""Slice writes in generated code go through adjit's loops (compile/whole_writes), not
Numba's slice assignment: same values as NumPy, in every mode."""
import numba
import numpy as np
import pytest

import adjit
from adjit.compile.whole_writes import assign_selection, assign_whole
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _whole(a, t):
    assign_whole(a, t)


@numba.njit
def _selection(a, index, t):
    assign_selection(a, index, t)


@pytest.mark.parametrize("shape, value", [
    ((4,), np.arange(4.0)),
    ((2, 3), np.arange(3.0)),            # a row broadcast down the rows
    ((2, 3), np.arange(2.0)[:, None]),   # a column broadcast along the rows
    ((2, 3, 2), np.arange(6.0).reshape(3, 2)),
    ((2, 3, 2), np.arange(2.0)),
    ((2, 3), 7.5),
])
def test_assign_whole_is_numpy_assignment(shape, value):
    a, expected = np.zeros(shape), np.zeros(shape)
    expected[...] = value
    _whole(a, value)
    assert np.array_equal(a, expected)


def test_assign_whole_copies_an_overlapping_value_first():
    a = np.arange(6.0)
    _whole(a, a[::-1])
    assert np.array_equal(a, np.arange(6.0)[::-1])


def test_assign_whole_refuses_a_shape_that_does_not_broadcast():
    with pytest.raises(ValueError, match="broadcast"):
        _whole(np.zeros((2, 3)), np.ones(2))


def test_assign_selection_writes_through_basic_indices():
    a, expected = np.zeros((3, 4)), np.zeros((3, 4))
    _selection(a, (slice(1, None), 2), np.array([5.0, 6.0]))
    expected[1:, 2] = [5.0, 6.0]
    assert np.array_equal(a, expected)
    _selection(a, (0, 1), 9.0)  # an element: Numba's own write
    expected[0, 1] = 9.0
    assert np.array_equal(a, expected)


def inplace_updates(x, y):
    """``a += b`` on arrays and slice writes, as user code writes them."""
    a = x * y
    a += np.sin(x)
    out = np.zeros((2, x.shape[0]))
    out[0] = a
    out[1, 1:] = y[1:] * a[:-1]
    out[:] *= 2.0
    return np.sum(out * out)


def test_inplace_and_slice_writes_in_every_mode():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(5), rng.standard_normal(5)
    check_grad(inplace_updates, x, y, argnums=(0, 1))
    check_jvp(inplace_updates, x, y)
    check_hvp(inplace_updates, x, y, argnums=(0, 1))


def test_generated_code_has_no_numba_slice_assignment():
    def writes_whole(x):
        a = np.zeros_like(x)
        a[:] = x * x
        return np.sum(a)

    g = adjit.grad(writes_whole)
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(g(x), 2 * x)
    (compiled,) = g.overloads.values()
    assert "raise_with_shape_context" not in compiled.library.get_llvm_str()
