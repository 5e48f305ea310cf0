"""``x[index]`` with an integer array and ``x[mask]`` with a boolean array become
``np.take`` (``take_rows`` for the rows of a matrix).

Both reads gather elements into a new array, which is linear in ``x``: its transpose adds
each adjoint back at the position it was read from, so repeated indices accumulate. One
registered rule (``np.take`` in ``rules/array_ops.py``) then covers both forms in every
mode. ``x[mask]`` reads the elements where ``mask`` is true in C order, which is
``np.take(x, np.flatnonzero(mask))``. Applied to float arrays read with a 1-D integer
array, or with a boolean mask of the array's own rank; on a 2-D array, a 1-D integer
array or mask selects rows (``rules.array_ops.take_rows``), a 2-D integer array the rows
of each face (``V[faces]``, ``take_rows_grid``), and ``x[:, index]`` or
``x[:, mask]`` selects columns (``take_columns``).

On a matrix, an index array (or 1-D mask) beside a slice or an integer (``X[idx, :]``,
``X[idx, 1:]``, ``X[idx, 2]``, ``X[1:3, idx]``, ``X[mask, 0]``) is the basic read of
the other axis first, a view, then the gather: ``X[idx, 1:]`` is
``take_rows(X[:, 1:], idx)`` and ``X[idx, 2]`` is ``np.take(X[:, 2], idx)``
(``MixedReadsToTake``); writes scatter into the same view (``X[idx, 1:] = v`` is
``X[:, 1:][idx] = v``, ``MixedWritesToViewWrites``). Other fancy indexing (3-D arrays,
``X[1:3, idx] = v``) is left alone (and refused by the transform where it has no rule).
"""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.ir_utils import get_definition, guard
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name
from ..ir.nodes import global_value
from ..rules.array_ops import take_columns, take_points, take_rows, take_rows_grid
from .call_binding import constant_value, single_definitions


def _typed(fn, block, at, value, typ, loc, hint):
    """Insert ``fresh = value`` before ``block.body[at]``, typed ``typ``; return the var."""
    var = ir.Var(block.scope, fresh_name(hint), loc)
    block.body.insert(at, ir.Assign(value, var, loc))
    fn.typemap[var.name] = typ
    return var


def _position(block, stmt):
    """Where ``stmt`` is in ``block``, by identity: Numba compares statements by their
    fields, and a constant index array (``E[:, IDX]``) makes that comparison raise."""
    return next(k for k, other in enumerate(block.body) if other is stmt)


def _call(fn, block, stmt, func, args):
    """Insert ``fresh = func(*args)`` before ``stmt``; return (var, expr, signature)."""
    tyctx = cpu_target.typing_context
    fnty = tyctx.resolve_value_type(func)
    sig = tyctx.resolve_function_type(fnty, tuple(fn.typeof(a.name) for a in args), {})
    if sig is None:
        return None
    at = _position(block, stmt)
    fvar = _typed(fn, block, at, ir.Global(func.__name__, func, stmt.loc), fnty, stmt.loc,
                  f"${func.__name__}")
    expr = ir.Expr.call(fvar, list(args), (), stmt.loc)
    fn.calltypes[expr] = sig
    return expr, sig


def _before(fn, block, stmt, value, typ, hint):
    """Insert ``fresh = value`` (typed ``typ``) right before ``stmt``; return the var."""
    return _typed(fn, block, _position(block, stmt), value, typ, stmt.loc, hint)


