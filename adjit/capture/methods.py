"""Array methods whose function form has the rule: ``X.dot(w)`` becomes ``np.dot(X, w)``.

One spelling per operation keeps the rules in one place; the method form is rewritten
into a call of the NumPy function with the receiver as its first argument, with typemap
and calltypes updated."""
import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target
from numba.core.typing import signature

from ..ir.builder import fresh_name

#: method name -> NumPy function taking the receiver first
METHOD_FUNCTIONS = {"dot": np.dot, "sum": np.sum, "clip": np.clip, "squeeze": np.squeeze,
                    "take": np.take, "repeat": np.repeat, "conj": np.conj,
                    "conjugate": np.conjugate}


class MethodsToFunctions:
    """``y = x.m(args)`` with ``m`` in ``METHOD_FUNCTIONS`` becomes ``y = np.m(x, args)``,
    keywords kept (``BindCallArguments``, which runs next, makes them positional);
    ``y = s.item()`` of a float ``s`` becomes ``y = s``, and so does ``y = x.real`` of
    floats."""

    name = "methods_to_functions"

    def run(self, fn):
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for k, stmt in enumerate(list(block.body)):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if _is_real_of_floats(fn, stmt, value):
                    stmt.value = value.value  # the same memory, as Numba gives it
                    continue
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and value.vararg is None and value.varkwarg is None
                        and isinstance(fn.typeof(value.func.name), types.BoundFunction)):
                    continue
                bound = defs.get(value.func.name)
                if _is_scalar_item(fn, bound, value):
                    del fn.calltypes[value]
                    stmt.value = bound.value  # ``s.item()`` of a float is ``s``
                    continue
                if not (isinstance(bound, ir.Expr) and bound.op == "getattr"
                        and bound.attr in METHOD_FUNCTIONS
                        and isinstance(fn.typeof(bound.value.name), types.Array)):
                    continue
                func = METHOD_FUNCTIONS[bound.attr]
                args = [bound.value] + list(value.args)
                fnty = tyctx.resolve_value_type(func)
                kws = {k: fn.typeof(v.name) for k, v in value.kws}
                try:
                    sig = tyctx.resolve_function_type(
                        fnty, tuple(fn.typeof(a.name) for a in args), kws)
                except Exception:  # the function form does not type: keep the method
                    sig = None
                if sig is None:
                    continue
                var = ir.Var(block.scope, fresh_name(f"${bound.attr}"), stmt.loc)
                block.body.insert(block.body.index(stmt),
                                  ir.Assign(ir.Global(bound.attr, func, stmt.loc), var,
                                            stmt.loc))
                fn.typemap[var.name] = fnty
                new = ir.Expr.call(var, args, value.kws, stmt.loc)
                del fn.calltypes[value]
                fn.calltypes[new] = sig
                stmt.value = new


def _is_real_of_floats(fn, stmt, value):
    """Whether ``value`` is ``x.real`` of a float array or number, which is ``x`` itself
    (Numba returns the array; the result has its type)."""
    if not (isinstance(value, ir.Expr) and value.op == "getattr" and value.attr == "real"):
        return False
    typ = fn.typeof(value.value.name)
    dtype = typ.dtype if isinstance(typ, types.Array) else typ
    return isinstance(dtype, types.Float) and fn.typeof(stmt.target.name) == typ


def _is_scalar_item(fn, bound, call):
    """Whether ``call`` is ``s.item()`` of a float scalar (``np.sum(x).item()``, as code
    written for NumPy scalars has it), which is ``s`` itself."""
    return (isinstance(bound, ir.Expr) and bound.op == "getattr" and bound.attr == "item"
            and not call.args and not call.kws
            and isinstance(fn.typeof(bound.value.name), types.Float)
            and fn.typeof(bound.value.name) == fn.typeof(call.func.name).this)


