"""Bind Python calling conventions to plain positional calls.

Numba types ``h(x, scale=2.0)``, ``h(x)`` (defaults omitted), ``h(*t)`` and
``np.zeros(n, dtype=np.float64)`` with the callee's Python signature, but the transforms
only know positional calls whose arguments line up with the callee's parameters. These
passes rewrite such calls in place so that every argument is an ``ir.Var`` in parameter
order, and ``T = type(x); T(1)`` so that it calls the scalar class itself.

Every call keeps its calltypes entry (the same ``ir.Expr`` object, mutated), with the
argument types of the rewritten call; new variables get typemap entries.
"""
import inspect
import operator

import numba
import numpy as np
from numba.core import ir, types
from numba.core.dispatcher import Dispatcher
from numba.core.registry import cpu_target

from ..ir.builder import fresh_name
from ..ir.nodes import global_value, global_values

def is_numpy_function(obj):
    """Whether ``obj`` is a NumPy function or ufunc (``np.zeros``, ``np.linalg.norm``,
    ``np.sin``): Numba types these with NumPy's signature, so their keyword forms
    (``dtype=``, ``axis=``, ``num=``) can be made positional. A function registered in
    ``adjit/rules`` thus needs no entry here for ``f(x, axis=1)`` to reach its rule."""
    if isinstance(obj, np.ufunc):
        return True
    module = getattr(obj, "__module__", None) or ""
    return callable(obj) and (module == "numpy" or module.startswith("numpy."))


_PLAIN = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def const_type(value):
    """The Numba type a default becomes as an ``ir.Const``, or None when adjit does not
    materialise such defaults (anything but None, bools and numbers)."""
    if value is None:
        return types.none
    if isinstance(value, (bool, int, float, complex, np.bool_, np.number)):
        return types.unliteral(numba.typeof(value))
    return None


def default_value(name, default, loc):
    """``(IR value, Numba type)`` that stands for an omitted default, or None when adjit
    does not materialise it. Numbers, bools, None, strings and tuples of numbers
    (``args=()``) become constants; a NumPy number type or dtype (``dtype=np.float64``)
    a global; a NumPy array (``def f(x, w=WEIGHTS)``) becomes a global, typed
    read-only as Numba types global arrays; an ``@njit`` function
    (``def calc(u, func=update)``) becomes a global of its dispatcher type."""
    typ = const_type(default)
    if typ is not None:
        return ir.Const(default, loc), typ
    if isinstance(default, tuple) and all(const_type(v) is not None for v in default):
        return ir.Const(default, loc), numba.typeof(default)
    if isinstance(default, np.ndarray) and default.dtype.kind in "biuf":
        return ir.Global(name, default, loc), numba.typeof(default).copy(readonly=True)
    if isinstance(default, Dispatcher):
        return ir.Global(name, default, loc), numba.typeof(default)
    if isinstance(default, str):  # def penalty(x, kind="l2")
        return ir.Const(default, loc), types.unicode_type
    if (isinstance(default, type) and issubclass(default, np.number)
            or isinstance(default, np.dtype)):  # def buffer(n, dtype=np.float64)
        return ir.Global(name, default, loc), numba.typeof(default)
    return None


def single_definitions(fn):
    """Map name -> assigned value for the variables assigned exactly once: only those can
    be looked through (a tuple rebuilt in a loop is not the one built before it)."""
    count, value = {}, {}
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                count[stmt.target.name] = count.get(stmt.target.name, 0) + 1
                value[stmt.target.name] = stmt.value
    return {name: value[name] for name, n in count.items() if n == 1}


def constant_value(fn, defs, var):
    """The value of ``var`` when it is a constant (an integer literal type, or a constant
    in ``defs``, a map name -> assigned value), else None."""
    typ = fn.typeof(var.name)
    if isinstance(typ, types.IntegerLiteral):
        return typ.literal_value
    value = defs.get(var.name)
    return value.value if isinstance(value, ir.Const) else None


