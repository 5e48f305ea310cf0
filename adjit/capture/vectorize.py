"""``@numba.vectorize`` ufuncs become loops over their scalar kernel.

A ``DUFunc`` applied to arrays (``y = smooth(x, 0.5)``) is rewritten into a call of an
``@njit`` map helper that loops over the elements and calls the kernel (the user's
scalar function, compiled with ``numba.njit``); applied to scalars it becomes a call of
the kernel itself. Both are then ordinary ``@njit`` calls that adjit derives in every
mode, so a ufunc needs no rule of its own. Helpers exist for 1-D, 2-D and 3-D results and
one to eight operands, each an array or a scalar. Operands broadcast as NumPy's: an
array of lower rank than the result along the result's trailing axes, axes of length 1
against any length, and shapes that do not broadcast raise ``ValueError``.
"""
import inspect
import threading

import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target
from numba.np.numpy_support import as_dtype
from numba.np.ufunc.dufunc import DUFunc

from ..compile.inline_library import internal_jit
from ..rules.core import lookup
from ..rules.registry import lookup_kernel

_lock = threading.Lock()
_kernels = {}
_maps = {}


@internal_jit
def _item1(a, i):
    """Element ``i`` of a 1-D operand (its only element if it has length 1: broadcast)."""
    return a[i if a.shape[0] != 1 else 0]


@internal_jit
def _item2(a, i, j):
    """Element ``(i, j)`` of a 2-D operand; an axis of length 1 is broadcast (a column
    ``x[:, None]`` against a row ``z[None, :]``)."""
    return a[i if a.shape[0] != 1 else 0, j if a.shape[1] != 1 else 0]


@internal_jit
def _item3(a, i, j, k):
    """Element ``(i, j, k)`` of a 3-D operand, axes of length 1 broadcast."""
    return a[i if a.shape[0] != 1 else 0, j if a.shape[1] != 1 else 0,
             k if a.shape[2] != 1 else 0]


@internal_jit
def _row_of2(a, i, j):
    """Element ``j`` of a 1-D operand against a 2-D result: NumPy aligns the trailing
    axes, so a row (``lo`` in ``np.clip(X, lo, hi)``) repeats down the rows."""
    return a[j if a.shape[0] != 1 else 0]


@internal_jit
def _row_of3(a, i, j, k):
    """Element ``k`` of a 1-D operand against a 3-D result."""
    return a[k if a.shape[0] != 1 else 0]


@internal_jit
def _plane_of3(a, i, j, k):
    """Element ``(j, k)`` of a 2-D operand against a 3-D result."""
    return a[j if a.shape[0] != 1 else 0, k if a.shape[1] != 1 else 0]


@internal_jit
def _same1(a, i):
    """A scalar operand, the same at every position."""
    return a


@internal_jit
def _same2(a, i, j):
    return a


@internal_jit
def _same3(a, i, j, k):
    return a


@internal_jit
def _axis(n, m):
    """The broadcast length of an axis of lengths ``n`` and ``m``, as NumPy's."""
    if n == m or n == 1:
        return m
    if m == 1:
        return n
    raise ValueError("adjit: elementwise operands could not be broadcast together")


@internal_jit
def fit_shape(a, shape):
    """``shape`` broadcast with array operand ``a``'s (of the same rank)."""
    if len(shape) == 1:
        return (_axis(a.shape[0], shape[0]),)
    if len(shape) == 2:
        return (_axis(a.shape[0], shape[0]), _axis(a.shape[1], shape[1]))
    return (_axis(a.shape[0], shape[0]), _axis(a.shape[1], shape[1]),
            _axis(a.shape[2], shape[2]))


@internal_jit
def _check_row_of2(a, shape):
    """``shape`` (2-D) broadcast with a 1-D operand, aligned on the last axis."""
    return (shape[0], _axis(a.shape[0], shape[1]))


@internal_jit
def _check_row_of3(a, shape):
    """``shape`` (3-D) broadcast with a 1-D operand."""
    return (shape[0], shape[1], _axis(a.shape[0], shape[2]))


