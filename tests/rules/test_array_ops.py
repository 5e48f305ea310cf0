"""Every array-valued primitive of ``rules/registry.py`` (views, linear maps, bilinear
products, elementwise kernels) in reverse mode, forward mode and forward-over-reverse,
against finite differences. A registered op without a case here fails ``test_every_op_has_a_case``."""
import numpy as np
import pytest

from adjit.rules.registry import _name, registered_array_ops, registered_kernels
from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(5)
V6 = RNG.uniform(0.5, 1.5, 6)
V3 = np.array([0.4, -1.1, 0.7])
W3 = np.array([1.3, 0.2, -0.6])
M23 = RNG.uniform(-1.0, 1.0, (2, 3))
N23 = RNG.uniform(-1.0, 1.0, (2, 3))
N33 = RNG.uniform(-0.3, 0.3, (3, 3))
SPD3 = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.5]])
TALL = np.vstack((SPD3, RNG.uniform(-1.0, 1.0, (2, 3))))  # 5 x 3, full column rank
V5 = RNG.uniform(-1.0, 1.0, 5)
M34 = RNG.uniform(-1.0, 1.0, (3, 4))


# each result is pushed through a non-linear reduction so that the adjoint reaching the
# rule is not constant (and the HVP is not zero)
def t_attr(a): return np.sum(np.sin(a.T) * np.arange(6.0).reshape(3, 2))
def t_func(a):
    t = np.arange(24.0).reshape(2, 3, 4) * 0.1
    return np.sum(np.transpose(a) ** 3) + np.sum(np.transpose(a * t[0, :2, :3], (1, 0)) * a.T) \
        + np.sum(np.sin(np.transpose(t * a[0, 0], (1, 0, 2))[:, 0]))
def t_method(a): return np.sum(np.exp(a.transpose()[1]))
def swapped(t):
    return (np.sum(np.sin(np.swapaxes(t, 0, 2)) * np.arange(24.0).reshape(4, 3, 2))
            + np.sum(np.swapaxes(t, 1, 2)[0] ** 3) + np.sum(np.swapaxes(t[1], 0, 1) @ t[0]))
def reshape_method(x): return np.sum(np.sin(x.reshape(2, 3)[1]) * x.reshape((3, 2))[0, 1])
def reshape_func(x): return np.sum(np.reshape(x, (3, 2)) ** 3)
# a 3-D .T (all axes reversed) and flat views of a 4-D array (NCHW code: out.ravel())
def t_attr_3d(a): return np.sum(np.sin(a.T) * np.arange(24.0).reshape(4, 3, 2))
def flat_4d(x):
    s = np.sum(np.tanh(x.ravel()) ** 2 * np.arange(24.0))
    for v in x.flat:
        s += v ** 3
    return s + np.sum(np.tanh(x.reshape(x.shape[0], -1)) ** 2 * np.arange(12.0))
def copy_method(x):
    y = x.copy()
    y[0] = 2.0 * y[1]
    return np.sum(y * y * x)
def copy_func(a): return np.sum(np.copy(a) ** 3) + np.sum(np.ascontiguousarray(a.T)[0] ** 2)
def flatten(a): return np.sum(np.sin(a.flatten()) * np.arange(6.0))
def ravel_func(a): return np.sum(np.ravel(a.T) ** 3)  # a copy: C-contiguous is a view
def ravel_method(a): return np.sum(np.cos(a.T.ravel()) * a.ravel())
def astype_method(a): return np.sum(np.sin(a.astype(np.float64)) * a)  # always a copy
def identity_and_dtypes(x, d):
    # npbench's correlation starts from np.eye(M, dtype=data.dtype); dpbench's PCA casts
    # with another array's dtype: neither dtype nor identity carries a derivative
    c = np.eye(3, dtype=x.dtype)
    c[0, 1:3] = x[1:3] * x[0]
    return (np.sum(c @ c) + np.sum(np.identity(3) * x[0])
            + np.sum(np.dot(d.T.astype(x.dtype), d) ** 2))
