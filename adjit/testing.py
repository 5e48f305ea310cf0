"""Numerical checks for adjit derivatives.

Use these helpers to test a function you differentiate, or a rule you registered, against
central finite differences of the primal. They use adjit's public API only, so they
test what a user sees.

    >>> import math, numpy as np
    >>> from adjit.testing import check_grad
    >>> def f(x, y):
    ...     return math.sin(x) * y
    >>> check_grad(f, 0.3, 2.0, argnums=(0, 1))      # returns the gradient, raises on mismatch
    (1.91..., 0.29...)

How checking works (``check_grad``):

* The gradient comes from ``adjit.grad(f, argnums)(*args)``. The primal is
  ``numba.njit(f)`` for a plain Python function (compiled once per function and cached), or
  ``f`` itself when it is already a Numba dispatcher or another callable.
* Its type must match the argument. A float scalar gets a float scalar. A float array gets
  an ndarray of the same shape and dtype that does not share memory with the argument. A
  tuple gets a tuple of the same structure.
* Float scalar arguments: the partial derivative is compared with
  ``(f(x + h) - f(x - h)) / (2h)``.
* Float array arguments: every element is checked this way when the array has at most 64
  elements (``ELEMENTWISE_LIMIT``). Whatever the size, a random-direction dot-product test
  follows: ``<grad, v>`` against ``(f(x + h v) - f(x - h v)) / (2h)``. A direction that
  fails is tried again with steps 16 and 256 times shorter, and passes if one agrees: a
  kink the step crosses (a payoff in a Monte Carlo price) spoils the difference by an
  amount that shrinks with the step, while a wrong gradient fails at every step.
* The step is relative: ``h = eps * max(1, |x|)``. By default ``eps`` is the cube root of the
  argument dtype's machine epsilon, about 6e-6 for float64 and 5e-3 for float32, which is the
  usual optimum for central differences. Perturbed points are rounded to the argument dtype,
  and the difference actually taken is the denominator, so float32 steps stay exact.
* A value passes when ``|ad - fd| <= atol + rtol * max(|ad|, |fd|) + noise``. Defaults:
  ``rtol=1e-5, atol=1e-7`` for float64 and ``rtol=5e-3, atol=1e-4`` for float32. ``noise`` is
  an estimate of the rounding error of the difference quotient,
  ``32 * eps_dtype * max|f| / (2h)``. NaN never passes.
* The thread's tape depth (``adjit.runtime.current_depth()``) must be the same before and
  after the gradient call, and the gradient call must not modify its arguments.

Choose inputs inside the function's smooth domain. Near a branch switch, a kink (``abs`` at
0, ``max`` at a tie) or a trip-count change of a value-dependent loop, finite differences
are meaningless and the check can fail for a correct gradient.
"""
import inspect

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from .errors import first_reason
from .finite_differences import (  # noqa: F401  (ELEMENTWISE_LIMIT is public here)
    ELEMENTWISE_LIMIT, _NOISE_FACTOR, _as_float, _assert_args_unchanged,
    _check_leaf_tree, _close, _copy_args, _current_depth, _describe, _fd_tree,
    _has_float32_leaf, _has_float_leaf, _is_float_array, _is_float_scalar,
    _is_int_scalar, _is_scalar_number, _name, _normalise_argnums, _primal, _rel_step,
    _scalar_output, _tolerances, _values_equal)

__all__ = ["check_grad", "check_vjp", "check_jvp", "check_hvp", "numerical_grad",
           "ELEMENTWISE_LIMIT"]


def _scaled_direction(rng, a):
    """A random direction for argument ``a``: standard normal, times ``max(1, |a|)`` (the
    largest magnitude of an array), so a central difference of step ``h`` along it moves
    ``a`` by a relative ``h``; an array keeps its shape and dtype."""
    scale = max(1.0, float(np.max(np.abs(a)))) if np.size(a) else 1.0
    if _is_float_array(a):
        return np.asarray(_random_like(rng, a) * scale, dtype=a.dtype)
    return float(rng.standard_normal()) * scale