@internal_jit
def _check_plane_of3(a, shape):
    """``shape`` (3-D) broadcast with a 2-D operand, aligned on the last two axes."""
    return (shape[0], _axis(a.shape[0], shape[1]), _axis(a.shape[1], shape[2]))


@internal_jit
def _no_check(a, shape):
    """A scalar operand fits any shape."""
    return shape


def kernel_of(dufunc):
    """The user's scalar function of a ``DUFunc``, compiled with ``numba.njit``, or the
    kernel registered for a NumPy function with ``rules.registry.defkernel``."""
    if not isinstance(dufunc, DUFunc):
        return lookup_kernel(dufunc)
    py_func = dufunc._dispatcher.py_func
    with _lock:
        if py_func not in _kernels:
            _kernels[py_func] = internal_jit(py_func)
        return _kernels[py_func]


MAX_OPERANDS = 8

# The kernel as a function of MAX_OPERANDS arguments that ignores those past its own
# arity: the maps below then serve every number of operands (the unused slots get the
# result's shape, which ``_same1``/``_same2`` pass through and the kernel never sees).
_PADDED = {
    1: lambda k: lambda a, b, c, d, e, f, g, h: k(a),
    2: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b),
    3: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b, c),
    4: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b, c, d),
    5: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b, c, d, e),
    6: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b, c, d, e, f),
    7: lambda k: lambda a, b, c, d, e, f, g, h: k(a, b, c, d, e, f, g),
    8: lambda k: k,
}


def _map_1d(kernel, get, check, dtype, empty):
    """The loop of a 1-D result over eight operands read by ``get``."""
    g0, g1, g2, g3, g4, g5, g6, g7 = get
    c0, c1, c2, c3, c4, c5, c6, c7 = check

    def map1d(a, b, c, d, e, f, g, h, shape):
        shape = c3(d, c2(c, c1(b, c0(a, shape))))  # the operands' shapes broadcast
        shape = c7(h, c6(g, c5(f, c4(e, shape))))
        out = empty(shape, dtype)
        for i in range(shape[0]):
            out[i] = kernel(g0(a, i), g1(b, i), g2(c, i), g3(d, i),
                            g4(e, i), g5(f, i), g6(g, i), g7(h, i))
        return out
    return map1d


def _map_2d(kernel, get, check, dtype, empty):
    """The loops of a 2-D result over eight operands read by ``get``."""
    g0, g1, g2, g3, g4, g5, g6, g7 = get
    c0, c1, c2, c3, c4, c5, c6, c7 = check

    def map2d(a, b, c, d, e, f, g, h, shape):
        shape = c3(d, c2(c, c1(b, c0(a, shape))))  # the operands' shapes broadcast
        shape = c7(h, c6(g, c5(f, c4(e, shape))))
        out = empty(shape, dtype)
        for i in range(shape[0]):
            for j in range(shape[1]):
                out[i, j] = kernel(g0(a, i, j), g1(b, i, j), g2(c, i, j), g3(d, i, j),
                                   g4(e, i, j), g5(f, i, j), g6(g, i, j), g7(h, i, j))
        return out
    return map2d


def _map_3d(kernel, get, check, dtype, empty):
    """The loops of a 3-D result over eight operands read by ``get``."""
    g0, g1, g2, g3, g4, g5, g6, g7 = get
    c0, c1, c2, c3, c4, c5, c6, c7 = check

    def map3d(a, b, c, d, e, f, g, h, shape):
        shape = c3(d, c2(c, c1(b, c0(a, shape))))  # the operands' shapes broadcast
        shape = c7(h, c6(g, c5(f, c4(e, shape))))
        out = empty(shape, dtype)
        for i in range(shape[0]):
            for j in range(shape[1]):
                for k in range(shape[2]):
                    out[i, j, k] = kernel(
                        g0(a, i, j, k), g1(b, i, j, k), g2(c, i, j, k), g3(d, i, j, k),
                        g4(e, i, j, k), g5(f, i, j, k), g6(g, i, j, k), g7(h, i, j, k))
        return out
    return map3d