class FlatIterationToRavel:
    """``for v in a.flat`` iterates ``np.ravel(a)``: the same elements in the same order,
    through the array iteration adjit already differentiates. Applied when every use of
    ``a.flat`` is a ``for`` loop over it (``getiter``); the iterator types follow."""

    name = "flat_iteration_to_ravel"

    def run(self, fn):
        tyctx = cpu_target.typing_context
        flats = [(b, s) for b in fn.func_ir.blocks.values() for s in b.body
                 if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                 and s.value.op == "getattr" and s.value.attr == "flat"
                 and isinstance(fn.typeof(s.value.value.name), types.Array)]
        uses = {}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                for var in stmt.list_vars():
                    uses.setdefault(var.name, []).append(stmt)
        for block, stmt in flats:
            iters = [u for u in uses.get(stmt.target.name, ()) if u is not stmt]
            if not iters or not all(isinstance(u, ir.Assign) and isinstance(u.value, ir.Expr)
                                    and u.value.op == "getiter" for u in iters):
                continue
            flat_type = fn.typeof(stmt.target.name)
            arr = types.Array(fn.typeof(stmt.value.value.name).dtype, 1, "C")
            iter_type = types.ArrayIterator(arr)
            fnty = tyctx.resolve_value_type(np.ravel)
            sig = tyctx.resolve_function_type(fnty, (fn.typeof(stmt.value.value.name),), {})
            if sig is None or sig.return_type != arr:
                continue
            func = ir.Var(block.scope, fresh_name("$ravel"), stmt.loc)
            block.body.insert(block.body.index(stmt),
                              ir.Assign(ir.Global("ravel", np.ravel, stmt.loc), func, stmt.loc))
            fn.typemap[func.name] = fnty
            call = ir.Expr.call(func, [stmt.value.value], (), stmt.loc)
            fn.calltypes[call] = sig
            stmt.value = call
            fn.typemap[stmt.target.name] = arr
            _retype(fn, flat_type, arr, iter_type, stmt.target.name)


def _retype(fn, flat_type, arr, iter_type, ravelled):
    """Replace the flat-iterator type: the ravelled array is ``arr``, every iterator over
    it ``iter_type``, in the typemap and in the signatures of getiter and iternext."""
    for name, typ in list(fn.typemap.items()):
        if typ == flat_type and name != ravelled:
            fn.typemap[name] = iter_type
    for expr, sig in list(fn.calltypes.items()):
        if sig is None or flat_type not in tuple(sig.args) + (sig.return_type,):
            continue
        if getattr(expr, "op", None) == "getiter":
            fn.calltypes[expr] = signature(iter_type, arr)
        else:
            args = tuple(iter_type if a == flat_type else a for a in sig.args)
            ret = iter_type if sig.return_type == flat_type else sig.return_type
            fn.calltypes[expr] = signature(ret, *args)


class JitclassMethodsToCalls:
    """``y = obj.m(args)`` on a ``@jitclass`` instance becomes ``y = m(obj, args)``, a call
    of the method's own ``@njit`` dispatcher with the instance first. adjit then derives
    the method like any helper: values read from the instance's fields are constants
    (the instance itself is never differentiated), the method's arguments carry
    derivatives as usual. Keywords are kept for ``BindCallArguments``."""

    name = "jitclass_methods_to_calls"

    def run(self, fn):
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if _is_real_of_floats(fn, stmt, value):
                    stmt.value = value.value  # the same memory, as Numba gives it
                    continue
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and value.vararg is None and value.varkwarg is None):
                    continue
                bound = defs.get(value.func.name)
                if not (isinstance(bound, ir.Expr) and bound.op == "getattr"):
                    continue
                owner = fn.typeof(bound.value.name)
                method = getattr(owner, "jit_methods", {}).get(bound.attr)
                if not isinstance(owner, types.ClassInstanceType) or method is None:
                    continue
                args = [bound.value] + list(value.args)
                fnty = types.Dispatcher(method)
                kws = {k: fn.typeof(v.name) for k, v in value.kws}
                sig = tyctx.resolve_function_type(
                    fnty, tuple(fn.typeof(a.name) for a in args), kws)
                if sig is None or sig.return_type != fn.typeof(stmt.target.name):
                    continue
                var = ir.Var(block.scope, fresh_name(f"${bound.attr}"), stmt.loc)
                block.body.insert(block.body.index(stmt),
                                  ir.Assign(ir.Global(bound.attr, method, stmt.loc), var,
                                            stmt.loc))
                fn.typemap[var.name] = fnty
                new = ir.Expr.call(var, args, value.kws, stmt.loc)
                del fn.calltypes[value]
                fn.calltypes[new] = sig
                stmt.value = new


#: calls that return their array argument itself when it is already C-contiguous
_SAME_WHEN_CONTIGUOUS = (np.ascontiguousarray, np.asarray)


