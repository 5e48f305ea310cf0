"""Replace calls to composite NumPy functions by adjit's helpers (``rules/composites.py``).

``np.concatenate((a, b, c))`` becomes ``join_rows(join_rows(a, b), c)`` when the tuple is
built in the function (its items are then passed one by one: a tuple of differentiated
arrays passed to a call has no adjoint). ``np.linalg.slogdet(a)`` becomes
``(slogdet_sign(a), logabsdet(a))``, built in place, and ``np.linalg.eigh`` likewise.
``np.interp`` calls a plain helper. ``ForwardTupleItems`` then forwards the unpacked items and drops the tuples nothing reads
any more. Calls of other forms are left alone, and are refused by the transform if they
need a derivative.
"""
import inspect

from numba.core.dispatcher import Dispatcher
from numba.core import ir, types
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name
from .call_binding import constant_value, default_value
from ..ir.nodes import global_values, single_definition
from ..rules.composites import lookup_composite


def _insert_call(fn, block, stmt, func, args):
    """Insert ``fresh = func(*args)`` (an ``@njit`` helper) before ``stmt``; return the
    new expression and its signature, or None when the helper does not type."""
    tyctx = cpu_target.typing_context
    fnty = types.Dispatcher(func)
    sig = tyctx.resolve_function_type(fnty, tuple(fn.typeof(a.name) for a in args), {})
    if sig is None:
        return None
    fvar = ir.Var(block.scope, fresh_name(f"${func.__name__}"), stmt.loc)
    block.body.insert(block.body.index(stmt),
                      ir.Assign(ir.Global(func.__name__, func, stmt.loc), fvar, stmt.loc))
    fn.typemap[fvar.name] = fnty
    expr = ir.Expr.call(fvar, list(args), (), stmt.loc)
    fn.calltypes[expr] = sig
    return expr, sig


def _read_items(fn, name):
    """The indices of tuple ``name`` that the function reads (``t[k]`` or unpacking into
    a variable that is used, not only copied), or None when it uses the tuple some other
    way."""
    uses = {}
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            for var in stmt.list_vars():
                if not (isinstance(stmt, ir.Assign) and var is stmt.target):
                    uses.setdefault(var.name, []).append(stmt)

    def used(var_name, depth=0):
        """Whether ``var_name`` or a copy of it (``sv = $item``) is used."""
        for use in uses.get(var_name, []):
            if isinstance(use, ir.Del):
                continue
            if not (isinstance(use, ir.Assign) and isinstance(use.value, ir.Var)):
                return True
            if depth > 50 or used(use.target.name, depth + 1):
                return True
        return False

    def read_of(tuple_name):
        found = set()
        for use in uses.get(tuple_name, []):
            value = use.value if isinstance(use, ir.Assign) else None
            if not isinstance(value, ir.Expr):
                return None
            if value.op == "static_getitem" and isinstance(value.index, int):
                if used(use.target.name):
                    found.add(value.index)
            elif value.op == "exhaust_iter":
                inner = read_of(use.target.name)
                if inner is None:
                    return None
                found |= inner
            else:
                return None
        return found

    return read_of(name)


