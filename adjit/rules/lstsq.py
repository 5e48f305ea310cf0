"""Rules for ``np.linalg.lstsq(a, b)``: ``capture/composites.py`` rewrites the call to the
tuple of its four parts, each an ``@njit`` primitive below that calls Numba's own
``lstsq`` (so values are exactly the primal's):

- ``lstsq_solution``: ``x = (A^T A)^-1 A^T b``, with ``r = b - A x``:
  ``dx = (A^T A)^-1 (dA^T r - A^T dA x + A^T db)``; reverse, with ``z = (A^T A)^-1 g``:
  ``b_bar += A z`` and ``A_bar += r z^T - A z x^T``.
- ``lstsq_residuals``: the squared residual norms (empty unless ``A`` is tall and of full
  rank). At the optimum, ``d |r_j|^2 = 2 r_j^T (db_j - dA x_j)``.
- ``lstsq_singular_values``: the singular values of ``A``, ``ds_i = u_i^T dA v_i``;
  reverse ``A_bar += U diag(g) V^T``.
- ``lstsq_rank``: an integer, no derivative.

The singular values' reverse rule uses ``np.linalg.svd``, whose rules (``linalg.py``)
forward mode follows under ``hvp``; when a function does not read them,
``lstsq_singular_values_unread`` computes them without a derivative.

These derivatives hold for ``A`` of full column rank (``m >= n``, rank ``n``), where the
least-squares solution is unique and smooth; the rules raise ``ValueError`` otherwise
rather than return the derivative of another problem. Test cases:
``tests/rules/test_array_ops.py``.
"""
import numpy as np

from ..compile.inline_library import internal_jit
from .core import nondiff
from .registry import defnonlinear


@internal_jit
def lstsq_solution(a, b):
    """``np.linalg.lstsq(a, b)[0]``."""
    return np.linalg.lstsq(a, b)[0]


@internal_jit
def lstsq_residuals(a, b):
    """``np.linalg.lstsq(a, b)[1]``."""
    return np.linalg.lstsq(a, b)[1]


@internal_jit
def lstsq_rank(a, b):
    """``np.linalg.lstsq(a, b)[2]``."""
    return np.linalg.lstsq(a, b)[2]


@internal_jit
def lstsq_singular_values(a, b):
    """``np.linalg.lstsq(a, b)[3]``."""
    return np.linalg.lstsq(a, b)[3]


@internal_jit
def lstsq_singular_values_unread(a, b):
    """``lstsq_singular_values`` where nothing reads it (``capture/composites.py``): the
    same value, declared non-differentiable, so that its rule (whose reverse uses
    ``np.linalg.svd``, which forward mode cannot differentiate) is not asked for under
    ``hvp``."""
    return np.linalg.lstsq(a, b)[3]


@internal_jit
def _full_rank_solution(a, b):
    """``(A^T A, r, x)`` as 2-D arrays (one column per right-hand side), from one call of
    ``lstsq``, after checking that ``A`` has full column rank."""
    m, n = a.shape
    solved = np.linalg.lstsq(a, b)
    if m < n or solved[2] < n:
        raise ValueError("adjit: the derivative of np.linalg.lstsq needs a matrix of full "
                         "column rank (as many rows as columns at least, independent columns)")
    x = solved[0].reshape(n, -1)
    return a.T @ a, b.reshape(m, -1) - a @ x, x


def _solution_jvp_a(ans, a, b, da):
    gram, r, x = _full_rank_solution(a, b)
    return np.linalg.solve(gram, da.T @ r - a.T @ (da @ x)).reshape(ans.shape)


def _solution_jvp_b(ans, a, b, db):
    gram, _, _ = _full_rank_solution(a, b)
    return np.linalg.solve(gram, a.T @ db)


def _solution_vjp_a(g, ans, a, b, shadow):
    gram, r, x = _full_rank_solution(a, b)
    z = np.linalg.solve(gram, g.reshape(a.shape[1], -1))
    shadow += r @ z.T - (a @ z) @ x.T


def _solution_vjp_b(g, ans, a, b, shadow):
    gram, _, _ = _full_rank_solution(a, b)
    shadow += (a @ np.linalg.solve(gram, g.reshape(a.shape[1], -1))).reshape(shadow.shape)


def _residuals_jvp_a(ans, a, b, da):
    if ans.size == 0:
        return np.zeros_like(ans)
    _, r, x = _full_rank_solution(a, b)
    return -2.0 * np.sum(r * (da @ x), axis=0)


def _residuals_jvp_b(ans, a, b, db):
    if ans.size == 0:
        return np.zeros_like(ans)
    _, r, _ = _full_rank_solution(a, b)
    return 2.0 * np.sum(r * db.reshape(r.shape), axis=0)


def _residuals_vjp_a(g, ans, a, b, shadow):
    if ans.size == 0:
        return
    _, r, x = _full_rank_solution(a, b)
    shadow -= 2.0 * (r * g) @ x.T


def _residuals_vjp_b(g, ans, a, b, shadow):
    if ans.size == 0:
        return
    _, r, _ = _full_rank_solution(a, b)
    shadow += (2.0 * (r * g)).reshape(shadow.shape)


def _singular_values_jvp_a(ans, a, b, da):
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * (da @ vt.T), axis=0)


def _singular_values_jvp_b(ans, a, b, db):
    return np.zeros_like(ans)


def _singular_values_vjp_a(g, ans, a, b, shadow):
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    shadow += (u * g) @ vt


def _singular_values_vjp_b(g, ans, a, b, shadow):
    pass


defnonlinear([lstsq_solution], [_solution_vjp_a, _solution_vjp_b],
             [_solution_jvp_a, _solution_jvp_b], nargs=(2,))
defnonlinear([lstsq_residuals], [_residuals_vjp_a, _residuals_vjp_b],
             [_residuals_jvp_a, _residuals_jvp_b], nargs=(2,))
defnonlinear([lstsq_singular_values], [_singular_values_vjp_a, _singular_values_vjp_b],
             [_singular_values_jvp_a, _singular_values_jvp_b], nargs=(2,))
nondiff(lstsq_rank, lstsq_singular_values_unread)