class ContiguousAliases:
    """Calls that, on a C-contiguous array, share its memory rather than copy it, as
    Numba and NumPy both do: ``np.ascontiguousarray(x)`` and ``np.asarray(x)`` are ``x``
    itself, and ``np.ravel(x)`` / ``x.ravel()`` are ``np.reshape(x, x.size)``. Written as
    those, writes through the result reach ``x`` in every mode, as in the primal; on
    other layouts Numba copies, and the copy rules stay."""

    name = "contiguous_aliases"

    def run(self, fn):
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if _is_real_of_floats(fn, stmt, value):
                    stmt.value = value.value  # the same memory, as Numba gives it
                    continue
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and value.vararg is None):
                    continue
                arr = self.contiguous_argument(fn, defs, value)
                if arr is None:
                    continue
                typ, out = fn.typeof(arr.name), fn.typeof(stmt.target.name)
                if out == typ:
                    fn.calltypes.pop(value, None)
                    stmt.value = arr
                elif out == types.Array(typ.dtype, 1, "C"):
                    self.reshape_flat(fn, block, stmt, arr)
                elif isinstance(out, types.Array) and out.ndim == typ.ndim:
                    self.converting_copy(fn, block, stmt, arr)

    @staticmethod
    def contiguous_argument(fn, defs, value):
        """The C-contiguous array a ravel or as-contiguous call takes, else None."""
        fnty, key = fn.typeof(value.func.name), None
        if isinstance(fnty, types.BoundFunction):
            bound = defs.get(value.func.name)
            ok = (isinstance(bound, ir.Expr) and bound.op == "getattr"
                  and bound.attr == "ravel" and not value.args)
            arr = bound.value if ok else None
        else:
            key = getattr(fnty, "typing_key", None) if isinstance(fnty, types.Function) \
                else None
            ok = len(value.args) == 1 and not value.kws and (
                key is np.ravel or key in _SAME_WHEN_CONTIGUOUS)
            # np.asarray(x, dtype=np.float64) of a float64 x is x too (the result's type
            # is then x's own, which ``run`` checks)
            ok = ok or (key is np.asarray and len(value.args) + len(value.kws) == 2
                        and all(name == "dtype" for name, _ in value.kws))
            arr = value.args[0] if ok else None
        typ = fn.typeof(arr.name) if arr is not None else None
        if isinstance(typ, types.Array) and typ.ndim >= 1 and (
                typ.layout == "C" or key is np.asarray):  # asarray never copies an array
            return arr
        return None

    @staticmethod
    def converting_copy(fn, block, stmt, arr):
        """``np.asarray(x, dtype=np.float64)`` of a float32 ``x`` (a new array, as
        NumPy makes it) -> ``x.astype(np.float64)``, which has a rule."""
        value = stmt.value
        dtype = value.args[1] if len(value.args) == 2 else dict(value.kws)["dtype"]
        tyctx = cpu_target.typing_context
        method = tyctx.resolve_getattr(fn.typeof(arr.name), "astype")
        sig = method and tyctx.resolve_function_type(method, (fn.typeof(dtype.name),), {})
        if sig is None or sig.return_type != fn.typeof(stmt.target.name):
            return
        bound = ir.Var(block.scope, fresh_name("$astype"), stmt.loc)
        block.body.insert(block.body.index(stmt),
                          ir.Assign(ir.Expr.getattr(arr, "astype", stmt.loc), bound, stmt.loc))
        fn.typemap[bound.name] = method
        fn.calltypes.pop(value, None)
        stmt.value = ir.Expr.call(bound, [dtype], (), stmt.loc)
        fn.calltypes[stmt.value] = sig

    @staticmethod
    def reshape_flat(fn, block, stmt, arr):
        """``stmt.target = np.reshape(arr, arr.size)``: the flat view Numba's ravel is."""
        from .selection import _call
        at = block.body.index(stmt)
        size = ir.Var(block.scope, fresh_name("$size"), stmt.loc)
        block.body.insert(at, ir.Assign(ir.Expr.getattr(arr, "size", stmt.loc), size,
                                        stmt.loc))
        fn.typemap[size.name] = types.intp
        found = _call(fn, block, stmt, np.reshape, [arr, size])
        if found is None or found[1].return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(stmt.value, None)
        stmt.value = found[0]
