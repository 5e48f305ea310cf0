"""Differentiation rules, one module per domain. Importing this package registers them."""
from . import (arithmetic, array_ops, arrays, axis_reductions, builtins, composites, linalg, lists,  # noqa: F401
               lstsq, nondiff, random_draws, scalar_math, squeeze, statistics,
               array_helpers)  # (registration)
from .core import NONDIFF, lookup  # noqa: F401
