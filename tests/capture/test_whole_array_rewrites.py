"""Array writes and methods that capture rewrites into whole-array slice writes
(``y[...] = v``, ``y.sort()``), index-valued methods, and the calls reverse mode refuses
by name (a method without a rule on a differentiated array, a helper that writes into its
arguments and returns a new array), in every mode against finite differences and closed
forms."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad


def _ellipsis_buffers(x, out, c):
    """Buffers filled through ``[...]``: a new 1-D one, an ``out=`` argument, a 2-D one
    from a matrix and a scalar, as callers fill preallocated arrays."""
    y = np.empty_like(x)
    y[...] = x * x
    out[...] = np.sin(x)
    m = np.empty((2, 3))
    m[...] = np.outer(x[:2], x) * c
    z = np.empty((2, 2))
    z[...] = c * c
    return np.sum(y) + np.sum(out * x) + np.sum(m * m) + np.sum(z * x[0])


def test_ellipsis_writes_in_every_mode():
    """``y[...] = v`` is the whole-array write ``y[:] = v`` (it was an internal error:
    Numba has no lowering of the ``getitem`` with ``...`` that reverse mode emitted)."""
    from adjit.testing import check_hvp, check_jvp
    x, c = np.array([0.3, -0.7, 1.2]), 0.8
    args = (x, np.zeros(3), c)
    check_grad(_ellipsis_buffers, *args, argnums=(0, 2))
    check_jvp(_ellipsis_buffers, *args)
    check_hvp(_ellipsis_buffers, *args, argnums=0)
    check_hvp(_ellipsis_buffers, *args, argnums=2)
    # closed form in c: sum((c P)^2) + 4 c^2 x0, with P = outer(x[:2], x)
    expected = 2 * c * np.sum(np.outer(x[:2], x) ** 2) + 8 * c * x[0]
    assert np.isclose(adjit.grad(_ellipsis_buffers, argnums=2)(*args), expected, rtol=1e-13)


def _sorted_weights(x):
    """An in-place sort of a copy, then weights by rank, and a sorted view."""
    y = x.copy()
    y.sort()
    z = x * x
    z[1:].sort()
    return np.sum(y * np.arange(1.0, y.shape[0] + 1)) + z[1] * z[-1]


def _ranked_by_methods(x):
    """``x.argsort()``, ``x.argmax()`` and ``x.argmin()`` as methods (index results)."""
    idx = x.argsort()
    return np.sum(x[idx] * np.arange(1.0, x.shape[0] + 1)) + x[x.argmax()] ** 2 - x[x.argmin()]


def test_in_place_sort_and_index_methods_in_every_mode():
    """``y.sort()`` is ``y[:] = np.sort(y)`` (forward mode copied the call and left the
    tangent unsorted: a wrong jvp; reverse mode refused it); ``x.argsort()``,
    ``x.argmax()`` and ``x.argmin()`` are non-differentiable like their functions."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.9, -0.7, 1.2, 0.4])
    for f in (_sorted_weights, _ranked_by_methods):
        check_grad(f, x)
        check_jvp(f, x)
        check_hvp(f, x)
    # the jvp that was wrong: x[0] sorts to rank 3 (weight 3)
    _, tangent = adjit.jvp(lambda x: np.sum(np.sort(x) * np.arange(1.0, 5.0)))(
        x, np.array([1.0, 0.0, 0.0, 0.0]))
    assert tangent == 3.0
    # ranks 3, 1, 4, 2; argmax x[2] (2 x[2]); argmin x[1] (-1)
    assert np.allclose(adjit.grad(_ranked_by_methods)(x), [3.0, 0.0, 6.4, 2.0], rtol=1e-14)


def test_forward_mode_refuses_a_method_on_a_differentiated_receiver(monkeypatch):
    """A method no rule covers, called on a differentiated array, is refused by jvp as by
    grad, even when it returns nothing (it may write into its receiver): here
    ``y.sort()`` with its rewrite taken out."""
    from adjit.capture import normalise as passes
    from adjit.capture.inplace_arrays import SortToSliceWrite

    def unsorted(x):
        y = x * 1.0
        y.sort()
        return np.sum(y * np.arange(1.0, 4.0))
    monkeypatch.setattr(passes, "NORMALISE", [p for p in passes.NORMALISE
                                              if not isinstance(p, SortToSliceWrite)])
    x = np.array([0.9, -0.7, 1.2])
    for transform, args in ((adjit.jvp(unsorted), (x, x)), (adjit.grad(unsorted), (x,))):
        with pytest.raises(adjit.UnsupportedError, match="'y.sort'"):  # its receiver
            transform(*args)


@numba.njit
def _solve_in_place_and_return(d, r):
    x = np.empty(2)
    r[1] -= d[0] * r[0]
    x[0] = d[0] * r[1]
    x[1] = d[1]
    return x


def _thomas_like(d, r):
    return np.sum(_solve_in_place_and_return(d, r) ** 2)


def test_a_helper_writing_its_arguments_and_returning_a_new_array():
    """Reverse mode refused it; it now keeps the helper's new array (see
    tests/transform/test_reverse_helper_calls.py)."""
    d, r = np.array([1.0, 2.0]), np.array([0.5, 0.7])
    check_grad(_thomas_like, d, r, argnums=(0, 1))
