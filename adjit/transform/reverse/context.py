"""State shared by the reverse-mode passes for one (function, signature, activity).

Naming scheme in the generated IR (Numba names never contain '%'):
- ``v%bar``      adjoint of the active float scalar ``v`` (rdata);
- ``t%bar%k``    adjoint of float item ``k`` of the active tuple ``t``;
- ``a_adjit_shadow``  shadow array of the active float array argument ``a`` (fdata);
                 a view of an active array has the same view of its parent's shadow;
- ``y%shadow``   shadow of an array ``y`` allocated in the function, ``y%shape`` its shape;
- ``it%idx``     position counter of an iterator over an active array (forward pass only,
                 saved like any other value for the reverse pass);
- ``old%N``      the element an array write overwrites (forward pass only, saved).
See ``shadows.py`` for the arrays.
"""
import numpy as np
from numba.core import ir, types

from ...errors import UnsupportedError
from ..analysis import CFG, activity
from ..partials import product_form
from ...ir.value_types import is_float, is_float_array, is_scalar
from ...ir.nodes import defining_stmts
from .shadows import (Shadows, counter, is_basic_index, local_shadow,  # noqa: F401
                      shadow_arg, shape_of)

TAPE = "adjit_tape"
YBAR = "adjit_ybar"


def bar(name):
    return f"{name}%bar"


def bar_item(name, k):
    return f"{name}%bar%{k}"


def zero_of(typ):
    return np.float32(0.0) if typ == types.float32 else 0.0


def shadowed_array_args(fn, act, active_args):
    """Positions of the float-array arguments that get a shadow: the differentiated
    ones, and every other one that a differentiated value is written into (the ``out=``
    pattern), whose derivative then flows on to the inputs that were written. A
    differentiated tuple holding float arrays (``f((a, b))``, ``*arrays``) gets a tuple of
    shadows, one per item (0 for an item that is not a float array)."""
    out = []
    for stmt in fn.func_ir.blocks[min(fn.func_ir.blocks)].body:
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
            i, typ = stmt.value.index, fn.typeof(stmt.target.name)
            if is_float_array(typ) and (i in active_args or stmt.target.name in act.active):
                out.append(i)
            elif (isinstance(typ, types.BaseTuple) and any(map(is_float_array, typ.types))
                  and (i in active_args or stmt.target.name in act.carriers)):
                out.append(i)
    return sorted(set(out))