def _index_var(value):
    """The index variable of an element or selection read, or None. A module-level index
    array is a constant to Numba, which reads ``x[IDX]`` as a ``static_getitem`` that
    keeps the variable in ``index_var``."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "getitem":
        return value.index
    if value.op == "static_getitem" and isinstance(value.index, np.ndarray):
        return value.index_var
    return None


def _column_selection(fn, value):
    """``(index var, index type)`` of ``x[:, index]`` on a matrix (the index a 1-D array),
    else None: its index is a tuple built of a slice with no bounds and the array."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "getitem":
        index_var = value.index
    elif value.op == "static_getitem" and isinstance(value.index, tuple):
        index_var = value.index_var  # ``E[:, IDX]``, IDX a module-level array
    else:
        return None
    if index_var is None:
        return None
    typ = fn.typeof(index_var.name)
    if not (isinstance(typ, types.BaseTuple) and len(typ) == 2
            and typ[0] == types.slice2_type and isinstance(typ[1], types.Array)
            and typ[1].ndim == 1):
        return None
    built = guard(get_definition, fn.func_ir, index_var)
    if not (isinstance(built, ir.Expr) and built.op == "build_tuple"):
        return None
    bounds = guard(get_definition, fn.func_ir, built.items[0])
    if not (isinstance(bounds, ir.Expr) and bounds.op == "call" and len(bounds.args) == 2
            and all(isinstance(guard(get_definition, fn.func_ir, a), ir.Const)
                    and guard(get_definition, fn.func_ir, a).value is None
                    for a in bounds.args)):
        return None
    return built.items[1], typ[1]


def _gather_of(arr_ndim, index):
    """The function that reads ``x[index]`` (``index`` an integer array or a mask): rows
    of a matrix for a 1-D index or mask, rows per face (``V[faces]``) for a 2-D integer
    index, else ``np.take`` (a mask of the array's own rank reads ``np.flatnonzero``'s
    positions of the flattened array)."""
    if arr_ndim != 2:
        return np.take
    if index.ndim == 2 and isinstance(index.dtype, types.Integer):
        return take_rows_grid
    return take_rows if index.ndim == 1 else np.take


class GatherReadsToTake:
    """``y = x[idx]`` / ``y = x[mask]`` on a float array -> ``np.take``, ``take_rows`` or
    ``take_columns`` (see above)."""

    name = "gather_reads_to_take"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                columns = _column_selection(fn, value)
                index_var = _index_var(value) if columns is None else columns[0]
                if index_var is None:
                    continue
                arr, index = fn.typeof(value.value.name), fn.typeof(index_var.name)
                if not (isinstance(arr, types.Array) and isinstance(arr.dtype, types.Float)):
                    continue
                if columns is not None and arr.ndim == 2:
                    gather = take_columns
                elif columns is not None or not isinstance(index, types.Array):
                    continue
                else:
                    gather = _gather_of(arr.ndim, index)
                if isinstance(index.dtype, types.Integer) and (
                        (index.ndim == 1 and arr.ndim in (1, 2))
                        or (arr.ndim == 1 and index.ndim in (2, 3))
                        or (arr.ndim == 2 and index.ndim == 2)):
                    # u[F] with F a (faces, 3) index array: np.take's shape, F's
                    self.rewrite(fn, block, stmt, index_var, gather)
                elif isinstance(index.dtype, types.Boolean) and (
                        index.ndim == arr.ndim or gather is not np.take):
                    found = _call(fn, block, stmt, np.flatnonzero, [index_var])
                    if found is None:
                        continue
                    at = _position(block, stmt)
                    positions = _typed(fn, block, at, found[0], found[1].return_type,
                                       stmt.loc, "$positions")
                    self.rewrite(fn, block, stmt, positions, gather)

    @staticmethod
    def rewrite(fn, block, stmt, positions, gather=np.take, source=None):
        """``stmt.target = gather(source, positions)`` (``source`` the array read,
        unless given) when it has the read's type."""
        source = stmt.value.value if source is None else source
        found = _call(fn, block, stmt, gather, [source, positions])
        if found is None or found[1].return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(stmt.value, None)
        stmt.value = found[0]


def _mixed_index(fn, array, index_var):
    """``(other, array_index, array_axis)`` of ``X[a, b]`` on a float matrix ``array``
    where one of ``a``, ``b`` is a 1-D integer array or boolean mask and the other a
    slice or an integer; else None. The index must be a tuple built in the function."""
    if index_var is None:
        return None
    arr, typ = fn.typeof(array.name), fn.typeof(index_var.name)
    if not (isinstance(arr, types.Array) and arr.ndim == 2
            and isinstance(arr.dtype, types.Float)
            and isinstance(typ, types.BaseTuple) and len(typ) == 2):
        return None
    built = guard(get_definition, fn.func_ir, index_var)
    if not (isinstance(built, ir.Expr) and built.op == "build_tuple"):
        return None
    gathers = [isinstance(t, types.Array) and t.ndim == 1
               and isinstance(t.dtype, (types.Integer, types.Boolean)) for t in typ]
    basic = [isinstance(t, (types.SliceType, types.Integer)) for t in typ]
    if sorted(gathers) != [False, True] or not basic[gathers.index(False)]:
        return None
    axis = gathers.index(True)
    return built.items[1 - axis], built.items[axis], axis


