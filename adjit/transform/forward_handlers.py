"""Forward-mode (JVP) code for each IR node kind: one small handler per kind.

Each handler emits the primal statement and then the tangent of its target. Generated
code is not in SSA form (adjoints are reassigned), so a handler whose target is also an
operand reads that operand's old value through a copy taken before the primal statement.
"""
import operator

import numpy as np
from numba.core import ir, types

from ..capture.typed_ir import is_generated
from ..ir.builder import clone_stmt, clone_value
from ..ir.lists import container_write_refusal, list_in_tuple_refusal, repeated_list
from ..rules.classify import (array_op_site, call_name, callee_object, classify_call, emit_array_op,
                    operator_name, positional_count, refuse_list_arguments,
                    refuse_omitted_default, squared_operand, written_call_name)
from ..rules.refusal_hints import unsupported_detail, untracked_result_advice
from .tangents import differentiable_items, has_tangent
from .forward_lists import (fwd_build_list, fwd_list_method, fwd_list_new,
                            fwd_list_reduction, fwd_repeated_list, refuse_nested_list_write)
from .forward_tape import fwd_tape_pop, fwd_tape_push, fwd_tape_put, fwd_tape_reserve
from .forward_elementwise import emit_elementwise_term, tangent_like
from .forward_products import fwd_adjoint_product
from .forward_primal import emit_primal, operand, operand_tangent, written_argument_tangent
from .partials import emit_factor, emit_partial, emit_product, emit_product_sums, is_product
from ..rules import NONDIFF, lookup
from ..rules.arrays import is_filled_allocation, zeros_shadow
from ..rules.core import ZERO, adjoint_product_branch
from ..rules.matmul import lookup_product
from ..ir.value_types import is_float, is_float_array


def fwd_copy(ctx, stmt, e):
    """fwd: ``y = v`` / ``y = cast(v)`` / ``y = exhaust_iter(v)``: ``y%dot = v%dot``."""
    old = emit_primal(ctx, stmt, e)
    if ctx.active(stmt.target):
        src = stmt.value if isinstance(stmt.value, ir.Var) else stmt.value.value
        e.assign(operand_tangent(ctx, e, old, src), target=ctx.dot(stmt.target.name))


def fwd_exhaust_iter(ctx, stmt, e):
    """fwd: ``t = exhaust_iter(v, n)`` (``a, b, c = v``) / ``t%dot = exhaust_iter(v%dot,
    n)`` when ``v`` is an array (its tangent is an array, unpacked the same way); a
    tuple's tangent is already a tuple."""
    src = stmt.value.value
    if not isinstance(ctx.typeof(src.name), types.Array):
        return fwd_copy(ctx, stmt, e)
    old = emit_primal(ctx, stmt, e)
    if ctx.active(stmt.target):
        unpacked = ir.Expr.exhaust_iter(operand_tangent(ctx, e, old, src), stmt.value.count,
                                        stmt.loc)
        e.assign(unpacked, target=ctx.dot(stmt.target.name))


def fwd_arg(ctx, stmt, e):
    """fwd: ``x = arg(i)``: ``x%dot`` is the tangent argument of x (0 if inactive, and
    zeros for an undifferentiated array the function writes into)."""
    e.stmt(clone_stmt(stmt))
    if stmt.value.index in ctx.active_args and ctx.active(stmt.target):
        e.assign(e.var(ctx.tangent_args[stmt.value.index]), target=ctx.dot(stmt.target.name))
    elif ctx.active(stmt.target):
        written_argument_tangent(ctx, e, stmt.target)


