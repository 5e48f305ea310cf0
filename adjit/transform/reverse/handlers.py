"""Reverse-pass code for each IR node kind: one small handler per kind.

A handler receives the primal statement and an ``Emitter`` positioned in the reverse block
and emits the adjoint code of that statement. It may read primal variables by their own
names: the reverse-pass builder later makes each one available, by popping it from the
block's tape record or by recomputing it when that costs nothing.

Handlers run only for statements that touch an active value, and for writes into argument
arrays (whose overwritten values the reverse pass restores).
"""

import operator

import numpy as np
from numba.core import ir, types
from numba.core.registry import cpu_target

from ...errors import AdjitError
from ...ir.builder import fresh_name
from ...ir.nodes import construct_refusal, node_kind
from ..partials import emit_product, emit_seed_terms
from ...rules import NONDIFF, lookup
from ...rules.arrays import (is_filled_allocation, add_indexed, add_in_bounds_at, add_selection,
                             tuple_item_share,
                             restore_selection, sum_indexed, sum_selection,
                             zero_selection)
from ...rules.core import ZERO
from ...ir.value_types import (container_words, value_words, is_differentiable, is_float,
                               is_nested_tuple)
from ...rules.classify import (array_op_site, call_name, classify_call, operator_name,
                               refuse_list_arguments, squared_operand, written_call_name)
from ...rules.refusal_hints import may_be_none_words, unsupported_detail, untracked_result_advice
from ...ir.lists import (container_write_refusal, is_float_list, list_in_tuple_refusal,
                         repeated_list)
from .context import bar, bar_item
from .beside_primal import (argument_saved, is_beside_primal, partial_beside_primal,
                            reverse_reads)
from .elementwise import rev_elementwise
from .lists import (active_list, rev_list_method, rev_list_new, rev_list_read,
                    rev_list_reduction, rev_list_write)
from .derived_calls import rev_derived_call
from .reductions import apply_array_rule
from .stmt_info import NOTHING, StmtEmitter, StmtInfo
from .matmul import rev_matmul
from .shadows import argument_memory_of, fresh_flag, is_element_index


def apply_rule(ctx, stmt, e, rule, prim_name, args):
    """rev: ``a_k%bar += g * d_k`` for every active float operand of a scalar primitive."""
    target = stmt.target
    if rule is None:
        raise ctx.unsupported(f"'{prim_name}'", stmt.loc, "no differentiation rule is "
                              "registered for it (see adjit.extend)")
    if rule.arity_problem(len(args)) and any(ctx.is_active(a) for a in args):
        raise ctx.unsupported(f"'{prim_name}'", stmt.loc, rule.arity_problem(len(args)))
    if rule is NONDIFF or not ctx.active_float(target):
        typ = ctx.typeof(target.name)
        # (a tuple holding differentiated values is a carrier: ``t + u`` of tuples)
        if rule is not NONDIFF and (is_differentiable(typ) or (
                any(ctx.is_active(a) or a.name in ctx.act.carriers for a in args)
                and not isinstance(typ, (types.Integer, types.Boolean)))):
            raise ctx.unsupported(f"'{prim_name}' returning {typ}", stmt.loc,
                                  untracked_result_advice(typ))
        return
    for a in args:
        if a.name in ctx.act.carriers:
            raise ctx.unsupported(f"'{prim_name}' applied to a {ctx.typeof(a.name)}",
                                  stmt.loc)
        if ctx.is_active(a) and not is_float(ctx.typeof(a.name)):
            raise ctx.unsupported(f"'{prim_name}' applied to an array", stmt.loc,
                                  "array-valued operations have no rule yet")
    partials = []
    for k, a in enumerate(args):
        partial = rule.partial(k)
        if not ctx.active_float(a) or partial is ZERO:
            continue
        if is_beside_primal(partial, args) and (reverse_reads(ctx, target)
                                                or argument_saved(ctx, args[0])):
            partial = partial_beside_primal(ctx, e, partial, args)  # the factor itself
        partials.append((a, partial))
    g = e.var(bar(target.name))
    for a, term in emit_seed_terms(e, g, partials, target, args, ctx.product):
        ctx.accumulate(e, a, term)
    ctx.reset(e, target.name)


