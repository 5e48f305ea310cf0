"""What to do about a call no rule covers: the advice of an ``UnsupportedError``, the
same words in both modes. Each hint is one small function of ``(fn, expr, cls)``
(``cls`` from ``classify_call``) returning its advice or None; the first that answers
wins, in the order of ``HINTS``, before the general advice to register a rule."""
import numpy as np
from numba.core import ir, types

from ..ir.nodes import source_name

from .arrays import ANY_RANK, lookup_array
from .classify import call_name, callee_key, returns_generator
from .core import NONDIFF, lookup
from .primitive import PRIMITIVES


def _stencil_options(fn, expr, cls):
    if hasattr(cls.key, "kernel_ir") and expr.kws:
        return ("a @stencil call with out= or neighborhood= is not supported: use the "
                "returned array (out = kernel(a)), or write the loop in an @njit helper")


def _unbound_arguments(fn, expr, cls):
    if (expr.kws or expr.vararg or expr.varkwarg) and isinstance(
            fn.typeof(expr.func.name), types.Dispatcher):
        return ("keyword or star arguments adjit could not bind to parameters (a "
                "helper's **kwargs or keyword-only parameters, or a tuple made elsewhere); "
                "pass them positionally")


def _guvectorize(fn, expr, cls):
    if type(cls.key).__name__ == "GUFunc":  # numba.guvectorize
        return ("@guvectorize functions are not differentiated: write the kernel as an "
                "@njit function with a loop over the leading axis (it fills out[i] from "
                "X[i]), which adjit derives")


def _ufunc_out_keyword(fn, expr, cls):
    if isinstance(cls.key, np.ufunc) and any(name == "out" for name, _ in expr.kws):
        operands = ", ".join("xyz"[:cls.key.nin])
        return ("Numba cannot compile a ufunc called with the keyword out= (it types the "
                "call, then fails to lower it): pass the output array positionally, "
                f"np.{cls.key.__name__}({operands}, out) (adjit differentiates that form)")


def _generator(fn, expr, cls):
    if returns_generator(fn, expr):
        return ("a generator (a function that yields) is not differentiated: return an "
                "array from the helper, or write the loop in the function")


def _list_of_arrays(fn, expr, cls):
    typ = fn.typeof(cls.args[0].name) if cls.args else None
    item = typ.item_type if isinstance(typ, types.ListType) else (
        typ.dtype if isinstance(typ, types.List) else None)
    if isinstance(item, types.Array):
        return ("a list of arrays holding differentiated values has no rule yet (lists of "
                "floats work): store the arrays as rows of one preallocated array "
                "(traj = np.empty((n, m)); traj[k] = y)")


def _list_of_array(fn, expr, cls):
    if cls.key is list and cls.args and isinstance(fn.typeof(cls.args[0].name), types.Array):
        return ("list(a) of an array has no rule: start the list with a literal and append "
                "the elements in a loop (res = [a[0]]; for v in a[1:]: res.append(v)), "
                "or keep working on the array")


def _namedtuple(fn, expr, cls):
    if isinstance(fn.typeof(expr.func.name), types.NamedTupleClass):
        return ("a namedtuple holding differentiated values has no rule yet: pass its "
                "fields as separate arguments, or a plain tuple (p = (a, b); p[0])")


def _jitclass(fn, expr, cls):
    if isinstance(fn.typeof(expr.func.name), types.ClassType):
        return ("a @jitclass instance holding differentiated values has no rule: adjit "
                "follows derivatives through floats, flat tuples of floats and float "
                "arrays, so pass those to its methods (s.force(x, k)) instead of storing "
                "them in its fields")


def _optional_argument(fn, expr, cls):
    if any(isinstance(fn.typeof(a.name), types.Optional) for a in cls.args):
        return ("an argument may be None: Numba types the call that made it as returning "
                "an array or None (np.linalg.matrix_power does); compute it in a way "
                "that always returns an array, such as a loop of @ products")


def _nan_to_num_copy(fn, expr, cls):
    """``np.nan_to_num(y, copy=c)`` with a ``c`` known only at run time: whether the
    call writes into ``y`` decides the rule (``array_helpers.choose_nan_to_num``)."""
    if cls.key is np.nan_to_num and len(cls.args) > 1:  # copy= was passed
        return ("whether np.nan_to_num writes into its argument depends on copy=, which "
                "must be a constant here: write copy=False (in place) or leave it out "
                "(a new array)")


def _no_arrays(fn, expr, cls):
    if not any(isinstance(fn.typeof(a.name), types.Array) for a in cls.args):
        return "no differentiation rule is registered for it (see adjit.extend)"


def _float64_only(fn, expr, cls):
    """Refused only for its float32 arrays: its rewrite into parts (``np.linalg.lstsq``)
    is declared for float64 arrays."""
    composite = PRIMITIVES.get(cls.key, "composite")
    if composite is not None and composite.float64_only and any(
            isinstance(t, types.Array) and isinstance(t.dtype, types.Float)
            and t.dtype != types.float64 for t in (fn.typeof(a.name) for a in cls.args)):
        return ("adjit's rules for it compute in float64, and this call passes float32 "
                "arrays: convert them first (A.astype(np.float64))")


