"""Edges a user can reach: each gives the right number or a clear error (issue 10).

Every test here failed on the main branch before the fix it guards.
"""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.extend import defderiv
from adjit.runtime import current_depth
from adjit.testing import check_grad, check_hvp, check_jvp, check_vjp


def _all_modes(f, x, v=1.0):
    """(grad, jvp tangent, hvp) of a function of one float."""
    return adjit.grad(f)(x), adjit.jvp(f)(x, v)[1], adjit.hvp(f)(x, v)


# -- 1. boundscheck is honoured ---------------------------------------------------------
@numba.njit(boundscheck=True)
def _out_of_bounds(x):
    return x[10] + np.sum(x * x)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_boundscheck_raises_index_error_like_the_primal(mode):
    x = np.arange(4.0)
    with pytest.raises(IndexError):
        _out_of_bounds(x)
    with pytest.raises(IndexError):
        if mode == "grad":
            adjit.grad(_out_of_bounds)(x)
        else:
            adjit.jvp(_out_of_bounds)(x, np.ones(4))


# -- 2. vjp checks its cotangent --------------------------------------------------------
def _double(x):
    return x * 2.0


def _pair(x):
    return np.sum(x), np.sum(x * x)


@pytest.mark.parametrize("ybar, words", [
    (np.ones(2), "expected shape (3,) but got (2,)"),
    (np.ones(4), "expected shape (3,) but got (4,)"),
    (np.ones((3, 1)), "1-D float array"),
    (np.ones(3, dtype=np.int64), "1-D float array"),
    ((1.0, 2.0), "1-D float array"),
])
def test_vjp_refuses_a_cotangent_unlike_an_array_output(ybar, words):
    with pytest.raises(adjit.ArgumentError, match=words.replace("(", r"\(").replace(")", r"\)")):
        adjit.vjp(_double)(np.ones(3), ybar)


@pytest.mark.parametrize("ybar", [(1.0, 2.0, 3.0), 1.0])
def test_vjp_refuses_a_cotangent_unlike_a_tuple_output(ybar):
    with pytest.raises(adjit.ArgumentError, match="tuple of 2"):
        adjit.vjp(_pair)(np.ones(3), ybar)


def test_vjp_with_the_right_cotangent():
    (y, (xbar,)) = adjit.vjp(_pair)(np.arange(3.0), (2.0, 1.0))
    assert y == (3.0, 5.0)
    np.testing.assert_allclose(xbar, 2.0 + 2.0 * np.arange(3.0))


def test_hvp_shape_error_names_both_shapes():
    with pytest.raises(adjit.ArgumentError, match=r"\(3,\) but got \(2,\)"):
        adjit.hvp(lambda x: np.sum(x * x))(np.ones(3), np.ones(2))


def test_shape_checks_are_inline_in_the_transform():
    """A tangent's shape check is part of the transform's own code: it compiles no
    function of its own (one per argument name cost 25 to 35 ms each), and still names
    the argument and both shapes."""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            compiled.append((func.__module__, func.__qualname__))

        def on_end(self, ev):
            pass

    def weighted(x, w):
        return np.sum(x * x * w)

    x, w = np.ones((2, 3)), np.full((2, 3), 0.5)
    with event.install_listener("numba:compile", Listener()):
        y, ydot = adjit.jvp(weighted)(x, w, 2.0 * x, np.zeros((2, 3)))
    assert (y, ydot) == (3.0, 12.0)  # sum(2 x dx w) over six entries of 2
    assert ("adjit.compile.dispatcher", "jvp_weighted") in compiled
    assert not [c for c in compiled if c[0] == "adjit.api"]  # where the checks are built
    with pytest.raises(adjit.ArgumentError,
                       match=r"tangent of 'w' .* expected shape \(2, 3\) but got \(3, 2\)"):
        adjit.jvp(weighted)(x, w, x, np.ones((3, 2)))


# -- 4. custom rules ---------------------------------------------------------------------
def test_defderiv_with_too_few_partials_is_refused():
    @numba.njit
    def two(a, b):
        return a * b

    with pytest.raises(adjit.ArgumentError, match="gives 1 partial"):
        defderiv(two, lambda a, b: b)
    defderiv(two, lambda a, b: b, None)  # an explicit None is a zero partial


