"""Tuple concatenation and slicing become tuples built item by item.

``t = a + b`` of two tuples and ``t = a[i:j]`` of a tuple have no rule of their own: a
concatenation has the ``+`` operator's, which is for numbers, and reverse mode found no
adjoint to pass on (``grad`` of ``(x, 2x) + (3x,)`` was zero). Rewritten as
``t = (a[0], ..., b[0], ...)``, both modes differentiate them as the constant-index reads
and the tuple built that they are.
"""
import operator

from numba.core import ir, types
from numba.core.typing import signature

from ..ir.builder import fresh_name
from ..ir.nodes import defining_stmts
from .call_binding import unpack_tuple
from .effects import unpacked_array


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


class UnpackedRowsToIndexing:
    """``a, b = A`` of an array: each unpacked item ``a = t[0]`` becomes the row view
    ``a = A[0]``, which both modes differentiate as a view (reverse mode had no rule for
    the rows of the unpacked tuple). The unpacking itself stays, and still checks that A
    has exactly as many rows."""

    name = "unpacked_rows_to_indexing"

    def run(self, fn):
        defs = defining_stmts(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                array = self.unpacked_from(fn, defs, stmt)
                if array is not None:
                    body.extend(self.row_read(fn, block.scope, stmt, array))
                body.append(stmt)
            block.body = body

    @staticmethod
    def unpacked_from(fn, defs, stmt):
        """The array whose row ``stmt`` reads out of its unpacked tuple, else None."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and value.op == "static_getitem"
                and isinstance(value.index, int) and value.index >= 0):
            return None
        array = unpacked_array(fn, value.value, defs)
        # (the elements of a 1-D array unpacked have their own rule)
        return array if array is not None and fn.typeof(array.name).ndim > 1 else None

    @staticmethod
    def row_read(fn, scope, stmt, array):
        """Point ``stmt`` at ``array[k]``; return the statement defining the index."""
        k, loc = stmt.value.index, stmt.loc
        row_type = fn.typeof(stmt.target.name)
        array_type = fn.typeof(array.name)
        if array_type.copy(ndim=array_type.ndim - 1, layout=row_type.layout) != row_type:
            return []
        index = ir.Var(scope, fresh_name("$row"), loc)
        fn.typemap[index.name] = types.intp
        read = ir.Expr.static_getitem(array, k, index, loc)
        fn.calltypes.pop(stmt.value, None)
        fn.calltypes[read] = signature(row_type, array_type, types.intp)
        stmt.value = read
        return [ir.Assign(ir.Const(k, loc), index, loc)]