def fwd_constant(ctx, stmt, e):
    """fwd: constants and globals: zero tangent when the variable is active elsewhere."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(stmt.target):
        e.assign(ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name)),
                 target=ctx.dot(stmt.target.name))


def apply_rule(ctx, stmt, e, rule, name, args):
    """fwd: ``y%dot = sum_k d_k * a_k%dot`` over the active float operands."""
    if rule is None and not any(ctx.active(a) for a in args) and not ctx.active(stmt.target):
        e.stmt(clone_stmt(stmt))
        return
    if rule is None:
        raise ctx.unsupported(f"'{name}'", stmt.loc, "no differentiation rule is registered")
    if rule.arity_problem(len(args)) and any(ctx.active(a) for a in args):
        raise ctx.unsupported(f"'{name}'", stmt.loc, rule.arity_problem(len(args)))
    old = emit_primal(ctx, stmt, e)
    target = stmt.target
    ttype = ctx.typeof(target.name)
    if not ctx.active(target):
        if rule is not NONDIFF and any(ctx.active(a) for a in args) and not (
                is_float(ttype) or is_float_array(ttype)
                or isinstance(ttype, (types.Integer, types.Boolean, types.NoneType))):
            # a differentiated value flows into a type without tangents (complex):
            # dropping it would give a silent zero, as reverse mode refuses it too
            raise ctx.unsupported(f"'{name}' returning {ttype}", stmt.loc,
                                  untracked_result_advice(ttype))
        return
    if rule is NONDIFF:  # comparisons, floor, ... : a zero tangent where one is needed
        if is_float(ttype) or is_float_array(ttype):
            ctx.set_tangent(e, target, ctx.zero(e, target, ttype))
        return
    elementwise = is_float_array(ttype)
    if not (is_float(ttype) or elementwise) or any(
            ctx.active(a) and not (is_float(ctx.typeof(a.name)) or (
                elementwise and is_float_array(ctx.typeof(a.name)))) for a in args):
        raise ctx.unsupported(f"'{name}' on {ttype}", stmt.loc,
                              "this operation has no forward rule for these types")
    primal_args = [operand(e, old, a) for a in args]
    terms, pairs, given = [], [], set()
    paired = ctx.product is adjoint_product_branch and not elementwise
    for k, a in enumerate(args):
        partial = rule.partial(k) if rule is not NONDIFF else ZERO
        if partial is ZERO or not ctx.active(a):
            continue
        tan = operand_tangent(ctx, e, old, a)
        given.add(tan.name)
        if elementwise and is_product(partial):  # one guarded loop over the result
            terms.append(emit_elementwise_term(e, partial, tan, target, primal_args))
        elif paired and is_product(partial):  # summed two at a time, one NaN check each
            pairs.append((tan, emit_factor(e, partial, target, primal_args)))
        else:
            terms.append(emit_partial(e, partial, tan, target, primal_args,
                                      product=ctx.product))
    total = None
    for term in emit_product_sums(e, pairs, ctx.product) + terms:
        total = term if total is None else e.binop(operator.add, total, term, hint="tan")
    if total is None:
        total = ctx.zero(e, target, ctx.typeof(target.name))
    elif elementwise:
        if total.name in given:  # x + 1.0: a new array, whose tangent is not x's own
            total = e.call(np.copy, [total], hint="tan")
        total = e.call(tangent_like, [total, target], hint="tan")
    elif any(types.unliteral(ctx.typeof(a.name)) != ttype for a in args if ctx.active(a)):
        # a conversion (np.float64 of a float32) or mixed precision: the tangent takes
        # the result's type, as a record of the two pushed together is read back
        total = e.call(getattr(np, str(ttype)), [total], hint="tan")
    ctx.set_tangent(e, target, total)


def fwd_binop(ctx, stmt, e):
    """fwd: ``y = a op b`` / tangent from the operator's partials."""
    expr = stmt.value
    if expr.fn in BILINEAR and any(isinstance(ctx.typeof(v.name), types.Array)
                                   for v in (stmt.target, expr.lhs, expr.rhs)):
        return fwd_bilinear(ctx, stmt, e, [expr.lhs, expr.rhs])
    square = squared_operand(ctx.fn, expr)
    if (square is not None and is_float(ctx.typeof(stmt.target.name))
            and (square[2] is None or not ctx.active(square[2]))):
        return fwd_square(ctx, stmt, e, *square[:2])
    repeated = repeated_list(ctx.fn, expr)
    if repeated is not None:
        return fwd_repeated_list(ctx, stmt, e, *repeated)
    apply_rule(ctx, stmt, e, lookup(expr.fn), operator_name(expr.fn),
               [expr.lhs, expr.rhs])


def fwd_square(ctx, stmt, e, x, u):
    """fwd: ``y = u * x`` with ``u = x`` or ``u = k * x`` (``k`` not differentiated) /
    ``y%dot = x%dot * 2u``: one guarded product, not two."""
    old = emit_primal(ctx, stmt, e)
    if not ctx.active(stmt.target):
        return
    value = operand(e, old, u)
    twice = e.binop(operator.add, value, value, hint="d")
    ctx.set_tangent(e, stmt.target, emit_product(e, operand_tangent(ctx, e, old, x), twice,
                                                 ctx.product))


