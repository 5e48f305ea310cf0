"""How a transform's stub binds and checks its arguments: ``argnums``, omitted
defaults, tangents and cotangents against their arguments' types and shapes, and the
refusals of what transforms do not take. ``api.py``'s wrappers build their stubs'
IR with these."""
import inspect
import operator

import numba
import numpy as np
from numba.core import ir, types

from .capture.typed_ir import py_function_of
from .compile.inline_library import internal_jit
from .errors import ArgumentError
from .ir.builder import Emitter, raise_unless
from .ir.value_types import is_differentiable, is_float, is_float_array


def entry_block(py_func):
    """The single block of a top-level transform's IR, located at ``py_func``'s ``def``
    line, and an emitter appending to it."""
    loc = ir.Loc(inspect.getsourcefile(py_func) or "<adjit>", py_func.__code__.co_firstlineno)
    scope = ir.Scope(None, loc)
    block = ir.Block(scope, loc)
    return block, Emitter(block, scope, loc)


def omitted_default(e, value):
    """An omitted argument's default, typed as the derivative passes were built for it
    (not as a literal): the transform holds those passes inline."""
    return e.assign(ir.Const(value, e.loc, use_literal_type=False), hint="default")


def check_named_parameters(py_func, kind):
    """Transforms need named parameters: a ``*args`` function (``jvp(f)`` itself among
    them, whose tangent count depends on the argument types) is refused with what to do,
    and so are keyword-only and ``**kwargs`` parameters, and anything but a Python
    function or an ``@njit`` one (``math.sin``)."""
    if not inspect.isfunction(py_func):
        name = getattr(py_func, "__name__", type(py_func).__name__)
        raise ArgumentError(
            f"adjit.{kind}({name}): adjit differentiates Python functions and @numba.njit "
            f"ones, not {type(py_func).__name__} objects; call it from one: "
            f"def f(x): return {name}(x), then adjit.{kind}(f)")
    if py_func.__code__.co_flags & inspect.CO_VARARGS:
        advice = ("To nest jvp further, make the inner one outside and wrap it in a "
                  "function of named arguments: jf = adjit.jvp(f); def df(x): return "
                  "jf(x, 1.0)[1]; then adjit.jvp(df)"
                  if py_func.__name__.startswith(("jvp_", "hvp_")) else
                  "Give it one parameter per argument (def f(x, y): ...)")
        raise ArgumentError(
            f"adjit.{kind}({py_func.__qualname__}): the function takes *args; transforms "
            f"need named parameters. {advice}")
    special = [p.name for p in inspect.signature(py_func).parameters.values()
               if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    if special:
        raise ArgumentError(
            f"adjit.{kind}({py_func.__qualname__}): the function takes keyword-only or "
            f"**kwargs parameters ({', '.join(special)}), which Numba does not compile; "
            "make them ordinary parameters (def f(x, y=1.0))")


def refuse_reverse_over_reverse(func, kind):
    """``grad(grad(f))``, ``hvp(grad(f))``: refused with what works, not inside generated code."""
    spec = getattr(func, "adjit_spec", None)
    if spec is not None and spec[0] != "jvp":
        inner = f"adjit.{spec[0]}({py_function_of(spec[1]).__qualname__})"
        raise ArgumentError(f"adjit.{kind}({inner}): reverse mode over reverse mode is not "
                            "supported. For second derivatives use adjit.hvp(f), "
                            f"adjit.hessian(f) or adjit.jvp({inner}) (forward over reverse)")


def normalise_argnums(argnums, nparams, fname):
    """Validate ``argnums`` against the signature; return (tuple, was_int)."""
    single = isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool)
    nums = (int(argnums),) if single else argnums
    if not isinstance(nums, tuple) or not nums or not all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in nums):
        raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, "
                            f"got {argnums!r} for {fname}")
    out = []
    for a in nums:
        if not -nparams <= a < nparams:
            raise ArgumentError(f"argnums={argnums!r} is out of range for {fname}, which "
                                f"takes {nparams} arguments")
        out.append(int(a) % nparams)
    if len(set(out)) != len(out):
        raise ArgumentError(f"argnums={argnums!r} repeats an argument of {fname}")
    return tuple(out), single