class CompositesToHelpers:
    """Stacking functions and ``slogdet`` -> calls of adjit's ``@njit`` helpers."""

    name = "composites_to_helpers"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        defs = {s.target.name: s.value for b in fn.func_ir.blocks.values() for s in b.body
                if isinstance(s, ir.Assign)}
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and value.vararg is None):
                    continue
                composite = lookup_composite(gvals.get(value.func.name))
                if composite is None:
                    continue
                if composite.shape == "stacking":
                    self.stack(fn, block, stmt, composite, defs)
                elif value.kws or not value.args:
                    continue
                elif composite.shape == "parts":
                    self.parts(fn, block, stmt, composite)
                else:
                    self.helper(fn, block, stmt, composite.plan)

    def stack(self, fn, block, stmt, composite, defs):
        """Join the items of a tuple built in place, pairwise."""
        value = stmt.value
        args, kws = list(value.args), dict(value.kws)
        axis = args.pop(1) if len(args) == 2 else kws.pop("axis", None)
        items = defs.get(args[0].name) if len(args) == 1 and not kws else None
        if not (isinstance(items, ir.Expr) and items.op == "build_tuple" and items.items):
            return
        ranks = {fn.typeof(v.name).ndim if isinstance(fn.typeof(v.name), types.Array)
                 and isinstance(fn.typeof(v.name).dtype, types.Float) else None
                 for v in items.items}
        if len(ranks) != 1 or None in ranks:
            return
        plans = composite.plan
        if axis is not None:
            added, by_axis = composite.axes or (0, {})
            k = constant_value(fn, defs, axis)
            rank = next(iter(ranks)) + added
            plans = by_axis.get(k % rank if isinstance(k, int) and -rank <= k < rank
                                else None, {})
        if next(iter(ranks)) not in plans:
            return
        each, join = plans[next(iter(ranks))]
        steps = [(each, [v]) for v in items.items] if each is not None else []
        self.replace(fn, block, stmt, steps, join, list(items.items))

    @staticmethod
    def helper(fn, block, stmt, by_rank):
        """``y = f(x, ...)`` -> ``y = helper(x, ...)``, the helper for ``x``'s rank, with
        every parameter given (an omitted trailing default becomes a constant, as
        ``BindCallArguments`` does for other ``@njit`` callees: the derived programs
        take every parameter)."""
        first = fn.typeof(stmt.value.args[0].name)
        rank = first.ndim if isinstance(first, types.Array) else 0
        helper = by_rank.get(rank)
        args = list(stmt.value.args)
        if helper is not None and not isinstance(helper, Dispatcher):  # a chooser
            helper = helper([_literal_type(fn, a) for a in args]
                            if getattr(helper, "literal_types", False)
                            else [types.unliteral(fn.typeof(a.name)) for a in args])
        if helper is None:
            return
        params = list(inspect.signature(helper.py_func).parameters.values())
        for param in params[len(args):]:
            found = (None if param.default is param.empty
                     else default_value(param.name, param.default, stmt.loc))
            if found is None:
                return
            var = ir.Var(block.scope, fresh_name(f"${param.name}"), stmt.loc)
            fn.typemap[var.name] = found[1]
            block.body.insert(block.body.index(stmt), ir.Assign(found[0], var, stmt.loc))
            args.append(var)
        found = _insert_call(fn, block, stmt, helper, args)
        if found is None or found[1].return_type != fn.typeof(stmt.target.name):
            return
        fn.calltypes.pop(stmt.value, None)
        stmt.value = found[0]

    @staticmethod
    def parts(fn, block, stmt, composite):
        """``t = f(*args)`` -> ``t = (p0(*args), p1(*args), ...)``. A part nothing reads
        is computed by its ``unread`` stand-in when it has one (the same value,
        declared non-differentiable), so its rule is never asked for."""
        loc, items = stmt.loc, []
        argtypes = [types.unliteral(fn.typeof(a.name)) for a in stmt.value.args]
        if not composite.matches(argtypes, fn.typeof(stmt.target.name)):
            return  # left as the NumPy call, which both modes refuse by name
        read = _read_items(fn, stmt.target.name)
        prims = [composite.unread.get(p, p) if read is not None and k not in read else p
                 for k, p in enumerate(composite.plan)]
        for prim in prims:
            found = _insert_call(fn, block, stmt, prim, stmt.value.args)
            if found is None:
                return
            var = ir.Var(block.scope, fresh_name("$part"), loc)
            fn.typemap[var.name] = found[1].return_type
            block.body.insert(block.body.index(stmt), ir.Assign(found[0], var, loc))
            items.append(var)
        if types.Tuple([fn.typeof(v.name) for v in items]) != fn.typeof(stmt.target.name):
            return  # (the inserted calls are dead code then)
        fn.calltypes.pop(stmt.value, None)
        stmt.value = ir.Expr.build_tuple(items, loc)

    @staticmethod
    def replace(fn, block, stmt, steps, join, items):
        """Emit ``steps`` (a per-item helper and its args) then fold their results (or
        ``items``) with ``join``; the last call replaces ``stmt``'s value if its type
        matches."""
        loc, made = stmt.loc, []
        for func, args in steps:
            found = _insert_call(fn, block, stmt, func, args)
            if found is None:
                return
            var = ir.Var(block.scope, fresh_name("$part"), loc)
            fn.typemap[var.name] = found[1].return_type
            block.body.insert(block.body.index(stmt), ir.Assign(found[0], var, loc))
            made.append((var, found))
        acc = (made and [m[0] for m in made]) or items
        current = acc[0]
        expr = sig = None
        for nxt in acc[1:]:
            found = _insert_call(fn, block, stmt, join, [current, nxt])
            if found is None:
                return
            expr, sig = found
            if nxt is not acc[-1]:
                current = ir.Var(block.scope, fresh_name("$joined"), loc)
                fn.typemap[current.name] = sig.return_type
                block.body.insert(block.body.index(stmt), ir.Assign(expr, current, loc))
        if expr is None:
            return
        if sig.return_type != fn.typeof(stmt.target.name):
            return  # (the inserted statements are dead code then)
        fn.calltypes.pop(stmt.value, None)
        stmt.value = expr


def _literal_type(fn, var):
    """The type of ``var`` as a literal when its one assigned value is a constant integer
    or bool (the user's, or an omitted default's from ``BindCallArguments``), else its
    type."""
    value = single_definition(fn.func_ir.blocks, var.name)
    if isinstance(value, ir.Const) and isinstance(value.value, (bool, int)):
        return types.literal(value.value)
    return fn.typeof(var.name)
