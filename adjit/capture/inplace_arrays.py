"""``a -= b`` on an array becomes ``t = a - b; a[:] = t``: the in-place update is a new
array (an elementwise operation) written back through a whole-array slice write, so one
mechanism (slice writes, which save and restore what they overwrite) covers both forms in
every mode. adjit's own generated code keeps its in-place shadow updates."""
from numba.core import ir, types
from numba.core.registry import cpu_target
from numba.np.ufunc.dufunc import DUFunc
from numba.core.typing import signature

from ..compile.dispatcher import is_derivative
from ..ir.builder import fresh_name
from ..ir.nodes import is_basic_index


def _typed(fn, block, index, value, typ, loc, hint):
    """Insert ``name = value`` at ``block.body[index]`` with type ``typ``; return the var."""
    var = ir.Var(block.scope, fresh_name(hint), loc)
    block.body.insert(index, ir.Assign(value, var, loc))
    fn.typemap[var.name] = typ
    return var


def full_slice(fn, block, index, loc):
    """Emit the typed ``slice(None, None)`` index of ``a[:]`` before ``block.body[index]``;
    return (the slice var, how many statements were inserted)."""
    tyctx = cpu_target.typing_context
    fnty = tyctx.resolve_value_type(slice)
    sig = fnty.get_call_type(tyctx, (types.none, types.none), {})
    func = _typed(fn, block, index, ir.Global("slice", slice, loc), fnty, loc, "$slice")
    none = _typed(fn, block, index + 1, ir.Const(None, loc), types.none, loc, "$none")
    call = ir.Expr.call(func, [none, none], (), loc)
    var = _typed(fn, block, index + 2, call, sig.return_type, loc, "$all")
    fn.calltypes[call] = sig
    return var, 3


def slice_write(fn, block, at, arr, value, loc):
    """Insert the typed ``arr[:] = value`` (``arr[()] = value`` for a 0-d array) at
    ``block.body[at]``; return how many statements were inserted."""
    if fn.typeof(arr.name).ndim == 0:
        index = _typed(fn, block, at, ir.Expr.build_tuple([], loc), types.Tuple(()), loc,
                       "$unit")
        n, static = 1, ()
    else:
        (index, n), static = full_slice(fn, block, at, loc), slice(None, None, None)
    write = ir.StaticSetItem(arr, static, index, value, loc)
    fn.calltypes[write] = signature(types.none, fn.typeof(arr.name),
                                    fn.typeof(index.name), fn.typeof(value.name))
    block.body.insert(at + n, write)
    return n + 1


class SliceWritePass:
    """A rewrite of user statements into slice writes: ``found(fn, defs, stmt)`` says
    whether (and what) to rewrite, ``rewrite(fn, block, k, found)`` does it and returns
    how many statements stand where it stood. adjit's generated code is left alone."""

    def run(self, fn):
        if fn.extra.get("generated") or is_derivative(fn.py_func):
            return
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        for block in fn.func_ir.blocks.values():
            k = 0
            while k < len(block.body):
                found = self.found(fn, defs, block.body[k])
                k += self.rewrite(fn, block, k, found) if found is not None else 1


_VIEW_METHODS = ("ravel", "reshape", "transpose", "T")


def memory_root(fn, defs, name):
    """The variable whose memory array ``name`` views, through copies, basic indexing
    (``y[1:]``, ``Y[i]``) and view methods (``.ravel()``, ``.T``, ...)."""
    for _ in range(100):
        value = defs.get(name)
        if isinstance(value, ir.Var):
            name = value.name
        elif (isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem")
              and fn.calltypes.get(value) is not None
              and is_basic_index(fn.calltypes[value].args[1])):
            name = value.value.name
        elif isinstance(value, ir.Expr) and value.op == "getattr" and value.attr == "T":
            name = value.value.name
        elif isinstance(value, ir.Expr) and value.op == "call" and isinstance(
                defs.get(value.func.name), ir.Expr) and defs[value.func.name].op == "getattr" \
                and defs[value.func.name].attr in _VIEW_METHODS:
            name = defs[value.func.name].value.name
        else:
            return name
    return name


def refuse_overlapping_update(fn, expr, loc):
    """``y[1:] += y[:-1]``: Numba updates in place element by element, so later elements
    add values already updated (a running sum), unlike NumPy; adjit's rewrite follows
    NumPy, so such an update is refused rather than computed differently."""
    from ..errors import UnsupportedError
    if other_view_of_same_array(fn, expr.rhs, expr.lhs):
        raise UnsupportedError(
            "an in-place update whose right-hand side is another view of the same array",
            fn.name, loc, "Numba computes it element by element (later elements see "
            "updated values), which differs from NumPy; write y[1:] = y[1:] + y[:-1] "
            "(NumPy's result) or a loop (Numba's)")


