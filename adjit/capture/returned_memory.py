"""Whether the arrays an ``@njit`` helper returns are memory of their own.

Reverse mode gives each array it meets a shadow. A helper's array result gets one of its
own, which is right only if no other name reaches the same memory: not an argument of
the call (``return y[1:]``, ``return a.ravel()``, ``return tail(a)``, ``return t[0]`` of
a tuple argument), and, for a tuple result, not another item (``return A, A[0]``).
Otherwise a write through either name would change values the other's shadow does not
follow. The question is asked the safe way round: an array is *fresh* only when the
helper provably made it (an allocation, arithmetic on arrays, a rule that returns a new
array, a fresh result of another helper); anything else may share memory. A helper that
returns the argument itself on every path (``return out``) is that argument
(``effects.returned_argument``), which reverse mode handles as one array.
"""
import numpy as np
from numba.core import ir, types
from numba.np.unsafe.ndarray import empty_inferred

from ..compile.caches import owned_cache
from ..ir.nodes import copy_root, defining_stmts, is_basic_index
from ..rules.arrays import lookup_allocation
from ..rules.classify import array_op_site, callee_key, callee_object, classify_call
from .effects import (array_parents, call_returns, defined_value, memory_root,
                      returned_argument_of_call, returned_item_arguments)
from .typed_ir import capture, py_function_of

_fresh = owned_cache("fresh_results")

#: NumPy functions and array methods whose result may be (a view of) their first
#: argument's memory; every other one Numba implements returns a new array
_VIEWING = {"ravel", "reshape", "asarray", "ascontiguousarray", "asfortranarray",
            "transpose", "swapaxes", "squeeze", "expand_dims", "atleast_1d", "atleast_2d",
            "atleast_3d", "flip", "fliplr", "flipud", "diagonal", "broadcast_to",
            "moveaxis", "view", "real", "imag", "T", "flat"}


def fresh_results(dispatcher, argtypes, _active=()):
    """``(whole, items)``: whether the helper's array result is fresh on every path, and
    for a tuple result, per item, whether it is fresh and shares no memory with another
    item (None when the result is not a tuple built in the helper). Cached."""
    key = (py_function_of(dispatcher), tuple(argtypes))
    if key in _fresh:
        return _fresh[key]
    if key in _active:
        return False, None
    try:
        fn = capture(dispatcher, argtypes)
    except Exception:  # cannot analyse the callee: it may share anything
        _fresh[key] = (False, None)
        return _fresh[key]
    found = _Freshness(fn, _active + (key,)).results()
    _fresh[key] = found
    return found


