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
  follows: ``<grad, v>`` against ``(f(x + h v) - f(x - h v)) / (2h)``.
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
import types
import weakref

import numpy as np

__all__ = ["check_grad", "check_vjp", "check_jvp", "check_hvp", "numerical_grad",
           "ELEMENTWISE_LIMIT"]

#: Arrays with at most this many elements are checked element by element.
ELEMENTWISE_LIMIT = 64

_DEFAULT_TOL = {
    np.dtype(np.float64): (1e-5, 1e-7),
    np.dtype(np.float32): (5e-3, 1e-4),
}
_NOISE_FACTOR = 32.0

_primal_cache = weakref.WeakKeyDictionary()


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
    scalar_primal = _scalar_output(primal, _name(f))
    scalar_primal(*_copy_args(args))     # fails early, with a clear message, on non-scalar output

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
    y0 = primal(*_copy_args(args))
    rng = np.random.default_rng(seed)
    if ybar is None:
        if isinstance(y0, np.ndarray):
            ybar = rng.standard_normal(y0.shape).astype(y0.dtype)
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

    The value must equal the primal's. Returns ``(value, tangent_out)``.
    """
    __tracebackhide__ = True
    import adjit
    primal = _scalar_output(_primal(f), _name(f))
    rng = np.random.default_rng(seed)
    slots = [k for k, a in enumerate(args) if _is_float_scalar(a) or _is_float_array(a)]
    tangents = [rng.standard_normal(np.shape(args[k])).astype(args[k].dtype)
                if _is_float_array(args[k]) else float(rng.standard_normal()) for k in slots]
    depth = _current_depth()
    value, tan = adjit.jvp(f)(*args, *tangents)
    if _current_depth() != depth:
        raise AssertionError(f"check_jvp({_name(f)}): tape depth changed across the call")
    dtype = np.dtype(np.float32) if _has_float32_leaf(args) else np.dtype(np.float64)
    if not _values_equal(value, primal(*_copy_args(args)), rtol=1e-6 if dtype == np.float32 else 1e-12):
        raise AssertionError(f"check_jvp({_name(f)}): value {value!r} differs from the primal")
    rtol, atol = _tolerances(dtype, rtol, atol)
    h = _rel_step(dtype, None) * max([1.0] + [float(np.max(np.abs(args[k]))) for k in slots])

    def moved(sign):
        new = list(_copy_args(args))
        for k, t in zip(slots, tangents):
            new[k] = (args[k] + sign * h * t).astype(args[k].dtype) \
                if _is_float_array(args[k]) else type(args[k])(args[k] + sign * h * t)
        return primal(*new)

    fd = (moved(1.0) - moved(-1.0)) / (2 * h)
    noise = _NOISE_FACTOR * np.finfo(dtype).eps * abs(primal(*_copy_args(args))) / (2 * h)
    if not _close(float(tan), fd, rtol, atol, noise):
        raise AssertionError(f"check_jvp({_name(f)}): tangent disagrees with central "
                             f"differences\n  adjit: {float(tan)!r}\n  fd:    {fd!r}")
    return value, tan


def check_hvp(f, *args, argnums=0, seed=0, rtol=1e-5, atol=1e-7):
    """Check ``adjit.hvp(f, argnums)(*args, v)`` (forward-over-reverse) with a random
    ``v`` against central differences of ``adjit.grad(f, argnums)`` along ``v`` (check the
    gradient itself with ``check_grad``). ``argnums`` is an int or a tuple (then one
    random tangent per listed argument and the joint Hessian blocks, as ``adjit.hvp``);
    returns H v."""
    __tracebackhide__ = True
    import adjit
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    rng = np.random.default_rng(seed)
    vs = [rng.standard_normal(np.shape(args[k])).astype(args[k].dtype)
          if _is_float_array(args[k]) else float(rng.standard_normal()) for k in nums]
    depth = _current_depth()
    hv = adjit.hvp(f, argnums=argnums)(*args, *vs)
    if _current_depth() != depth:
        raise AssertionError(f"check_hvp({_name(f)}): tape depth changed across the call")
    grad = adjit.grad(f, argnums=argnums)
    h = _rel_step(np.dtype(np.float64), None) * max(
        1.0, max(float(np.max(np.abs(args[k]))) for k in nums))

    def moved(sign):
        new = list(_copy_args(args))
        for k, v in zip(nums, vs):
            new[k] = args[k] + sign * h * v
        g = grad(*new)
        return [np.asarray(b, dtype=np.float64) for b in (g if isinstance(argnums, tuple)
                                                           else (g,))]

    plus, minus = moved(1.0), moved(-1.0)
    blocks = hv if isinstance(argnums, tuple) else (hv,)
    for k, got, p, m in zip(nums, blocks, plus, minus):
        fd = (p - m) / (2 * h)
        got = np.asarray(got, dtype=np.float64)
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


# --------------------------------------------------------------------------------------
# Primal evaluation
# --------------------------------------------------------------------------------------

def _primal(f):
    """The callable that evaluates ``f``: ``numba.njit(f)`` for a plain function (cached)."""
    if isinstance(f, types.FunctionType):
        try:
            return _primal_cache[f]
        except KeyError:
            import numba
            disp = numba.njit(f)
            _primal_cache[f] = disp
            return disp
    return f


def _name(f):
    py = getattr(f, "py_func", f)
    return getattr(py, "__qualname__", None) or getattr(py, "__name__", None) or repr(f)


def _scalar_output(primal, name):
    def call(*a):
        return _as_float(primal(*a), name)
    return call


def _as_float(y, name):
    if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating)):
        if isinstance(y, np.ndarray) and y.ndim == 0:
            return float(y)
        raise TypeError(
            f"{name} must return a float scalar to be checked this way, got {_describe(y)}")
    return float(y)


def _current_depth():
    from adjit import runtime
    return runtime.current_depth()


# --------------------------------------------------------------------------------------
# Argument trees: float scalars, float arrays, tuples of these
# --------------------------------------------------------------------------------------

def _normalise_argnums(argnums, nargs):
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool):
        t, is_tuple = (int(argnums),), False
    elif isinstance(argnums, tuple) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in argnums):
        t, is_tuple = tuple(int(a) for a in argnums), True
    else:
        raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    for a in t:
        if not -nargs <= a < nargs:
            raise ValueError(f"argnums={argnums!r} is out of range for {nargs} arguments")
    return tuple(a % nargs for a in t), is_tuple


def _is_float_scalar(x):
    return isinstance(x, (float, np.floating)) and not isinstance(x, bool)


def _is_int_scalar(x):
    return isinstance(x, (int, np.integer, bool, np.bool_))


def _is_scalar_number(x):
    return isinstance(x, (int, float, np.integer, np.floating, bool, np.bool_))


def _is_float_array(x):
    return isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating)


def _has_float_leaf(x):
    if _is_float_scalar(x) or _is_float_array(x):
        return True
    if isinstance(x, tuple):
        return any(_has_float_leaf(e) for e in x)
    return False


def _scalar_dtype(x):
    return np.dtype(x.dtype) if isinstance(x, np.generic) else np.dtype(np.float64)


def _replace(args, path, value):
    """``args`` (a tuple) with the element at ``path`` (a tuple of indices) replaced."""
    i = path[0]
    if len(path) == 1:
        new = value
    else:
        new = _replace(args[i], path[1:], value)
    return args[:i] + (new,) + args[i + 1:]


def _copy_args(args):
    return tuple(_copy(a) for a in args)


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy(order="K")
    if isinstance(a, tuple):
        return tuple(_copy(e) for e in a)
    return a


def _assert_args_unchanged(args, snapshot, who):
    __tracebackhide__ = True  # pytest: report the failure at the caller
    for k, (a, s) in enumerate(zip(args, snapshot)):
        if not _values_equal(a, s, exact=True):
            raise AssertionError(
                f"{who} modified argument {k}\n"
                f"  before: {s!r}\n  after:  {a!r}")


def _has_float32_leaf(x):
    if isinstance(x, tuple):
        return any(_has_float32_leaf(e) for e in x)
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype == np.float32


def _values_equal(a, b, exact=False, rtol=1e-12):
    """Equal within ``rtol`` (NaN equals NaN); bitwise-equal values when ``exact``."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_values_equal(x, y, exact, rtol) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if exact:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        return bool(np.allclose(a, b, rtol=rtol, atol=0.0, equal_nan=True))
    try:
        if a == b:
            return True
        if exact:
            return bool(np.isnan(a) and np.isnan(b))
        return bool(abs(float(a) - float(b)) <= rtol * max(abs(float(a)), abs(float(b)))
                    or (np.isnan(a) and np.isnan(b)))
    except (TypeError, ValueError):
        return False


