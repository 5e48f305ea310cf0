"""Forward mode of elementwise array operations: a scalar rule's partial evaluated at
every element of the result, with NumPy broadcasting of the operands."""
import numpy as np
from numba.core import types
from numba.extending import overload

from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from ..rules.arrays import zeros_shaped
from ..rules.core import FuncPartial
from ..rules.elementwise import check_broadcast
from ..rules.elementwise import element_at as elementwise_at

_elementwise_cache = {}


def elementwise_partial(partial, nargs):
    """A scalar partial applied at every element of an array result (``np.sin(x)``,
    ``a / b`` on arrays): a ``FuncPartial`` whose function returns the array of partials.
    Arguments are arrays of the result's size or scalars; broadcasting is refused."""
    key = (partial, nargs)
    if key not in _elementwise_cache:
        d = partial.jit
        if partial.takes_ans and nargs == 1:
            def at_every(ans, a):
                out = np.empty_like(ans)
                for i in range(ans.size):
                    out.flat[i] = d(ans.flat[i], _element(a, i, ans))
                return out
        elif partial.takes_ans:
            def at_every(ans, a, b):
                out = np.empty_like(ans)
                for i in range(ans.size):
                    out.flat[i] = d(ans.flat[i], _element(a, i, ans), _element(b, i, ans))
                return out
        elif nargs == 1:
            def at_every(ans, a):
                out = np.empty_like(ans)
                for i in range(ans.size):
                    out.flat[i] = d(_element(a, i, ans))
                return out
        else:
            def at_every(ans, a, b):
                out = np.empty_like(ans)
                for i in range(ans.size):
                    out.flat[i] = d(_element(a, i, ans), _element(b, i, ans))
                return out
        wrapped = FuncPartial(lambda ans, *args: None)
        wrapped.takes_ans, wrapped.reads_ans = True, True
        wrapped.reads_args = tuple(range(nargs))
        wrapped._jit = internal_jit(at_every)
        _elementwise_cache[key] = wrapped
    return _elementwise_cache[key]


def _element(a, i, ans):
    """The element of operand ``a`` that meets flat position ``i`` of the result ``ans``
    under NumPy broadcasting, or the scalar itself."""


@overload(_element, jit_options=INTERNAL_JIT_OPTIONS)
def _element_impl(a, i, ans):
    if not isinstance(a, types.Array):
        return lambda a, i, ans: a
    if ans.ndim == 1:
        def impl1(a, i, ans):
            check_broadcast(a, ans)
            return elementwise_at(a, 0, 0, i)
        return impl1
    if ans.ndim == 2:
        def impl2(a, i, ans):
            check_broadcast(a, ans)
            return elementwise_at(a, 0, i // ans.shape[1], i % ans.shape[1])
        return impl2

    def impl3(a, i, ans):
        check_broadcast(a, ans)
        plane = ans.shape[1] * ans.shape[2]
        rest = i % plane
        return elementwise_at(a, i // plane, rest // ans.shape[2], rest % ans.shape[2])
    return impl3


def tangent_like(t, ans):
    """The tangent ``t`` of the elementwise result ``ans`` as an array of ``ans``'s shape.

    A sum of partial terms has the shape of the operands that carry tangents: a scalar
    for ``np.zeros(4) - x`` with a float ``x``, a row for ``C - v`` with ``C`` of shape
    ``(3, 1)``. Views and element reads of the tangent (``y[::-1]``, ``y[1, 2]``) need the
    result's own shape, so such a tangent is broadcast to it; one of the right shape is
    returned as it is."""


@overload(tangent_like, jit_options=INTERNAL_JIT_OPTIONS)
def _tangent_like_impl(t, ans):
    if isinstance(t, (types.Float, types.Integer)):
        return lambda t, ans: np.full(ans.shape, t, ans.dtype)
    if not isinstance(t, types.Array):
        return None
    if t.ndim == ans.ndim and t.layout == "C":
        def same_rank(t, ans):
            if t.shape == ans.shape:
                return t
            return zeros_shaped(ans.shape, ans.dtype) + t
        return same_rank
    return lambda t, ans: zeros_shaped(ans.shape, ans.dtype) + t
