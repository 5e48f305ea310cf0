"""Normalise ``for v in L`` over a list of floats into an index loop.

A list iterator's items have no adjoint of their own, while ``L[i]`` does (see
``ir/lists.py``). ``for v in L`` becomes ``for i in range(len(L)): v = L[i]``,
unless the loop puts values into ``L`` (Python would then also visit the new items).
"""
from numba.core import ir, types, typing
from numba.core.analysis import compute_cfg_from_blocks

from ..ir.lists import is_float_list, list_root, list_writes
from .array_iteration import IndexArrayIteration


class IndexListIteration(IndexArrayIteration):
    """``getiter(L)`` over a float list -> ``getiter(range(len(L)))`` + ``L[i]``."""

    name = "index_list_iteration"

    def run(self, fn):
        loops = compute_cfg_from_blocks(fn.func_ir.blocks).loops().values()
        for label, block in fn.func_ir.blocks.items():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(value, ir.Expr) and value.op == "getiter"
                        and is_float_list(fn.typeof(value.value.name))
                        and not self.appends_while_iterating(fn, value.value, label, loops)):
                    self.rewrite_list(fn, block, stmt)

    @staticmethod
    def appends_while_iterating(fn, lst, label, loops):
        """Whether a loop entered from ``label`` (the one this iteration drives) puts
        values into the iterated list."""
        root = list_root(fn.func_ir.blocks, lst.name)
        blocks = fn.func_ir.blocks
        for loop in loops:
            if label not in loop.entries:
                continue
            for member in loop.body:
                for s in blocks[member].body:
                    written, _ = list_writes(fn, s)
                    if any(list_root(blocks, w.name) == root for w in written):
                        return True
        return False

    def rewrite_list(self, fn, block, stmt):
        """``it = getiter(L)`` -> ``n = len(L); it = getiter(range(n))``."""
        loc, lst = stmt.loc, stmt.value.value
        pre = []
        n = self.call(fn, block, pre, len, [lst], types.intp, loc)
        rng = self.call(fn, block, pre, range, [n], types.range_state64_type, loc)
        at = block.body.index(stmt)
        block.body[at:at] = pre
        new = ir.Expr.getiter(rng, loc)
        fn.calltypes.pop(stmt.value, None)
        stmt.value = new
        fn.typemap[stmt.target.name] = types.range_iter64_type
        fn.calltypes[new] = typing.signature(types.range_iter64_type,
                                             types.range_state64_type)
        self.retarget_loop(fn, rng.name, [lst], iter)


class IndexTupleIteration(IndexArrayIteration):
    """``for a in arrays`` over a homogeneous tuple of float arrays (``*arrays``
    parameters, ``(x, np.sin(y))``) or of floats (``(x, 2.0 * y, 3.0)``) -> ``for k in
    range(len(arrays)): a = arrays[k]``. Each item read is then a tuple item, whose
    shadow or adjoint is the item's own (reverse mode), as in ``arrays[0]``."""

    name = "index_tuple_iteration"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                typ = (fn.typeof(value.value.name) if isinstance(value, ir.Expr)
                       and value.op == "getiter" else None)
                item = typ.dtype if isinstance(typ, types.UniTuple) else None
                if isinstance(getattr(item, "dtype", item), types.Float):
                    IndexListIteration.rewrite_list(self, fn, block, stmt)