def is_differentiable_tuple(typ):
    """A flat tuple of float scalars and float arrays (``params = (W, b)``), which
    ``grad`` differentiates item by item, as JAX does a tuple."""
    return (isinstance(typ, types.BaseTuple) and len(typ) > 0
            and all(is_differentiable(t) for t in typ.types))


def check_differentiable(fname, names, argtypes, argnums, tuples=False):
    """An int/bool argument in argnums is a user error: say which one. ``tuples``: a
    flat tuple of floats and float arrays is differentiable too."""
    for i in argnums:
        if not (is_differentiable(argtypes[i])
                or (tuples and is_differentiable_tuple(argtypes[i]))):
            raise ArgumentError(
                f"argnums includes argument {i} ('{names[i]}') of {fname}, which has type "
                f"{argtypes[i]}; only float scalars and float arrays"
                f"{' (and flat tuples of these)' if tuples else ''} are differentiable")


def refuse_float_tuples(fname, names, argtypes):
    """vjp gives 0 for arguments that carry no derivative (ints, bools), and a flat tuple
    of floats and float arrays a tuple of cotangents, as grad does; for another tuple
    holding floats (nested, or with integers beside them) 0 would be a wrong cotangent,
    so it is refused, as grad refuses it."""
    for i, t in enumerate(argtypes):
        if _holds_floats(t) and not is_differentiable_tuple(t):
            raise ArgumentError(
                f"vjp({fname}): argument {i} ('{names[i]}') is a tuple holding floats "
                f"({t}); adjit gives cotangents of float scalars, float arrays and flat "
                "tuples of these only: pass its items as separate arguments")


def check_scalar_output(fname, typed, kind="grad"):
    """``grad`` (and ``hvp``, ``hessian``) differentiate a float result: another output
    is refused with what to use."""
    if not is_float(typed.return_type):
        raise ArgumentError(f"{kind} requires {fname} to return a float scalar; it returns "
                            f"{typed.return_type}. Use adjit.vjp for other outputs"
                            + (", or adjit.jvp of a vjp" if kind == "hvp" else "") + ".")


def parameter_counts(py_func):
    """``(required, all)``: how many parameters have no default, and how many there are."""
    params = inspect.signature(py_func).parameters.values()
    return sum(p.default is inspect.Parameter.empty for p in params), len(params)


def trailing_defaults(py_func, given_types, n):
    """The defaults of the parameters after the first ``n`` (omitted trailing arguments,
    which become constants without tangents), and ``given_types`` with their types
    appended: the primal types."""
    params = list(inspect.signature(py_func).parameters.values())
    defaults = [p.default for p in params][n:]
    return defaults, tuple(given_types) + tuple(types.unliteral(numba.typeof(d))
                                                for d in defaults)


def needs_contiguous(primal_type, tangent_type):
    """A C-contiguous argument given a tangent of another layout: the tangent is copied
    to C order, so that views the primal takes of its memory (``x.ravel()`` is
    ``np.reshape``) are views of the tangent too, with the same types."""
    return (isinstance(primal_type, types.Array) and isinstance(tangent_type, types.Array)
            and primal_type.layout == "C" and tangent_type.layout != "C")


def check_tangents(fname, names, primal_types, active, tangent_types):
    """One tangent per float/array argument, of the argument's type: else say which."""
    if len(tangent_types) != len(active):
        skipped = [f"'{names[i]}' ({t})" for i, t in enumerate(primal_types)
                   if i not in active and _holds_floats(t)]
        raise ArgumentError(
            f"jvp({fname}) takes one tangent per float or float-array argument, or flat "
            f"tuple of these ({', '.join(names[i] for i in active) or 'none'}): expected "
            f"{len(active)} tangents, got {len(tangent_types)}"
            + (f"; {', '.join(skipped)} holds floats but takes no tangent: only flat tuples "
               "of floats and float arrays are differentiable" if skipped else "")
            + _integer_arguments_note(names, primal_types, active))
    for i, t in zip(active, tangent_types):
        if not _tangent_matches(primal_types[i], t):
            raise ArgumentError(f"jvp({fname}): the tangent of '{names[i]}' must match its "
                                f"type {primal_types[i]}; got {t}")


