"""Rules for NumPy functions and methods that return arrays: views, linear maps and
bilinear products (see ``registry.py`` for the shapes). Each rule is one registration;
its test case is in ``tests/rules/test_array_ops.py``."""
import numba
import numpy as np

from .registry import _method_key as m
from .registry import defbilinear, defkernel, deflinear_array, defview

# -- views: the shadow and the tangent are the same view of the parent's -------------
defview([m("T")], attribute=True)
defview([np.transpose, m("transpose")])
defview([np.reshape, m("reshape")], ndims=(1, 2, 3), nargs=(2, 3, 4))


# -- linear maps of one array ------------------------------------------------------------
def _add_same_shape(g, shadow):
    """``shadow += g``: the transpose of a copy."""
    shadow += g


def _add_flat(g, shadow):
    """``shadow += g`` reshaped to the shadow's shape: the transpose of a flattening."""
    shadow += g.reshape(shadow.shape)  # g: the result's own (contiguous) shadow


def _reverse_cumsum(g, shadow):
    """``shadow[i] += sum(g[i:])``: the transpose of ``np.cumsum`` of a 1-D array."""
    acc = 0.0
    for i in range(g.shape[0] - 1, -1, -1):
        acc += g[i]
        shadow[i] += acc


def _reverse_sum_axis(g, shadow, axis):
    """``np.sum(x, axis)`` of a 2-D ``x``: every element of the summed axis gets the
    adjoint of its row or column sum."""
    axis = axis % 2
    for i in range(shadow.shape[0]):
        for j in range(shadow.shape[1]):
            shadow[i, j] += g[j] if axis == 0 else g[i]


def _reverse_diag(g, shadow):
    """``np.diag(x)`` of a 2-D ``x`` reads its diagonal: ``shadow[i, i] += g[i]``."""
    for i in range(g.shape[0]):
        shadow[i, i] += g[i]


deflinear_array([np.copy, m("copy")], _add_same_shape, ndims=(1, 2, 3))
deflinear_array([np.sum], _reverse_sum_axis, ndims=(2,), nargs=(2,))
deflinear_array([np.diag], _reverse_diag, ndims=(2,))
deflinear_array([m("flatten"), np.ravel, m("ravel")], _add_flat)
deflinear_array([np.cumsum, m("cumsum")], _reverse_cumsum, ndims=(1,))


# -- bilinear products ------------------------------------------------------------------
def _cross_vjp_a(g, b, shadow):
    """``a x b`` against ``g``: ``<g, a x b> = <a, b x g>``."""
    shadow += np.cross(b, g)


def _cross_vjp_b(g, a, shadow):
    """``<g, a x b> = <b, g x a>``."""
    shadow += np.cross(g, a)


def _outer_vjp_a(g, b, shadow):
    """``outer(a, b)[i, j] = a[i] b[j]``: ``a_bar[i] = sum_j g[i, j] b[j]``."""
    for i in range(g.shape[0]):
        acc = 0.0
        for j in range(g.shape[1]):
            acc += g[i, j] * b[j]
        shadow[i] += acc


def _outer_vjp_b(g, a, shadow):
    """``b_bar[j] = sum_i g[i, j] a[i]``."""
    for i in range(g.shape[0]):
        ai = a[i]
        for j in range(g.shape[1]):
            shadow[j] += g[i, j] * ai


defbilinear([np.cross], _cross_vjp_a, _cross_vjp_b)
defbilinear([np.outer], _outer_vjp_a, _outer_vjp_b, ndims=(1,))


# -- elementwise selection, by a scalar kernel (looped like a @vectorize ufunc) -------------
@numba.njit
def _where(condition, a, b):
    """One element of ``np.where(condition, a, b)``: the adjoint reaches only the
    operand that was selected."""
    return a if condition else b


@numba.njit
def _clip(x, lo, hi):
    """One element of ``np.clip(x, lo, hi)`` (``x.clip``), as NumPy computes it:
    ``minimum(maximum(x, lo), hi)``."""
    return min(max(x, lo), hi)


defkernel([np.where], _where)
defkernel([np.clip], _clip)
