"""Remember how Numba types scalar calls while adjit's own pipelines run.

Numba resolves every ``a + b`` anew: ``BaseFunction.get_call_type`` tries each template
registered for ``operator.add`` in turn, NumPy's ufunc-loop search among them, and the
lowering of the same binop resolves it a second time. Derivative code is made mostly of
such scalar operations (adjoint accumulations, tangent sums), so this search was a fifth
of the compile time of a scalar gradient and of ``large_single_block``'s.

While one of adjit's pipelines runs (``memoised_scalar_typing``), a successful resolution
of a Numba function type for plain scalar arguments (no literals, no keywords) is
remembered and reused. It is safe to reuse because:

- a function type's identity is its templates (``BaseFunction.key``): registering a new
  overload makes a new type, so a new entry;
- the typing context is part of the key;
- literal arguments, keyword arguments, failures and everything that is not a
  ``Float``, ``Integer`` or ``Boolean`` argument go through Numba's own search, unchanged.

Outside adjit's pipelines (the user's own ``@njit`` compiles) Numba runs as it always
does.
"""
import threading
from contextlib import contextmanager

from numba.core import types
from numba.core.types.functions import BaseFunction

#: the argument type classes (exactly these: literal types are subclasses) whose
#: resolutions are remembered
SCALAR_TYPES = (types.Float, types.Integer, types.Boolean)

_numba_get_call_type = BaseFunction.get_call_type
_memo = {}
_active = threading.local()


def _memoised_get_call_type(self, context, args, kws):
    """``BaseFunction.get_call_type``, remembered for scalar arguments inside adjit's
    pipelines."""
    if kws or not getattr(_active, "depth", 0) or not all(
            type(a) in SCALAR_TYPES for a in args):
        return _numba_get_call_type(self, context, args, kws)
    key = (self, context, tuple(args))
    sig = _memo.get(key)
    if sig is None:
        sig = _numba_get_call_type(self, context, args, kws)
        if sig is not None:
            _memo[key] = sig
    return sig


BaseFunction.get_call_type = _memoised_get_call_type


@contextmanager
def memoised_scalar_typing():
    """Within this block (on this thread), scalar resolutions are remembered."""
    _active.depth = getattr(_active, "depth", 0) + 1
    try:
        yield
    finally:
        _active.depth -= 1


def memo_size():
    """How many scalar resolutions are remembered (for tests)."""
    return len(_memo)


class MemoisedScalarTyping:
    """Mixin for a Numba ``CompilerBase``: its passes run under
    ``memoised_scalar_typing``."""

    def _compile_core(self):
        with memoised_scalar_typing():
            return super()._compile_core()
