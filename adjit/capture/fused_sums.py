"""``np.sum`` or ``np.mean`` of an elementwise expression becomes one loop.

``np.sum(np.sin(x) * x)`` computes two whole temporaries and sums the second. Its
derivative kept them too: one loop and one temporary per operation going forward, and one
adjoint array per operation going back. ``FuseElementwiseSums`` rewrites the sum (or mean,
or ``.sum()``) of a tree of elementwise operations (NumPy ufuncs that have a scalar rule,
the arithmetic operators, comparisons) into a call of a generated helper: one loop over
the elements whose body is the tree's own statements applied to numbers
(``total += np.sin(a[i]) * a[i]``), built as Numba IR from a template loop nest
(``_loops_*``). adjit then derives that loop as any hand-written one: the gradient is one
loop and no temporaries.

What is fused, so that the rewrite never changes what the code computes:
- every operation of the tree returns a float64 (or, for a comparison, boolean) array of
  the rank of the summed array, and only the tree reads it (``d * d`` reads ``d`` twice);
- its operands are float64 arrays of that rank, numbers, or other operations of the tree
  (a lower-rank array, which broadcasts along trailing axes, makes its operation an
  operand, computed as written); ``%``, ``//`` and integer powers are left alone, as a
  number's integer power multiplies where an array's calls ``pow``;
- no statement between the tree's first operation and the sum writes memory, so reading
  the operands at the sum reads the same values;
- at least ``MIN_NODES`` operations and at most ``MAX_OPERANDS`` distinct operands
  (constants are copied into the loop).

Operands broadcast as NumPy's: an axis of length 1 is read at 0 (a step of 0 along it,
fixed before the loop), and shapes that do not broadcast raise ``ValueError``. The loop
adds in the order ``np.sum`` and ``np.mean`` do (memory order: C, or Fortran for a
Fortran result), so the value is the primal's to the bit. The helper is compiled with
``error_model="numpy"``: the array operations it replaces divide by zero to inf.
"""
import operator
import threading

import numpy as np
from numba.core import ir, ssa, types
from numba.core.compiler import run_frontend
from numba.core.registry import cpu_target

from .. import config
from ..compile.caches import owned_cache
from ..compile.dispatcher import generated_dispatcher
from ..compile.inline_library import internal_jit
from ..ir.builder import fresh_name
from ..ir.nodes import single_definition
from ..rules.classify import callee_object, elementwise_parts
from .vectorize import fit_shape

MAX_OPERANDS = 8
#: the fewest operations worth fusing. One alone (``np.sum(np.sin(x))``) has a rule whose
#: gradient computes nothing going forward and ``cos(x)`` in one vectorised loop going
#: back; its fused loop's forward sweep computed and recorded ``cos`` of each element
#: (``sum_sin_1000``'s gradient 1.16 -> 2.07 primal calls, hvp 1.83 -> 3.31)
MIN_NODES = 2

_lock = threading.RLock()
_helpers = owned_cache("fused_sum_helper")


# ---- the operands' shapes: broadcast as NumPy's, a step of 0 along an axis of length 1 ---

@internal_jit
def _steps1(a):
    """Steps of a 1-D operand: 0 along an axis of length 1 (broadcast), else 1. (A step,
    not a conditional index in the loop, whose branch a derivative would record per
    element.)"""
    return (0 if a.shape[0] == 1 else 1,)


@internal_jit
def _steps2(a):
    return (0 if a.shape[0] == 1 else 1, 0 if a.shape[1] == 1 else 1)


@internal_jit
def _steps3(a):
    return (0 if a.shape[0] == 1 else 1, 0 if a.shape[1] == 1 else 1,
            0 if a.shape[2] == 1 else 1)


_STEPS = {1: _steps1, 2: _steps2, 3: _steps3}


# ---- the loops: templates whose placeholder call becomes the element's computation ------

def _element(i, j, k):
    """Placeholder in the templates: where the operands are read and the tree computed."""


def _finish(total, shape):
    """Placeholder in the templates: the result from the total (``_FINISH``)."""


@internal_jit
def _total(total, shape):
    """``np.sum``'s result: the total."""
    return total


