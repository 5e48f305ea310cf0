"""The public API contract: decorator forms, caching, njit interop, vjp, errors."""
import functools
import math
import re

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad


def poly(x, y):
    return x * x * y + math.sin(y)


def count_to(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
    return s


def vector_out(x):
    return x


@numba.njit
def njit_poly(x, y):
    return x * x * y + math.sin(y)


def test_grad_matches_closed_form_and_is_cached():
    g = adjit.grad(poly)
    assert adjit.grad(poly) is g
    assert g(1.5, 0.5) == pytest.approx(2 * 1.5 * 0.5)
    gy = adjit.grad(poly, argnums=1)
    assert gy(1.5, 0.5) == pytest.approx(1.5 ** 2 + math.cos(0.5))
    assert len(g.overloads) == 1
    g(2.5, 0.25)
    assert len(g.overloads) == 1


def test_grad_as_decorator_and_tuple_argnums():
    @adjit.grad
    def dpoly(x, y):
        return x * x * y + math.sin(y)

    assert dpoly(2.0, 3.0) == pytest.approx(12.0)
    dx, dy = adjit.grad(poly, argnums=(0, 1))(2.0, 3.0)
    assert (dx, dy) == pytest.approx((12.0, 4.0 + math.cos(3.0)))
    assert adjit.grad(argnums=1)(poly)(2.0, 3.0) == pytest.approx(4.0 + math.cos(3.0))


def test_grad_of_njit_dispatcher_and_use_inside_njit():
    g = adjit.grad(njit_poly)
    check_grad(njit_poly, 0.7, 1.1)

    @numba.njit
    def newton_step(x, y):
        return x - 0.1 * g(x, y)

    assert newton_step(0.7, 1.1) == pytest.approx(0.7 - 0.1 * 2 * 0.7 * 1.1)


def test_value_and_grad_and_vjp():
    value, dx = adjit.value_and_grad(count_to)(1.5, 4)
    assert value == pytest.approx(1.5 * 6) and dx == pytest.approx(6.0)
    y, (xbar, nbar) = adjit.vjp(count_to)(1.5, 4, 2.0)
    assert y == pytest.approx(9.0) and xbar == pytest.approx(12.0) and nbar == 0


def test_gradient_keeps_float32():
    def f32(x):
        return x * x

    dispatcher = adjit.grad(f32)
    assert dispatcher(np.float32(3.0)) == 6.0
    # Numba boxes float32 results as Python floats; the compiled signature keeps float32
    (sig,) = dispatcher.nopython_signatures
    assert sig.return_type == numba.float32


def test_array_gradient_has_argument_shape():
    def weighted(w, x):
        s = 0.0
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                s += w * x[i, j] * x[i, j]
        return s

    x = np.arange(6.0).reshape(2, 3)
    gx = adjit.grad(weighted, argnums=1)(0.5, x)
    assert gx.shape == x.shape and np.allclose(gx, x)


def test_argnums_errors_name_the_problem():
    with pytest.raises(adjit.ArgumentError, match="argument 1 \\('n'\\).*int64"):
        adjit.grad(count_to, argnums=1)(1.5, 3)
    with pytest.raises(adjit.ArgumentError, match="out of range"):
        adjit.grad(poly, argnums=2)
    with pytest.raises(adjit.ArgumentError, match="argnums must be an int"):
        adjit.grad(poly, argnums=1.0)
    with pytest.raises(adjit.ArgumentError, match="repeats"):
        adjit.grad(poly, argnums=(0, 0))


def test_grad_requires_float_scalar_output():
    with pytest.raises(adjit.ArgumentError, match="float scalar.*array"):
        adjit.grad(vector_out)(np.ones(3))


def test_unsupported_error_names_construct_function_and_line():
    def pops(x, n):
        vals = [x * 2.0, float(n)]
        return vals.pop()

    with pytest.raises(adjit.UnsupportedError) as info:
        adjit.grad(pops)(1.0, 2)
    msg = str(info.value)
    assert "'vals.pop(...)' on a list" in msg and "'test_unsupported_error_names" in msg
    assert "test_api.py:" in msg and "return vals.pop()" in msg


def test_unsupported_primitive_without_rule():
    def frexp_of(x):
        m, e = math.frexp(x)
        return m * e

    with pytest.raises(adjit.UnsupportedError, match="'frexp'.*frexp_of"):
        adjit.grad(frexp_of)(1.5)


def test_show_prints_all_three_programs(capsys):
    text = adjit.show(count_to, 1.5, 3)
    assert "primal typed IR" in text and "forward pass" in text and "reverse pass" in text
    assert "# line" in text and "adjit_tape" in text
    assert "forward pass" in capsys.readouterr().out


def test_show_of_a_transform_shows_the_program_it_runs():
    import io
    grad_text = adjit.show(adjit.grad(count_to), 1.5, 3, file=io.StringIO())
    assert "primal typed IR of count_to" in grad_text and "reverse pass" in grad_text
    jvp_text = adjit.show(adjit.jvp(count_to), 1.5, 3, file=io.StringIO())
    assert "jvp of count_to" in jvp_text and "# line" in jvp_text
    # jvp(f)(x, n, dx): given with its tangent as well, the same program
    with_tangent = adjit.show(adjit.jvp(count_to), 1.5, 3, 1.0, file=io.StringIO())
    assert re.sub(r"%\d+", "", with_tangent) == re.sub(r"%\d+", "", jvp_text)
    with pytest.raises(adjit.ArgumentError, match="count_to"):
        adjit.show(adjit.jvp(count_to), 1.5, 3, 1.0, 2.0, 7.0, file=io.StringIO())
    # hvp(f)(x, n, v): f's reverse program, which hvp differentiates in forward mode
    hvp_text = adjit.show(adjit.hvp(count_to), 1.5, 3, 1.0, file=io.StringIO())
    assert re.sub(r"%\d+", "", hvp_text) == re.sub(r"%\d+", "", grad_text)
    # ... or without the tangent (it removed one of f's arguments)
    hvp_args = adjit.show(adjit.hvp(count_to), 1.5, 3, file=io.StringIO())
    assert re.sub(r"%\d+", "", hvp_args) == re.sub(r"%\d+", "", grad_text)


def test_show_with_arguments_that_do_not_fit_is_an_argument_error():
    """Too few or too many arguments were Numba's TypeError about a signature; integer
    arguments only printed a program with nothing differentiated."""
    import io
    for args in [(1.5,), (1.5, 3, 2.0, 1.0)]:
        with pytest.raises(adjit.ArgumentError, match=r"count_to takes \(x, n\); got"):
            adjit.show(count_to, *args, file=io.StringIO())
    with pytest.raises(adjit.ArgumentError, match="nothing to differentiate"):
        adjit.show(count_to, 1, 3, file=io.StringIO())


@numba.njit
def shared_helper(a, b):
    return a * math.sin(b)


def calls_helper_twice(x, y):
    return shared_helper(x, y) + shared_helper(y, x) * shared_helper(x, x)


def test_callee_called_from_several_places_is_derived_once():
    from adjit.transform.reverse import program
    before = {k for k in program._programs if k[0] is shared_helper.py_func}
    check_grad(calls_helper_twice, 0.4, 1.3, argnums=(0, 1))
    after = {k for k in program._programs if k[0] is shared_helper.py_func}
    assert len(after - before) == 1


def test_dump_ir_prints_every_pass(capsys, monkeypatch):
    import adjit.config

    def dumped(x):
        return x * 3.0

    monkeypatch.setattr(adjit.config, "DUMP_IR", True)
    assert adjit.grad(dumped)(2.0) == 3.0
    out = capsys.readouterr().out
    assert "normalise:inplace_binop_to_binop of" in out
    assert "forward pass of" in out and "# line" in out


def with_defaults(x, n=5, scale=2.0):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i) * scale
    return s


