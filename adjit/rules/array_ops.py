"""Rules for NumPy functions and methods that return arrays: views, linear maps and
bilinear products (see ``registry.py`` for the shapes). Each rule is one registration;
its test case is in ``tests/rules/test_array_ops.py``."""
import numba
import numpy as np

from ..compile.inline_library import internal_jit
from .composites import defcomposite
from .arrays import _add_flat_jit, _flat_copy_jit, defarrayvjp
from .registry import _method_key as m
from .registry import defbilinear, defkernel, deflinear_array, defnonlinear, defview

# -- views: the shadow and the tangent are the same view of the parent's -------------
defview([m("T")], ndims=(1, 2, 3), attribute=True)
defview([np.transpose, m("transpose")], ndims=(1, 2, 3), nargs=(1, 2))  # (axes too)
defview([np.swapaxes], ndims=(2, 3), nargs=(3,))  # (Numba has no method form)
defview([np.reshape, m("reshape")], ndims=(1, 2, 3, 4), nargs=(2, 3, 4, 5))
defview([np.expand_dims], nargs=(2,))
defview([np.flip], ndims=(1, 2, 3))  # Numba's flips are reversed-stride views
defview([np.flipud], ndims=(1, 2, 3))
defview([np.fliplr], ndims=(2, 3))
defview([np.atleast_1d, np.atleast_2d, np.atleast_3d], ndims=(1, 2, 3))


# -- linear maps of one array ------------------------------------------------------------
def _add_same_shape(g, shadow):
    """``shadow += g``: the transpose of a copy."""
    shadow += g


def _add_converted(g, shadow, dtype):
    """``shadow += g``: the transpose of ``x.astype(dtype)``, a copy (float to float)."""
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


