"""What one primal statement contributes to its reverse-mode derivative.

Mooncake's ``ADStmtInfo(line, comms_id, fwds, rvs)``: a reverse handler returns, for its
statement, the reverse statements it emitted and what the forward sweep must add around
the statement (values computed just before it, such as the element an array write
overwrites, and the derived forward pass that replaces a call). Nothing is left on the
context for another pass to find: ``ReversePass`` keeps the infos it was returned, and
``build_forward`` reads them.
"""
from dataclasses import dataclass, field

from ...ir.builder import Emitter


@dataclass
class StmtInfo:
    """The derivative of one statement: ``before`` holds ``(name, value)`` assignments
    the forward sweep makes just before the statement, ``forward_callee`` the derived
    program whose ``fwd`` the forward sweep calls instead of the primal callee, and
    ``reverse`` the reverse statements (in emission order)."""

    before: list = field(default_factory=list)
    forward_callee: object = None
    reverse: list = field(default_factory=list)


#: the info of a statement no handler touched
NOTHING = StmtInfo()


class StmtEmitter(Emitter):
    """The emitter a reverse handler writes with: reverse statements go into the reverse
    block, forward-sweep additions into the statement's ``info``."""

    def __init__(self, block, scope, loc, info):
        super().__init__(block, scope, loc)
        self.info = info

    def forward_before(self, name, value):
        """Have the forward sweep compute ``name = value`` just before the statement."""
        self.info.before.append((name, value))

    def forward_call(self, program):
        """Have the forward sweep call ``program.fwd`` (which records its tape) instead
        of the primal callee."""
        self.info.forward_callee = program
