"""Normalise ``enumerate``, ``zip`` and ``np.ndenumerate`` over arrays into an index loop.

``for i, v in enumerate(x)`` iterates a tuple-yielding iterator whose items have no
adjoint of their own. Rewritten as ``for i in range(len(x)): v = x[i]`` (and
``for a, b in zip(x, y)`` as ``range(min(len(x), len(y)))`` with ``(x[i], y[i])``), the
loop is an ordinary range loop with element reads, which both modes differentiate. The
tuple is rebuilt from its items, so ``ForwardTupleItems`` then forwards the unpacking.
``zip`` may also take ``range(n)`` (its item is the index itself), and
``for idx, v in np.ndenumerate(x)`` becomes ``for i in range(x.size)`` with ``idx`` the
C-order index tuple of ``i`` (divisions by the shape) and ``v = x[idx]``.
"""
import operator

import numpy as np

from numba.core import ir, types, typing
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name
from ..ir.nodes import global_values


def _is_array(typ):
    return isinstance(typ, types.Array) and typ.ndim >= 1


def _getitem_signature(atype):
    """Numba's signature of ``a[i]`` for an array type and an integer: the element of a
    1-D array, a view of one row of an N-D one."""
    return cpu_target.typing_context.resolve_function_type(
        operator.getitem, (atype, types.intp), {})


def _readers(blocks):
    """Map variable name -> the values (expressions, variables) that read it."""
    readers = {}
    for block in blocks.values():
        for stmt in block.body:
            values = [stmt.value] if isinstance(stmt, ir.Assign) else [stmt]
            for value in values:
                for var in value.list_vars() if hasattr(value, "list_vars") else ():
                    readers.setdefault(var.name, []).append(value)
    return readers


