"""Normalisation: small statement-to-statement rewrites of the captured typed IR.

Each pass does one job so that the transform sees fewer node kinds. Passes keep the typemap
and calltypes consistent (a rewritten expression inherits the signature of the one it
replaces). ``NORMALISE`` lists them in order.
"""
from numba.core import ir, types

from .. import config
from ..ir.checks import check_blocks
from ..ir.printing import dump


class Pass:
    """A rewrite of a ``TypedFunction`` in place. Subclasses set ``name`` and ``run``."""

    name = "pass"

    def run(self, fn):
        raise NotImplementedError


class InplaceBinopToBinop(Pass):
    """``s += t`` on scalars is ``s = s + t``: one rule (the binop's) covers both forms."""

    name = "inplace_binop_to_binop"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "inplace_binop"):
                    continue
                if isinstance(fn.typeof(expr.lhs), types.Array):
                    continue  # a real in-place array update; the transform rejects it
                new = ir.Expr.binop(expr.immutable_fn, expr.lhs, expr.rhs, expr.loc)
                fn.calltypes[new] = fn.calltypes.pop(expr)
                stmt.value = new


class ResolveModuleAttributes(Pass):
    """``$f = getattr(math, 'sin')`` becomes ``$f = global(sin)``: calls then name the
    Python function directly, which is what rules are keyed by."""

    name = "resolve_module_attributes"

    def run(self, fn):
        values = {}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                if not isinstance(stmt, ir.Assign):
                    continue
                val = stmt.value
                if isinstance(val, (ir.Global, ir.FreeVar)):
                    values[stmt.target.name] = val.value
                elif (isinstance(val, ir.Expr) and val.op == "getattr"
                      and val.value.name in values
                      and isinstance(fn.typeof(val.value), types.Module)):
                    obj = getattr(values[val.value.name], val.attr)
                    stmt.value = ir.Global(val.attr, obj, val.loc)
                    values[stmt.target.name] = obj


class ForwardTupleItems(Pass):
    """``t = (a, b); c = t[0]`` becomes ``c = a``: tuples built and unpacked in the same
    function (swaps, multiple assignment) then need no tuple adjoints."""

    name = "forward_tuple_items"

    def run(self, fn):
        built = {}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                if not isinstance(stmt, ir.Assign):
                    continue
                val = stmt.value
                if isinstance(val, ir.Expr) and val.op == "build_tuple":
                    built[stmt.target.name] = val.items
                elif isinstance(val, ir.Expr) and val.op == "exhaust_iter":
                    if val.value.name in built:
                        built[stmt.target.name] = built[val.value.name]
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                val = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(val, ir.Expr) and val.op == "static_getitem"
                        and val.value.name in built and isinstance(val.index, int)):
                    items = built[val.value.name]
                    if -len(items) <= val.index < len(items):
                        stmt.value = items[val.index]
                        fn.calltypes.pop(val, None)


NORMALISE = [InplaceBinopToBinop(), ResolveModuleAttributes(), ForwardTupleItems()]


def normalise(fn):
    """Run every normalisation pass over ``fn`` (checks and dumps per the config)."""
    for p in NORMALISE:
        p.run(fn)
        after_rewrite(fn.func_ir.blocks, f"normalise:{p.name} of {fn.name}",
                      fn.func_ir.arg_names)
    return fn


def after_rewrite(blocks, where, arg_names=()):
    """Hook run after every rewrite: dump if asked, check invariants if on."""
    if config.DUMP_IR:
        dump(blocks, where)
    if config.CHECKS:
        check_blocks(blocks, where, arg_names)
