"""What a call (or an array attribute such as ``x.T``) in typed IR is, asked the same
way by reverse mode, forward mode and the write and aliasing analyses.

``array_op_site(fn, value)`` answers whether an assigned value is a registered
array-valued primitive (``rules/registry.py``) and with which arguments, the method
receiver first. ``emit_array_op(e, site, args)`` emits the same operation on other
arguments (a shadow, a tangent): views and linear maps are rebuilt that way.
"""
import linecache
import operator
from dataclasses import dataclass

import numpy as np
from numba.core import ir, types

from ..ir.value_types import is_float_array
from ..runtime import tape as tape_rt
from .core import ADJOINT_PRODUCTS, NONDIFF, adjoint_product_sum, adjoint_product_sum_pair, lookup
from .matmul import ACCUMULATING_BILINEAR, lookup_product
from .primitive import PRIMITIVES
from .registry import classify_array_call
from ..ir.nodes import single_definition, source_name
from ..ir.lists import (display_name, list_arguments, list_method, list_reduction,
                        new_list_call)


@dataclass
class ArrayOpSite:
    """A call of a registered array op: the op, its arguments (receiver first), the
    called object for a plain function."""

    op: object
    args: list
    callee: object = None


def _result_type(fn, value):
    sig = fn.calltypes.get(value) if value.op == "call" else None
    if sig is not None:
        return sig.return_type
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.value is value:
                return fn.typeof(stmt.target.name)
    return None


def method_key(typing_key):
    """One spelling of an array method's key: Numba types some methods with the key
    ``"array.copy"`` and others (``@overload_method``) with ``(types.Array, "sum")``."""
    if isinstance(typing_key, str) and typing_key.startswith("array."):
        return (types.Array, typing_key[len("array."):])
    return typing_key


def array_op_site(fn, value):
    """The ``ArrayOpSite`` of ``value`` when it is a registered array op, else None."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "getattr" and isinstance(fn.typeof(value.value.name), types.Array):
        key, args, callee = (types.Array, value.attr), [value.value], None
    elif value.op == "call" and not (value.kws or value.vararg or value.varkwarg):
        ftype = fn.typeof(value.func.name)
        if isinstance(ftype, types.BoundFunction):
            bound = single_definition(fn.func_ir.blocks, value.func.name)
            if not (isinstance(bound, ir.Expr) and bound.op == "getattr"):
                return None
            key, args = method_key(ftype.typing_key), [bound.value] + list(value.args)
            callee = None
        else:
            callee = callee_object(fn, value.func)
            key, args = callee, list(value.args)
    else:
        return None
    argtypes = [fn.typeof(a.name) for a in args]
    op = classify_array_call(key, argtypes, _result_type(fn, value))
    if op is None or (value.op == "getattr") != op.attribute:
        return None
    return ArrayOpSite(op, args, callee)


def emit_array_op(e, site, args, hint="op"):
    """Emit the operation of ``site`` on ``args`` (same positions as ``site.args``)."""
    op = site.op
    if op.attribute:
        return e.assign(ir.Expr.getattr(args[0], op.method, e.loc), hint=hint)
    if site.callee is None:  # a method: bind it to the new receiver
        bound = e.assign(ir.Expr.getattr(args[0], op.method, e.loc), hint="meth")
        return e.call(bound, args[1:], hint=hint)
    return e.call(site.callee, args, hint=hint)


def callee_object(fn, func_var):
    """The Python object a call's function variable refers to, or None."""
    value = single_definition(fn.func_ir.blocks, func_var.name)
    if isinstance(value, (ir.Global, ir.FreeVar)):
        return value.value
    typ = fn.typeof(func_var.name)
    if isinstance(typ, types.Dispatcher):
        return typ.dispatcher
    if isinstance(typ, types.Function) and not isinstance(typ.typing_key, (str, tuple)):
        return typ.typing_key  # ``np.exp`` read as a module attribute (IR not normalised)
    return None


def callee_key(fn, func_var):
    """``(rule key, receiver var)`` of a call: the called Python object, or for a method
    such as ``x.sum()`` Numba's typing key ``(types.Array, 'sum')`` and ``x``."""
    typ = fn.typeof(func_var.name)
    if isinstance(typ, types.BoundFunction):
        value = single_definition(fn.func_ir.blocks, func_var.name)
        if isinstance(value, ir.Expr) and value.op == "getattr":
            return typ.typing_key, value.value
        return None, None
    return callee_object(fn, func_var), None


BINOPS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
          operator.floordiv)
UNARY = (operator.neg,)
# comparisons make boolean masks (``z * (z >= 0)``): no derivative, recomputed when read
COMPARE = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)


