"""Normalisation: small statement-to-statement rewrites of the captured typed IR.

Each pass does one job so that the transform sees fewer node kinds. Passes keep the typemap
and calltypes consistent (a rewritten expression inherits the signature of the one it
replaces). ``NORMALISE`` lists them in order.
"""
import collections

import numpy as np
from numba.core import ir, types

from ..ir.builder import fresh_name
from .array_iteration import IndexArrayIteration
from .call_binding import (BindCallArguments, CallNumberClassGlobals, CastToExplicitSignature,
                           JitableFunctionsToDispatchers)
from .composites import CompositesToHelpers
from .effects import call_writes
from .fused_sums import FuseElementwiseMaps, FuseElementwiseSums
from .comprehensions import ArrayLiteralToWrites, ComprehensionToEmpty, ListOperandsToArrays
from .list_iteration import IndexListIteration, IndexTupleIteration
from .inplace_arrays import (DropSelfSliceWrites, EllipsisWriteToSliceWrite, FillToSliceWrite,
                             InplaceArrayToSliceWrite, OutArgumentToSliceWrite,
                             SortToSliceWrite)
from .selection import (GatherReadsToTake, MixedReadsToTake, MixedWritesToViewWrites,
                        TakeAlongAxisToGather)
from .stencils import StencilToHelper
from .methods import (ContiguousAliases, FlatIterationToRavel, JitclassMethodsToCalls,
                      MethodsToFunctions)
from .vectorize import VectorizeToLoops
from .tuple_builds import (DivmodToBuild, TuplesToItems, TupleOperationsToBuilds,
                           TupleSumToAdds, UnpackedRowsToIndexing)
from .zero_dim import ZERO_DIM
from ..ir.checks import after_rewrite
from ..ir.nodes import global_value


class Pass:
    """A rewrite of a ``TypedFunction`` in place. Subclasses set ``name`` and ``run``."""

    name = "pass"

    def run(self, fn):
        raise NotImplementedError


class InplaceBinopToBinop(Pass):
    """``s += t`` on scalars is ``s = s + t``: one rule (the binop's) covers both forms.
    On arrays ``a += b`` is a slice write (``InplaceArrayToSliceWrite``), except in adjit's
    generated code, whose shadow updates forward mode handles as they are."""

    name = "inplace_binop_to_binop"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "inplace_binop"):
                    continue
                if isinstance(fn.typeof(expr.lhs), types.Array):
                    continue  # a real in-place array update
                new = ir.Expr.binop(expr.immutable_fn, expr.lhs, expr.rhs, expr.loc)
                fn.calltypes[new] = fn.calltypes.pop(expr)
                stmt.value = new


class UnknownStaticIndexToGetitem(Pass):
    """``static_getitem`` whose constant index Numba could not fully know (``None`` in
    place of a value: ``X[i, 0]`` in a comprehension, where ``i`` is a variable of the
    enclosing loop) becomes the ``getitem`` of its index variable. Numba types and runs it
    that way (the static form has no implementation for arrays), but a rule reading the
    constant would take ``None`` for ``np.newaxis``, and the tangent of ``X[i]`` was
    ``X%dot[None]``."""

    name = "unknown_static_index_to_getitem"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "static_getitem"
                        and expr.index_var is not None
                        and fn.calltypes.get(expr) is not None):
                    continue
                index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
                if any(k is None for k in index):
                    new = ir.Expr.getitem(expr.value, expr.index_var, expr.loc)
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
    function (swaps, multiple assignment) then need no tuple adjoints. A tuple (and its
    unpacking iterator) that nothing reads afterwards is removed, so a tuple of arrays
    that was only unpacked (``w, v = np.linalg.eigh(a)``) needs no adjoint either."""

    name = "forward_tuple_items"

    def run(self, fn):
        built = {}
        while self.forward(fn, built):  # (i, (a, b)): an item forwarded may be a tuple
            pass
        self.drop_unread(fn, set(built))

    @staticmethod
    def forward(fn, built):
        """One round: note the tuples built (and their unpacking iterators and copies),
        each assigned once, then forward their items; whether anything was forwarded."""
        blocks = fn.func_ir.blocks.values()
        assigns = [stmt for block in blocks for stmt in block.find_insts(ir.Assign)]
        counts = collections.Counter(stmt.target.name for stmt in assigns)
        for stmt in assigns:
            val, name = stmt.value, stmt.target.name
            if counts[name] != 1:
                continue
            if isinstance(val, ir.Expr) and val.op == "build_tuple":
                built[name] = val.items
            elif isinstance(val, ir.Expr) and val.op == "exhaust_iter" and val.value.name in built:
                built[name] = built[val.value.name]
            elif isinstance(val, ir.Var) and val.name in built:
                built[name] = built[val.name]
        changed = False
        for stmt in assigns:
            val = stmt.value
            if (isinstance(val, ir.Expr) and val.op == "static_getitem"
                    and val.value.name in built and isinstance(val.index, int)):
                items = built[val.value.name]
                if -len(items) <= val.index < len(items):
                    stmt.value = items[val.index]
                    fn.calltypes.pop(val, None)
                    changed = True
        return changed

    @staticmethod
    def drop_unread(fn, names):
        """Remove the definitions of the tuples in ``names`` that nothing reads, first
        the unpacking iterators, then the tuples they unpacked."""
        blocks = fn.func_ir.blocks.values()
        for _ in range(2):
            read = {v.name for b in blocks for s in b.body for v in s.list_vars()
                    if not (isinstance(s, ir.Assign) and v is s.target)}
            for block in blocks:
                block.body = [s for s in block.body
                              if not (isinstance(s, ir.Assign) and s.target.name in names
                                      and s.target.name not in read)]


class NestVariadicMinMax(Pass):
    """``max(a, b, c)`` becomes ``max(max(a, b), c)``: the two-argument rule covers every
    arity, with Python's tie-breaking (the first maximal argument wins)."""

    name = "nest_variadic_min_max"

    def run(self, fn):
        from numba.core import typing
        from numba.core.registry import cpu_target
        unify = cpu_target.typing_context.unify_pairs
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                val = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(val, ir.Expr) and val.op == "call" and len(val.args) > 2
                        and global_value(fn.func_ir.blocks, val.func) in (min, max)
                        and all(isinstance(fn.typeof(a), types.Number) for a in val.args)):
                    acc = val.args[0]
                    for arg in val.args[1:-1]:
                        tmp = ir.Var(block.scope, fresh_name("minmax"), stmt.loc)
                        typ = unify(fn.typeof(acc), fn.typeof(arg))
                        call = ir.Expr.call(val.func, [acc, arg], (), stmt.loc)
                        fn.typemap[tmp.name] = typ
                        fn.calltypes[call] = typing.signature(typ, fn.typeof(acc),
                                                              fn.typeof(arg))
                        body.append(ir.Assign(call, tmp, stmt.loc))
                        acc = tmp
                    val.args = [acc, val.args[-1]]
                body.append(stmt)
            block.body = body