def fwd_unary(ctx, stmt, e):
    """fwd: ``y = -a`` / tangent from the operator's partial."""
    expr = stmt.value
    apply_rule(ctx, stmt, e, lookup(expr.fn), operator_name(expr.fn),
               [expr.value])


def fwd_call(ctx, stmt, e):
    """fwd: what ``classify_call`` (the question both modes ask) says the call is: a rule
    of some shape, a tape operation, an allocation, or the callee's JVP program."""
    cls = classify_call(ctx.fn, stmt.value)
    refuse_list_arguments(ctx.fn, stmt.value, cls, ctx.act.carriers, ctx.unsupported)
    FWD_CALLS[cls.kind](ctx, stmt, e, cls)


def fwd_reduction(ctx, stmt, e, cls):
    """fwd: a reduction rule (``np.sum``, ``x.max()``); a matrix product with an array
    result that the reverse-mode helpers do not cover (``v @ A``) takes the product rule."""
    if (cls.key in BILINEAR and isinstance(ctx.typeof(stmt.target.name), types.Array)
            and len(cls.args) == 2):
        return fwd_bilinear(ctx, stmt, e, list(cls.args))
    fwd_array_rule(ctx, stmt, e, cls.key, cls.args)


def fwd_unsupported_call(ctx, stmt, e, cls):
    """A call no rule covers: the primal when nothing differentiated reaches it (its
    arguments, the receiver of a method, the result), else an error naming the call as
    written, as reverse mode gives (a method's receiver is not among the call's own
    variables: ``y.sort()`` was copied, its tangent left unsorted)."""
    reached = list(stmt.value.list_vars()) + list(cls.args)
    if not any(ctx.active(v) for v in reached) and not ctx.active(stmt.target):
        e.stmt(clone_stmt(stmt))
        return
    name = written_call_name(cls, str(ctx.typeof(stmt.value.func.name)), stmt.loc)
    raise ctx.unsupported(f"'{name}'", stmt.loc, unsupported_detail(ctx.fn, stmt.value, cls))


FWD_CALLS = {
    "array_op": lambda ctx, stmt, e, c: fwd_array_op(ctx, stmt, e, c.site),
    "list_method": fwd_list_method,
    "list_new": fwd_list_new,
    "list_reduction": fwd_list_reduction,
    "tape_push": lambda ctx, stmt, e, c: fwd_tape_push(ctx, stmt, e),
    "tape_pop": lambda ctx, stmt, e, c: fwd_tape_pop(ctx, stmt, e),
    "tape_reserve": lambda ctx, stmt, e, c: fwd_tape_reserve(ctx, stmt, e),
    "tape_put": lambda ctx, stmt, e, c: fwd_tape_put(ctx, stmt, e),
    "allocation": lambda ctx, stmt, e, c: fwd_allocation(ctx, stmt, e),
    "accumulating_bilinear": lambda ctx, stmt, e, c: fwd_accumulating_bilinear(ctx, stmt, e),
    "adjoint_product": lambda ctx, stmt, e, c: fwd_adjoint_product(ctx, stmt, e),
    "linear": lambda ctx, stmt, e, c: fwd_linear(ctx, stmt, e, c.primitive.forward),
    "derived": lambda ctx, stmt, e, c: fwd_derived_call(
        ctx, stmt, e, ctx.typeof(stmt.value.func.name).dispatcher),
    "elementwise": lambda ctx, stmt, e, c: apply_rule(ctx, stmt, e, c.primitive,
                                                      call_name(c.key), c.args),
    "matmul": lambda ctx, stmt, e, c: fwd_bilinear(ctx, stmt, e, list(c.args)),
    "reduction": fwd_reduction,
    "scalar": lambda ctx, stmt, e, c: apply_rule(ctx, stmt, e, c.primitive,
                                                 call_name(c.key), c.args),
    "nondiff": lambda ctx, stmt, e, c: apply_rule(ctx, stmt, e, NONDIFF, call_name(c.key),
                                                  c.args),
    "unsupported": fwd_unsupported_call,
}


