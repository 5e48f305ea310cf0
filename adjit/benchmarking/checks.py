"""Correctness checks run before anything is timed.

A gradient is compared against a hand-written gradient that has itself passed the
finite-difference check, or else against central finite differences of the primal along a
few random directions (a fourth-order stencil, tried at two step sizes so that a kink or
roundoff at one step does not condemn a right answer).
"""
import numpy as np

GRAD_RTOL = 1e-6      # adjit vs a verified hand-written gradient (norm-wise, per argument)
FD_RTOL = 1e-5        # directional derivative vs finite differences
HVP_RTOL = 1e-4       # Hessian-vector product vs finite differences of a gradient


class CheckFailed(Exception):
    """A derivative disagrees with its reference; the message says how."""


def is_float_value(v):
    """True for the values adjit differentiates: float scalars and float arrays."""
    if isinstance(v, np.ndarray):
        return v.dtype.kind == "f"
    return isinstance(v, (float, np.floating)) and not isinstance(v, bool)


def float_arg_indices(inputs):
    """Positions of the differentiable (float) arguments of an input tuple."""
    return tuple(i for i, v in enumerate(inputs) if is_float_value(v))


def random_like(v, rng):
    """A random normal value with the type and shape of ``v``."""
    if isinstance(v, np.ndarray):
        return rng.standard_normal(v.shape).astype(v.dtype)
    return float(rng.standard_normal())


def _shift(inputs, dirs, t):
    """inputs with ``t * dirs[i]`` added to argument i for every i in ``dirs``."""
    out = list(inputs)
    for i, d in dirs.items():
        out[i] = inputs[i] + t * d
    return tuple(out)


def _stencil(fn, inputs, dirs, h):
    """Fourth-order central difference of ``fn`` at ``inputs`` along ``dirs`` with step h."""
    fp2, fp1 = fn(*_shift(inputs, dirs, 2 * h)), fn(*_shift(inputs, dirs, h))
    fm1, fm2 = fn(*_shift(inputs, dirs, -h)), fn(*_shift(inputs, dirs, -2 * h))
    return _lincomb([(-1.0, fp2), (8.0, fp1), (-8.0, fm1), (1.0, fm2)], 1.0 / (12.0 * h))


def _lincomb(terms, scale):
    """scale * sum(c * v) for scalars, arrays or (nested) tuples of them."""
    first = terms[0][1]
    if isinstance(first, tuple):
        return tuple(_lincomb([(c, v[k]) for c, v in terms], scale) for k in range(len(first)))
    acc = sum(c * np.asarray(v, dtype=np.float64) for c, v in terms) * scale
    return float(acc) if np.ndim(acc) == 0 else acc


def _step(inputs, dirs):
    """Base finite-difference step, scaled by the size of the perturbed arguments."""
    scale = max([1.0] + [float(np.max(np.abs(inputs[i]))) if np.size(inputs[i]) else 1.0
                         for i in dirs])
    return 1e-4 * scale


def _dot(a, b):
    """Euclidean inner product of two scalars or arrays."""
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def as_tuple(out, argnums):
    """A gradient output as a tuple aligned with the argnums tuple."""
    return tuple(out) if isinstance(argnums, (tuple, list)) else (out,)


def check_structure(out, inputs, argnums):
    """Raise CheckFailed unless ``out`` has one value per argnum with that argument's shape."""
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    if isinstance(argnums, (tuple, list)) and not isinstance(out, tuple):
        raise CheckFailed(f"expected a tuple of {len(nums)} gradients, got {type(out).__name__}")
    outs = as_tuple(out, argnums)
    if len(outs) != len(nums):
        raise CheckFailed(f"expected {len(nums)} gradients, got {len(outs)}")
    for k, o in zip(nums, outs):
        if np.shape(o) != np.shape(inputs[k]):
            raise CheckFailed(f"gradient of argument {k} has shape {np.shape(o)}, "
                              f"argument has shape {np.shape(inputs[k])}")


