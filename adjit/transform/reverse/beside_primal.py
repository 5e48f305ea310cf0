"""Partials the forward sweep computes next to their primal call (``sin``'s ``cos``).

``rules.core.beside_primal`` marks them. Computed in the reverse pass, ``cos(u)`` is a
second transcendental call; computed by the forward sweep just before ``sin(u)`` and
saved, LLVM makes the pair one ``sincos`` call and the reverse pass reads one tape word.
That pays only where the block saves a record anyway: the reverse pass reads the
primal's result (``reverse_reads``) or its argument is saved (``argument_saved``).
"""
import operator

from numba.core import ir
from numba.core.registry import cpu_target

from ...ir.builder import fresh_name
from ...rules.core import FuncPartial


def is_beside_primal(partial, args):
    """Whether the forward sweep computes ``partial`` (``rules.core.beside_primal``)."""
    return (isinstance(partial, FuncPartial) and partial.beside is not None
            and len(args) == 1)


def reverse_reads(ctx, var):
    """Whether the reverse pass reads the value of ``var``: it is a factor of a product
    with an active operand, or a divisor (``sin(u) * x``). Only then is computing the
    partial beside the primal a gain: the block saves a record anyway, and one more word
    replaces a call. Otherwise (``s += sin(x[i])``) the reverse pass computes ``cos``
    from values it recomputes, and the forward sweep saves nothing per iteration."""
    for block in ctx.blocks.values():
        for expr in block.find_exprs(op="binop"):
            operands = (expr.lhs, expr.rhs)
            if var.name not in (v.name for v in operands):
                continue
            if expr.fn is operator.truediv and expr.rhs.name == var.name:
                return True
            if expr.fn is operator.mul and any(ctx.active_float(v) for v in operands
                                               if v.name != var.name):
                return True
    return False


def argument_saved(ctx, arg):
    """Whether the reverse pass would read ``arg`` from the tape: it is the result of a
    call (``sin(cos(u))``'s ``cos(u)``), which the reverse pass never recomputes. Then
    the record holds the partial instead of (or beside) the argument, and the reverse
    pass makes no transcendental call."""
    value = ctx.definition(arg.name)
    return (isinstance(value, ir.Expr) and value.op == "call"
            and ctx.callee_object(value.func) is not slice)


def partial_beside_primal(ctx, e, partial, args):
    """fwd: ``d = cos(u)`` (or ``-sin(u)``) just before the primal ``sin(u)``, saved /
    rev: reads ``d``. Called as the same kind of math function as the primal, next to
    it, LLVM computes both in one ``sincos`` call; the reverse pass would call the
    transcendental again."""
    callee, negate = partial.beside
    typing = cpu_target.typing_context
    fnty = typing.resolve_value_type(callee)
    sig = typing.resolve_function_type(fnty, [ctx.typeof(args[0].name)], {})
    func, value, d = fresh_name("partial"), fresh_name("d"), fresh_name("d")
    ctx.synthetic_types.update({func: fnty, value: sig.return_type, d: sig.return_type})
    e.forward_before(func, ir.Global(callee.__name__, callee, e.loc))
    call = ir.Expr.call(ir.Var(args[0].scope, func, e.loc), [args[0]], (), e.loc)
    if not negate:
        e.forward_before(d, call)
        return e.var(d)
    e.forward_before(value, call)
    e.forward_before(d, ir.Expr.unary("-", ir.Var(args[0].scope, value, e.loc), e.loc))
    return e.var(d)