def _point_index(fn, array, index_var):
    """``(rows, cols)`` of ``X[rows, cols]`` on a float matrix ``array`` where both are
    1-D integer arrays (a pointwise read), else None. The index must be a tuple built in
    the function."""
    if index_var is None:
        return None
    arr, typ = fn.typeof(array.name), fn.typeof(index_var.name)
    if not (isinstance(arr, types.Array) and arr.ndim == 2
            and isinstance(arr.dtype, types.Float)
            and isinstance(typ, types.BaseTuple) and len(typ) == 2
            and all(isinstance(t, types.Array) and t.ndim == 1
                    and isinstance(t.dtype, types.Integer) for t in typ)):
        return None
    built = guard(get_definition, fn.func_ir, index_var)
    if not (isinstance(built, ir.Expr) and built.op == "build_tuple"):
        return None
    return tuple(built.items)


def _tuple_index(stmt):
    """The index variable of a read or write (``static_getitem``/``static_setitem`` keep
    it in ``index_var``: ``X[IDX, :]`` with IDX a module-level array), or None."""
    node = stmt.value if isinstance(stmt, ir.Assign) else stmt
    if isinstance(node, ir.SetItem):
        return node.target, node.index
    if isinstance(node, ir.StaticSetItem):
        return node.target, node.index_var
    if isinstance(node, ir.Expr) and node.op == "getitem":
        return node.value, node.index
    if isinstance(node, ir.Expr) and node.op == "static_getitem":
        return node.value, node.index_var
    return None, None


def _view_of_other_axis(fn, block, stmt, array, other, axis):
    """Insert ``view = X[:, other]`` (``axis`` 0) or ``X[other, :]`` (``axis`` 1) before
    ``stmt``; return the view."""
    tyctx, loc = cpu_target.typing_context, stmt.loc
    none = _before(fn, block, stmt, ir.Const(None, loc), types.none, "$none")
    slice_type = tyctx.resolve_value_type(slice)
    slice_fn = _before(fn, block, stmt, ir.Global("slice", slice, loc), slice_type, "$slice")
    whole = ir.Expr.call(slice_fn, [none, none], (), loc)
    fn.calltypes[whole] = tyctx.resolve_function_type(slice_type, (types.none,) * 2, {})
    whole = _before(fn, block, stmt, whole, types.slice2_type, "$all")
    items = [whole, other] if axis == 0 else [other, whole]
    tuple_type = types.BaseTuple.from_types([fn.typeof(v.name) for v in items])
    basic = _before(fn, block, stmt, ir.Expr.build_tuple(items, loc), tuple_type, "$basic")
    view_sig = tyctx.resolve_function_type(operator.getitem,
                                           (fn.typeof(array.name), tuple_type), {})
    read = ir.Expr.getitem(array, basic, loc)
    fn.calltypes[read] = view_sig
    return _before(fn, block, stmt, read, view_sig.return_type, "$view")


