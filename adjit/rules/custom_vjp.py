"""A hand-written forward and backward pass for a user's ``@njit`` function: JAX's
``custom_vjp``, for functions that return a float.

::

    @adjit.extend.custom_vjp
    @numba.njit
    def f(x, y): ...

    @numba.njit
    def f_fwd(x, y):            # the value, and what the backward pass needs
        return f(x, y), (x, y)

    @numba.njit
    def f_bwd(res, g):          # one cotangent per argument of f, as a tuple
        x, y = res
        return (g * dfdx, g * dfdy)

    f.defvjp(f_fwd, f_bwd)      # or adjit.extend.defvjp(f, f_fwd, f_bwd)

The rule goes into the one registry as the shapes adjit's own rules take: a scalar rule
(``defderiv``) when ``f``'s arguments are floats, a reduction (``defarrayvjp``) when any
is a float array (a float beside arrays takes ``g`` times its partial). Because ``f`` returns a float, its vjp with ``g = 1`` is its gradient,
so reverse mode adds ``g`` times it and forward mode (``jvp``) takes its dot product with
the tangents: both modes read the same rule (JAX itself refuses ``jvp`` through a
``custom_vjp``). ``hvp`` differentiates ``f_fwd`` and ``f_bwd`` in forward mode, so they
must be code adjit can differentiate. Each argument's part calls ``f_fwd`` and ``f_bwd``
(LLVM merges the repeated calls when they are inlined).
"""
import inspect

import numba
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher

from ..errors import ArgumentError
from .arrays import ANY_RANK, ArrayRule
from .core import FuncPartial, Rule
from .primitive import PRIMITIVES
from ..compile.inline_library import internal_jit

#: the most positional arguments a function with a custom vjp may take
MAX_ARGUMENTS = 4


class CustomScalarRule(Rule):
    """The custom vjp of a function of floats: one partial per argument."""

    def matches(self, argtypes, result_type):
        """Float arguments and a float result (an array or tuple result has no rule)."""
        return (not any(isinstance(types.unliteral(t), types.Array) for t in argtypes)
                and isinstance(result_type, types.Float))


class CustomArrayRule(ArrayRule):
    """The custom vjp of a function of float arrays: one shadow update per argument."""

    def __init__(self, name, updates, tangents, scalar_partials):
        super().__init__(name, updates, tangents, ANY_RANK, False)
        #: ``d_k(*args)`` of each argument: a float beside the arrays takes ``g * d_k``
        self.scalar_partials = scalar_partials

    def matches(self, argtypes, result_type):
        """Array arguments and a float result."""
        return super().matches(argtypes, result_type) and isinstance(result_type,
                                                                     types.Float)


def _one(fwd, bwd, k, add, dot):
    """The three parts of argument ``k`` of a function of one argument."""
    def partial(a):
        return bwd(fwd(a)[1], 1.0)[k]

    def update(g, ans, a, shadow):
        add(shadow, bwd(fwd(a)[1], g)[k])

    def tangent(ans, a, da):
        return dot(bwd(fwd(a)[1], 1.0)[k], da)
    return partial, update, tangent


def _two(fwd, bwd, k, add, dot):
    """The three parts of argument ``k`` of a function of two arguments."""
    def partial(a, b):
        return bwd(fwd(a, b)[1], 1.0)[k]

    def update(g, ans, a, b, shadow):
        add(shadow, bwd(fwd(a, b)[1], g)[k])

    def tangent(ans, a, b, da):
        return dot(bwd(fwd(a, b)[1], 1.0)[k], da)
    return partial, update, tangent


def _three(fwd, bwd, k, add, dot):
    """The three parts of argument ``k`` of a function of three arguments."""
    def partial(a, b, c):
        return bwd(fwd(a, b, c)[1], 1.0)[k]

    def update(g, ans, a, b, c, shadow):
        add(shadow, bwd(fwd(a, b, c)[1], g)[k])

    def tangent(ans, a, b, c, da):
        return dot(bwd(fwd(a, b, c)[1], 1.0)[k], da)
    return partial, update, tangent


def _four(fwd, bwd, k, add, dot):
    """The three parts of argument ``k`` of a function of four arguments."""
    def partial(a, b, c, d):
        return bwd(fwd(a, b, c, d)[1], 1.0)[k]

    def update(g, ans, a, b, c, d, shadow):
        add(shadow, bwd(fwd(a, b, c, d)[1], g)[k])

    def tangent(ans, a, b, c, d, da):
        return dot(bwd(fwd(a, b, c, d)[1], 1.0)[k], da)
    return partial, update, tangent