def _reverse_cumsum_flat(g, shadow, axis=None):
    """The transpose of ``np.cumsum``: each element gets the adjoints of the partial sums
    that include it, in C order over the whole array (no ``axis``: NumPy flattens) or
    along ``axis``."""
    if g.size == 0:
        return
    flat = _flat_copy_jit(g)
    length, inner = g.size, 1
    if axis is not None:
        ax = axis % g.ndim
        length = g.shape[ax]
        for d in range(ax + 1, g.ndim):
            inner *= g.shape[d]
    for outer in range(g.size // (length * inner)):
        for i in range(inner):
            acc = 0.0
            for k in range(length - 1, -1, -1):
                position = (outer * length + k) * inner + i
                acc += flat[position]
                _add_flat_jit(shadow, position, acc)


def _reverse_diff(g, shadow, n=1):
    """``np.diff(x, n)`` along the last axis: ``diff(x)[i] = x[i + 1] - x[i]`` applied
    ``n`` times; its transpose, applied ``n`` times, sends ``g[i]`` to ``x[i + 1]`` and
    ``-g[i]`` to ``x[i]``."""
    if g.size == 0:
        return
    width = shadow.shape[-1]
    rows = shadow.size // width
    h = _flat_copy_jit(g).reshape((rows, width - n))
    for _ in range(n):
        wider = np.zeros((rows, h.shape[1] + 1))
        for r in range(rows):
            for i in range(h.shape[1]):
                wider[r, i + 1] += h[r, i]
                wider[r, i] -= h[r, i]
        h = wider
    for r in range(rows):
        for i in range(width):
            _add_flat_jit(shadow, r * width + i, h[r, i])


def _reverse_roll(g, shadow, shift):
    """``np.roll(x, shift)`` moves flat element ``k`` to ``(k + shift) % n``."""
    flat = _flat_copy_jit(g)
    n = flat.shape[0]
    for k in range(n):
        _add_flat_jit(shadow, k, flat[(k + shift) % n])


def _reverse_repeat(g, shadow, repeats):
    """``np.repeat(x, repeats)`` repeats flat element ``k`` ``repeats`` (or
    ``repeats[k]``) times: it gets the sum of its copies' adjoints."""
    counts = np.empty(shadow.size, np.int64)
    counts[:] = repeats
    position = 0
    for k in range(counts.shape[0]):
        acc = 0.0
        for _ in range(counts[k]):
            acc += g[position]
            position += 1
        _add_flat_jit(shadow, k, acc)


def _reverse_tril(g, shadow, k=0):
    """``np.tril(x, k)`` keeps the entries on and below diagonal ``k``."""
    for i in range(shadow.shape[0]):
        for j in range(min(shadow.shape[1], i + k + 1)):
            shadow[i, j] += g[i, j]


def _reverse_triu(g, shadow, k=0):
    """``np.triu(x, k)`` keeps the entries on and above diagonal ``k``."""
    for i in range(shadow.shape[0]):
        for j in range(max(0, i + k), shadow.shape[1]):
            shadow[i, j] += g[i, j]


def _reverse_take(g, shadow, index):
    """``np.take(x, index)`` gathers flat elements; repeated indices accumulate."""
    flat = index.ravel()
    gflat = _flat_copy_jit(g)
    for k in range(flat.shape[0]):
        _add_flat_jit(shadow, flat[k], gflat[k])


def _reverse_sum_axis(g, shadow, axis):
    """``np.sum(x, axis)`` of a 2-D or 3-D ``x``: every element along the summed axis
    gets the adjoint of its sum."""
    if shadow.size == 0:
        return
    flat = _flat_copy_jit(g)
    ax = axis % shadow.ndim
    length, inner = shadow.shape[ax], 1
    for d in range(ax + 1, shadow.ndim):
        inner *= shadow.shape[d]
    for outer in range(shadow.size // (length * inner)):
        for i in range(inner):
            adjoint = flat[outer * inner + i]
            for k in range(length):
                _add_flat_jit(shadow, (outer * length + k) * inner + i, adjoint)


def _reverse_diag(g, shadow, k=0):
    """``np.diag(x, k)``: of a 2-D ``x`` it reads diagonal ``k`` (``shadow[i, i + k] +=
    g[i]``), of a 1-D ``x`` it builds a matrix with ``x`` on diagonal ``k``
    (``shadow[i] += g[i, i + k]``); below the main diagonal for ``k < 0``."""
    row, col = max(0, -k), max(0, k)
    if shadow.ndim == 2:
        for i in range(g.shape[0]):
            shadow[i + row, i + col] += g[i]
    else:
        for i in range(shadow.shape[0]):
            shadow[i] += g[i + row, i + col]


deflinear_array([np.copy, m("copy")], _add_same_shape, ndims=(0, 1, 2, 3, 4))
# (a 0-d array's is 1-D: not the same shape)
deflinear_array([np.ascontiguousarray], _add_same_shape, ndims=(1, 2, 3, 4))
deflinear_array([np.sum], _reverse_sum_axis, ndims=(2, 3), nargs=(2,))
deflinear_array([np.diag], _reverse_diag, nargs=(1, 2))
deflinear_array([m("flatten"), np.ravel, m("ravel")], _add_flat)
deflinear_array([m("astype")], _add_converted, ndims=(1, 2, 3), nargs=(2,))  # always a copy
deflinear_array([np.cumsum, m("cumsum")], _reverse_cumsum_flat, ndims=(1, 2, 3), nargs=(1, 2))
deflinear_array([np.diff], _reverse_diff, ndims=(1, 2, 3), nargs=(1, 2))
deflinear_array([np.roll], _reverse_roll, ndims=(1, 2, 3), nargs=(2,))
deflinear_array([np.repeat], _reverse_repeat, ndims=(1, 2, 3), nargs=(2,))
deflinear_array([np.tril], _reverse_tril, ndims=(2,), nargs=(1, 2))
deflinear_array([np.triu], _reverse_triu, ndims=(2,), nargs=(1, 2))
# ``x[index]`` and ``x[mask]`` reads are rewritten to ``np.take`` (capture/selection.py)
deflinear_array([np.take], _reverse_take, nargs=(2,))


@numba.njit
def take_rows(a, index):
    """``a[index]`` for a 2-D ``a`` and a 1-D integer ``index``: the rows at those positions
    (negative ones count from the end), as ``GatherReadsToTake`` rewrites ``a[idx]`` and
    ``a[mask]`` on a matrix (an embedding lookup, a row selection)."""
    n, m = a.shape
    out = np.empty((index.shape[0], m), a.dtype)
    for k in range(index.shape[0]):
        i = index[k]
        if i < -n or i >= n:
            raise IndexError("index out of bounds")
        for j in range(m):
            out[k, j] = a[i, j]
    return out


def _reverse_take_rows(g, shadow, index):
    """``take_rows(x, index)``: each row's adjoint goes back to the row it was read from;
    repeated positions accumulate."""
    for k in range(index.shape[0]):
        i = index[k]
        for j in range(g.shape[1]):
            shadow[i, j] += g[k, j]


deflinear_array([take_rows], _reverse_take_rows, ndims=(2,), nargs=(2,))


@numba.njit
def take_rows_grid(a, index):
    """``a[index]`` for a 2-D ``a`` and a 2-D integer ``index``: ``V[faces]``, the rows of
    the vertex matrix ``V`` at each corner of each face, shape ``faces.shape + (m,)``
    (negative positions count from the end), as ``GatherReadsToTake`` rewrites it: the
    rows at the flattened index, in the index's shape."""
    p, q = index.shape
    return take_rows(a, index.ravel()).reshape((p, q, a.shape[1]))


def _reverse_take_rows_grid(g, shadow, index):
    """``take_rows_grid(x, index)``: each corner's adjoint goes back to the row it was
    read from; a row shared by several faces accumulates."""
    for s in range(index.shape[0]):
        for t in range(index.shape[1]):
            i = index[s, t]
            for j in range(g.shape[2]):
                shadow[i, j] += g[s, t, j]


deflinear_array([take_rows_grid], _reverse_take_rows_grid, ndims=(2,), nargs=(2,))


@numba.njit
def take_columns(a, index):
    """``a[:, index]`` for a 2-D ``a`` and a 1-D integer ``index``: the columns at those
    positions (negative ones count from the end), as ``GatherReadsToTake`` rewrites
    ``a[:, idx]`` and ``a[:, mask]`` (a feature selection)."""
    n, m = a.shape
    out = np.empty((n, index.shape[0]), a.dtype)
    for k in range(index.shape[0]):
        j = index[k]
        if j < -m or j >= m:
            raise IndexError("index out of bounds")
        for i in range(n):
            out[i, k] = a[i, j]
    return out


def _reverse_take_columns(g, shadow, index):
    """``take_columns(x, index)``: each column's adjoint goes back to the column it was
    read from; repeated positions accumulate."""
    for k in range(index.shape[0]):
        j = index[k]
        for i in range(g.shape[0]):
            shadow[i, j] += g[i, k]


deflinear_array([take_columns], _reverse_take_columns, ndims=(2,), nargs=(2,))


# -- nonlinear array functions ------------------------------------------------------------
def _cumprod_jvp(ans, a, da):
    """``d cumprod(a)[i] = d cumprod(a)[i-1] * a[i] + cumprod(a)[i-1] * da[i]``, over the
    elements in C order (NumPy flattens)."""
    x, dx = _flat_copy_jit(a), _flat_copy_jit(da)
    t = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        t[i] = dx[i] if i == 0 else t[i - 1] * x[i] + ans[i - 1] * dx[i]
    return t


def _cumprod_vjp(g, ans, a, shadow):
    """``a_bar[j] = sum_{i >= j} g[i] prod_{k <= i, k != j} a[k]``, without dividing by
    ``a[j]`` (exact when elements are zero)."""
    x = _flat_copy_jit(a)
    n = x.shape[0]
    for j in range(n):
        acc = ans[j - 1] if j > 0 else 1.0
        total = g[j] * acc
        for i in range(j + 1, n):
            acc *= x[i]
            total += g[i] * acc
        _add_flat_jit(shadow, j, total)


def _sort_jvp(ans, a, da):
    """``np.sort`` permutes: the tangent is permuted the same way (ties: NumPy's)."""
    return da[np.argsort(a)]


def _sort_vjp(g, ans, a, shadow):
    order = np.argsort(a)
    for k in range(order.shape[0]):
        shadow[order[k]] += g[k]


defnonlinear([np.cumprod, m("cumprod")], [_cumprod_vjp], [_cumprod_jvp], ndims=(1, 2, 3))
defnonlinear([np.sort], [_sort_vjp], [_sort_jvp], ndims=(1,))


# -- reductions over a whole array --------------------------------------------------------
def _trace_update(g, ans, a, shadow):
    """``np.trace`` sums the diagonal."""
    for i in range(min(a.shape[0], a.shape[1])):
        shadow[i, i] += g


def _trace_tangent(ans, a, da):
    return np.trace(da)


def _var_update(g, ans, a, shadow):
    """``d var(a) / da = 2 (a - mean(a)) / n``."""
    shadow += (2.0 * g / a.size) * (a - np.mean(a))


def _var_tangent(ans, a, da):
    return 2.0 * np.sum((a - np.mean(a)) * da) / a.size


def _std_update(g, ans, a, shadow):
    """``d std(a) / da = (a - mean(a)) / (n std(a))``; 0 at a constant array (a
    subgradient, as for the norm)."""
    if ans != 0.0:
        shadow += (g / (a.size * ans)) * (a - np.mean(a))


def _std_tangent(ans, a, da):
    if ans == 0.0:
        return 0.0
    return np.sum((a - np.mean(a)) * da) / (a.size * ans)


@internal_jit
def trace_offset(a, offset=0):
    """``np.trace(a, offset)``: the sum of the diagonal ``offset`` places above the main
    one (below it for a negative offset)."""
    n, m = a.shape
    s = 0.0
    if offset >= 0:
        for i in range(max(min(n, m - offset), 0)):
            s += a[i, i + offset]
    else:
        for i in range(max(min(n + offset, m), 0)):
            s += a[i - offset, i]
    return s


def choose_trace(argtypes):
    """``np.trace`` with an offset (without one, its rule above covers it)."""
    return trace_offset if len(argtypes) > 1 else None


defarrayvjp((np.trace,), [_trace_update], [_trace_tangent], ndims=(2,))
defcomposite(np.trace, choose_trace, ranks=(2,))
defarrayvjp((np.var, m("var")), [_var_update], [_var_tangent], ndims=(1, 2, 3))
defarrayvjp((np.std, m("std")), [_std_update], [_std_tangent], ndims=(1, 2, 3))


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


def _convolve_vjp_a(g, v, shadow):
    """``np.convolve(a, v)[k] = sum_i a[i] v[k - i]`` (full mode):
    ``a_bar[i] = sum_j g[i + j] v[j]``."""
    for i in range(shadow.shape[0]):
        acc = 0.0
        for j in range(v.shape[0]):
            acc += g[i + j] * v[j]
        shadow[i] += acc


defbilinear([np.convolve], _convolve_vjp_a, _convolve_vjp_a, ndims=(1,))
defbilinear([np.cross], _cross_vjp_a, _cross_vjp_b)
defbilinear([np.outer], _outer_vjp_a, _outer_vjp_b, ndims=(1,))


# -- elementwise selection, by a scalar kernel (looped like a @vectorize ufunc) -------------
@internal_jit
def _where(condition, a, b):
    """One element of ``np.where(condition, a, b)``: the adjoint reaches only the
    operand that was selected."""
    return a if condition else b


@internal_jit
def _clip(x, lo, hi):
    """One element of ``np.clip(x, lo, hi)`` (``x.clip``), as NumPy computes it:
    ``minimum(maximum(x, lo), hi)``."""
    return min(max(x, lo), hi)


@internal_jit
def _sinc(x):
    """One element of ``np.sinc(x)`` (a Python function in NumPy, not a ufunc): its
    scalar rule is in ``scalar_math.py``."""
    return np.sinc(x)


defkernel([np.where], _where)
defkernel([np.clip], _clip)
defkernel([np.sinc], _sinc)


@numba.njit
def take_points(a, rows, cols):
    """``a[rows, cols]`` for a 2-D ``a`` and two 1-D integer arrays of one length: the
    elements at the pairs ``(rows[k], cols[k])`` (negative positions count from the end),
    as ``MixedReadsToTake`` rewrites that pointwise read (a distance matrix read at
    edge list pairs)."""
    n, m = a.shape
    if rows.shape[0] != cols.shape[0]:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together")
    out = np.empty(rows.shape[0], a.dtype)
    for k in range(rows.shape[0]):
        i, j = rows[k], cols[k]
        if i < -n or i >= n or j < -m or j >= m:
            raise IndexError("index out of bounds")
        out[k] = a[i, j]
    return out


def _reverse_take_points(g, shadow, rows, cols):
    """``take_points(x, rows, cols)``: each element's adjoint goes back to the pair it was
    read from; a repeated pair accumulates."""
    for k in range(rows.shape[0]):
        shadow[rows[k], cols[k]] += g[k]


deflinear_array([take_points], _reverse_take_points, ndims=(2,), nargs=(3,))