def cumsum_func(x): return np.sum(np.cumsum(x) ** 2)
def cumsum_method(x): return np.sum(np.sin(x.cumsum()))
def cross(a, b): return np.sum(np.cross(a, b) ** 2) + np.cross(a * a, b)[1]
def cross_rows(a, b): return np.sum(np.cross(a, b) ** 2)
def outer(a, b): return np.sum(np.outer(a, b) ** 2 * np.outer(a, a))
def sum_axis(a): return np.sum(np.sum(a, axis=0) ** 2) + np.sum(np.sin(a.sum(axis=-1)))
def sinc(x): return np.sum(np.sinc(x) * x) + np.sum(np.sinc(np.outer(x, x)))
def where(x, y): return np.sum(np.where(x > 0.8, x * y, np.sin(y)) ** 2)
def where_3d(t): return np.sum(np.where(t > 0.0, t * t, np.sin(t)) * t)  # a 3-D map loop
def cholesky(a): return np.sum(np.sin(np.linalg.cholesky(a)))
def solve(a, b): return np.sum(np.linalg.solve(a, b) ** 2)
def solve_matrix(a, b): return np.sum(np.linalg.solve(a, b) ** 2)
def inv(a): return np.sum(np.linalg.inv(a) ** 2)
def det(a): return np.linalg.det(a) ** 2
def qr(tall, wide):
    # both factors of a tall, a square and a wide matrix (LAPACK's signs; full rank)
    q, r = np.linalg.qr(tall)
    s = np.sum(q * tall) + np.sum(r ** 3) + np.sum(np.sin(np.linalg.qr(wide)[0]))
    q2, r2 = np.linalg.qr(wide[:, :3] * tall[:3])
    return s + np.sum(r2 * r2 * wide[:, 1:]) + np.sum(np.linalg.qr(wide)[1] ** 2) + q2[1, 2]
def pinv(tall, wide):
    # tall, wide and square (with rcond= positional and by keyword), all of full rank
    return (np.sum(np.linalg.pinv(tall) ** 3) + np.sum(np.sin(np.linalg.pinv(wide, 1e-10)))
            + np.sum(np.linalg.pinv(tall[:3] * wide[:, :3], rcond=1e-12) * wide[:, 1:]))
def diag(a):
    return (np.sum(np.sin(np.diag(a))) + np.sum(np.diag(a.T) ** 3) + np.sum(np.diag(a, 1) ** 2)
            + np.sum(np.diag(a.T, k=-1) ** 3) + np.sum(np.sin(np.diag(a[0], k=-1)) * np.diag(a[1], 1).T))
def clip(a): return np.sum(np.clip(a, -0.5, a_max=0.5) * a) + np.sum(a.clip(-0.2, 0.3) ** 3)
def svd_parts(tall, wide, sq):
    # the singular values and the first columns of U of a full SVD (its extra vectors
    # unread, as in PCA), the thin factors of a wide matrix, every factor of a square one
    uf, s, _ = np.linalg.svd(tall)
    u, s2, vt = np.linalg.svd(wide, full_matrices=False)
    u3, s3, vt3 = np.linalg.svd(sq)
    return (np.sum(s ** 3) + np.sum(uf[:, :2] * tall[:, 1:]) + np.sum(u[:, 0] * s2)
            + np.sum(vt * wide)
            + np.sum((u3 @ vt3) * sq) + np.sum(u3[0] * s3) + vt3[1, 2])


def triangles(a):
    return np.sum(np.tril(a) ** 2 * a) + np.sum(np.sin(np.triu(a, 1))) + np.sum(
        np.diag(np.diag(a)) @ a)
def sequences(x):
    return np.sum(np.diff(x) ** 3) + np.sum(np.cumprod(x)) + np.sum(
        np.sin(x.cumprod())) + np.sum(np.sort(x) * np.arange(6.0))
def flips(a):
    # a kernel reversed for a convolution, and the rows / columns of a matrix
    k = np.flip(a[0])
    return np.sum(k * a[1]) + np.sum(np.flipud(a) * a ** 2) + np.sum(np.fliplr(a)[0] * np.flip(a)[1])
def expand_cumsum(a):
    return np.sum(np.expand_dims(a[0], 0) * a) + np.sum(np.cumsum(a) ** 2)