def other_view_of_same_array(fn, source, target):
    """Whether array ``source`` is a different view of ``target``'s memory (``y[:-1]``
    and ``y[1:]``): not the same variable, nor ``Y[i]`` and ``Y[j]`` rows."""
    if not isinstance(fn.typeof(source.name), types.Array):
        return False
    defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
            if isinstance(s, ir.Assign)}
    return (memory_root(fn, defs, source.name) == memory_root(fn, defs, target.name)
            and _copy_source(defs, source.name) != _copy_source(defs, target.name)
            and not _same_parent_rows(fn, defs, source.name, target.name))


def _same_parent_rows(fn, defs, a, b):
    """Whether ``a`` and ``b`` are ``Y[i]`` and ``Y[j]`` with integer ``i`` and ``j``, or
    ``A[i, :]`` and ``A[j, :]`` (``A[:, k]``...: integers at the same axes, whole axes
    elsewhere): the same elements or disjoint ones, which element by element is what
    NumPy computes too."""
    rows = [defs.get(_copy_source(defs, n)) for n in (a, b)]
    if not all(isinstance(r, ir.Expr) and r.op in ("getitem", "static_getitem")
               and r in fn.calltypes for r in rows):
        return False
    patterns = [_integer_axes(fn, defs, r) for r in rows]
    return (patterns[0] is not None and patterns[0] == patterns[1]
            and _copy_source(defs, rows[0].value.name)
            == _copy_source(defs, rows[1].value.name))


def _integer_axes(fn, defs, read):
    """For ``Y[i]``, ``A[i, :]``, ``A[:, k]``: which index items are integers (True) and
    which are whole axes ``:`` (False); None for any other index."""
    index = fn.calltypes[read].args[1]
    if isinstance(index, types.Integer):
        return (True,)
    if read.op == "static_getitem" and isinstance(read.index, tuple):
        if not all(isinstance(k, int) or k == slice(None) for k in read.index):
            return None
        return tuple(isinstance(k, int) for k in read.index)
    built = defs.get(read.index.name) if read.op == "getitem" else None
    if not (isinstance(built, ir.Expr) and built.op == "build_tuple"):
        return None
    items = []
    for item in built.items:
        if isinstance(fn.typeof(item.name), types.Integer):
            items.append(True)
        elif _whole_axis(defs, item):
            items.append(False)
        else:
            return None
    return tuple(items)


def _whole_axis(defs, var):
    """Whether ``var`` is ``slice(None, None)``, the ``:`` of an index."""
    value = defs.get(var.name)
    if not (isinstance(value, ir.Expr) and value.op == "call"):
        return False
    func = defs.get(value.func.name)
    return (isinstance(func, ir.Global) and func.value is slice
            and all(isinstance(defs.get(a.name), ir.Const) and defs[a.name].value is None
                    for a in value.args))


def _copy_source(defs, name):
    """``name`` through plain copies."""
    while isinstance(defs.get(name), ir.Var):
        name = defs[name].name
    return name


class InplaceArrayToSliceWrite(SliceWritePass):
    """``a2 = inplace_binop(a, b)`` on a float array (``a += b``, ``w -= lr * g``) becomes
    ``t = a op b; a[:] = t; a2 = a``."""

    name = "inplace_array_to_slice_write"

    @staticmethod
    def found(fn, defs, stmt):
        """The ``inplace_binop`` expression of ``stmt`` on a float array, or None."""
        expr = stmt.value if isinstance(stmt, ir.Assign) else None
        if (isinstance(expr, ir.Expr) and expr.op == "inplace_binop"
                and isinstance(fn.typeof(expr.lhs.name), types.Array)
                and isinstance(fn.typeof(expr.lhs.name).dtype, types.Float)):
            return expr
        return None

    @staticmethod
    def rewrite(fn, block, k, expr):
        """Rewrite the statement at ``block.body[k]``; return how many statements now
        stand where it stood."""
        stmt = block.body[k]
        loc, arr = stmt.loc, expr.lhs
        refuse_overlapping_update(fn, expr, loc)
        sig = fn.calltypes.pop(expr)
        new = ir.Expr.binop(expr.immutable_fn, expr.lhs, expr.rhs, loc)
        tmp = ir.Var(block.scope, fresh_name("$updated"), loc)
        binop_sig = cpu_target.typing_context.resolve_function_type(
            expr.immutable_fn, sig.args, {})
        result = binop_sig.return_type if binop_sig is not None else sig.return_type
        fn.typemap[tmp.name] = result
        fn.calltypes[new] = signature(result, *sig.args)
        block.body[k] = ir.Assign(new, tmp, loc)
        n = slice_write(fn, block, k + 1, arr, tmp, loc)
        block.body.insert(k + 1 + n, ir.Assign(arr, stmt.target, loc))
        return 2 + n