#: functions that copy or share memory by their argument's layout type. Left in the IR,
#: the primal's argument is not C-contiguous (``capture/methods.ContiguousAliases``
#: rewrote the others), so it copied, while its tangent may be typed C-contiguous and
#: would be shared (the method form ``x.ravel()`` is emitted as ``flatten``, a copy)
_COPIES_BY_LAYOUT = (np.ravel, np.ascontiguousarray)


def fwd_array_op(ctx, stmt, e, site):
    """fwd: ``y = op(a[, b])`` (a registered array op) / ``y%dot = op(a%dot)`` for a
    view or a linear map, ``op(a%dot, b) + op(a, b%dot)`` for a bilinear one."""
    op = site.op
    old = emit_primal(ctx, stmt, e)
    diff = [site.args[k] for k in op.diff_args]
    if any(ctx.active(a) for a in site.args if a not in diff):
        raise ctx.unsupported(f"'{op.name}' with a differentiated argument other than the "
                              "array(s) it transforms", stmt.loc)
    if not ctx.active(stmt.target):
        return
    args = [operand(e, old, a) for a in site.args]
    terms = []
    for k in op.diff_args:
        if not ctx.active(site.args[k]):
            continue
        if op.shape == "nonlinear":
            terms.append(e.call(op.tangents[k], [stmt.target] + args
                                + [operand_tangent(ctx, e, old, site.args[k])], hint="term"))
            continue
        swapped = list(args)
        swapped[k] = operand_tangent(ctx, e, old, site.args[k])
        term = emit_array_op(e, site, swapped, hint="lin")
        if site.callee in _COPIES_BY_LAYOUT:  # the primal copied: so must the tangent
            term = e.call(np.copy, [term], hint="lin")
        terms.append(term)
    if not terms:
        total = ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name))
    elif len(terms) == 1:
        total = terms[0]
    else:
        total = e.binop(operator.add, terms[0], terms[1], hint="tan")
    e.assign(total, target=ctx.dot(stmt.target.name))


def fwd_getattr(ctx, stmt, e):
    """fwd: ``y = x.T`` / ``y%dot = x%dot.T``; other attributes (``.shape``) copied."""
    site = array_op_site(ctx.fn, stmt.value)
    if site is not None:
        return fwd_array_op(ctx, stmt, e, site)
    if ctx.active(stmt.target):  # it would need a tangent: no rule says what it is
        owner = ctx.typeof(stmt.value.value.name)
        advice = ("iterate over a.ravel() or index the array" if stmt.value.attr == "flat"
                  else "adjit carries derivatives through floats, arrays and tuples of "
                  f"them, not a {owner}: pass its arrays as separate arguments, and "
                  "where a helper returns one, return a plain tuple instead")
        raise ctx.unsupported(f"the attribute '.{stmt.value.attr}' of a differentiated "
                              "value", stmt.loc, f"no rule covers it ({advice})")
    fwd_plain(ctx, stmt, e)


def fwd_array_rule(ctx, stmt, e, prim, args):
    """fwd: ``y = p(arrays)`` (``np.sum``, ``np.dot`` ...) / ``y%dot = sum_k dy_k(y, args,
    a_k%dot)`` over the active arguments, with the tangents of ``rules/arrays.py``."""
    from ..rules.arrays import lookup_array
    rule, target = lookup_array(prim), stmt.target
    name = call_name(prim)
    if not ctx.active(target) and not any(ctx.active(a) for a in args):
        emit_primal(ctx, stmt, e)  # of constants (``w.sum()`` of an int array)
        return
    if rule is None or len(args) != rule.arity or not is_float(ctx.typeof(target.name)):
        what = "with these arguments" if rule is not None else "on arrays"
        raise ctx.unsupported(f"'{name}' {what}", stmt.loc,
                              "array-valued operations have no forward rule yet")
    old = emit_primal(ctx, stmt, e)
    if not ctx.active(target):
        return
    tangents = {k: operand_tangent(ctx, e, old, a) for k, a in enumerate(args)
                if ctx.active(a) and rule.tangents[k] is not None}
    # an argument the rule never reads is passed as its tangent (same type and shape), so
    # the primal array may be freed before the tangent is computed (``sink_tangents``)
    passed = [tangents[k] if k in tangents and not rule.reads_args[k] else operand(e, old, a)
              for k, a in enumerate(args)]
    total = None
    for k, tan in tangents.items():
        term = e.call(rule.tangents[k], [target] + passed + [tan], hint="term")
        total = term if total is None else e.binop(operator.add, total, term, hint="tan")
    ctx.set_tangent(e, target, total if total is not None else
                    ctx.zero(e, target, ctx.typeof(target.name)))


