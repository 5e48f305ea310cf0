"""Save a loop's invariant values once, not once per iteration.

A reverse block reads primal values through its block's record. A value computed before
a loop and read in it (``a = math.sin(w)``, then ``s += a * x[i]``) went into the record
of the loop body, so the forward sweep pushed it on every iteration and the reverse sweep
popped it back every time. Such a value is the same on every iteration, so the record of
the loop's exit block carries it instead: the forward sweep pushes it once, after the
loop, and the reverse sweep pops it once, before it walks the loop backwards. (The tape
is a stack: the exit block's record is the first of the loop's to come back.) A value
moved to an exit may move again to the exit of an enclosing loop.

A value moves out of loop ``L`` when:
- it is a number (an array's record may be a copy or a snapshot: ``save_array``);
- the function assigns it in exactly one statement (the typed IR is SSA), in a block
  outside ``L`` that dominates ``L``'s header, so it holds that one value throughout;
- that block dominates every exit of ``L`` too, so the value is defined wherever the
  forward sweep leaves the loop (or skips it: a loop tested at its bottom);
- if a phi assigns it, no edge out of ``L`` brings it another value: the forward sweep
  copies a phi's incoming value at the end of the predecessor, which would then be a
  block of ``L``, before the exit's record is pushed.
"""
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks

SCALARS = (types.Float, types.Integer, types.Boolean)


class LoopInvariants:
    """The loops of one function and which numbers are invariant in them."""

    def __init__(self, ctx, cfg):
        self.ctx = ctx
        loops = [loop for loop in compute_cfg_from_blocks(ctx.blocks).loops().values()
                 if loop.exits]
        self.innermost = {}  # label -> the smallest loop holding it
        for loop in sorted(loops, key=lambda lp: -len(lp.body)):
            for label in loop.body:
                self.innermost[label] = loop
        self.defined, self.phi_inputs = _definitions(ctx.blocks) if loops else ({}, {})
        self.dominators = cfg.dominators() if loops else {}

    def free_in(self, label, name):
        """Whether ``name`` is invariant in the innermost loop around block ``label``:
        saved once for the loop, it costs a reverse block nothing to read (a tree of
        a few flops over it is recomputed there rather than saved per iteration)."""
        loop = self.innermost.get(label)
        return loop is not None and self._invariant(name, loop)

    def hoist(self, records, sources):
        """Move each loop-invariant number from the records (``{label: [names]}``) of
        the blocks of a loop to the records of its exits, innermost loops first, until
        none moves. ``sources`` (``(label, name) -> how it is saved``) names the
        records' copies and snapshots, which stay."""
        moved = True
        while moved:
            moved = False
            for label in sorted(records):
                loop = self.innermost.get(label)
                if loop is None:
                    continue
                out = [name for name in records[label] if (label, name) not in sources
                       and self._invariant(name, loop)]
                if not out:
                    continue
                records[label] = [name for name in records[label] if name not in out]
                for exit_label in sorted(loop.exits):
                    records[exit_label] += [n for n in out if n not in records[exit_label]]
                moved = True
        return records

    def _invariant(self, name, loop):
        """Whether record item ``name`` holds one value throughout ``loop`` (module
        doc)."""
        ctx = self.ctx
        if name not in ctx.fn.typemap:  # a trip count or another synthetic value
            return False
        if not isinstance(types.unliteral(ctx.typeof(name)), SCALARS):
            return False
        where = self.defined.get(name)
        if any(block in loop.body and value != name
               for block, value in self.phi_inputs.get(name, ())):
            return False
        return (where is not None and where not in loop.body
                and all(where in self.dominators[b] for b in (loop.header, *loop.exits)))


def _definitions(blocks):
    """``{name: label}`` of the names assigned exactly once, to the block assigning it,
    and ``{name: [(incoming block, incoming name)]}`` of those a phi assigns."""
    seen, once, phis = set(), {}, {}
    for label, block in blocks.items():
        for stmt in block.find_insts(ir.Assign):
            name, value = stmt.target.name, stmt.value
            if name in seen:
                once.pop(name, None)
            else:
                seen.add(name)
                once[name] = label
            if isinstance(value, ir.Expr) and value.op == "phi":
                phis[name] = [(b, getattr(v, "name", None)) for b, v in
                              zip(value.incoming_blocks, value.incoming_values)]
    return once, phis