def _describe(x):
    if isinstance(x, np.ndarray):
        return f"ndarray(shape={x.shape}, dtype={x.dtype})"
    if isinstance(x, tuple):
        return "tuple(" + ", ".join(_describe(e) for e in x) + ")"
    return f"{type(x).__name__} {x!r}"


def _path_str(path):
    s = f"argument {path[0]}"
    for i in path[1:]:
        s += f"[{i}]"
    return s


# --------------------------------------------------------------------------------------
# Finite differences
# --------------------------------------------------------------------------------------

def _tolerances(dtype, rtol, atol):
    r, a = _DEFAULT_TOL.get(np.dtype(dtype), _DEFAULT_TOL[np.dtype(np.float32)])
    return (r if rtol is None else rtol), (a if atol is None else atol)


def _rel_step(dtype, eps):
    return float(np.finfo(dtype).eps) ** (1.0 / 3.0) if eps is None else float(eps)


def _perturbed_scalar(x, delta):
    """x + delta rounded to x's type (python float stays python float)."""
    if isinstance(x, np.floating):
        return type(x)(float(x) + delta)
    return float(x) + delta


def _fd_scalar(fn, args, path, x, eps):
    """Central difference along a scalar leaf. Returns (fd, noise_estimate)."""
    dtype = _scalar_dtype(x)
    h = _rel_step(dtype, eps) * max(1.0, abs(float(x)))
    xp, xm = _perturbed_scalar(x, h), _perturbed_scalar(x, -h)
    step = float(xp) - float(xm)
    fp = fn(*_replace(_copy_args(args), path, xp))
    fm = fn(*_replace(_copy_args(args), path, xm))
    noise = _NOISE_FACTOR * float(np.finfo(dtype).eps) * max(abs(fp), abs(fm)) / step
    return (fp - fm) / step, noise