class _Freshness:
    """The freshness of one helper's values (see the module)."""

    def __init__(self, fn, active):
        self.fn, self.active = fn, active
        self.defs = defining_stmts(fn.func_ir.blocks)

    def definition(self, name):
        return defined_value(self.defs, name)

    def results(self):
        """``(whole, items)`` over every ``return``."""
        rets = [b.terminator.value.name for b in self.fn.func_ir.blocks.values()
                if isinstance(b.terminator, ir.Return)]
        tuples = [self.definition(copy_root(self.definition, r)) for r in rets]
        if tuples and all(isinstance(t, ir.Expr) and t.op == "build_tuple" for t in tuples):
            per_path = [self.items(t.items) for t in tuples]
            items = tuple(all(path[k] for path in per_path) for k in range(len(per_path[0])))
            return all(items), items
        return all(self.fresh(r) for r in rets), None

    def items(self, items):
        """Per item: fresh, and not the memory of another array item."""
        roots = [self.root(v.name) if isinstance(self.fn.typeof(v.name), types.Array)
                 else None for v in items]
        return [self.fresh(v.name) and (roots[k] is None or roots.count(roots[k]) == 1)
                for k, v in enumerate(items)]

    def root(self, name, depth=0):
        """The variable whose memory array ``name`` views (through views and aliases)."""
        base = memory_root(self.fn, self.definition, name) or copy_root(self.definition, name)
        parents = array_parents(self.fn, base, self.defs)
        if len(parents) == 1 and depth < 32 and not self.is_copy(self.definition(base)):
            return self.root(parents[0].name, depth + 1)
        return base

    def is_copy(self, value):
        """A fancy-indexed read (a new array), which ``array_parents`` lists as a parent."""
        return (isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem")
                and isinstance(self.fn.typeof(value.value.name), types.Array)
                and (self.fn.calltypes.get(value) is None
                     or not is_basic_index(self.fn.calltypes[value].args[1])))

    def fresh(self, name, seen=frozenset()):
        """Whether array ``name`` is memory the helper made (see the module)."""
        if not isinstance(self.fn.typeof(name), types.Array):
            return True
        root = memory_root(self.fn, self.definition, name) or copy_root(self.definition, name)
        if root in seen:
            return True  # around a loop: the other paths decide
        value = self.definition(root)
        seen = seen | {root}
        if not isinstance(value, ir.Expr):
            return False  # an argument, or a name with several definitions
        if value.op == "phi":
            return all(self.fresh(v.name, seen) for v in value.incoming_values
                       if isinstance(v, ir.Var))
        if value.op in ("binop", "unary"):
            return True  # arithmetic on arrays makes a new array
        if self.is_copy(value):
            return True
        if value.op in ("getitem", "static_getitem", "getattr", "exhaust_iter"):
            return self.fresh_part(value, seen)
        if value.op == "call":
            return self.fresh_call(root, value, seen)
        return False

    def fresh_part(self, value, seen):
        """A view (``a[1:]``, ``a.T``): fresh when its parent is; item ``k`` of a tuple:
        of a tuple built here or returned by a helper."""
        parent = value.value
        if isinstance(self.fn.typeof(parent.name), types.Array):
            return self.fresh(parent.name, seen)
        made = self.definition(copy_root(self.definition, parent.name))
        if isinstance(made, ir.Expr) and made.op == "exhaust_iter":
            made = self.definition(copy_root(self.definition, made.value.name))
        k = value.index if value.op == "static_getitem" else None
        if not isinstance(k, int) or not isinstance(made, ir.Expr):
            return False
        if made.op == "build_tuple":
            return self.fresh(made.items[k].name, seen)
        if made.op == "call":
            items = call_returns(self.fn, made, self.helper_results)
            return bool(items and items[1] and k < len(items[1]) and items[1][k])
        return False

    def sources(self, name, seen=frozenset()):
        """The parameters (indices) whose memory array ``name`` may share: empty when it
        is fresh, None when adjit cannot tell (a view of a tuple item, an unknown call)."""
        if not isinstance(self.fn.typeof(name), types.Array) or self.fresh(name):
            return frozenset()
        root = copy_root(self.definition, name)
        if root in seen:
            return frozenset()  # around a loop: the other paths decide
        value, seen = self.definition(root), seen | {root}
        if isinstance(value, ir.Arg):
            return frozenset({value.index})
        if isinstance(value, ir.Expr) and value.op == "phi":
            parts = [self.sources(v.name, seen) for v in value.incoming_values
                     if isinstance(v, ir.Var)]
            return None if None in parts else frozenset().union(*parts)
        parents = array_parents(self.fn, root, self.defs) if isinstance(
            value, ir.Expr) and not self.is_copy(value) else []
        if len(parents) == 1 and isinstance(self.fn.typeof(parents[0].name), types.Array):
            return self.sources(parents[0].name, seen)  # a view, a copy, an update
        return None

    def result_sources(self):
        """The parameters the result (every non-fresh array of it, over every return)
        may share memory with, or None when adjit cannot tell."""
        found = set()
        for b in self.fn.func_ir.blocks.values():
            if not isinstance(b.terminator, ir.Return):
                continue
            name = copy_root(self.definition, b.terminator.value.name)
            made = self.definition(name)
            names = ([v.name for v in made.items] if isinstance(made, ir.Expr)
                     and made.op == "build_tuple" else [name])
            for n in names:
                part = self.sources(n)
                if part is None:
                    return None
                found |= part
        return frozenset(found)

    def helper_results(self, dispatcher, argtypes):
        return fresh_results(dispatcher, argtypes, self.active)

    def fresh_call(self, name, value, seen):
        """A call: a helper's fresh result, an allocation, a ufunc or rule that returns a
        new array; a view-like rule (``np.ravel``) is fresh when its argument is."""
        parents = array_parents(self.fn, name, self.defs)  # ``return fill(x, out)``: out
        if parents:
            return all(self.fresh(p.name, seen) for p in parents)
        found = call_returns(self.fn, value, self.helper_results)
        if found is not None:
            return found[0]
        site = array_op_site(self.fn, value)
        if site is not None and site.op.shape == "view":
            return self.fresh(site.args[0].name, seen)
        callee, receiver = callee_object(self.fn, value.func), None
        if callee is None:  # a method: ((types.Array, name), the array)
            callee, receiver = callee_key(self.fn, value.func)
        called = callee[1] if isinstance(callee, tuple) else getattr(callee, "__name__", "")
        numpy = isinstance(callee, tuple) or (
            getattr(callee, "__module__", None) or "").startswith("numpy")
        if numpy or site is not None:
            if called in _VIEWING:
                arrays = [a for a in ([receiver] if receiver is not None else [])
                          + list(value.args) if isinstance(self.fn.typeof(a.name), types.Array)]
                return bool(arrays) and self.fresh(arrays[0].name, seen)
            if isinstance(callee, np.ufunc):  # ``np.sin(x, out)`` returns ``out``
                return len(value.args) == callee.nin and not value.kws
            return True
        if lookup_allocation(callee) is not None or callee is empty_inferred:
            return True  # (the array of a comprehension of integers: ``comprehensions``)
        return classify_call(self.fn, value).kind in ("elementwise", "matmul")


_sources = owned_cache("result_sources")


def result_sources(dispatcher, argtypes):
    """The parameter indices whose memory a helper's array results may share (empty:
    all fresh), or None when adjit cannot tell. Cached."""
    key = (py_function_of(dispatcher), tuple(argtypes))
    if key not in _sources:
        try:
            _sources[key] = _Freshness(capture(dispatcher, argtypes), (key,)).result_sources()
        except Exception:  # cannot analyse the callee: it may share anything
            _sources[key] = None
    return _sources[key]


def shares_argument_memory(fn, value):
    """Whether a call ``value`` of an ``@njit`` helper returns an array (or a tuple item)
    that may share memory with one of its arguments or with another item, and is not
    simply the argument it was given (``return out``)."""
    found = call_returns(fn, value, fresh_results)
    if found is None:
        return False
    whole, items = found
    if items is None:
        return not whole and returned_argument_of_call(fn, value) is None
    same = call_returns(fn, value, returned_item_arguments) or ()
    return any(not fresh and (k >= len(same) or same[k] is None)
               for k, fresh in enumerate(items))


def item_shares_memory(fn, value, k):
    """Whether item ``k`` of the tuple a helper call ``value`` returns may share memory
    with an argument or another item (see ``shares_argument_memory``)."""
    found = call_returns(fn, value, fresh_results)
    if found is None or found[1] is None or k >= len(found[1]):
        return found is not None and not found[0]
    same = call_returns(fn, value, returned_item_arguments) or ()
    return not found[1][k] and (k >= len(same) or same[k] is None)