def built_tuple_items(defs, var):
    """The items of the ``build_tuple`` that ``var`` holds (through copies), when it and
    every item are assigned once; else None."""
    seen = set()
    while var.name in defs and var.name not in seen:
        seen.add(var.name)
        value = defs[var.name]
        if isinstance(value, ir.Var):
            var = value
            continue
        if (isinstance(value, ir.Expr) and value.op == "build_tuple"
                and all(item.name in defs for item in value.items)):
            return list(value.items)
        return None
    return None


def star_items(fn, defs, scope, var, loc):
    """``(reads, items)``: the variables a ``*t`` argument spreads into, and the
    assignments reading those that are items of a tuple made elsewhere. ``h(x, *args)``
    passes ``(x,) + tuple(args)``: each side is a tuple built here or one whose items are
    read (``unpack_tuple``). ``(None, None)`` when neither applies."""
    items = built_tuple_items(defs, var)
    if items is not None:
        return [], items
    value = defs.get(var.name)
    while isinstance(value, ir.Var):  # copies
        var, value = value, defs.get(value.name)
    if isinstance(value, ir.Expr) and value.op == "binop" and value.fn is operator.add:
        left = star_items(fn, defs, scope, value.lhs, loc)
        right = star_items(fn, defs, scope, value.rhs, loc)
        if left[1] is not None and right[1] is not None:
            return left[0] + right[0], left[1] + right[1]
        return None, None
    if (isinstance(value, ir.Expr) and value.op == "call" and len(value.args) == 1
            and isinstance(defs.get(value.func.name), ir.Global)
            and defs[value.func.name].value is tuple):  # tuple(args): the same items
        return star_items(fn, defs, scope, value.args[0], loc)
    reads = unpack_tuple(fn, scope, var, loc)
    return (reads, [r.target for r in reads]) if reads is not None else (None, None)


def unpack_tuple(fn, scope, var, loc):
    """Assignments ``t_k = t[k]`` reading every item of tuple ``var`` (``h(*args)`` with
    ``args`` an argument, or the function's own ``*args`` forwarded SciPy-style), typed;
    None when ``var`` is not a tuple of known length."""
    typ = fn.typeof(var.name)
    if not isinstance(typ, types.BaseTuple):
        return None
    reads = []
    for k, item in enumerate(typ.types):
        target = ir.Var(scope, fresh_name("$star_item"), loc)
        fn.typemap[target.name] = item
        reads.append(ir.Assign(ir.Expr.static_getitem(var, k, None, loc), target, loc))
    return reads


def drop_unread_packing(fn):
    """Remove what packed a ``*t`` argument that is now spread (``tuple(args)``, the
    ``(x,) + ...`` concatenation and their copies) once nothing reads it: left in place,
    the transforms would meet a ``tuple(...)`` call of differentiated values."""
    blocks = fn.func_ir.blocks.values()

    def packing(stmt):
        value = stmt.value
        if not isinstance(fn.typeof(stmt.target.name), types.BaseTuple):
            return False
        return isinstance(value, ir.Var) or (isinstance(value, ir.Expr) and (
            value.op == "build_tuple" or (value.op == "binop" and value.fn is operator.add)
            or (value.op == "call" and len(value.args) == 1
                and global_value(fn.func_ir.blocks, value.func) is tuple)))
    for _ in range(4):
        read = {v.name for b in blocks for s in b.body for v in s.list_vars()
                if not (isinstance(s, ir.Assign) and v is s.target)}
        for block in blocks:
            block.body = [s for s in block.body if not (
                isinstance(s, ir.Assign) and s.target.name not in read and packing(s))]