def test_grad_fills_in_default_arguments():
    expected = sum(2.0 * i * math.cos(0.3 * i) for i in range(5))
    assert adjit.grad(with_defaults)(0.3) == pytest.approx(expected)
    assert adjit.grad(with_defaults)(0.3, 5, 2.0) == pytest.approx(expected)
    assert adjit.grad(with_defaults, argnums=2)(0.3) == pytest.approx(with_defaults(0.3) / 2.0)
    value, _ = adjit.value_and_grad(with_defaults)(0.3, 3)
    assert value == pytest.approx(with_defaults(0.3, 3))


def test_jvp_and_hvp_fill_in_default_arguments():
    # closed forms: f' = sum 2 i cos(0.3 i), f'' = -sum 2 i^2 sin(0.3 i) (n=5, scale=2)
    d1 = sum(2.0 * i * math.cos(0.3 * i) for i in range(5))
    d2 = -sum(2.0 * i * i * math.sin(0.3 * i) for i in range(5))
    value, tangent = adjit.jvp(with_defaults)(0.3, 1.5)
    assert value == pytest.approx(with_defaults(0.3)) and tangent == pytest.approx(1.5 * d1)
    # (x, n) and its tangent: n is an int, so only x takes one
    assert adjit.jvp(with_defaults)(0.3, 5, 1.5)[1] == pytest.approx(1.5 * d1)
    assert adjit.hvp(with_defaults)(0.3, 1.5) == pytest.approx(1.5 * d2)
    assert adjit.hvp(with_defaults)(0.3, 5, 2.0, 1.5) == pytest.approx(1.5 * d2)
    with pytest.raises(adjit.ArgumentError, match="trailing defaults may be omitted"):
        adjit.hvp(with_defaults)(1.5)


