"""Classifying IR statements, shared by the forward- and reverse-mode handler tables."""
from numba.core import ir


def node_kind(stmt):
    """The handler key of a statement: the expression op, or the node class name."""
    if isinstance(stmt, ir.Assign):
        value = stmt.value
        if isinstance(value, ir.Expr):
            return value.op
        if isinstance(value, ir.Var):
            return "var"
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return "global"
        return type(value).__name__.lower()
    return type(stmt).__name__.lower()
