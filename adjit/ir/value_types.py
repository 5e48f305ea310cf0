"""What kind of value a Numba type describes, as differentiation sees it: a float, a float
array (the values that carry derivatives), or another scalar. Every stage asks these, so
they sit at the bottom layer."""
from numba.core import types


def is_float(typ):
    """A float scalar."""
    return isinstance(typ, types.Float)


def is_float_array(typ):
    """An array of floats."""
    return isinstance(typ, types.Array) and isinstance(typ.dtype, types.Float)


def is_differentiable(typ):
    """A value that can carry a derivative: a float or a float array."""
    return is_float(typ) or is_float_array(typ)


def is_scalar(typ):
    """A number or a boolean."""
    return isinstance(typ, (types.Float, types.Integer, types.Boolean))