def _hvp_argument(a):
    """A float scalar, a float array, or a non-empty flat tuple of these."""
    if isinstance(a, tuple):
        return bool(a) and all(_is_float_scalar(x) or _is_float_array(x) for x in a)
    return _is_float_scalar(a) or _is_float_array(a)


def _step(a, h, v):
    """``a + h v``, of ``a``'s type (a 0-d array plus a scalar is a NumPy scalar)."""
    moved = a + h * v
    return np.asarray(moved) if isinstance(a, np.ndarray) else moved


def _moved(a, h, v):
    """``a + h v`` in ``a``'s own type: an array keeps its dtype, a float its class."""
    if _is_float_array(a):
        return np.asarray(a + h * v, dtype=a.dtype)
    return type(a)(a + h * v)


def _flat(values):
    """The values, with each tuple's items in its place (to compare item by item)."""
    return [leaf for v in values for leaf in (v if isinstance(v, tuple) else (v,))]


def _leaves(blocks, nums):
    """``(argument, float64 array)`` per block, a tuple argument's block item by item."""
    out = []
    for k, b in zip(nums, blocks):
        items = b if isinstance(b, tuple) else (b,)
        out.extend((k, np.asarray(item, dtype=np.float64)) for item in items)
    return out


def _random_like(rng, a):
    """A standard normal array of ``a``'s shape and dtype (a 0-d array stays an array)."""
    return np.asarray(rng.standard_normal(a.shape), dtype=a.dtype)



# --------------------------------------------------------------------------------------
# Public helpers
# --------------------------------------------------------------------------------------

def check_grad(f, *args, argnums=0, eps=None, rtol=None, atol=None, seed=0):
    """Check ``adjit.grad(f, argnums)(*args)`` against finite differences; return it.

    Parameters
    ----------
    f : function or Numba dispatcher
        A scalar-valued function, as accepted by ``adjit.grad``.
    *args
        Point of evaluation. Only float scalars, float arrays and tuples of these can be
        selected by ``argnums``. Other arguments (ints, int arrays...) are passed through.
    argnums : int or tuple of int
        Which arguments to differentiate, as in ``adjit.grad``.
    eps : float, optional
        Relative finite-difference step: ``h = eps * max(1, |x|)``. Defaults to
        ``finfo(dtype).eps ** (1/3)`` for the argument's dtype.
    rtol, atol : float, optional
        Tolerances. Default to (1e-5, 1e-7) for float64 and (5e-3, 1e-4) for float32
        arguments.
    seed : int
        Seed of the random directions used by the dot-product test.

    Returns
    -------
    The gradient exactly as ``adjit.grad`` returned it (a tuple when ``argnums`` is a tuple).

    Raises
    ------
    AssertionError
        With both values when a derivative, its type, shape or dtype is wrong, when the tape
        depth changed, or when the gradient call modified an argument.
    """
    __tracebackhide__ = True  # pytest: report the failure at the caller
    import adjit

    argnums_t, is_tuple = _normalise_argnums(argnums, len(args))
    primal = _primal(f)
    _require_compiled_primal("check_grad", f, primal, args)
    scalar_primal = _scalar_output(primal, _name(f))
    scalar_primal(*_copy_args(args))  # fails early, with a clear message, on non-scalar output

    snapshot = _copy_args(args)
    depth_before = _current_depth()
    g = adjit.grad(f, argnums=argnums)(*args)
    depth_after = _current_depth()
    if depth_before != depth_after:
        raise AssertionError(
            f"check_grad({_name(f)}): tape depth changed across the gradient call: "
            f"{depth_before} before, {depth_after} after")
    _assert_args_unchanged(args, snapshot, f"check_grad({_name(f)}): the gradient call")

    if is_tuple:
        if not isinstance(g, tuple) or len(g) != len(argnums_t):
            raise AssertionError(
                f"check_grad({_name(f)}): argnums={argnums!r} expects a tuple of "
                f"{len(argnums_t)} gradients, got {_describe(g)}")
        grads = g
    else:
        grads = (g,)

    rng = np.random.default_rng(seed)
    for k, gk in zip(argnums_t, grads):
        _check_leaf_tree(scalar_primal, args, (k,), args[k], gk,
                         eps, rtol, atol, rng, f"check_grad({_name(f)}): gradient")
    return g