def test_vjp_fills_in_default_arguments_and_says_what_it_takes():
    """vjp takes the arguments positionally, trailing defaults optional, then ybar, and
    returns one cotangent per argument given (closed form: f' = sum 2 i cos(0.3 i)).
    A call that does not fit is an ArgumentError listing the parameters, for every
    transform, not Numba's TypeError about adjit's own stub."""
    d1 = sum(2.0 * i * math.cos(0.3 * i) for i in range(5))
    y, cots = adjit.vjp(with_defaults)(0.3, 5, 2.0, 1.5)
    assert y == pytest.approx(with_defaults(0.3)) and cots[0] == pytest.approx(1.5 * d1)
    assert cots[1] == 0 and cots[2] == pytest.approx(1.5 * with_defaults(0.3) / 2.0)
    y, cots = adjit.vjp(with_defaults)(0.3, 1.5)  # n and scale keep their defaults
    assert y == pytest.approx(with_defaults(0.3)) and len(cots) == 1
    assert cots[0] == pytest.approx(1.5 * d1)
    y, cots = adjit.vjp(with_defaults)(0.3, 3, 1.5)
    d1_3 = sum(2.0 * i * math.cos(0.3 * i) for i in range(3))
    assert len(cots) == 2 and cots[0] == pytest.approx(1.5 * d1_3)
    with pytest.raises(adjit.ArgumentError, match=r"takes the arguments \(x, n, scale; .*ybar"):
        adjit.vjp(with_defaults)(1.5)
    with pytest.raises(adjit.ArgumentError, match="then ybar"):
        adjit.vjp(with_defaults)(0.3, ybar=1.5)
    with pytest.raises(adjit.ArgumentError, match=r"takes \(x, n, scale\)"):
        adjit.grad(with_defaults)(0.3, 5, 2.0, 1.0)
    assert adjit.runtime.current_depth() == 0


def test_calls_from_njit_that_do_not_bind_are_argument_errors():
    """A transform called from ``@njit`` code with arguments that do not bind to its
    parameters raised Numba's TypingError about adjit's function; from Python it was
    already an ArgumentError. Both name the transform's parameters now."""
    def f(x, y):
        return math.sin(x) * y
    df, jf = adjit.grad(f), adjit.jvp(f)

    @numba.njit
    def missing(x):
        return df(x)

    @numba.njit
    def too_many(x):
        return df(x, 2.0, 3.0)

    @numba.njit
    def keywords(x):
        return jf(x, 2.0, dx=1.0, dy=0.0)

    @numba.njit
    def fine(x):
        return df(x, 2.0)
    with pytest.raises(adjit.ArgumentError, match=r"takes \(x, y\); missing .*'y'"):
        missing(0.3)
    with pytest.raises(adjit.ArgumentError, match=r"takes \(x, y\); too many"):
        too_many(0.3)
    with pytest.raises(adjit.ArgumentError, match="positionally, then the tangents; .*'dx'"):
        keywords(0.3)
    assert fine(0.3) == pytest.approx(2.0 * math.cos(0.3), rel=1e-14)