@internal_jit
def _mean(total, shape):
    """``np.mean``'s result: the total over the count (NaN for no elements, as Numba's)."""
    size = 1
    for n in shape:
        size *= n
    if size == 0:
        return np.nan
    return total / size


#: the reduction -> what its result is made of the total
_FINISH = {np.sum: _total, np.mean: _mean}


def _loops_1d(shape):
    total = 0.0
    for i in range(shape[0]):
        total += _element(i, 0, 0)
    return _finish(total, shape)


def _loops_2d(shape):
    total = 0.0
    for i in range(shape[0]):
        for j in range(shape[1]):
            total += _element(i, j, 0)
    return _finish(total, shape)


def _loops_2d_fortran(shape):
    total = 0.0
    for j in range(shape[1]):
        for i in range(shape[0]):
            total += _element(i, j, 0)
    return _finish(total, shape)


def _loops_3d(shape):
    total = 0.0
    for i in range(shape[0]):
        for j in range(shape[1]):
            for k in range(shape[2]):
                total += _element(i, j, k)
    return _finish(total, shape)


def _loops_3d_fortran(shape):
    total = 0.0
    for k in range(shape[2]):
        for j in range(shape[1]):
            for i in range(shape[0]):
                total += _element(i, j, k)
    return _finish(total, shape)


#: (rank, Fortran order) -> the loop nest, adding in the order ``np.sum`` reads memory
_LOOPS = {(1, False): _loops_1d, (1, True): _loops_1d, (2, False): _loops_2d,
          (2, True): _loops_2d_fortran, (3, False): _loops_3d, (3, True): _loops_3d_fortran}


def fused_sum_helper(tree, ranks, ndim, fortran, reduction=np.sum):
    """The helper ``(operands..., shape, steps...) -> sum`` adding the statements of
    ``tree`` (``_tree_stmts``) over operands of ``ranks`` (0 for a number), for a
    result of rank ``ndim`` (cached): a generated plain function, derived as any loop.
    ``reduction`` (``np.sum`` or ``np.mean``) says what it returns of the total."""
    key = (tree, tuple(ranks), ndim, fortran, reduction)
    with _lock:
        if key not in _helpers:
            names = [f"a{k}" for k in range(len(ranks))] + ["shape"] + [
                f"step{k}_{d}" for k, rank in enumerate(ranks) for d in range(rank)]

            def build(argtypes):
                return _helper_blocks(_LOOPS[ndim, fortran], tree, ranks, ndim,
                                      _FINISH[reduction])
            # the array operations it replaces divide by zero to inf, not raise
            _helpers[key] = generated_dispatcher("fused_sum", names, build, plain=True,
                                                 internal=True,
                                                 options={"error_model": "numpy"})
        return _helpers[key]


def _helper_blocks(template, tree, ranks, ndim, finish):
    """The template's IR with the operands as arguments, their shapes broadcast before
    the loops, each element read and the tree computed on them in the loop body (as a
    hand-written loop: no call per element), and the result made by ``finish``."""
    func_ir = run_frontend(template)
    placeholders = {}
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Global) and \
                    stmt.value.value in (_element, _finish):
                placeholders[stmt.target.name] = stmt.value.value
                if stmt.value.value is _finish:
                    stmt.value = ir.Global(finish.__name__, finish, stmt.loc)
    operands, steps = _arguments(func_ir.blocks[min(func_ir.blocks)], ranks)
    scope, loc = operands[0].scope, operands[0].loc
    for block in func_ir.blocks.values():
        for n, stmt in enumerate(block.body):
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op == "call" and \
                    placeholders.get(stmt.value.func.name) is _element:
                reads, elements = _element_reads(scope, loc, operands, steps,
                                                 stmt.value.args[:ndim])
                block.body[n:n + 1] = reads + _tree_stmts(tree, scope, elements,
                                                          stmt.target)
                break
    for block in func_ir.blocks.values():  # the placeholder itself, a Python function
        block.body = [s for s in block.body if not (
            isinstance(s, ir.Assign) and placeholders.get(s.target.name) is _element)]
    ssa.reconstruct_ssa(func_ir)
    return func_ir.blocks


