"""Tuple concatenation and slicing become tuples built item by item; tuples merged by a
phi or passed on from call to call become item variables (``TuplesToItems``).

``t = a + b`` of two tuples and ``t = a[i:j]`` of a tuple have no rule of their own: a
concatenation has the ``+`` operator's, which is for numbers, and reverse mode found no
adjoint to pass on (``grad`` of ``(x, 2x) + (3x,)`` was zero). Rewritten as
``t = (a[0], ..., b[0], ...)``, both modes differentiate them as the constant-index reads
and the tuple built that they are.
"""
import operator

from numba.core import ir, types
from numba.core.ir_utils import replace_vars_stmt
from numba.core.typing import signature

from ..ir.builder import fresh_name
from ..ir.nodes import defining_stmts
from ..ir.value_types import is_float_array, is_nested_tuple
from .call_binding import unpack_tuple
from .effects import unpacked_array


def _tuple(fn, var):
    return isinstance(fn.typeof(var.name), types.BaseTuple)


class TupleOperationsToBuilds:
    """``t = a + b`` (tuples) and ``t = a[i:j]`` become ``t = (a[0], ..., b[0], ...)``."""

    name = "tuple_operations_to_builds"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                found = self.items(fn, block.scope, stmt)
                if found is not None:
                    reads, items = found
                    body.extend(reads)
                    fn.calltypes.pop(stmt.value, None)
                    stmt.value = ir.Expr.build_tuple(items, stmt.loc)
                body.append(stmt)
            block.body = body

    @staticmethod
    def items(fn, scope, stmt):
        """``(reads, items)`` that rebuild the tuple ``stmt`` makes, or None."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and _tuple(fn, stmt.target)):
            return None
        if (value.op == "binop" and value.fn is operator.add and _tuple(fn, value.lhs)
                and _tuple(fn, value.rhs)):
            reads = (unpack_tuple(fn, scope, value.lhs, stmt.loc)
                     + unpack_tuple(fn, scope, value.rhs, stmt.loc))
            return reads, [r.target for r in reads]
        if (value.op == "static_getitem" and isinstance(value.index, slice)
                and _tuple(fn, value.value)):
            reads = unpack_tuple(fn, scope, value.value, stmt.loc)
            kept = reads[value.index]
            return kept, [r.target for r in kept]
        return None


class UnpackedRowsToIndexing:
    """``a, b = A`` of an array: each unpacked item ``a = t[0]`` becomes the row view
    ``a = A[0]``, which both modes differentiate as a view (reverse mode had no rule for
    the rows of the unpacked tuple). The unpacking itself stays, and still checks that A
    has exactly as many rows."""

    name = "unpacked_rows_to_indexing"

    def run(self, fn):
        defs = defining_stmts(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                array = self.unpacked_from(fn, defs, stmt)
                if array is not None:
                    body.extend(self.row_read(fn, block.scope, stmt, array))
                body.append(stmt)
            block.body = body

    @staticmethod
    def unpacked_from(fn, defs, stmt):
        """The array whose row ``stmt`` reads out of its unpacked tuple, else None."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and value.op == "static_getitem"
                and isinstance(value.index, int) and value.index >= 0):
            return None
        array = unpacked_array(fn, value.value, defs)
        # (the elements of a 1-D array unpacked have their own rule)
        return array if array is not None and fn.typeof(array.name).ndim > 1 else None

    @staticmethod
    def row_read(fn, scope, stmt, array):
        """Point ``stmt`` at ``array[k]``; return the statement defining the index."""
        k, loc = stmt.value.index, stmt.loc
        row_type = fn.typeof(stmt.target.name)
        array_type = fn.typeof(array.name)
        if array_type.copy(ndim=array_type.ndim - 1, layout=row_type.layout) != row_type:
            return []
        index = ir.Var(scope, fresh_name("$row"), loc)
        fn.typemap[index.name] = types.intp
        read = ir.Expr.static_getitem(array, k, index, loc)
        fn.calltypes.pop(stmt.value, None)
        fn.calltypes[read] = signature(row_type, array_type, types.intp)
        stmt.value = read
        return [ir.Assign(ir.Const(k, loc), index, loc)]


def rewrite_builtin_calls(fn, builtin, nargs, rewrite):
    """Replace each plain call ``builtin(a, ...)`` of ``nargs`` positional arguments by
    what ``rewrite(fn, typing, scope, stmt, args)`` returns, ``(statements, value)``:
    the statements go before the call's, and ``value`` becomes its value. ``rewrite``
    returns None to leave a call as it is."""
    from numba.core.registry import cpu_target
    from ..ir.nodes import global_value
    typing = cpu_target.typing_context
    for block in fn.func_ir.blocks.values():
        body = []
        for stmt in block.body:
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if (isinstance(value, ir.Expr) and value.op == "call"
                    and len(value.args) == nargs and not value.kws and value.vararg is None
                    and global_value(fn.func_ir.blocks, value.func) is builtin):
                found = rewrite(fn, typing, block.scope, stmt, value.args)
                if found is not None:
                    body.extend(found[0])
                    fn.calltypes.pop(value, None)
                    stmt.value = found[1]
            body.append(stmt)
        block.body = body