def float_array_method(fn, defs, stmt, method, nargs):
    """The float array that ``stmt`` calls ``method`` on with ``nargs`` positional
    arguments (``r = a.fill(v)``), or None."""
    expr = stmt.value if isinstance(stmt, ir.Assign) else None
    if not (isinstance(expr, ir.Expr) and expr.op == "call" and len(expr.args) == nargs
            and not expr.kws and expr.vararg is None):
        return None
    bound = defs.get(expr.func.name)
    if not (isinstance(bound, ir.Expr) and bound.op == "getattr" and bound.attr == method):
        return None
    typ = fn.typeof(bound.value.name)
    if isinstance(typ, types.Array) and isinstance(typ.dtype, types.Float):
        return bound.value
    return None


class FillToSliceWrite(SliceWritePass):
    """``a.fill(v)`` on a float array becomes ``a[:] = v; r = None``: the same slice write
    as above, so what it overwrites is saved and a differentiated ``v`` gets its adjoint."""

    name = "fill_to_slice_write"

    @staticmethod
    def found(fn, defs, stmt):
        """The float array ``stmt`` calls ``.fill(v)`` on, or None."""
        return float_array_method(fn, defs, stmt, "fill", 1)

    @staticmethod
    def rewrite(fn, block, k, arr):
        """Replace ``r = a.fill(v)`` at ``block.body[k]``; return statements now there."""
        stmt = block.body[k]
        value, loc = stmt.value.args[0], stmt.loc
        fn.calltypes.pop(stmt.value, None)
        block.body[k] = ir.Assign(ir.Const(None, loc), stmt.target, loc)
        fn.typemap[stmt.target.name] = types.none
        return slice_write(fn, block, k, arr, value, loc) + 1


class EllipsisWriteToSliceWrite(SliceWritePass):
    """``y[...] = v`` (a common way to fill a preallocated buffer) becomes ``y[:] = v``,
    the same whole-array write, which the slice-write rules cover in every mode (Numba
    has no lowering of the ``getitem`` with ``...`` that reverse mode would emit)."""

    name = "ellipsis_write_to_slice_write"

    @staticmethod
    def found(fn, defs, stmt):
        """The array ``stmt`` writes through ``[...]``, or None."""
        if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            return None
        index = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
        if not isinstance(fn.typeof(index.name), types.EllipsisType):
            return None
        return stmt.target if isinstance(fn.typeof(stmt.target.name), types.Array) else None

    @staticmethod
    def rewrite(fn, block, k, arr):
        """Replace ``y[...] = v`` at ``block.body[k]``; return statements now there."""
        stmt = block.body.pop(k)
        fn.calltypes.pop(stmt, None)
        return slice_write(fn, block, k, arr, stmt.value, stmt.loc)


class SortToSliceWrite(SliceWritePass):
    """``y.sort()`` on a 1-D float array becomes ``t = np.sort(y); y[:] = t; r = None``: the
    sorted copy (which has a rule) written back through a slice write, so the tangents
    and adjoints follow the elements (forward mode copied the call and left the tangent
    unsorted, a wrong derivative)."""

    name = "sort_to_slice_write"

    @staticmethod
    def found(fn, defs, stmt):
        """The 1-D float array ``stmt`` calls ``.sort()`` on (np.sort's rule is 1-D), or
        None."""
        arr = float_array_method(fn, defs, stmt, "sort", 0)
        return arr if arr is not None and fn.typeof(arr.name).ndim == 1 else None

    @staticmethod
    def rewrite(fn, block, k, arr):
        """Replace ``r = y.sort()`` at ``block.body[k]``; return statements now there."""
        import numpy as np
        stmt, loc = block.body[k], block.body[k].loc
        tyctx = cpu_target.typing_context
        fnty = tyctx.resolve_value_type(np.sort)
        arrty = fn.typeof(arr.name)
        sig = fnty.get_call_type(tyctx, (arrty,), {})
        func = _typed(fn, block, k, ir.Global("sort", np.sort, loc), fnty, loc, "$sort")
        call = ir.Expr.call(func, [arr], (), loc)
        sorted_ = _typed(fn, block, k + 1, call, sig.return_type, loc, "$sorted")
        fn.calltypes[call] = sig
        fn.calltypes.pop(stmt.value, None)
        block.body[k + 2] = ir.Assign(ir.Const(None, loc), stmt.target, loc)
        fn.typemap[stmt.target.name] = types.none
        return slice_write(fn, block, k + 2, arr, sorted_, loc) + 3


