"""State shared by the reverse-mode passes for one (function, signature, activity).

Naming scheme in the generated IR (Numba names never contain '%'):
- ``v%bar``      adjoint of the active float scalar ``v`` (rdata);
- ``a%shadow``   shadow array of the active float array argument ``a`` (fdata);
- ``it%idx``     position counter of an iterator over an active array (forward pass only,
                 saved like any other value for the reverse pass).
"""
import numpy as np
from numba.core import ir, types

from ...errors import UnsupportedError
from ..analysis import CFG, activity, defining_stmts, is_float, is_float_array

TAPE = "adjit_tape"
YBAR = "adjit_ybar"


def bar(name):
    return f"{name}%bar"


def shadow_arg(name):
    return f"{name}_adjit_shadow"


def counter(name):
    return f"{name}%idx"


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
        return isinstance(var, ir.Var) and var.name in self.act.active and is_float(
            self.typeof(var.name))

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
    def shadow_of(self, var, loc):
        """Name of the shadow array of an active array: arguments have one, aliases share it."""
        seen = set()
        name = var.name
        while name not in seen:
            seen.add(name)
            value = self.definition(name)
            if isinstance(value, ir.Arg):
                return shadow_arg(value.name)
            if isinstance(value, ir.Var):
                name = value.name
                continue
            if isinstance(value, ir.Expr) and value.op == "phi":
                sources = {self.shadow_of(v, loc) for v in value.incoming_values
                           if isinstance(v, ir.Var) and v.name in self.act.active}
                if len(sources) == 1:
                    return sources.pop()
            if isinstance(value, ir.Expr) and value.op == "cast":
                name = value.value.name
                continue
            break
        raise self.unsupported("an array created or sliced inside the function "
                               f"('{var.name}') that depends on a differentiated input", loc,
                               "only arrays passed as arguments get gradients so far")

    # -- adjoint updates (rdata) -------------------------------------------------------
    def accumulate(self, e, var, contrib):
        """``var%bar += contrib``, cast back to var's precision (float32 stays float32)."""
        if not self.active_float(var):
            return
        typ = self.typeof(var.name)
        if typ == types.float32:
            contrib = e.call(np.float32, [contrib], hint="f32")
        e.add(e.var(bar(var.name)), contrib, target=bar(var.name))

    def reset(self, e, name):
        """``name%bar = 0``: an SSA name is revisited on the next loop iteration."""
        e.assign(ir.Const(self.zero(name), e.loc), target=bar(name))

    def zero(self, name):
        typ = self.typeof(name)
        return np.float32(0.0) if typ == types.float32 else 0.0

    def callee_object(self, func_var):
        """The Python object a call's function variable refers to, or None."""
        value = self.definition(func_var.name)
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return value.value
        typ = self.typeof(func_var.name)
        if isinstance(typ, types.Dispatcher):
            return typ.dispatcher
        return None
