"""Rules for ``np.linalg``: Cholesky factor, solve, inverse, pseudo-inverse, QR factors,
the eigenvalues and eigenvectors of ``eigh`` (``defnonlinear``) and determinant
(``defarrayvjp``), with the standard adjoints (Cholesky's: its algorithm's loops in
forward mode and in reverse).
Each helper is plain ``@njit`` code, loops and NumPy calls that have rules themselves,
so forward mode can differentiate the reverse helpers again (``hvp``). Test cases: ``tests/rules/test_array_ops.py``.

``np.linalg.cholesky`` reads only the lower triangle of its argument (Numba's and NumPy's
both), so its derivative is that of ``A -> cholesky(tril(A) + tril(A, -1).T)``: an entry
below the diagonal counts for itself and its mirror, entries above get no adjoint.
``np.linalg.eigh`` reads the lower triangle too, and is treated the same way. It returns a
pair: ``capture/composites.py`` rewrites it to the pair of primitives ``eigenvalues``
and ``eigenvectors``. Eigenvector derivatives assume distinct
eigenvalues (they divide by their differences, as every standard rule does).
``np.linalg.svd`` is rewritten likewise, to ``svd_u``, ``svd_s`` and ``svd_vt``, with
Townsend's (2016) rules for the thin SVD (distinct, nonzero singular values). The extra
singular vectors of a full SVD of a non-square matrix have no derivative: reverse mode
raises ``ValueError`` if the function reads them, forward mode gives them NaN tangents.
"""
import numpy as np

from ..compile.inline_library import internal_jit
from .arrays import defarrayvjp
from .core import nondiff
from .registry import defnonlinear


@internal_jit
def _lower_mirrored(d):
    """``tril(d) + tril(d, -1).T``: the symmetric matrix ``eigh`` sees for input ``d``
    (in ``d``'s precision: a float32 product with float64 does not type)."""
    n = d.shape[0]
    out = np.empty((n, n), d.dtype)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = d[i, j]
            out[j, i] = d[i, j]
    return out


@internal_jit
def _fold_lower(s, shadow):
    """Add the adjoint ``s`` of the symmetric matrix a factorisation sees into the
    shadow of its input, of which only the lower triangle is read."""
    n = s.shape[0]
    for i in range(n):
        shadow[i, i] += s[i, i]
        for j in range(i):
            shadow[i, j] += s[i, j] + s[j, i]


@internal_jit(fastmath={"reassoc"})
def _cholesky_jvp(ans, a, da):
    """``dL``: the Cholesky algorithm (row by row, as Cholesky-Banachiewicz) in forward
    mode, given its result ``L``. ``L[i, j] = (A[i, j] - sum_k L[i, k] L[j, k]) / L[j, j]``
    (``sqrt`` of the numerator on the diagonal), so ``dL[i, j]`` needs only entries of
    ``dL`` already computed. It reads the lower triangle of ``dA``, as the factorisation
    reads ``A``'s. About n^3/3 multiply-adds: the form ``L phi(L^-1 dA L^-T)`` (two
    triangular solves and a product, about 3 n^3) cost 3.3 times as much at n = 128.

    Its inner loop is a dot product of two rows. Compiled in order, it waits on one add
    per step; ``fastmath={"reassoc"}`` (reassociation only: no assumption about NaN,
    infinities or signed zeros) lets LLVM sum it in vector lanes, 2.3 times as fast at
    n = 128, with a result that differs in rounding only."""
    n = ans.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            t = 0.0
            for k in range(j):
                t += out[i, k] * ans[j, k] + ans[i, k] * out[j, k]
            s = da[i, j] - t
            if i == j:
                out[i, i] = 0.5 * s / ans[i, i]
            else:
                out[i, j] = (s - ans[i, j] * out[j, j]) / ans[j, j]
    return out