class OutArgumentToSliceWrite(SliceWritePass):
    """``np.add(a, b, out)`` (a NumPy or ``@vectorize`` ufunc given its output array
    positionally) and
    ``np.dot(A, B, out)`` become ``t = np.add(a, b); out[:] = t; r = out``: the result is
    an ordinary elementwise operation or product, written back through a slice write."""

    name = "out_argument_to_slice_write"

    @staticmethod
    def found(fn, defs, stmt):
        """``(function type, inputs, out)`` of a call that writes its result into its
        last positional argument, a float array; else None."""
        import numpy as np
        expr = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(expr, ir.Expr) and expr.op == "call" and not expr.kws
                and expr.vararg is None and expr.args):
            return None
        fnty = fn.typeof(expr.func.name)
        key = getattr(fnty, "typing_key", None) if isinstance(fnty, types.Function) else None
        if isinstance(key, (np.ufunc, DUFunc)):  # a @vectorize ufunc too: gauss(x, m, out)
            nin = key.nin
        elif key is np.dot:
            nin = 2
        else:
            return None
        out = expr.args[-1]
        otype = fn.typeof(out.name)
        if len(expr.args) != nin + 1 or not (isinstance(otype, types.Array)
                                             and isinstance(otype.dtype, types.Float)):
            return None
        return fnty, list(expr.args[:nin]), out

    @staticmethod
    def rewrite(fn, block, k, found):
        """Replace the call at ``block.body[k]``; return statements now there."""
        fnty, inputs, out = found
        stmt = block.body[k]
        loc = stmt.loc
        for a in inputs:
            if other_view_of_same_array(fn, a, out):
                from ..errors import UnsupportedError
                raise UnsupportedError(
                    "a NumPy call whose out= array is another view of one of its inputs",
                    fn.name, loc, "Numba computes it element by element (later elements "
                    "see written values), which differs from NumPy; pass a separate out= "
                    "array, or write a loop")
        tyctx = cpu_target.typing_context
        sig = fnty.get_call_type(tyctx, tuple(fn.typeof(a.name) for a in inputs), {})
        if sig is None:
            return 1
        fn.calltypes.pop(stmt.value, None)
        new = ir.Expr.call(stmt.value.func, inputs, (), loc)
        fn.calltypes[new] = sig
        tmp = ir.Var(block.scope, fresh_name("$result"), loc)
        fn.typemap[tmp.name] = sig.return_type
        block.body[k] = ir.Assign(new, tmp, loc)
        n = slice_write(fn, block, k + 1, out, tmp, loc)
        block.body.insert(k + 1 + n, ir.Assign(out, stmt.target, loc))
        fn.typemap[stmt.target.name] = fn.typeof(out.name)
        return 2 + n


class DropSelfSliceWrites:
    """``y[i] = v`` where ``v`` is the view ``y[i]`` itself (same array, same index
    variable) goes: it is the store Python runs after ``y[1:] *= 2`` or ``Y[:, 0] += x``
    updated the view in place. Writing a view's values onto themselves changes nothing,
    but reverse mode would clear the written region's adjoint, which is the adjoint the
    view has just received."""

    name = "drop_self_slice_writes"

    def run(self, fn):
        if fn.extra.get("generated") or is_derivative(fn.py_func):
            return
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        for block in fn.func_ir.blocks.values():
            block.body = [s for s in block.body if not self.writes_itself(fn, defs, s)]

    @staticmethod
    def writes_itself(fn, defs, stmt):
        """Whether ``stmt`` stores array ``y[i]``'s own view back into ``y[i]``."""
        if not (isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
                and isinstance(fn.typeof(stmt.value.name), types.Array)):
            return False

        def source(name):
            while isinstance(defs.get(name), ir.Var):
                name = defs[name].name
            return name
        read = defs.get(source(stmt.value.name))
        if not (isinstance(read, ir.Expr) and read.op in ("getitem", "static_getitem")):
            return False
        sig = fn.calltypes.get(read)
        if sig is None or not is_basic_index(sig.args[1]):
            return False  # ``y[mask] += 1`` reads a copy, whose store is a real write
        if source(read.value.name) != source(stmt.target.name):
            return False
        read_index = read.index if read.op == "getitem" else read.index_var
        write_index = stmt.index if isinstance(stmt, ir.SetItem) else stmt.index_var
        if read_index is not None and write_index is not None:
            return source(read_index.name) == source(write_index.name)
        return (read.op == "static_getitem" and isinstance(stmt, ir.StaticSetItem)
                and read.index == stmt.index)
