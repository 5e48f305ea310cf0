"""Splice one generated function's blocks into another's IR, as a call would run them.

A public transform holds its derivative passes in its own body (one Numba compile per
derivative instead of three). ``splice`` appends a pass's blocks to the transform's: its
variables renamed apart, its labels after the transform's, each ``arg(i)`` reading the
value passed, and each ``return v`` assigning the call's result and jumping on.
"""
from numba.core import ir, ir_utils
from numba.core.analysis import compute_cfg_from_blocks

from .builder import Emitter, copy_blocks, fresh_name


def splice(blocks, e, callee_blocks, args, hint):
    """Run ``callee_blocks`` (a generated function's IR) where ``e`` (an emitter on a
    block of ``blocks``) stands, with ``args`` as its parameters. The emitter's block
    jumps into the callee; the callee's returns assign the result and jump to a new block.
    Returns ``(result_var, emitter_after)``: the result and an emitter on that block."""
    tag = fresh_name(hint).replace("%", "#")
    renamed = _renamed(copy_blocks(callee_blocks), e.scope, tag)
    first = max(blocks) + 1
    offset = first - min(renamed)
    moved = ir_utils.add_offset_to_labels(renamed, offset)
    after_label = max(moved) + 1
    result = e.var(f"{hint}%result#{tag}")
    for label, block in moved.items():
        block.body = [new for stmt in block.body for new in _bound(stmt, args, result,
                                                                   after_label)]
        block.scope = e.scope
        blocks[label] = block
    e.jump(min(renamed) + offset)
    after = ir.Block(e.scope, e.loc)
    blocks[after_label] = after
    return result, Emitter(after, e.scope, e.loc)


def _renamed(blocks, scope, tag):
    """``blocks`` (a copy) with every variable ``v`` renamed ``v#tag`` in ``scope``."""
    def rename(var, _):
        return ir.Var(scope, f"{var.name}#{tag}", var.loc)
    ir_utils.visit_vars(blocks, rename, None)
    return blocks


def _bound(stmt, args, result, after_label):
    """One callee statement in the caller: a parameter read becomes a copy of the value
    passed, a return an assignment of the result and a jump on (see ``splice``)."""
    if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
        return [ir.Assign(args[stmt.value.index], stmt.target, stmt.loc)]
    if isinstance(stmt, ir.Return):
        return [ir.Assign(stmt.value, result, stmt.loc), ir.Jump(after_label, stmt.loc)]
    return [stmt]


def drop_unreachable(blocks):
    """``blocks`` without the blocks control never reaches: after a spliced function that
    always raises, the code that would use its result (and the result itself, never
    assigned) is unreachable, and Numba would fail to type it."""
    dead = compute_cfg_from_blocks(blocks).dead_nodes()
    return {label: block for label, block in blocks.items() if label not in dead}