def test_jvp_says_an_integer_argument_takes_no_tangent():
    """An int given for a float parameter takes no tangent; the count error said only
    how many tangents it expected."""
    def f(x, y):
        return math.sin(x) * y
    with pytest.raises(adjit.ArgumentError, match=r"expected 1 tangents, got 2; 'x' "
                       r"\(int64\) is an integer value, which takes no tangent: pass it "
                       r"as a float"):
        adjit.jvp(f)(1, 2.0, 1.0, 0.0)


def test_hvp_errors_name_hvp():
    """They named jvp and grad, the transforms hvp is built from."""
    def g(x):
        return np.sum(np.sin(x) * x)

    def vec(x):
        return np.sin(x)
    with pytest.raises(adjit.ArgumentError, match=r"^hvp: the tangent of 'x' must have"):
        adjit.hvp(g)(np.ones(3), np.ones(2))
    with pytest.raises(adjit.ArgumentError, match=r"^hvp requires .*vec to return a float"):
        adjit.hvp(vec)(np.ones(3), np.ones(3))


def test_jvp_with_some_defaults_given():
    def scaled(x, scale=2.0, shift=1.0):
        return scale * x + shift
    # (x, scale) and their tangents (1, 0): d/dx = scale
    assert adjit.jvp(scaled)(0.5, 3.0, 1.0, 0.0)[1] == pytest.approx(3.0)
    # (x) and its tangent: scale keeps its default
    assert adjit.jvp(scaled)(0.5, 1.0)[1] == pytest.approx(2.0)


def test_keywords_and_tuples_that_do_not_bind_are_argument_errors():
    """``jvp`` and ``hvp`` take values positionally: a keyword was Numba's TypeError;
    a grad keyword that leaves a parameter unbound too. vjp gave a tuple of floats a
    zero cotangent (wrong: f depends on it); it is refused, as grad refuses it."""
    def g(x, y):
        return np.sum(x * y)
    x = np.array([1.0, 2.0])
    assert np.allclose(adjit.grad(g)(x, y=3 * x), 3 * x)
    with pytest.raises(adjit.ArgumentError, match="positionally, then the tangents"):
        adjit.jvp(g)(x, x, y=x)
    with pytest.raises(adjit.ArgumentError, match="positionally, then the tangents"):
        adjit.hvp(g)(x, y=x, v=x)
    with pytest.raises(adjit.ArgumentError,
                       match=r"takes \(x, y\); got an unexpected keyword argument 'z'"):
        adjit.grad(g)(x, z=x)  # (it said that y was missing)
    with pytest.raises(adjit.ArgumentError, match=r"takes \(x, y\); missing .*'y'"):
        adjit.grad(g)(x)

    def f(t, x):
        return t[0][0] * np.sum(x) + t[1]
    with pytest.raises(adjit.ArgumentError, match="argument 0 .'t'. is a tuple holding floats"):
        adjit.vjp(f)(((1.5, 2.0), 0.7), x, 1.0)


def _square_into(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]
    return out, np.sum(out)


def test_vjp_returns_an_output_written_into_an_argument():
    """``fill(x, out); return out``: vjp returned the argument after the reverse pass
    had put its old values back (zeros), not f(x); the cotangents were right."""
    x, out = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    (y, total), (xbar, _) = adjit.vjp(_square_into)(x, out, (np.ones(3), 1.0))
    np.testing.assert_array_equal(y, x * x)
    assert total == 14.0
    np.testing.assert_allclose(xbar, 4.0 * x, rtol=1e-15)


def _square_then_weigh(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]
    return np.sum(out * x)


_M = np.array([0.3, 1.2, -0.7, 0.45])


