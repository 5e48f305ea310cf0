"""Array methods whose function form has the rule: ``X.dot(w)`` becomes ``np.dot(X, w)``.

One spelling per operation keeps the rules in one place; the method form is rewritten
into a call of the NumPy function with the receiver as its first argument, with typemap
and calltypes updated."""
import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name

#: method name -> NumPy function taking the receiver first
METHOD_FUNCTIONS = {"dot": np.dot}


class MethodsToFunctions:
    """``y = x.m(args)`` with ``m`` in ``METHOD_FUNCTIONS`` becomes ``y = np.m(x, args)``."""

    name = "methods_to_functions"

    def run(self, fn):
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for k, stmt in enumerate(list(block.body)):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                        and isinstance(fn.typeof(value.func.name), types.BoundFunction)):
                    continue
                bound = defs.get(value.func.name)
                if not (isinstance(bound, ir.Expr) and bound.op == "getattr"
                        and bound.attr in METHOD_FUNCTIONS
                        and isinstance(fn.typeof(bound.value.name), types.Array)):
                    continue
                func = METHOD_FUNCTIONS[bound.attr]
                args = [bound.value] + list(value.args)
                fnty = tyctx.resolve_value_type(func)
                sig = tyctx.resolve_function_type(
                    fnty, tuple(fn.typeof(a.name) for a in args), {})
                if sig is None:
                    continue
                var = ir.Var(block.scope, fresh_name(f"${bound.attr}"), stmt.loc)
                block.body.insert(block.body.index(stmt),
                                  ir.Assign(ir.Global(bound.attr, func, stmt.loc), var,
                                            stmt.loc))
                fn.typemap[var.name] = fnty
                new = ir.Expr.call(var, args, (), stmt.loc)
                del fn.calltypes[value]
                fn.calltypes[new] = sig
                stmt.value = new