def _integer_arguments_note(names, primal_types, active):
    """Why an argument takes no tangent when it was given as an integer (``jvp(f)(1,
    ...)`` for a float parameter): it says how to make it differentiable."""
    ints = [f"'{names[i]}' ({t})" for i, t in enumerate(primal_types) if i not in active
            and (isinstance(t, types.Integer) or (isinstance(t, types.Array)
                                                  and isinstance(t.dtype, types.Integer)))]
    if not ints:
        return ""
    return (f"; {', '.join(ints)} is an integer value, which takes no tangent: pass it as a "
            "float (1.0, or x.astype(np.float64)) to differentiate with respect to it")


def _holds_floats(typ):
    """A container type with a float or float array somewhere inside (a nested tuple)."""
    if isinstance(typ, types.BaseTuple):
        return any(is_differentiable(t) or _holds_floats(t) for t in typ.types)
    return False


def _tangent_matches(p, t):
    """Whether ``t`` can be the tangent of an argument of type ``p``: a number for a
    float, a float array of its rank for a float array, a tuple of such for a tuple."""
    if isinstance(p, types.BaseTuple):
        return (isinstance(t, types.BaseTuple) and len(t) == len(p)
                and all(_tangent_matches(pk, tk) for pk, tk in zip(p.types, t.types)))
    return (is_float(p) and isinstance(t, (types.Float, types.Integer))) or (
        is_float_array(p) and isinstance(t, types.Array) and t.ndim == p.ndim
        and isinstance(t.dtype, types.Float))


def tangent_in_primal_type(e, tangent, tangent_type, primal, primal_type):
    """A tangent of another number type than its argument (a Python float for a float32,
    a float64 array for a float32 one) converted to the argument's type, as JAX requires
    them to match: a typed ``@vectorize`` ufunc would otherwise pick its float64 loop for
    the tangent and its float32 loop for the value (a wrong hvp)."""
    dtype = getattr(tangent_type, "dtype", tangent_type)
    if dtype == getattr(primal_type, "dtype", primal_type):
        return tangent
    from .transform.forward_tape import as_float_type, record_form
    if isinstance(primal_type, types.Float):  # Numba's own conversion: no compile
        return as_float_type(e, tangent, primal_type)
    return e.call(record_form, [tangent, primal], hint="tangent")


def check_shape(blocks, e, x, dx, message):
    """Emit: raise ArgumentError unless ``dx`` (a tangent or cotangent) has the shape of
    ``x``; the message names the argument and both shapes. Returns the emitter that goes
    on. Inline in the transform (a function per message cost a compile each), with one
    constant string: building it in compiled code would compile Numba's unicode machinery
    into every transform with an array tangent."""
    shape = e.assign(ir.Expr.getattr(x, "shape", e.loc), hint="shape")
    given = e.assign(ir.Expr.getattr(dx, "shape", e.loc), hint="shape")
    same = e.binop(operator.eq, shape, given, hint="same")
    return raise_unless(blocks, e, same, ArgumentError,
                        (message + ": expected shape", shape, "but got", given))


@internal_jit
def _span(a):
    """``(first, last)`` byte address an array's elements occupy (strides of any sign)."""
    lo = hi = a.ctypes.data
    for k in range(a.ndim):
        extent = (a.shape[k] - 1) * a.strides[k]
        if extent > 0:
            hi += extent
        else:
            lo += extent
    return lo, hi + a.itemsize


