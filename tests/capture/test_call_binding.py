"""BindCallArguments / CallNumberClassGlobals: keyword arguments, omitted defaults,
``f(*t)``, ``np.zeros(n, dtype=...)`` and ``type(x)(v)`` reach the transforms as plain
positional calls, and differentiate like them."""
import math

import numba
import numpy as np
import pytest
from numba.core import ir, types

import adjit
from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture
from adjit.testing import check_grad, check_jvp

F64 = types.float64
VEC = types.float64[::1]
X5 = np.array([0.3, -0.8, 1.2, 0.05, -1.7])


def _calls(fn, argtypes):
    """The call expressions of ``fn``'s normalised IR, with the typed function."""
    typed = normalise(capture(fn, argtypes))
    calls = [s.value for b in typed.func_ir.blocks.values() for s in b.body
             if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
             and s.value.op == "call"]
    return typed, calls


def _callee(typed, call):
    """The Python object (function, dispatcher, class) a call's function var names."""
    typ = typed.typeof(call.func)
    if isinstance(typ, types.Dispatcher):
        return typ.dispatcher
    for b in typed.func_ir.blocks.values():
        for s in b.body:
            if isinstance(s, ir.Assign) and s.target.name == call.func.name and isinstance(
                    s.value, (ir.Global, ir.FreeVar)):
                return s.value.value
    return None


def _assert_plain(typed, call):
    """A call as the transforms want it: positional args only, typed argument by argument."""
    assert not call.kws and call.vararg is None and call.varkwarg is None
    sig = typed.calltypes[call]
    assert len(sig.args) == len(call.args)
    for var, t in zip(call.args, sig.args):
        assert not isinstance(t, types.Omitted)
        assert types.unliteral(typed.typeof(var)) == types.unliteral(t)


def _fd(f, x, v, h=1e-6):
    """Central difference of ``f`` at ``x`` along ``v`` (arrays or scalars)."""
    return (np.asarray(f(x + h * v)) - np.asarray(f(x - h * v))) / (2 * h)


# -- @njit helpers called with keywords and omitted defaults -------------------------------

@numba.njit
def pdf(x, mu=0.0, sigma=1.0):
    z = (x - mu) / sigma
    return math.exp(-0.5 * z * z) / (sigma * math.sqrt(2.0 * math.pi))


@numba.njit
def shifted(x, c=None, k=2):
    if c is None:
        return x * k
    return (x - c) * k


def mixture(x, s):
    total = 0.0
    for i in range(x.shape[0]):
        total += pdf(x[i], sigma=s) + 0.5 * pdf(x[i]) + pdf(x[i], 0.5, sigma=2.0 * s)
    return total + shifted(s) + shifted(s, c=0.25)


def mixture_expected(x, s):
    """``mixture`` with every argument written out (the reference)."""
    def p(v, mu, sig):
        z = (v - mu) / sig
        return math.exp(-0.5 * z * z) / (sig * math.sqrt(2.0 * math.pi))
    total = sum(p(v, 0.0, s) + 0.5 * p(v, 0.0, 1.0) + p(v, 0.5, 2.0 * s) for v in x)
    return total + s * 2 + (s - 0.25) * 2


def test_dispatcher_calls_are_positional_in_parameter_order():
    typed, calls = _calls(mixture, (VEC, F64))
    pdf_calls = [c for c in calls if _callee(typed, c) is pdf]
    assert len(pdf_calls) == 3
    for c in pdf_calls:
        _assert_plain(typed, c)
        assert typed.calltypes[c].args == (F64, F64, F64)
    # pdf(x[i], sigma=s): s lands in the third slot, mu is the constant 0.0
    by_name = {c.args[2].name: c for c in pdf_calls}
    assert "s" in by_name
    consts = {s.target.name: s.value.value for b in typed.func_ir.blocks.values()
              for s in b.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)}
    assert consts[by_name["s"].args[1].name] == 0.0
    shifted_calls = [c for c in calls if _callee(typed, c) is shifted]
    assert [typed.calltypes[c].args for c in shifted_calls] == [
        (F64, types.none, types.int64), (F64, F64, types.int64)]
    for c in shifted_calls:
        _assert_plain(typed, c)