_PARTS_BY_ARITY = {1: _one, 2: _two, 3: _three, 4: _four}


def defvjp(f, fwd, bwd):
    """Give the ``@njit`` function ``f`` (returning a float) the hand-written pair
    ``fwd(*args) -> (value, residuals)`` and ``bwd(residuals, g) -> (one cotangent per
    argument)``; plain Python ``fwd`` and ``bwd`` are compiled with ``numba.njit``."""
    name = _checked_function(f)
    count = _argument_count(f, name)
    fwd, bwd = (_jitted(p, role, name) for p, role in ((fwd, "fwd"), (bwd, "bwd")))
    add, dot = _checked_cotangents(name)
    parts = [_PARTS_BY_ARITY[count](fwd, bwd, k, add, dot) for k in range(count)]
    PRIMITIVES.register([f], CustomScalarRule(name, tuple(FuncPartial(p) for p, _, _ in parts)))
    PRIMITIVES.register([f], CustomArrayRule(
        name, tuple(internal_jit(u) for _, u, _ in parts),
        tuple(internal_jit(t) for _, _, t in parts),
        tuple(internal_jit(p, error_model="numpy") for p, _, _ in parts)))
    return f


def _checked_cotangents(name):
    """``add(shadow, c)`` (``shadow += c``) and ``dot(c, da)`` (``sum(c * da)``) for
    the cotangents ``bwd`` returns for array arguments, each first checking that ``c``
    has its argument's shape: NumPy's broadcasting would take a wrong one silently."""
    message = (f"adjit: the custom vjp of '{name}' (adjit.extend.defvjp): its bwd returned "
               "a cotangent whose shape is not its argument's")

    def add(shadow, c):
        if np.shape(c) != shadow.shape:
            raise ValueError(message)
        shadow += c

    def dot(c, da):
        if np.shape(c) != np.shape(da):  # (a float's tangent beside arrays: forward mode)
            raise ValueError(message)
        return np.sum(c * da)
    return internal_jit(add), internal_jit(dot)


def custom_vjp(f):
    """Decorator: ``f`` (compiled with ``numba.njit`` if it is a plain function) gains
    ``f.defvjp(fwd, bwd)``, as with ``jax.custom_vjp``. Until ``defvjp`` is called adjit
    differentiates ``f``'s body as for any ``@njit`` helper."""
    if not isinstance(f, CPUDispatcher):
        if not inspect.isfunction(f):
            raise ArgumentError(f"adjit.extend.custom_vjp expects a function, got {f!r}")
        f = numba.njit(f)
    f.defvjp = lambda fwd, bwd: defvjp(f, fwd, bwd)
    return f


def _checked_function(f):
    """``f``'s name, if ``f`` is an ``@njit`` function (the called object the rule is
    keyed by); else an ``ArgumentError``."""
    if not isinstance(f, CPUDispatcher):
        raise ArgumentError(f"adjit.extend.defvjp expects an @numba.njit function, got "
                            f"{f!r}: decorate it with @adjit.extend.custom_vjp or @numba.njit")
    return f.py_func.__name__


def _argument_count(f, name):
    """How many positional parameters ``f`` takes (1 to ``MAX_ARGUMENTS``)."""
    params = inspect.signature(f.py_func).parameters.values()
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise ArgumentError(f"adjit.extend.defvjp({name}): {name} must take positional "
                            "parameters only (no *args, **kwargs or keyword-only ones)")
    if not 1 <= len(params) <= MAX_ARGUMENTS:
        raise ArgumentError(f"adjit.extend.defvjp({name}): a custom vjp takes 1 to "
                            f"{MAX_ARGUMENTS} arguments; {name} takes {len(params)}")
    return len(params)


def _jitted(func, role, name):
    """``func`` as an ``@njit`` function (its forward mode is derived under ``hvp``)."""
    if isinstance(func, CPUDispatcher):
        return func
    if not inspect.isfunction(func):
        raise ArgumentError(f"adjit.extend.defvjp({name}): {role} must be a function, got "
                            f"{func!r}")
    return numba.njit(func)
