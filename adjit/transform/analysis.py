"""Analyses shared by the transforms: control-flow graph, variable kinds and activity.

Activity decides which variables carry derivative information: a float scalar or float
array is *active* when it depends on a differentiable argument. Containers (tuples,
iterators, pairs) can carry activity through to a float they yield; integers and bools
never do. Only active values get adjoints, so constants and index arithmetic cost nothing.
"""
from dataclasses import dataclass, field

from numba.core import ir, types


def is_float(typ):
    return isinstance(typ, types.Float)


def is_float_array(typ):
    return isinstance(typ, types.Array) and isinstance(typ.dtype, types.Float)


def is_differentiable(typ):
    return is_float(typ) or is_float_array(typ)


def is_scalar(typ):
    return isinstance(typ, (types.Float, types.Integer, types.Boolean))


def _carries(typ):
    """Whether a non-float value can pass activity on: a container holding floats."""
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
                                types.RangeType, types.SliceType, types.EnumMember))


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


def defining_stmts(blocks):
    """Map variable name -> list of (label, Assign) that define it."""
    defs = {}
    for label, block in blocks.items():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                defs.setdefault(stmt.target.name, []).append((label, stmt))
    return defs


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

    def __contains__(self, name):
        return name in self.active

    def touches(self, value):
        """Whether a value reads an active variable or an active-carrying container."""
        return any(v.name in self.active or v.name in self.carriers for v in operands(value))


def array_parents(fn, name, defs):
    """The arrays that array ``name`` aliases: the source of a copy or cast, the parent
    of a view (``a[i]``, ``a[1:]``, a row of ``for row in a``), the inputs of a phi."""
    found = defs.get(name, ())
    value = found[0][1].value if len(found) == 1 else None
    if isinstance(value, ir.Var):
        return [value]
    if not isinstance(value, ir.Expr):
        return []
    if value.op == "cast" or (value.op in ("getitem", "static_getitem")
                              and isinstance(fn.typeof(value.value), types.Array)):
        return [value.value]
    if value.op == "phi":
        return [v for v in value.incoming_values if isinstance(v, ir.Var)]
    if value.op == "pair_first":  # pair_first(iternext(it)), it a copy of getiter(a)
        seen = set()
        while isinstance(value, (ir.Var, ir.Expr)) and id(value) not in seen:
            seen.add(id(value))
            if isinstance(value, ir.Expr) and value.op == "getiter":
                return [value.value]
            var = value if isinstance(value, ir.Var) else getattr(value, "value", None)
            if not isinstance(var, ir.Var):
                break
            found = defs.get(var.name, ())
            value = found[0][1].value if len(found) == 1 else None
    return []


def _activate_array(fn, act, name, defs):
    """Mark array ``name`` and every array it aliases active (a write into a view or a
    copy changes the array it shares memory with); return whether anything changed."""
    changed, todo = False, [name]
    while todo:
        n = todo.pop()
        if n in act.active or not is_float_array(fn.typeof(n)):
            continue
        act.active.add(n)
        changed = True
        todo.extend(v.name for v in array_parents(fn, n, defs))
    return changed


def _written_arrays(fn, stmt):
    """Arrays a statement may write: the target of ``a[i] = v``, and the array arguments
    of a call to an ``@njit`` function (which the transform checks later)."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return [stmt.target], [stmt.value]
    value = getattr(stmt, "value", None)
    if (isinstance(stmt, ir.Assign) and isinstance(value, ir.Expr) and value.op == "call"
            and isinstance(fn.typeof(value.func), types.Dispatcher)):
        arrays = [a for a in value.args if is_float_array(fn.typeof(a))]
        return arrays, list(value.args)
    return [], []


def activity(fn, active_args):
    """Propagate activity forward from ``active_args`` to a fixed point. Writing an active
    value into an array (directly, or through a call) makes the array active."""
    act = Activity()
    blocks = fn.func_ir.blocks
    defs = defining_stmts(blocks)
    changed = True
    while changed:
        changed = False
        for block in blocks.values():
            for stmt in block.body:
                written, sources = _written_arrays(fn, stmt)
                if any(v.name in act.active or v.name in act.carriers for v in sources):
                    for arr in written:
                        changed |= _activate_array(fn, act, arr.name, defs)
                if not isinstance(stmt, ir.Assign):
                    continue
                name, value = stmt.target.name, stmt.value
                if name in act.active or name in act.carriers:
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