def fwd_derived_call(ctx, stmt, e, dispatcher):
    """fwd: ``(y, y%dot) = f_jvp(args, tangents)``; adjit's generated callees get a
    tangent for every array argument and every active scalar."""
    expr = stmt.value
    refuse_omitted_default(ctx, stmt, dispatcher)
    argtypes = tuple(types.unliteral(t) for t in ctx.fn.calltypes[expr].args)
    fwd_call_of(ctx, stmt, e, dispatcher, list(expr.args), argtypes,
                lambda jvp, args: e.call(jvp, args, hint="dual"))


def fwd_call_of(ctx, stmt, e, dispatcher, call_args, argtypes, emit_call):
    """``stmt``'s target and tangent from the jvp of ``dispatcher`` at ``call_args``,
    called by ``emit_call(jvp_dispatcher, args)``."""
    npos = positional_count(dispatcher)
    if npos is not None:
        # the callee's IR takes the trailing arguments as one tuple: pack them (and their
        # tangents) the same way
        rest = call_args[npos:]
        argtypes = tuple(ctx.typeof(a.name) for a in call_args[:npos]) + (
            types.StarArgTuple.from_types([ctx.typeof(a.name) for a in rest]),)
        packed = e.tuple(rest, hint="packed")
        call_args = call_args[:npos] + [packed]
        if any(ctx.active(a) for a in rest):
            ctx.act.active.add(packed.name)
            e.assign(e.tuple([ctx.tangent(e, a) for a in rest
                              if has_tangent(ctx.typeof(a.name))], hint="packed_dot"),
                     target=ctx.dot(packed.name))
    if is_generated(dispatcher) and npos is None:
        # arrays always get tangents (a shadow's tangent is where H v accumulates); an
        # inactive scalar (the seed ybar) does not, so its zero terms vanish in the callee
        mask = tuple(i for i, t in enumerate(argtypes) if has_tangent(t) and (
            isinstance(t, types.Array) or ctx.active(call_args[i])))
    else:
        mask = tuple(i for i, a in enumerate(call_args) if ctx.active(a))
    if not mask:
        e.stmt(clone_stmt(stmt))
        if ctx.active(stmt.target):
            e.assign(ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name)),
                     target=ctx.dot(stmt.target.name))
        return
    program = ctx.derive_jvp(dispatcher, argtypes, mask)
    tangents = [ctx.tangent(e, call_args[i]) for i in mask]
    dual = emit_call(program.dispatcher, call_args + tangents)
    e.item(dual, 0, target=stmt.target.name)
    if ctx.active(stmt.target):
        e.item(dual, 1, target=ctx.dot(stmt.target.name))


def fwd_linear(ctx, stmt, e, positions):
    """fwd: ``y = p(a, i)`` linear in ``a`` / ``y%dot = p(a%dot, i)`` (``rules.deflinear``)."""
    e.stmt(clone_stmt(stmt))
    if not any(ctx.active(stmt.value.args[k]) for k in positions):
        if ctx.active(stmt.target):
            e.assign(ctx.zero(e, stmt.target, ctx.typeof(stmt.target.name)),
                     target=ctx.dot(stmt.target.name))
        return
    args = [ctx.tangent(e, a) if k in positions else a for k, a in enumerate(stmt.value.args)]
    out = e.call(stmt.value.func, args, hint="lin")
    if ctx.active(stmt.target):
        e.assign(out, target=ctx.dot(stmt.target.name))


BILINEAR = {operator.matmul, np.dot, np.outer, np.kron, np.multiply}


