"""Emitting the product of a seed with one partial derivative, shared by both modes."""

import math
import operator

from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks

from ..rules.core import (ADJOINT_PRODUCTS, MINUS_ONE, ONE, ArgPartial, FuncPartial,
                          adjoint_product, adjoint_product_branch, adjoint_product_chain,
                          adjoint_product_pair, adjoint_product_sum)


def product_form(blocks):
    """The guarded product for a function with these (primal) blocks: the select form
    where there is a loop (it vectorises), the NaN-branch form in straight-line code
    (it keeps a chain of products at multiply speed). See ``rules.core``."""
    has_loop = bool(compute_cfg_from_blocks(blocks).loops())
    return adjoint_product if has_loop else adjoint_product_chain


def forward_product_form(blocks, typeof):
    """The guarded product of forward mode over the user's code with these blocks:
    ``adjoint_product_branch`` (checked for NaN, two products at a time, with the guard
    in a block of its own) in loops that carry a float from one iteration to the next (a
    reduction, which -O3 does not vectorise without reassociation) and in long
    straight-line code; the NaN-select form in other loops (elementwise maps, which
    vectorise, as rule kernels over arrays do) and in short straight-line functions,
    which are inlined into such loops (a partial's helper inside an elementwise
    kernel). ``typeof(name)`` types a variable."""
    loops = compute_cfg_from_blocks(blocks).loops().values()
    if not loops:
        long = _statement_count(blocks) > LONG_STRAIGHT_LINE
        return adjoint_product_branch if long else adjoint_product_chain
    if any(_carries_float(blocks[loop.header], typeof) for loop in loops):
        return adjoint_product_branch
    return adjoint_product_chain


def generated_product_form(blocks):
    """The guarded product of forward mode over code adjit generated (a gradient's
    forward and reverse sweeps, for hvp): the NaN-branch form, two products at a time,
    where it loops; the reverse sweep's own form in straight-line code. A reverse
    sweep's loops use the select form so that loops adding into shadows vectorise; their
    tangent loops mostly do not (rosenbrock_loop's scatters into ``x[i]`` and
    ``x[i + 1]``, logsumexp_loop's running adjoints). With the select products of
    reverse loops checked by branch too (``branch_checked``), rosenbrock_loop's hvp went
    from 5.6 to 3.9 times the primal, logsumexp_loop's from 1.71 to 1.53, and no hvp of
    the suite slowed (the elementwise rows' too); whether a tangent loop that vectorised
    before still does was not checked in the IR."""
    if compute_cfg_from_blocks(blocks).loops():
        return adjoint_product_branch
    return product_form(blocks)


def branch_checked(ctx, product):
    """Whether forward mode checks this guarded product of generated code, and its
    tangent, for NaN by a never-taken branch (``adjoint_product_branch``, the tangent
    one ``adjoint_product_sum``) instead of selects: a reverse loop's select-checked
    product, and a long straight-line reverse sweep's (``ctx.chain_as_branch``)."""
    if not ctx.generated:
        return False
    return (product is adjoint_product
            or (ctx.chain_as_branch and product is adjoint_product_chain))


#: statements beyond which straight-line code is not a helper for loops to inline
LONG_STRAIGHT_LINE = 64


def long_straight_line(blocks):
    """Whether ``blocks`` have no loop and more than ``LONG_STRAIGHT_LINE`` statements."""
    return (_statement_count(blocks) > LONG_STRAIGHT_LINE
            and not compute_cfg_from_blocks(blocks).loops())


def _statement_count(blocks):
    return sum(len(block.body) for block in blocks.values())


def _carries_float(header, typeof):
    """Whether a loop header has a float phi (a value carried around the loop)."""
    return any(isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi"
               and isinstance(typeof(stmt.target.name), types.Float)
               for stmt in header.find_insts(ir.Assign))


def is_product(partial):
    """Whether ``partial`` is multiplied with its seed (not 1 or -1)."""
    return isinstance(partial, (ArgPartial, FuncPartial))


def emit_factor(e, partial, ans, args):
    """The value of a partial that is multiplied with its seed (``is_product``). A partial
    that is the result (``exp``'s) is the result, and one that is a math function of the
    argument (``sin``'s ``cos``: ``rules.core.beside_primal``) is that call: neither
    compiles anything of its own, where a kernel is a compile per process (and forward
    mode over it, in an hvp, a derived one)."""
    if isinstance(partial, ArgPartial):
        return args[partial.index]
    if isinstance(partial, FuncPartial) and partial.is_ans:
        return ans
    if isinstance(partial, FuncPartial) and partial.beside is not None and len(args) == 1:
        callee, negate = partial.beside
        d = e.call(callee, [args[0]], hint="d")
        return e.neg(d) if negate else d
    call_args = [ans] if partial.takes_ans else []
    for i, a in enumerate(args):
        call_args.append(a if i in partial.reads_args else e.const(0.0, hint="unused"))
    if partial.takes_ans and not partial.reads_ans:
        call_args[0] = e.const(0.0, hint="unused")
    return e.call(partial.jit, call_args, hint="d")


