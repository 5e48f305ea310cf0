"""An elementwise expression becomes one loop: summed (a fused sum) or kept (a fused map).

``np.sum(np.sin(x) * x)`` computes two whole temporaries and sums the second. Its
derivative kept them too: one loop and one temporary per operation going forward, and one
adjoint array per operation going back. ``FuseElementwiseSums`` rewrites the sum (or mean,
or ``.sum()``) of a tree of elementwise operations (NumPy ufuncs that have a scalar rule,
the arithmetic operators, comparisons) into a call of a generated helper: one loop over
the elements whose body is the tree's own statements applied to numbers
(``total += np.sin(a[i]) * a[i]``), built as Numba IR from a template loop nest
(``fused_loops``). adjit then derives that loop as any hand-written one: the gradient is
one loop and no temporaries. ``FuseElementwiseMaps`` does the same for a tree whose
array the code keeps (returned, stored, sliced, read by a call that is not
elementwise): one loop writing a new array of the primal's layout.

What is fused, so that the rewrite never changes what the code computes:
- every operation of the tree returns a float64 (or, for a comparison, boolean) array of
  the rank of the summed array (of a map's root, a new float64 array in C or Fortran
  order), and only the tree reads it (``d * d`` reads ``d`` twice; a map's root is
  read outside it);
- its operands are float64 arrays of that rank, numbers, or other operations of the tree
  (a lower-rank array, which broadcasts along trailing axes, makes its operation an
  operand, computed as written); ``%``, ``//`` and integer powers are left alone, as a
  number's integer power multiplies where an array's calls ``pow``;
- no statement between the tree's first operation and the sum (the root) writes memory,
  so reading the operands there reads the same values (a write cuts the tree: what
  comes before it is fused on its own, in a later round of ``normalise``);
- at least ``MIN_NODES`` operations and at most ``MAX_OPERANDS`` distinct operands
  (constants are copied into the loop).

Operands broadcast as NumPy's: an axis of length 1 is read at 0 (a step of 0 along it,
fixed before the loop), and shapes that do not broadcast raise ``ValueError``. The loop
adds in the order ``np.sum`` and ``np.mean`` do (memory order: C, or Fortran for a
Fortran result), so the value is the primal's to the bit; a map computes each element
as the array operations do. The helper is compiled with
``error_model="numpy"``: the array operations it replaces divide by zero to inf.
"""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target

from .. import config
from ..ir.builder import fresh_name
from ..ir.nodes import single_definition
from ..rules.classify import callee_object, elementwise_parts
from .fused_loops import REDUCTIONS, STEPS, fused_map_helper, fused_sum_helper

MAX_OPERANDS = 8
#: the fewest operations worth fusing. One alone (``np.sum(np.sin(x))``) has a rule whose
#: gradient computes nothing going forward and ``cos(x)`` in one vectorised loop going
#: back; its fused loop's forward sweep computed and recorded ``cos`` of each element
#: (``sum_sin_1000``'s gradient 1.16 -> 2.07 primal calls, hvp 1.83 -> 3.31)
MIN_NODES = 2


# ---- the pass -------------------------------------------------------------------------

#: values a statement between the tree and the sum may compute: none writes memory
_INERT_OPS = ("getattr", "static_getitem", "getitem", "build_tuple", "cast", "binop",
              "unary", "typed_getitem")


class FuseElementwiseSums:
    """``s = np.sum(<elementwise tree>)`` -> ``s = fused_sum(operands..., shape, steps...)``
    (``np.mean`` and ``.sum()`` too)."""

    name = "fuse_elementwise_sums"

    def run(self, fn):
        if not config.FUSE_SUMS:  # ``ADJIT_FUSE_SUMS=0``
            return
        uses = _use_counts(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Expr) and value.op == "call" and _is_sum(fn, value):
                    _Fusion(fn, block, stmt, uses).apply()


