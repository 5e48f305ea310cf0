"""Lists of floats (reflected ``[]`` lists, comprehensions and typed ``List``): what a
statement does to one, asked the same way by activity, reverse mode and forward mode.

A list is a container: it carries activity once a differentiated float is put in it
(``L.append(v)``, ``L[i] = v``, ``[a, b]``), and the floats read out of it are active.
Both modes follow a list through its plain copies (comprehensions copy it several times)
to the statement that made it, its *root*; the root names its shadow (reverse) or its
tangent list (forward). Supported uses: making it, ``append``, reading and writing an
element by an integer index, ``len``, and ``for v in L`` (rewritten to an index loop by
``capture/list_iteration.py``). Anything else done to a list holding differentiated
values is refused by name.
"""
import operator

import numpy as np
from numba.core import ir, types

from .nodes import copy_root, single_definition, source_name

#: list methods that have derivatives (the others are refused on an active list)
DIFFERENTIABLE_METHODS = ("append",)

#: functions of a whole float list that have derivatives: ``sum(L)``, ``max(L)``,
#: ``min(L)``, ``np.array(L)``, ``np.asarray(L)`` (``transform/reverse/lists.py``)
REDUCTIONS = (sum, max, min, np.array, np.asarray)
ARRAY_MAKERS = (np.array, np.asarray)


def is_float_list(typ):
    """A reflected ``list(float64)`` or a typed ``ListType[float64]``."""
    if isinstance(typ, types.List):
        return isinstance(typ.dtype, types.Float)
    if isinstance(typ, types.ListType):
        return isinstance(typ.item_type, types.Float)
    return False


def list_root(blocks, name, definition=None):
    """The variable that made list ``name``, through plain copies."""
    return copy_root(definition or (lambda n: single_definition(blocks, n)), name,
                     casts=False)


def list_copies(blocks, name, root):
    """``name`` and the copies between it and its root (``list_root``), root included."""
    chain = [name]
    while name != root:
        name = single_definition(blocks, name).name
        chain.append(name)
    return chain


def list_method(fn, expr, definition=None):
    """``(receiver var, method name)`` when ``expr`` calls a method of a float list
    (``L.append(v)``), else None."""
    if not (isinstance(expr, ir.Expr) and expr.op == "call"):
        return None
    if not isinstance(fn.typeof(expr.func.name), types.BoundFunction):
        return None
    definition = definition or (lambda n: single_definition(fn.func_ir.blocks, n))
    bound = definition(expr.func.name)
    if not (isinstance(bound, ir.Expr) and bound.op == "getattr"
            and is_float_list(fn.typeof(bound.value.name))):
        return None
    return bound.value, bound.attr


def makes_list(fn, stmt, definition=None):
    """Whether ``stmt`` makes a new float list (``[...]``, ``[0.0] * n`` or
    ``new_list_call``)."""
    if not (isinstance(stmt, ir.Assign) and is_float_list(fn.typeof(stmt.target.name))):
        return False
    value = stmt.value
    if isinstance(value, ir.Expr) and value.op == "build_list":
        return True
    return repeated_list(fn, value) is not None or new_list_call(fn, value, definition)


def repeated_list(fn, expr):
    """``(list var, count var)`` when ``expr`` is ``L * n`` or ``n * L`` of a float list
    (``[0.0] * n``, a list made anew), else None."""
    if not (isinstance(expr, ir.Expr) and expr.op == "binop" and expr.fn is operator.mul):
        return None
    for lst, count in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
        if (is_float_list(fn.typeof(lst.name))
                and isinstance(types.unliteral(fn.typeof(count.name)), types.Integer)):
            return lst, count
    return None


def new_list_call(fn, expr, definition=None):
    """Whether ``expr`` calls ``List()``, ``List.empty_list(float64)`` or ``list()`` to
    make an empty float list. (A list returned by a helper is not made here: its
    elements have adjoints elsewhere.)"""
    if not (isinstance(expr, ir.Expr) and expr.op == "call") or expr.kws:
        return False
    sig = fn.calltypes.get(expr)
    if sig is None or not is_float_list(sig.return_type):
        return False
    from numba.typed import List
    definition = definition or (lambda n: single_definition(fn.func_ir.blocks, n))
    func = definition(expr.func.name)
    if isinstance(func, (ir.Global, ir.FreeVar)):
        return func.value in (List, list) and not expr.args
    if isinstance(func, ir.Expr) and func.op == "getattr" and func.attr == "empty_list":
        owner = definition(func.value.name)
        return isinstance(owner, (ir.Global, ir.FreeVar)) and owner.value is List
    return False


