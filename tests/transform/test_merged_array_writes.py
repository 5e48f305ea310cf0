"""Element writes through a name that is one array on one path and another on the other
(``y = z if inplace else np.zeros_like(z)``): on the aliasing path they write into ``z``,
which the reverse pass did not see (wrong gradients, an argument left modified). Reverse
mode refuses them by name; forward mode, which writes through the same memory, is
right; merges of arrays made for the merge alone, and loop-carried buffers, still work."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_jvp


def _write_through_a_maybe_alias(x, inplace):
    z = x * 1.0
    y = z if inplace else np.zeros_like(z)
    y[0] = 2.0 * y[1]
    return np.sum(z ** 2)


def _write_into_a_maybe_argument(x, inplace):
    if inplace:
        y = x
    else:
        y = x.copy()
    y[0] = y[0] * y[1]
    return np.sum(x * y)


def _keep_the_better_state(x):
    a = x * 1.0
    b = np.sin(x)
    best = a
    if np.sum(b ** 2) < np.sum(a ** 2):
        best = b
    best[0] = best[0] * 2.0
    return np.sum(a * b)


def _either_new_array(x, flag):
    y = np.zeros_like(x) if flag else np.ones_like(x)
    y[0] = x[1] * x[2]
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [(_write_through_a_maybe_alias, (True,)),
                                     (_write_into_a_maybe_argument, (True,)),
                                     (_keep_the_better_state, ())])
def test_a_write_through_a_merged_alias_is_refused_in_reverse_mode(f, args):
    x = np.array([0.5, -0.3, 0.8])
    before = x.copy()
    with pytest.raises(adjit.UnsupportedError, match=r"on one path and another array"):
        adjit.grad(f)(x, *args)
    assert np.array_equal(x, before)
    check_jvp(f, x, *args)  # forward mode writes the tangent through the same memory


def test_a_merge_of_arrays_made_for_it_alone_still_differentiates():
    x = np.array([0.5, -0.3, 0.8])
    for flag in (True, False):
        check_grad(_either_new_array, x, flag)


def _alias_carried_into_a_loop(x):
    z = x * 1.0
    y = z
    for _ in range(3):
        y[0] = y[1] * 2.0
        y = y * 0.9
    return np.sum(z ** 2) + np.sum(y)


def _swapped_buffers(x):
    a = x.copy()
    b = x * 2.0
    for _ in range(3):
        for i in range(b.shape[0]):
            b[i] = b[i] * x[i]
        a, b = b, a
    return np.sum(a * x) + np.sum(b)


def test_an_alias_carried_into_a_loop_and_written_is_refused():
    """The first iteration writes into z through y; z is read after the loop."""
    x = np.array([0.5, -0.3, 0.8])
    with pytest.raises(adjit.UnsupportedError, match=r"'y', which is 'z' on one path"):
        adjit.grad(_alias_carried_into_a_loop)(x)
    check_jvp(_alias_carried_into_a_loop, x)
    check_grad(_swapped_buffers, x)  # buffers used only through the loop: supported