@internal_jit
def _empty_c(shape, dtype):
    """The map's result, in C order."""
    return np.empty(shape, dtype)


@internal_jit
def _empty_f(shape, dtype):
    """The map's result in Fortran order: Numba's ufuncs give one for Fortran operands
    (``f(X.T)``), and the statements reading it are typed for that layout."""
    return np.empty(shape[::-1], dtype).T


#: the loop nest per result rank
_BY_RANK = {1: _map_1d, 2: _map_2d, 3: _map_3d}

#: (operand rank, result rank) -> how the operand is read and how its shape is
#: broadcast; rank 0 is a scalar operand
_OPERAND = {
    (0, 1): (_same1, _no_check), (0, 2): (_same2, _no_check), (0, 3): (_same3, _no_check),
    (1, 1): (_item1, fit_shape), (2, 2): (_item2, fit_shape), (3, 3): (_item3, fit_shape),
    (1, 2): (_row_of2, _check_row_of2), (1, 3): (_row_of3, _check_row_of3),
    (2, 3): (_plane_of3, _check_plane_of3),
}


def map_helper(dufunc, ranks, ndim, dtype=np.float64, fortran=False):
    """The ``@njit`` map of ``dufunc`` for operands of the given ``ranks`` (0 for a
    scalar; a lower rank than the result's broadcasts along its trailing axes, as
    NumPy's), over a result of rank ``ndim`` and NumPy type ``dtype`` (the ufunc's: a
    ``float32(float32)`` signature makes float32 arrays), in Fortran order if
    ``fortran`` (cached). It takes ``MAX_OPERANDS`` operands and the result's shape: pad
    unused operands with the shape."""
    kernel = kernel_of(dufunc)
    key = (kernel.py_func, tuple(ranks), ndim, dtype, fortran)
    with _lock:
        if key not in _maps:
            padded = kernel if len(ranks) == MAX_OPERANDS else internal_jit(
                _PADDED[len(ranks)](kernel))
            slots = list(ranks) + [0] * (MAX_OPERANDS - len(ranks))
            make = _BY_RANK[ndim]
            get = [_OPERAND[rank, ndim][0] for rank in slots]
            check = [_OPERAND[rank, ndim][1] for rank in slots]
            _maps[key] = internal_jit(make(padded, get, check, dtype,
                                           _empty_f if fortran else _empty_c))
        return _maps[key]


def cast_kernel(kernel, arity, dtype):
    """``kernel`` with its result converted to ``dtype`` (the ufunc's output type: a
    ``float32(float32)`` signature over ``0.5 * x`` gives float32, the plain kernel
    float64), for ``arity`` operands (cached)."""
    key = ("cast", kernel.py_func, arity, dtype)
    with _lock:
        if key not in _maps:
            _maps[key] = internal_jit(_CAST[arity](kernel, dtype))
        return _maps[key]


_CAST = {
    1: lambda k, t: lambda a: t(k(a)),
    2: lambda k, t: lambda a, b: t(k(a, b)),
    3: lambda k, t: lambda a, b, c: t(k(a, b, c)),
    4: lambda k, t: lambda a, b, c, d: t(k(a, b, c, d)),
    5: lambda k, t: lambda a, b, c, d, e: t(k(a, b, c, d, e)),
    6: lambda k, t: lambda a, b, c, d, e, f: t(k(a, b, c, d, e, f)),
    7: lambda k, t: lambda a, b, c, d, e, f, g: t(k(a, b, c, d, e, f, g)),
    8: lambda k, t: lambda a, b, c, d, e, f, g, h: t(k(a, b, c, d, e, f, g, h)),
}


