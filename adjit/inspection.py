"""``adjit.show``: the programs a derivative runs, printed with their source lines.

It derives the same programs the transforms compile (``derive``, ``derive_jvp``) for the
types of the arguments given, and prints them; it compiles nothing.
"""
import inspect

from numba.core import types

from .jvp_wrappers import jvp_split
from .arguments import normalise_argnums, parameter_counts, takes_tangent, trailing_defaults
from .capture.typed_ir import py_function_of
from .errors import ArgumentError
from .transform.reverse.program import derive


def _jvp_primal_count(func, argtypes):
    """``(k, tuples)``: how many of ``argtypes`` are ``func``'s arguments when they may be
    followed by their tangents (``jvp_split``), and whether its tuples take tangents
    (they do when no tangent is given); an ``ArgumentError`` when no split fits."""
    required, nparams = parameter_counts(py_function_of(func))
    if required <= len(argtypes) <= nparams:
        return len(argtypes), True
    split = jvp_split(py_function_of(func), argtypes)
    if split is None:
        raise ArgumentError(f"show(jvp({py_function_of(func).__qualname__})): expected its "
                            f"{nparams} arguments, optionally followed by their tangents; "
                            f"got {len(argtypes)} values")
    return split


def show(func, *args, argnums=None, file=None):
    """Print the primal typed IR, the forward-pass IR and the reverse-pass IR of ``func``
    for the types of ``args``, each statement tagged with its source line. Given a
    transform (``show(grad(f, 1), x, y)``, ``show(jvp(f), x)``, ``show(hvp(f), x, v)``)
    it shows the program that transform runs: ``f``'s reverse program for its argnums
    (which ``hvp`` differentiates in forward mode), or its JVP program (for ``jvp`` pass
    the arguments without their tangents; ``hvp`` takes them either way)."""
    import numba
    from .transform.forward import derive_jvp
    spec = getattr(func, "adjit_spec", None)
    if spec is not None:
        kind, func, spec_argnums = spec[0], spec[1], spec[2]
        if argnums is None and kind in ("grad", "value_and_grad", "hvp"):
            argnums = spec_argnums
    else:
        kind = None
    required, nparams = parameter_counts(py_function_of(func))
    if kind == "hvp" and len(args) > nparams:  # hvp(f)(*args, *tangents): f's arguments
        ntangents = len(spec_argnums) if isinstance(spec_argnums, tuple) else 1
        args = args[:max(0, len(args) - ntangents)]
    argtypes = tuple(types.unliteral(numba.typeof(a)) for a in args)
    tuples = False
    if kind == "jvp":  # jvp(f)(*args, *tangents) or just the arguments: f's arguments
        n, tuples = _jvp_primal_count(func, argtypes)
        argtypes = argtypes[:n]
    argtypes = _shown_argument_types(func, argtypes, required, nparams)
    if argnums is None:
        active = tuple(i for i, t in enumerate(argtypes) if takes_tangent(t, tuples))
        if not active and kind != "jvp":
            raise ArgumentError(f"adjit.show({py_function_of(func).__qualname__}): no "
                                f"argument of types {argtypes} is a float, float array or "
                                "tuple of these, so there is nothing to differentiate")
    else:
        active, _ = normalise_argnums(argnums, len(argtypes), py_function_of(func).__qualname__)
    program = (derive_jvp(func, argtypes, active) if kind == "jvp"
               else derive(func, argtypes, active))
    text = program.show()
    print(text, file=file)
    return text


def _shown_argument_types(func, argtypes, required, nparams):
    """The types ``show`` derives for: those given, with the types of omitted trailing
    defaults appended; a count that does not fit the function is an ``ArgumentError``
    (it was Numba's ``TypeError`` about a signature)."""
    py_func = py_function_of(func)
    if not required <= len(argtypes) <= nparams:
        params = ", ".join(inspect.signature(py_func).parameters)
        raise ArgumentError(f"adjit.show({py_func.__qualname__}): {py_func.__qualname__} "
                            f"takes ({params}); got {len(argtypes)} arguments")
    return trailing_defaults(py_func, argtypes, len(argtypes))[1]
