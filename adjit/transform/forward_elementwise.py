"""Forward mode of elementwise array operations: a scalar rule's partial evaluated at
every element of the result and multiplied with the operand's tangent there, with NumPy
broadcasting of the operands."""
import numpy as np
from numba.core import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..ir.purity import pure_kernel
from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from ..rules.arrays import zeros_shaped
from ..rules.core import FuncPartial, adjoint_product
from ..rules.elementwise import check_broadcast
from ..rules.elementwise import element_at as elementwise_at

_term_cache = {}


def elementwise_term(partial, nargs):
    """The tangent term ``t * d`` of one operand of an elementwise operation on arrays,
    at every element of the result, in one loop: ``d`` the scalar partial there, ``t``
    the operand's tangent (an array broadcast to the result, or a scalar). Guarded as
    the scalar rules are (``adjoint_product``): a zero tangent contributes 0 even where
    the partial is infinite (``np.sqrt`` of an exact 0), as the same code written as a
    loop gives. Called ``term(t, ans, *args)``."""
    key = (partial, nargs)
    if key not in _term_cache:
        d = partial.jit
        if partial.takes_ans and nargs == 1:
            def term(t, ans, a):
                out = _empty_result(t, ans)
                for i in range(ans.size):
                    out.flat[i] = adjoint_product(_element(t, i, ans),
                                                  d(ans.flat[i], _element(a, i, ans)))
                return out
        elif partial.takes_ans:
            def term(t, ans, a, b):
                out = _empty_result(t, ans)
                for i in range(ans.size):
                    out.flat[i] = adjoint_product(_element(t, i, ans), d(
                        ans.flat[i], _element(a, i, ans), _element(b, i, ans)))
                return out
        elif nargs == 1:
            def term(t, ans, a):
                out = _empty_result(t, ans)
                for i in range(ans.size):
                    out.flat[i] = adjoint_product(_element(t, i, ans), d(_element(a, i, ans)))
                return out
        else:
            def term(t, ans, a, b):
                out = _empty_result(t, ans)
                for i in range(ans.size):
                    out.flat[i] = adjoint_product(_element(t, i, ans), d(
                        _element(a, i, ans), _element(b, i, ans)))
                return out
        _term_cache[key] = pure_kernel(internal_jit(term))
    return _term_cache[key]


@pure_kernel
@internal_jit
def guarded_term(t, d, ans):
    """``t * d`` at every element of the result ``ans`` of an elementwise operation, for
    a partial ``d`` that is an operand itself (broadcast like ``t``), guarded as
    ``elementwise_term``."""
    out = _empty_result(t, ans)
    for i in range(ans.size):
        out.flat[i] = adjoint_product(_element(t, i, ans), _element(d, i, ans))
    return out


def emit_elementwise_term(e, partial, tan, ans, args):
    """Emit the guarded tangent term of one operand of an elementwise array operation
    (``partial`` a ``FuncPartial`` or an ``ArgPartial``): see ``elementwise_term``."""
    if isinstance(partial, FuncPartial):
        call_args = [tan, ans] + [a if i in partial.reads_args else e.const(0.0, hint="unused")
                                  for i, a in enumerate(args)]
        return e.call(elementwise_term(partial, len(args)), call_args, hint="tan")
    return e.call(guarded_term, [tan, args[partial.index], ans], hint="tan")


def _empty_result(t, ans):
    """A new C array of ``ans``'s shape, of the type of ``t * ans``'s elements."""


@overload(_empty_result, jit_options=INTERNAL_JIT_OPTIONS)
def _empty_result_impl(t, ans):
    seed = t.dtype if isinstance(t, types.Array) else t
    scalar = np.promote_types(as_dtype(seed), as_dtype(ans.dtype)).type
    return lambda t, ans: np.empty(ans.shape, scalar)


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


@pure_kernel
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
    if t.dtype != ans.dtype:  # float32 x + 1.0: a float64 result, a float32 tangent
        dt = as_dtype(ans.dtype)
        if t.ndim != ans.ndim:
            return lambda t, ans: zeros_shaped(ans.shape, ans.dtype) + t.astype(dt)

        def converted(t, ans):
            if t.shape == ans.shape:
                return t.astype(dt)
            return zeros_shaped(ans.shape, ans.dtype) + t.astype(dt)
        return converted
    if t.ndim == ans.ndim and t.layout == "C":
        def same_rank(t, ans):
            if t.shape == ans.shape:
                return t
            return zeros_shaped(ans.shape, ans.dtype) + t
        return same_rank
    return lambda t, ans: zeros_shaped(ans.shape, ans.dtype) + t