def elementwise_parts(fn, value):
    """``(primitive, operands)`` when ``value`` is an elementwise operation returning a
    float array, 1-D or 2-D, whose array operands have its rank; else None. Only NumPy
    ufuncs and the arithmetic operators count: a scalar rule registered for another
    function says nothing about what that function does to arrays."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "binop" and value.fn in BINOPS + COMPARE:
        prim, operands = value.fn, [value.lhs, value.rhs]
    elif value.op == "unary" and value.fn in UNARY:
        prim, operands = value.fn, [value.value]
    elif value.op == "call" and not (value.kws or value.vararg or value.varkwarg):
        prim, operands = callee_object(fn, value.func), list(value.args)
        if not isinstance(prim, np.ufunc):  # other callees need not act elementwise
            return None
        rule = lookup(prim)
        if rule is None or rule is NONDIFF or not 1 <= len(operands) <= 2:
            return None
    else:
        return None
    sig = fn.calltypes.get(value)
    if sig is None:
        return None
    result = sig.return_type
    if not (isinstance(result, types.Array) and result.ndim in (1, 2, 3) and (
            is_float_array(result) or (prim in COMPARE
                                       and isinstance(result.dtype, types.Boolean)))):
        return None
    for a in operands:
        typ = types.unliteral(fn.typeof(a.name))
        if isinstance(typ, types.Array):
            if typ.ndim > result.ndim:  # lower ranks broadcast (the helpers check shapes)
                return None
        elif not isinstance(typ, (types.Float, types.Integer, types.Boolean)):
            return None
    return prim, operands



def matmul_parts(fn, value):
    """``(primitive, [a, b])`` when ``value`` is a registered matrix product
    (``rules/matmul.py``: ``a @ b``, ``np.dot``, ``np.kron``) whose argument and result
    types its rule covers; else None."""
    if not isinstance(value, ir.Expr):
        return None
    if value.op == "binop" and value.fn is operator.matmul:
        prim, operands = value.fn, [value.lhs, value.rhs]
    elif value.op == "call" and not (value.kws or value.vararg or value.varkwarg):
        prim, operands = callee_object(fn, value.func), list(value.args)
    else:
        return None
    product = lookup_product(prim)
    sig = fn.calltypes.get(value)
    if product is None or sig is None or len(operands) != 2:
        return None
    argtypes = [fn.typeof(v.name) for v in operands]
    return (prim, operands) if product.matches(argtypes, sig.return_type) else None


def positional_count(dispatcher):
    """For a callee with ``*args``: how many positional parameters come first (its
    typed IR takes the trailing arguments as one tuple); else None."""
    import inspect
    params = list(inspect.signature(_python_function(dispatcher)).parameters.values())
    if params and params[-1].kind is params[-1].VAR_POSITIONAL:
        return len(params) - 1
    return None


def omitted_parameter(dispatcher, nargs):
    """The first parameter of ``dispatcher`` a call with ``nargs`` positional arguments
    leaves to its default, when the call binding could not pass that default explicitly
    (``capture.call_binding.default_value``); None when every parameter is given."""
    import inspect
    if positional_count(dispatcher) is not None:
        return None
    params = list(inspect.signature(_python_function(dispatcher)).parameters.values())
    return params[nargs] if nargs < len(params) else None


def _python_function(callee):
    """The Python function of a dispatcher, or the function itself: a derived program
    made by a transform of the plain function keeps that function (``grad(f)`` and then
    ``numba.njit(f)`` called from other code share one program)."""
    return getattr(callee, "py_func", callee)


def refuse_omitted_default(ctx, stmt, dispatcher):
    """Both modes derive a callee for the arguments a call passes: a default the call
    leaves out and adjit cannot pass is refused, naming it (it would be a missing
    argument in the generated code)."""
    param = omitted_parameter(dispatcher, len(stmt.value.args))
    if param is not None:
        raise ctx.unsupported(
            f"calling '{_python_function(dispatcher).__qualname__}' without its argument "
            f"'{param.name}'", stmt.loc,
            f"adjit cannot pass its default (a {type(param.default).__name__}); "
            f"pass {param.name}=... in the call")


#: what ``classify_call`` can answer; each mode maps every kind to one handler
CALL_KINDS = ("array_op", "list_method", "list_new", "list_reduction", "tape_push",
              "tape_reserve", "tape_put",
              "tape_pop", "allocation", "accumulating_bilinear", "adjoint_product", "linear",
              "derived", "elementwise", "matmul", "reduction", "nondiff", "scalar",
              "unsupported")


@dataclass
class CallClass:
    """The answer of ``classify_call``: the kind, the rule key, the arguments (receiver
    first for a method), the array-op site for ``array_op``, and the registered
    ``Primitive`` that covers the call, when one does."""

    kind: str
    key: object = None
    args: list = None
    site: object = None
    primitive: object = None


_OPERATOR_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*",
                     operator.truediv: "/", operator.floordiv: "//", operator.mod: "%",
                     operator.pow: "**", operator.matmul: "@", operator.neg: "-",
                     operator.pos: "+", operator.iadd: "+=", operator.isub: "-=",
                     operator.imul: "*=", operator.itruediv: "/=", operator.ipow: "**="}


def operator_name(fn):
    """An operator as the user wrote it (``'+'``, ``'**'``), for a refusal; a function
    by its name."""
    return _OPERATOR_SYMBOLS.get(fn) or getattr(fn, "__name__", str(fn))


def call_name(key):
    """A call's name as the user wrote it: ``np.linalg.cholesky``, ``x.sum`` (a method),
    ``copysign``, ``helper``."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return f"x.{key[1]}"
    if isinstance(key, str) and key.startswith("array."):
        return "x." + key[len("array."):]
    kernel = getattr(getattr(key, "kernel_ir", None), "func_id", None)  # a @stencil
    name = getattr(key, "__name__", None) or getattr(
        getattr(key, "py_func", None), "__name__", None) or getattr(
        kernel, "func_name", None) or str(key)
    module = getattr(key, "__module__", "") or ""
    if module.startswith("numpy"):
        sub = module.split(".")[1] if module.count(".") >= 1 else ""
        return f"np.{sub}.{name}" if sub in ("linalg", "fft", "random") else f"np.{name}"
    return name