def _float32_arrays(fn, expr, cls):
    """Refused with float32 arrays where adjit has a rule for the function (its rules
    and helpers are written for float64 arrays: ``np.ptp``, ``np.cov``)."""
    registered = any(PRIMITIVES.get(cls.key, family) is not None
                     for family in ("composite", "array_op", "reduction", "kernel"))
    if registered and any(
            isinstance(t, types.Array) and t.dtype == types.float32
            for t in (fn.typeof(a.name) for a in cls.args)):
        return ("adjit's rule for it takes float64 arrays, and this call passes float32 "
                "ones: convert them first (x.astype(np.float64))")


def _unhandled_rank(fn, expr, cls):
    """Refused for an array argument's rank: beyond the reduction rule's ranks, or 4-D
    and up for elementwise operations."""
    rule = lookup_array(cls.key)
    handled = rule.ndims if rule is not None else ANY_RANK
    for a in cls.args:
        typ = fn.typeof(a.name)
        if isinstance(typ, types.Array) and typ.ndim not in handled:
            return (f"adjit's array rules handle arrays of rank {handled}, and this call "
                    f"passes {typ}: loop over the leading axes (a[n] is a view), or "
                    "reshape to a lower rank")


def _fortran_order(fn, expr, cls):
    if any(getattr(fn.typeof(a.name), "layout", "C") == "F" for a in cls.args):
        return ("this call on a Fortran-ordered array (such as X.T) has no rule: pass a "
                "C-ordered copy, np.ascontiguousarray(X.T)")


def _custom_vjp_misfit(fn, expr, cls):
    """A function with a custom vjp called with arguments or a result its rule does not
    cover (it is for a float result of float, or of float-array, arguments)."""
    from .custom_vjp import CustomScalarRule
    if isinstance(lookup(cls.key), CustomScalarRule):
        argtypes = ", ".join(str(fn.typeof(a.name)) for a in cls.args)
        result = getattr(fn.calltypes.get(expr), "return_type", "?")
        return (f"its custom vjp (adjit.extend.defvjp) covers functions returning a float "
                f"of float or float-array arguments; this call passes "
                f"({argtypes}) and returns {result}: remove the rule so that adjit "
                "derives the @njit function, or register an array rule "
                "(adjit.extend.defnonlinear)")


def _scalar_rule_on_arrays(fn, expr, cls):
    rule = lookup(cls.key)
    if rule is not None and rule is not NONDIFF:
        return ("its adjit.extend.defderiv rule is for scalar arguments and this call "
                "passes an array: remove the rule so that adjit derives the @njit function, "
                "or register an array rule (deflinear_array, defbilinear)")


#: the hints, most specific first
HINTS = (_custom_vjp_misfit, _stencil_options, _unbound_arguments, _guvectorize, _ufunc_out_keyword,
         _generator, _list_of_arrays, _list_of_array, _namedtuple, _jitclass,
         _optional_argument, _nan_to_num_copy, _no_arrays, _float64_only, _float32_arrays,
         _unhandled_rank, _fortran_order, _scalar_rule_on_arrays)


def unsupported_detail(fn, expr, cls):
    """What to do about a call ``classify_call`` found no rule for: the first hint that
    applies, else the advice to register a rule or write the loop."""
    for hint in HINTS:
        advice = hint(fn, expr, cls)
        if advice is not None:
            return advice
    return ("no rule covers this call on arrays (or these options, such as axis=); "
            "register one with adjit.extend (defview, deflinear_array, defbilinear) "
            "or write the loop in an @njit helper")


def may_be_none_words(fn, value, name):
    """``(construct, advice)`` refusing ``name = value``, which Numba types as Optional,
    named as the user wrote it: the call that returns it, or the variable (not an SSA
    temporary). Forward mode refuses such a value where it is made; reverse mode, which
    meets its readers first, where a reader has no rule for it."""
    if isinstance(value, ir.Expr) and value.op == "call":
        key, _ = callee_key(fn, value.func)
        if key is not None:
            return (f"'{call_name(key)}(...)', whose result may be None",
                    "Numba types it as returning a value or None (np.linalg.matrix_power "
                    "does); compute it in a way that always returns a value, such as a "
                    "loop of @ products")
    shown = "a value" if name.startswith("$") else f"'{source_name(name)}'"
    return f"{shown}, which may be None", "return or use a float on every path"


def untracked_result_advice(typ):
    """What to do about a differentiated value flowing into a result of type ``typ``,
    which carries no derivative (a complex number, a string): said alike by both modes."""
    if isinstance(typ, (types.Complex,)) or getattr(typ, "dtype", None) in types.complex_domain:
        return ("adjit differentiates float and float-array values only, not complex "
                "numbers: carry the real and imaginary parts as two floats (or two float "
                "arrays) and write the complex arithmetic on them")
    return "adjit differentiates float and float-array values only"

