"""What calls do to memory, for the write, aliasing and randomness analyses of every
stage: which array arguments a call may write (an ``@njit`` callee is captured and
analysed; a registered primitive answers from its ``effects``; NumPy's own functions by
their ``out`` parameter, ``ir/numpy_effects.py``), which argument a helper returns, whether
it returns a view of one, what an array aliases, and whether a callee draws random
numbers. Capture passes (``normalise``) and the transform's activity analysis both ask."""
import inspect

import numpy as np
from numba.core import ir, types

from ..compile.caches import owned_cache
from ..ir.nodes import copy_root, defining_stmts, global_value
from ..ir.numpy_effects import numpy_writes
from ..rules.classify import array_op_site, classify_call
from .methods import ContiguousAliases
from .typed_ir import capture, py_function_of


def array_parents(fn, name, defs):
    """The arrays that array ``name`` aliases: the source of a copy or cast, the parent
    of a view (``a[i]``, ``a[1:]``, a row of ``for row in a``), the inputs of a phi."""
    value = defined_value(defs, name)
    if isinstance(value, ir.Var):
        return [value]
    if not isinstance(value, ir.Expr):
        return []
    if value.op == "cast" or (value.op in ("getitem", "static_getitem")
                              and isinstance(fn.typeof(value.value), types.Array)):
        return [value.value]
    if value.op == "phi":
        return [v for v in value.incoming_values if isinstance(v, ir.Var)]
    returned = returned_argument_of_call(fn, value)
    if returned is not None:  # ``out = helper(x, out)`` returning its argument
        return [returned]
    site = array_op_site(fn, value)
    if site is not None and site.op.shape == "view":
        return [site.args[0]]
    if value.op == "call":  # np.ravel(x), np.asarray(x) ... of a C-contiguous x: x itself
        bound = defs.get(value.func.name, ())
        func = {value.func.name: bound[0][1].value} if len(bound) == 1 else {}
        shared = ContiguousAliases.contiguous_argument(fn, func, value)
        if shared is not None:
            return [shared]
    if value.op == "pair_first":  # pair_first(iternext(it)), it a copy of getiter(a)
        iterated = _iterated(value, defs)
        return [iterated] if iterated is not None else []
    if value.op == "getitem" and isinstance(fn.typeof(value.value), types.BaseTuple):
        # ``shadows[k]`` of a tuple built here, at a variable index: any array item
        built = defined_value(defs, copy_root(lambda n: defined_value(defs, n),
                                              value.value.name))
        if isinstance(built, ir.Expr) and built.op == "build_tuple":
            return [v for v in built.items if isinstance(fn.typeof(v.name), types.Array)]
    if (value.op in ("static_getitem", "getitem") and isinstance(value.index, int)
            and isinstance(fn.typeof(value.value), types.BaseTuple)):
        # ``a, b = A``: each item of the unpacked tuple is a row of A. ``for i, row in
        # enumerate(U)``, ``for a, b in zip(U, V)``: item k of the tuple each step yields
        # is a row of the array enumerate or zip walks
        rows = unpacked_array(fn, value.value, defs)
        rows = rows if rows is not None else _zipped_rows(fn, value.value, value.index, defs)
        return [rows] if rows is not None else []
    return []


def unpacked_array(fn, tuple_var, defs):
    """The array ``tuple_var`` unpacks into rows (``a, b = A``: ``exhaust_iter(A)``,
    through copies), else None."""
    value = defined_value(defs, copy_root(lambda n: defined_value(defs, n), tuple_var.name))
    if (isinstance(value, ir.Expr) and value.op == "exhaust_iter"
            and isinstance(fn.typeof(value.value), types.Array)):
        return value.value
    return None


def defined_value(defs, name):
    """The value assigned to ``name``, when ``defs`` (``defining_stmts``) has exactly one
    assignment of it; else None."""
    found = defs.get(name, ())
    return found[0][1].value if len(found) == 1 else None


def _iterated(value, defs):
    """The object ``getiter`` walks behind ``pair_first(iternext(it))`` (through copies
    of ``it``), else None."""
    seen = set()
    while isinstance(value, (ir.Var, ir.Expr)) and id(value) not in seen:
        seen.add(id(value))
        if isinstance(value, ir.Expr) and value.op == "getiter":
            return value.value
        var = value if isinstance(value, ir.Var) else getattr(value, "value", None)
        if not isinstance(var, ir.Var):
            return None
        value = defined_value(defs, var.name)
    return None