def _cholesky_vjp(g, ans, a, shadow):
    """The same algorithm in reverse (Murray, "Differentiation of the Cholesky
    decomposition", 2016, unblocked): rows and columns in reverse order, each step's
    numerator adjoint ``s`` going to ``A[i, j]`` (lower triangle only: the upper one is
    never read) and back into the rows of ``L`` its dot product read. About n^3/3
    multiply-adds, against about 3 n^3 for ``L^-T phi(L^T g) L^-1`` (3 times as long at
    n = 128); the upper triangle of ``g`` is dropped (those entries of ``L`` are 0).

    Each inner loop writes one row of ``lbar``: forward mode over this helper (``hvp``)
    then has one written row and its tangent per loop, which LLVM vectorises more of
    than the fused loop writing two rows and their tangents (at n = 128 the derived
    tangent took 394 instead of 466 us)."""
    n = ans.shape[0]
    lbar = np.zeros((n, n))  # the lower triangle of g (np.tril compiles slowly)
    for i in range(n):
        for j in range(i + 1):
            lbar[i, j] = g[i, j]
    for step in range(n):
        i = n - 1 - step
        for back in range(i + 1):
            j = i - back
            if i == j:
                s = 0.5 * lbar[i, i] / ans[i, i]
            else:
                s = lbar[i, j] / ans[j, j]
                lbar[j, j] -= s * ans[i, j]
            shadow[i, j] += s
            for k in range(j):  # one row written per loop: see the docstring
                lbar[i, k] -= s * ans[j, k]
            for k in range(j):
                lbar[j, k] -= s * ans[i, k]


def _solve_jvp_a(ans, a, b, da):
    """``x = A^-1 b``: ``dx = -A^-1 dA x``."""
    return -np.linalg.solve(a, da @ ans)


def _solve_jvp_b(ans, a, b, db):
    return np.linalg.solve(a, db)


def _solve_vjp_a(g, ans, a, b, shadow):
    """``A_bar = -A^-T g x^T``."""
    n = a.shape[0]
    bbar = np.linalg.solve(a.T.copy(), g).reshape(n, -1)  # one code path for 1-D and 2-D b
    shadow -= bbar @ ans.reshape(n, -1).T


def _solve_vjp_b(g, ans, a, b, shadow):
    """``b_bar = A^-T g``."""
    shadow += np.linalg.solve(a.T.copy(), g)


def _inv_jvp(ans, a, da):
    """``d(A^-1) = -A^-1 dA A^-1``."""
    return -(ans @ da @ ans)


def _inv_vjp(g, ans, a, shadow):
    """``A_bar = -A^-T g A^-T``."""
    shadow -= ans.T @ g @ ans.T


def _pinv_jvp(ans, a, *rest):
    """``dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P`` (Golub and Pereyra
    1973), where the rank of ``A`` does not change; ``rest`` is ``[rcond,] dA``."""
    da = rest[-1]
    left = ans @ (ans.T @ da.T)
    right = da.T @ (ans.T @ ans)
    return -(ans @ da @ ans) + left - (left @ a) @ ans + right - ans @ (a @ right)


def _pinv_vjp(g, ans, a, *rest):
    """``A_bar = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``, the transpose
    of ``_pinv_jvp``; ``rest`` is ``[rcond,] shadow``."""
    shadow = rest[-1]
    left = g.T @ (ans @ ans.T)
    right = (ans.T @ ans) @ g.T
    shadow += -(ans.T @ g @ ans.T) + left - a @ (ans @ left) + right - (right @ ans) @ a


@internal_jit
def _cofactors(ans, a):
    """``d det(A) / dA``, the cofactor matrix: ``det(A) A^-T``, or for a singular ``A``
    (``det`` is 0 there and ``inv`` raises) each entry's signed minor determinant. A
    rule must not raise where its primal does not; the derivative exists there."""
    if ans != 0.0:
        return ans * np.linalg.inv(a).T
    n = a.shape[0]
    out = np.ones((n, n))
    minor = np.empty((n - 1, n - 1))
    for i in range(n if n > 1 else 0):
        for j in range(n):
            for r in range(n - 1):
                for c in range(n - 1):
                    minor[r, c] = a[r + (r >= i), c + (c >= j)]
            out[i, j] = (1.0 - 2.0 * ((i + j) % 2)) * np.linalg.det(minor)
    return out


def _det_update(g, ans, a, shadow):
    """``A_bar = g cof(A)`` (``g det(A) A^-T`` for an invertible ``A``)."""
    shadow += g * _cofactors(ans, a)


def _det_tangent(ans, a, da):
    """``d det(A) = tr(cof(A)^T dA)`` (``det(A) tr(A^-1 dA)`` for an invertible ``A``)."""
    return np.sum(_cofactors(ans, a) * da)


defnonlinear([np.linalg.cholesky], [_cholesky_vjp], [_cholesky_jvp], ndims=(2,))
defnonlinear([np.linalg.solve], [_solve_vjp_a, _solve_vjp_b], [_solve_jvp_a, _solve_jvp_b],
             nargs=(2,))