class TupleSumToAdds:
    """``sum(t)`` of a tuple of numbers becomes ``t[0] + t[1] + ...``: no rule covers the
    builtin ``sum`` over a tuple, while both modes differentiate the constant-index reads
    and the additions (Python's ``0 +`` first changes only the sign of a zero)."""

    name = "tuple_sum_to_adds"

    def run(self, fn):
        rewrite_builtin_calls(fn, sum, 1, self.additions)

    @staticmethod
    def additions(fn, typing, scope, stmt, args):
        """The item reads and additions before ``stmt`` and the last addition, summing
        tuple ``args[0]`` into ``stmt``'s target (typed), or None when it is not a tuple
        of two or more numbers whose sum has the target's type."""
        tup = args[0]
        typ = fn.typeof(tup.name)
        if not (isinstance(typ, types.BaseTuple) and len(typ) > 1
                and all(isinstance(t, (types.Float, types.Integer)) for t in typ.types)):
            return None
        reads = unpack_tuple(fn, scope, tup, stmt.loc)
        out, acc = list(reads), reads[0].target
        for k, read in enumerate(reads[1:]):
            lt, rt = fn.typeof(acc.name), fn.typeof(read.target.name)
            sig = typing.resolve_function_type(operator.add, (lt, rt), {})
            add = ir.Expr.binop(operator.add, acc, read.target, stmt.loc)
            fn.calltypes[add] = sig
            if k == len(reads) - 2:
                if sig.return_type != fn.typeof(stmt.target.name):
                    return None
                return out, add
            acc = ir.Var(scope, fresh_name("$sum"), stmt.loc)
            fn.typemap[acc.name] = sig.return_type
            out.append(ir.Assign(add, acc, stmt.loc))
        return None


class DivmodToBuild:
    """``divmod(a, b)`` of numbers becomes the tuple ``(a // b, a % b)``, as Python defines
    it: the operators have rules (the quotient is piecewise constant), ``divmod`` none."""

    name = "divmod_to_build"

    def run(self, fn):
        rewrite_builtin_calls(fn, divmod, 2, self.parts)

    @staticmethod
    def parts(fn, typing, scope, stmt, args):
        """``q = a // b`` and ``r = a % b`` before ``stmt`` and the tuple of both, typed as
        ``divmod`` returns it, or None when the operands are not numbers or the types
        differ."""
        argtypes = tuple(fn.typeof(a.name) for a in args)
        target = fn.typeof(stmt.target.name)
        if not (all(isinstance(t, (types.Float, types.Integer)) for t in argtypes)
                and isinstance(target, types.BaseTuple) and len(target) == 2):
            return None
        out = []
        for op, typ in zip((operator.floordiv, operator.mod), target.types):
            sig = typing.resolve_function_type(op, argtypes, {})
            if sig is None or sig.return_type != typ:
                return None
            expr = ir.Expr.binop(op, args[0], args[1], stmt.loc)
            var = ir.Var(scope, fresh_name("$divmod"), stmt.loc)
            fn.typemap[var.name] = typ
            fn.calltypes[expr] = sig
            out.append(ir.Assign(expr, var, stmt.loc))
        return out, ir.Expr.build_tuple([a.target for a in out], stmt.loc)


def _flat_tuple(typ):
    """Whether ``typ`` is a non-empty tuple with no tuple inside."""
    return isinstance(typ, types.BaseTuple) and len(typ) > 0 and not is_nested_tuple(typ)