def _zipped_rows(fn, tuple_var, k, defs):
    """The array whose rows item ``k`` of ``tuple_var`` are, when ``tuple_var`` is a tuple
    a loop over ``enumerate(U)`` or ``zip(U, V)`` yields (nested ones too), else None."""
    made = _yielded_by(fn, tuple_var, defs)
    if made is None:
        return None
    maker = global_value(fn.func_ir.blocks, made.func)
    walked = made.args[:1] if maker is enumerate and k == 1 else (
        made.args[k:k + 1] if maker is zip else [])
    if walked and isinstance(fn.typeof(walked[0].name), types.Array):
        return walked[0]
    return None


def _yielded_by(fn, var, defs, depth=0):
    """The ``enumerate(...)`` or ``zip(...)`` call whose iteration yields tuple ``var``
    (through copies and unpacking), else None."""
    value = defined_value(defs, copy_root(lambda n: defined_value(defs, n), var.name))
    if depth > 8 or not isinstance(value, ir.Expr):
        return None
    if value.op == "exhaust_iter":
        return _yielded_by(fn, value.value, defs, depth + 1)
    if value.op == "pair_first":
        source = _iterated(value, defs)
        made = defined_value(defs, source.name) if source is not None else None
    elif value.op == "static_getitem" and value.index == 1:  # enumerate(zip(U, V))
        outer = _yielded_by(fn, value.value, defs, depth + 1)
        if outer is None or global_value(fn.func_ir.blocks, outer.func) is not enumerate:
            return None
        made = defined_value(defs, copy_root(lambda n: defined_value(defs, n), outer.args[0].name))
    else:
        return None
    if (isinstance(made, ir.Expr) and made.op == "call" and not made.kws
            and global_value(fn.func_ir.blocks, made.func) in (enumerate, zip)):
        return made
    return None


# builtins that only read the arrays they are given (iterators over them, sizes, copies)
_PURE_BUILTINS = (enumerate, zip, range, len, iter, reversed, sorted, min, max, sum, print, list)


def call_writes(fn, expr):
    """The array arguments (method receivers included) a call may write: what an
    ``@njit`` callee writes (analysed), nothing for a primitive known to be pure, every
    array for anything else."""
    ftype = fn.typeof(expr.func)
    args = list(expr.args)
    if isinstance(ftype, types.BoundFunction):
        found = [s.value for b in fn.func_ir.blocks.values() for s in b.body
                 if isinstance(s, ir.Assign) and s.target.name == expr.func.name]
        if len(found) == 1 and isinstance(found[0], ir.Expr) and found[0].op == "getattr":
            args = [found[0].value] + args
        key = ftype.typing_key
    else:
        key = global_value(fn.func_ir.blocks, expr.func)
        if key is None and isinstance(ftype, types.Function):  # np.exp read as an attribute
            key = ftype.typing_key
    arrays = [a for a in args if isinstance(fn.typeof(a), types.Array)]
    if not arrays:
        return []
    cls = classify_call(fn, expr)
    if cls.kind == "accumulating_bilinear":  # update(g, other, shadow): adds into shadow
        return [expr.args[-1]]
    if cls.kind == "derived":
        try:
            argtypes = tuple(types.unliteral(t) for t in fn.calltypes[expr].args)
            return ([expr.args[i] for i in callee_writes(ftype.dispatcher, argtypes)]
                    + star_argument_writes(fn, expr, ftype.dispatcher, argtypes))
        except Exception:  # cannot analyse the callee: assume the worst
            return arrays
    pure = ((cls.primitive is not None and cls.primitive.effects().pure)
            or _is_pure_builtin(key)
            or _returns_new_array(key, expr)
            or (isinstance(key, np.ufunc) and len(expr.args) == key.nin))
    if pure and not expr.kws:
        return []
    written = numpy_writes(fn, key, expr)
    return arrays if written is None else written


def _is_pure_builtin(key):
    try:
        return key in _PURE_BUILTINS
    except TypeError:  # unhashable keys
        return False


def _returns_new_array(key, expr):
    """A ``@stencil`` kernel called without ``out=``, or a ``@vectorize`` ufunc called
    with its inputs only: it reads its arguments and returns a new array. (A callee's IR
    is analysed before normalisation turns these calls into loops.)"""
    if expr.kws or expr.vararg:
        return False
    if type(key).__name__ == "StencilFunc":
        return True
    nin = getattr(key, "nin", None)
    return type(key).__name__ == "DUFunc" and nin == len(expr.args)