def test_rule_registered_after_differentiation_takes_effect():
    @numba.njit
    def square(a):
        return a * a

    def f(x):
        return square(x) + x

    g = adjit.grad(f)
    assert g(3.0) == 7.0
    defderiv(square, lambda a: 100.0)  # deliberately not the true derivative
    assert adjit.grad(f)(3.0) == 101.0
    assert g(3.0) == 101.0
    assert adjit.jvp(f)(3.0, 1.0) == (12.0, 101.0)


def test_defderiv_rule_on_array_call_is_refused_clearly():
    @numba.njit
    def total(v):
        return np.sum(v * v)

    defderiv(total, lambda v: 1.0)

    def f(x):
        return total(x)

    for transform in (lambda: adjit.grad(f)(np.ones(3)),
                      lambda: adjit.jvp(f)(np.ones(3), np.ones(3))):
        with pytest.raises(adjit.UnsupportedError, match="defderiv rule is for scalar"):
            transform()


def test_scalar_rule_called_with_more_arguments_than_partials_is_refused():
    from adjit.rules.core import lookup

    @numba.njit
    def blend(a, b=2.0):
        return a * b

    defderiv(blend, lambda a, b: b)  # one partial: b is treated as... refused when varied

    def f(x):
        return blend(x, x)

    assert lookup(blend).arity_problem(2)
    with pytest.raises(adjit.UnsupportedError, match="gives 1 partial"):
        adjit.grad(f)(1.0)
    with pytest.raises(adjit.UnsupportedError, match="gives 1 partial"):
        adjit.jvp(f)(1.0, 1.0)


# -- 5. IEEE semantics in rules -----------------------------------------------------------
def _sqrt(x):
    return math.sqrt(x)


def _log(x):
    return math.log(x)


def test_sqrt_and_log_at_zero_are_infinite_not_errors():
    assert _all_modes(_sqrt, 0.0) == (math.inf, math.inf, -math.inf)
    assert _all_modes(_log, 0.0) == (math.inf, math.inf, -math.inf)


def _root(x):
    return x ** 0.5


def _inverse_root(x):
    return math.pow(x, -0.5)


def _power_one_and_a_half(x):
    return np.power(x, 1.5)


def test_fractional_powers_at_zero_have_ieee_second_derivatives():
    """(grad, jvp, hvp) at 0 are the IEEE limits of b x^(b-1) and b (b-1) x^(b-2), as
    for math.sqrt; hvp gave 0.0 for b < 1 (the partial at 0 was a constant)."""
    assert _all_modes(_root, 0.0) == (math.inf, math.inf, -math.inf)
    assert _all_modes(_inverse_root, 0.0) == (-math.inf, -math.inf, math.inf)
    assert _all_modes(_power_one_and_a_half, 0.0) == (0.0, 0.0, math.inf)


def test_log_outside_its_domain_propagates_nan():
    assert all(math.isnan(d) for d in _all_modes(_log, -1.0))


# -- 6. exceptions do not leak tape -------------------------------------------------------
@numba.njit
def _raises_when_big(x):
    y = math.sin(x) * x
    if y > 0.5:
        raise ValueError("big")
    return y


def test_exceptions_leave_the_tape_empty():
    g = adjit.grad(_raises_when_big)
    for _ in range(50):
        with pytest.raises(ValueError):
            g(1.0)
    assert current_depth() == 0
    assert g(0.1) == pytest.approx(math.sin(0.1) + 0.1 * math.cos(0.1))


# -- 7. top-level recursion ---------------------------------------------------------------
@numba.njit
def _power(x, n):
    if n <= 0:
        return 1.0
    return x * _power(x, n - 1)


def test_top_level_recursion_in_every_mode():
    assert adjit.grad(_power)(1.5, 3) == pytest.approx(3 * 1.5 ** 2)
    assert adjit.jvp(_power)(1.5, 3, 1.0)[1] == pytest.approx(3 * 1.5 ** 2)
    assert adjit.hvp(_power)(1.5, 3, 1.0) == pytest.approx(6 * 1.5)


@numba.njit
def _cube_by_recursion(x, n):
    if n <= 0:
        return 1.0
    return x * _cube_by_recursion(x, n - 1)