def _require_compiled_primal(check, f, primal, args):
    """Compile the primal for ``args`` first, and say it as ``adjit.grad`` does when Numba
    cannot: nothing to differentiate. Numba fails some programs while lowering them with
    a bare ``AssertionError`` (``a[mask]`` of a 2-D mask), which must not read as a check
    that failed. A dispatcher given explicit signatures is left to its own dispatch."""
    if not (isinstance(primal, Dispatcher) and primal._can_compile):
        return
    if primal.py_func.__code__.co_flags & inspect.CO_VARARGS:
        return  # (a *args function: the transform says what it needs)
    try:
        argtypes = tuple(numba.typeof(a) for a in args)
    except ValueError:
        return  # an argument Numba cannot type: the call itself says so
    # trailing parameters left out take their defaults, as in a call
    omitted = list(inspect.signature(primal.py_func).parameters.values())[len(args):]
    argtypes += tuple(numba.types.Omitted(p.default) for p in omitted
                      if p.default is not inspect.Parameter.empty)
    try:
        primal.compile(argtypes)
    except Exception as error:
        import adjit
        reason = (first_reason(error) if str(error).strip()
                  else f"its compiler failed ({type(error).__name__})")
        raise adjit.ArgumentError(
            f"{check}({_name(f)}): Numba cannot compile the function for these "
            f"arguments, so there is nothing to differentiate. Numba says: {reason}"
        ) from None


def check_vjp(f, *args, ybar=None, eps=None, rtol=None, atol=None, seed=0):
    """Check ``adjit.vjp(f)(*args, ybar)`` against finite differences; return its result.

    The value must equal the primal's. There must be one cotangent per argument. Integer
    arguments must get 0. For every float scalar, float array or tuple argument, the
    cotangent is checked as in ``check_grad`` against finite differences of the scalar
    ``<ybar, f(*args)>``.

    ``ybar`` defaults to 2.0 for a scalar output and to a seeded random array of the
    output's shape and dtype for an array output. Tuple outputs are not supported here.
    Other parameters are as in ``check_grad``. Returns ``(value, cotangents)``.
    """
    __tracebackhide__ = True  # pytest: report the failure at the caller
    import adjit

    primal = _primal(f)
    _require_compiled_primal("check_vjp", f, primal, args)
    y0 = primal(*_copy_args(args))
    if isinstance(y0, tuple):
        raise adjit.ArgumentError(f"check_vjp({_name(f)}): the function returns a tuple, which this "
                        "check does not support; check vjp of each item, or of a scalar "
                        "of them (sum(w_k * y_k) with fixed weights)")
    rng = np.random.default_rng(seed)
    if ybar is None:
        if isinstance(y0, np.ndarray):
            ybar = _random_like(rng, y0)
        else:
            ybar = 2.0

    def scalarised(*a):
        y = primal(*a)
        if isinstance(ybar, np.ndarray):
            return float(np.sum(np.asarray(ybar, dtype=np.float64) * np.asarray(y, dtype=np.float64)))
        return float(ybar) * _as_float(y, _name(f))

    snapshot = _copy_args(args)
    depth_before = _current_depth()
    out = adjit.vjp(f)(*args, ybar)
    depth_after = _current_depth()
    if depth_before != depth_after:
        raise AssertionError(
            f"check_vjp({_name(f)}): tape depth changed across the vjp call: "
            f"{depth_before} before, {depth_after} after")
    _assert_args_unchanged(args, snapshot, f"check_vjp({_name(f)}): the vjp call")

    if not isinstance(out, tuple) or len(out) != 2:
        raise AssertionError(f"check_vjp({_name(f)}): expected (value, cotangents), got {_describe(out)}")
    value, cots = out
    vrtol = 1e-6 if _has_float32_leaf(args) else 1e-12
    if not _values_equal(value, y0, rtol=vrtol):
        raise AssertionError(
            f"check_vjp({_name(f)}): vjp value differs from the primal\n"
            f"  vjp value: {value!r}\n  primal:    {y0!r}")
    if not isinstance(cots, tuple) or len(cots) != len(args):
        raise AssertionError(
            f"check_vjp({_name(f)}): expected a tuple of {len(args)} cotangents "
            f"(one per argument), got {_describe(cots)}")

    scalarised(*_copy_args(args))
    for k, (a, c) in enumerate(zip(args, cots)):
        if _is_int_scalar(a):
            if not (_is_scalar_number(c) and c == 0):
                raise AssertionError(
                    f"check_vjp({_name(f)}): integer argument {k} must get cotangent 0, got {c!r}")
            continue
        if not _has_float_leaf(a):
            continue
        _check_leaf_tree(scalarised, args, (k,), a, c,
                         eps, rtol, atol, rng, f"check_vjp({_name(f)}): cotangent")
    return out