def _fd_array_elementwise(fn, args, path, x, eps):
    """Central differences element by element. Returns (fd_array, noise_array)."""
    dtype = x.dtype
    fd = np.empty(x.shape, dtype=np.float64)
    noise = np.empty(x.shape, dtype=np.float64)
    rel = _rel_step(dtype, eps)
    for idx in np.ndindex(x.shape):
        xi = float(x[idx])
        h = rel * max(1.0, abs(xi))
        xp = x.copy(order="K")
        xm = x.copy(order="K")
        xp[idx] = xi + h
        xm[idx] = xi - h
        step = float(xp[idx]) - float(xm[idx])
        fp = fn(*_replace(_copy_args(args), path, xp))
        fm = fn(*_replace(_copy_args(args), path, xm))
        fd[idx] = (fp - fm) / step
        noise[idx] = _NOISE_FACTOR * float(np.finfo(dtype).eps) * max(abs(fp), abs(fm)) / step
    return fd, noise


def _fd_tree(fn, args, path, x, eps):
    if _is_float_scalar(x):
        return _fd_scalar(fn, args, path, x, eps)[0]
    if _is_float_array(x):
        return _fd_array_elementwise(fn, args, path, x, eps)[0].astype(x.dtype)
    if isinstance(x, tuple):
        return tuple(_fd_tree(fn, args, path + (i,), e, eps) for i, e in enumerate(x))
    raise TypeError(f"{_path_str(path)} is not differentiable ({_describe(x)})")


def _close(ad, fd, rtol, atol, noise):
    ad = np.asarray(ad, dtype=np.float64)
    fd = np.asarray(fd, dtype=np.float64)
    tol = atol + rtol * np.maximum(np.abs(ad), np.abs(fd)) + noise
    # written so that NaN anywhere fails
    return np.abs(ad - fd) <= tol


