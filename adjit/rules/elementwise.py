"""Reverse-mode helpers for elementwise array operations built from scalar rules.

``y = p(a0[, a1])`` applied elementwise (``np.sin(x)``, ``x * y``, ``2.0 * x``, ``-x``,
``x ** 2``) reuses the scalar partials of ``p`` (``rules.core``). For operand ``k`` the
helper ``update(g, ans, a0[, a1], shadow)`` walks every element of ``ans`` (1-D, 2-D or
3-D, as three nested loops over ``(i, j, l)``, the leading ones of length 1 for lower
ranks): ``v = g[i] * d_k(ans[i], a0[i], a1[i])``, adds ``v`` into ``shadow[i]`` when
``shadow`` is an array, and returns the sum of the ``v`` (the adjoint of a scalar
operand). A scalar operand is read as the same value at every position. Arrays of another
shape than ``ans`` follow NumPy broadcasting: an operand of lower rank lines up with the
last axes of the result, and an axis of length 1 is read at 0; its shadow then sums the
adjoints over the broadcast positions. Shapes that do not broadcast raise ``ValueError``.
"""
from numba.core import types
from numba.extending import overload

from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from .core import (MINUS_ONE, ONE, ArgPartial, FuncPartial, adjoint_product, deflinear,
                   nondiff)


def _at(a, i, j, k):
    """Element ``(i, j, k)`` of a 3-D array, ``(j, k)`` of a 2-D one, ``k`` of a 1-D one,
    or the scalar itself."""


@overload(_at, jit_options=INTERNAL_JIT_OPTIONS)
def _at_impl(a, i, j, k):
    # NumPy broadcasting: a lower-rank operand lines up with the last axes, and an axis
    # of length 1 is read at 0 whatever the position along it
    if isinstance(a, types.Array):
        if a.ndim == 0:
            return lambda a, i, j, k: a[()]
        if a.ndim == 1:
            return lambda a, i, j, k: a[k if a.shape[0] != 1 else 0]
        if a.ndim == 2:
            return lambda a, i, j, k: a[j if a.shape[0] != 1 else 0,
                                        k if a.shape[1] != 1 else 0]
        return lambda a, i, j, k: a[i if a.shape[0] != 1 else 0, j if a.shape[1] != 1 else 0,
                                    k if a.shape[2] != 1 else 0]
    return lambda a, i, j, k: a


def _steps(a, ans):
    """Per loop axis (the three of ``_dims``), 1 where ``a`` follows the result's index
    and 0 where it is broadcast (NumPy: a missing leading axis or an axis of length 1);
    scalars are broadcast along all three."""


@overload(_steps, jit_options=INTERNAL_JIT_OPTIONS)
def _steps_impl(a, ans):
    if not isinstance(a, types.Array) or a.ndim == 0:
        return lambda a, ans: (0, 0, 0)
    if a.ndim == 1:
        return lambda a, ans: (0, 0, int(a.shape[0] != 1))
    if a.ndim == 2:
        return lambda a, ans: (0, int(a.shape[0] != 1), int(a.shape[1] != 1))
    return lambda a, ans: (int(a.shape[0] != 1), int(a.shape[1] != 1), int(a.shape[2] != 1))


def _at_full(a, i, j, k):
    """Element ``(i, j, k)`` of ``a`` at an index whose broadcast axes ``_steps`` has
    already set to 0: no test per element, so the update loops vectorise."""


@overload(_at_full, jit_options=INTERNAL_JIT_OPTIONS)
def _at_full_impl(a, i, j, k):
    if isinstance(a, types.Array):
        if a.ndim == 0:
            return lambda a, i, j, k: a[()]
        if a.ndim == 1:
            return lambda a, i, j, k: a[k]
        if a.ndim == 2:
            return lambda a, i, j, k: a[j, k]
        return lambda a, i, j, k: a[i, j, k]
    return lambda a, i, j, k: a


def _add_at_full(shadow, i, j, k, v):
    """``shadow[i, j, k] += v`` at an index already stepped (``_steps``), as
    ``_at_full`` reads."""


@overload(_add_at_full, jit_options=INTERNAL_JIT_OPTIONS)
def _add_at_full_impl(shadow, i, j, k, v):
    if isinstance(shadow, types.Array):
        if shadow.ndim == 0:
            def add0(shadow, i, j, k, v):
                shadow[()] += v
            return add0
        if shadow.ndim == 1:
            def add1(shadow, i, j, k, v):
                shadow[k] += v
            return add1
        if shadow.ndim == 2:
            def add2(shadow, i, j, k, v):
                shadow[j, k] += v
            return add2

        def add3(shadow, i, j, k, v):
            shadow[i, j, k] += v
        return add3
    return lambda shadow, i, j, k, v: None


def _sums(shadow):
    """Whether an update adds up its products: for a scalar operand, whose adjoint is
    the total (its ``shadow`` is a placeholder). An array's update must not: the running
    sum is a float reduction, which LLVM does not vectorise (it may not reorder it), so
    it kept every update loop scalar even where nothing read the total."""


@overload(_sums, jit_options=INTERNAL_JIT_OPTIONS)
def _sums_impl(shadow):
    summed = not isinstance(shadow, types.Array)
    return lambda shadow: summed


