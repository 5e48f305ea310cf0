"""The primal statement in forward mode, and its operands' values from before it.

Generated code is not in SSA form (adjoints are reassigned), so a forward handler whose
target is also an operand (``s = s * x`` in a reverse pass) reads that operand's old value,
and its old tangent, through copies taken before the primal statement runs.
"""
from numba.core import ir

from ..ir.builder import clone_stmt


def emit_primal(ctx, stmt, e):
    """Copy the primal statement; return {operand name: var holding its old value}."""
    old = {}
    if isinstance(stmt, ir.Assign):
        for v in stmt.value.list_vars() if hasattr(stmt.value, "list_vars") else ():
            if v.name == stmt.target.name and v.name not in old:
                old[v.name] = e.assign(e.var(v.name), hint="old")
                if ctx.active(v):
                    old[ctx.dot(v.name)] = e.assign(e.var(ctx.dot(v.name)), hint="olddot")
    e.stmt(clone_stmt(stmt))
    return old


def operand(e, old, var):
    """``var``, or the copy of its value from before the primal statement."""
    return old.get(var.name, var)


def operand_tangent(ctx, e, old, var):
    """``var``'s tangent, or the copy of it from before the primal statement."""
    if ctx.active(var) and ctx.dot(var.name) in old:
        return old[ctx.dot(var.name)]
    return ctx.tangent(e, var)
