"""Matrix products producing arrays in reverse mode: ``C = A @ B``, ``np.dot(A, B)`` with
``A`` a 2-D float array and ``B`` a 2-D or 1-D one, and ``np.kron(A, B)`` with both 1-D or
both 2-D.

Like an elementwise result (``elementwise.py``), ``C`` is a new array with a zeroed shadow
``C%shadow``; when the reverse pass needs its values it recomputes the product from
readable ``A`` and ``B``. The reverse adds ``C%shadow @ B.T`` into ``A``'s shadow and
``A.T @ C%shadow`` into ``B``'s, or the Kronecker contractions (``rules/matmul.py``).
"""
import operator

import numpy as np

from numba.core import ir, types

from ...rules.matmul import kron_update_a, kron_update_b, update_a, update_b
from ..analysis import is_float_array


# primitive -> (helper adding into A's shadow, helper adding into B's shadow)
_UPDATES = {operator.matmul: (update_a, update_b), np.dot: (update_a, update_b),
            np.kron: (kron_update_a, kron_update_b)}


def matmul_parts(ctx, value):
    """``(primitive, [a, b])`` when ``value`` is ``a @ b`` or ``np.dot(a, b)`` of float
    arrays, ``a`` 2-D and ``b`` 1-D or 2-D, or ``np.kron(a, b)`` of two 1-D or two 2-D
    float arrays, returning an array; else None."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "binop" and value.fn is operator.matmul:
        prim, operands = value.fn, [value.lhs, value.rhs]
    elif (value.op == "call" and not (value.kws or value.vararg or value.varkwarg)
          and len(value.args) == 2 and ctx.callee_object(value.func) in _UPDATES):
        prim, operands = ctx.callee_object(value.func), list(value.args)
    else:
        return None
    sig = ctx.fn.calltypes.get(value)
    if sig is None or not is_float_array(sig.return_type):
        return None
    a, b = (types.unliteral(ctx.typeof(v.name)) for v in operands)
    if not (is_float_array(a) and is_float_array(b)):
        return None
    if prim is np.kron:
        return (prim, operands) if a.ndim == b.ndim and a.ndim in (1, 2) else None
    return (prim, operands) if a.ndim == 2 and b.ndim in (1, 2) else None


def rev_matmul(ctx, stmt, e):
    """fwd: ``C = A @ B`` or ``kron(A, B)`` (a new array) / rev: ``A%shadow +=
    C%shadow @ B.T``, ``B%shadow += A.T @ C%shadow`` (or the Kronecker contractions)."""
    prim, (a, b) = matmul_parts(ctx, stmt.value)
    into_a, into_b = _UPDATES[prim]
    target = stmt.target
    for v in (a, b):
        if v.name in ctx.act.carriers and not ctx.is_active(v):
            raise ctx.unsupported(f"a matrix product of {ctx.typeof(v.name)}", stmt.loc)
    if not ctx.active_array(target):
        if ctx.is_active(a) or ctx.is_active(b):
            raise ctx.unsupported("a matrix product with an inactive result", stmt.loc)
        return
    g = ctx.shadow_of(target, stmt.loc, e)
    if ctx.active_array(a):
        e.call(into_a, [g, b, ctx.shadow_of(a, stmt.loc, e)], hint="void")
    if ctx.active_array(b):
        e.call(into_b, [g, a, ctx.shadow_of(b, stmt.loc, e)], hint="void")

