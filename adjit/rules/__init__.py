"""Differentiation rules, one module per domain. Importing this package registers them."""
from . import arithmetic, array_ops, arrays, builtins, nondiff, scalar_math  # noqa: F401  (registration)
from .core import NONDIFF, lookup  # noqa: F401