def _arguments(entry, ranks):
    """Make the template's entry take the operands, the shape and each array operand's
    steps as arguments, and broadcast the shape with the operands'
    (``vectorize.fit_shape``). Returns the operand variables and ``{operand: [step per
    axis]}``. The steps are arguments because a derivative reads an argument anywhere,
    where a value computed here would be recorded with every element."""
    scope, loc = entry.scope, entry.loc
    (shape_arg,) = [s for s in entry.body if isinstance(s, ir.Assign)
                    and isinstance(s.value, ir.Arg)]
    shape = shape_arg.target
    operands = [ir.Var(scope, f"a{k}", loc) for k in range(len(ranks))]
    prologue = [ir.Assign(ir.Arg(v.name, k, loc), v, loc) for k, v in enumerate(operands)]
    prologue.append(ir.Assign(ir.Arg("shape", len(ranks), loc), shape, loc))
    steps, index = {}, len(ranks) + 1
    for k, rank in enumerate(ranks):
        if rank:
            prologue += _called(scope, loc, fit_shape, [operands[k], shape], shape)
            steps[k] = [ir.Var(scope, f"step{k}_{d}", loc) for d in range(rank)]
            for var in steps[k]:
                prologue.append(ir.Assign(ir.Arg(var.name, index, loc), var, loc))
                index += 1
    at = entry.body.index(shape_arg)
    entry.body[at:at + 1] = prologue
    return operands, steps


def _called(scope, loc, callee, args, target):
    """Statements ``target = callee(*args)``."""
    func = ir.Var(scope, fresh_name("$fused_callee"), loc)
    return [ir.Assign(ir.Global(callee.__name__, callee, loc), func, loc),
            ir.Assign(ir.Expr.call(func, list(args), (), loc), target, loc)]


def _element_reads(scope, loc, operands, steps, positions):
    """Statements reading each operand at ``positions`` (a number is itself): the index
    along each axis is the position times the operand's step (read before the loops, so
    a derivative records nothing per element for it). Returns them and the variables
    holding the elements."""
    stmts, elements = [], []
    for k, var in enumerate(operands):
        if k not in steps:
            elements.append(var)
            continue
        index = []
        for d, position in enumerate(positions):
            step = steps[k][d]
            at = ir.Var(scope, fresh_name(f"$at{k}_{d}"), loc)
            stmts.append(ir.Assign(ir.Expr.binop(operator.mul, position, step, loc), at,
                                   loc))
            index.append(at)
        if len(index) > 1:
            tup = ir.Var(scope, fresh_name(f"$index{k}"), loc)
            stmts.append(ir.Assign(ir.Expr.build_tuple(index, loc), tup, loc))
            index = [tup]
        element = ir.Var(scope, fresh_name(f"$element{k}"), loc)
        stmts.append(ir.Assign(ir.Expr.getitem(var, index[0], loc), element, loc))
        elements.append(element)
    return stmts, elements


# ---- the tree's statements, on numbers ------------------------------------------------

def _tree_stmts(tree, scope, elements, target):
    """Statements computing the tree on numbers into ``target``, its operands read from
    ``elements``. ``tree`` is ``(nodes, loc)``: each node is ``(op, primitive, operand
    refs)`` in evaluation order, a ref ``("arg", k)``, ``("node", n)`` or ``("const",
    type name, value)``; the last node is the result, ``loc`` the sum's ``(file, line)``,
    which messages about these statements name."""
    nodes, loc = tree[0], ir.Loc(*tree[1])
    stmts, results = [], []
    for op, fn, refs in nodes:
        operands = []
        for ref in refs:
            if ref[0] == "arg":
                operands.append(elements[ref[1]])
            elif ref[0] == "node":
                operands.append(results[ref[1]])
            else:
                var = ir.Var(scope, fresh_name("$fused_const"), loc)
                stmts.append(ir.Assign(ir.Const(ref[2], loc), var, loc))
                operands.append(var)
        result = ir.Var(scope, fresh_name("$fused"), loc)
        stmts.append(ir.Assign(_node_expr(scope, stmts, op, fn, operands, loc), result,
                               loc))
        results.append(result)
    stmts.append(ir.Assign(results[-1], target, loc))
    return stmts