class BindCallArguments:
    """``h(x, scale=s)``, ``h(x)``, ``h(*t)``, ``np.zeros(n, dtype=d)`` -> positional.

    * ``@njit`` callees (``types.Dispatcher``): every parameter gets an argument, in the
      order of ``inspect.signature(py_func)``; an omitted default becomes a constant (its
      ``types.Omitted`` in the signature becomes the constant's type). The transforms
      derive the callee for the call's argument types and pass it ``expr.args``, so both
      must cover every parameter. Callees with ``*args``/``**kwargs`` or keyword-only
      parameters keep their keywords and defaults (Numba packs star arguments itself).
    * NumPy functions (``is_numpy_function``): keywords become positional, in the order
      of the typing signature's ``pysig``; a default skipped over becomes a constant,
      trailing defaults stay omitted. The signature is re-resolved for the new arguments.
    * Any call ``f(*t)`` whose tuple ``t`` is built in the function gets ``t``'s items as
      arguments.

    A call that cannot be bound exactly (an unrepresentable default, ``**kw``, a tuple not
    built here) is left as it is; the transforms then refuse it by name.
    """

    name = "bind_call_arguments"

    def run(self, fn):
        defs = single_definitions(fn)
        gvals = global_values(fn.func_ir.blocks)
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if (isinstance(expr, ir.Expr) and expr.op == "call"
                        and expr in fn.calltypes and expr.varkwarg is None):
                    body.extend(self.bind(fn, block, stmt, expr, defs, gvals))
                body.append(stmt)
            block.body = body
        drop_unread_packing(fn)

    def bind(self, fn, block, stmt, expr, defs, gvals):
        """Rewrite one call in place; return the constant assignments to put before it."""
        positional, reads = list(expr.args), []
        if expr.vararg is not None:
            reads, items = star_items(fn, defs, block.scope, expr.vararg, stmt.loc)
            if items is None:
                return []
            positional += items
        ftype = fn.typeof(expr.func)
        sig = fn.calltypes[expr]
        if isinstance(ftype, types.Dispatcher):
            return reads + self.bind_dispatcher(fn, block, stmt, expr, positional, ftype, sig)
        callee = gvals.get(expr.func.name, getattr(ftype, "typing_key", None))
        if isinstance(ftype, types.Function) and is_numpy_function(callee):
            return reads + self.bind_function(fn, block, stmt, expr, positional, ftype, sig)
        if expr.vararg is not None and not expr.kws:
            self.expand_vararg(fn, expr, positional, ftype, sig)
        return reads

    def bind_dispatcher(self, fn, block, stmt, expr, positional, ftype, sig):
        """An ``@njit`` callee: all parameters positional, omitted defaults as constants."""
        params = list(inspect.signature(ftype.dispatcher.py_func).parameters.values())
        if any(p.kind not in _PLAIN for p in params):
            if expr.vararg is not None and not expr.kws and any(
                    p.kind is inspect.Parameter.VAR_POSITIONAL for p in params) and all(
                    p.kind is not inspect.Parameter.KEYWORD_ONLY for p in params):
                # h(*t) with def h(x, *rest): the same call as h(a, b); Numba packs the
                # rest into the StarArgTuple of the signature either way
                expr.args, expr.kws, expr.vararg = positional, (), None
            return []
        if len(sig.args) != len(params):
            return []
        if not expr.kws and expr.vararg is None and len(positional) == len(params):
            return []  # already plain
        slots = self.slots(params, positional, expr.kws)
        if slots is None:
            return []
        return self.finish(fn, block, stmt, expr, params, slots, sig, trailing=True)

    def bind_function(self, fn, block, stmt, expr, positional, ftype, sig):
        """A NumPy function: keywords positional in ``pysig`` order, signature re-typed."""
        if not expr.kws and expr.vararg is None:
            return []
        pysig = getattr(sig, "pysig", None)
        if pysig is None:
            if expr.kws:
                return []
            params = []  # f(*t) without a Python signature: the items are the arguments
        else:
            params = list(pysig.parameters.values())
            if any(p.kind not in _PLAIN for p in params):
                return []
        if not params:
            slots = list(positional)
        else:
            slots = self.slots(params, positional, expr.kws)
            if slots is None:
                return []
        return self.finish(fn, block, stmt, expr, params, slots, sig, trailing=False,
                           retype=ftype)

    @staticmethod
    def slots(params, positional, kws):
        """Arguments by parameter index (None where omitted), or None if they do not bind."""
        slots = [None] * len(params)
        if len(positional) > len(params):
            return None
        slots[:len(positional)] = positional
        names = [p.name for p in params]
        for name, var in kws:
            if name not in names or slots[names.index(name)] is not None:
                return None
            if params[names.index(name)].kind is inspect.Parameter.POSITIONAL_ONLY:
                return None
            slots[names.index(name)] = var
        return slots

    def finish(self, fn, block, stmt, expr, params, slots, sig, trailing, retype=None):
        """Fill the omitted slots with constants, rewrite the call and its signature.

        ``trailing``: materialise omitted defaults after the last given argument too.
        ``retype``: re-resolve the signature through this function type (NumPy callees)
        and keep the old call unless the result type is unchanged."""
        last = max([i for i, v in enumerate(slots) if v is not None], default=-1)
        upto = len(slots) if trailing else last + 1
        consts, args, argtypes = [], [], []
        for i in range(upto):
            var = slots[i]
            if var is None:
                default = params[i].default
                found = (None if default is inspect.Parameter.empty
                         else default_value(params[i].name, default, stmt.loc))
                if found is None:
                    return []
                value, typ = found
                var = ir.Var(block.scope, fresh_name(f"${params[i].name}"), stmt.loc)
                consts.append((ir.Assign(value, var, stmt.loc), typ))
                argtypes.append(typ)
            elif retype is None and i < len(sig.args) and not isinstance(
                    sig.args[i], types.Omitted):
                argtypes.append(sig.args[i])
            else:
                argtypes.append(fn.typeof(var))
            args.append(var)
        if retype is not None:
            new_sig = self.resolve(retype, argtypes)
            if new_sig is None or new_sig.return_type != sig.return_type:
                return []
        else:
            new_sig = sig.replace(args=tuple(argtypes))
        for assign, typ in consts:
            fn.typemap[assign.target.name] = typ
        expr.args, expr.kws, expr.vararg = args, (), None
        fn.calltypes[expr] = new_sig
        return [assign for assign, _ in consts]

    def expand_vararg(self, fn, expr, positional, ftype, sig):
        """``f(*t)`` -> ``f(a, b)`` for any other callee whose signature allows it."""
        if len(sig.args) == len(positional) and not any(
                isinstance(t, (types.StarArgTuple, types.StarArgUniTuple, types.Omitted))
                for t in sig.args):
            expr.args, expr.kws, expr.vararg = positional, (), None
            return
        if isinstance(ftype, types.Function):
            new_sig = self.resolve(ftype, [fn.typeof(v) for v in positional])
            if new_sig is not None and new_sig.return_type == sig.return_type:
                expr.args, expr.kws, expr.vararg = positional, (), None
                fn.calltypes[expr] = new_sig

    @staticmethod
    def resolve(ftype, argtypes):
        """Numba's signature for calling ``ftype`` with positional ``argtypes``, or None."""
        try:
            return cpu_target.typing_context.resolve_function_type(ftype, tuple(argtypes), {})
        except Exception:  # noqa: BLE001 -- any typing failure means: leave the call
            return None