class ReverseContext(Shadows):
    """Analyses of one typed function plus the helpers the node handlers share."""

    def __init__(self, fn, active_args):
        self.fn = fn
        self.blocks = fn.func_ir.blocks
        self.cfg = CFG.of(self.blocks)
        self.product = product_form(self.blocks)  # the guarded product of this function
        self.active_args = frozenset(active_args)
        self.act = activity(fn, self.active_args)
        self.shadowed_args = frozenset(shadowed_array_args(fn, self.act, self.active_args))
        self.defs = defining_stmts(self.blocks)
        self.arg_vars = {}      # arg index -> primal var name
        for stmt in self.blocks[self.cfg.entry].body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                self.arg_vars[stmt.value.index] = stmt.target.name
        self.synthetic_types = {}   # forward-pass-only variables -> numba type
        self.saved_by_reference = set()  # forward-pass-only arrays no one writes again
        self.init_shadows()

    # -- kinds ------------------------------------------------------------------------
    def typeof(self, name):
        if name in self.synthetic_types:
            return self.synthetic_types[name]
        return self.fn.typeof(name)

    def typeof_value(self, value):
        """The type of an assigned expression (via the variable it is assigned to)."""
        for block in self.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, ir.Assign) and stmt.value is value:
                    return self.typeof(stmt.target.name)
        raise KeyError(value)

    def is_active(self, var):
        return var.name in self.act.active

    def active_float(self, var):
        """Whether ``var`` (a Var or a name) is an active float scalar."""
        name = var if isinstance(var, str) else getattr(var, "name", None)
        return name in self.act.active and is_float(self.typeof(name))

    def active_array(self, var):
        return isinstance(var, ir.Var) and var.name in self.act.active and is_float_array(
            self.typeof(var.name))

    def unsupported(self, construct, loc, detail=""):
        return UnsupportedError(construct, self.fn.user_name, loc, detail)

    def definition(self, name):
        """The single assigned value of an SSA variable, or None."""
        defs = self.defs.get(name, ())
        return defs[0][1].value if len(defs) == 1 else None

    # -- tuples of floats ---------------------------------------------------------------
    def active_tuple(self, var):
        """Whether ``var`` is a flat tuple of scalars and float arrays holding active
        values: such a tuple gets one adjoint per float item (``t%bar%k``); an array item
        is an array variable of its own, whose shadow is found through ``tuple_item``."""
        name = var if isinstance(var, str) else getattr(var, "name", None)
        if name not in self.act.carriers:
            return False
        typ = self.typeof(name)
        return (isinstance(typ, types.BaseTuple)
                and all(is_scalar(t) or is_float_array(t) or _index_array(t)
                        for t in typ.types)
                and any(is_float(t) or is_float_array(t) for t in typ.types))

    def array_items(self, name):
        """Positions of the float-array items of a tuple variable."""
        return [k for k, t in enumerate(self.typeof(name).types) if is_float_array(t)]

    def float_items(self, name):
        """Positions of the float items of a tuple variable."""
        return [k for k, t in enumerate(self.typeof(name).types) if is_float(t)]

    def slots(self, name):
        """The adjoint variables of an active value, as ``(name, float type)`` pairs: one
        for a float, one per float item for a tuple, none otherwise."""
        if self.active_float(name):
            return [(bar(name), self.typeof(name))]
        if self.active_tuple(name):
            typ = self.typeof(name)
            return [(bar_item(name, k), typ.types[k]) for k in self.float_items(name)]
        return []

    # -- adjoint updates (rdata) -------------------------------------------------------
    def accumulate(self, e, var, contrib, item=None):
        """``var%bar += contrib`` (or ``var%bar%item`` for a tuple item), cast back to the
        value's precision (float32 stays float32). Inactive targets take nothing."""
        if item is None:
            if not self.active_float(var):
                return
            slot, typ = bar(var.name), self.typeof(var.name)
        else:
            if not self.active_tuple(var) or not is_float(self.typeof(var.name).types[item]):
                return
            slot, typ = bar_item(var.name, item), self.typeof(var.name).types[item]
        if typ == types.float32:
            contrib = e.call(np.float32, [contrib], hint="f32")
        e.add(e.var(slot), contrib, target=slot)

    def reset(self, e, name):
        """Zero every adjoint of ``name``: an SSA name is revisited on the next loop
        iteration."""
        for slot, typ in self.slots(name):
            e.assign(ir.Const(zero_of(typ), e.loc), target=slot)

    def callee_key(self, func_var):
        """``(rule key, receiver var)`` of a call: the called Python object, or for a method
        such as ``x.sum()`` Numba's typing key ``(types.Array, 'sum')`` and ``x``."""
        typ = self.typeof(func_var.name)
        if isinstance(typ, types.BoundFunction):
            value = self.definition(func_var.name)
            if isinstance(value, ir.Expr) and value.op == "getattr":
                return typ.typing_key, value.value
            return None, None
        return self.callee_object(func_var), None

    def zero_like(self, name):
        """A zero of the precision of float variable ``name``."""
        return zero_of(self.typeof(name))

    def callee_object(self, func_var):
        """The Python object a call's function variable refers to, or None."""
        value = self.definition(func_var.name)
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return value.value
        typ = self.typeof(func_var.name)
        if isinstance(typ, types.Dispatcher):
            return typ.dispatcher
        return None


def _index_array(typ):
    """An integer or boolean array: an item of an active tuple without an adjoint (a
    k-nearest query's ``(indices, distances)``), as an integer scalar item is."""
    return isinstance(typ, types.Array) and isinstance(typ.dtype, (types.Integer,
                                                                   types.Boolean))