def squeezes(row, col):
    # np.squeeze and x.squeeze with a constant axis (rules/squeeze.py): views
    a = np.squeeze(row, axis=0)
    return np.sum(a * a) + np.sum(np.sin(np.squeeze(col, 1)) * col.squeeze(axis=-1)) + np.sum(
        np.squeeze(row[:, None, :], axis=1) ** 3)
def gather_rows(a):
    # rows of a matrix by integer array (repeated, negative) and by a 1-D mask -> take_rows
    picked = a[np.array([2, 0, 2, -1])]
    masked = a[a[:, 0] > 0.0]
    return np.sum(picked * picked) + np.sum(np.sin(masked))

COLUMNS = np.array([1, -1, 1])  # a module-level index: a constant to Numba
FACES = np.array([[0, 1, 2], [1, 3, -1], [2, 3, 0]])  # corner 3 and -1 shared


def gather_faces(v):
    # a mesh energy: the corners of each face (a 2-D index of a 2-D array) -> take_rows_grid;
    # shared vertices accumulate their adjoints
    t = v[FACES]
    e1 = t[:, 1, :] - t[:, 0, :]
    e2 = t[:, 2] - t[:, 0]
    area = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    return np.sum(area * area) + np.sum(np.sin(v[np.array([[1, 1], [0, -2]])]))


def gather_columns(a):
    # columns of a matrix by integer array (repeated, negative; a module-level constant
    # too) and by a 1-D mask -> take_columns (a feature selection)
    picked = a[:, np.array([2, 0, 2, -1])]
    masked = a[:, a[0] > -0.5]
    return (np.sum(picked * picked * a[:, :1]) + np.sum(np.sin(masked) * masked)
            + np.sum(a[:, COLUMNS] * a))


def gather_points(a):
    # elements at (row, column) pairs, a repeated pair and negative positions -> take_points
    return np.sum(a[np.array([0, 1, 0, -1]), np.array([2, 0, 2, -2])] ** 3)


def aranges(T, dt):
    # np.arange grids whose end, step or origin is a parameter (refused before): the
    # values are linear in origin and step; the end sets the length only
    t = np.arange(0.0, T, dt)
    return (np.sum(np.sin(t * T) * t) + np.sum(np.arange(T) * T)
            + np.sum(np.arange(dt, 2.0) ** 2))


def grids(length, origin):
    # a grid whose length and origin are parameters; integer endpoints; one point
    x = np.linspace(0.0, length, 7)
    y = np.linspace(origin, 2.0, 5)
    return (np.sum(np.sin(x) * x) + np.sum(y ** 3) + np.sum(np.linspace(1, 3, 4)) * length
            + np.linspace(origin, length, 1)[0] * origin)


def gathers(x):
    # integer-array reads (a repeated index accumulates) and mask reads -> np.take
    return np.sum(x[np.array([0, 2, 2, 5])] ** 3) + np.sum(np.sin(x[x > 1.0]))
def stacking(x):
    y = np.concatenate((x, x * x)) * np.hstack((x, np.sin(x)))
    z = np.vstack((x, x * x, np.ones(6))) + np.stack((x, x, x)) * np.column_stack(
        (x, x, x)).T
    return np.sum(np.sin(y) * y) + np.sum(z ** 2)
def concatenate_columns(a):
    return np.sum(np.sin(np.concatenate((a, a * a), axis=1)) * np.hstack((a, a)))
def eigen(a):
    # v * sin(v) is even in v: the eigenvectors' sign convention does not matter
    w, v = np.linalg.eigh(a)
    return (np.sum(w ** 3) + np.sum(np.sin(v) * v * np.arange(3.0))
            + np.sum(np.linalg.eigvalsh(a * a) ** 2))
def stack_columns(x):
    # np.stack of vectors along axis 1 (or -1): the columns of a matrix
    return np.sum(np.stack((x, x * x), axis=1) @ np.array([1.0, 2.0])) + np.sum(
        np.stack((x, np.sin(x)), -1)[:, 1] ** 2) + np.sum(np.stack((x, x), axis=0)[1] ** 3)