def squared_operand(fn, expr, definition=None):
    """``(x, u, k)`` for a float scalar product ``u * x`` (or ``x * u``) that is ``k x^2``:
    ``u`` is ``x`` itself (``k`` None) or ``u = k * x`` (``0.5 * v * v``), where one
    value is one variable or copies of one variable each assigned once; else None. With
    ``k`` not differentiated its derivative is ``2u dx``: both modes differentiate it as
    one product instead of two (a square is common in user code, ``d * d``)."""
    if not (isinstance(expr, ir.Expr) and expr.op == "binop" and expr.fn is operator.mul
            and isinstance(types.unliteral(fn.typeof(expr.lhs.name)), types.Float)):
        return None
    definition = definition or (lambda n: single_definition(fn.func_ir.blocks, n))
    for u, x in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
        root = _copied_from(definition, x)
        if root is None or not isinstance(types.unliteral(fn.typeof(x.name)), types.Float):
            continue
        if u.name == x.name or _copied_from(definition, u) == root:
            return x, u, None
        made = definition(u.name)
        if (isinstance(made, ir.Expr) and made.op == "binop" and made.fn is operator.mul
                and isinstance(types.unliteral(fn.typeof(u.name)), types.Float)):
            for factor, k in ((made.rhs, made.lhs), (made.lhs, made.rhs)):
                if (_copied_from(definition, factor) == root
                        and _copied_from(definition, k) != root):
                    return x, u, k
    return None


def _copied_from(definition, var):
    """The variable ``var`` is a copy of through single assignments (``b = a``), or
    ``var``'s own name; None when a name on the way is assigned more than once."""
    name = var.name
    while True:
        value = definition(name)
        if value is None:
            return None
        if not isinstance(value, ir.Var):
            return name
        name = value.name


def written_call_name(cls, fallback, loc=None):
    """The refused call as the user wrote it: a method on its receiver's own name
    (``y.sort``) where the receiver is a named variable, on the receiver's text in the
    source line (``A[:, 1].view``) where it is an expression, else ``call_name``'s form;
    ``fallback`` (the callee's type) when classification found no key."""
    if cls.key is None:
        return fallback
    name = call_name(cls.key)
    receiver = cls.args[0] if name.startswith("x.") and cls.args else None
    if not isinstance(receiver, ir.Var):
        return name
    if not receiver.name.startswith("$"):
        return source_name(receiver.name) + name[1:]
    written = receiver_text(loc, name[2:]) if loc is not None else None
    return written + name[1:] if written else name


def receiver_text(loc, method):
    """The expression before ``.method(`` on the source line of ``loc`` (``A[:, 1]``,
    ``np.sin(x)``), or None when the line does not show it."""
    line = linecache.getline(loc.filename or "", loc.line or 0)
    at = line.find(f".{method}(")
    start, depth = at, 0
    while start > 0:
        c = line[start - 1]
        if c in ")]":
            depth += 1
        elif c in "([" and depth == 0:
            break
        elif c in "([":
            depth -= 1
        elif depth == 0 and not (c.isalnum() or c in "_."):
            break
        start -= 1
    text = line[start:at].strip() if at > 0 else ""
    return text if text and depth == 0 else None