def rev_binop(ctx, stmt, e):
    """fwd: unchanged / rev: the operator's rule (``operator.mul``, ``@`` on arrays etc.)."""
    expr = stmt.value
    if ctx.elementwise(expr) is not None:
        return rev_elementwise(ctx, stmt, e)
    if ctx.matmul(expr) is not None:
        return rev_matmul(ctx, stmt, e)
    if ctx.active_array(expr.lhs) or ctx.active_array(expr.rhs):
        return apply_array_rule(ctx, stmt, e, expr.fn, [expr.lhs, expr.rhs])
    square = squared_operand(ctx.fn, expr, ctx.definition)
    if (square is not None and ctx.active_float(stmt.target)
            and (square[2] is None or not ctx.is_active(square[2]))):
        return rev_square(ctx, stmt, e, *square[:2])
    repeated = repeated_list(ctx.fn, expr)
    if repeated is not None:  # ``[0.0] * n``: a list made anew, of constants
        if active_list(ctx, repeated[0]):
            raise ctx.unsupported("repeating a list that holds differentiated values",
                                  stmt.loc, "fill the list with a loop instead")
        return rev_list_new(ctx, stmt, e)
    apply_rule(ctx, stmt, e, lookup(expr.fn), operator_name(expr.fn),
               [expr.lhs, expr.rhs])


def rev_square(ctx, stmt, e, x, u):
    """rev: ``y = u * x`` with ``u = x`` or ``u = k * x`` (``k`` not differentiated) /
    ``x%bar += y%bar * 2u``: one guarded product, not two (none into ``u``)."""
    twice = e.binop(operator.add, u, u, hint="d")
    ctx.accumulate(e, x, emit_product(e, e.var(bar(stmt.target.name)), twice, ctx.product))
    ctx.reset(e, stmt.target.name)


def rev_unary(ctx, stmt, e):
    """fwd: unchanged / rev: the rule of ``operator.neg`` / ``pos`` / ``not_``."""
    expr = stmt.value
    if ctx.elementwise(expr) is not None:
        return rev_elementwise(ctx, stmt, e)
    apply_rule(ctx, stmt, e, lookup(expr.fn), operator_name(expr.fn),
               [expr.value])


def rev_copy(ctx, stmt, e):
    """fwd: ``y = v``, ``cast(v)``, ``exhaust_iter(v)`` / rev: ``v%bar += y%bar`` (per item
    for tuples; ``a, b = x`` unpacking an array adds into ``x``'s shadow)."""
    source = stmt.value if isinstance(stmt.value, ir.Var) else stmt.value.value
    target = stmt.target
    if ctx.active_float(target):
        ctx.accumulate(e, source, e.var(bar(target.name)))
    elif ctx.active_tuple(target) and ctx.active_array(source):
        shadow = ctx.shadow_of(source, stmt.loc, e)
        for k in ctx.float_items(target.name):
            idx = e.const(k, hint="idx")
            e.setitem(shadow, idx, e.add(e.getitem(shadow, idx),
                                         e.var(bar_item(target.name, k))))
    elif ctx.active_tuple(target):
        if not ctx.active_tuple(source):
            raise ctx.unsupported(f"unpacking {ctx.typeof(source.name)}", stmt.loc)
        for k in ctx.float_items(target.name):
            ctx.accumulate(e, source, e.var(bar_item(target.name, k)), item=k)
    ctx.reset(e, target.name)


def rev_build_tuple(ctx, stmt, e):
    """fwd: ``t = (a, b)`` / rev: ``a%bar += t%bar%0; b%bar += t%bar%1``."""
    target = stmt.target
    if not ctx.active_tuple(target):
        if target.name in ctx.act.carriers:
            raise ctx.unsupported(f"a tuple of type {ctx.typeof(target.name)} holding "
                                  "differentiated values", stmt.loc,
                                  "only flat tuples of scalars have adjoints")
        return
    items = stmt.value.items
    for k in ctx.float_items(target.name):
        ctx.accumulate(e, items[k], e.var(bar_item(target.name, k)))
    ctx.reset(e, target.name)