class TuplesToItems:
    """Tuples whose arrays reverse mode could not place become item variables:

    - a tuple a phi merges (``state = step(state, h)`` in a loop, a tuple picked in one
      branch or the other): ``t = phi(a, b)`` is ``t%k = phi(a%k, b%k)``, and every use
      of ``t`` other than ``t[k]`` reads a tuple built from the items just before it;
    - a tuple a call returned that is passed on to another call (``u = step(step(t))``):
      the call gets a tuple built from its items.

    Each such tuple ``a`` made once is read item by item where it is made,
    ``a%k = a[k]``, and its reads ``a[k]`` become ``a%k``, so each item is read once.
    Reverse mode knows where an array in a tuple comes from when the tuple is made once
    (built here, an argument, or a call's result) and read item by item; merged item by
    item, the arrays and floats are loop-carried values like any other. Nested tuples
    are left as they are."""

    name = "tuples_to_items"

    def run(self, fn):
        defs = defining_stmts(fn.func_ir.blocks)
        phis = self.tuple_phis(fn, defs)
        passed = self.passed_call_results(fn, defs)
        split = set(passed) | set(phis)
        for stmt in phis.values():
            split.update(v.name for v in stmt.value.incoming_values)
        if not split:
            return
        items = {}
        for name in split:
            items[name] = [fresh_name(f"{name}%item{k}") for k in range(len(fn.typeof(name)))]
            for item, t in zip(items[name], fn.typeof(name).types):
                fn.typemap[item] = t
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                body.extend(self.rewrite(fn, block.scope, stmt, phis, items))
            block.body = body

    @staticmethod
    def tuple_phis(fn, defs):
        """``{name: phi statement}`` of the phis of flat tuples whose incoming values are
        all variables assigned once, fed by no tuple phi left as it is."""
        found = {}
        for name, stmts in defs.items():
            value = stmts[0][1].value
            if not (len(stmts) == 1 and isinstance(value, ir.Expr) and value.op == "phi"
                    and _flat_tuple(fn.typeof(name))):
                continue
            if all(isinstance(v, ir.Var) and len(defs.get(v.name, ())) == 1
                   and _flat_tuple(fn.typeof(v.name))
                   and len(fn.typeof(v.name)) == len(fn.typeof(name))
                   for v in value.incoming_values):
                found[name] = stmts[0][1]

        def fed_by_other_phi(stmt):
            return any(getattr(defs[v.name][0][1].value, "op", None) == "phi"
                       and v.name not in found for v in stmt.value.incoming_values)
        while any(fed_by_other_phi(stmt) for stmt in found.values()):
            found = {n: s for n, s in found.items() if not fed_by_other_phi(s)}
        return found

    @staticmethod
    def passed_call_results(fn, defs):
        """Names of the flat tuples holding float arrays that a call returned (assigned
        once) and that are passed to a call."""
        passed = set()
        for block in fn.func_ir.blocks.values():
            for stmt in block.find_exprs("call"):
                passed.update(a.name for a in stmt.args)
        found = set()
        for name in passed:
            stmts = defs.get(name, ())
            typ = fn.typeof(name)
            if (len(stmts) == 1 and getattr(stmts[0][1].value, "op", None) == "call"
                    and _flat_tuple(typ) and any(is_float_array(t) for t in typ.types)):
                found.add(name)
        return found

    @staticmethod
    def rewrite(fn, scope, stmt, phis, items):
        """The statements replacing ``stmt``: a tuple phi as item phis; item reads of
        split tuples redirected to the items; a merged tuple (any use) or a split one
        passed to a call read as a tuple built from its items; a split tuple made here
        read item by item after it."""
        loc = stmt.loc
        target = stmt.target.name if isinstance(stmt, ir.Assign) else None
        if target in phis:
            out = []
            for k, name in enumerate(items[target]):
                phi = ir.Expr.phi(loc)
                phi.incoming_values = [ir.Var(scope, items[v.name][k], loc)
                                       for v in stmt.value.incoming_values]
                phi.incoming_blocks = list(stmt.value.incoming_blocks)
                out.append(ir.Assign(phi, ir.Var(scope, name, loc), loc))
            return out
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if (isinstance(value, ir.Expr) and value.op == "static_getitem"
                and isinstance(value.index, int) and value.value.name in items):
            names = items[value.value.name]
            if -len(names) <= value.index < len(names):
                fn.calltypes.pop(value, None)
                stmt.value = value = ir.Var(scope, names[value.index], loc)
        call_args = ({a.name for a in value.args}
                     if isinstance(value, ir.Expr) and value.op == "call" else set())
        out, rename = [], {}
        for var in stmt.list_vars():
            if var.name in rename or var.name == target or not (
                    var.name in phis or (var.name in items and var.name in call_args)):
                continue
            built = ir.Var(scope, fresh_name(f"{var.name}%built"), loc)
            fn.typemap[built.name] = fn.typeof(var.name)
            out.append(ir.Assign(ir.Expr.build_tuple(
                [ir.Var(scope, n, loc) for n in items[var.name]], loc), built, loc))
            rename[var.name] = built
        if rename:
            replace_vars_stmt(stmt, rename)
        out.append(stmt)
        if target in items:
            out.extend(ir.Assign(ir.Expr.static_getitem(stmt.target, k, None, loc),
                                 ir.Var(scope, name, loc), loc)
                       for k, name in enumerate(items[target]))
        return out