_callee_writes = owned_cache("callee_writes")


def callee_writes(dispatcher, argtypes, _active=()):
    """Indices of the array arguments an ``@njit`` function may write, directly, through
    views and copies, or through the functions it calls (cached; a recursive cycle is
    assumed to write every array argument)."""
    return _write_effects(dispatcher, argtypes, _active)[0]


def callee_container_writes(dispatcher, argtypes):
    """Indices of the tuple (or typed List, or ``@jitclass`` instance) arguments an
    ``@njit`` function may write an array item of (``t[0][i] = v``, ``pos, vel = state;
    pos += dt * vel``, ``for a in L: a *= s``, ``self.rest[e] *= s``), itself or through
    the functions it calls."""
    return _write_effects(dispatcher, argtypes, ())[1]


def _write_effects(dispatcher, argtypes, _active):
    """``(array argument indices, container argument indices)`` written (cached; see
    ``callee_writes`` and ``callee_container_writes``)."""
    key = (py_function_of(dispatcher), tuple(argtypes))
    if key in _callee_writes:
        return _callee_writes[key]
    if key in _active:
        return (frozenset(i for i, t in enumerate(argtypes) if isinstance(t, types.Array)),
                frozenset(i for i, t in enumerate(argtypes) if isinstance(t, CONTAINERS)))
    fn = capture(dispatcher, argtypes)
    defs = defining_stmts(fn.func_ir.blocks)
    args = {s.target.name: s.value.index for b in fn.func_ir.blocks.values()
            for s in b.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Arg)}
    written, containers = set(), set()
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            value = getattr(stmt, "value", None)
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                targets = [stmt.target]
            elif isinstance(value, ir.Expr) and value.op == "inplace_binop":
                targets = [value.lhs] if isinstance(fn.typeof(value.lhs), types.Array) else []
            elif isinstance(value, ir.Expr) and value.op == "call":
                if value.vararg is not None:
                    # ``func(u, *args)``: the callee's parameters do not line up with
                    # the call's arguments; assume it writes every array it is given
                    targets = [a for a in value.args if isinstance(fn.typeof(a), types.Array)]
                    containers |= {args[n] for n in _container_sources(value.vararg.name, defs)
                               if n in args}
                elif isinstance(fn.typeof(value.func), types.Dispatcher):
                    sig = fn.calltypes[value].args
                    callee = fn.typeof(value.func).dispatcher
                    inner, inner_containers = _write_effects(
                        callee, tuple(types.unliteral(t) for t in sig), _active + (key,))
                    passed = _arguments_by_position(callee, value, len(sig))
                    targets = [passed[i] for i in inner if passed[i] is not None]
                    star = _star_position(callee)
                    for i in inner_containers:
                        if i == star:  # (see ``star_argument_writes``)
                            targets += _arrays_among(fn, value.args[i:])
                            continue
                        if passed[i] is None:  # a default: nothing of the caller's
                            continue
                        sources = _container_sources(passed[i].name, defs)
                        containers |= {args[n] for n in sources if n in args}
                        targets += _packed_arrays(fn, sources, defs)
                else:
                    targets = call_writes(fn, value)
            else:
                continue
            for t in targets:
                aliases = _aliases(fn, t.name, defs)
                written |= {args[n] for n in aliases if n in args}
                for n in aliases:
                    containers |= {args[m] for m in _item_of_containers(fn, n, defs) if m in args}
    _callee_writes[key] = (frozenset(written), frozenset(containers))
    return _callee_writes[key]


def star_argument_writes(fn, expr, dispatcher, argtypes):
    """The arrays among a call's arguments that the callee's ``*args`` parameter takes
    and the callee writes (``def vjp(g, ans, a, *rest): shadow = rest[-1]; shadow +=
    ...``). Numba types such a call with the trailing arguments folded into one tuple,
    so the callee's analysis reports a write into an item of that tuple, not into an
    argument: missed, an hvp through ``np.linalg.pinv`` or ``svd`` of an array the
    function computed lost the Hessian terms its reverse rule adds (zeros)."""
    star = _star_position(dispatcher)
    if star is None or star not in callee_container_writes(
            dispatcher, tuple(types.unliteral(t) for t in argtypes)):
        return []
    return _arrays_among(fn, expr.args[star:])


