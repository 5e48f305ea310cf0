"""Finite differences and the comparisons behind ``adjit.testing``'s checks.

Private to ``adjit.testing``: evaluating the primal, walking argument trees, central
differences (element by element, or along random directions for a dot-product test),
tolerances and the comparison that accounts for finite-difference noise.
"""
import types
import weakref

import numpy as np
from numba.typed import List as TypedList

from .errors import ArgumentError

#: Arrays with at most this many elements are checked element by element.
ELEMENTWISE_LIMIT = 64

_DEFAULT_TOL = {
    np.dtype(np.float64): (1e-5, 1e-7),
    np.dtype(np.float32): (5e-3, 1e-4),
}
_NOISE_FACTOR = 32.0

_primal_cache = weakref.WeakKeyDictionary()


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
        raise ArgumentError(
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
        raise ArgumentError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    for a in t:
        if not -nargs <= a < nargs:
            raise ArgumentError(f"argnums={argnums!r} is out of range for {nargs} arguments")
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
    return _rebuilt(args, args[:i] + (new,) + args[i + 1:])


def _rebuilt(like, items):
    """``items`` as a tuple of ``like``'s own type: a namedtuple stays one (a function
    reading ``p.alpha`` cannot take a plain tuple)."""
    return type(like)(*items) if hasattr(like, "_fields") else tuple(items)


def _copy_args(args):
    return tuple(_copy(a) for a in args)


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy(order="K")
    if isinstance(a, tuple):
        return _rebuilt(a, [_copy(e) for e in a])
    if isinstance(a, TypedList):  # a new list of copies: the snapshot must not be the argument
        copied = a.copy()
        for k in range(len(copied)):
            copied[k] = _copy(copied[k])
        return copied
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
    if isinstance(a, TypedList) or isinstance(b, TypedList):
        return (isinstance(a, TypedList) and isinstance(b, TypedList) and len(a) == len(b)
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
        return _rebuilt(x, [_fd_tree(fn, args, path + (i,), e, eps) for i, e in enumerate(x)])
    raise ArgumentError(f"{_path_str(path)} is not differentiable ({_describe(x)})")


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
    """<g, v> against the central difference of f along a random direction v.

    A direction that fails is tried again with steps 16 and 256 times shorter, and passes
    if one of them agrees. A kink crossed by the step (a payoff ``max(s - K, 0)`` in a
    Monte Carlo price) makes the difference wrong by an amount that shrinks with the
    step; a wrong gradient does not, and fails at every step."""
    __tracebackhide__ = True  # pytest: report the failure at the caller
    dtype = x.dtype
    rel = _rel_step(dtype, eps)
    xmax = float(np.max(np.abs(x))) if x.size else 0.0
    for _ in range(ndirs):
        v = rng.standard_normal(x.shape)
        h = rel * max(1.0, xmax) / float(np.max(np.abs(v)))
        first = None
        for shorter in (1.0, 16.0, 256.0):
            error = _directional_error(fn, args, path, x, g, v, h / shorter, rtol, atol)
            if not error:
                break
            first = first or error
        else:
            raise AssertionError(f"{where} fails the random-direction dot-product test"
                                 f"{first}")


def _directional_error(fn, args, path, x, g, v, h, rtol, atol):
    """How ``<g, v>`` and the central difference of step ``h`` along ``v`` disagree, or
    an empty string if they agree within the tolerance."""
    dtype = x.dtype
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
    if abs(lhs - rhs) <= tol:
        return ""
    return (f"\n  <adjit gradient, v>:       {lhs!r}\n"
            f"  (f(x+hv) - f(x-hv)) / 2h:  {rhs!r}\n"
            f"  abs error {abs(lhs - rhs):.3e} > tolerance {tol:.3e} "
            f"(rtol={rtol}, atol={atol}, h={h:.3e})")