def test_dispatcher_keywords_and_defaults_differentiate():
    s = 0.7
    value, _ = adjit.value_and_grad(mixture, argnums=(0, 1))(X5, s)
    assert np.isclose(value, mixture_expected(X5, s), rtol=1e-13)
    check_grad(mixture, X5, s, argnums=(0, 1))
    check_jvp(mixture, X5, s)
    # the Hessian in s: H v against a difference of gradients
    v = 0.3
    hv = adjit.hvp(mixture, argnums=1)(X5, s, v)
    gs = adjit.grad(mixture, argnums=1)
    assert np.isclose(hv, _fd(lambda t: gs(X5, t), s, v), rtol=1e-6)


# -- f(*t) with t built in the function ----------------------------------------------------

@numba.njit
def to_cartesian(r, theta, scale=1.0):
    return scale * r * math.cos(theta), scale * r * math.sin(theta)


def polar_energy(r, theta):
    p = (r, theta)
    x, y = to_cartesian(*p)
    q = (y, x)
    return x * y + math.atan2(*q) * r + max(*(x, y, 0.5 * r))


def test_star_args_of_a_built_tuple_are_expanded():
    typed, calls = _calls(polar_energy, (F64, F64))
    for c in calls:
        assert c.vararg is None
    cart = [c for c in calls if _callee(typed, c) is to_cartesian]
    assert len(cart) == 1
    _assert_plain(typed, cart[0])
    assert [a.name for a in cart[0].args[:2]] == ["r", "theta"]
    atan2 = [c for c in calls if _callee(typed, c) is math.atan2]
    _assert_plain(typed, atan2[0])


def test_star_args_differentiate():
    r, th = 1.3, 0.4
    x, y = r * math.cos(th), r * math.sin(th)
    value, _ = adjit.value_and_grad(polar_energy, argnums=(0, 1))(r, th)
    assert np.isclose(value, x * y + math.atan2(y, x) * r + max(x, y, 0.5 * r), rtol=1e-13)
    check_grad(polar_energy, r, th, argnums=(0, 1))
    check_jvp(polar_energy, r, th)


# -- NumPy allocations with dtype= ---------------------------------------------------------

def weighted_energy(x):
    n = x.shape[0]
    w = np.arange(1, n + 1, dtype=np.float64)
    y = np.zeros(n, dtype=np.float64)
    z = np.empty((n,), dtype=x.dtype)
    o = np.ones_like(x, dtype=np.float64)
    c = np.full(n, 0.5, dtype=np.float64)
    for i in range(n):
        y[i] = x[i] * x[i]
        z[i] = math.sin(x[i])
    s = 0.0
    for i in range(n):
        s += w[i] * y[i] + c[i] * z[i] * o[i]
    return s


def test_numpy_allocations_lose_their_keywords():
    typed, calls = _calls(weighted_energy, (VEC,))
    allocs = {_callee(typed, c): c for c in calls
              if _callee(typed, c) in (np.arange, np.zeros, np.empty, np.ones_like, np.full)}
    assert len(allocs) == 5
    for c in allocs.values():
        _assert_plain(typed, c)
    # arange(1, n + 1, dtype=...) -> arange(1, n + 1, None, float64): the skipped step
    assert typed.calltypes[allocs[np.arange]].args[2] == types.none
    assert typed.calltypes[allocs[np.zeros]].args[1] == types.NumberClass(F64)


def test_numpy_allocations_differentiate():
    w = np.arange(1, X5.size + 1)
    expected = np.sum(w * X5 * X5 + 0.5 * np.sin(X5))
    value, g = adjit.value_and_grad(weighted_energy)(X5)
    assert np.isclose(value, expected, rtol=1e-13)
    assert np.allclose(g, 2 * w * X5 + 0.5 * np.cos(X5), rtol=1e-13)
    check_grad(weighted_energy, X5)
    check_jvp(weighted_energy, X5)
    v = np.array([0.2, -0.1, 0.4, 1.0, -0.6])
    hv = adjit.hvp(weighted_energy)(X5, v)
    assert np.allclose(hv, (2 * w - 0.5 * np.sin(X5)) * v, rtol=1e-12)