def rev_call(ctx, stmt, e):
    """fwd: unchanged, or the callee's forward pass / rev: what ``classify_call`` (the
    question both modes ask) says the call is: a rule of some shape, a derived callee,
    or unsupported."""
    cls = classify_call(ctx.fn, stmt.value)
    refuse_list_arguments(ctx.fn, stmt.value, cls, ctx.act.carriers, ctx.unsupported)
    REV_CALLS[cls.kind](ctx, stmt, e, cls)


def rev_unsupported_call(ctx, stmt, e, cls):
    """A call no rule covers (or with arguments adjit could not bind): refuse it by the
    name the user wrote, saying which kind of rule would make it work."""
    for a in cls.args or ():
        if isinstance(ctx.typeof(a.name), types.Optional):  # name the call that made it
            what, advice = may_be_none_words(ctx.fn, ctx.definition(a.name), a.name)
            raise ctx.unsupported(what, stmt.loc, advice)
    name = written_call_name(cls, str(ctx.typeof(stmt.value.func.name)), stmt.loc)
    raise ctx.unsupported(f"'{name}'", stmt.loc, unsupported_detail(ctx.fn, stmt.value, cls))


def rev_generated_helper(ctx, stmt, e, cls):
    """adjit's own runtime and shadow-update helpers appear in generated code only."""
    raise ctx.unsupported("reverse mode over a function generated by adjit", stmt.loc,
                          "nested reverse mode is not supported yet")


REV_CALLS = {
    "array_op": lambda ctx, stmt, e, c: rev_array_op(ctx, stmt, e, c.site),
    "list_method": rev_list_method,
    "list_new": rev_list_new,
    "list_reduction": rev_list_reduction,
    "derived": lambda ctx, stmt, e, c: rev_derived_call(
        ctx, stmt, e, ctx.typeof(stmt.value.func.name).dispatcher),
    "allocation": lambda ctx, stmt, e, c: rev_allocation(ctx, stmt, e),
    "elementwise": lambda ctx, stmt, e, c: rev_elementwise(ctx, stmt, e),
    "matmul": lambda ctx, stmt, e, c: rev_matmul(ctx, stmt, e),
    "reduction": lambda ctx, stmt, e, c: apply_array_rule(ctx, stmt, e, c.key, c.args),
    "scalar": lambda ctx, stmt, e, c: apply_rule(ctx, stmt, e, c.primitive,
                                                 call_name(c.key), c.args),
    "nondiff": lambda ctx, stmt, e, c: apply_rule(ctx, stmt, e, NONDIFF,
                                                  call_name(c.key), c.args),
    "unsupported": rev_unsupported_call,
    "tape_push": rev_generated_helper,
    "tape_reserve": rev_generated_helper,
    "tape_put": rev_generated_helper,
    "tape_pop": rev_generated_helper,
    "accumulating_bilinear": rev_generated_helper,
    "adjoint_product": rev_generated_helper,
    "linear": rev_generated_helper,
}


def rev_array_op(ctx, stmt, e, site):
    """fwd: ``y = op(a[, b])`` (a registered array op) / rev: nothing for a view (its
    shadow is the same view of the parent's), ``transpose(y%shadow, a%shadow)`` for a
    linear map, ``vjp_a(y%shadow, b, a%shadow)`` and ``vjp_b(..)`` for a bilinear one."""
    op, target = site.op, stmt.target
    diff = [site.args[k] for k in op.diff_args]
    for a in site.args:
        if a not in diff and (ctx.is_active(a) or a.name in ctx.act.carriers):
            raise ctx.unsupported(f"'{op.name}' with a differentiated argument other than "
                                  "the array(s) it transforms", stmt.loc)
    if op.shape == "view" or not ctx.active_array(target):
        return
    g = ctx.shadow_of(target, stmt.loc, e)
    for k, a in zip(op.diff_args, diff):
        if not ctx.active_array(a):
            continue
        shadow = ctx.shadow_of(a, stmt.loc, e)
        if op.shape == "nonlinear":
            e.call(op.transposes[k], [g, target] + list(site.args) + [shadow], hint="void")
            continue
        other = [] if op.shape == "linear" else [diff[1 - k]]
        static = [v for v in site.args if v not in diff]  # axis=, ...: after the shadow
        e.call(op.transposes[k], [g] + other + [shadow] + static, hint="void")