def test_hvp_through_a_recursive_helper_as_the_first_transform():
    """hvp typed the recursive helper's derivative by compiling it while its own capture
    typed it (Numba: "compiler re-entrant"); the partial return type is used instead."""
    def top(x):
        return _cube_by_recursion(x[0], 3) + x[1] * x[1]
    x, v = np.array([1.5, 2.0]), np.array([1.0, 0.5])
    np.testing.assert_allclose(adjit.hvp(top)(x, v), [6 * 1.5 * 1.0, 2 * 0.5])


# -- 8. / 9. higher-order forms and internal errors ------------------------------------------
@numba.njit
def _energy(x):
    return np.sum(x ** 2 * np.sin(x))


_energy_gradient = adjit.grad(_energy)


def _gradient_norm(x):
    return np.sum(_energy_gradient(x) ** 2)


def test_reverse_over_a_called_gradient_is_refused_by_name_and_forward_works():
    """grad of a function calling adjit.grad(g): refused as reverse over reverse (it
    said the generated 'grad__energy' writes its arguments); jvp of it works."""
    x = np.array([0.3, -0.7, 1.1])
    for transform, args in ((adjit.grad(_gradient_norm), (x,)),
                            (adjit.hvp(_gradient_norm), (x, x))):
        with pytest.raises(adjit.UnsupportedError,
                           match=r"'adjit\.grad\(_energy\)' inside a function differentiated "
                                 r"in reverse mode"):
            transform(*args)
    check_jvp(_gradient_norm, x)


def test_direct_reverse_over_reverse_is_refused_with_advice():
    """grad(grad(f)) and vjp/hvp of a grad failed inside the generated code, naming an
    IR 'const' and adjit's own helpers."""
    inner = adjit.grad(_sqrt)
    for outer in (adjit.grad, adjit.vjp, adjit.hvp, adjit.hessian):
        with pytest.raises(adjit.ArgumentError, match=r"reverse mode over reverse mode.*hvp"):
            outer(inner)
    assert adjit.jvp(inner)(4.0, 1.0)[1] == pytest.approx(-0.25 * 4.0 ** -1.5)


def test_hessian_of_two_arguments_is_refused():
    with pytest.raises(adjit.ArgumentError, match="hvp"):
        adjit.hessian(lambda x, y: x * y * y)


def test_objmode_is_refused_by_its_source_line():
    @numba.njit
    def uses_objmode(x):
        with numba.objmode(y="float64"):
            y = float(x) * 2
        return y * x

    for transform in (lambda: adjit.grad(uses_objmode)(1.0),
                      lambda: adjit.jvp(uses_objmode)(1.0, 1.0)):
        with pytest.raises(adjit.UnsupportedError, match="objmode") as info:
            transform()
        assert "uses_objmode" in str(info.value)


def squeeze_without_axis(x):
    return np.sum(np.squeeze(x))  # Numba cannot type it: the rank depends on the shape


def test_what_numba_cannot_compile_is_named_with_its_line():
    for transform in (lambda: adjit.grad(squeeze_without_axis)(np.ones((1, 3))),
                      lambda: adjit.jvp(squeeze_without_axis)(np.ones((1, 3)), np.ones((1, 3)))):
        with pytest.raises(adjit.ArgumentError, match="nothing to differentiate") as info:
            transform()
        assert "squeeze" in str(info.value)
        assert "test_edges.py:" in str(info.value) and "np.sum(np.squeeze(x))" in str(info.value)


# -- 12. values that never reach the output ------------------------------------------------
def _softplus_guarded(x):
    e = math.exp(x)
    if x > 700:
        return x
    return math.log1p(e)


def _unused_overflow(x):
    t = math.exp(800 * x)
    u = x * t  # noqa: F841 (never used)
    return x * x


def _unused_local_array(a):
    b = np.zeros(a.shape[0])
    b[0] = 700.0 * a[0]
    for i in range(1, a.shape[0]):
        b[i] = math.exp(b[i - 1])
    return np.sum(a * a)


def test_overflow_in_an_untaken_path_does_not_poison_the_gradient():
    assert _all_modes(_softplus_guarded, 800.0) == (1.0, 1.0, 0.0)


def test_overflow_in_an_unused_value_does_not_poison_the_gradient():
    assert _all_modes(_unused_overflow, 1.0) == (2.0, 2.0, 2.0)