class VectorizeToLoops:
    """``y = f(x, ...)`` with ``f`` a ``@vectorize`` ufunc becomes a call of its map
    helper (arrays) or of its kernel (scalars), with typemap and calltypes updated."""

    name = "vectorize_to_loops"

    def run(self, fn):
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        for block in fn.func_ir.blocks.values():
            k = 0
            while k < len(block.body):
                stmt = block.body[k]
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
                        and not value.vararg and self.dufunc(fn, defs, value) is not None):
                    k += self.rewrite(fn, block, k, stmt, self.dufunc(fn, defs, value))
                k += 1

    @staticmethod
    def dufunc(fn, defs, value):
        """The ``DUFunc`` (or ``defkernel`` function such as ``np.where``) a call calls,
        or None."""
        typ = fn.typeof(value.func.name)
        if not isinstance(typ, types.Function):
            return None
        key = typ.typing_key
        return key if isinstance(key, DUFunc) or lookup_kernel(key) is not None else None

    @staticmethod
    def rewrite(fn, block, k, stmt, dufunc):
        """Point the call at the kernel or the map helper; return statements inserted."""
        value, loc = stmt.value, stmt.loc
        sig = fn.calltypes[value]
        argtypes = [types.unliteral(fn.typeof(a.name)) for a in value.args]
        result = sig.return_type
        tyctx = cpu_target.typing_context
        inserted = 0
        kernel = None if isinstance(dufunc, DUFunc) else kernel_of(dufunc)
        if kernel is not None and len(argtypes) != len(
                inspect.signature(kernel.py_func).parameters):
            return 0  # another form (``np.where(condition)``: the indices), not elementwise
        if isinstance(result, types.Array):
            if not (result.ndim in _BY_RANK and isinstance(result.dtype, types.Float)
                    and 1 <= len(argtypes) <= MAX_OPERANDS):
                return 0  # left alone: the transform refuses it by name
            ranks = [t.ndim if isinstance(t, types.Array) else 0 for t in argtypes]
            if any(isinstance(t, types.Array) and t.ndim == 0 for t in argtypes):
                return 0  # a 0-d array operand: refused by name
            callee = map_helper(dufunc, ranks, result.ndim, as_dtype(result.dtype).type,
                                fortran=result.layout == "F" and result.ndim > 1)
            # the result's shape, from an operand of its rank, also pads the unused ones
            first = value.args[ranks.index(result.ndim)]
            shape = ir.Var(block.scope, f"{first.name}%ushape", loc)
            block.body.insert(k, ir.Assign(ir.Expr.getattr(first, "shape", loc), shape, loc))
            fn.typemap[shape.name] = types.UniTuple(types.intp, result.ndim)
            inserted = 1
            args = list(value.args) + [shape] * (MAX_OPERANDS - len(ranks) + 1)
        elif not isinstance(dufunc, DUFunc) and lookup(dufunc) is not None:
            return 0  # a scalar call of a NumPy function with a scalar rule (np.sinc)
        else:
            callee, args = kernel_of(dufunc), list(value.args)
            if isinstance(result, types.Float):  # the ufunc's type: float32(float32) casts
                callee = cast_kernel(callee, len(args), as_dtype(result).type)
        fnty = types.Dispatcher(callee)
        new_sig = fnty.get_call_type(tyctx, tuple(fn.typeof(a.name) for a in args), {})
        if new_sig is None or types.unliteral(new_sig.return_type) != types.unliteral(result):
            # the statements reading the result were typed for the ufunc's type: another
            # type would make the derivative read its records wrongly; refused by name
            for _ in range(inserted):
                del block.body[k]
            return 0
        func = ir.Var(block.scope, f"{value.func.name}%kernel", loc)
        block.body.insert(k, ir.Assign(ir.Global(callee.py_func.__name__, callee, loc),
                                       func, loc))
        fn.typemap[func.name] = fnty
        new = ir.Expr.call(func, args, (), loc)
        del fn.calltypes[value]
        fn.calltypes[new] = new_sig
        fn.typemap[stmt.target.name] = new_sig.return_type
        stmt.value = new
        return inserted + 1
