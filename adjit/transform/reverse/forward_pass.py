"""Build the forward-pass IR: the primal blocks, plus what the reverse pass will need.

``f_fwd(adjit_tape, *args)`` has the primal's blocks and labels. Per block it adds, just
before the terminator (so before the phi copies Numba inserts when it strips phis):
- one push of the block's record (the values its reverse block reads), when non-empty;
- one push of the block's id, when a successor has several predecessors (or when the
  function has several return blocks and this is one of them).
Calls to other ``@njit`` functions with active inputs call their forward pass instead,
iterators over active arrays get a position counter, and the reverse pass can ask for
values computed before a statement (its ``StmtInfo``: the element an array write
overwrites) and the shape of a local array after its definition (``ctx.saved_shapes``).

A function that can ``raise`` reads the tape's depth on entry and sets it back just before
each ``raise``: an exception caught by the caller (``try``/``except`` in ``@njit`` code)
then leaves none of this call's records behind.
"""
import operator

import numpy as np
from numba.core import ir, types

from ...ir.builder import Emitter, clone_stmt, clone_value
from ...runtime import tape_depth, tape_reserve, tape_set_depth
from ...runtime.tape import checked_push, checked_put
from ...rules.classify import positional_count
from .context import TAPE, counter
from .stmt_info import NOTHING


def fwd_statement(ctx, info, stmt, e):
    """fwd: copy the statement, rewriting the few node kinds that need it, with what
    its reverse handler asked for (``info``, a ``StmtInfo``) and the shape of a local
    array it defines."""
    for name, value in info.before:
        e.assign(clone_value(value), target=name)
    new = clone_stmt(stmt)
    value = getattr(new, "value", None)
    if isinstance(value, ir.Arg):
        new.value = ir.Arg(value.name, value.index + 1, value.loc)
    elif isinstance(value, ir.Expr) and value.op == "call" and info.forward_callee:
        program = info.forward_callee
        value.func = e.glob(program.fwd, name=program.fwd.__name__)
        args = list(value.args)
        npos = positional_count(program.func)
        if npos is not None:  # a *args callee takes its trailing arguments as one tuple
            args = args[:npos] + [e.tuple(args[npos:], hint="packed")]
        value.args = [e.var(TAPE)] + args
    e.stmt(new)
    for name, value in ctx.saved_shapes.get(id(stmt), ()):
        e.assign(clone_value(value), target=name)
    if isinstance(value, ir.Expr) and value.op == "getiter" and new.target.name in ctx.array_iterators:
        e.assign(e.const(-1), target=counter(new.target.name))
    elif isinstance(value, ir.Expr) and value.op == "iternext":
        root = iterator_root(ctx, value.value.name)
        if root in ctx.array_iterators:
            idx = e.var(counter(root))
            e.binop(operator.add, idx, e.const(1), target=counter(root))


def iterator_root(ctx, name):
    """The getiter variable an iterator variable is a copy of."""
    seen = set()
    while name not in seen:
        seen.add(name)
        value = ctx.definition(name)
        if not isinstance(value, ir.Var):
            return name
        name = value.name
    return name


#: the tape depth on entry, in a function that can raise
ENTRY_DEPTH = "adjit_entry_depth"


def build_forward(ctx, rev):
    """The forward-pass blocks, given the record layouts chosen by the reverse pass."""
    blocks = {}
    cfg = ctx.cfg
    exports = phi_exports(ctx.blocks)
    raises = any(isinstance(b.terminator, (ir.Raise, ir.StaticRaise))
                 for b in ctx.blocks.values())
    for label in sorted(ctx.blocks):
        primal = ctx.blocks[label]
        block = ir.Block(primal.scope, primal.loc)
        e = Emitter(block, primal.scope, primal.loc)
        if label == cfg.entry:
            e.assign(ir.Arg(TAPE, 0, primal.loc), target=TAPE)
            if raises:
                e.call(tape_depth, [e.var(TAPE)], target=ENTRY_DEPTH)
        start = len(block.body)  # where the block's own statements begin
        for stmt in primal.body[:-1]:
            e.loc = stmt.loc
            if not is_phi(stmt):
                fwd_statement(ctx, rev.infos.get(id(stmt), NOTHING), stmt, e)
            else:  # phis are copies at the predecessors' ends: what follows them goes here
                for name, value in ctx.saved_shapes.get(id(stmt), ()):
                    e.assign(clone_value(value), target=name)
        e.loc = primal.terminator.loc
        count_trips(e, rev, label)
        items, words, expected = [], [], []
        for name in rev.records[label]:
            kind, source = rev.sources.get((label, name), ("var", name))
            items.append(e.call(np.copy, [e.var(source)], hint="saved") if kind == "copy"
                         else e.var(source))
            typ = types.unliteral(ctx.typeof(name))
            words.append(1 if isinstance(typ, SCALAR_ITEMS) else None)
            expected.append(typ)  # as the reverse pass pops it
        if rev.pushes_id[label] or (label in cfg.returns and rev.pushes_return_id):
            items.append(e.const(label, hint="id"))  # on top: the successor pops it first
            words.append(1)
            expected.append(types.int64)
        if items:
            push_record(e, start, items, words, expected)
        copy_phi_inputs(e, exports.get(label, ()))
        if isinstance(primal.terminator, (ir.Raise, ir.StaticRaise)):
            e.call(tape_set_depth, [e.var(TAPE), e.var(ENTRY_DEPTH)], hint="unwound")
        block.append(clone_stmt(primal.terminator))
        blocks[label] = block
    return blocks