def class_object(typ):
    """The global (``np.float64``...) whose Numba type is ``NumberClass`` ``typ``, or None."""
    obj = getattr(np, getattr(typ.instance_type, "name", ""), None)
    if obj is None:
        return None
    try:
        same = cpu_target.typing_context.resolve_value_type(obj) == typ
    except Exception:  # noqa: BLE001 -- not a Numba-typable global
        return None
    return obj if same else None


class CallNumberClassGlobals:
    """``T = type(x); T(1)`` and ``type(beta)(np.inf)`` call the class itself.

    A call of a variable typed ``types.NumberClass`` that is not a loaded global becomes a
    call of the matching NumPy scalar class (``np.float64`` for ``class(float64)``), which
    has the same Numba type, so rules keyed by the class (scalar conversions) apply. A
    ``type(...)`` call left unused is removed."""

    name = "call_number_class_globals"

    def run(self, fn):
        defs = single_definitions(fn)
        replaced = set()
        for block in fn.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(expr, ir.Expr) and expr.op == "call":
                    ftype = fn.typemap.get(expr.func.name)
                    if (isinstance(ftype, types.NumberClass) and not isinstance(
                            defs.get(expr.func.name), (ir.Global, ir.FreeVar))):
                        obj = class_object(ftype)
                        if obj is not None:
                            var = ir.Var(block.scope, fresh_name(f"${obj.__name__}"),
                                         stmt.loc)
                            fn.typemap[var.name] = ftype
                            body.append(ir.Assign(ir.Global(obj.__name__, obj, stmt.loc),
                                                  var, stmt.loc))
                            replaced.add(expr.func.name)
                            expr.func = var
                body.append(stmt)
            block.body = body
        if replaced:
            self.remove_dead_type_calls(fn, replaced)

    @staticmethod
    def remove_dead_type_calls(fn, names):
        """Drop ``T = type(x)`` for the ``names`` nothing reads any more, and the ``type``
        global loads that only those calls read."""
        gvals = global_values(fn.func_ir.blocks)

        def used():
            return {v.name for b in fn.func_ir.blocks.values() for s in b.body
                    for v in s.list_vars() if not (isinstance(s, ir.Assign)
                                                   and v.name == s.target.name)}

        removed = set()
        for _ in range(2):  # the type(...) calls, then the type globals they read
            live = used()
            for block in fn.func_ir.blocks.values():
                keep = []
                for stmt in block.body:
                    if isinstance(stmt, ir.Assign) and stmt.target.name not in live:
                        val = stmt.value
                        if (stmt.target.name in names and isinstance(val, ir.Expr)
                                and val.op == "call" and gvals.get(val.func.name) is type):
                            fn.calltypes.pop(val, None)
                            removed.add(stmt.target.name)
                            continue
                        if isinstance(val, ir.Global) and val.value is type:
                            removed.add(stmt.target.name)
                            continue
                    keep.append(stmt)
                block.body = keep
        for block in fn.func_ir.blocks.values():
            block.body = [s for s in block.body
                          if not (isinstance(s, ir.Del) and s.value in removed)]


