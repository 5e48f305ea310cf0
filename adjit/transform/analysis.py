"""Analyses shared by the transforms: control-flow graph, variable kinds and activity.

Activity decides which variables carry derivative information: a float scalar or float
array is *active* when it depends on a differentiable argument. Containers (tuples,
iterators, pairs) can carry activity through to a float they yield; integers and bools
never do. Only active values get adjoints, so constants and index arithmetic cost nothing.
"""
from dataclasses import dataclass, field

from numba.core import ir, types

from ..capture.effects import (array_parents, call_writes, callee_container_writes,
                              defined_value)
from ..rules.classify import callee_key
from ..rules.core import NONDIFF, lookup
from .control_only import control_only
from ..ir.nodes import defining_stmts
from ..ir.lists import list_copies, list_root, list_writes
from ..ir.value_types import is_differentiable, is_float_array


def _carries(typ):
    """Whether a non-float value can pass activity on: a container holding floats."""
    if isinstance(typ, types.Array):  # an int or bool array (a mask) holds no floats
        return False
    if isinstance(typ, types.BaseTuple):
        return any(is_differentiable(t) or _carries(t) for t in typ.types)
    if isinstance(typ, types.Pair):
        return is_differentiable(typ.first_type) or _carries(typ.first_type)
    if isinstance(typ, (types.SimpleIteratorType, types.IterableType)):
        yielded = getattr(typ, "yield_type", None)
        return yielded is None or is_differentiable(yielded) or _carries(yielded)
    return not isinstance(typ, (types.Number, types.Boolean, types.NoneType,
                                types.Function, types.Dispatcher, types.Module,
                                types.NumberClass, types.StringLiteral, types.UnicodeType,
                                types.RangeType, types.SliceType, types.EnumMember,
                                types.DType))


@dataclass
class CFG:
    """Successors, predecessors and return blocks of a block dict."""

    succs: dict
    preds: dict
    returns: list
    entry: int

    @classmethod
    def of(cls, blocks):
        succs = {label: [] for label in blocks}
        preds = {label: [] for label in blocks}
        returns = []
        for label, block in blocks.items():
            term = block.terminator
            if isinstance(term, ir.Return):
                returns.append(label)
            for target in (term.get_targets() if hasattr(term, "get_targets") else ()):
                if target not in succs[label]:
                    succs[label].append(target)
                    preds[target].append(label)
        return cls(succs, preds, sorted(returns), min(blocks))

    def unique_pred(self, label):
        ps = self.preds[label]
        return ps[0] if len(ps) == 1 else None

    def dominators(self):
        """Map label -> set of labels that dominate it (iterative data flow)."""
        labels = set(self.succs)
        dom = {label: set(labels) for label in labels}
        dom[self.entry] = {self.entry}
        changed = True
        while changed:
            changed = False
            for label in labels - {self.entry}:
                preds = [dom[p] for p in self.preds[label]]
                new = set.intersection(*preds) | {label} if preds else {label}
                if new != dom[label]:
                    dom[label], changed = new, True
        return dom

    def reachable_from(self, label):
        """The blocks that can run after ``label`` starts: ``label`` and every block a
        path from it reaches, around loops too."""
        seen, todo = set(), [label]
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo.extend(self.succs[b])
        return seen

    def in_loop(self, label):
        """Whether ``label`` can run more than once (it reaches itself)."""
        seen, todo = set(), list(self.succs[label])
        while todo:
            b = todo.pop()
            if b == label:
                return True
            if b not in seen:
                seen.add(b)
                todo.extend(self.succs[b])
        return False


def operands(value):
    """The variables an assigned value reads."""
    if isinstance(value, ir.Var):
        return [value]
    if isinstance(value, ir.Expr):
        if value.op == "phi":
            return [v for v in value.incoming_values if isinstance(v, ir.Var)]
        return value.list_vars()
    return []


@dataclass
class Activity:
    """Which variables are active (differentiable and input-dependent)."""

    active: set = field(default_factory=set)
    carriers: set = field(default_factory=set)
    control_only: set = field(default_factory=set)  # floats that only steer control flow

    def __contains__(self, name):
        return name in self.active

    def touches(self, value):
        """Whether a value reads an active variable or an active-carrying container."""
        return any(v.name in self.active or v.name in self.carriers for v in operands(value))