def rev_getattr(ctx, stmt, e):
    """fwd: ``y = x.T`` (a view) or ``x.shape`` etc. / rev: nothing (a view's shadow is
    rebuilt where it is used; attributes such as ``.shape`` are integers)."""
    site = array_op_site(ctx.fn, stmt.value)
    if site is None and (ctx.active_float(stmt.target) or ctx.active_array(stmt.target)):
        owner = stmt.value.value
        raise ctx.unsupported(
            f"reading '.{stmt.value.attr}' of {ctx.user_name(owner.name)}, "
            f"{container_words(ctx.typeof(owner.name))} holding differentiated values",
            stmt.loc,
            "adjit follows derivatives through floats, tuples and float arrays; pass "
            "those to the code instead of an object made from them")


def rev_getitem(ctx, stmt, e):
    """fwd: ``y = a[i]`` / rev: ``a%shadow[i] += y%bar``; a view ``v = a[i]`` needs nothing
    (its shadow is ``a%shadow[i]``, rebuilt where it is used)."""
    expr = stmt.value
    if not ctx.active_array(expr.value):
        return rev_container_item(ctx, stmt, e)
    if ctx.active_array(stmt.target):
        ctx.view_of(stmt.target.name, stmt.loc)  # refuses copies (fancy indexing)
        return
    if not ctx.active_float(stmt.target):
        raise ctx.unsupported(f"indexing an array to {ctx.typeof(stmt.target.name)}",
                              stmt.loc)
    shadow = ctx.shadow_of(expr.value, stmt.loc, e)
    index = expr.index if expr.op == "getitem" else expr.index_var
    if index is None:
        index = e.const(expr.index, hint="idx")
    increment_item(ctx, e, shadow, index, stmt.target)


def increment_item(ctx, e, shadow, index, target, guarded=False):
    """``shadow[index] += target%bar``, then reset ``target%bar``. ``guarded`` skips an index
    past the end: an exhausted iterator's."""
    g = e.var(bar(target.name))
    if guarded:
        e.call(add_in_bounds_at, [shadow, index, g], hint="void")
    else:
        old = e.getitem(shadow, index)
        e.setitem(shadow, index, e.add(old, g))
    ctx.reset(e, target.name)


def rev_container_item(ctx, stmt, e):
    """fwd: ``y = t[k]`` on a tuple / rev: ``t%bar%k += y%bar``; items of other containers
    (or a tuple indexed by a variable) have no adjoint: refused."""
    expr, target = stmt.value, stmt.target
    if active_list(ctx, expr.value):
        return rev_list_read(ctx, stmt, e)
    if not (ctx.active_float(target) or target.name in ctx.act.active
            or target.name in ctx.act.carriers):
        return
    if ctx.active_array(target) and (ctx.tuple_item(expr) is not None
                                     or ctx.dynamic_item(expr) is not None):
        return  # an array item of a tuple: its shadow is found through the tuple
    if (ctx.active_tuple(expr.value) and ctx.active_float(target)
            and expr.op == "static_getitem" and isinstance(expr.index, int)):
        k = expr.index % len(ctx.typeof(expr.value.name).types)
        ctx.accumulate(e, expr.value, e.var(bar(target.name)), item=k)
        ctx.reset(e, target.name)
        return
    if (ctx.active_tuple(expr.value) and ctx.active_float(target) and expr.op == "getitem"
            and isinstance(ctx.typeof(expr.value.name), types.UniTuple)):
        return rev_tuple_item_at(ctx, expr, target, e)
    container = ctx.typeof(expr.value.name)
    if "Dict" in type(container).__name__:  # as writing into it is refused
        what, advice = container_write_refusal(expr.value.name, container)
        raise ctx.unsupported(what.replace("writing a differentiated value into",
                                           "reading a differentiated value out of"),
                              stmt.loc, advice)
    if isinstance(container, types.BaseTuple) and any(
            isinstance(t, (types.List, types.ListType)) for t in container.types):
        raise ctx.unsupported(*list_in_tuple_refusal(container, stmt.loc))
    advice = ("no rule covers it: index the array, or iterate over a.ravel()" if isinstance(
        container, types.NumpyFlatType) else "only constant indices of flat tuples of "
        "floats have adjoints")
    if is_nested_tuple(container):
        advice += (": return a flat tuple from the helper (lo, hi, m = stats(x)), not a "
                   "tuple inside a tuple")
    raise ctx.unsupported(
        f"reading {value_words(ctx.typeof(target.name))} out of "
        f"{container_words(container)}",
        stmt.loc, advice)