def check_jvp(f, *args, seed=0, rtol=None, atol=None):
    """Check ``adjit.jvp(f)(*args, *tangents)`` with random tangents (one per float or
    float-array argument) against a central difference of the primal along them.

    ``f`` must return a float (as for ``check_grad``); for a function returning an array,
    check ``jvp`` of a scalar of it (``np.sum(w * f(x))`` with fixed weights ``w``), or use
    ``check_vjp``'s dot-product test. The value must equal the primal's. Returns
    ``(value, tangent_out)``.
    """
    __tracebackhide__ = True
    import adjit
    _require_compiled_primal("check_jvp", f, _primal(f), args)
    primal = _scalar_output(_primal(f), _name(f))
    rng = np.random.default_rng(seed)
    # (a namedtuple is held fixed, as jvp holds it)
    slots = [k for k, a in enumerate(args)
             if _hvp_argument(a) and not hasattr(a, "_fields")]
    # each tangent is scaled by its own argument's magnitude, so that one step h moves
    # every argument by about the same relative amount (masses of 1e9 beside positions of
    # 1 would otherwise take a step far too small or too large for one of them); a flat
    # tuple's per item
    tangents = [tuple(_scaled_direction(rng, a) for a in args[k])
                if isinstance(args[k], tuple) else _scaled_direction(rng, args[k])
                for k in slots]
    depth = _current_depth()
    given = _copy_args(tangents)
    value, tan = adjit.jvp(f)(*_copy_args(args), *given)  # (f may write its arguments)
    if _current_depth() != depth:
        raise AssertionError(f"check_jvp({_name(f)}): tape depth changed across the call")
    if not all(np.array_equal(a, b) for a, b in zip(_flat(given), _flat(tangents))):
        raise AssertionError(f"check_jvp({_name(f)}): jvp changed the tangents it was given")
    dtype = np.dtype(np.float32) if _has_float32_leaf(args) else np.dtype(np.float64)
    if not _values_equal(value, primal(*_copy_args(args)), rtol=1e-6 if dtype == np.float32 else 1e-12):
        raise AssertionError(f"check_jvp({_name(f)}): value {value!r} differs from the primal")
    rtol, atol = _tolerances(dtype, rtol, atol)
    h = _rel_step(dtype, None)

    def moved(sign):
        new = list(_copy_args(args))
        for k, t in zip(slots, tangents):
            new[k] = (tuple(_moved(a, sign * h, d) for a, d in zip(args[k], t))
                      if isinstance(args[k], tuple) else _moved(args[k], sign * h, t))
        return primal(*new)

    fd = (moved(1.0) - moved(-1.0)) / (2 * h)
    noise = _NOISE_FACTOR * np.finfo(dtype).eps * abs(primal(*_copy_args(args))) / (2 * h)
    if not _close(float(tan), fd, rtol, atol, noise):
        raise AssertionError(f"check_jvp({_name(f)}): tangent disagrees with central "
                             f"differences\n  adjit: {float(tan)!r}\n  fd:    {fd!r}")
    return value, tan


