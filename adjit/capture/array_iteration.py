"""Normalise ``enumerate`` and ``zip`` over 1-D arrays into an index loop.

``for i, v in enumerate(x)`` iterates a tuple-yielding iterator whose items have no
adjoint of their own. Rewritten as ``for i in range(len(x)): v = x[i]`` (and
``for a, b in zip(x, y)`` as ``range(min(len(x), len(y)))`` with ``(x[i], y[i])``), the
loop is an ordinary range loop with element reads, which both modes differentiate. The
tuple is rebuilt from its items, so ``ForwardTupleItems`` then forwards the unpacking.
"""
from numba.core import ir, types, typing
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name
from ..ir.nodes import global_values


def _is_vector(typ):
    return isinstance(typ, types.Array) and typ.ndim == 1


class IndexArrayIteration:
    """``enumerate(x)`` / ``zip(x, y, ...)`` over 1-D arrays -> ``range`` + ``x[i]``."""

    name = "index_array_iteration"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                        and not value.vararg and gvals.get(value.func.name) in (enumerate, zip)
                        and value.args and all(_is_vector(fn.typeof(a)) for a in value.args)):
                    continue
                kind = gvals[value.func.name]
                if kind is enumerate and len(value.args) != 1:
                    continue
                self.rewrite(fn, block, stmt, kind)

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

    def rewrite(self, fn, block, stmt, kind):
        """Replace the iterable by a range and every yielded tuple by (i, x[i]) items."""
        loc, arrays = stmt.loc, list(stmt.value.args)
        pre = []
        lens = [self.call(fn, block, pre, len, [a], types.intp, loc) for a in arrays]
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
        self.retarget_loop(fn, stmt.target.name, arrays, kind)

    def retarget_loop(self, fn, iterable, arrays, kind):
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
                    body.extend(self.element_reads(fn, block, s, arrays, kind))
                    continue
                body.append(s)
            block.body = body

    def element_reads(self, fn, block, stmt, arrays, kind):
        """``t = pair_first(p)`` -> ``i = pair_first(p); t = (i, x[i])`` / ``(x[i], y[i])``."""
        loc = stmt.loc
        i = ir.Var(block.scope, fresh_name("$index"), loc)
        fn.typemap[i.name] = types.intp
        out = [ir.Assign(ir.Expr.pair_first(stmt.value.value, loc), i, loc)]
        items = [i] if kind is enumerate else []
        if kind is iter:  # ``for v in L``: the element itself, no tuple
            read = ir.Expr.getitem(arrays[0], i, loc)
            ltype = fn.typeof(arrays[0])
            fn.calltypes[read] = typing.signature(ltype.dtype, ltype, types.intp)
            return out + [ir.Assign(read, stmt.target, loc)]
        for a in arrays:
            el = ir.Var(block.scope, fresh_name("$element"), loc)
            atype = fn.typeof(a)
            fn.typemap[el.name] = atype.dtype
            read = ir.Expr.getitem(a, i, loc)
            fn.calltypes[read] = typing.signature(atype.dtype, atype, types.intp)
            out.append(ir.Assign(read, el, loc))
            items.append(el)
        out.append(ir.Assign(ir.Expr.build_tuple(items, loc), stmt.target, loc))
        return out