def fwd_inplace_binop(ctx, stmt, e):
    """fwd: ``a += b`` / ``a -= b`` on arrays (what reverse-mode helpers do to shadows) /
    ``a%dot += b%dot``: the update is linear, its tangent is the same update."""
    expr = stmt.value
    e.stmt(clone_stmt(stmt))
    if not (ctx.active(stmt.target) or ctx.active(expr.lhs) or ctx.active(expr.rhs)):
        return  # integers, or arrays no tangent reaches
    if not (isinstance(ctx.typeof(expr.lhs.name), types.Array)
            and expr.immutable_fn in (operator.add, operator.sub)):
        raise ctx.unsupported(f"the in-place operator '{operator_name(expr.fn)}'", stmt.loc)
    if not ctx.active(expr.lhs):
        raise ctx.unsupported("accumulating into an array without a tangent", stmt.loc)
    if not ctx.active(expr.rhs):
        e.assign(e.var(ctx.dot(expr.lhs.name)), target=ctx.dot(stmt.target.name))
        return
    update = ir.Expr.inplace_binop(expr.fn, expr.immutable_fn, e.var(ctx.dot(expr.lhs.name)),
                                   ctx.tangent(e, expr.rhs), stmt.loc)
    e.assign(update, target=ctx.dot(stmt.target.name))


def fwd_accumulating_bilinear(ctx, stmt, e):
    """fwd: ``update(g, b, s)`` (``s += g @ b.T`` and the like, from reverse-mode matrix
    products) / ``update(g%dot, b, s%dot); update(g, b%dot, s%dot)``."""
    g, other, shadow = stmt.value.args
    e.stmt(clone_stmt(stmt))
    if not (ctx.active(g) or ctx.active(other)):
        return
    if not ctx.active(shadow):
        raise ctx.unsupported("accumulating into an array without a tangent", stmt.loc)
    func = stmt.value.func
    if ctx.active(g):
        e.call(func, [ctx.tangent(e, g), other, ctx.tangent(e, shadow)], hint="void")
    if ctx.active(other):
        e.call(func, [g, ctx.tangent(e, other), ctx.tangent(e, shadow)], hint="void")


def fwd_bilinear(ctx, stmt, e, args):
    """fwd: ``C = A @ B`` (``np.dot``, ``np.outer``, ``np.kron``) / ``C%dot = dA @ B +
    A @ dB``: the product rule of a bilinear map, on the arrays themselves."""
    old = emit_primal(ctx, stmt, e)
    if not ctx.active(stmt.target):
        return
    a, b = (operand(e, old, v) for v in args)
    expr = stmt.value

    def apply(x, y):
        if expr.op == "binop":
            return e.binop(expr.fn, x, y, hint="bil")
        return e.call(expr.func, [x, y], hint="bil")

    product = lookup_product(expr.fn if expr.op == "binop" else
                             callee_object(ctx.fn, expr.func))
    fused = product.forward if product is not None else None
    if fused is not None and ctx.active(args[0]) and ctx.active(args[1]):
        total = e.call(e.glob(fused, name="bilinear_tangent"),
                       [a, operand_tangent(ctx, e, old, args[0]),
                        b, operand_tangent(ctx, e, old, args[1])],
                       hint="tan")  # one array, not two products and their sum
        e.assign(total, target=ctx.dot(stmt.target.name))
        return
    terms = []
    if ctx.active(args[0]):
        terms.append(apply(operand_tangent(ctx, e, old, args[0]), b))
    if ctx.active(args[1]):
        terms.append(apply(a, operand_tangent(ctx, e, old, args[1])))
    total = terms[0] if len(terms) == 1 else e.binop(operator.add, terms[0], terms[1],
                                                      hint="tan")
    e.assign(total, target=ctx.dot(stmt.target.name))


def fwd_allocation(ctx, stmt, e):
    """fwd: ``a = np.zeros(...)`` / ``a%dot = zeros_like(a)`` (filled by later writes);
    ``a = np.full(n, v)`` / ``a%dot = full_like(a, v%dot)``."""
    e.stmt(clone_stmt(stmt))
    if not ctx.active(stmt.target):
        return
    args = stmt.value.args
    if is_filled_allocation(callee_object(ctx.fn, stmt.value.func)) and ctx.active(args[1]):
        e.call(np.full_like, [stmt.target, ctx.tangent(e, args[1])],
               target=ctx.dot(stmt.target.name))
        return
    e.call(zeros_shadow, [stmt.target], target=ctx.dot(stmt.target.name))


