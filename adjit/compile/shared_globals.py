"""One global per callee in generated code, instead of one per call.

Generated code loads its callee before every call (``$adjoint_product_chain%15 =
global(...)``), so a reverse sweep of 400 products loads the same intrinsic 800 times,
and Numba types and lowers each load: in ``large_single_block``'s reverse pass, a fifth
of its statements. Before compiling, every callee loaded more than once is loaded once at
the top of the entry block (which dominates every use) and its calls use that variable.

Only a global that is used as the function of calls and nowhere else is shared, and the
builder's blocks are left as they are (adjit captures them again for forward-over-reverse,
and shows them): rewritten blocks and calls are new objects.
"""
from collections import Counter

from numba.core import ir

from ..ir.builder import clone_value


def share_call_globals(blocks):
    """``blocks`` with each repeatedly loaded callee loaded once, in the entry block."""
    shared = _shareable(blocks)
    if not shared:
        return blocks
    entry = min(blocks)
    scope, loc = blocks[entry].scope, blocks[entry].loc
    hoisted, rename = [], {}
    for members in shared.values():
        first = members[0].value
        var = scope.redefine(f"${first.name}", loc)
        hoisted.append(ir.Assign(ir.Global(first.name, first.value, loc), var, loc))
        rename.update((stmt.target.name, var) for stmt in members)
    rewritten = {}
    for label, block in blocks.items():
        body = list(hoisted) if label == entry else []
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name in rename:
                continue  # the load, now hoisted
            value = getattr(stmt, "value", None)
            if isinstance(value, ir.Expr) and value.op == "call" and value.func.name in rename:
                call = clone_value(value)
                call.func = rename[value.func.name]
                stmt = ir.Assign(call, stmt.target, stmt.loc)
            body.append(stmt)
        rewritten[label] = ir.Block(block.scope, block.loc)
        rewritten[label].body = body
    return rewritten


def _shareable(blocks):
    """``{id(callee): [its loads]}`` for callees loaded more than once, each load assigned
    once and used only as the function of calls."""
    loads, assigned, as_callee, uses = {}, Counter(), Counter(), Counter()
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                assigned[stmt.target.name] += 1
                if isinstance(stmt.value, ir.Global) and callable(stmt.value.value):
                    loads[stmt.target.name] = stmt
                if isinstance(stmt.value, ir.Expr) and stmt.value.op == "call":
                    as_callee[stmt.value.func.name] += 1
            for var in stmt.list_vars():
                uses[var.name] += 1
    groups = {}
    for name, stmt in loads.items():
        # list_vars counts the assignment's own target once
        if assigned[name] == 1 and uses[name] - 1 == as_callee[name] > 0:
            groups.setdefault(id(stmt.value.value), []).append(stmt)
    return {key: members for key, members in groups.items() if len(members) > 1}