def refuse_list_arguments(fn, expr, cls, carriers, unsupported):
    """Both modes: a float list holding differentiated values may be passed to ``len``
    (or another function declared non-differentiable) and have ``append`` called on it;
    passing it to anything else is refused by name."""
    if cls.kind in ("list_method", "list_reduction", "nondiff"):  # ``len(L)``: an integer
        return
    for a in list_arguments(fn, expr, carriers):
        name = call_name(cls.key) if cls.key is not None else "a call"
        raise unsupported(f"passing {display_name(a.name)}, a list which holds "
                          f"differentiated values, to '{name}'", expr.loc,
                          "such a list supports element reads and writes, append, len "
                          "and for loops; to pass the values on, fill an array "
                          "(np.empty(n)) instead")


def has_rule(key):
    """Whether a rule or a non-differentiable declaration is registered for ``key``: the
    rule then wins over deriving an ``@njit`` callee."""
    return any(PRIMITIVES.get(key, family) is not None
               for family in ("scalar", "reduction", "array_op"))


def classify_call(fn, expr):
    """The one question both modes and the analyses ask about a call: what is it? The
    answer carries the registered ``Primitive`` (``rules/primitive.py``) that covers it,
    when one does; each mode maps the answer's kind to one handler."""
    key, receiver = callee_key(fn, expr.func)
    args = ([receiver] if receiver is not None else []) + list(expr.args)
    if integer_valued_numpy_call(fn, expr, key):
        return CallClass("nondiff", key, args)
    site = array_op_site(fn, expr)
    if site is not None:
        return CallClass("array_op", site.callee, site.args, site, site.op)
    structural = _structural_kind(fn, expr, key)
    if structural is not None:
        return CallClass(structural, key, args)
    for family in ("allocation", "linear"):  # these bind keyword arguments themselves
        found = PRIMITIVES.get(key, family)
        if found is not None:
            return CallClass(found.kind, key, args, primitive=found)
    if expr.kws or expr.vararg or expr.varkwarg:
        return CallClass("unsupported", key, args)
    if isinstance(fn.typeof(expr.func.name), types.Dispatcher) and not has_rule(key):
        if returns_generator(fn, expr):
            return CallClass("unsupported", key, args)
        return CallClass("derived", key, args)
    if elementwise_parts(fn, expr) is not None:
        return CallClass("elementwise", key, args, primitive=lookup(key))
    product = matmul_parts(fn, expr)
    if product is not None:
        return CallClass("matmul", key, args, primitive=lookup_product(product[0]))
    return _rule_class(fn, key, args, getattr(fn.calltypes.get(expr), "return_type", None))


def integer_valued_numpy_call(fn, expr, key):
    """Whether ``expr`` calls a NumPy function or an array method whose result holds only
    integers or booleans (``(x / h).astype(np.int64)``, bin indices): nothing of it is
    differentiable, as of ``int(v)``. A user's function is derived instead (it may write
    into float arrays)."""
    sig = fn.calltypes.get(expr)
    result = getattr(sig, "return_type", None)
    dtype = result.dtype if isinstance(result, types.Array) else result
    if not isinstance(dtype, (types.Integer, types.Boolean)):
        return False
    key = method_key(key)
    if isinstance(key, (str, tuple)):
        return isinstance(key, tuple) and len(key) == 2 and key[0] is types.Array
    return (getattr(key, "__module__", None) or "").startswith("numpy")


def returns_generator(fn, expr):
    """Whether the call makes a generator (an ``@njit`` function that ``yield``s)."""
    sig = fn.calltypes.get(expr)
    return sig is not None and isinstance(sig.return_type, types.Generator)


def _rule_class(fn, key, args, result_type):
    """A scalar rule on scalar arguments, a reduction rule on arrays of its ranks, a
    non-differentiable declaration on anything; else unsupported."""
    argtypes = [fn.typeof(a.name) for a in args]
    for family in ("scalar", "reduction"):
        found = PRIMITIVES.get(key, family)
        if found is not None and found.matches(argtypes, result_type):
            return CallClass(found.kind, key, args, primitive=found)
    return CallClass("unsupported", key, args)


def _structural_kind(fn, expr, key):
    """List operations, and adjit's own runtime and shadow-update helpers (calls in a
    derivative that is differentiated again), by identity."""
    if list_method(fn, expr) is not None:
        return "list_method"
    if new_list_call(fn, expr):
        return "list_new"
    if list_reduction(fn, expr) is not None:
        return "list_reduction"
    if any(key is helper for helper in ACCUMULATING_BILINEAR):
        return "accumulating_bilinear"
    if tape_rt.is_push(key):
        return "tape_push"
    if key is tape_rt.tape_reserve:
        return "tape_reserve"
    if tape_rt.is_put(key):
        return "tape_put"
    if any(key is form for form in (*ADJOINT_PRODUCTS, adjoint_product_sum,
                                    adjoint_product_sum_pair)):
        return "adjoint_product"
    if any(key is pop for pop in tape_rt._pop_cache.values()):
        return "tape_pop"
    return None