@internal_jit
def separate(a, b):
    """Whether arrays ``a`` and ``b`` occupy disjoint memory (an empty one always does)."""
    if a.size == 0 or b.size == 0:
        return True
    a_lo, a_hi = _span(a)
    b_lo, b_hi = _span(b)
    return a_hi <= b_lo or b_hi <= a_lo


def check_written_arguments_apart(blocks, e, label, names, args, argtypes, written):
    """Emit: raise ArgumentError when an array argument the function writes into shares
    memory with another array argument (``grad(f)(buf, buf)``). The reverse pass gives
    each argument a shadow of its own and undoes each one's writes, so one array passed
    twice would be differentiated as two (a wrong gradient). Returns the emitter that
    goes on."""
    arrays = [i for i, t in enumerate(argtypes[:len(args)])
              if isinstance(t, types.Array) and args[i] is not None]
    for i in written:
        if i not in arrays:
            continue
        for j in arrays:
            if j == i or (j in written and j < i):
                continue
            apart = e.call(separate, [args[i], args[j]], hint="apart")
            e = raise_unless(blocks, e, apart, ArgumentError, (
                f"{label}: the arguments '{names[i]}' and '{names[j]}' share memory, and "
                f"the function writes into '{names[i]}'; adjit differentiates them as "
                f"separate arrays: pass a copy (np.copy) for one of them",))
    return e


def check_cotangent(fname, ytype, btype, where="ybar"):
    """``vjp``'s cotangent must have the output's structure: a number for a float, a
    float array of the same rank for an array, a tuple of as many for a tuple. Returns
    the paths (tuples of indices) of the array parts, whose shapes are checked at run
    time."""
    def fail(expected):
        raise ArgumentError(f"vjp({fname}): {where} must be {expected} like the output "
                            f"({ytype}); got {btype}")
    ytype, btype = types.unliteral(ytype), types.unliteral(btype)
    if isinstance(ytype, types.BaseTuple):
        if not (isinstance(btype, types.BaseTuple) and len(btype) == len(ytype)):
            fail(f"a tuple of {len(ytype)}")
        return [(k,) + path for k, (y, b) in enumerate(zip(ytype, btype))
                for path in check_cotangent(fname, y, b, f"{where}[{k}]")]
    if isinstance(ytype, types.Array):
        if not (isinstance(btype, types.Array) and btype.ndim == ytype.ndim
                and isinstance(btype.dtype, types.Float)):
            fail(f"a {ytype.ndim}-D float array" + (
                "" if isinstance(ytype.dtype, types.Float) else
                " (a cotangent is float even for an integer output)"))
        return [()]
    if isinstance(ytype, (types.Float, types.Integer, types.Boolean)):
        if not isinstance(btype, (types.Float, types.Integer)):
            fail("a number")
        return []
    raise ArgumentError(f"vjp({fname}): the output type {ytype} has no cotangent")


TANGENT_SHAPE = "{1}: the tangent of '{0}' must have the shape of '{0}'"


def takes_tangent(typ, tuples=True):
    """Whether ``jvp`` takes a tangent for an argument of this type: a float, a float
    array, or (with ``tuples``) a plain flat tuple of these, whose tangent is a tuple of
    as many. A namedtuple is held fixed: code reads its fields by name (``p.alpha``),
    which adjit does not differentiate, so it is a record of parameters."""
    return is_differentiable(typ) or (tuples and is_differentiable_tuple(typ)
                                      and not isinstance(typ, types.NamedTuple))


def copy_tangent_arrays(e, tangent, primal_type):
    """A tangent whose arrays are copies (a tuple's item by item): the transform updates
    the tangent of an argument it writes in place, and must not write the caller's."""
    if isinstance(primal_type, types.BaseTuple):
        return e.tuple([copy_tangent_arrays(e, e.item(tangent, k), t)
                        for k, t in enumerate(primal_type.types)], hint="tangent")
    return e.call(np.copy, [tangent], hint="tangent") if is_float_array(primal_type) else tangent
