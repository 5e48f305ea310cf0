"""adjit: JIT automatic differentiation for numba-compatible Python.

adjit captures Numba's typed SSA IR after type inference, rewrites it into derivative
programs (a forward pass and a reverse pass sharing a native tape) and compiles them through
Numba, so every derivative is itself a Numba dispatcher.
"""
from . import rules  # noqa: F401  (registers the built-in rules)
from .api import clear_cache, grad, hessian, hvp, jvp, value_and_grad, vjp
from .inspection import show
from .errors import AdjitError, ArgumentError, CacheWarning, UnsupportedError
from .runtime import runtime_stats
from .compile.stamps import environment_stamp as _environment_stamp

# the stamp of adjit's sources, taken now, when they are the code just imported: taken at
# the first cache use, a source edited since the import (a checkout switched, a package
# upgraded under a running process) labelled kernels compiled from the old code with the
# new stamp, and later processes loaded them as current
_environment_stamp()

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hvp", "hessian", "show", "runtime_stats",
           "clear_cache", "AdjitError", "ArgumentError", "CacheWarning", "UnsupportedError"]


def __getattr__(name):
    """``adjit.testing`` after a plain ``import adjit`` (as the README's snippets use it),
    imported on first use: most programs never need it."""
    if name == "testing":
        import importlib
        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'adjit' has no attribute {name!r}")