def list_reduction(fn, expr, definition=None):
    """``(function, list var)`` when ``expr`` applies one of ``REDUCTIONS`` to a float
    list (``np.array(L, dtype)`` included), else None."""
    if not (isinstance(expr, ir.Expr) and expr.op == "call") or expr.kws or not expr.args:
        return None
    definition = definition or (lambda n: single_definition(fn.func_ir.blocks, n))
    func = definition(expr.func.name)
    if not isinstance(func, (ir.Global, ir.FreeVar)):
        return None
    try:
        known = func.value in REDUCTIONS
    except TypeError:  # unhashable
        return None
    lst = expr.args[0]
    extra_ok = len(expr.args) == 1 or (func.value in ARRAY_MAKERS and len(expr.args) == 2)
    if known and extra_ok and is_float_list(fn.typeof(lst.name)):
        return func.value, lst
    return None


def display_name(name):
    """How to call list variable ``name`` in a message: the user's name, or "the list
    comprehension's list" for the temporaries Numba makes."""
    if name.startswith("$") or name.startswith("closure__locals"):
        return "the list built by a comprehension or literal"
    return f"'{source_name(name)}'"


#: what to do instead of a list of arrays (both modes' refusals)
LIST_OF_ARRAYS_ADVICE = ("adjit differentiates lists of floats: hold the arrays as the rows "
                         "of one array (np.empty((n, m)), A[i] = ...) or in a tuple")


def _is_list(typ):
    """Whether ``typ`` is a reflected or typed list."""
    return isinstance(typ, (types.List, types.ListType))


def nested_list_refusal(blocks, typeof, name, loc):
    """``(construct, loc, advice)`` refusing differentiated values in list ``name`` when
    it is an item of a list of lists (``v[n][j] = s * u``, a binomial tree's levels), in
    both modes; else None."""
    made = single_definition(blocks, copy_root(lambda n: single_definition(blocks, n), name))
    if not (isinstance(made, ir.Expr) and made.op in ("getitem", "static_getitem")
            and _is_list(typeof(made.value.name))):
        return None
    shown = (f"'{source_name(made.value.name)}[...]'" if name.startswith("$")
             else f"'{source_name(name)}'")
    return (f"a list inside a list ({shown}) holding differentiated values", loc,
            "adjit differentiates lists of floats only: use a 2-D array "
            "(np.zeros((n + 1, n + 1))) indexed [i, j], or one list per row")


def container_write_refusal(name, typ):
    """Both modes' words for writing a differentiated value into a container that is
    neither an array nor a float list (a typed Dict): ``(what, advice)``, naming the
    container as the user wrote it."""
    shown = "" if name.startswith("$") else f" '{source_name(name)}'"
    if isinstance(getattr(typ, "dtype", getattr(typ, "item_type", None)), types.Array):
        return (f"writing a differentiated array into the list of arrays{shown}",
                LIST_OF_ARRAYS_ADVICE)
    kind = "typed Dict" if "Dict" in type(typ).__name__ else str(typ)
    return (f"writing a differentiated value into the {kind}{shown}",
            "adjit differentiates values held in arrays and float lists: store them in "
            "an array indexed by position (np.empty(n)) instead")


def check_method(method, lst, loc, unsupported):
    """Both modes: refuse a list method other than ``DIFFERENTIABLE_METHODS`` called on
    a list holding differentiated values, naming it as the user wrote it."""
    if method not in DIFFERENTIABLE_METHODS:
        raise unsupported(f"'{source_name(lst.name)}.{method}(...)' on a list holding "
                          "differentiated values", loc,
                          "only append, element reads and element writes of such a "
                          "list are differentiable; fill an array (np.empty(n)) instead")


def list_arguments(fn, expr, carriers):
    """The float lists holding differentiated values (``carriers``) that a call passes
    as arguments other than a list method's receiver (``len(L)`` is the only such call
    with a derivative: none)."""
    return [a for a in expr.args
            if a.name in carriers and is_float_list(fn.typeof(a.name))]


def list_writes(fn, stmt, definition=None):
    """``(lists, values)``: the float lists ``stmt`` puts values into, and those values
    (``L.append(v)``, ``L.insert(i, v)``, ``L.extend(t)``, ``L[i] = v``)."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and is_float_list(
            fn.typeof(stmt.target.name)):
        return [stmt.target], [stmt.value]
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ir.Assign):
        found = list_method(fn, value, definition)
        if found is not None:
            return [found[0]], list(value.args)
    return [], []


def list_in_tuple_refusal(tuple_type, loc):
    """``(construct, loc, advice)`` refusing a tuple that holds a list of differentiated
    values (a helper's ``return path, payoff``), in both modes."""
    return (f"a tuple holding a list ({tuple_type})", loc,
            "derivatives travel in floats, arrays and tuples of them: return the list's "
            "values as an array (np.array(path)), or return only what the caller needs")