class IndexArrayIteration:
    """``enumerate(x[, start])`` / ``zip(x, y, ...)`` / ``enumerate(zip(x, y, ...))`` over
    arrays -> ``range`` + ``x[i]`` (a row of an N-D array). Only a call that a ``for``
    loop iterates directly is rewritten: anything else reads the object itself."""

    name = "index_array_iteration"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        readers = _readers(fn.func_ir.blocks)

        def iteration(value):
            """``(kind, arrays, start)`` of an ``enumerate``/``zip`` call over arrays."""
            if not (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                    and not value.vararg and value.args):
                return None
            kind, args = gvals.get(value.func.name), list(value.args)
            if kind is enumerate and len(args) in (1, 2) and (
                    len(args) == 1 or isinstance(fn.typeof(args[1].name), types.Integer)):
                inner = definitions.get(args[0].name)
                if _is_array(fn.typeof(args[0].name)):
                    return enumerate, args[:1], args[1:]
                nested = iteration(inner) if inner is not None else None
                if (nested is not None and nested[0] is zip
                        and readers.get(args[0].name) == [value]):
                    return "enumerate_zip", nested[1], args[1:]
            elif kind is zip and all(_is_array(fn.typeof(a.name)) or counting(a)
                                     for a in args) and any(not counting(a) for a in args):
                return zip, args, []
            elif kind is np.ndenumerate and _is_array(fn.typeof(args[0].name)):
                return np.ndenumerate, args, []
            return None

        def counting(var):
            """Whether ``var`` is ``range(n)``: 0, 1, ..., n - 1, the index itself."""
            made = definitions.get(var.name)
            return (isinstance(made, ir.Expr) and made.op == "call" and len(made.args) == 1
                    and not made.kws and gvals.get(made.func.name) is range)

        definitions = {stmt.target.name: stmt.value for block in fn.func_ir.blocks.values()
                       for stmt in block.find_insts(ir.Assign)}
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                found = iteration(value)
                if found is None or not all(
                        isinstance(r, ir.Expr) and r.op == "getiter"
                        for r in readers.get(stmt.target.name, [None])):
                    continue
                zipped = value.args[0].name if found[0] == "enumerate_zip" else None
                self.rewrite(fn, block, stmt, *found)
                if zipped is not None:  # the zip object itself is no longer made
                    self.drop_definition(fn, zipped)

    @staticmethod
    def drop_definition(fn, name):
        """Remove the assignment of ``name`` (a call no statement reads any more)."""
        for block in fn.func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                if stmt.target.name == name:
                    fn.calltypes.pop(stmt.value, None)
                    block.body.remove(stmt)
                    return

    def typed_global(self, fn, block, body, obj, loc):
        """Load a builtin as a global, with its Numba function type in the typemap."""
        var = ir.Var(block.scope, fresh_name(f"${obj.__name__}"), loc)
        fn.typemap[var.name] = cpu_target.typing_context.resolve_value_type(obj)
        body.append(ir.Assign(ir.Global(obj.__name__, obj, loc), var, loc))
        return var

    def call(self, fn, block, body, obj, args, rtype, loc):
        """``fresh = obj(*args)`` with its typemap and calltypes entries."""
        func = self.typed_global(fn, block, body, obj, loc)
        out = ir.Var(block.scope, fresh_name("$it"), loc)
        expr = ir.Expr.call(func, list(args), (), loc)
        fn.typemap[out.name] = rtype
        fn.calltypes[expr] = typing.signature(rtype, *[fn.typeof(a) for a in args])
        body.append(ir.Assign(expr, out, loc))
        return out

    @staticmethod
    def attribute(fn, block, body, obj, attr, rtype, loc):
        """``fresh = obj.attr`` with its typemap entry."""
        out = ir.Var(block.scope, fresh_name(f"${attr}"), loc)
        fn.typemap[out.name] = rtype
        body.append(ir.Assign(ir.Expr.getattr(obj, attr, loc), out, loc))
        return out

    def rewrite(self, fn, block, stmt, kind, arrays, start=()):
        """Replace the iterable by a range and every yielded tuple by (i, x[i]) items
        (``start`` the ``enumerate`` start, if given)."""
        loc, arrays = stmt.loc, list(arrays)
        pre = []
        lens = [self.call(fn, block, pre, len, [a], types.intp, loc) for a in arrays]
        if kind is np.ndenumerate:  # every element: the size
            lens = [self.attribute(fn, block, pre, arrays[0], "size", types.intp, loc)]
        n = lens[0]
        for other in lens[1:]:
            n = self.call(fn, block, pre, min, [n, other], types.intp, loc)
        rng = self.typed_global(fn, block, pre, range, loc)
        new = ir.Expr.call(rng, [n], (), loc)
        fn.calltypes.pop(stmt.value, None)
        fn.calltypes[new] = typing.signature(types.range_state64_type, types.intp)
        stmt.value = new
        fn.typemap[stmt.target.name] = types.range_state64_type
        at = block.body.index(stmt)
        block.body[at:at] = pre
        self.retarget_loop(fn, stmt.target.name, arrays, kind, start)

    def retarget_loop(self, fn, iterable, arrays, kind, start=()):
        """Retype the iterator chain and rebuild each yielded tuple from element reads."""
        iters, pairs = set(), set()
        for _ in range(3):  # iterators are copied through phis and plain assignments
            for block in fn.func_ir.blocks.values():
                for s in block.body:
                    v = s.value if isinstance(s, ir.Assign) else None
                    if isinstance(v, ir.Expr) and v.op == "getiter" and v.value.name == iterable:
                        iters.add(s.target.name)
                    elif isinstance(v, ir.Var) and v.name in iters:
                        iters.add(s.target.name)
                    elif isinstance(v, ir.Expr) and v.op == "phi" and any(
                            isinstance(x, ir.Var) and x.name in iters for x in v.incoming_values):
                        iters.add(s.target.name)
        for name in iters:
            fn.typemap[name] = types.range_iter64_type
        for block in fn.func_ir.blocks.values():
            body = []
            for s in block.body:
                v = s.value if isinstance(s, ir.Assign) else None
                if isinstance(v, ir.Expr) and v.op == "iternext" and v.value.name in iters:
                    fn.typemap[s.target.name] = types.Pair(types.intp, types.boolean)
                    pairs.add(s.target.name)
                elif isinstance(v, ir.Expr) and v.op == "getiter" and s.target.name in iters:
                    fn.calltypes[v] = typing.signature(types.range_iter64_type,
                                                       types.range_state64_type)
                if isinstance(v, ir.Expr) and v.op == "pair_first" and v.value.name in pairs:
                    body.extend(self.element_reads(fn, block, s, arrays, kind, start))
                    continue
                body.append(s)
            block.body = body

    def element_reads(self, fn, block, stmt, arrays, kind, start=()):
        """``t = pair_first(p)`` -> ``i = pair_first(p); t = (i, x[i])`` / ``(x[i], y[i])``
        / ``(i, (x[i], y[i]))``, the index shifted by ``enumerate``'s start."""
        loc = stmt.loc
        i = ir.Var(block.scope, fresh_name("$index"), loc)
        fn.typemap[i.name] = types.intp
        out = [ir.Assign(ir.Expr.pair_first(stmt.value.value, loc), i, loc)]
        if kind is iter:  # ``for v in L``: the element itself, no tuple
            read = ir.Expr.getitem(arrays[0], i, loc)
            ltype = fn.typeof(arrays[0])
            fn.calltypes[read] = typing.signature(ltype.dtype, ltype, types.intp)
            return out + [ir.Assign(read, stmt.target, loc)]
        if kind is np.ndenumerate:
            return out + self.indexed_element(fn, block, stmt, arrays[0], i)
        elements = []
        for a in arrays:
            if isinstance(fn.typeof(a.name), types.RangeType):  # ``range(n)``: i itself
                elements.append(i)
                continue
            el = ir.Var(block.scope, fresh_name("$element"), loc)
            sig = _getitem_signature(fn.typeof(a.name))
            fn.typemap[el.name] = sig.return_type
            read = ir.Expr.getitem(a, i, loc)
            fn.calltypes[read] = sig
            out.append(ir.Assign(read, el, loc))
            elements.append(el)
        if kind is zip:
            out.append(ir.Assign(ir.Expr.build_tuple(elements, loc), stmt.target, loc))
            return out
        count = i
        if start:  # enumerate(x, start): the count is i + start
            count = ir.Var(block.scope, fresh_name("$count"), loc)
            fn.typemap[count.name] = fn.typeof(stmt.target.name).types[0]
            add = ir.Expr.binop(operator.add, i, start[0], loc)
            fn.calltypes[add] = cpu_target.typing_context.resolve_function_type(
                operator.add, (types.intp, fn.typeof(start[0].name)), {})
            out.append(ir.Assign(add, count, loc))
        if kind == "enumerate_zip":
            pair = ir.Var(block.scope, fresh_name("$zipped"), loc)
            fn.typemap[pair.name] = fn.typeof(stmt.target.name).types[1]
            out.append(ir.Assign(ir.Expr.build_tuple(elements, loc), pair, loc))
            elements = [pair]
        out.append(ir.Assign(ir.Expr.build_tuple([count] + elements, loc), stmt.target, loc))
        return out

    def indexed_element(self, fn, block, stmt, array, flat):
        """``t = (idx, x[idx])`` for ``np.ndenumerate(x)``'s item at C-order position
        ``flat``: ``idx`` from ``flat`` by division by the trailing dimensions."""
        loc, atype, tyctx = stmt.loc, fn.typeof(array.name), cpu_target.typing_context
        out, rest, index = [], flat, [None] * atype.ndim
        shape = self.attribute(fn, block, out, array, "shape",
                               types.UniTuple(types.intp, atype.ndim), loc)

        def binop(op, a, b, name):
            var = ir.Var(block.scope, fresh_name(name), loc)
            expr = ir.Expr.binop(op, a, b, loc)
            fn.calltypes[expr] = tyctx.resolve_function_type(op, (types.intp, types.intp), {})
            fn.typemap[var.name] = types.intp
            out.append(ir.Assign(expr, var, loc))
            return var
        for axis in reversed(range(atype.ndim)):
            if axis == 0:
                index[0] = rest
                break
            extent = ir.Var(block.scope, fresh_name("$extent"), loc)
            fn.typemap[extent.name] = types.intp
            read = ir.Expr.static_getitem(shape, axis, None, loc)
            fn.calltypes[read] = None
            out.append(ir.Assign(read, extent, loc))
            index[axis] = binop(operator.mod, rest, extent, "$idx")
            rest = binop(operator.floordiv, rest, extent, "$rest")
        idx = ir.Var(block.scope, fresh_name("$ndindex"), loc)
        fn.typemap[idx.name] = types.UniTuple(types.intp, atype.ndim)
        out.append(ir.Assign(ir.Expr.build_tuple(index, loc), idx, loc))
        value = ir.Var(block.scope, fresh_name("$element"), loc)
        read = ir.Expr.getitem(array, idx, loc)
        fn.calltypes[read] = tyctx.resolve_function_type(
            operator.getitem, (atype, fn.typemap[idx.name]), {})
        fn.typemap[value.name] = fn.calltypes[read].return_type
        out.append(ir.Assign(read, value, loc))
        out.append(ir.Assign(ir.Expr.build_tuple([idx, value], loc), stmt.target, loc))
        return out