def check_hvp(f, *args, argnums=0, seed=0, rtol=None, atol=None):
    """Check ``adjit.hvp(f, argnums)(*args, v)`` (forward-over-reverse) with a random
    ``v`` against central differences of ``adjit.grad(f, argnums)`` along ``v`` (check the
    gradient itself with ``check_grad``). ``argnums`` is an int or a tuple (then one
    random tangent per listed argument and the joint Hessian blocks, as ``adjit.hvp``);
    returns H v. The step and the default tolerances follow the dtype of the
    differentiated arguments, as in ``check_grad``: a float32 gradient is rounded to
    float32, so its differences need float32's larger step."""
    __tracebackhide__ = True
    import adjit
    _require_compiled_primal("check_hvp", f, _primal(f), args)
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for k in nums:  # (a tangent is drawn for each: say what adjit.hvp would say)
        if isinstance(k, int) and -len(args) <= k < len(args) and not _hvp_argument(args[k]):
            raise adjit.ArgumentError(
                f"check_hvp({_name(f)}): argnums includes argument {k}, of type "
                f"{_describe(args[k])}; only float scalars, float arrays and flat tuples "
                "of these are differentiable")
    rng = np.random.default_rng(seed)
    # (scaled per argument; a tuple's per item)
    vs = [tuple(_scaled_direction(rng, a) for a in args[k]) if isinstance(args[k], tuple)
          else _scaled_direction(rng, args[k]) for k in nums]
    depth = _current_depth()
    hv = adjit.hvp(f, argnums=argnums)(*args, *vs)
    if _current_depth() != depth:
        raise AssertionError(f"check_hvp({_name(f)}): tape depth changed across the call")
    grad = adjit.grad(f, argnums=argnums)
    dtype = np.dtype(np.float32 if _has_float32_leaf(tuple(args[k] for k in nums))
                     else np.float64)
    rtol, atol = _tolerances(dtype, rtol, atol)
    h = _rel_step(dtype, None)

    def moved(sign):
        new = list(_copy_args(args))
        for k, v in zip(nums, vs):
            new[k] = (tuple(_step(a, sign * h, d) for a, d in zip(args[k], v))
                      if isinstance(args[k], tuple) else _step(args[k], sign * h, v))
        g = grad(*new)
        return _leaves(g if isinstance(argnums, tuple) else (g,), nums)

    plus, minus = moved(1.0), moved(-1.0)
    blocks = _leaves(hv if isinstance(argnums, tuple) else (hv,), nums)
    for (k, got), (_, p), (_, m) in zip(blocks, plus, minus):
        fd = (p - m) / (2 * h)
        scale = max(1.0, float(np.max(np.abs(fd))))
        if got.shape != fd.shape or not np.all(np.abs(got - fd) <= atol + 1e-4 * scale
                                               + rtol * np.abs(fd)):
            raise AssertionError(f"check_hvp({_name(f)}): H v (argument {k}) disagrees "
                                 f"with differences of the gradient\n  adjit: {got!r}\n"
                                 f"  fd:    {fd!r}")
    return hv


def numerical_grad(f, *args, argnums=0, eps=None):
    """Central-difference gradient of scalar ``f`` with respect to ``args[argnums]``.

    Same conventions and result structure as ``adjit.grad`` (a tuple when ``argnums`` is a
    tuple). It only needs the primal, so it also works without adjit. Float scalars, float
    arrays and tuples of these are supported. Every array element costs two calls.
    """
    argnums_t, is_tuple = _normalise_argnums(argnums, len(args))
    scalar_primal = _scalar_output(_primal(f), _name(f))
    out = []
    for k in argnums_t:
        out.append(_fd_tree(scalar_primal, args, (k,), args[k], eps))
    return tuple(out) if is_tuple else out[0]