def test_overflow_in_an_unused_local_array():
    a = np.ones(3)
    np.testing.assert_array_equal(adjit.grad(_unused_local_array)(a), 2.0 * a)
    np.testing.assert_array_equal(adjit.hvp(_unused_local_array)(a, a), 2.0 * a)


def test_second_order_through_a_zero_adjoint_is_kept():
    # f = (x^2 - 1)^2: at x = 1 the adjoint of x^2 - 1 is 0, its tangent is not
    def f(x):
        s = x * x - 1.0
        return s * s

    assert adjit.hvp(f)(1.0, 1.0) == pytest.approx(8.0)


# -- 13. no wrong refusals --------------------------------------------------------------------
def _conditional_arguments(x):
    return (math.sin(x if x > 0.0 else 2.0 * x) + abs(x if x > 0.0 else 2.0 * x)
            + max(x if x > 0.0 else 2.0 * x, 1.0) + np.sin(x if x > 0.0 else 2.0 * x))


@pytest.mark.parametrize("x", [0.5, -0.5])
def test_conditional_expression_as_a_call_argument(x):
    check_grad(_conditional_arguments, x)
    check_jvp(_conditional_arguments, x)
    check_hvp(_conditional_arguments, x)


@numba.njit
def _reads_only(q, p):
    return np.sum(q) * p


def test_array_argument_that_is_only_read_is_not_reported_written():
    g = adjit.grad(lambda x, a: _reads_only(a, x), argnums=0)
    assert g(2.0, np.ones(3)) == 3.0


def _unused_overflowing_array(x):
    t = np.exp(800.0 * x)
    u = x * t  # noqa: F841 (never used)
    return np.sum(x * x)


def test_overflow_in_an_unused_array_expression():
    x = np.ones(3)
    np.testing.assert_array_equal(adjit.grad(_unused_overflowing_array)(x), 2.0 * x)
    np.testing.assert_array_equal(adjit.hvp(_unused_overflowing_array)(x, x), 2.0 * x)


def _vector_matmul(a, b):
    return math.sin(a @ b)


def test_matmul_of_two_vectors_in_every_mode():
    # found by the fuzzer: jvp and hvp refused `a @ b` of 1-D arrays
    a, b = np.array([0.3, -0.5, 0.8]), np.array([1.1, 0.4, -0.2])
    check_grad(_vector_matmul, a, b, argnums=(0, 1))
    check_jvp(_vector_matmul, a, b)
    check_hvp(_vector_matmul, a, b, argnums=(0, 1))


def test_zero_tangent_through_a_nan_partial_stays_zero():
    # found by the fuzzer: atan2(0 * u, 0.0) has partials 0/0, but u's tangent is exact
    @numba.njit
    def spiral(a, u):
        acc = 0.0
        for j in range(a.shape[0]):
            acc += math.atan2(acc * u, float(j))
        return acc

    def f(a, b):
        return spiral(a, np.arctan(np.sum(b)))

    a, b = np.array([-0.115, 0.949, -0.284]), np.array([0.085, 0.997, 0.115])
    assert adjit.jvp(f)(a, b, np.ones(3), np.ones(3)) == (0.0, 0.0)
    np.testing.assert_array_equal(adjit.grad(f, 1)(a, b), np.zeros(3))


@numba.njit
def _sum_of_powers(x, n):
    s = 0.0
    for k in range(n):
        s += np.sum(x ** k)
    return s


def test_arguments_numba_cannot_type_are_an_argument_error():
    # a string where the loop count is expected: Numba's own TypingError, reworded in the
    # user's terms, naming the function and the types it was given
    x = np.array([0.1, 0.2])
    with pytest.raises(adjit.ArgumentError, match="cannot compile '_sum_of_powers'.*unicode"):
        adjit.grad(_sum_of_powers)(x, "3")
    with pytest.raises(adjit.ArgumentError, match="cannot compile '_sum_of_powers'"):
        adjit.jvp(_sum_of_powers)(x, "3", x)
    assert adjit.grad(_sum_of_powers)(x, 3) == pytest.approx(1.0 + 2.0 * x)


@numba.stencil
def _second_difference(a):
    return a[-1] + a[1] - 2.0 * a[0]


@numba.njit
def _stencil_into_out(x):
    out = np.zeros_like(x)
    _second_difference(x, out=out)
    return np.sum(out * out)


@numba.njit
def _stencil_with_neighborhood(x):
    return np.sum(_second_difference(x, neighborhood=((-1, 1),)) ** 2)