# -- type(x) as a constructor --------------------------------------------------------------

def soft_clip(x, beta):
    T = type(beta)
    best = type(beta)(np.inf)
    for i in range(x.shape[0]):
        best = min(best, x[i] * beta + T(1))
    return best * T(2) + beta


def test_type_of_calls_the_scalar_class():
    typed, calls = _calls(soft_clip, (VEC, F64))
    assert not [c for c in calls if _callee(typed, c) is type]
    classes = [c for c in calls if isinstance(typed.typeof(c.func), types.NumberClass)]
    assert len(classes) == 3
    assert all(_callee(typed, c) is np.float64 for c in classes)
    typed, calls = _calls(soft_clip, (types.float32[::1], types.float32))
    classes = [c for c in calls if isinstance(typed.typeof(c.func), types.NumberClass)]
    assert len(classes) == 3 and all(_callee(typed, c) is np.float32 for c in classes)


def test_type_of_differentiates():
    beta = 0.6
    value, g = adjit.value_and_grad(soft_clip, argnums=(0, 1))(X5, beta)
    k = int(np.argmin(X5))
    assert value == (X5[k] * beta + 1.0) * 2.0 + beta
    assert np.allclose(g[0], np.where(np.arange(5) == k, 2 * beta, 0.0))
    assert np.isclose(g[1], 2 * X5[k] + 1.0)
    check_grad(soft_clip, X5, beta, argnums=(0, 1))
    check_jvp(soft_clip, X5, beta)


# -- string and dtype defaults; a default adjit cannot pass -----------------------------

@numba.njit
def penalty(x, kind="l2"):
    if kind == "l2":
        return np.sum(x * x)
    return np.sum(np.abs(x))


@numba.njit
def buffer(n, dtype=np.float64):
    return np.zeros(n, dtype=dtype)


def penalised_cubes(x):
    """``penalty(x)`` with its string default and ``buffer(n)`` with its dtype default
    left out, as callers write them: sum(x^2) + sum(x^3)."""
    b = buffer(x.shape[0])
    for i in range(x.shape[0]):
        b[i] = x[i] ** 2
    return penalty(x) + np.sum(b * x)


@numba.njit
def labelled(x, names=("a", "b")):
    return np.sum(x * x)


def uses_labelled(x):
    return labelled(x)


def test_string_and_dtype_defaults_are_passed_in_every_mode():
    """Omitted ``kind="l2"`` and ``dtype=np.float64`` become constants of the call, so the
    callee is derived for the arguments it is compiled for (they were a missing argument
    in the generated code: an internal error)."""
    from adjit.testing import check_hvp
    check_grad(penalised_cubes, X5)
    check_jvp(penalised_cubes, X5)
    check_hvp(penalised_cubes, X5)
    assert np.allclose(adjit.grad(penalised_cubes)(X5), 2 * X5 + 3 * X5 ** 2, rtol=1e-13)


def test_a_default_adjit_cannot_pass_is_refused_by_name():
    for transform, args in ((adjit.grad(uses_labelled), (X5,)),
                            (adjit.jvp(uses_labelled), (X5, X5)),
                            (adjit.hvp(uses_labelled), (X5, X5))):
        with pytest.raises(adjit.UnsupportedError) as info:
            transform(*args)
        message = str(info.value)
        assert "'labelled' without its argument 'names'" in message
        assert "names=..." in message and "uses_labelled" in message


def test_a_user_overload_is_derived_through_its_implementation_for_those_types():
    """``@overload(f)`` gives Numba one implementation per argument kind; each call
    becomes a call of the dispatcher of the implementation chosen for its types (the
    scalar one for ``logistic(x, scale=2.0)``, the array loop for ``logistic(v)``), and
    forward-over-reverse goes through it as through any helper."""
    from corpus.calls import call_user_overload
    typed, calls = _calls(call_user_overload, (F64, VEC))
    impls = {_callee(typed, c).py_func.__name__ for c in calls
             if isinstance(typed.typeof(c.func.name), types.Dispatcher)}
    assert {"scalar_impl", "array_impl"} <= impls
    from adjit.testing import check_hvp
    check_hvp(call_user_overload, 0.4, X5, argnums=(0, 1))