def _arrays_among(fn, variables):
    """The array-typed ones of ``variables``."""
    return [a for a in variables if isinstance(fn.typeof(a.name), types.Array)]


def _arguments_by_position(dispatcher, call, count):
    """The ``count`` variables a call passes, in the order of the callee's parameters:
    its positional arguments, then those it passes by keyword (``rhs(y, out=d)``), None
    for a parameter left to its default. The callee's analysis numbers the parameters
    so; the call's positional arguments alone missed a write into ``out=d`` (an
    IndexError from inside adjit, when jvp or hvp analysed the call first)."""
    passed = list(call.args)
    keywords = dict(call.kws)
    if keywords:
        params = list(inspect.signature(py_function_of(dispatcher)).parameters)
        passed += [keywords.get(name) for name in params[len(passed):]]
    return (passed + [None] * count)[:max(count, len(call.args))]


def _star_position(dispatcher):
    """The position of an ``@njit`` function's ``*args`` parameter, or None. Numba passes
    the arguments from there on as one tuple, so a write into an item of that tuple is a
    write into one of the arrays the caller passed there (``shadow = rest[-1];
    shadow += ...`` in a rule with optional arguments)."""
    code = getattr(py_function_of(dispatcher), "__code__", None)
    if code is None or not code.co_flags & inspect.CO_VARARGS:
        return None
    return code.co_argcount


#: the types that hold arrays a helper can write without being given them as arrays
CONTAINERS = (types.BaseTuple, types.ListType, types.ClassInstanceType)


def _item_of_containers(fn, name, defs):
    """The containers (through copies and unpacking) that array ``name`` is read out of:
    an item of a tuple or typed List (or the List iterated), a field of a ``@jitclass``
    instance."""
    if isinstance(fn.typeof(name), CONTAINERS):  # ``for a in L``: the List itself
        return _container_sources(name, defs)
    value = defined_value(defs, name)
    if not isinstance(value, ir.Expr):
        return set()
    if value.op in ("getitem", "static_getitem", "getattr") and isinstance(
            fn.typeof(value.value), CONTAINERS):
        return _container_sources(value.value.name, defs)
    return set()


def _packed_arrays(fn, names, defs):
    """The arrays packed into the tuples built here among ``names``: a callee that
    writes an array item of ``(x, v)`` writes ``x`` or ``v`` (either, for all we know),
    and so the tuple argument they were unpacked from."""
    return [item for n in names for value in [defined_value(defs, n)]
            if isinstance(value, ir.Expr) and value.op == "build_tuple"
            for item in value.items if isinstance(fn.typeof(item.name), types.Array)]


