"""Arrays built from Python literals and comprehensions, as plain allocations and writes.

``np.array([f(v) for v in x])`` allocates like ``np.empty``.

Numba's front end turns an array comprehension into a loop that fills an array made by
its internal ``unsafe_empty_inferred(shape)``. That call allocates exactly as
``np.empty(shape)`` does, so it is rewritten to it, and the comprehension's array then
gets a shadow like any other allocation. (Its size, ``length_of_iterator``, is an integer
and is declared non-differentiable in ``rules/nondiff.py``.)
"""
import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target
from numba.core.typing import signature
from numba.np.unsafe.ndarray import empty_inferred

from ..ir.builder import fresh_name
from ..ir.nodes import global_values


class ComprehensionToEmpty:
    """``unsafe_empty_inferred(shape)`` -> ``np.empty(shape)`` (same type, same effect)."""

    name = "comprehension_to_empty"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and gvals.get(value.func.name) is empty_inferred):
                    continue
                fnty = tyctx.resolve_value_type(np.empty)
                sig = tyctx.resolve_function_type(
                    fnty, tuple(fn.typeof(a.name) for a in value.args), {})
                if sig is None or sig.return_type != fn.typeof(stmt.target.name):
                    continue  # (an element type np.empty cannot make: left as it is)
                var = ir.Var(block.scope, fresh_name("$empty"), stmt.loc)
                block.body.insert(block.body.index(stmt),
                                  ir.Assign(ir.Global("empty", np.empty, stmt.loc), var,
                                            stmt.loc))
                fn.typemap[var.name] = fnty
                new = ir.Expr.call(var, list(value.args), (), stmt.loc)
                del fn.calltypes[value]
                fn.calltypes[new] = sig
                stmt.value = new


class ArrayLiteralToWrites:
    """``a = np.array([[p, q], [r, 2.0]])`` (nested lists or tuples of scalars, built in
    place; ``np.asarray`` of one too, a new array as well) becomes ``a = np.empty((2, 2)); a[0, 0] = p; ...``: element writes, which every
    mode differentiates, instead of a list object with no adjoint. The literal's lists are
    removed when ``np.array`` is their only reader."""

    name = "array_literal_to_writes"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        defs = {s.target.name: s for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        uses = {}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                for var in stmt.list_vars():
                    if not (isinstance(stmt, ir.Assign) and var.name == stmt.target.name):
                        uses[var.name] = uses.get(var.name, 0) + 1
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                        and value.vararg is None and len(value.args) == 1
                        and gvals.get(value.func.name) in (np.array, np.asarray)):
                    continue
                literal = _literal(defs, uses, value.args[0].name, fn)
                rtype = fn.typeof(stmt.target.name)
                if literal is None or not _fits(rtype, literal[0]):
                    continue
                self.rewrite(fn, block, stmt, literal, defs)

    @staticmethod
    def rewrite(fn, block, stmt, literal, defs):
        """Replace the ``np.array`` statement by an allocation and element writes."""
        shape, leaves, lists = literal
        loc, scope, arr = stmt.loc, block.scope, stmt.target
        tyctx = cpu_target.typing_context
        body = []

        def typed(value, typ, hint):
            var = ir.Var(scope, fresh_name(hint), loc)
            fn.typemap[var.name] = typ
            body.append(ir.Assign(value, var, loc))
            return var

        def index(ints):
            items = [typed(ir.Const(k, loc), types.intp, "$k") for k in ints]
            if len(items) == 1:
                return items[0]
            return typed(ir.Expr.build_tuple(items, loc), types.UniTuple(types.intp, len(items)),
                         "$at")

        fnty = tyctx.resolve_value_type(np.empty)
        func = typed(ir.Global("empty", np.empty, loc), fnty, "$empty")
        dims = index(shape) if len(shape) > 1 else typed(
            ir.Expr.build_tuple([typed(ir.Const(shape[0], loc), types.intp, "$k")], loc),
            types.UniTuple(types.intp, 1), "$shape")
        call = ir.Expr.call(func, [dims], (), loc)
        fn.calltypes[call] = tyctx.resolve_function_type(fnty, (fn.typeof(dims.name),), {})
        fn.calltypes.pop(stmt.value, None)
        body.append(ir.Assign(call, arr, loc))
        atype = fn.typeof(arr.name)
        for position, leaf in leaves:
            at = index(position)
            write = ir.SetItem(arr, at, leaf, loc)
            fn.calltypes[write] = signature(types.none, atype, fn.typeof(at.name),
                                            fn.typeof(leaf.name))
            body.append(write)
        k = block.body.index(stmt)
        block.body[k:k + 1] = body
        for name in lists:
            owner = next(b for b in fn.func_ir.blocks.values() if defs[name] in b.body)
            owner.body.remove(defs[name])


