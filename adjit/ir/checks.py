"""IR invariant checks, run after every rewrite when ``adjit.config.CHECKS`` is on.

They catch transform bugs at the pass that introduced them instead of as a wrong number or
a crash deep inside Numba's lowering.
"""
from numba.core import ir

from .. import config
from .printing import dump, format_blocks, is_terminator


class InvariantError(AssertionError):
    """A pass produced malformed IR: a bug in adjit, never in user code."""


def check_blocks(blocks, where, arg_names=None):
    """Every block ends in exactly one terminator, targets exist, the entry has the lowest
    label, and every variable that is read is assigned somewhere (or is an argument)."""
    def fail(msg):
        raise InvariantError(f"after {where}: {msg}\n{format_blocks(blocks)}")

    if not blocks:
        fail("no blocks")
    labels = set(blocks)
    defined = set(arg_names or ())
    for label, block in blocks.items():
        if not block.body or not is_terminator(block.body[-1]):
            fail(f"block {label} does not end in a terminator")
        for stmt in block.body[:-1]:
            if is_terminator(stmt):
                fail(f"block {label} has a terminator before its end: {stmt}")
        term = block.body[-1]
        for target in term.get_targets() if hasattr(term, "get_targets") else ():
            if target not in labels:
                fail(f"block {label} jumps to missing block {target}")
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                defined.add(stmt.target.name)
    for label, block in blocks.items():
        for stmt in block.body:
            for var in stmt.list_vars():
                if var.name not in defined:
                    fail(f"block {label} reads undefined variable {var.name} in: {stmt}")
    entry = min(labels)
    for label, block in blocks.items():
        term = block.body[-1]
        if hasattr(term, "get_targets") and entry in term.get_targets():
            fail(f"the entry block {entry} has a predecessor ({label})")


def after_rewrite(blocks, where, arg_names=()):
    """Hook run after every rewrite, by every pass that makes IR: dump it if
    ``ADJIT_DUMP_IR`` asks, check its invariants if ``adjit.config.CHECKS`` is on."""
    if config.DUMP_IR:
        dump(blocks, where)
    if config.CHECKS:
        check_blocks(blocks, where, arg_names)