def _container_sources(name, defs):
    """``name`` and what it copies or unpacks (``exhaust_iter``), transitively."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        value = defined_value(defs, n)
        if isinstance(value, ir.Var):
            todo.append(value.name)
        elif isinstance(value, ir.Expr) and value.op in ("exhaust_iter", "cast"):
            todo.append(value.value.name)
    return seen


_returned_argument = owned_cache("returned_argument")


def returned_argument(dispatcher, argtypes):
    """The index of the array argument an ``@njit`` function returns on every path
    (``return out`` after filling it), else None (cached)."""
    return _returned_arguments(dispatcher, argtypes)[0]


def returned_item_arguments(dispatcher, argtypes):
    """For an ``@njit`` function returning a tuple built on every path (``return a, out``),
    per item the index of the array argument that item is on every path, or None; None
    when the result is not such a tuple (cached)."""
    return _returned_arguments(dispatcher, argtypes)[1]


def _returned_arguments(dispatcher, argtypes):
    """``(whole, items)``: the argument index the result is, and per tuple item the
    argument index that item is, each None where it is not an argument on every path."""
    key = (py_function_of(dispatcher), tuple(argtypes))
    if key in _returned_argument:
        return _returned_argument[key]
    try:
        fn = capture(dispatcher, argtypes)
    except Exception:  # cannot analyse the callee: no alias claimed
        fn = None
    found = (None, None)
    if fn is not None:
        defs = defining_stmts(fn.func_ir.blocks)

        def definition(name):
            return defined_value(defs, name)

        def arg_index(name):
            root = memory_root(fn, definition, name)
            value = definition(root) if root is not None else None
            if isinstance(value, ir.Arg) and isinstance(argtypes[value.index], types.Array):
                return value.index
            return None
        rets = [b.terminator.value.name for b in fn.func_ir.blocks.values()
                if isinstance(b.terminator, ir.Return)]
        wholes = {arg_index(r) for r in rets}
        whole = wholes.pop() if len(wholes) == 1 else None
        tuples = [definition(copy_root(definition, r)) for r in rets]
        items = None
        if tuples and all(isinstance(t, ir.Expr) and t.op == "build_tuple" for t in tuples):
            per_item = zip(*[[arg_index(v.name) for v in t.items] for t in tuples])
            items = tuple(ks[0] if len(set(ks)) == 1 else None for ks in per_item)
        found = (whole, items)
    _returned_argument[key] = found
    return found


def memory_root(fn, definition, name, _seen=None):
    """The variable whose memory array ``name`` is: through copies, casts, in-place
    operators (``w -= g`` updates ``w``) and phis whose incoming values all share one
    root (a loop updating ``w`` in place); None when paths disagree."""
    seen = set() if _seen is None else _seen
    name = copy_root(definition, name)
    if name in seen:
        return None  # a loop back to a phi being resolved: adds nothing
    seen.add(name)
    value = definition(name)
    if (isinstance(value, ir.Expr) and value.op == "inplace_binop"
            and isinstance(fn.typeof(value.lhs.name), types.Array)):
        return memory_root(fn, definition, value.lhs.name, seen)
    if isinstance(value, ir.Expr) and value.op == "phi":
        roots = {memory_root(fn, definition, v.name, seen)
                 for v in value.incoming_values if isinstance(v, ir.Var)} - {None}
        return roots.pop() if len(roots) == 1 else None
    return name


def returned_argument_of_call(fn, value):
    """The argument variable a call of an ``@njit`` function returns (see
    ``returned_argument``), else None."""
    k = call_returns(fn, value, returned_argument)
    return value.args[k] if k is not None else None


def returned_item_argument_of_call(fn, value, item):
    """The argument variable that item ``item`` of the tuple a call of an ``@njit``
    function returns is (see ``returned_item_arguments``), else None."""
    items = call_returns(fn, value, returned_item_arguments)
    k = items[item] if items is not None and item < len(items) else None
    return value.args[k] if k is not None else None


def call_returns(fn, value, analysis):
    """``analysis(dispatcher, argtypes)`` of a positional call of an ``@njit`` function,
    else None."""
    if not (isinstance(value, ir.Expr) and value.op == "call") or value.kws or value.vararg:
        return None
    ftype = fn.typeof(value.func.name)
    if not isinstance(ftype, types.Dispatcher) or value not in fn.calltypes:
        return None
    argtypes = tuple(types.unliteral(t) for t in fn.calltypes[value].args)
    return analysis(ftype.dispatcher, argtypes)


_callee_random = owned_cache("callee_random")


def callee_draws_random(dispatcher, argtypes, _active=()):
    """Whether an ``@njit`` function (or anything it calls) draws random numbers: calling
    it a second time would not give the same result (cached)."""
    import random
    key = (py_function_of(dispatcher), tuple(argtypes))
    if key in _callee_random or key in _active:
        return _callee_random.get(key, False)
    fn = capture(dispatcher, argtypes)
    found = False
    generators = tuple(getattr(types, n) for n in (
        "NumPyRandomGeneratorType", "NumPyRandomBitGeneratorType") if hasattr(types, n))
    for typ in fn.typemap.values():
        if isinstance(typ, types.Module) and typ.pymod in (np.random, random):
            found = True
        elif generators and isinstance(typ, generators):  # np.random.Generator methods
            found = True
        elif isinstance(typ, types.Function):
            owner = getattr(typ.typing_key, "__self__", None)
            module = getattr(typ.typing_key, "__module__", None) or ""
            found |= (isinstance(owner, (np.random.RandomState, random.Random))
                      or module.startswith(("numpy.random", "random")))
    for expr, sig in fn.calltypes.items():
        if found:
            break
        ftype = fn.typeof(expr.func) if getattr(expr, "op", None) == "call" else None
        if isinstance(ftype, types.Dispatcher):
            found = callee_draws_random(ftype.dispatcher,
                                        tuple(types.unliteral(t) for t in sig.args),
                                        _active + (key,))
    _callee_random[key] = found
    return found


def _aliases(fn, name, defs):
    """``name`` and every array it aliases, transitively."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(v.name for v in array_parents(fn, n, defs))
    return seen
