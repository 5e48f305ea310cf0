"""Which arguments a NumPy module function writes, for the write analysis
(``capture/effects.call_writes``): NumPy functions only read their inputs, apart from an ``out``
argument and a few functions that fill or permute their first argument in place."""
import inspect

import numpy as np
from numba.core import types


# NumPy functions that write into their first argument (all others only read theirs,
# apart from an ``out`` argument)
_NUMPY_WRITERS = (np.fill_diagonal, np.copyto, np.put, np.place, np.putmask,
                  np.random.shuffle, np.nan_to_num)  # (nan_to_num: with copy=False)


def _out_position(func):
    """``(writes argument 0, position of its ``out`` parameter or None)`` of a NumPy
    module function, or None when ``func`` is not one whose parameters can be read."""
    module = getattr(func, "__module__", None) or ""
    if not module.startswith("numpy") or isinstance(func, np.ufunc):
        return None
    try:
        if func in _NUMPY_WRITERS:
            return True, None
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return None
    return False, params.index("out") if "out" in params else None


def numpy_writes(fn, key, expr):
    """The array arguments a NumPy module function may write: its ``out`` argument
    (positional or keyword), argument 0 of a known writer, else none; None when ``key``
    is not a NumPy function whose parameters can be read."""
    found = _out_position(key)
    if found is None:
        return None
    writer, out_at = found
    if writer:
        return [a for a in expr.args[:1] if isinstance(fn.typeof(a), types.Array)]
    out = [var for name, var in expr.kws if name == "out"]
    if out_at is not None and out_at < len(expr.args):
        out.append(expr.args[out_at])
    return [a for a in out if isinstance(fn.typeof(a), types.Array)]


def pure_numpy_call(func, nargs, has_keywords):
    """Whether calling NumPy's ``func`` with ``nargs`` positional arguments only computes
    its result: a ufunc without an ``out`` argument, or a module function that is not a
    writer, not random (its generator state changes) and is not passed ``out``. Dead-code
    removal may drop such a call when nothing reads its result."""
    if has_keywords:
        return False
    if isinstance(func, np.ufunc):
        return nargs == func.nin
    if (getattr(func, "__module__", None) or "").startswith("numpy.random"):
        return False
    found = _out_position(func)
    return found is not None and not found[0] and (found[1] is None or found[1] >= nargs)