def _activate_array(fn, act, name, defs):
    """Mark array ``name`` and every array it aliases active (a write into a view or a
    copy changes the array it shares memory with); return whether anything changed."""
    changed, todo, seen = False, [name], set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if isinstance(defined_value(defs, n), ir.Arg) and isinstance(
                fn.typeof(n), types.BaseTuple):
            if n not in act.carriers:  # a tuple argument whose array is written
                act.carriers.add(n)    # (``k1 = ws[0]; k1[i] = ...``): its later reads
                changed = True         # (``ws[0]``) see the write's tangent
            continue
        if not is_float_array(fn.typeof(n)):
            continue
        if n not in act.active:  # (one already active, through a read, may still have
            act.active.add(n)    # parents that are not: ``shadows[k]`` of a tuple)
            changed = True
        todo.extend(v.name for v in _written_through(fn, n, defs))
    return changed


def _written_through(fn, name, defs):
    """The arrays ``array_parents`` gives, or the tuple argument array ``name`` is an
    item of (``ws[0]``, ``ws[k]``)."""
    parents = array_parents(fn, name, defs)
    value = defined_value(defs, name)
    if (not parents and isinstance(value, ir.Expr)
            and value.op in ("static_getitem", "getitem")
            and isinstance(defined_value(defs, value.value.name), ir.Arg)):
        return [value.value]
    return parents


def written_arrays(fn, stmt, defs):
    """Arrays a statement may write, and the values it may write into them."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return [stmt.target], [stmt.value]
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ir.Assign) and isinstance(value, ir.Expr) and value.op == "call":
        written = [a for a in call_writes(fn, value) if is_float_array(fn.typeof(a))]
        return written + _written_tuple_items(fn, value, defs), list(value.args)
    return [], []


def _written_tuple_items(fn, value, defs):
    """The array items of tuples built in the function that a helper call may write
    through (a helper's reverse pass adding into the shadow tuple ``(a%shadow, b)``),
    and the tuple arguments it may write through."""
    ftype = fn.typeof(value.func.name)
    if not isinstance(ftype, types.Dispatcher) or value not in fn.calltypes:
        return []
    argtypes = tuple(types.unliteral(t) for t in fn.calltypes[value].args)
    try:
        written = callee_container_writes(ftype.dispatcher, argtypes)
    except Exception:  # cannot analyse the callee: any tuple it is given
        written = range(len(value.args))
    items = []
    for i in written:
        built = i < len(value.args) and defined_value(defs, value.args[i].name)
        if isinstance(built, ir.Expr) and built.op == "build_tuple":
            items += [v for v in built.items if is_float_array(fn.typeof(v.name))]
        elif isinstance(built, ir.Arg):  # a tuple argument: ``stage(x, ws)``
            items.append(value.args[i])
    return items


def _activate_list(act, name, blocks):
    """Mark a list that a differentiated value is put into as a carrier, back through
    the copies it was reached by to the list that was made (later copies follow)."""
    changed, root = False, list_root(blocks, name)
    for step in list_copies(blocks, name, root):
        if step not in act.carriers:
            act.carriers.add(step)
            changed = True
    return changed


def _nondiff_results(fn):
    """Results of calls declared non-differentiable (``np.sign(x)``, ``np.floor(x)``):
    they carry no derivative, so an array result needs no shadow or tangent."""
    found = set()
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "call"):
                continue
            key, _ = callee_key(fn, value.func)
            try:
                if key is not None and lookup(key) is NONDIFF:
                    found.add(stmt.target.name)
            except TypeError:  # unhashable keys
                pass
    return found


def activity(fn, active_args, carriers=()):
    """Propagate activity forward from ``active_args`` (and the variables ``carriers``)
    to a fixed point. Writing an active value into an array (directly, or through a call)
    makes the array active."""
    act = Activity(carriers=set(carriers), control_only=control_only(fn))
    blocks = fn.func_ir.blocks
    defs = defining_stmts(blocks)
    constant = _nondiff_results(fn) | act.control_only
    changed = True
    while changed:
        changed = False
        for block in blocks.values():
            for stmt in block.body:
                written, sources = written_arrays(fn, stmt, defs)
                if any(v.name in act.active or v.name in act.carriers for v in sources):
                    for arr in written:
                        changed |= _activate_array(fn, act, arr.name, defs)
                lists, sources = list_writes(fn, stmt)
                if any(v.name in act.active or v.name in act.carriers for v in sources):
                    for lst in lists:
                        changed |= _activate_list(act, lst.name, blocks)
                if not isinstance(stmt, ir.Assign):
                    continue
                name, value = stmt.target.name, stmt.value
                if name in act.active or name in act.carriers or name in constant:
                    continue
                typ = fn.typeof(name)
                if isinstance(value, ir.Arg):
                    hit = value.index in active_args
                else:
                    hit = act.touches(value)
                if not hit:
                    continue
                if is_differentiable(typ):
                    act.active.add(name)
                    changed = True
                elif _carries(typ):
                    act.carriers.add(name)
                    changed = True
    return act