_jitted = {}


def jitable_function(ftype, sig):
    """The Python function behind a ``@register_jitable`` call (an overload whose
    implementation is the function itself), else None."""
    key = getattr(ftype, "typing_key", None)
    if not _user_function_type(ftype):
        return None
    for template in ftype.templates:
        overload_func = getattr(template, "_overload_func", None)
        try:
            if overload_func is not None and overload_func(*sig.args) is key:
                return key
        except Exception:  # an overload that refuses these types: not this one
            continue
    return None


def _user_function_type(ftype):
    """Whether ``ftype`` types a Python function of the user's (not Numba's or NumPy's:
    those have rules, and Numba's stencil checks use ``literal_unroll``)."""
    key = getattr(ftype, "typing_key", None)
    return (isinstance(ftype, types.Function) and inspect.isfunction(key)
            and (key.__module__ or "").split(".")[0] not in ("numba", "numpy", "adjit"))


def user_overload_dispatcher(ftype, argtypes, kwtypes):
    """The dispatcher Numba compiles for a call of a user's ``@overload`` with these
    argument types, else None. An overload's implementation for those types is the code
    that runs, so adjit derives it like an ``@njit`` helper. Numba's own lookup is asked
    (``_get_impl``), which finds the implementation typing made in its cache."""
    if not _user_function_type(ftype):
        return None
    tyctx = cpu_target.typing_context
    for template in ftype.templates:
        if not hasattr(template, "_get_impl"):
            continue
        try:
            disp, _ = template(tyctx)._get_impl(argtypes, kwtypes)
        except Exception:  # an overload that refuses these types: not this one
            continue
        if disp is not None:
            return disp
    return None


class JitableFunctionsToDispatchers:
    """A call of a ``@register_jitable`` function becomes a call of ``numba.njit`` of
    it, and a call of a user's ``@overload`` a call of the dispatcher of its
    implementation for those types: the same code (Numba compiles exactly that), which
    adjit then binds and derives like any ``@njit`` helper."""

    name = "jitable_functions_to_dispatchers"

    def run(self, fn):
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "call"
                        and expr in fn.calltypes and not expr.vararg):
                    continue
                ftype = fn.typemap.get(expr.func.name)
                argtypes = tuple(fn.typeof(a.name) for a in expr.args)
                kwtypes = {k: fn.typeof(v.name) for k, v in expr.kws}
                func = jitable_function(ftype, fn.calltypes[expr])
                if func is not None:
                    dispatcher = _jitted.get(func) or _jitted.setdefault(func, numba.njit(func))
                else:
                    dispatcher = user_overload_dispatcher(ftype, argtypes, kwtypes)
                    if dispatcher is None:
                        continue
                    func = ftype.typing_key  # named as the user calls it
                fnty = types.Dispatcher(dispatcher)
                sig = tyctx.resolve_function_type(fnty, argtypes, kwtypes)
                if sig is None:
                    continue
                var = ir.Var(block.scope, fresh_name(f"${func.__name__}"), stmt.loc)
                fn.typemap[var.name] = fnty
                block.body.insert(block.body.index(stmt), ir.Assign(
                    ir.Global(func.__name__, dispatcher, stmt.loc), var, stmt.loc))
                expr.func = var
                fn.calltypes[expr] = sig


