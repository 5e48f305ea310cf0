"""What a call (or an array attribute such as ``x.T``) in typed IR is, asked the same
way by reverse mode, forward mode and the write and aliasing analyses.

``array_op_site(fn, value)`` answers whether an assigned value is a registered
array-valued primitive (``rules/registry.py``) and with which arguments, the method
receiver first. ``emit_array_op(e, site, args)`` emits the same operation on other
arguments (a shadow, a tangent): views and linear maps are rebuilt that way.
"""
from dataclasses import dataclass

from numba.core import ir, types

from ..rules.registry import classify_array_call


@dataclass
class ArrayOpSite:
    """A call of a registered array op: the op, its arguments (receiver first), the
    called object for a plain function."""

    op: object
    args: list
    callee: object = None


def _definition(fn, name):
    """The single assigned value of ``name`` in ``fn``, or None."""
    found = None
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name == name:
                if found is not None:
                    return None
                found = stmt.value
    return found


def _result_type(fn, value):
    sig = fn.calltypes.get(value) if value.op == "call" else None
    if sig is not None:
        return sig.return_type
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.value is value:
                return fn.typeof(stmt.target.name)
    return None


def method_key(typing_key):
    """One spelling of an array method's key: Numba types some methods with the key
    ``"array.copy"`` and others (``@overload_method``) with ``(types.Array, "sum")``."""
    if isinstance(typing_key, str) and typing_key.startswith("array."):
        return (types.Array, typing_key[len("array."):])
    return typing_key


def array_op_site(fn, value):
    """The ``ArrayOpSite`` of ``value`` when it is a registered array op, else None."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "getattr" and isinstance(fn.typeof(value.value.name), types.Array):
        key, args, callee = (types.Array, value.attr), [value.value], None
    elif value.op == "call" and not (value.kws or value.vararg or value.varkwarg):
        ftype = fn.typeof(value.func.name)
        if isinstance(ftype, types.BoundFunction):
            bound = _definition(fn, value.func.name)
            if not (isinstance(bound, ir.Expr) and bound.op == "getattr"):
                return None
            key, args = method_key(ftype.typing_key), [bound.value] + list(value.args)
            callee = None
        else:
            callee = _definition(fn, value.func.name)
            callee = callee.value if isinstance(callee, (ir.Global, ir.FreeVar)) else None
            if callee is None and isinstance(ftype, types.Function):
                callee = ftype.typing_key
            key, args = callee, list(value.args)
    else:
        return None
    argtypes = [fn.typeof(a.name) for a in args]
    op = classify_array_call(key, argtypes, _result_type(fn, value))
    if op is None or (value.op == "getattr") != op.attribute:
        return None
    return ArrayOpSite(op, args, callee)


def emit_array_op(e, site, args, hint="op"):
    """Emit the operation of ``site`` on ``args`` (same positions as ``site.args``)."""
    op = site.op
    if op.attribute:
        return e.assign(ir.Expr.getattr(args[0], op.method, e.loc), hint=hint)
    if site.callee is None:  # a method: bind it to the new receiver
        bound = e.assign(ir.Expr.getattr(args[0], op.method, e.loc), hint="meth")
        return e.call(bound, args[1:], hint=hint)
    return e.call(site.callee, args, hint=hint)