@numba.jit("f8(i8, f8)", nopython=True)
def _scaled_by_count(n, x):
    return n * x


@numba.jit("f8(f4, f4)", nopython=True)
def _single_product(s, up):
    return s * up


def _calls_an_integer_signature(a, x):
    return _scaled_by_count(a, x) * x  # Numba passes int(a): 2 for 2.7


def _calls_a_float32_signature(s, up):
    return _single_product(s, up) * s  # the product rounded to float32, then widened


def test_explicit_signatures_convert_their_arguments_in_every_mode():
    """A helper compiled for explicit signatures gets its arguments converted as Numba
    converts them; adjit derived it at the caller's types (a float for the int
    parameter: value 24.3 where the primal gives 18.0)."""
    a, x = 2.7, 3.0
    value, (da, dx) = adjit.value_and_grad(_calls_an_integer_signature, argnums=(0, 1))(a, x)
    assert value == numba.njit(_calls_an_integer_signature)(a, x) == 18.0
    assert (da, dx) == (0.0, 4.0 * x)
    assert adjit.jvp(_calls_an_integer_signature)(a, x, 0.0, 1.0) == (18.0, 12.0)
    assert adjit.hvp(_calls_an_integer_signature, argnums=1)(a, x, 1.0) == 4.0
    s, up = 100.0, 1.05
    s32, up32 = float(np.float32(s)), float(np.float32(up))
    expected = float(np.float32(s32 * up32)) * s
    value, (ds, dup) = adjit.value_and_grad(_calls_a_float32_signature, argnums=(0, 1))(s, up)
    assert value == numba.njit(_calls_a_float32_signature)(s, up) == expected != 105.0 * s
    assert ds == pytest.approx(2.0 * s * up32, rel=1e-7) and dup == pytest.approx(s * s)
    assert adjit.jvp(_calls_a_float32_signature)(s, up, 0.0, 1.0)[1] == pytest.approx(s * s)
    hv = adjit.hvp(_calls_a_float32_signature, argnums=(0, 1))(s, up, 1.0, 0.0)
    assert hv[0] == pytest.approx(2.0 * up32, rel=1e-7) and hv[1] == pytest.approx(2.0 * s)


@numba.njit
def _fill_rate(y, out, k=1.0):
    for i in range(y.size):
        out[i] = -k * y[i] ** 2


def _euler_by_keyword(y0, k):
    """Explicit Euler whose right-hand side fills ``out=`` passed by keyword."""
    y = y0.copy()
    d = np.empty_like(y)
    for _ in range(3):
        _fill_rate(y, out=d, k=k)
        y += 0.1 * d
    return np.sum(y)


def _euler_by_keyword_again(y0, k):
    """The same, a second function: each needs a process where jvp or hvp comes first."""
    y = y0.copy()
    d = np.empty_like(y)
    for _ in range(3):
        _fill_rate(y, out=d, k=k)
        y += 0.1 * d
    return np.sum(y * y)


def test_an_array_written_through_a_keyword_argument_in_forward_mode_first():
    """jvp or hvp built first for a function passing the array its helper writes by
    keyword (``rhs(y, out=d)``) failed inside adjit (IndexError: the write analysis
    indexed the call's positional arguments by the callee's parameter numbers); built
    after grad, they worked."""
    y0 = np.array([0.3, 1.2, -0.5])
    check_jvp(_euler_by_keyword, y0, 0.7)
    check_grad(_euler_by_keyword, y0, 0.7, argnums=(0, 1))
    v = np.array([0.4, -1.0, 0.25])
    hv = adjit.hvp(_euler_by_keyword_again)(y0, 0.7, v)  # before any grad of it
    g = adjit.grad(_euler_by_keyword_again)
    check_grad(_euler_by_keyword_again, y0, 0.7)
    eps = 1e-6
    fd = (g(y0 + eps * v, 0.7) - g(y0 - eps * v, 0.7)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
