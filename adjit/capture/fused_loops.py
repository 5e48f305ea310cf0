"""The loops fused elementwise expressions become, built as Numba IR from templates.

``capture.fused_sums`` finds a tree of elementwise operations under ``np.sum`` or
``np.mean`` (a fused sum), or one whose result the code keeps (a fused map), and calls a
helper made here: a template loop nest (``_loops_*`` adds the elements, ``_map_*`` writes
them into a new array) whose placeholder call ``_element(i, j, k)`` becomes the reads of
the operands and the tree's own statements applied to numbers. The operands broadcast as
NumPy's: the shape is broadcast with each operand's before the loops
(``vectorize.fit_shape``), and each operand is read with a step of 0 along an axis of
length 1, a step its caller computes and passes in. The helpers are generated plain
functions, compiled with ``error_model="numpy"`` (the array operations they replace
divide by zero to inf), and adjit derives them as any hand-written loop.
"""
import operator
import threading

import numpy as np
from numba.core import ir, ssa
from numba.core.compiler import run_frontend

from ..compile.caches import owned_cache
from ..compile.dispatcher import generated_dispatcher
from ..compile.inline_library import internal_jit
from ..ir.builder import fresh_name
from .vectorize import fit_shape

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


STEPS = {1: _steps1, 2: _steps2, 3: _steps3}


# ---- the loops: templates whose placeholder call becomes the element's computation ------

def _element(i, j, k):
    """Placeholder in the templates: where the operands are read and the tree computed."""


def _finish(total, shape):
    """Placeholder in the templates: the result from the total (``REDUCTIONS``)."""


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
REDUCTIONS = {np.sum: _total, np.mean: _mean}


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


def _map_1d(shape):
    out = np.empty(shape)
    for i in range(shape[0]):
        out[i] = _element(i, 0, 0)
    return out


def _map_2d(shape):
    out = np.empty(shape)
    for i in range(shape[0]):
        for j in range(shape[1]):
            out[i, j] = _element(i, j, 0)
    return out


def _map_2d_fortran(shape):
    out = np.empty((shape[1], shape[0])).T
    for j in range(shape[1]):
        for i in range(shape[0]):
            out[i, j] = _element(i, j, 0)
    return out


def _map_3d(shape):
    out = np.empty(shape)
    for i in range(shape[0]):
        for j in range(shape[1]):
            for k in range(shape[2]):
                out[i, j, k] = _element(i, j, k)
    return out


def _map_3d_fortran(shape):
    out = np.empty((shape[2], shape[1], shape[0])).T
    for k in range(shape[2]):
        for j in range(shape[1]):
            for i in range(shape[0]):
                out[i, j, k] = _element(i, j, k)
    return out


#: (rank, Fortran order) -> the loop nest writing a new array of that order, in its
#: memory order
_MAPS = {(1, False): _map_1d, (1, True): _map_1d, (2, False): _map_2d,
         (2, True): _map_2d_fortran, (3, False): _map_3d, (3, True): _map_3d_fortran}


def fused_map_helper(tree, ranks, ndim, fortran):
    """The helper ``(operands..., shape, steps...) -> array`` writing the value of
    ``tree`` at each element into a new float64 array of rank ``ndim`` (C order, or
    Fortran's), over operands of ``ranks`` (cached): a fused map."""
    key = (tree, tuple(ranks), ndim, fortran, "map")
    with _lock:
        if key not in _helpers:
            def build(argtypes):
                return _helper_blocks(_MAPS[ndim, fortran], tree, ranks, ndim, None)
            _helpers[key] = generated_dispatcher("fused_map", _names(ranks), build,
                                                 plain=True, internal=True,
                                                 options={"error_model": "numpy"})
        return _helpers[key]


def _names(ranks):
    """The helper's parameters: the operands, the shape and each array operand's steps."""
    return [f"a{k}" for k in range(len(ranks))] + ["shape"] + [
        f"step{k}_{d}" for k, rank in enumerate(ranks) for d in range(rank)]


def fused_sum_helper(tree, ranks, ndim, fortran, reduction=np.sum):
    """The helper ``(operands..., shape, steps...) -> sum`` adding the statements of
    ``tree`` (``_tree_stmts``) over operands of ``ranks`` (0 for a number), for a
    result of rank ``ndim`` (cached): a generated plain function, derived as any loop.
    ``reduction`` (``np.sum`` or ``np.mean``) says what it returns of the total."""
    key = (tree, tuple(ranks), ndim, fortran, reduction)
    with _lock:
        if key not in _helpers:
            names = _names(ranks)

            def build(argtypes):
                return _helper_blocks(_LOOPS[ndim, fortran], tree, ranks, ndim,
                                      REDUCTIONS[reduction])
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
