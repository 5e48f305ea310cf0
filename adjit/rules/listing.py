"""The NumPy functions adjit has rules for, read from the rule tables themselves.

``numpy_functions()`` is what the README's list is generated from (and checked against by
``tests/rules/test_listing.py``), so the list cannot drift from the registry. Print it with
``python -m adjit.rules.listing``.
"""
from .primitive import PRIMITIVES
from .registry import _name


def _numpy_name(key):
    """``np.sin`` / ``np.linalg.det`` for a NumPy callable, ``x.sum`` for an array method,
    None for anything else (``math.sin``, operators, adjit's own helpers)."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return f"x.{key[1]}"
    module = getattr(key, "__module__", "") or ""
    name = getattr(key, "__name__", None)
    if name is None:
        return None
    if module.startswith("numpy"):
        return _name(key)
    if type(key).__name__ == "ufunc":  # NumPy ufuncs report no module
        return f"np.{name}"
    return None


def numpy_functions():
    """Sorted names of the NumPy functions and array methods that have a rule of any
    shape (differentiable or declared non-differentiable)."""
    keys = PRIMITIVES.keys()
    names = {_numpy_name(k) for k in keys}
    names.discard(None)
    return sorted(names, key=lambda n: (n.startswith("x."), n.lower()))


if __name__ == "__main__":
    found = numpy_functions()
    print(f"{len(found)} NumPy functions and array methods have rules:")
    print(", ".join(f"`{n}`" for n in found))