def rev_tuple_item_at(ctx, expr, target, e):
    """fwd: ``y = t[k]``, ``t`` a tuple of floats, ``k`` a variable (``for v in (a, b)``)
    / rev: each item's adjoint takes ``y%bar`` where ``k`` names it, else nothing."""
    g = e.var(bar(target.name))
    size = ctx.typeof(expr.value.name).count
    for j in range(size):
        share = e.call(tuple_item_share, [expr.index, e.const(j), e.const(size), g],
                       hint="share")
        ctx.accumulate(e, expr.value, share, item=j)
    ctx.reset(e, target.name)


def rev_pair_first(ctx, stmt, e):
    """fwd: ``y = next(iter(a))`` (counter ``it%idx``) / rev: ``a%shadow[it%idx] += y%bar``;
    a row of a 2-D array is a view: nothing (its shadow is rebuilt where it is used)."""
    if not (ctx.active_float(stmt.target) or ctx.active_array(stmt.target)):
        if stmt.target.name in ctx.act.carriers:
            raise ctx.unsupported(f"iterating over {ctx.typeof(stmt.target.name)} items",
                                  stmt.loc)
        return
    array, iter_var = ctx.iterated_array(stmt.value, stmt.loc)
    if ctx.active_array(stmt.target):
        return
    idx = e.var(ctx.iteration_counter(iter_var))
    shadow = ctx.shadow_of(array, stmt.loc, e)
    increment_item(ctx, e, shadow, idx, stmt.target, guarded=True)


def rev_nothing(ctx, stmt, e):
    """fwd: unchanged / rev: nothing (no derivative flows through this node)."""


def rev_reject(ctx, stmt, e):
    """A node that touches an active value and has no adjoint: refuse loudly."""
    what, advice = construct_refusal(stmt)
    raise ctx.unsupported(what, stmt.loc, advice)


def rev_setitem(ctx, stmt, e):
    """fwd: ``old = a[i]; a[i] = v`` (``old`` kept for arguments) / rev: ``v%bar +=
    a%shadow[i]; a%shadow[i] = 0``, then ``a[i] = old`` so later reverse code reads the
    values it read going forward."""
    arr, value = stmt.target, stmt.value
    if is_float_list(ctx.typeof(arr.name)):
        return rev_list_write(ctx, stmt, e)
    if not isinstance(ctx.typeof(arr.name), types.Array):
        what, advice = container_write_refusal(arr.name, ctx.typeof(arr.name))
        raise ctx.unsupported(what, stmt.loc, advice)
    index = stmt.index if isinstance(stmt, ir.SetItem) else stmt.index_var
    if index is None:
        if ctx.is_active(arr) or ctx.is_active(value) or value.name in ctx.act.carriers:
            raise ctx.unsupported("writing into an array with a constant index", stmt.loc)
        return
    if not is_element_index(ctx.typeof(index.name), ctx.typeof(arr.name).ndim):
        return rev_selection_write(ctx, stmt, e, index)
    if ctx.is_active(arr):
        shadow = ctx.shadow_of(arr, stmt.loc, e)
        if ctx.active_float(value):
            ctx.accumulate(e, value, e.getitem(shadow, index, hint="written"))
        e.setitem(shadow, index, e.const(0.0, hint="zero"))
    base = ctx.array_base(arr.name)
    if base is not None and isinstance(ctx.definition(base), ir.Arg):
        old = fresh_name("old")
        ctx.synthetic_types[old] = ctx.typeof(arr.name).dtype
        e.forward_before(old, ir.Expr.getitem(arr, index, stmt.loc))
        e.setitem(argument_memory_of(ctx, arr, e), index, e.var(old))


