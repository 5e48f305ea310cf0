"""Whole-array writes (``a[:] = t``, ``a[...] = t``) in generated code, without Numba's
general slice assignment.

Numba compiles ``a[:] = t`` through its fancy-indexing path, whose shape error formats the
shapes into a string in compiled code: Numba's unicode machinery, two to five seconds on the
first such write in a process. adjit writes whole arrays often: ``a += b`` on arrays becomes
``t = a + b; a[:] = t`` before differentiation, and forward mode writes tangents the same
way. ``rewrite_whole_array_writes`` (run on every generated function that is not plain)
turns each such statement into ``assign_whole(a, t)``, which loops (ranks 1 to 3, NumPy broadcasting, a copy first when
``t`` overlaps ``a``) and raises a constant ``ValueError`` on a shape mismatch. Other targets
and values keep Numba's own assignment.
"""
import numpy as np
from numba.core import ir, types
from numba.extending import overload

from .inline_library import INTERNAL_JIT_OPTIONS, internal_jit

_BROADCAST_ERROR = "could not broadcast the value into the shape of the array written"


def assign_whole(a, t):
    """``a[...] = t`` (see the module docstring)."""
    a[...] = t


@internal_jit
def _overlaps(a, t):
    """Whether the bytes ``a`` and ``t`` span intersect (stride signs included)."""
    if a.size == 0 or t.size == 0:
        return False
    lo_a = hi_a = a.ctypes.data
    for k in range(a.ndim):
        step = (a.shape[k] - 1) * a.strides[k]
        lo_a, hi_a = (lo_a + step, hi_a) if step < 0 else (lo_a, hi_a + step)
    lo_t = hi_t = t.ctypes.data
    for k in range(t.ndim):
        step = (t.shape[k] - 1) * t.strides[k]
        lo_t, hi_t = (lo_t + step, hi_t) if step < 0 else (lo_t, hi_t + step)
    return lo_a < hi_t + t.itemsize and lo_t < hi_a + a.itemsize


@internal_jit
def _check(n, m):
    """The extent of a value dimension ``m`` broadcast onto a target dimension ``n``."""
    if m != n and m != 1:
        raise ValueError(_BROADCAST_ERROR)


@internal_jit
def _at(m, i):
    """The index into a value dimension of extent ``m`` for target index ``i``."""
    return i if m != 1 else 0


def _copy_loops(nd_a, nd_t):
    """The loop nest writing a rank-``nd_t`` array into a rank-``nd_a`` one."""
    lead = nd_a - nd_t
    if nd_a == 1:
        def write(a, t):
            _check(a.shape[0], t.shape[0])
            m0 = t.shape[0]
            for i in range(a.shape[0]):
                a[i] = t[_at(m0, i)]
    elif nd_a == 2 and lead == 1:
        def write(a, t):
            _check(a.shape[1], t.shape[0])
            m1 = t.shape[0]
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    a[i, j] = t[_at(m1, j)]
    elif nd_a == 2:
        def write(a, t):
            _check(a.shape[0], t.shape[0])
            _check(a.shape[1], t.shape[1])
            m0, m1 = t.shape
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    a[i, j] = t[_at(m0, i), _at(m1, j)]
    elif lead == 2:
        def write(a, t):
            _check(a.shape[2], t.shape[0])
            m2 = t.shape[0]
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    for k in range(a.shape[2]):
                        a[i, j, k] = t[_at(m2, k)]
    elif lead == 1:
        def write(a, t):
            _check(a.shape[1], t.shape[0])
            _check(a.shape[2], t.shape[1])
            m1, m2 = t.shape
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    for k in range(a.shape[2]):
                        a[i, j, k] = t[_at(m1, j), _at(m2, k)]
    else:
        def write(a, t):
            _check(a.shape[0], t.shape[0])
            _check(a.shape[1], t.shape[1])
            _check(a.shape[2], t.shape[2])
            m0, m1, m2 = t.shape
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    for k in range(a.shape[2]):
                        a[i, j, k] = t[_at(m0, i), _at(m1, j), _at(m2, k)]
    return write


def _fill_loops(nd_a):
    """The loop nest writing one number into every element of a rank-``nd_a`` array."""
    if nd_a == 1:
        def fill(a, t):
            for i in range(a.shape[0]):
                a[i] = t
    elif nd_a == 2:
        def fill(a, t):
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    a[i, j] = t
    else:
        def fill(a, t):
            for i in range(a.shape[0]):
                for j in range(a.shape[1]):
                    for k in range(a.shape[2]):
                        a[i, j, k] = t
    return fill


def _generic(a, t):
    a[...] = t


_copies = {}


def _copy_for(nd_a, nd_t):
    """The compiled loop nest for a rank-``nd_a`` target and a rank-``nd_t`` value, made
    once."""
    if (nd_a, nd_t) not in _copies:
        _copies[nd_a, nd_t] = internal_jit(_copy_loops(nd_a, nd_t))
    return _copies[nd_a, nd_t]