defnonlinear([np.linalg.inv], [_inv_vjp], [_inv_jvp], ndims=(2,))
defnonlinear([np.linalg.pinv], [_pinv_vjp], [_pinv_jvp], ndims=(2,), nargs=(1, 2))
defarrayvjp((np.linalg.det,), [_det_update], [_det_tangent], ndims=(2,))


@internal_jit
def eigenvalues(a):
    """The eigenvalues of a symmetric ``a`` (ascending), as ``np.linalg.eigh`` gives."""
    return np.linalg.eigh(a)[0]


@internal_jit
def eigenvectors(a):
    """The eigenvectors (columns) of a symmetric ``a``, as ``np.linalg.eigh`` gives."""
    return np.linalg.eigh(a)[1]


@internal_jit
def _gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (in ``w``'s precision:
    a float32 product with float64 does not type)."""
    n = w.shape[0]
    f = np.zeros((n, n), w.dtype)
    for i in range(n):
        for j in range(n):
            if i != j:
                f[i, j] = 1.0 / (w[j] - w[i])
    return f


def _eigenvalues_jvp(ans, a, da):
    """``dw_k = v_k^T dA v_k``."""
    v = eigenvectors(a)
    return np.sum(v * (_lower_mirrored(da) @ v), axis=0)


def _eigenvalues_vjp(g, ans, a, shadow):
    """``A_bar = V diag(g) V^T``, folded onto the lower triangle."""
    v = eigenvectors(a)
    _fold_lower((v * g) @ v.T, shadow)


def _eigenvectors_jvp(ans, a, da):
    """``dV = V (F * (V^T dA V))``."""
    w = eigenvalues(a)
    return ans @ (_gaps(w) * (ans.T @ _lower_mirrored(da) @ ans))


def _eigenvectors_vjp(g, ans, a, shadow):
    """``A_bar = V (F * (V^T g)) V^T``, folded onto the lower triangle."""
    w = eigenvalues(a)
    _fold_lower(ans @ (_gaps(w) * (ans.T @ g)) @ ans.T, shadow)


@internal_jit
def qr_q(a):
    """The orthonormal factor of ``np.linalg.qr(a)`` (reduced: ``m x min(m, n)``)."""
    return np.linalg.qr(a)[0]


@internal_jit
def qr_r(a):
    """The triangular factor of ``np.linalg.qr(a)`` (``min(m, n) x n``)."""
    return np.linalg.qr(a)[1]


@internal_jit
def _right_solve(b, r):
    """``b R^-1`` for a square invertible ``R`` (``R`` or ``R^T`` of a QR factor)."""
    return np.linalg.solve(np.ascontiguousarray(r.T), np.ascontiguousarray(b.T)).T


@internal_jit
def _qr_tangents(a, da):
    """``(dQ, dR)`` of ``A = QR``. For ``m >= n``, with ``C = Q^T dA R^-1`` and ``W`` the
    skew matrix of ``C``'s strictly lower triangle: ``dR = (C - W) R`` and
    ``dQ = dA R^-1 - Q (C - W)``. A wide ``A = [X Y]`` is ``Q [R_X, Q^T Y]``: ``X``'s
    square rule, and ``d(Q^T Y) = dQ^T Y + Q^T dY``. Both hold where ``R``'s diagonal
    has no zero (full rank), where LAPACK's sign choices do not change."""
    q, r = np.linalg.qr(a)
    q = np.ascontiguousarray(q)
    k = r.shape[0]
    r_x = np.ascontiguousarray(r[:, :k])
    x = np.ascontiguousarray(_right_solve(np.ascontiguousarray(da[:, :k]), r_x))
    c = q.T @ x
    low = np.tril(c, -1)
    upper = c - low + low.T
    dq = x - q @ upper
    dr = np.empty_like(r)
    dr[:, :k] = upper @ r_x
    if a.shape[1] > k:
        dr[:, k:] = dq.T @ np.ascontiguousarray(a[:, k:]) + q.T @ np.ascontiguousarray(
            da[:, k:])
    return dq, dr


