"""adjit: JIT automatic differentiation for numba-compatible Python.

adjit captures Numba's typed SSA IR after type inference, rewrites it into derivative
programs (a forward pass and a reverse pass sharing a native tape) and compiles them through
Numba, so every derivative is itself a Numba dispatcher.
"""
from .errors import AdjitError, ArgumentError, UnsupportedError

__version__ = "0.1.0"

__all__ = ["AdjitError", "ArgumentError", "UnsupportedError"]