#: a record of at least this many items, all scalars, is written item by item as its
#: values are made (forward mode over it: ``forward_tape.fwd_tape_put``)
EARLY_RECORD_ITEMS = 16
SCALAR_ITEMS = (types.Float, types.Integer, types.Boolean)


def push_record(e, start, items, words, expected):
    """Push a block's record (``items``, of ``words`` tape words each, None for an item
    that is not a scalar) at the block's end. The pushes are checked against the
    ``expected`` types the reverse pass pops (``checked_push``): a record Numba typed
    otherwise is an internal error, not words read as another type.

    A long record of scalars, in a block where nothing else pushes (no forward pass of a callee),
    is instead reserved where the block's own statements begin (``start``) and each item
    written right after its last definition: a long straight-line block then stores its
    values as it computes them, where one push at its end kept them all live, spilled to
    the stack and copied (``large_single_block``'s forward sweep). The words are the same."""
    body = e.block.body
    if (len(items) < EARLY_RECORD_ITEMS or None in words
            or any(_reads_tape(stmt) for stmt in body[start:])):
        e.call(checked_push(types.Tuple(expected)), [e.var(TAPE), e.tuple(items, hint="rec")],
               hint="pushed")
        return
    last_def = {stmt.target.name: k for k, stmt in enumerate(body)
                if isinstance(stmt, ir.Assign)}
    loc = body[start].loc if start < len(body) else e.loc
    scratch = Emitter(ir.Block(e.scope, loc), e.scope, loc)
    slot = scratch.call(tape_reserve, [scratch.var(TAPE), scratch.const(sum(words))],
                        hint="slot")
    inserts = {start - 1: scratch.block.body}
    offset = 0
    for item, n, typ in zip(items, words, expected):
        at = max(last_def.get(item.name, start - 1), start - 1)
        put = Emitter(ir.Block(e.scope, e.loc), e.scope, body[at].loc if at >= 0 else e.loc)
        put.call(checked_put(typ), [put.var(slot.name), put.const(offset), put.var(item.name)],
                 hint="put")
        inserts.setdefault(at, []).extend(put.block.body)
        offset += n
    e.block.body = list(inserts.get(-1, ()))
    for k, stmt in enumerate(body):
        e.block.body.append(stmt)
        e.block.body.extend(inserts.get(k, ()))


def _reads_tape(stmt):
    """Whether ``stmt`` calls something with the tape (a callee's forward pass)."""
    value = getattr(stmt, "value", None)
    return (isinstance(value, ir.Expr) and value.op == "call"
            and any(arg.name == TAPE for arg in value.args))


def count_trips(e, rev, label):
    """Trip counters of counted loops (see ``loops.py``): reset on entry, bumped per latch."""
    for loop in rev.counted.values():
        if label == loop.preheader:
            e.assign(e.const(0, hint="trips"), target=loop.counter)
        if label == loop.latch:
            e.binop(operator.add, e.var(loop.counter), e.const(1), target=loop.counter)


def is_phi(stmt):
    return (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "phi")


def phi_exports(blocks):
    """Map predecessor label -> [(phi target, incoming value)] over every phi."""
    exports = {}
    for block in blocks.values():
        for stmt in block.body:
            if is_phi(stmt):
                for value, pred in zip(stmt.value.incoming_values, stmt.value.incoming_blocks):
                    exports.setdefault(pred, []).append((stmt.target, value))
    return exports


def copy_phi_inputs(e, pairs):
    """Destroy phis ourselves: copy incoming values at the very end of the predecessor,
    after the tape pushes (Numba's own stripping moves copies earlier, which would push
    next-iteration values), and as a parallel copy (via temporaries when they overlap)."""
    # an undefined incoming value (a loop variable read after the loop) is no copy at all:
    # Numba cannot type ``null()`` and the value is never read along that edge
    pairs = [(t, v) for t, v in pairs if v is not ir.UNDEFINED]
    targets = {t.name for t, _ in pairs}
    overlap = any(isinstance(v, ir.Var) and v.name in targets for _, v in pairs)
    staged = []
    for target, value in pairs:
        staged.append((target, e.assign(value, hint="phicopy") if overlap else value))
    for target, value in staged:
        e.assign(value, target=target.name)