@internal_jit
def _qr_adjoint(a, gq, gr):
    """``A_bar`` of ``A = QR`` given ``Q_bar`` and ``R_bar``: for ``m >= n``,
    ``(Q_bar + Q copyltu(M)) R^-T`` with ``M = R R_bar^T - Q_bar^T Q`` and ``copyltu`` the
    symmetric matrix of ``M``'s lower triangle; for a wide ``[X Y]``, ``Y_bar = Q R_bar_Y``
    and ``X``'s rule with ``Q_bar + Y R_bar_Y^T``."""
    q, r = np.linalg.qr(a)
    q = np.ascontiguousarray(q)
    k = r.shape[0]
    out = np.empty_like(a)
    gq = np.ascontiguousarray(gq).copy()
    if a.shape[1] > k:
        gr_y = np.ascontiguousarray(gr[:, k:])
        out[:, k:] = q @ gr_y
        gq += np.ascontiguousarray(a[:, k:]) @ gr_y.T
    m = np.ascontiguousarray(r[:, :k]) @ np.ascontiguousarray(gr[:, :k]).T - gq.T @ q
    low = np.tril(m, -1)
    sym = low + low.T + np.diag(np.diag(m))
    out[:, :k] = _right_solve(gq + q @ sym, np.ascontiguousarray(r[:, :k].T))
    return out


def _qr_q_jvp(ans, a, da):
    """``dQ`` (``_qr_tangents``)."""
    return _qr_tangents(a, da)[0]


def _qr_q_vjp(g, ans, a, shadow):
    """``A_bar`` for ``Q_bar = g`` (``_qr_adjoint``)."""
    shadow += _qr_adjoint(a, g, np.zeros((g.shape[1], a.shape[1]), a.dtype))


def _qr_r_jvp(ans, a, da):
    """``dR`` (``_qr_tangents``)."""
    return _qr_tangents(a, da)[1]


def _qr_r_vjp(g, ans, a, shadow):
    """``A_bar`` for ``R_bar = g`` (``_qr_adjoint``)."""
    shadow += _qr_adjoint(a, np.zeros((a.shape[0], g.shape[0]), a.dtype), g)


defnonlinear([qr_q], [_qr_q_vjp], [_qr_q_jvp], ndims=(2,))
defnonlinear([qr_r], [_qr_r_vjp], [_qr_r_jvp], ndims=(2,))
defnonlinear([eigenvalues], [_eigenvalues_vjp], [_eigenvalues_jvp], ndims=(2,))
defnonlinear([eigenvectors], [_eigenvectors_vjp], [_eigenvectors_jvp], ndims=(2,))


@internal_jit
def svd_u(a, full_matrices=True):
    """The left singular vectors of ``np.linalg.svd(a, full_matrices)``."""
    return np.linalg.svd(a, full_matrices)[0]


@internal_jit
def svd_s(a, full_matrices=True):
    """The singular values of ``np.linalg.svd(a, full_matrices)`` (descending)."""
    return np.linalg.svd(a, full_matrices)[1]


@internal_jit
def svd_vt(a, full_matrices=True):
    """The right singular vectors (rows) of ``np.linalg.svd(a, full_matrices)``."""
    return np.linalg.svd(a, full_matrices)[2]


@internal_jit
def _thin_svd(a):
    """``(U, s, V)`` of the thin SVD ``A = U diag(s) V^T`` (``U``: m x k, ``V``: n x k)."""
    u, s, vt = np.linalg.svd(a, False)
    return np.ascontiguousarray(u), s, np.ascontiguousarray(vt.T)


@internal_jit
def _svd_gaps(s):
    """``F[i, j] = 1 / (s[j]^2 - s[i]^2)`` off the diagonal, 0 on it."""
    k = s.shape[0]
    f = np.zeros((k, k), s.dtype)
    for i in range(k):
        for j in range(k):
            if i != j:
                f[i, j] = 1.0 / (s[j] * s[j] - s[i] * s[i])
    return f


@internal_jit
def _no_extra_cotangent(g, k, rows):
    """Refuse a cotangent of the extra singular vectors of a full SVD of a non-square
    matrix (``U``'s columns past ``k``, or ``V^T``'s rows): they are any orthonormal
    completion, and have no derivative. Reading only the first ``k`` (``u[:, :2]`` of a
    full ``U``) leaves them zero."""
    extra = g[:, k:] if rows else g[k:, :]
    for value in extra.ravel():
        if value != 0.0:
            raise ValueError("adjit: the extra singular vectors of np.linalg.svd(a) of a "
                             "non-square a are read, and have no derivative; pass "
                             "full_matrices=False")