@pytest.mark.parametrize("call, label", [
    (lambda: adjit.grad(_square_then_weigh)(_M, _M), "grad"),
    (lambda: adjit.value_and_grad(_square_then_weigh)(_M[1:], _M[:3]), "value_and_grad"),
    (lambda: adjit.vjp(_square_then_weigh)(_M, _M, 1.0), "vjp"),
    (lambda: adjit.jvp(_square_then_weigh)(_M, _M, _M, _M), "jvp"),
    (lambda: adjit.hvp(_square_then_weigh)(_M, _M, _M), "hvp"),
    (lambda: adjit.jvp(adjit.grad(_square_then_weigh))(_M, _M, _M, _M), "jvp"),
], ids=["grad", "value_and_grad", "vjp", "jvp", "hvp", "jvp_of_grad"])
def test_an_array_passed_twice_to_a_function_that_writes_it_is_refused(call, label):
    """One buffer as ``x`` and as ``out``: each argument gets a shadow of its own, so the
    derivative would be of another function (it was wrong: neither 4 m^3 nor 3 m^2). The
    message names the transform called (``hvp`` said ``grad``) and the argument written
    (``jvp(grad(f))`` said ``x``)."""
    with pytest.raises(adjit.ArgumentError, match=rf"^{label}\((grad_)?_square_then_weigh\): "
                       r"the arguments 'out' and 'x' share memory.*writes into 'out'"):
        call()


def _weighted_square(x, y):
    return np.sum(x * y * y)


def test_an_array_passed_twice_to_a_function_that_writes_nothing_differentiates():
    """``jvp(grad(f))`` took ``grad(f)``'s packed ``*args`` for ``f``'s first parameter,
    and refused one array passed as both arguments of a function that writes nothing."""
    x, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    expected = (2.0 * x * v, 2.0 * (v * x + x * v))  # d(y*y), d(2*x*y) with y = x
    _, tangents = adjit.jvp(adjit.grad(_weighted_square, (0, 1)))(x, x, v, v)
    np.testing.assert_allclose(tangents, expected, rtol=1e-15)
    np.testing.assert_allclose(adjit.hvp(_weighted_square, (0, 1))(x, x, v, v), expected,
                               rtol=1e-15)


def test_separate_arrays_for_a_written_argument_still_differentiate():
    from adjit.testing import check_grad, check_hvp, check_jvp
    check_grad(_square_then_weigh, _M, np.zeros(4))
    check_jvp(_square_then_weigh, _M, np.zeros(4))
    check_hvp(_square_then_weigh, _M, np.zeros(4))
    assert np.allclose(adjit.grad(_square_then_weigh)(_M, np.zeros(4)), 3 * _M ** 2)


@pytest.mark.parametrize("transform", [adjit.grad, adjit.value_and_grad, adjit.vjp, adjit.jvp,
                                       adjit.hvp, adjit.hessian], ids=lambda t: t.__name__)
def test_a_builtin_or_ufunc_is_an_argument_error_with_the_fix(transform):
    """``adjit.grad(math.sin)`` raised an AttributeError about ``__code__``."""
    for func, shown in ((math.sin, "sin"), (np.sin, "sin"),
                        (functools.partial(lambda x, y: x * y, y=2.0), "partial")):
        with pytest.raises(adjit.ArgumentError, match=rf"adjit\.{transform.__name__}\({shown}\)"
                           rf".*def f\(x\): return {shown}\(x\)"):
            transform(func)


def test_vjp_of_an_integer_output_asks_for_a_float_cotangent():
    """The message asked for "a 1-D float array like the output (array(int64, ...))"."""
    def counts(x):
        return np.arange(3) * int(x[0])
    x = np.ones(2)
    with pytest.raises(adjit.ArgumentError, match="a cotangent is float even for an integer"):
        adjit.vjp(counts)(x, np.ones(3, dtype=np.int64))
    value, (xbar,) = adjit.vjp(counts)(x, np.ones(3))
    assert np.array_equal(value, [0, 1, 2]) and np.array_equal(xbar, [0.0, 0.0])


def _keyword_only(x, *, y=1.0):
    return x * y


def _var_keywords(x, **options):
    return x * x


@pytest.mark.parametrize("func", [_keyword_only, _var_keywords], ids=lambda f: f.__name__)
def test_keyword_only_and_var_keyword_parameters_are_refused_by_name(func):
    """grad said "takes (x, y); not enough arguments" for a keyword-only parameter with a
    default, and named ``**options`` as an ordinary parameter."""
    for transform in (adjit.grad, adjit.jvp, adjit.hvp):
        with pytest.raises(adjit.ArgumentError, match=r"keyword-only or \*\*kwargs parameters"
                           r" \((y|options)\).*make them ordinary parameters"):
            transform(func)
