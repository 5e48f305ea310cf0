"""What kind of value a Numba type describes, as differentiation sees it: a float, a float
array (the values that carry derivatives), or another scalar. Every stage asks these, so
they sit at the bottom layer."""
import numpy as np
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


def copy_type(typ):
    """The type of ``np.copy`` of a value of type ``typ``: Numba keeps a Fortran-ordered
    array Fortran-ordered and makes other arrays C-contiguous (a snapshot the forward
    pass saves has this type)."""
    from numba.core.registry import cpu_target
    typing = cpu_target.typing_context
    fnty = typing.resolve_value_type(np.copy)
    return typing.resolve_function_type(fnty, (typ,), {}).return_type


def is_nested_tuple(typ):
    """A tuple with a tuple among its items (``((lo, hi), m)``)."""
    return isinstance(typ, types.BaseTuple) and any(
        isinstance(t, types.BaseTuple) for t in typ.types)


def container_words(typ):
    """A container type as a refusal names it to its user: ``a @jitclass Spring instance``
    or ``a nested tuple`` rather than Numba's type name (which prints an address)."""
    if isinstance(typ, types.ClassInstanceType):
        return f"a @jitclass {typ.classname} instance"
    if is_nested_tuple(typ):
        return "a nested tuple"
    if isinstance(typ, types.NumpyFlatType):
        return "an array's .flat"
    return f"a {typ}"


def value_words(typ):
    """A value read out of a container, as a refusal names it: ``a float64``, ``a
    tuple`` (not Numba's ``UniTuple(float64 x 2)``), a container in its own words."""
    if isinstance(typ, types.BaseTuple) and not is_nested_tuple(typ):
        return "a tuple"
    return container_words(typ)
