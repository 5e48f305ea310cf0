"""Tuple concatenation and slicing become tuples built item by item.

``t = a + b`` of two tuples and ``t = a[i:j]`` of a tuple have no rule of their own: a
concatenation has the ``+`` operator's, which is for numbers, and reverse mode found no
adjoint to pass on (``grad`` of ``(x, 2x) + (3x,)`` was zero). Rewritten as
``t = (a[0], ..., b[0], ...)``, both modes differentiate them as the constant-index reads
and the tuple built that they are.
"""
import operator

from numba.core import ir, types

from .call_binding import unpack_tuple


def _tuple(fn, var):
    return isinstance(fn.typeof(var.name), types.BaseTuple)


class TupleOperationsToBuilds:
    """``t = a + b`` (tuples) and ``t = a[i:j]`` become ``t = (a[0], ..., b[0], ...)``."""

    name = "tuple_operations_to_builds"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                found = self.items(fn, block.scope, stmt)
                if found is not None:
                    reads, items = found
                    body.extend(reads)
                    fn.calltypes.pop(stmt.value, None)
                    stmt.value = ir.Expr.build_tuple(items, stmt.loc)
                body.append(stmt)
            block.body = body

    @staticmethod
    def items(fn, scope, stmt):
        """``(reads, items)`` that rebuild the tuple ``stmt`` makes, or None."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and _tuple(fn, stmt.target)):
            return None
        if (value.op == "binop" and value.fn is operator.add and _tuple(fn, value.lhs)
                and _tuple(fn, value.rhs)):
            reads = (unpack_tuple(fn, scope, value.lhs, stmt.loc)
                     + unpack_tuple(fn, scope, value.rhs, stmt.loc))
            return reads, [r.target for r in reads]
        if (value.op == "static_getitem" and isinstance(value.index, slice)
                and _tuple(fn, value.value)):
            reads = unpack_tuple(fn, scope, value.value, stmt.loc)
            kept = reads[value.index]
            return kept, [r.target for r in kept]
        return None