def concatenate_1d(x): return np.sum(np.concatenate((x, x * x)) ** 3)
def slogdet_trace(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.trace(a @ a) + sign * logdet
def traces_off_diagonal(a):
    # np.trace with an offset, above and below the main diagonal, past its end
    return np.trace(a, 1) * np.trace(a, -1) + np.trace(a, offset=2) + np.trace(a, 5)
def fill_diagonal(M, d):
    # a pairwise matrix with its self-interaction entries replaced (N-body codes)
    N = M * M
    np.fill_diagonal(N, d)
    return np.sum(N * M)
def interp(x, fp):
    xp = np.array([0.0, 1.0, 2.5, 3.0])  # points outside it are clamped: derivative 0
    return np.sum(np.interp(x, xp, fp) ** 2) + np.interp(x[0] * 1.3, xp, fp * fp)
def var_std(a): return np.var(a) * np.std(a * a) + a.var()
def var_std_3d(t): return np.var(t) * np.std(t * t) + t.std()  # (refused on 3-D before)
def where_indices(x):
    # np.where(condition) alone: the indices, read as a gather and iterated
    idx = np.where(x > 0.7)[0]
    s = np.sum(x[idx] ** 2)
    for i in np.where(x < 1.0)[0]:
        s += np.sin(x[i])
    return s
def segment_sums(x):
    # per-group sums and means: weighted bincount (weights= and positional, minlength)
    groups = np.array([0, 2, 2, 0, 4, 2])
    sums = np.bincount(groups, weights=x * x, minlength=6)
    means = np.bincount(groups, x) / np.maximum(np.bincount(groups), 1)
    return np.sum(np.sin(sums)) + sums[5] + np.sum(means ** 3)
def convolutions(a, w):
    # np.convolve with a mode and np.correlate (default 'valid'), both length orders
    v = a[:4] * w
    s = np.sum(np.sin(np.convolve(a, v, mode="same")) ** 2) + np.sum(np.convolve(v, a, "valid"))
    return s + np.sum(np.correlate(v, a, "same") ** 3) + np.sum(np.correlate(a, v) ** 2)
def least_squares(a, b):
    # a tall design matrix (full column rank) and one right-hand side
    x, residuals, rank, sv = np.linalg.lstsq(a, b)
    return np.sum(x * x) + np.sum(residuals) + np.sum(sv) * rank
def least_squares_columns(a, b):
    x = np.linalg.lstsq(a, b)[0]
    return np.sum(np.sin(x)) + np.sum(np.linalg.lstsq(a, b)[1])


def sequences_2d(m):
    # cumsum along an axis, diff of a 2-D array and of order 2, roll, repeat
    return (np.sum(np.cumsum(m, axis=0) ** 2) + np.sum(np.sin(np.cumsum(m, axis=1)))
            + np.sum(np.diff(m) ** 3) + np.sum(np.diff(m[0], n=2) ** 2)
            + np.sum(np.roll(m, 3) * m) + np.sum(np.repeat(m[1], 2) ** 3)
            + np.sum(np.repeat(m[2], np.array([1, 0, 2, 3])) ** 2)
            + np.sum(np.cumprod(m) * np.arange(12.0)))


def sums_3d(t):
    # np.sum along each axis of a 3-D array
    return (np.sum(np.sin(np.sum(t, axis=0))) + np.sum(np.sum(t, axis=1) ** 2)
            + np.sum(np.sum(t * t, axis=-1) ** 3))


def shapes_and_products(x):
    # atleast_2d is a view; convolve is bilinear in its two arguments
    a = np.atleast_2d(x)
    return (np.sum(a @ a.T) + np.sum(np.atleast_1d(x) ** 3)
            + np.sum(np.convolve(x, x[:3] * x[:3]) ** 2) + np.sum(np.atleast_3d(x) * x))


def appended(x, a):
    # np.append of a number (an int too) and of an array, onto 1-D and 2-D arrays
    y = np.append(x, a * 2.0)
    z = np.append(np.append(y, np.sin(x)), 1)
    w = np.append(np.outer(x, x), x[:2])
    return np.sum(z * z) + np.sum(np.cos(w)) * a


IDX2 = np.array([0, 2])


def deleted(x, a):
    # np.delete of an integer (negative too) and of a module-level index array
    y = np.delete(x * a, 1)
    z = np.delete(np.sin(x), IDX2)
    w = np.delete(np.outer(x, x), -2)
    return np.sum(y * y) + np.sum(z) * a + np.sum(w ** 3)


# (function, arguments, argnums, op names it covers)
CASES = [
    (t_attr, (M23,), 0, ["x.T"]),
    (t_attr_3d, (RNG.uniform(-1.0, 1.0, (2, 3, 4)),), 0, []),
    (flat_4d, (RNG.uniform(-1.0, 1.0, (2, 2, 3, 2)),), 0, []),
    (t_func, (M23,), 0, ["np.transpose"]),
    (t_method, (M23,), 0, ["x.transpose"]),
    (swapped, (RNG.uniform(-1.0, 1.0, (2, 3, 4)),), 0, ["np.swapaxes"]),
    (reshape_method, (V6,), 0, ["x.reshape"]),
    (reshape_func, (V6,), 0, ["np.reshape"]),
    (copy_method, (V6,), 0, ["x.copy"]),
    (copy_func, (M23,), 0, ["np.copy", "np.ascontiguousarray"]),
    (flatten, (M23,), 0, ["x.flatten"]),
    (ravel_func, (M23,), 0, ["np.ravel"]),
    (ravel_method, (M23,), 0, ["x.ravel"]),
    (astype_method, (M23,), 0, ["x.astype"]),
    (identity_and_dtypes, (V3, M23), (0, 1), []),
    (cumsum_func, (V6,), 0, ["np.cumsum"]),
    (cumsum_method, (V6,), 0, ["x.cumsum"]),
    (cross, (V3, W3), (0, 1), ["np.cross"]),
    (cross_rows, (M23, N23), 1, []),
    (outer, (V3, W3), (0, 1), ["np.outer"]),
    (sum_axis, (M23,), 0, ["np.sum"]),
    (where, (V6, V6[::-1].copy()), (0, 1), ["np.where"]),
    (where_3d, (RNG.uniform(-1.0, 1.0, (2, 3, 2)),), 0, []),
    (clip, (M23,), 0, ["np.clip"]),
    (sinc, (V3,), 0, ["np.sinc"]),
    (sequences_2d, (M34,), 0, ["np.roll", "np.repeat"]),
    (sums_3d, (RNG.uniform(-1.0, 1.0, (2, 3, 4)),), 0, []),
    (shapes_and_products, (V6,), 0, ["np.atleast_1d", "np.atleast_2d", "np.atleast_3d",
                                     "np.convolve"]),
    (diag, (M23,), 0, ["np.diag"]),
    # not symmetric: cholesky reads the lower triangle, and the check perturbs every entry
    (cholesky, (SPD3 + np.triu(N33, 1),), 0, ["np.linalg.cholesky"]),
    (solve, (SPD3 + N33, V3), (0, 1), ["np.linalg.solve"]),
    (solve_matrix, (SPD3 + N33, SPD3), (0, 1), []),
    (inv, (SPD3 + N33,), 0, ["np.linalg.inv"]),
    (det, (SPD3 + N33,), 0, []),
    (pinv, (TALL, M34), (0, 1), ["np.linalg.pinv"]),
    (qr, (TALL, M34), (0, 1), ["qr_q", "qr_r"]),
    (svd_parts, (TALL, M34, SPD3 + N33), (0, 1, 2), ["svd_u", "svd_s", "svd_vt"]),
    (triangles, (SPD3 + N33,), 0, ["np.tril", "np.triu"]),
    (sequences, (V6,), 0, ["np.diff", "np.cumprod", "x.cumprod", "np.sort"]),
    (expand_cumsum, (M23,), 0, ["np.expand_dims"]),
    (squeezes, (M23[:1], M23[:, 1:2]), (0, 1), ["np.squeeze"]),
    (flips, (M23,), 0, ["np.flip", "np.flipud", "np.fliplr"]),
    (gathers, (V6,), 0, ["np.take"]),
    (gather_rows, (M23.T.copy(),), 0, ["take_rows"]),
    (gather_columns, (M23,), 0, ["take_columns"]),
    (gather_faces, (RNG.uniform(-1.0, 1.0, (5, 2)),), 0, ["take_rows_grid"]),
    (gather_points, (M23,), 0, ["take_points"]),
    (grids, (1.3, 0.4), (0, 1), ["np.linspace"]),
    (aranges, (2.3, 0.3), (0, 1), ["np.arange"]),
    # composites (rules/composites.py) and whole-array reductions (rules/array_ops.py)
    (stacking, (V6,), 0, ["join_rows", "as_row", "as_column"]),
    (concatenate_columns, (M23,), 0, ["join_columns"]),
    (concatenate_1d, (V6,), 0, []),
    (stack_columns, (V6,), 0, []),
    (appended, (V3, 0.4), (0, 1), []),
    (deleted, (V3, 0.4), (0, 1), []),
    (slogdet_trace, (SPD3 + N33,), 0, []),
    (traces_off_diagonal, (M23.T.copy(),), 0, []),
    (var_std, (M23,), 0, []),
    (var_std_3d, (RNG.uniform(-1.0, 1.0, (2, 3, 2)),), 0, []),
    (segment_sums, (V6,), 0, ["bincount_weighted"]),
    (where_indices, (V6,), 0, []),
    (convolutions, (V6, 0.7), (0, 1), []),
    (fill_diagonal, (M23.T @ M23, 0.3), (0, 1), []),
    (interp, (np.array([0.3, 1.7, 2.6, 2.9, -0.5, 3.5]), np.array([1.0, 2.0, 0.5, 1.5])),
     (0, 1), []),
    (eigen, (SPD3 + N33,), 0, ["eigenvalues", "eigenvectors"]),
    (least_squares, (TALL, V5), (0, 1),
     ["lstsq_solution", "lstsq_residuals", "lstsq_singular_values"]),
    (least_squares_columns, (TALL, TALL[:, ::-1].copy() ** 2), (0, 1), []),
]
IDS = [c[0].__name__ for c in CASES]


def _names(op):
    return {_name(k) for k in op.keys}


def test_every_op_has_a_case():
    covered = {name for case in CASES for name in case[3]}
    for op in registered_array_ops():
        assert _names(op) <= covered, f"no test case for {sorted(_names(op) - covered)}"
    for key in registered_kernels():
        assert _name(key) in covered, f"no test case for {_name(key)}"


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_grad(f, args, argnums, _):
    check_grad(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums,_", CASES, ids=IDS)
def test_jvp(f, args, argnums, _):
    check_jvp(f, *args)


# left out of hvp, for compile time (each forward-over-reverse program takes over a minute
# to compile): cross_rows (`cross` covers np.cross under hvp) and the two solves (their
# reverse helpers are forward-differentiated through `inv`'s and `det`'s rules)
# Linear maps (copy, flatten, ravel) have constant transposes: t_func and cumsum_func
# cover that shape under hvp.
# The 2-D joins and var/std take minutes to compile under hvp (issue 12): concatenate_1d
# covers the join rule shape there, var_std_3d (11 s) var's and std's.
# lstsq is left out of hvp here, for compile time: least_squares_columns takes minutes;
# test_hvp_of_lstsq_through_the_solution and ..._singular_values cover its parts.
HVP_CASES = [c for c in CASES if c[0] not in (cross_rows, solve, solve_matrix, copy_func,
                                              flatten, ravel_func, ravel_method, stacking,
                                              concatenate_columns, stack_columns, var_std,
                                              least_squares, least_squares_columns)]


@pytest.mark.parametrize("f,args,argnums,_", HVP_CASES, ids=[c[0].__name__ for c in HVP_CASES])
def test_hvp(f, args, argnums, _):
    check_hvp(f, *args, argnums=argnums)


def test_lstsq_refuses_what_its_rules_do_not_cover():
    """A rank-deficient matrix has no unique smooth solution: the rules raise instead of
    returning the derivative of another problem."""
    import adjit
    deficient = np.hstack((TALL[:, :2], TALL[:, :1]))  # third column repeats the first
    with pytest.raises(ValueError, match="full column rank"):
        adjit.grad(least_squares_columns, argnums=(0, 1))(deficient, TALL ** 2)


def least_squares_fit(a, b):
    # the usual use: the solution and the fit's residual vector; the residuals and the
    # singular values lstsq returns are unpacked but unused
    x, res, rank, sv = np.linalg.lstsq(a, b)
    r = a @ x - b
    return np.sum(x * x) + np.sum(r * r)


def test_hvp_of_lstsq_through_the_solution():
    # (over a minute to compile at -O1; singular values read under hvp are refused)
    check_grad(least_squares_fit, TALL, V5)
    check_hvp(least_squares_fit, TALL, V5)


def singular_values_of_fit(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b)
    return np.sum(sv ** 2) + np.sum(sv)


def test_hvp_of_lstsq_through_the_singular_values():
    """Their reverse rule uses np.linalg.svd, whose rules forward mode now follows (an
    hvp reading them was refused)."""
    check_hvp(singular_values_of_fit, TALL, V5)


def factorisations_of_computed_matrices(x, w):
    # the matrices pinv and svd factor are made in the function: their shadows are the
    # function's own arrays, which the rules' reverse helpers write through *rest
    m = x @ w
    return np.sum(np.linalg.pinv(m) ** 3) + np.sum(np.linalg.svd(x.T.copy())[1] ** 3)


def test_hvp_through_factorisations_of_computed_matrices():
    """hvp was zero (pinv) or wrong (svd of x.T @ x) there, grad and jvp right: forward
    mode did not see the reverse helpers write the shadow they take in ``*rest``, so
    the shadow had no tangent."""
    import adjit
    w = SPD3 + N33
    check_hvp(factorisations_of_computed_matrices, TALL, w, argnums=(0, 1))
    v = (np.ones_like(TALL), np.zeros_like(w))
    assert np.any(adjit.hvp(factorisations_of_computed_matrices, argnums=(0, 1))(
        TALL, w, *v)[0] != 0.0)


def last_left_vector(a):
    return np.sum(np.linalg.svd(a)[0][:, -1] * a[:, 0])


def test_the_extra_vectors_of_a_full_svd_have_no_derivative():
    """``U`` of a full SVD of a tall matrix holds vectors that are any orthonormal
    completion: reverse mode raises where the function reads them, saying to pass
    full_matrices=False; forward mode gives them NaN tangents, never a number."""
    import adjit
    with pytest.raises(ValueError, match="full_matrices=False"):
        adjit.grad(last_left_vector)(TALL)
    value, tangent = adjit.jvp(last_left_vector)(TALL, TALL)
    assert value == pytest.approx(last_left_vector(TALL), rel=1e-12)
    assert np.isnan(tangent)


def test_det_of_a_singular_matrix_in_every_mode():
    """``det`` of a singular matrix is 0 and has a derivative (the cofactor matrix); its
    rules used ``inv``, which raised LinAlgError where the primal did not."""
    import adjit
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(adjit.grad(det_plain)(a), [[4.0, -2.0], [-2.0, 1.0]],
                               rtol=1e-14)
    b = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])  # rank 2
    check_grad(det_times_sum, b)
    check_jvp(det_times_sum, b)
    check_hvp(det_times_sum, b)