def test_stencil_with_out_is_differentiated():
    x = np.linspace(0.1, 1.0, 6) ** 2
    check_grad(_stencil_into_out, x)
    check_jvp(_stencil_into_out, x)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_stencil_with_neighborhood_is_refused_by_the_kernel_name(mode):
    x = np.linspace(0.1, 1.0, 6)
    with pytest.raises(adjit.UnsupportedError, match="(?s)'_second_difference'.*neighborhood="):
        if mode == "grad":
            adjit.grad(_stencil_with_neighborhood)(x)
        else:
            adjit.jvp(_stencil_with_neighborhood)(x, x)


@numba.njit
def _raises_when_large(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i]) * x[i]
    if s > 1.0:
        raise ValueError("too big")
    return s


_grad_raises_when_large = adjit.grad(_raises_when_large)


@numba.njit
def _catch_every_raise(xs):
    caught = 0
    for k in range(xs.shape[0]):
        try:
            _grad_raises_when_large(xs[k])
        except Exception:
            caught += 1
    return caught


def test_exceptions_caught_inside_njit_leave_no_tape_records():
    # the forward pass sets the tape back to its entry depth before each raise, so a
    # caller's try/except does not strand this call's records (6 words each before)
    small = np.full(5, 0.1)
    assert _grad_raises_when_large(small) == pytest.approx(np.sin(small) + small * np.cos(small))
    before = current_depth()
    assert _catch_every_raise(np.ones((500, 5))) == 500
    assert current_depth() == before


@numba.njit(boundscheck=True)
def _energy_at(x, i):
    # the helper pushes records, then Numba itself raises IndexError (boundscheck)
    s = 0.0
    for k in range(x.shape[0]):
        s += math.sin(x[k]) * x[k]
    return s * x[i]


@numba.njit
def _indexed_energy(x, i):
    return _energy_at(x, i) + x[0] * x[0]


_g_indexed = adjit.grad(_indexed_energy)
_vg_indexed = adjit.value_and_grad(_indexed_energy)
_vjp_indexed = adjit.vjp(_indexed_energy)
_hvp_indexed = adjit.hvp(_indexed_energy)


@numba.njit
def _catch_numba_raises(x, v, n):
    caught = 0
    total = 0.0
    for k in range(n):
        i = k % (x.shape[0] + 2)  # every few calls the index is out of bounds
        try:
            total += (_g_indexed(x, i)[0] + _vg_indexed(x, i)[1][0]
                      + _vjp_indexed(x, i, 1.0)[1][0][0] + _hvp_indexed(x, i, v)[0])
        except Exception:
            caught += 1
    return caught, total


def test_numba_raised_exceptions_caught_inside_njit_leave_no_tape_records():
    # an exception raised by Numba itself (IndexError under boundscheck), deep in a
    # helper, is caught in @njit code: each transform unwinds its tape as it passes
    x, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -2.0])
    for i in range(3):
        check_grad(_indexed_energy, x, i)
        check_vjp(_indexed_energy, x, i)
        check_hvp(_indexed_energy, x, i)
    before = current_depth()
    caught, total = _catch_numba_raises(x, v, 1000)
    assert caught == 400 and np.isfinite(total)
    assert current_depth() == before


def _masked_square_sum(x):
    return np.sum(x[x > 0.1] ** 2)


def test_a_compiler_failure_is_reported_as_unsupported():
    """Numba 0.68's lowering asserts on ``x[x > 0.1]`` of a 2-D ``x`` (its primal does not
    compile either). jvp used to let that bare AssertionError out; a failure to compile
    a transform is an UnsupportedError, or the ArgumentError "Numba cannot compile" when
    the user's own function fails too (``compile_error``), and a jvp that compiles must
    be right."""
    x = np.array([[0.5, -1.0, 2.0], [0.3, 0.7, -0.2]])
    try:
        adjit.jvp(_masked_square_sum)(x, np.ones_like(x))
    except adjit.ArgumentError as error:
        assert "Numba cannot compile '_masked_square_sum'" in str(error)
    except adjit.UnsupportedError:
        pass
    # the checks compile the primal first, and say so in the same words
    with pytest.raises(adjit.ArgumentError, match="Numba cannot compile the function"):
        check_jvp(_masked_square_sum, x)
