"""Scalars that only steer control flow carry no derivative.

``while np.linalg.norm(dx, np.inf) > tol`` or ``err = abs(a - b) / scale; if err < eps``:
these floats depend on differentiated inputs, but every use is a comparison, a branch
condition, or the operand of another such float. No derivative flows through a
comparison (its result is piecewise constant), so none of them reaches the output; both
modes leave them inactive, and a call with no rule there (a norm with ``ord=np.inf``) is
computed, not refused. Only pure operations qualify: arithmetic, phis, copies, and calls
of NumPy, ``math`` and builtin functions or array methods that write nothing; a helper
``@njit`` function never does (it may write into an array argument).
"""
import operator

import numpy as np
from numba.core import ir, types

from ..ir.numpy_effects import numpy_writes
from ..rules.classify import callee_key

_COMPARE = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)
_PURE_OPS = ("binop", "unary", "phi", "cast")


def control_only(fn):
    """The names of the scalar floats of ``fn`` whose values only decide control flow."""
    defs, uses, operands = {}, {}, {}
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                value = stmt.value
                defs.setdefault(stmt.target.name, []).append(value)
                reads = ([value] if isinstance(value, ir.Var) else
                         value.list_vars() if isinstance(value, ir.Expr) else [])
                operands.setdefault(stmt.target.name, []).extend(v.name for v in reads)
                for var in reads:
                    uses.setdefault(var.name, []).append(stmt)
            elif isinstance(stmt, (ir.Branch, ir.Del)):
                continue  # a branch condition, or the end of a variable's life
            else:
                for var in stmt.list_vars():
                    uses.setdefault(var.name, []).append(stmt)
    candidates = {name for name, values in defs.items()
                  if isinstance(fn.typeof(name), types.Float)
                  and all(_pure(fn, value) for value in values)}
    # a worklist, not repeated sweeps (quadratic in a chain of 400 products): dropping a
    # name makes the statements defining it harmful uses of their operands, so only
    # those operands are looked at again
    work = sorted(candidates, reverse=True)
    while work:
        name = work.pop()
        if name in candidates and not all(_harmless(stmt, candidates)
                                          for stmt in uses.get(name, ())):
            candidates.discard(name)
            work.extend(n for n in operands.get(name, ()) if n in candidates)
    return candidates


def _harmless(stmt, candidates):
    """Whether a use cannot carry a derivative to the output: a comparison, or the
    definition of another control-only float."""
    if not isinstance(stmt, ir.Assign):
        return False
    value = stmt.value
    if isinstance(value, ir.Expr) and value.op == "binop" and value.fn in _COMPARE:
        return True
    return stmt.target.name in candidates


def _pure(fn, value):
    """Whether computing ``value`` has no effect but its result."""
    if isinstance(value, ir.Var):
        return True
    if not isinstance(value, ir.Expr):
        return False
    if value.op in _PURE_OPS:
        return True
    if value.op != "call" or value.kws or value.vararg or value.varkwarg:
        return False
    return _pure_callee(fn, value)


def _pure_callee(fn, value):
    """Calls of NumPy functions that write nothing, ``math`` and builtin functions, and
    float-returning array methods (``x.max()``)."""
    ftype = fn.typeof(value.func.name)
    if isinstance(ftype, types.Dispatcher):
        return False
    key, receiver = callee_key(fn, value.func)
    if receiver is not None:
        return isinstance(fn.typeof(receiver.name), types.Array)
    if isinstance(key, np.ufunc):
        return True  # a float result: scalar operands, no ``out`` array
    if getattr(key, "__module__", None) in ("math", "builtins"):
        return True
    return numpy_writes(fn, key, value) == []  # (None: not a NumPy function)