def _close(a, b, rtol, atol=0.0):
    """Norm-wise closeness |a - b| <= rtol * max(|a|, |b|) + atol, NaN-safe."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return False
    err = float(np.linalg.norm(a - b))
    return err <= rtol * max(float(np.linalg.norm(a)), float(np.linalg.norm(b))) + atol


def compare_grads(out, ref, argnums, rtol=GRAD_RTOL):
    """Raise CheckFailed unless gradient ``out`` matches reference gradient ``ref``."""
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    for k, a, b in zip(nums, as_tuple(out, argnums), as_tuple(ref, argnums)):
        if not _close(a, b, rtol, atol=1e-12):
            err = float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))
            raise CheckFailed(f"gradient of argument {k} differs from the hand-written one "
                              f"(|diff| = {err:.3g}, |ref| = {float(np.linalg.norm(b)):.3g})")


def check_directional(primal, inputs, dirs, deriv, what="gradient"):
    """Raise CheckFailed unless ``deriv`` matches the finite-difference slope along ``dirs``."""
    h = _step(inputs, dirs)
    f0 = abs(float(primal(*inputs)))
    fds = []
    for step in (h, h / 10.0):
        fd = _stencil(primal, inputs, dirs, step)
        atol = 100 * np.finfo(np.float64).eps * (f0 + 1.0) / step
        if _close(deriv, fd, FD_RTOL, atol):
            return
        fds.append(fd)
    raise CheckFailed(f"{what} disagrees with finite differences: directional derivative "
                      f"{deriv!r} vs {fds[0]!r} (h={h:.1e}) / {fds[1]!r} (h={h / 10:.1e})")


def check_grad_fd(primal, grad_out, inputs, argnums, rng, ndirs=3):
    """Check a gradient against finite differences along ``ndirs`` random unit directions."""
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    outs = as_tuple(grad_out, argnums)
    for _ in range(ndirs):
        dirs = {k: random_like(inputs[k], rng) for k in nums}
        norm = np.sqrt(sum(_dot(d, d) for d in dirs.values())) or 1.0
        dirs = {k: d / norm for k, d in dirs.items()}
        deriv = sum(_dot(g, dirs[k]) for k, g in zip(nums, outs))
        check_directional(primal, inputs, dirs, deriv)


def check_jvp(primal, jvp_out, inputs, tangents, grads=None):
    """Check a jvp result ``(value, df)`` against the primal, and ``df`` against
    ``sum_k <grad_k, v_k>`` when verified gradients of every float argument are given
    (exact even where finite differences are not, e.g. at ReLU kinks), else against
    finite differences."""
    if not (isinstance(jvp_out, tuple) and len(jvp_out) == 2):
        raise CheckFailed(f"jvp should return (value, tangent), got {type(jvp_out).__name__}")
    value, df = jvp_out
    ref = float(primal(*inputs))
    if not _close(value, ref, 1e-10, 1e-300):
        raise CheckFailed(f"jvp value {value!r} differs from the primal {ref!r}")
    idx = float_arg_indices(inputs)
    if grads is not None:
        expected = sum(float(np.sum(np.asarray(g) * np.asarray(v)))
                       for g, v in zip(grads, tangents))
        if not _close(float(df), expected, 1e-8, 1e-10):
            raise CheckFailed(f"jvp tangent {float(df)!r} differs from <grad, v> = "
                              f"{expected!r}")
        return
    check_directional(primal, inputs, dict(zip(idx, tangents)), float(df), what="jvp")


def check_hvp(grad_fn, hvp_out, inputs, tangents, argnums):
    """Check H v against finite differences of the verified gradient ``grad_fn`` along v."""
    idx = float_arg_indices(inputs)
    dirs = dict(zip(idx, tangents))
    ref = None
    h = _step(inputs, dirs)
    # smaller steps too: a piecewise function (relu) has kinks that a large step crosses
    for step in (h, h / 10.0, h / 100.0, h / 1000.0):
        ref = _stencil(grad_fn, inputs, dirs, step)
        try:
            check_structure(hvp_out, inputs, argnums)
            nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
            for k, a, b in zip(nums, as_tuple(hvp_out, argnums), as_tuple(ref, argnums)):
                if not _close(a, b, HVP_RTOL, 1e-8):
                    raise CheckFailed(f"hvp for argument {k} disagrees with finite "
                                      f"differences of the gradient")
            return
        except CheckFailed as exc:
            last = exc
    raise last