class CastToExplicitSignature:
    """``h(a, x)`` of a helper compiled for explicit signatures (``@jit("f8(i8, f8)")``)
    converts each number argument to the signature's type, as Numba's call does
    (``h(2.7, x)`` passes 2). adjit derives the helper at the types it is called with, so
    the conversion is written into the call: ``h(np.int64(a), x)``. A number returned in
    another type than the signature's is converted back the same way."""

    name = "cast_to_explicit_signature"

    def run(self, fn):
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                expr = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(expr, ir.Expr) and expr.op == "call" and not expr.kws
                        and expr.vararg is None):
                    continue
                ftype, sig = fn.typemap.get(expr.func.name), fn.calltypes.get(expr)
                if not (isinstance(ftype, types.Dispatcher) and sig is not None
                        and not ftype.dispatcher._can_compile
                        and len(sig.args) == len(expr.args)):
                    continue
                expr.args = [self.converted(fn, block, stmt, arg, want)
                             for arg, want in zip(expr.args, sig.args)]
                self.convert_result(fn, block, stmt, ftype.dispatcher, sig)

    @staticmethod
    def converted(fn, block, stmt, arg, want):
        """``arg``, or a new variable holding it converted to number type ``want``."""
        have = types.unliteral(fn.typeof(arg.name))
        if not (isinstance(have, types.Number) and isinstance(want, types.Number)
                and have != want):
            return arg
        return _convert(fn, block, block.body.index(stmt), arg, want, stmt.loc)

    @staticmethod
    def convert_result(fn, block, stmt, dispatcher, sig):
        """Where the helper's body returns another number type than the signature says
        (``f8(f4, f4)`` over ``S * up``, a float32), the call takes the body's type and
        the result is converted after it."""
        from .typed_ir import capture
        try:
            natural = capture(dispatcher, tuple(sig.args)).return_type
        except Exception:  # noqa: BLE001 -- the transform reports what it cannot type
            return
        if not (isinstance(natural, types.Number) and isinstance(sig.return_type, types.Number)
                and natural != sig.return_type):
            return
        raw = ir.Var(block.scope, fresh_name("$natural"), stmt.loc)
        fn.typemap[raw.name] = natural
        target, stmt.target = stmt.target, raw
        fn.calltypes[stmt.value] = sig.replace(return_type=natural)
        _convert(fn, block, block.body.index(stmt) + 1, raw, sig.return_type, stmt.loc, target)


def _convert(fn, block, at, var, want, loc, out=None):
    """Insert ``out = np.<want>(var)`` at ``block.body[at]`` (``out`` a fresh variable
    unless given); return ``out``."""
    cls = getattr(np, want.name)
    tyctx = cpu_target.typing_context
    fnty = tyctx.resolve_value_type(cls)
    func = ir.Var(block.scope, fresh_name(f"${want.name}"), loc)
    fn.typemap[func.name] = fnty
    if out is None:
        out = ir.Var(block.scope, fresh_name("$converted"), loc)
        fn.typemap[out.name] = want
    call = ir.Expr.call(func, [var], (), loc)
    fn.calltypes[call] = tyctx.resolve_function_type(fnty, (fn.typeof(var.name),), {})
    block.body[at:at] = [ir.Assign(ir.Global(cls.__name__, cls, loc), func, loc),
                         ir.Assign(call, out, loc)]
    return out