def _check_leaf_tree(fn, args, path, x, g, eps, rtol, atol, rng, prefix):
    """Check the gradient ``g`` of the (sub)argument ``x`` found at ``path`` in ``args``."""
    __tracebackhide__ = True  # pytest: report the failure at the caller
    where = f"{prefix} of {_path_str(path)}"
    if isinstance(x, tuple):
        if not isinstance(g, tuple) or len(g) != len(x):
            raise AssertionError(f"{where}: expected a tuple of {len(x)} entries like the "
                                 f"argument, got {_describe(g)}")
        for i, (xe, ge) in enumerate(zip(x, g)):
            if _has_float_leaf(xe):
                _check_leaf_tree(fn, args, path + (i,), xe, ge, eps, rtol, atol, rng, prefix)
        return

    if _is_float_scalar(x):
        if isinstance(g, (bool, np.bool_)) or not isinstance(g, (float, np.floating)):
            raise AssertionError(f"{where}: expected a float scalar like the argument "
                                 f"({_describe(x)}), got {_describe(g)}")
        r, a = _tolerances(_scalar_dtype(x), rtol, atol)
        fd, noise = _fd_scalar(fn, args, path, x, eps)
        if not _close(g, fd, r, a, noise):
            raise AssertionError(
                f"{where} at x={float(x)!r} disagrees with central differences\n"
                f"  adjit:              {float(g)!r}\n"
                f"  finite differences: {fd!r}\n"
                f"  abs error {abs(float(g) - fd):.3e} > tolerance "
                f"{a + r * max(abs(float(g)), abs(fd)) + noise:.3e} (rtol={r}, atol={a})")
        return

    if _is_float_array(x):
        if not isinstance(g, np.ndarray):
            raise AssertionError(f"{where}: expected an ndarray like the argument "
                                 f"({_describe(x)}), got {_describe(g)}")
        if g.shape != x.shape or g.dtype != x.dtype:
            raise AssertionError(f"{where}: expected shape {x.shape} and dtype {x.dtype} like "
                                 f"the argument, got {_describe(g)}")
        if x.size and np.shares_memory(g, x):
            raise AssertionError(f"{where}: the gradient array shares memory with the argument")
        if x.size == 0:
            return
        r, a = _tolerances(x.dtype, rtol, atol)
        if x.size <= ELEMENTWISE_LIMIT:
            fd, noise = _fd_array_elementwise(fn, args, path, x, eps)
            ok = _close(g, fd, r, a, noise)
            if not ok.all():
                bad = [idx for idx in np.ndindex(x.shape) if not ok[idx]]
                lines = "\n".join(
                    f"    [{', '.join(map(str, idx))}]  adjit {float(g[idx])!r}  "
                    f"fd {float(fd[idx])!r}" for idx in bad[:10])
                more = f"\n    ... and {len(bad) - 10} more" if len(bad) > 10 else ""
                with np.printoptions(precision=8, threshold=200):
                    raise AssertionError(
                        f"{where} disagrees with central differences at {len(bad)} of "
                        f"{x.size} elements (rtol={r}, atol={a}):\n{lines}{more}\n"
                        f"  adjit:\n{g!r}\n  finite differences:\n{fd!r}")
        _dot_product_test(fn, args, path, x, g, eps, r, a, rng, where)
        return

    raise AssertionError(f"{where}: argument is not differentiable ({_describe(x)})")


def _dot_product_test(fn, args, path, x, g, eps, rtol, atol, rng, where, ndirs=2):
    """<g, v> against the central difference of f along a random direction v."""
    __tracebackhide__ = True  # pytest: report the failure at the caller
    dtype = x.dtype
    rel = _rel_step(dtype, eps)
    xmax = float(np.max(np.abs(x))) if x.size else 0.0
    for _ in range(ndirs):
        v = rng.standard_normal(x.shape)
        h = rel * max(1.0, xmax) / float(np.max(np.abs(v)))
        xp = x.copy(order="K")
        xm = x.copy(order="K")
        xp[...] = x + h * v
        xm[...] = x - h * v
        dx = xp.astype(np.float64) - xm.astype(np.float64)   # what was actually taken
        fp = fn(*_replace(_copy_args(args), path, xp))
        fm = fn(*_replace(_copy_args(args), path, xm))
        step = 2.0 * h
        lhs = float(np.sum(np.asarray(g, dtype=np.float64) * dx)) / step
        rhs = (fp - fm) / step
        mag = float(np.sum(np.abs(np.asarray(g, dtype=np.float64) * dx))) / step
        noise = _NOISE_FACTOR * float(np.finfo(dtype).eps) * max(abs(fp), abs(fm)) / step
        tol = atol + rtol * max(abs(lhs), abs(rhs), mag) + noise
        if not abs(lhs - rhs) <= tol:
            raise AssertionError(
                f"{where} fails the random-direction dot-product test\n"
                f"  <adjit gradient, v>:       {lhs!r}\n"
                f"  (f(x+hv) - f(x-hv)) / 2h:  {rhs!r}\n"
                f"  abs error {abs(lhs - rhs):.3e} > tolerance {tol:.3e} "
                f"(rtol={rtol}, atol={atol}, h={h:.3e})")