def _check_shape(a, ans):
    """Raise unless array ``a`` broadcasts to the shape of ``ans`` (every trailing axis of
    ``a`` is as long as ``ans``'s or has length 1; scalars always pass)."""


@overload(_check_shape, jit_options=INTERNAL_JIT_OPTIONS)
def _check_shape_impl(a, ans):
    if isinstance(a, types.Array):
        def check(a, ans):
            k = ans.ndim - a.ndim
            for axis in range(a.ndim):
                if a.shape[axis] != ans.shape[k + axis] and a.shape[axis] != 1:
                    raise ValueError("adjit: operands of an elementwise operation do not "
                                     "broadcast to its result")
        return check
    return lambda a, ans: None


def _dims(ans):
    """The trip counts of the three nested loops over a 1-D, 2-D or 3-D array."""


@overload(_dims, jit_options=INTERNAL_JIT_OPTIONS)
def _dims_impl(ans):
    if ans.ndim == 1:
        return lambda ans: (1, 1, ans.shape[0])
    if ans.ndim == 2:
        return lambda ans: (1, ans.shape[0], ans.shape[1])
    return lambda ans: (ans.shape[0], ans.shape[1], ans.shape[2])


#: the broadcasting element read and shape check, which forward mode uses too
element_at = _at
check_broadcast = _check_shape

# forward mode (forward-over-reverse) goes through these helpers too
deflinear(_at, 0)
deflinear(_at_full, 0)
deflinear(_add_at_full, 0, 4)
nondiff(_check_shape, _dims, _sums, _steps)


def _scalar_partial(partial, arity):
    """The partial as a numba function ``d(ans, a0[, a1])`` of scalars (fixed arity, no
    ``*args``: forward mode differentiates these again under forward-over-reverse)."""
    if isinstance(partial, FuncPartial):
        f = partial.jit
        if arity == 1:
            return internal_jit((lambda ans, a0: f(ans, a0)) if partial.takes_ans
                              else (lambda ans, a0: f(a0)))
        return internal_jit((lambda ans, a0, a1: f(ans, a0, a1)) if partial.takes_ans
                          else (lambda ans, a0, a1: f(a0, a1)))
    if partial is ONE or partial is MINUS_ONE:
        c = 1.0 if partial is ONE else -1.0
        return internal_jit((lambda ans, a0: c) if arity == 1 else (lambda ans, a0, a1: c))
    if isinstance(partial, ArgPartial):
        if arity == 1:
            return internal_jit(lambda ans, a0: a0)
        return internal_jit((lambda ans, a0, a1: a0) if partial.index == 0
                          else (lambda ans, a0, a1: a1))
    raise TypeError(partial)


_CACHE = {}


def elementwise_update(partial, arity):
    """The numba helper ``update(g, ans, *operands, shadow) -> float`` of one partial."""
    key = (id(partial), arity)
    if key not in _CACHE:
        d = _scalar_partial(partial, arity)
        if arity == 1:
            def update(g, ans, a0, shadow):
                _check_shape(g, ans)
                _check_shape(a0, ans)
                _check_shape(shadow, ans)
                n0, n1, n2 = _dims(ans)
                total = 0.0
                g_, s_ = _steps(g, ans), _steps(shadow, ans)
                m0 = _steps(a0, ans)
                for i in range(n0):
                    for j in range(n1):
                        for k in range(n2):
                            v = adjoint_product(
                                _at_full(g, i * g_[0], j * g_[1], k * g_[2]),
                                d(_at_full(ans, i, j, k),
                                  _at_full(a0, i * m0[0], j * m0[1], k * m0[2])))
                            _add_at_full(shadow, i * s_[0], j * s_[1], k * s_[2], v)
                            if _sums(shadow):
                                total += v
                return total
        elif arity == 2:
            def update(g, ans, a0, a1, shadow):
                _check_shape(g, ans)
                _check_shape(a0, ans)
                _check_shape(a1, ans)
                _check_shape(shadow, ans)
                n0, n1, n2 = _dims(ans)
                total = 0.0
                g_, s_ = _steps(g, ans), _steps(shadow, ans)
                m0, m1 = _steps(a0, ans), _steps(a1, ans)
                for i in range(n0):
                    for j in range(n1):
                        for k in range(n2):
                            v = adjoint_product(
                                _at_full(g, i * g_[0], j * g_[1], k * g_[2]),
                                d(_at_full(ans, i, j, k),
                                  _at_full(a0, i * m0[0], j * m0[1], k * m0[2]),
                                  _at_full(a1, i * m1[0], j * m1[1], k * m1[2])))
                            _add_at_full(shadow, i * s_[0], j * s_[1], k * s_[2], v)
                            if _sums(shadow):
                                total += v
                return total
        else:
            raise ValueError("elementwise operations take one or two operands")
        _CACHE[key] = (partial, internal_jit(update))  # keep partial alive: id() is the key
    return _CACHE[key][1]


def reads_operand(partial, k):
    """Whether partial ``partial`` reads operand ``k``'s value (else ``ans``/others only)."""
    if partial is ONE or partial is MINUS_ONE:
        return False
    if isinstance(partial, ArgPartial):
        return partial.index == k
    return k in partial.reads_args


def reads_ans(partial):
    return isinstance(partial, FuncPartial) and partial.reads_ans