@overload(assign_whole, jit_options=INTERNAL_JIT_OPTIONS)
def _assign_whole_impl(a, t):
    if not (isinstance(a, types.Array) and 1 <= a.ndim <= 3 and a.mutable):
        return _generic
    if isinstance(t, (types.Number, types.Boolean)):
        return _fill_loops(a.ndim)
    if not (isinstance(t, types.Array) and 1 <= t.ndim <= a.ndim):
        return _generic
    write = _copy_for(a.ndim, t.ndim)

    def impl(a, t):
        if _overlaps(a, t):
            write(a, np.copy(t))
        else:
            write(a, t)
    return impl


def assign_selection(a, index, t):
    """``a[index] = t``; through ``assign_whole`` on the view ``a[index]`` when ``index``
    is a basic index (slices, integers, ``...``) that selects an array."""
    a[index] = t


def _basic_index_rank(a, index):
    """How many dimensions of ``a`` the basic index ``index`` keeps, or None when it is not
    a basic index (arrays, ``None``, ...)."""
    items = index.types if isinstance(index, types.BaseTuple) else (index,)
    ellipses = sum(isinstance(i, types.EllipsisType) for i in items)
    if ellipses > 1 or len(items) - ellipses > a.ndim:
        return None
    if not all(isinstance(i, (types.Integer, types.SliceType, types.EllipsisType))
               for i in items):
        return None
    return a.ndim - sum(isinstance(i, types.Integer) for i in items)


@overload(assign_selection, jit_options=INTERNAL_JIT_OPTIONS)
def _assign_selection_impl(a, index, t):
    if isinstance(a, types.Array) and a.mutable:
        kept = _basic_index_rank(a, index)
        if kept is not None and kept >= 1:
            return lambda a, index, t: assign_whole(a[index], t)

    def generic(a, index, t):
        a[index] = t
    return generic


def _slicing_index(value, definitions):
    """Whether ``value`` (a setitem index) is written with slices: ``a[1:]``, ``a[:, 0]``."""
    if isinstance(value, ir.Var):
        value = definitions.get(value.name)
    if isinstance(value, ir.Expr) and value.op == "build_tuple":
        return any(_whole_index(item, definitions) or _slicing_index(item, definitions)
                   for item in value.items)
    if isinstance(value, ir.Expr) and value.op == "call" and not value.kws:
        func = definitions.get(value.func.name)
        return isinstance(func, ir.Global) and func.value is slice
    return isinstance(value, (ir.Const, ir.Global)) and isinstance(value.value, slice)


def _whole_index(value, definitions):
    """Whether ``value`` (a setitem index) is ``slice(None, None)`` or ``...``."""
    if isinstance(value, ir.Var):
        value = definitions.get(value.name)
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
        value = value.value
    if value is Ellipsis or (isinstance(value, slice) and value == slice(None, None, None)):
        return True
    if isinstance(value, ir.Expr) and value.op == "call" and not value.kws:
        func = definitions.get(value.func.name)
        return (isinstance(func, ir.Global) and func.value is slice and len(value.args) == 2
                and all(_is_none(a, definitions) for a in value.args))
    return False


def _is_none(var, definitions):
    value = definitions.get(var.name)
    return isinstance(value, ir.Const) and value.value is None


def rewrite_whole_array_writes(blocks):
    """``blocks`` (untyped generated IR) with their slice writes as calls of
    ``assign_whole`` / ``assign_selection``, in new blocks: the builder's IR stays as it
    is, since adjit captures it again (forward-over-reverse) and shows it."""
    definitions = {}
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                definitions[stmt.target.name] = (stmt.value if stmt.target.name not in
                                                 definitions else None)
    rewritten = {}
    for label, block in blocks.items():
        body = []
        for stmt in block.body:
            index = (stmt.index if isinstance(stmt, ir.SetItem) else
                     stmt.index_var if isinstance(stmt, ir.StaticSetItem) else None)
            whole = index is not None and _whole_index(stmt.index, definitions)
            if not (whole or index is not None and _slicing_index(stmt.index, definitions)):
                body.append(stmt)
                continue
            helper = assign_whole if whole else assign_selection
            args = [stmt.target, stmt.value] if whole else [stmt.target, index, stmt.value]
            scope, loc = block.scope, stmt.loc
            func = scope.redefine("$assign", loc)
            body.append(ir.Assign(ir.Global(helper.__name__, helper, loc), func, loc))
            call = ir.Expr.call(func, args, (), loc)
            body.append(ir.Assign(call, scope.redefine("$assigned", loc), loc))
        rewritten[label] = block
        if len(body) != len(block.body):
            rewritten[label] = ir.Block(block.scope, block.loc)
            rewritten[label].body = body
    return rewritten