def rev_selection_write(ctx, stmt, e, index):
    """fwd: ``old = a[sel].copy(); a[sel] = v`` (``old`` kept for arguments) / rev:
    ``g = a%shadow[sel].copy(); a%shadow[sel] = 0; v%shadow += g`` (a scalar ``v`` takes
    the sum), then ``a[sel] = old``. ``sel`` is a slice, a mask or an index array."""
    arr, value = stmt.target, stmt.value
    vtype = ctx.typeof(value.name)
    if value.name in ctx.act.carriers and not ctx.is_active(value):
        raise ctx.unsupported(f"writing a {vtype} into an array", stmt.loc)
    selected = selection_type(ctx, arr, index)
    itype = ctx.typeof(index.name)  # an integer index array may repeat a position
    indexed = (isinstance(itype, types.Array) and isinstance(itype.dtype, types.Integer)
               and itype.ndim == 1 and ctx.typeof(arr.name).ndim in (1, 2))
    if ctx.is_active(arr):
        shadow = ctx.shadow_of(arr, stmt.loc, e)
        if ctx.active_array(value):
            if not isinstance(selected, types.Array) or selected.ndim != vtype.ndim:
                raise ctx.unsupported("writing an array into a selection of another rank "
                                      "(broadcasting)", stmt.loc,
                                      "write a value of the selection's shape")
            # (these clear the selection themselves, before adding into a value that may
            # be a view of the same memory)
            e.call(add_indexed if indexed else add_selection,
                   [ctx.shadow_of(value, stmt.loc, e), shadow, index], hint="void")
        else:
            if ctx.active_float(value):
                ctx.accumulate(e, value, e.call(sum_indexed if indexed else sum_selection,
                                                [shadow, index], hint="sum"))
            e.call(zero_selection, [shadow, index], hint="void")
    base = ctx.array_base(arr.name)
    if base is not None and isinstance(ctx.definition(base), ir.Arg):
        view = fresh_name("overwritten")
        ctx.synthetic_types[view] = selected
        e.forward_before(view, ir.Expr.getitem(arr, index, stmt.loc))
        old = ctx.copy_before(e.info.before, ir.Var(arr.scope, view, stmt.loc), "old")
        e.call(restore_selection, [argument_memory_of(ctx, arr, e), index, e.var(old)],
               hint="void")


def rev_build_list(ctx, stmt, e):
    """fwd: ``L = [a, b]`` / rev: a float list's items take their adjoints from its
    shadow (``lists.py``); lists of other things holding differentiated values are
    refused."""
    if is_float_list(ctx.typeof(stmt.target.name)):
        return rev_list_new(ctx, stmt, e)
    rev_reject(ctx, stmt, e)


def selection_type(ctx, arr, index):
    """The type of ``arr[index]`` (an array view or copy, or a scalar)."""
    sig = cpu_target.typing_context.resolve_function_type(
        operator.getitem, (ctx.typeof(arr.name), ctx.typeof(index.name)), {})
    if sig is None:
        raise ctx.unsupported("this kind of array selection", arr.loc)
    return sig.return_type


def rev_allocation(ctx, stmt, e):
    """fwd: ``y = np.zeros(n)``, ``np.full(n, v)`` etc. / rev: a differentiated fill value
    takes the sum of the shadow (the entries later writes replaced were cleared by the
    writes' adjoints); other differentiated arguments are refused."""
    callee = ctx.callee_object(stmt.value.func)
    for k, a in enumerate(stmt.value.args):
        if not ctx.is_active(a) or ctx.active_array(a):  # (x.dtype carries nothing)
            continue
        if (is_filled_allocation(callee) and k == 1 and ctx.active_float(a)
                and ctx.active_array(stmt.target)):
            shadow = ctx.shadow_of(stmt.target, stmt.loc, e)
            ctx.accumulate(e, a, e.call(np.sum, [shadow], hint="filled"))
            continue
        raise ctx.unsupported("filling a new array with a differentiated value", stmt.loc)


