"""Primitives declared non-differentiable, explicitly: their results carry no adjoint.

Declaring them is what lets the transform reject everything else: a primitive that is
neither here nor in a rule file raises ``UnsupportedError`` when its input is active.
"""
import math
import operator

import numpy as np
from numba.core import types
from numba.core.inline_closurecall import length_of_iterator
from numba.stencils.stencil import raise_if_incompatible_array_sizes

from .core import nondiff

nondiff(
    # comparisons and truth
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.truth, operator.is_, operator.is_not, bool,
    # integer-valued results
    int, len, range, round, math.floor, math.ceil, math.trunc, math.isnan, math.isinf,
    math.isfinite, np.floor, np.ceil, np.trunc, np.rint, np.round, np.sign,
    np.isnan, np.isinf, np.isfinite, np.isclose, math.isclose, np.int64, np.int32, np.intp,
    np.argmax, np.argmin, np.shape, np.size,
    length_of_iterator,  # (the size of an array comprehension)
    # index-valued functions of arrays
    np.argsort, (types.Array, "argsort"), "array.argsort", (types.Array, "argmax"),
    (types.Array, "argmin"), "array.nonzero", np.flatnonzero, np.nonzero, np.searchsorted,
    np.digitize, np.count_nonzero, np.any, np.all, (types.Array, "any"),
    (types.Array, "all"), np.allclose, np.array_equal,
    # a shape check in the loops Numba builds for a @stencil kernel
    raise_if_incompatible_array_sizes,
    # bitwise operators (integers and bools only)
    operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
    operator.rshift,
)
