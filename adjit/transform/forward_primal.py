"""The primal statement in forward mode, its operands' values from before it, and the
zero tangent of an argument written with differentiated values.

Generated code is not in SSA form (adjoints are reassigned), so a forward handler whose
target is also an operand (``s = s * x`` in a reverse pass) reads that operand's old value,
and its old tangent, through copies taken before the primal statement runs.
"""
from numba.core import ir, types

from ..ir.builder import clone_stmt
from ..ir.value_types import is_float_array
from ..rules.arrays import zeros_shadow
from .tangents import differentiable_items


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


def written_argument_tangent(ctx, e, arg):
    """An argument without a tangent of its own that is written with differentiated
    values (an ``out=`` array, a workspace tuple ``ws`` of arrays): its tangent starts
    at zero (per item of a tuple) and takes the tangents of what is written."""
    typ = ctx.typeof(arg.name)
    if is_float_array(typ):
        e.call(zeros_shadow, [arg], target=ctx.dot(arg.name))
    elif isinstance(typ, types.BaseTuple):
        items = [(e.item(arg, k), typ.types[k]) for k in differentiable_items(typ)]
        e.assign(e.tuple([e.call(zeros_shadow, [v]) if is_float_array(t) else ctx.zero(e, v, t)
                          for v, t in items]), target=ctx.dot(arg.name))