HANDLERS = {
    "binop": rev_binop,
    "unary": rev_unary,
    "call": rev_call,
    "cast": rev_copy,
    "var": rev_copy,
    "exhaust_iter": rev_copy,
    "build_tuple": rev_build_tuple,
    "build_list": rev_build_list,
    "getitem": rev_getitem,
    "static_getitem": rev_getitem,
    "pair_first": rev_pair_first,
    "pair_second": rev_nothing,
    "getiter": rev_nothing,
    "iternext": rev_nothing,
    "getattr": rev_getattr,     # .T (a view); .shape, .ndim, .size: integer results
    "arg": rev_nothing,
    "const": rev_nothing,
    "global": rev_nothing,
    "phi": rev_nothing,         # handled on the incoming edges
    "print": rev_nothing,
    "setitem": rev_setitem,
    "staticsetitem": rev_setitem,
}


def touches_active(ctx, stmt):
    """Whether a statement reads or defines an active value (or an active container), or
    writes into an argument array (which the reverse pass restores)."""
    act = ctx.act
    if isinstance(stmt, ir.Assign) and stmt.target.name in act.control_only:
        return False  # a float that only steers control flow (``control_only.py``)
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and isinstance(
            ctx.typeof(stmt.target.name), types.Array):
        base = ctx.array_base(stmt.target.name)
        if base is not None and isinstance(ctx.definition(base), ir.Arg):
            return True
    return any(v.name in act.active or v.name in act.carriers for v in stmt.list_vars())


_PROPAGATING = ("binop", "unary", "call", "cast", "var", "getitem", "static_getitem",
                "pair_first", "exhaust_iter")


def check_adjoint_used(ctx, stmt, emitted):
    """Post-condition of a handler: the adjoint of an active float it defines from active
    operands flowed somewhere (a handler that forgot it would silently give zero), unless
    the operation is declared non-differentiable."""
    if not (isinstance(stmt, ir.Assign) and ctx.active_float(stmt.target)
            and node_kind(stmt) in _PROPAGATING
            and any(ctx.is_active(v) for v in (
                [stmt.value] if isinstance(stmt.value, ir.Var) else stmt.value.list_vars()))):
        return
    name = bar(stmt.target.name)
    if any(v.name == name for s in emitted for v in s.list_vars()
           if not (isinstance(s, ir.Assign) and s.target.name == name
                   and isinstance(s.value, ir.Const))):
        return
    value = stmt.value
    if isinstance(value, ir.Var):
        raise AdjitError(f"internal: the adjoint of '{stmt.target.name}' was dropped")
    rule = (lookup(value.fn) if value.op in ("binop", "unary") else
            lookup(ctx.callee_key(value.func)[0]) if value.op == "call" else None)
    if rule is NONDIFF or (rule is not None and all(
            rule.partial(k) is ZERO for k, v in enumerate(_operands(value))
            if ctx.is_active(v))):
        return  # no derivative in its active operands (comparisons, floor division)
    raise AdjitError(f"internal: the adjoint of '{stmt.target.name}' was dropped in "
                     f"{ctx.fn.name} at line {stmt.loc.line}; please report this")


def _operands(value):
    """The positional operands of a binop, unary or call expression."""
    if value.op == "binop":
        return [value.lhs, value.rhs]
    if value.op == "unary":
        return [value.value]
    return list(value.args)


def emit_reverse(ctx, stmt, e):
    """Dispatch one statement to its handler (or refuse it); return its ``StmtInfo``:
    the reverse statements appended to ``e``'s block and the forward sweep's
    additions."""
    if not touches_active(ctx, stmt):
        return NOTHING
    info = StmtInfo()
    e = StmtEmitter(e.block, e.scope, stmt.loc, info)
    handler = HANDLERS.get(node_kind(stmt), rev_reject)
    if (handler is rev_nothing and isinstance(stmt, ir.Assign)
            and ctx.active_float(stmt.target) and node_kind(stmt) not in ("arg", "phi")):
        rev_reject(ctx, stmt, e)
    start = len(e.block.body)
    handler(ctx, stmt, e)
    check_adjoint_used(ctx, stmt, e.block.body[start:])
    for name in ctx.stale_after(stmt):
        # an array made in a loop: uses met from now on (going backwards) belong to the
        # array the previous iteration made, whose shadow starts afresh
        e.assign(ir.Const(True, stmt.loc), target=fresh_flag(name))
    info.reverse = e.block.body[start:]
    return info
