"""0-d arrays are scalars in boxes: make every operation on them a scalar operation.

Numba (like NumPy) gives a scalar for an operator or ufunc whose operands are 0-d arrays
and scalars (``a * b``, ``np.sin(a)``), and the one element for a reduction of a 0-d
array (``np.sum(a)``, ``a.max()``). Read that way, these are scalar code, which the
scalar rules already cover in every mode:

- ``ZeroDimOperandsToElements``: each 0-d array operand of such an operator, ufunc or
  reduction is read as ``a[()]`` first; a reduction of a 0-d array becomes that read.
- ``ReductionOfScalar``: ``np.sum(s)``, ``np.mean(s)``, ``np.max(s)``, ... of a float
  scalar (as the two rewrites above leave them, or as written) is ``s``.
- ``ScalarToZeroDim``: ``np.asarray(s)`` and ``np.array(s)`` of a float scalar make a
  0-d array, which is ``np.full((), s)`` (an allocation whose fill value is
  differentiated).

A 0-d array combined with an array of higher rank broadcasts, and is left to the
broadcasting rules.
"""
import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target
from numba.core.typing import signature

from .selection import _call, _typed
from ..ir.nodes import global_value

#: reductions whose value on a scalar (or a 0-d array) is that scalar (its element)
REDUCTIONS = (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.nansum,
              np.nanmean, np.nanmax, np.nanmin, np.median)


def _is_0d(typ):
    """Whether ``typ`` is a 0-d array."""
    return isinstance(typ, types.Array) and typ.ndim == 0


def _is_float(typ):
    """Whether ``typ`` is a float scalar."""
    return isinstance(typ, types.Float)


def _element(fn, block, stmt, arr):
    """Insert ``$el = arr[()]`` before ``stmt``; return the var."""
    at = block.body.index(stmt)
    typ = fn.typeof(arr.name)
    empty = _typed(fn, block, at, ir.Expr.build_tuple([], stmt.loc), types.Tuple(()),
                   stmt.loc, "$unit")
    read = ir.Expr.static_getitem(arr, (), empty, stmt.loc)
    fn.calltypes[read] = signature(typ.dtype, typ, types.Tuple(()))
    return _typed(fn, block, at + 1, read, typ.dtype, stmt.loc, "$el")


def _callee(fn, expr):
    """The function a call names (a NumPy ufunc, ``np.sum``), else None."""
    return global_value(fn.func_ir.blocks, expr.func)


class ZeroDimOperandsToElements:
    """``a * b`` / ``np.sin(a)`` / ``np.sum(a)`` with 0-d arrays -> scalar code."""

    name = "zero_dim_operands_to_elements"

    def run(self, fn):
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op in ("binop", "unary", "call")
                        and isinstance(fn.typeof(stmt.target.name), types.Number)):
                    continue
                operands = ([expr.lhs, expr.rhs] if expr.op == "binop" else
                            [expr.value] if expr.op == "unary" else list(expr.args))
                if not any(_is_0d(fn.typeof(v.name)) for v in operands):
                    continue
                if expr.op == "call":
                    self.rewrite_call(fn, block, stmt, tyctx)
                else:
                    self.rewrite_operator(fn, block, stmt, operands, tyctx)

    @staticmethod
    def rewrite_operator(fn, block, stmt, operands, tyctx):
        """An operator: its 0-d operands become element reads, its signature scalar."""
        expr = stmt.value
        new = [_element(fn, block, stmt, v) if _is_0d(fn.typeof(v.name)) else v
               for v in operands]
        key = expr.fn
        sig = tyctx.resolve_function_type(key, tuple(fn.typeof(v.name) for v in new), {})
        if sig is None or sig.return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(expr, None)
        if expr.op == "binop":
            stmt.value = ir.Expr.binop(expr.fn, new[0], new[1], expr.loc)
        else:
            stmt.value = ir.Expr.unary(expr.fn, new[0], expr.loc)
        fn.calltypes[stmt.value] = sig

    @staticmethod
    def rewrite_call(fn, block, stmt, tyctx):
        """A ufunc of 0-d operands, or a reduction of a 0-d array."""
        expr = stmt.value
        func = _callee(fn, expr)
        if expr.kws or expr.vararg:
            return
        if func in REDUCTIONS and len(expr.args) == 1:
            stmt.value = _element(fn, block, stmt, expr.args[0])
            fn.calltypes.pop(expr, None)
            return
        if not isinstance(func, np.ufunc) or len(expr.args) != func.nin:
            return
        args = [_element(fn, block, stmt, v) if _is_0d(fn.typeof(v.name)) else v
                for v in expr.args]
        found = _call(fn, block, stmt, func, args)
        if found is None or found[1].return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(expr, None)
        stmt.value = found[0]


class ReductionOfScalar:
    """``np.sum(s)`` (or mean, max, ...) of a float scalar -> ``s``."""

    name = "reduction_of_scalar"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "call"
                        and len(expr.args) == 1 and not expr.kws and not expr.vararg
                        and _callee(fn, expr) in REDUCTIONS):
                    continue
                arg = expr.args[0]
                if _is_float(fn.typeof(arg.name)) and (
                        fn.typeof(arg.name) == fn.typeof(stmt.target.name)):
                    fn.calltypes.pop(expr, None)
                    stmt.value = ir.Var(arg.scope, arg.name, expr.loc)


class ScalarToZeroDim:
    """``np.asarray(s)`` / ``np.array(s)`` of a float scalar -> ``np.full((), s)``."""

    name = "scalar_to_zero_dim"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "call"
                        and len(expr.args) == 1 and not expr.kws and not expr.vararg
                        and _callee(fn, expr) in (np.asarray, np.array)
                        and _is_float(fn.typeof(expr.args[0].name))
                        and _is_0d(fn.typeof(stmt.target.name))):
                    continue
                at = block.body.index(stmt)
                shape = _typed(fn, block, at, ir.Expr.build_tuple([], stmt.loc),
                               types.Tuple(()), stmt.loc, "$shape")
                found = _call(fn, block, stmt, np.full, [shape, expr.args[0]])
                if found is None or found[1].return_type != fn.typeof(stmt.target.name):
                    continue
                fn.calltypes.pop(expr, None)
                stmt.value = found[0]


ZERO_DIM = [ScalarToZeroDim(), ZeroDimOperandsToElements(), ReductionOfScalar()]
