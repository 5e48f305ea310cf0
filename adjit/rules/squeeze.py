"""``np.squeeze(x, axis=k)`` and ``x.squeeze(axis=k)``, which Numba 0.68 does not compile.

The result's rank must be known when Numba types the call, so only a constant integer
``axis`` is covered: ``np.squeeze(x)`` without one drops however many size-1 axes the
array has at run time, which no static type can say (it stays unsupported, by name).

The overload returns a view (``x[:, 0]`` for ``axis=1``), as NumPy does, after checking
that the axis has length 1 (NumPy's ``ValueError`` otherwise). A squeeze is registered as
a view (``defview``): its shadow and its tangent are the same squeeze of the parent's.
Ranks 2 and 3. Test cases: ``tests/rules/test_array_ops.py`` (``squeezes``).
"""
import numpy as np
from numba.core import types
from numba.extending import overload, overload_method

from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from .registry import defview


@internal_jit
def _check_unit(n):
    """NumPy's refusal of a squeezed axis whose length is not 1."""
    if n != 1:
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")


def _drop_axis0(a):
    return a[0]


def _drop_axis1(a):
    return a[:, 0]


def _drop_axis2(a):
    return a[:, :, 0]


#: ``(rank, axis)`` -> the ``@njit`` view dropping that axis
_VIEWS = {(nd, ax): internal_jit(drop) for nd in (2, 3)
          for ax, drop in enumerate((_drop_axis0, _drop_axis1, _drop_axis2)[:nd])}


def _view_of(a, axis):
    """``(view helper, axis in range(ndim))`` for array type ``a`` and a literal
    ``axis``, or None."""
    if not (isinstance(a, types.Array) and a.ndim in (2, 3)
            and isinstance(axis, types.IntegerLiteral)):
        return None
    ax = axis.literal_value + a.ndim if axis.literal_value < 0 else axis.literal_value
    view = _VIEWS.get((a.ndim, ax))
    return None if view is None else (view, ax)


@overload(np.squeeze, jit_options=INTERNAL_JIT_OPTIONS)
def squeeze_axis(a, axis=None):
    """``np.squeeze(a, axis=k)`` for a constant ``k``: Numba retries with the literal."""
    found = _view_of(a, axis)
    if found is None:
        return None
    view, k = found

    def impl(a, axis=None):
        _check_unit(a.shape[k])
        return view(a)
    return impl


@overload_method(types.Array, "squeeze", jit_options=INTERNAL_JIT_OPTIONS)
def squeeze_method(a, axis=None):
    """The method form, ``x.squeeze(axis=k)``."""
    return squeeze_axis(a, axis)


defview([np.squeeze], ndims=(2, 3), nargs=(2,))  # x.squeeze(axis=k): capture/methods.py
