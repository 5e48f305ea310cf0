"""State shared by the reverse-mode passes for one (function, signature, activity).

Naming scheme in the generated IR (Numba names never contain '%'):
- ``v%bar``      adjoint of the active float scalar ``v`` (rdata);
- ``t%bar%k``    adjoint of float item ``k`` of the active tuple ``t``;
- ``a_adjit_shadow``  shadow array of the active float array argument ``a`` (fdata);
                 a view of an active array has the same view of its parent's shadow;
- ``it%idx``     position counter of an iterator over an active array (forward pass only,
                 saved like any other value for the reverse pass).
"""
import numpy as np
from numba.core import ir, types

from ...errors import UnsupportedError
from ..analysis import CFG, activity, defining_stmts, is_float, is_float_array, is_scalar

TAPE = "adjit_tape"
YBAR = "adjit_ybar"


def bar(name):
    return f"{name}%bar"


def shadow_arg(name):
    return f"{name}_adjit_shadow"


def bar_item(name, k):
    return f"{name}%bar%{k}"


def zero_of(typ):
    return np.float32(0.0) if typ == types.float32 else 0.0


def counter(name):
    return f"{name}%idx"


def is_basic_index(typ):
    """Integers, slices and tuples of them: indexing that returns a view, not a copy."""
    if isinstance(typ, types.BaseTuple):
        return all(is_basic_index(t) for t in typ.types)
    return isinstance(typ, (types.Integer, types.SliceType))


class ReverseContext:
    """Analyses of one typed function plus the helpers the node handlers share."""

    def __init__(self, fn, active_args):
        self.fn = fn
        self.blocks = fn.func_ir.blocks
        self.cfg = CFG.of(self.blocks)
        self.active_args = frozenset(active_args)
        self.act = activity(fn, self.active_args)
        self.defs = defining_stmts(self.blocks)
        self.arg_vars = {}      # arg index -> primal var name
        for stmt in self.blocks[self.cfg.entry].body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                self.arg_vars[stmt.value.index] = stmt.target.name
        self.synthetic_types = {}   # forward-pass-only variables -> numba type
        self.array_iterators = set()  # getiter vars over active arrays (need a counter)
        self.rev_label = {}
        self.rev_edges = {}

    # -- kinds ------------------------------------------------------------------------
    def typeof(self, name):
        if name in self.synthetic_types:
            return self.synthetic_types[name]
        return self.fn.typeof(name)

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
        return UnsupportedError(construct, self.fn.name, loc, detail)

    def definition(self, name):
        """The single assigned value of an SSA variable, or None."""
        defs = self.defs.get(name, ())
        return defs[0][1].value if len(defs) == 1 else None

    # -- shadows (fdata) -----------------------------------------------------------------
    def array_root(self, name):
        """Follow copies and casts back to the variable that really defines an array."""
        seen = set()
        while name not in seen:
            seen.add(name)
            value = self.definition(name)
            if isinstance(value, ir.Var):
                name = value.name
            elif isinstance(value, ir.Expr) and value.op == "cast":
                name = value.value.name
            else:
                break
        return name

    def view_of(self, name, loc):
        """``(parent var, index var)`` when array ``name`` is a view of another array made
        by basic indexing (``X[i]``, ``x[a:b]``, ``X[i, 1:]``) or is the row of an iteration
        over a 2-D+ array (index: the iterator's position counter); else None.

        A view shares memory with its parent, so its shadow is the same view of the
        parent's shadow; fancy indexing copies and is refused."""
        value = self.definition(self.array_root(name))
        if not isinstance(value, ir.Expr):
            return None
        if value.op in ("getitem", "static_getitem") and isinstance(
                self.typeof(value.value.name), types.Array):
            index = value.index if value.op == "getitem" else value.index_var
            if index is None or not is_basic_index(self.index_type(value, index)):
                raise self.unsupported("indexing an array with an array or mask",
                                       self.defs[self.array_root(name)][0][1].loc,
                                       "only integers and slices make views of arrays")
            return value.value, index
        if value.op == "pair_first":
            array, iter_var = self.iterated_array(value, loc)
            if self.typeof(array.name).ndim >= 2:
                return array, ir.Var(iter_var.scope, self.iteration_counter(iter_var), loc)
        return None

    def index_type(self, expr, index):
        sig = self.fn.calltypes.get(expr)
        return sig.args[1] if sig is not None else self.typeof(index.name)

    def iterated_array(self, pair_first, loc):
        """``(array var, getiter var)`` of ``pair_first(iternext(getiter(array)))``."""
        pair = self.definition(pair_first.value.name)
        if isinstance(pair, ir.Expr) and pair.op == "iternext":
            root = self.array_root(pair.value.name)
            source = self.definition(root)
            if (isinstance(source, ir.Expr) and source.op == "getiter"
                    and isinstance(self.typeof(source.value.name), types.Array)):
                return source.value, ir.Var(source.value.scope, root, loc)
        raise self.unsupported("iteration over this kind of object", loc,
                               "only iteration over arrays is differentiable")

    def iteration_counter(self, iter_var):
        """Name of the position counter of an array iterator (maintained by the forward
        pass, read by the reverse pass like any other saved integer)."""
        self.array_iterators.add(iter_var.name)
        self.synthetic_types[counter(iter_var.name)] = types.intp
        return counter(iter_var.name)

    def shadow_of(self, var, loc, e):
        """The shadow array of an active array, as a variable of ``e``'s block.

        Arguments have one (``name_adjit_shadow``); a view's shadow is the same view of its
        parent's shadow, emitted into ``e`` from the primal index (which the reverse-pass
        builder saves or recomputes like any other value it reads)."""
        name = self.array_root(var.name)
        value = self.definition(name)
        if isinstance(value, ir.Arg):
            return e.var(shadow_arg(value.name))
        view = self.view_of(name, loc)
        if view is not None:
            parent, index = view
            return e.getitem(self.shadow_of(parent, loc, e), index, hint="shadow")
        if isinstance(value, ir.Expr) and value.op == "phi":
            sources = {self.array_root(v.name) for v in value.incoming_values
                       if isinstance(v, ir.Var) and v.name in self.act.active}
            roots = {self.definition(s) for s in sources}
            if len(sources) == 1 and all(isinstance(r, ir.Arg) for r in roots):
                return self.shadow_of(ir.Var(var.scope, sources.pop(), loc), loc, e)
        raise self.unsupported("an array created inside the function "
                               f"('{var.name}') that depends on a differentiated input", loc,
                               "only arguments and views of them get gradients so far")

    # -- tuples of floats ---------------------------------------------------------------
    def active_tuple(self, var):
        """Whether ``var`` is a flat tuple of scalars holding active floats: such a tuple
        gets one adjoint per float item (``t%bar%k``)."""
        name = var if isinstance(var, str) else getattr(var, "name", None)
        if name not in self.act.carriers:
            return False
        typ = self.typeof(name)
        return (isinstance(typ, types.BaseTuple) and all(is_scalar(t) for t in typ.types)
                and any(is_float(t) for t in typ.types))

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