class FuseElementwiseMaps:
    """``t = <elementwise tree>`` kept as an array (returned, stored, read by something
    other than an elementwise operation) -> ``t = fused_map(operands..., shape,
    steps...)``: one loop writing a new array, where each operation made a temporary
    and its derivative an adjoint array. Runs after ``FuseElementwiseSums``, so a tree
    under a sum is a fused sum; the trees are taken from the last statement of a block
    back, so each is as large as it can be."""

    name = "fuse_elementwise_maps"

    def run(self, fn):
        if not config.FUSE_SUMS:  # ``ADJIT_FUSE_SUMS=0``
            return
        uses = _use_counts(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            for stmt in reversed(list(block.body)):
                if _maps_to_array(fn, stmt) and any(s is stmt for s in block.body):
                    _Fusion(fn, block, stmt, uses, root=stmt.target).apply()


def _maps_to_array(fn, stmt):
    """Whether ``stmt`` assigns an elementwise operation's new float64 array, of rank 1
    to 3 and C or Fortran order (what ``fused_map_helper`` makes)."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op in ("call", "binop", "unary")):
        return False
    typ = fn.typemap.get(stmt.target.name)
    if not (isinstance(typ, types.Array) and typ.dtype == types.float64
            and 1 <= typ.ndim <= 3 and typ.layout in ("C", "F") and typ.mutable):
        return False
    return elementwise_parts(fn, stmt.value) is not None


def _is_sum(fn, value):
    """Whether ``value`` is ``np.sum(a)`` or ``np.mean(a)`` of a float64 array of rank 1
    to 3."""
    if value.kws or value.vararg or value.varkwarg or len(value.args) != 1:
        return False
    if callee_object(fn, value.func) not in REDUCTIONS:
        return False
    typ = fn.typeof(value.args[0].name)
    return (isinstance(typ, types.Array) and typ.dtype == types.float64
            and 1 <= typ.ndim <= 3)


def _use_counts(blocks):
    """How many statements read each variable, not counting an attribute read nothing
    uses (``t.sum()`` leaves ``getattr(t, 'sum')`` behind once it is ``np.sum(t)``)."""
    counts = {}
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Del):
                continue
            for var in stmt.list_vars():
                if isinstance(stmt, ir.Assign) and var is stmt.target:
                    continue
                counts[var.name] = counts.get(var.name, 0) + 1
    for stmt in _dead_getattrs(blocks, counts):
        counts[stmt.value.value.name] -= 1
    return counts


def _dead_getattrs(blocks, counts):
    """The ``getattr`` statements whose result nothing reads."""
    return [s for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
            and s.value.op == "getattr" and not counts.get(s.target.name)]


def _pure_call(fn, value):
    """Whether ``value`` calls a NumPy ufunc or a ``math`` function (on numbers: the
    ``np.log(s)`` of ``np.log(s) * x``) or makes a slice, which writes nothing."""
    if value.op != "call" or value.kws or value.vararg:
        return False
    callee = callee_object(fn, value.func)
    if isinstance(callee, np.ufunc):
        return len(value.args) <= callee.nin  # not ``np.sin(x, out)``
    if callee is slice:  # the ``1:-1`` of ``u[1:-1]`` between two operations
        return True
    return getattr(callee, "__module__", None) == "math"


def _typed_steps(fn, scope, loc, array, rank, steps):
    """Typed statements ``s = _steps<rank>(array); s0 = s[0]; ...`` (appending the step
    variables to ``steps``): the helper takes each step as an argument."""
    callee = STEPS[rank]
    fnty = types.Dispatcher(callee)
    sig = cpu_target.typing_context.resolve_function_type(
        fnty, (fn.typeof(array.name),), {})
    func = ir.Var(scope, fresh_name("$steps_of"), loc)
    tup = ir.Var(scope, fresh_name(f"{array.name}%steps"), loc)
    call = ir.Expr.call(func, [array], (), loc)
    fn.typemap[func.name], fn.typemap[tup.name] = fnty, sig.return_type
    fn.calltypes[call] = sig
    stmts = [ir.Assign(ir.Global(callee.__name__, callee, loc), func, loc),
             ir.Assign(call, tup, loc)]
    for d in range(rank):
        step = ir.Var(scope, fresh_name(f"{array.name}%step{d}"), loc)
        fn.typemap[step.name] = types.intp
        stmts.append(ir.Assign(ir.Expr.static_getitem(tup, d, None, loc), step, loc))
        steps.append(step)
    return stmts


class _NotFusable(Exception):
    """An operand the loop cannot take (its operation is then an operand itself)."""


#: elementwise operators whose scalar form on numbers could differ from the array form
_LEFT_ALONE = (operator.mod, operator.floordiv)


class _Fusion:
    """The tree under one ``np.sum`` and its rewrite."""

    def __init__(self, fn, block, stmt, uses, root=None):
        self.fn, self.block, self.stmt, self.uses = fn, block, stmt, uses
        self.map = root is not None  # a fused map: ``stmt`` assigns the tree's root
        self.root = stmt.value.args[0] if root is None else root
        self.ndim = fn.typeof(self.root.name).ndim
        self.position = {id(s): k for k, s in enumerate(block.body)}
        self.defs = {s.target.name: s for s in block.body if isinstance(s, ir.Assign)}
        self.kept = set()  # operations read outside the tree: operands, not nodes

    def apply(self):
        """Rewrite the sum when its tree is worth fusing and can be; else leave it."""
        while True:
            self.nodes, self.fused, self.leaves, self.refs, self.reads = [], [], {}, {}, {}
            try:
                if self.visit(self.root)[0] != "node":
                    return
            except _NotFusable:
                return
            # an operation read twice (``t * t``) is one node, if every read is the tree's
            # (a map's root is read outside: that is what it is for)
            outside = {name for name, n in self.reads.items()
                       if n != self.uses.get(name, 0)
                       and not (self.map and name == self.root.name)}
            if not outside:
                break
            self.kept |= outside
        if len(self.nodes) < MIN_NODES or len(self.leaves) > MAX_OPERANDS:
            return
        if not self.nothing_written_between():
            return
        self.rewrite()

    def node_parts(self, var):
        """``(stmt, prim, operands)`` when ``var`` is an operation this tree can take in."""
        stmt = self.defs.get(var.name)
        if stmt is None or var.name in self.kept or (
                self.position[id(stmt)] >= self.position[id(self.stmt)]
                and not (self.map and stmt is self.stmt)):
            return None
        parts = elementwise_parts(self.fn, stmt.value)
        if parts is None or parts[0] in _LEFT_ALONE:
            return None
        result = self.fn.calltypes[stmt.value].return_type
        if result.ndim != self.ndim or result.dtype not in (types.float64, types.boolean):
            return None
        exponent = types.unliteral(self.fn.typeof(parts[1][-1].name))
        if parts[0] is operator.pow and not isinstance(exponent,
                                                      (types.Float, types.Array)):
            return None  # ``x ** 3``: a number's integer power multiplies; an array's, pow
        return stmt, parts[0], parts[1]

    def visit(self, var):
        """The loop body's reference to ``var``: a node of the tree or an operand."""
        if var.name in self.refs:  # a node read again
            self.reads[var.name] += 1
            return self.refs[var.name]
        parts = self.node_parts(var)
        if parts is not None:
            saved = (list(self.nodes), list(self.fused), dict(self.leaves),
                     dict(self.refs), dict(self.reads))
            try:
                stmt, prim, operands = parts
                refs = tuple(self.visit(a) for a in operands)
            except _NotFusable:  # its operands cannot be fused: it is an operand itself
                self.nodes, self.fused, self.leaves, self.refs, self.reads = saved
            else:
                self.nodes.append((stmt.value.op, prim, refs))
                self.fused.append(stmt)
                self.refs[var.name] = ("node", len(self.nodes) - 1)
                self.reads[var.name] = 1
                return self.refs[var.name]
        return self.operand(var)

    def operand(self, var):
        """The reference to an operand: a constant, or an argument of the helper."""
        const = single_definition(self.fn.func_ir.blocks, var.name)
        if isinstance(const, ir.Const) and type(const.value) in (float, int, bool):
            return ("const", type(const.value).__name__, const.value)
        typ = types.unliteral(self.fn.typeof(var.name))
        if isinstance(typ, types.Array):
            if typ.ndim != self.ndim or typ.dtype != types.float64:
                raise _NotFusable(var.name)
        elif not isinstance(typ, (types.Float, types.Integer, types.Boolean)):
            raise _NotFusable(var.name)
        self.leaves.setdefault(var.name, (len(self.leaves), var))
        return ("arg", self.leaves[var.name][0])

    def nothing_written_between(self):
        """Whether every statement from the tree's first operation to the sum computes a
        value without writing memory (the operands are read at the sum instead)."""
        fused = {id(s) for s in self.fused}
        first = min(self.position[id(s)] for s in self.fused)
        for stmt in self.block.body[first:self.position[id(self.stmt)]]:
            if id(stmt) in fused or isinstance(stmt, ir.Del):
                continue
            if not isinstance(stmt, ir.Assign):
                return False
            value = stmt.value
            if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var, ir.Arg)):
                continue
            if not isinstance(value, ir.Expr):
                return False
            if value.op not in _INERT_OPS and elementwise_parts(self.fn, value) is None \
                    and not _pure_call(self.fn, value):
                return False
        return True

    def rewrite(self):
        """Call the helper in place of ``np.sum`` (of a map's root operation) and drop
        the fused statements."""
        fn, block, loc = self.fn, self.block, self.stmt.loc
        operands = [var for _, var in sorted(self.leaves.values(), key=lambda p: p[0])]
        ranks = [getattr(types.unliteral(fn.typeof(v.name)), "ndim", 0) for v in operands]
        if self.ndim not in ranks:
            return  # numbers only (``x * 2.0`` of a 0-d read): no shape to loop over
        # ``np.sum`` and ``np.mean`` add in memory order; a map writes its result's
        fortran = fn.typeof(self.root.name).layout == "F" and self.ndim > 1
        tree = (tuple(self.nodes), (loc.filename, loc.line))
        if self.map:
            helper = fused_map_helper(tree, ranks, self.ndim, fortran)
            result = fn.typeof(self.root.name)
        else:
            helper = fused_sum_helper(tree, ranks, self.ndim, fortran,
                                      callee_object(fn, self.stmt.value.func))
            result = types.float64
        first_array = operands[ranks.index(self.ndim)]
        shape = ir.Var(block.scope, fresh_name(f"{first_array.name}%fshape"), loc)
        func = ir.Var(block.scope, fresh_name("$fused_map" if self.map else "$fused_sum"),
                      loc)
        shape_type = types.UniTuple(types.intp, self.ndim)
        fn.typemap[shape.name] = shape_type
        prologue = [ir.Assign(ir.Expr.getattr(first_array, "shape", loc), shape, loc)]
        steps = []
        for var, rank in zip(operands, ranks):
            if rank:
                prologue += _typed_steps(fn, block.scope, loc, var, rank, steps)
        args = operands + [shape] + steps
        fnty = types.Dispatcher(helper)
        argtypes = tuple(fn.typeof(a.name) for a in args)
        sig = cpu_target.typing_context.resolve_function_type(fnty, argtypes, {})
        if sig is None or sig.return_type != result:
            return
        at = block.body.index(self.stmt)
        block.body[at:at] = prologue + [
            ir.Assign(ir.Global(helper.__name__, helper, loc), func, loc)]
        fn.typemap[func.name] = fnty
        new = ir.Expr.call(func, args, (), loc)
        fn.calltypes.pop(self.stmt.value, None)
        fn.calltypes[new] = sig
        self.stmt.value = new
        dropped = [s for s in self.fused if s is not self.stmt]  # a map's root stays
        gone = {s.target.name for s in dropped}
        fused = {id(s) for s in dropped}
        block.body = [s for s in block.body if not (
            id(s) in fused
            or (isinstance(s, ir.Del) and s.value in gone)
            or (isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                and s.value.op == "getattr" and s.value.value.name in gone))]