def _node_expr(scope, stmts, op, fn, operands, loc):
    """The expression of one node on numbers (a ufunc is called on them)."""
    if op == "binop":
        return ir.Expr.binop(fn, operands[0], operands[1], loc)
    if op == "unary":
        return ir.Expr.unary(fn, operands[0], loc)
    func = ir.Var(scope, fresh_name("$fused_fn"), loc)
    stmts.append(ir.Assign(ir.Global(fn.__name__, fn, loc), func, loc))
    return ir.Expr.call(func, operands, (), loc)


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


def _is_sum(fn, value):
    """Whether ``value`` is ``np.sum(a)`` or ``np.mean(a)`` of a float64 array of rank 1
    to 3."""
    if value.kws or value.vararg or value.varkwarg or len(value.args) != 1:
        return False
    if callee_object(fn, value.func) not in _FINISH:
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
    ``np.log(s)`` of ``np.log(s) * x``), which writes nothing."""
    if value.op != "call" or value.kws or value.vararg:
        return False
    callee = callee_object(fn, value.func)
    if isinstance(callee, np.ufunc):
        return len(value.args) <= callee.nin  # not ``np.sin(x, out)``
    return getattr(callee, "__module__", None) == "math"


def _typed_steps(fn, scope, loc, array, rank, steps):
    """Typed statements ``s = _steps<rank>(array); s0 = s[0]; ...`` (appending the step
    variables to ``steps``): the helper takes each step as an argument."""
    callee = _STEPS[rank]
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

    def __init__(self, fn, block, stmt, uses):
        self.fn, self.block, self.stmt, self.uses = fn, block, stmt, uses
        self.summed = stmt.value.args[0]
        self.ndim = fn.typeof(self.summed.name).ndim
        self.position = {id(s): k for k, s in enumerate(block.body)}
        self.defs = {s.target.name: s for s in block.body if isinstance(s, ir.Assign)}
        self.kept = set()  # operations read outside the tree: operands, not nodes

    def apply(self):
        """Rewrite the sum when its tree is worth fusing and can be; else leave it."""
        while True:
            self.nodes, self.fused, self.leaves, self.refs, self.reads = [], [], {}, {}, {}
            try:
                if self.visit(self.summed)[0] != "node":
                    return
            except _NotFusable:
                return
            # an operation read twice (``t * t``) is one node, if every read is the tree's
            outside = {name for name, n in self.reads.items() if n != self.uses[name]}
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
        if stmt is None or var.name in self.kept or \
                self.position[id(stmt)] >= self.position[id(self.stmt)]:
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
        """Call the helper in place of ``np.sum`` and drop the fused statements."""
        fn, block, loc = self.fn, self.block, self.stmt.loc
        operands = [var for _, var in sorted(self.leaves.values(), key=lambda p: p[0])]
        ranks = [getattr(types.unliteral(fn.typeof(v.name)), "ndim", 0) for v in operands]
        reduction = callee_object(fn, self.stmt.value.func)
        # ``np.sum`` and ``np.mean`` add in memory order
        fortran = fn.typeof(self.summed.name).layout == "F" and self.ndim > 1
        tree = (tuple(self.nodes), (loc.filename, loc.line))
        helper = fused_sum_helper(tree, ranks, self.ndim, fortran, reduction)
        first_array = operands[ranks.index(self.ndim)]
        shape = ir.Var(block.scope, fresh_name(f"{first_array.name}%fshape"), loc)
        func = ir.Var(block.scope, fresh_name("$fused_sum"), loc)
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
        if sig is None or sig.return_type != types.float64:
            return
        at = block.body.index(self.stmt)
        block.body[at:at] = prologue + [
            ir.Assign(ir.Global(helper.__name__, helper, loc), func, loc)]
        fn.typemap[func.name] = fnty
        new = ir.Expr.call(func, args, (), loc)
        del fn.calltypes[self.stmt.value]
        fn.calltypes[new] = sig
        self.stmt.value = new
        gone = {s.target.name for s in self.fused}
        fused = {id(s) for s in self.fused}
        block.body = [s for s in block.body if not (
            id(s) in fused
            or (isinstance(s, ir.Del) and s.value in gone)
            or (isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                and s.value.op == "getattr" and s.value.value.name in gone))]
