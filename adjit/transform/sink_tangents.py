"""Sink forward mode's tangent statements to their first use.

The forward transform emits each primal statement followed by its tangent. For arrays
that order keeps a primal temporary alive while its tangent is allocated: the jvp of
``np.sum(np.kron(a, b))`` held the 5 MB product and its 5 MB tangent at once, and glibc
handed both back to the kernel on every call. Computed after ``np.sum`` has read the
product, the tangent can reuse its memory.

A tangent statement moves down its block, past statements that only compute a result,
until the first statement that reads what it assigns, redefines what it reads, or may
write memory. Only forward mode's own statements move (targets the primal function does
not have), and only those that compute: copies, arithmetic, and calls of adjit's pure
kernels (``ir.purity``).
"""
from numba.core import ir

from ..ir.dead_code import effect_free
from ..ir.nodes import global_values
from ..ir.purity import calls_pure_kernel

#: expression kinds of a tangent statement that may move: they only compute a value
_MOVABLE_OPS = frozenset({"binop", "unary", "cast", "build_tuple"})
#: how far one statement is moved at most (keeps the pass linear on huge blocks)
_REACH = 64


def sink_tangents(blocks, primal_names):
    """Move each movable tangent statement of ``blocks`` down to just before its first
    use (see the module doc); ``primal_names`` are the primal function's variables."""
    globals_ = global_values(blocks)
    for block in blocks.values():
        block.body = _sunk(block.body, primal_names, globals_)
    return blocks


def _sunk(body, primal_names, globals_):
    """``body`` with its movable statements sunk, built from the bottom up so that a
    chain (a kernel call, then the copy into ``x%dot``) moves together."""
    # copies of the tangent arguments stay at the top: moved down, each becomes an
    # incref and a decref between the primal's last use and the tangent's kernel, and
    # Numba's reference-count pruning then moved the primal's release after the kernel
    fixed = primal_names | {s.target.name for s in body
                            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Arg)}
    out = [body[-1]]
    for stmt in reversed(body[:-1]):
        if not _movable(stmt, fixed, globals_):
            out.insert(0, stmt)
            continue
        out.insert(_stop(stmt, out, globals_), stmt)
    return out


def _stop(stmt, later, globals_):
    """The index in ``later`` (the statements after ``stmt``, terminator last) before
    which ``stmt`` must stay."""
    value = stmt.value
    reads = {v.name for v in (value.list_vars() if isinstance(value, ir.Expr) else [value])}
    reads.add(stmt.target.name)
    limit = min(len(later) - 1, _REACH)
    for pos in range(limit):
        after = later[pos]
        if not (isinstance(after, ir.Assign) and _passable(after.value, globals_)):
            return pos
        if after.target.name in reads or any(v.name == stmt.target.name
                                             for v in after.list_vars()):
            return pos
    return limit


def _movable(stmt, fixed, globals_):
    """A statement of forward mode's own that only computes its value (and reads no
    variable of ``fixed`` as a plain copy)."""
    if not isinstance(stmt, ir.Assign) or stmt.target.name in fixed:
        return False
    value = stmt.value
    if isinstance(value, ir.Var):
        return value.name not in fixed
    if isinstance(value, ir.Expr) and value.op in _MOVABLE_OPS:
        return True
    return calls_pure_kernel(value, globals_)


def _passable(value, globals_):
    """Whether a statement assigning ``value`` writes no memory a tangent may read."""
    return effect_free(value, globals_)
