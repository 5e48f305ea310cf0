"""Loops whose reverse pass needs no block-stack traffic.

A counted loop is entered only from a preheader ``P``, closed by one latch ``L`` (the
only block that jumps back to the header ``H``), and left to one exit block ``X`` either
from ``H`` alone (``for`` loops: ``H`` tests, ``X``'s only predecessor is ``H``) or from
``L`` alone (bottom-tested ``while`` loops, as Python 3.11 compiles them: ``L`` tests,
and ``P`` may skip the loop by jumping to ``X`` itself). The path through the loop is
then fully described by the trip count. The forward pass counts completed iterations in
``H%trips`` (``0`` at the end of P, ``+1`` at the end of L) and saves the count once, in
X's record. Reversed, ``H`` (and ``X`` of a bottom-tested loop, whose predecessors are
``L`` and perhaps ``P``) goes back to ``L`` while the count is positive, decrementing it,
and to ``P`` when it reaches 0. This replaces one block-id push and pop per iteration with
a register decrement.

Inside such a loop ``H%trips`` is the number of the iteration being run, forwards and
backwards alike. When the loop walks a ``range(start, stop, step)`` iterator created in the
preheader, its induction value is ``start + H%trips * step``; so is a header phi
``i = phi(start from P, i + step from L)`` of a ``while`` loop. The reverse pass recomputes
such values from the counter instead of saving them on every iteration (``Induction``).
"""
import operator
from dataclasses import dataclass

from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks

from .forward_pass import is_phi, iterator_root


@dataclass(frozen=True)
class CountedLoop:
    """A loop of one of the shapes above, by block label; its counter is ``H%trips``."""
    header: int
    preheader: int
    latch: int
    exit: int
    body: frozenset = frozenset()
    decided: frozenset = frozenset()  # blocks whose predecessor the counter decides

    @property
    def counter(self):
        return f"{self.header}%trips"


@dataclass(frozen=True)
class Induction:
    """The induction value ``name`` of a counted loop, as ``start +- trips * step``
    (``start``/``step`` None when they are the defaults 0 and 1)."""
    name: str
    loop: CountedLoop
    start: object = None
    step: object = None
    down: bool = False  # start - trips * step (a ``while`` loop's ``i -= step``)

    def statements(self, scope, loc):
        """Assignments that rebuild the induction value from the loop counter."""
        value = ir.Var(scope, self.loop.counter, loc)
        if self.step is not None:
            stride = ir.Var(scope, f"{self.name}%stride", loc)
            mul = ir.Expr.binop(operator.mul, value, ir.Var(scope, self.step, loc), loc)
            yield ir.Assign(mul, stride, loc)
            value = stride
        if self.start is not None:
            op = operator.sub if self.down else operator.add
            value = ir.Expr.binop(op, ir.Var(scope, self.start, loc), value, loc)
        yield ir.Assign(value, ir.Var(scope, self.name, loc), loc)

    def inputs(self):
        """Primal variables the rebuilt value reads (the counter aside)."""
        return [n for n in (self.start, self.step) if n is not None]


def counted_loops(blocks, cfg):
    """Map header label -> CountedLoop for every loop of one of the shapes above."""
    out, decided = {}, set()
    for loop in compute_cfg_from_blocks(blocks).loops().values():
        h = loop.header
        preds = cfg.preds[h]
        inside = [p for p in preds if p in loop.body]
        outside = [p for p in preds if p not in loop.body]
        exits = list(loop.exits)
        if len(inside) != 1 or len(outside) != 1 or len(preds) != 2 or len(exits) != 1:
            continue
        latch, pre, x = inside[0], outside[0], exits[0]
        leaving = [b for b in loop.body if x in cfg.succs[b]]
        top_tested = (cfg.succs[latch] == [h] and cfg.preds[x] == [h] and leaving == [h])
        bottom_tested = (leaving == [latch] and sorted(cfg.succs[latch]) == sorted([h, x])
                         and set(cfg.preds[x]) <= {pre, latch}
                         and set(cfg.succs[pre]) <= {h, x})
        if not (top_tested or bottom_tested):
            continue
        labels = {h} | ({x} if bottom_tested else set())  # entering L from X: one fewer
        if labels & decided:
            continue
        decided |= labels
        out[h] = CountedLoop(h, pre, latch, x, frozenset(loop.body), frozenset(labels))
    return out


def inductions(ctx, loops):
    """Map induction variable name -> Induction over the counted ``loops``."""
    out = {}
    for loop in loops.values():
        found = _range_induction(ctx, loop)
        if found is not None:
            out[found.name] = found
        for found in _phi_inductions(ctx, loop):
            out[found.name] = found
    return out


def _phi_inductions(ctx, loop):
    """Header phis ``i = phi(start from P, i +- step from L)`` with signed integer start
    and a step that is a constant (so the same on every iteration)."""
    for stmt in ctx.blocks[loop.header].body:
        if not is_phi(stmt):
            continue
        name = stmt.target.name
        if types.unliteral(ctx.typeof(name)) != types.intp:
            continue
        incoming = dict(zip(stmt.value.incoming_blocks, stmt.value.incoming_values))
        start, nxt = incoming.get(loop.preheader), incoming.get(loop.latch)
        if not (isinstance(start, ir.Var) and isinstance(nxt, ir.Var)) or len(incoming) != 2:
            continue
        value = ctx.definition(nxt.name)
        while isinstance(value, ir.Var):
            value = ctx.definition(value.name)
        if not (isinstance(value, ir.Expr) and value.op == "binop"
                and value.fn in (operator.add, operator.sub) and value.lhs.name == name):
            continue
        step = ctx.definition(value.rhs.name)
        start_type = types.unliteral(ctx.typeof(start.name))
        if not (isinstance(step, ir.Const) and isinstance(step.value, int)
                and isinstance(start_type, types.Integer) and start_type.signed):
            continue
        yield Induction(name, loop, start=start.name, step=value.rhs.name,
                        down=value.fn is operator.sub)


def _range_induction(ctx, loop):
    """The header's ``pair_first(iternext(it))`` when ``it`` is a ``range`` iterator made
    in the preheader (a ``for`` statement's own), with signed integer bounds."""
    nexts = [s for s in ctx.blocks[loop.header].body if isinstance(s, ir.Assign)
             and isinstance(s.value, ir.Expr) and s.value.op == "iternext"]
    firsts = [s for s in ctx.blocks[loop.header].body if isinstance(s, ir.Assign)
              and isinstance(s.value, ir.Expr) and s.value.op == "pair_first"]
    if len(nexts) != 1 or len(firsts) != 1 or firsts[0].value.value.name != nexts[0].target.name:
        return None
    name = firsts[0].target.name
    if types.unliteral(ctx.typeof(name)) != types.intp:
        return None
    root = iterator_root(ctx, nexts[0].value.value.name)
    value = ctx.definition(root)
    if not (isinstance(value, ir.Expr) and value.op == "getiter"
            and ctx.defs[root][0][0] == loop.preheader):
        return None
    call = ctx.definition(value.value.name)
    if not (isinstance(call, ir.Expr) and call.op == "call" and not call.kws
            and call.vararg is None and ctx.callee_object(call.func) is range):
        return None
    args = [a.name for a in call.args]
    if not all(isinstance(types.unliteral(ctx.typeof(a)), types.Integer)
               and types.unliteral(ctx.typeof(a)).signed for a in args):
        return None
    if len(args) == 1:
        return Induction(name, loop)
    if len(args) == 2:
        return Induction(name, loop, start=args[0])
    return Induction(name, loop, start=args[0], step=args[2])