def _literal(defs, uses, name, fn, depth=0):
    """``(shape, [(position, leaf var)], [list var names])`` of a nested list/tuple
    literal read only by its parent, or None when ``name`` is not one."""
    stmt = defs.get(name)
    value = stmt.value if stmt is not None else None
    if not (isinstance(value, ir.Expr) and value.op in ("build_list", "build_tuple")
            and value.items and uses.get(name, 0) == 1 and depth < 8):
        return None
    parts = []
    for item in value.items:
        if isinstance(fn.typeof(item.name), (types.Number, types.Boolean)):
            parts.append(((), [((), item)], []))
        else:
            sub = _literal(defs, uses, item.name, fn, depth + 1)
            if sub is None:
                return None
            parts.append(sub)
    inner = parts[0][0]
    if any(p[0] != inner for p in parts):
        return None  # ragged, or scalars mixed with lists
    leaves = [((k,) + pos, leaf) for k, p in enumerate(parts) for pos, leaf in p[1]]
    lists = [name] + [n for p in parts for n in p[2]]
    return (len(parts),) + inner, leaves, lists


def _fits(rtype, shape):
    """Whether ``np.empty(shape)`` has the literal's result type (float64, C order)."""
    return (isinstance(rtype, types.Array) and rtype.dtype == types.float64
            and rtype.ndim == len(shape) and rtype.layout == "C")


class ListOperandsToArrays:
    """``np.cross([0, 0, 1], h)``: a list or tuple of numbers written in a call of an array
    rule (``rules/registry.py``) becomes ``np.array([0, 0, 1])``, which
    ``ArrayLiteralToWrites`` then builds element by element. The rules match array
    operands only; NumPy reads such a literal as the same array."""

    name = "list_operands_to_arrays"

    def run(self, fn):
        from ..rules.registry import lookup_array_op
        gvals = global_values(fn.func_ir.blocks)
        built = {s.target.name for b in fn.func_ir.blocks.values() for s in b.body
                 if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                 and s.value.op in ("build_list", "build_tuple")}
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                        and value.vararg is None and value in fn.calltypes):
                    continue
                try:
                    op = lookup_array_op(gvals.get(value.func.name))
                except TypeError:  # an unhashable callee
                    continue
                if op is None:
                    continue
                # only the operands: a shape or axes tuple (np.reshape(x, (2, 2))) stays
                literal = [k in op.diff_args and a.name in built and _numbers(fn.typeof(a.name))
                           for k, a in enumerate(value.args)]
                if any(literal):
                    self.rewrite(fn, block, stmt, literal)

    @staticmethod
    def rewrite(fn, block, stmt, literal):
        """Wrap each literal operand in ``np.array``; keep the call's result type or undo."""
        value, loc = stmt.value, stmt.loc
        tyctx = cpu_target.typing_context
        array_fn = tyctx.resolve_value_type(np.array)
        inserted, args = [], []
        for a, is_literal in zip(value.args, literal):
            if not is_literal:
                args.append(a)
                continue
            sig = tyctx.resolve_function_type(array_fn, (fn.typeof(a.name),), {})
            if sig is None:
                return
            func = ir.Var(block.scope, fresh_name("$np_array"), loc)
            var = ir.Var(block.scope, fresh_name("$literal_array"), loc)
            call = ir.Expr.call(func, [a], (), loc)
            inserted += [(ir.Assign(ir.Global("array", np.array, loc), func, loc), array_fn),
                         (ir.Assign(call, var, loc), sig.return_type)]
            fn.calltypes[call] = sig
            args.append(var)
        new_sig = tyctx.resolve_function_type(
            fn.typeof(value.func.name), tuple(_type_of(fn, inserted, a) for a in args), {})
        if new_sig is None or new_sig.return_type != fn.typeof(stmt.target.name):
            for assign, _ in inserted[1::2]:
                fn.calltypes.pop(assign.value, None)
            return
        at = block.body.index(stmt)
        for assign, typ in inserted:
            fn.typemap[assign.target.name] = typ
            block.body.insert(at, assign)
            at += 1
        value.args = args
        fn.calltypes[value] = new_sig


def _type_of(fn, inserted, var):
    """The type of ``var``: an inserted ``np.array`` result or a typed variable."""
    for assign, typ in inserted:
        if assign.target.name == var.name:
            return typ
    return fn.typeof(var.name)


def _numbers(typ):
    """Whether ``typ`` is a list or tuple of numbers (a literal NumPy reads as an array)."""
    if isinstance(typ, types.List):
        return isinstance(typ.dtype, types.Number)
    if isinstance(typ, types.BaseTuple):
        return len(typ) > 0 and all(isinstance(t, types.Number) for t in typ.types)
    return False