class MixedReadsToTake:
    """``y = X[idx, s]`` / ``X[s, idx]`` (``s`` a slice or an integer, ``idx`` an index
    array or mask) on a float matrix -> the view ``X[:, s]`` / ``X[s, :]``, then
    ``take_rows``, ``take_columns`` or ``np.take`` of it (see above). ``X[rows, cols]``
    with two integer arrays -> ``take_points(X, rows, cols)``."""

    name = "mixed_reads_to_take"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                if not isinstance(stmt, ir.Assign):
                    continue
                array, index_var = _tuple_index(stmt)
                if array is None:
                    continue
                found = _mixed_index(fn, array, index_var)
                if found is not None:
                    self.rewrite(fn, block, stmt, array, *found)
                    continue
                points = _point_index(fn, array, index_var)
                if points is not None:
                    self.rewrite_points(fn, block, stmt, array, *points)

    @staticmethod
    def rewrite_points(fn, block, stmt, array, rows, cols):
        """``stmt.target = take_points(X, rows, cols)`` when it has the read's type."""
        found = _call(fn, block, stmt, take_points, [array, rows, cols])
        if found is None or found[1].return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(stmt.value, None)
        stmt.value = found[0]

    @staticmethod
    def rewrite(fn, block, stmt, array, other, index, axis):
        """Read the view, then gather from it, when that has the read's type."""
        view = _view_of_other_axis(fn, block, stmt, array, other, axis)
        if isinstance(fn.typeof(index.name).dtype, types.Boolean):
            found = _call(fn, block, stmt, np.flatnonzero, [index])
            if found is None:
                return
            index = _before(fn, block, stmt, found[0], found[1].return_type, "$positions")
        if fn.typeof(view.name).ndim == 1:
            gather = np.take
        else:
            gather = take_rows if axis == 0 else take_columns
        GatherReadsToTake.rewrite(fn, block, stmt, index, gather, source=view)


class MixedWritesToViewWrites:
    """``X[idx, s] = v`` (``s`` a slice or an integer) and ``X[i, idx] = v`` (``i`` an
    integer) on a float matrix -> ``X[:, s][idx] = v`` / ``X[i][idx] = v``: a scatter
    into a view, which every mode differentiates. (``X[1:3, idx] = v`` would scatter
    columns, which has no rule: left alone and refused.)"""

    name = "mixed_writes_to_view_writes"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                    continue
                array, index_var = _tuple_index(stmt)
                found = _mixed_index(fn, array, index_var)
                if found is None or (found[2] == 1 and not isinstance(
                        fn.typeof(found[0].name), types.Integer)):
                    continue
                self.rewrite(fn, block, stmt, array, *found)

    @staticmethod
    def rewrite(fn, block, stmt, array, other, index, axis):
        """Write ``stmt``'s value into the view at ``index``."""
        view = _view_of_other_axis(fn, block, stmt, array, other, axis)
        argtypes = tuple(fn.typeof(v.name) for v in (view, index, stmt.value))
        sig = cpu_target.typing_context.resolve_function_type(operator.setitem, argtypes, {})
        if sig is None:
            return
        write = ir.SetItem(view, index, stmt.value, stmt.loc)
        fn.calltypes.pop(stmt, None)
        fn.calltypes[write] = sig
        block.body[_position(block, stmt)] = write


class TakeAlongAxisToGather:
    """``np.take(X, idx, axis=k)`` with ``k`` a constant and ``idx`` a 1-D integer array:
    ``np.take(x, idx)`` of a 1-D ``x``; ``take_rows`` (``axis=0``) or ``take_columns``
    (``axis=1``) of a float matrix. The same gathers as ``X[idx]`` and ``X[:, idx]``, with
    their rules."""

    name = "take_along_axis_to_gather"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and global_value(fn.func_ir.blocks, value.func) is np.take):
                    continue
                kws = dict(value.kws)
                args = list(value.args) + ([kws.pop("axis")] if "axis" in kws else [])
                if kws or len(args) != 3:
                    continue
                gather = self.gather(fn, single_definitions(fn), *args)
                if gather is not None:
                    GatherReadsToTake.rewrite(fn, block, stmt, args[1], gather, args[0])

    @staticmethod
    def gather(fn, defs, array, index, axis_var):
        """The gather ``np.take(array, index, axis=axis_var)`` is, or None (``defs``:
        ``single_definitions``, where a constant axis is found)."""
        axis = constant_value(fn, defs, axis_var)
        arr, idx = fn.typeof(array.name), fn.typeof(index.name)
        if not (isinstance(arr, types.Array) and isinstance(arr.dtype, types.Float)
                and isinstance(idx, types.Array) and idx.ndim == 1
                and isinstance(idx.dtype, types.Integer) and isinstance(axis, int)):
            return None
        if arr.ndim == 1 and axis in (0, -1):
            return np.take
        if arr.ndim == 2:
            return {0: take_rows, -2: take_rows, 1: take_columns, -1: take_columns}.get(axis)
        return None