def fwd_getitem(ctx, stmt, e):
    """fwd: ``y = a[i]`` / ``y%dot = a%dot[i]`` (arrays, views, tuples alike)."""
    old = emit_primal(ctx, stmt, e)
    if not ctx.active(stmt.target):
        return
    expr = stmt.value
    base = expr.value
    btype = ctx.typeof(base.name)
    tan_base = operand_tangent(ctx, e, old, base)
    if isinstance(btype, types.BaseTuple):
        if expr.op != "static_getitem" or not isinstance(expr.index, int):
            if not isinstance(btype, types.UniTuple):
                raise ctx.unsupported("indexing a mixed tuple with a variable", stmt.loc)
            e.assign(e.getitem(tan_base, operand(e, old, expr.index)),
                     target=ctx.dot(stmt.target.name))
            return
        items = differentiable_items(btype)
        if expr.index % len(btype.types) not in items:  # a list: no tangent in the tuple
            raise ctx.unsupported(*list_in_tuple_refusal(btype, stmt.loc))
        pos = items.index(expr.index % len(btype.types))
        e.item(tan_base, pos, target=ctx.dot(stmt.target.name))
        return
    index = expr.index if expr.op == "getitem" else e.const(expr.index, hint="idx")
    e.assign(ir.Expr.getitem(tan_base, operand(e, old, index), e.loc),
             target=ctx.dot(stmt.target.name))


def fwd_build_tuple(ctx, stmt, e):
    """fwd: ``t = (a, b)`` / ``t%dot = (a%dot, b%dot)`` over differentiable items."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(stmt.target):
        items = [ctx.tangent(e, v) for v in stmt.value.items
                 if has_tangent(ctx.typeof(v.name))]
        e.assign(e.tuple(items, hint="tantup"), target=ctx.dot(stmt.target.name))


def fwd_setitem(ctx, stmt, e):
    """fwd: ``a[i] = v`` / ``a%dot[i] = v%dot``."""
    e.stmt(clone_stmt(stmt))
    if ctx.active(stmt.target) or ctx.active(stmt.value):
        refuse_nested_list_write(ctx, stmt)
        if not ctx.active(stmt.target):
            container = ctx.typeof(stmt.target.name)
            if isinstance(container, types.Array) and isinstance(
                    container.dtype, (types.Integer, types.Boolean)):
                return  # converted to an integer, as by ``int(v)``: no tangent
            if isinstance(container, types.Array):
                raise ctx.unsupported("writing a differentiated value into a constant "
                                      "array", stmt.loc)
            what, advice = container_write_refusal(stmt.target.name, container)
            raise ctx.unsupported(what, stmt.loc, advice)  # as reverse mode words it
        index = (stmt.index if isinstance(stmt, ir.SetItem)
                 else stmt.index_var or ir.Const(stmt.index, stmt.loc))
        if isinstance(index, ir.Const):
            index = e.assign(index, hint="idx")
        e.setitem(e.var(ctx.dot(stmt.target.name)), index, ctx.tangent(e, stmt.value))


def fwd_iter(ctx, stmt, e):
    """fwd: ``getiter`` / ``iternext`` / ``pair_first``: the same on the tangent, in step."""
    e.stmt(clone_stmt(stmt))
    src = stmt.value.value
    if ctx.active(stmt.target) and ctx.active(src):
        new = clone_value(stmt.value)
        new.value = e.var(ctx.dot(src.name))
        e.assign(new, target=ctx.dot(stmt.target.name))


def fwd_plain(ctx, stmt, e):
    """fwd: nodes without derivative (pair_second, getattr .shape, print): copy."""
    e.stmt(clone_stmt(stmt))


FWD_HANDLERS = {
    "arg": fwd_arg,
    "const": fwd_constant,
    "global": fwd_constant,
    "freevar": fwd_constant,
    "var": fwd_copy,
    "cast": fwd_copy,
    "exhaust_iter": fwd_exhaust_iter,
    "binop": fwd_binop,
    "inplace_binop": fwd_inplace_binop,
    "unary": fwd_unary,
    "call": fwd_call,
    "getitem": fwd_getitem,
    "static_getitem": fwd_getitem,
    "build_tuple": fwd_build_tuple,
    "build_list": fwd_build_list,
    "setitem": fwd_setitem,
    "staticsetitem": fwd_setitem,
    "getiter": fwd_iter,
    "iternext": fwd_iter,
    "pair_first": fwd_iter,
    "pair_second": fwd_plain,
    "getattr": fwd_getattr,
    "print": fwd_plain,
}