def det_plain(a): return np.linalg.det(a)
def det_times_sum(a): return np.linalg.det(a) * np.sum(a)


def test_cholesky_where_its_rules_sum_rows_in_vector_lanes():
    """Cholesky's forward rule sums its row dot products with ``fastmath={"reassoc"}``,
    in vector lanes once a row has a few entries: a 3 x 3 matrix never reaches them.
    At 11 x 11 the vector loop and its remainder both run, in every mode; the tangent
    of a dense case against the one of the same matrix's lower triangle mirrored (the
    rule reads the lower triangle only)."""
    import adjit
    rng = np.random.default_rng(11)
    b = rng.uniform(-1.0, 1.0, (11, 11))
    a = b @ b.T + 11.0 * np.eye(11)
    upper = np.triu(rng.uniform(-1.0, 1.0, (11, 11)), 1)
    check_grad(cholesky, a + upper)
    check_jvp(cholesky, a + upper)
    check_hvp(cholesky, a + upper)
    da = rng.uniform(-1.0, 1.0, (11, 11))
    mirrored = np.tril(da) + np.tril(da, -1).T
    _, dense = adjit.jvp(cholesky)(a, da)
    _, symmetric = adjit.jvp(cholesky)(a, mirrored)
    np.testing.assert_allclose(dense, symmetric, rtol=1e-12)