@internal_jit
def _with_extra_vectors(thin, shape, rows):
    """A full SVD factor's tangent: ``thin``'s, and NaN for the extra singular vectors,
    which have no derivative, so a function that reads them gets NaN, never a number
    made up for them."""
    if thin.shape == shape:
        return thin
    out = np.full(shape, np.nan, thin.dtype)
    if rows:
        out[:, :thin.shape[1]] = thin
    else:
        out[:thin.shape[0], :] = thin
    return out


def _svd_u_jvp(ans, a, *rest):
    """``dU = U (F * (dP S + S dP^T)) + (I - U U^T) dA V S^-1`` with ``dP = U^T dA V``
    (Townsend 2016); ``rest`` is ``[full_matrices,] dA``."""
    u, s, v = _thin_svd(a)
    dav = rest[-1] @ v
    dp = u.T @ dav
    du = u @ (_svd_gaps(s) * (dp * s + s.reshape((-1, 1)) * dp.T)) + (dav - u @ dp) / s
    return _with_extra_vectors(du, ans.shape, True)


def _svd_s_jvp(ans, a, *rest):
    """``ds_i = u_i^T dA v_i``."""
    u, s, v = _thin_svd(a)
    return np.sum(u * (rest[-1] @ v), axis=0)


def _svd_vt_jvp(ans, a, *rest):
    """``dV^T`` with ``dV = V (F * (S dP + dP^T S)) + (I - V V^T) dA^T U S^-1``."""
    u, s, v = _thin_svd(a)
    dtu = rest[-1].T @ u
    dp = dtu.T @ v
    dv = v @ (_svd_gaps(s) * (s.reshape((-1, 1)) * dp + dp.T * s)) + (dtu - v @ dp.T) / s
    return _with_extra_vectors(np.ascontiguousarray(dv.T), ans.shape, False)


def _svd_u_vjp(g, ans, a, *rest):
    """``A_bar += U (F * (U^T G - G^T U)) S V^T + (I - U U^T) G S^-1 V^T``; ``rest`` is
    ``[full_matrices,] shadow``."""
    u, s, v = _thin_svd(a)
    _no_extra_cotangent(g, s.shape[0], True)
    g = np.ascontiguousarray(g[:, :s.shape[0]])
    utg = u.T @ g
    inner = (_svd_gaps(s) * (utg - utg.T)) * s
    shadow = rest[-1]
    shadow += (u @ inner + (g - u @ utg) / s) @ v.T


def _svd_s_vjp(g, ans, a, *rest):
    """``A_bar += U diag(g) V^T``."""
    u, s, v = _thin_svd(a)
    shadow = rest[-1]
    shadow += (u * g) @ v.T


def _svd_vt_vjp(g, ans, a, *rest):
    """``A_bar += U S (F * (V^T V_bar - V_bar^T V)) V^T + U S^-1 V_bar^T (I - V V^T)``
    with ``V_bar = G^T``."""
    u, s, v = _thin_svd(a)
    _no_extra_cotangent(g, s.shape[0], False)
    vbar = np.ascontiguousarray(g[:s.shape[0], :].T)
    vtvb = v.T @ vbar
    inner = s.reshape((-1, 1)) * (_svd_gaps(s) * (vtvb - vtvb.T))
    shadow = rest[-1]
    shadow += u @ (inner @ v.T + (vbar.T - vtvb.T @ v.T) / s.reshape((-1, 1)))


@internal_jit
def svd_u_unread(a, full_matrices=True):
    """``svd_u`` where nothing reads it (``capture/composites.py``), declared
    non-differentiable: its rule would refuse the extra vectors of a full SVD that the
    function never uses, and cost a derivative nobody reads."""
    return np.linalg.svd(a, full_matrices)[0]


@internal_jit
def svd_s_unread(a, full_matrices=True):
    """``svd_s`` where nothing reads it (see ``svd_u_unread``)."""
    return np.linalg.svd(a, full_matrices)[1]


@internal_jit
def svd_vt_unread(a, full_matrices=True):
    """``svd_vt`` where nothing reads it (see ``svd_u_unread``)."""
    return np.linalg.svd(a, full_matrices)[2]


nondiff(svd_u_unread, svd_s_unread, svd_vt_unread)
defnonlinear([svd_u], [_svd_u_vjp], [_svd_u_jvp], ndims=(2,), nargs=(1, 2))
defnonlinear([svd_s], [_svd_s_vjp], [_svd_s_jvp], ndims=(2,), nargs=(1, 2))
defnonlinear([svd_vt], [_svd_vt_vjp], [_svd_vt_jvp], ndims=(2,), nargs=(1, 2))