def emit_product_sums(e, pairs, product):
    """The terms ``g * d`` of ``pairs`` ((seed, factor) each), two at a time through
    ``adjoint_product_sum`` (one NaN check per two products), an odd last one through
    ``product``."""
    terms = []
    for k in range(0, len(pairs) - 1, 2):
        (g1, d1), (g2, d2) = pairs[k], pairs[k + 1]
        terms.append(e.call(adjoint_product_sum, [g1, d1, g2, d2], hint="tan"))
    if len(pairs) % 2:
        terms.append(emit_product(e, *pairs[-1], product))
    return terms


def emit_seed_terms(e, g, partials, ans, args, product):
    """Reverse mode's ``(operand, g * d)`` for each ``(operand, partial)`` of one
    statement (a partial given as a variable is the factor ``d`` itself). In
    straight-line code (``adjoint_product_chain``), the two products of a binary
    operator's operands are one call, checked for NaN together
    (``adjoint_product_pair``)."""
    if product is adjoint_product_chain and len(partials) == 2 and all(
            isinstance(p, ir.Var) or is_product(p) for _, p in partials):
        d1, d2 = (p if isinstance(p, ir.Var) else emit_factor(e, p, ans, args)
                  for _, p in partials)
        pair = e.call(adjoint_product_pair, [g, d1, d2], hint="prods")
        return [(a, e.item(pair, k, hint="prod")) for k, (a, _) in enumerate(partials)]
    return [(a, emit_product(e, g, p, product) if isinstance(p, ir.Var)
             else emit_partial(e, p, g, ans, args, product=product)) for a, p in partials]


def emit_partial(e, partial, g, ans, args, guard=True, product=adjoint_product):
    """``g * d`` for one partial derivative ``d`` (see ``rules.core``): an adjoint's
    contribution in reverse mode (``g`` the output adjoint), a tangent term in forward mode
    (``g`` the input tangent). Arguments the partial does not read are passed as 0.0, so
    the reverse pass never saves them. The product is ``product(g, d)``, one of the
    guarded products (``product_form``): a zero seed contributes 0 even when ``d`` is
    inf/NaN; ``guard=False`` multiplies plainly (whole arrays of tangents and partials in
    forward mode)."""
    if partial is ONE:
        return g
    if partial is MINUS_ONE:
        return e.neg(g)
    if is_product(partial):
        return emit_product(e, g, emit_factor(e, partial, ans, args),
                            product if guard else None)
    raise TypeError(partial)


def emit_product(e, g, d, product):
    """``g * d``, where a zero seed contributes 0 even when ``d`` is inf or NaN: in
    reverse mode a value that never reaches the output, in forward mode a value whose
    tangent is exactly zero (``atan2(0 * u, 0.0)`` has tangent 0, not 0 * nan)."""
    if not product:
        return e.binop(operator.mul, g, d, hint="prod")
    return e.call(product, [g, d], hint="prod")


def plain_constant_products(blocks):
    """Rewrite ``adjoint_product(g, c)`` into ``g * c`` where ``c`` is a finite, nonzero
    number constant (``100.0 * a``'s partial): the guard changes only a NaN product of a
    zero factor with inf or NaN, which a finite nonzero ``c`` cannot make (up to the sign
    of a zero). A loop body then multiplies plainly, without compares and selects."""
    constants, products = _single_definitions(blocks)
    for block in blocks.values():
        for stmt in block.body:
            value = getattr(stmt, "value", None)
            if not (isinstance(value, ir.Expr) and value.op == "call"
                    and products.get(value.func.name) and len(value.args) == 2):
                continue
            g, d = value.args
            if _plain_factor(constants.get(d.name)) or _plain_factor(constants.get(g.name)):
                stmt.value = ir.Expr.binop(operator.mul, g, d, value.loc)


def _single_definitions(blocks):
    """Per variable assigned exactly once: its constant's value (``constants``) and
    whether it is a guarded product's global (``products``)."""
    counts, constants, products = {}, {}, {}
    for block in blocks.values():
        for stmt in block.find_insts(ir.Assign):
            name, value = stmt.target.name, stmt.value
            counts[name] = counts.get(name, 0) + 1
            if isinstance(value, ir.Const):
                constants[name] = value.value
            elif isinstance(value, ir.Global):
                products[name] = any(value.value is p for p in ADJOINT_PRODUCTS)
    once = {name for name, n in counts.items() if n == 1}
    return ({k: v for k, v in constants.items() if k in once},
            {k: v for k, v in products.items() if k in once})


def _plain_factor(value):
    """A number whose product with anything needs no guard: finite and nonzero."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and value != 0 and math.isfinite(value))