class WholeArrayAxisReduction(Pass):
    """``np.sum(v, axis=-1)`` (or ``axis=0``, or ``v.sum(axis=0)``) of a 1-D array is
    ``np.sum(v)``, as code written for N-D inputs uses it: the whole-array reduction rule
    then covers it."""

    name = "whole_array_axis_reduction"

    def run(self, fn):
        from numba.core.registry import cpu_target
        reductions = (np.sum,)  # (Numba has no axis= for the other reductions)
        consts = {s.target.name: s.value.value for b in fn.func_ir.blocks.values()
                  for s in b.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                val = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(val, ir.Expr) and val.op == "call" and val.args
                        and global_value(fn.func_ir.blocks, val.func) in reductions):
                    continue
                kws = dict(val.kws)
                axis = (val.args[1] if len(val.args) == 2 and not kws else
                        kws.get("axis") if len(val.args) == 1 and list(kws) == ["axis"]
                        else None)
                arr = fn.typeof(val.args[0].name)
                if (axis is None or consts.get(axis.name) not in (0, -1)
                        or not (isinstance(arr, types.Array) and arr.ndim == 1)):
                    continue
                sig = cpu_target.typing_context.resolve_function_type(
                    fn.typeof(val.func.name), (arr,), {})
                if sig is None or sig.return_type != fn.typeof(stmt.target.name):
                    continue
                new = ir.Expr.call(val.func, [val.args[0]], (), val.loc)
                fn.calltypes.pop(val, None)
                fn.calltypes[new] = sig
                stmt.value = new


def _is_float_or_float_array(typ):
    return isinstance(typ, types.Float) or (isinstance(typ, types.Array)
                                            and isinstance(typ.dtype, types.Float))


class SquareToMultiply(Pass):
    """``a ** 2`` becomes ``a * a`` for a float or a float array (whose square has its own
    type): its rules are then a product's, instead of a general power's ``b * a ** (b -
    1)`` and ``log`` terms (``simple_mlp``'s ``(Y - P) ** 2`` computed ``P ** 1`` by an
    integer-power loop for every element of its adjoint). On a scalar the two are
    bit-identical, and Numba's ``** 2`` of an array gives the products too (checked on
    10^6 random values)."""

    name = "square_to_multiply"

    def run(self, fn):
        import operator
        consts = {}
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Const):
                    consts[stmt.target.name] = stmt.value.value
        for block in fn.func_ir.blocks.values():
            for stmt in block.body:
                val = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(val, ir.Expr) and val.op == "binop" and val.fn is operator.pow
                        and _is_float_or_float_array(fn.typeof(val.lhs))
                        and fn.typeof(stmt.target) == fn.typeof(val.lhs)
                        and type(consts.get(val.rhs.name)) in (int, float)
                        and consts.get(val.rhs.name) == 2):
                    new = ir.Expr.binop(operator.mul, val.lhs, val.lhs, val.loc)
                    sig = fn.calltypes.pop(val)
                    fn.calltypes[new] = sig.replace(args=(sig.args[0], sig.args[0]))
                    stmt.value = new


class CommonElementReads(Pass):
    """A second ``x[i]`` in the same block, with nothing in between that may write an
    array, becomes a copy of the first read. The reverse pass then adds the element's
    adjoint into the shadow once instead of once per read (each a load and a store that
    the next one waits on), and forward mode reads the tangent element once."""

    name = "common_element_reads"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            seen = {}  # (array, index) -> var holding the element
            for stmt in block.body:
                if not isinstance(stmt, ir.Assign):
                    if not isinstance(stmt, (ir.Del, ir.Jump, ir.Branch, ir.Return)):
                        seen.clear()  # setitem and friends: any array may have changed
                    continue
                key = self.element_key(fn, stmt)
                if self.may_write(fn, stmt.value):
                    seen.clear()
                name = stmt.target.name
                seen = {k: v for k, v in seen.items() if name not in k and v.name != name}
                if key is None:
                    continue
                if key in seen and fn.typeof(seen[key]) == fn.typeof(stmt.target):
                    stmt.value = ir.Var(seen[key].scope, seen[key].name, stmt.loc)
                elif key not in seen and name not in key:
                    seen[key] = stmt.target

    @staticmethod
    def element_key(fn, stmt):
        """``(array, index)`` names of a scalar element read, else None."""
        val = stmt.value
        if not (isinstance(val, ir.Expr) and val.op in ("getitem", "static_getitem")):
            return None
        if not (isinstance(fn.typeof(val.value), types.Array)
                and isinstance(fn.typeof(stmt.target), (types.Number, types.Boolean))):
            return None
        index = val.index.name if val.op == "getitem" else repr(val.index)
        return (val.value.name, index)

    @staticmethod
    def may_write(fn, val):
        """Whether evaluating ``val`` may write an array: an in-place operator, or a call
        that may write one of its array arguments or its receiver (``w.sort()``)."""
        if not isinstance(val, ir.Expr):
            return False
        if val.op == "inplace_binop":
            return True
        return val.op == "call" and (bool(val.vararg) or bool(call_writes(fn, val)))


NORMALISE = [UnknownStaticIndexToGetitem(), ContiguousAliases(), InplaceArrayToSliceWrite(), DropSelfSliceWrites(), EllipsisWriteToSliceWrite(),
             FillToSliceWrite(), SortToSliceWrite(), OutArgumentToSliceWrite(),
             InplaceBinopToBinop(), ResolveModuleAttributes(), StencilToHelper(),
             ComprehensionToEmpty(), ListOperandsToArrays(), ArrayLiteralToWrites(), GatherReadsToTake(),
             MixedReadsToTake(), MixedWritesToViewWrites(), TakeAlongAxisToGather(),
             MethodsToFunctions(), JitclassMethodsToCalls(),
             JitableFunctionsToDispatchers(), BindCallArguments(), CastToExplicitSignature(),
             CallNumberClassGlobals(), CompositesToHelpers(),
             *ZERO_DIM, VectorizeToLoops(),
             FlatIterationToRavel(), IndexArrayIteration(), IndexListIteration(),
             IndexTupleIteration(), TupleOperationsToBuilds(), TupleSumToAdds(),
             DivmodToBuild(), UnpackedRowsToIndexing(), TuplesToItems(),
             ForwardTupleItems(), NestVariadicMinMax(), WholeArrayAxisReduction(),
             SquareToMultiply(), FuseElementwiseSums(), FuseElementwiseMaps(),
             CommonElementReads()]


def normalise(fn):
    """Run the normalisation passes over ``fn`` (checks and dumps per the config) until a
    round of them changes nothing, once per captured IR: ``capture`` hands every caller
    the same typed IR, which the passes edit in place, and a round is not always
    idempotent (a fusion rejected for a statement between its operations can succeed
    once a smaller fusion has moved them), so every analysis of one derivative must see
    the same, final IR."""
    if fn.extra.get("normalised"):
        return fn
    before = _statements(fn)
    for _ in range(MAX_ROUNDS):
        for p in NORMALISE:
            p.run(fn)
            after_rewrite(fn.func_ir.blocks, f"normalise:{p.name} of {fn.name}",
                          fn.func_ir.arg_names)
        after = _statements(fn)
        if after == before:
            break
        before = after
    fn.extra["normalised"] = True
    return fn


#: the most rounds of the passes ``normalise`` runs: a pass may leave what an earlier
#: pass of the list would rewrite (a tuple forwarded once another pass made it a
#: build), so the list runs until a round changes nothing
MAX_ROUNDS = 4


def _statements(fn):
    """The IR as text, to tell whether a round of the passes changed it."""
    return [str(stmt) for label in sorted(fn.func_ir.blocks)
            for stmt in fn.func_ir.blocks[label].body]


