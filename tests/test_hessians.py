"""Hessians by forward-over-reverse, nested forward mode, and forward-mode API errors."""
import math

import numba
import numpy as np
import pytest
from scipy.optimize import rosen_hess, rosen_hess_prod

import adjit


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def cube(x):
    return x * x * x


@numba.njit
def add(x, y):
    return x + y


jvp_add = adjit.jvp(add)


@numba.njit
def x_times_inner_derivative(x):
    # D(y -> x + y)(1): the inner derivative is 1 whatever x is
    _, inner = jvp_add(x, 1.0, 0.0, 1.0)
    return x * inner


def test_rosenbrock_hvp_matches_scipy_n1000():
    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(1000), rng.standard_normal(1000)
    hv = adjit.hvp(rosenbrock)(x, v)
    expected = rosen_hess_prod(x, v)
    assert np.max(np.abs(hv - expected)) <= 1e-10 * max(1.0, np.max(np.abs(expected)))


def test_rosenbrock_hessian_matches_scipy_n8():
    x = np.linspace(-1.2, 1.3, 8)
    H = adjit.hessian(rosenbrock)(x)
    assert H.shape == (8, 8)
    np.testing.assert_allclose(H, rosen_hess(x), rtol=1e-12, atol=1e-10)


def _sin_x_squared(x):
    return np.sum(np.sin(x) * x ** 2)


def test_hessian_shape_follows_jax_for_matrices_and_0d_arrays():
    """A matrix argument gave an (x.size, x.size) Hessian; JAX's convention, which the
    design follows, is x.shape + x.shape. The entries are checked against the closed
    form d2/dx2 (sin(x) x^2) = (2 - x^2) sin(x) + 4 x cos(x), which is diagonal."""
    def second(x):
        return (2 - x * x) * np.sin(x) + 4 * x * np.cos(x)
    X = np.arange(6.0).reshape(2, 3) / 7
    H = adjit.hessian(_sin_x_squared)(X)
    assert H.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(H.reshape(6, 6), np.diag(second(X).ravel()), rtol=1e-12,
                               atol=1e-14)
    # a Fortran-ordered matrix (X.T of a C one) failed inside the column loop
    HF = adjit.hessian(_sin_x_squared)(np.asfortranarray(X))
    np.testing.assert_allclose(HF, H, rtol=1e-14, atol=1e-15)
    h0 = adjit.hessian(_sin_x_squared)(np.array(0.4))
    assert np.shape(h0) == () and float(h0) == pytest.approx(second(0.4), rel=1e-12)


def test_hessian_of_a_tuple_argument_is_an_argument_error():
    with pytest.raises(adjit.ArgumentError, match="one float or float array.*UniTuple"):
        adjit.hessian(lambda p: p[0] * p[0] * p[1])((0.3, 2.0))


def test_jvp_of_grad_returns_gradient_and_hvp():
    g, hv = adjit.jvp(adjit.grad(cube))(1.5, 2.0)
    assert g == pytest.approx(3 * 1.5 ** 2) and hv == pytest.approx(6 * 1.5 * 2.0)
    assert adjit.hessian(cube)(1.5) == pytest.approx(9.0)


def test_jvp_of_vjp():
    (y, (xbar,)), (ydot, (xbar_dot,)) = adjit.jvp(adjit.vjp(cube))(1.5, 2.0, 1.0, 0.5)
    # d/dt [x^3, ybar * 3x^2] along (dx=1, dybar=0.5)
    assert y == pytest.approx(1.5 ** 3) and ydot == pytest.approx(3 * 1.5 ** 2)
    assert xbar == pytest.approx(2.0 * 3 * 1.5 ** 2)
    assert xbar_dot == pytest.approx(2.0 * 6 * 1.5 + 0.5 * 3 * 1.5 ** 2)


def test_nested_jvp_gives_second_derivative():
    def sin_sq(x):
        return math.sin(x) ** 2

    inner = adjit.jvp(sin_sq)

    def first(x):
        return inner(x, 1.0)[1]

    (_, second) = adjit.jvp(numba.njit(first))(0.7, 1.0)
    assert second == pytest.approx(2 * math.cos(2 * 0.7))


def test_no_perturbation_confusion():
    # D(x -> x * D(y -> x + y)(1))(1) = 1 (a confused implementation gives 2)
    value, derivative = adjit.jvp(x_times_inner_derivative)(1.0, 1.0)
    assert value == 1.0 and derivative == 1.0


def test_jvp_arrays_and_errors():
    x = np.linspace(0.1, 1.0, 5)
    v = np.ones(5)
    y, t = adjit.jvp(rosenbrock)(x, v)
    assert t == pytest.approx(float(np.sum(adjit.grad(rosenbrock)(x))))
    with pytest.raises(adjit.ArgumentError, match="shape of 'x'"):
        adjit.jvp(rosenbrock)(x, np.ones(4))
    with pytest.raises(Exception, match="expected 1 tangents, got 0"):
        adjit.jvp(rosenbrock)(x)
    with pytest.raises(Exception, match="tangent of 'x' must match"):
        adjit.jvp(rosenbrock)(x, 1.0)


def reductions(x, y):
    return np.linalg.norm(x) + np.max(x) + np.prod(x) + np.mean(x) + np.dot(x, y) + x.sum()


def test_array_reductions_forward_and_forward_over_reverse():
    from adjit.testing import check_jvp
    x = np.linspace(0.1, 1.0, 7)
    y = np.cos(x)
    check_jvp(reductions, x, y)
    g = adjit.grad(reductions)
    v = np.sin(np.arange(7.0))
    h = 1e-5
    fd = (g(x + h * v, y) - g(x - h * v, y)) / (2 * h)
    np.testing.assert_allclose(adjit.hvp(reductions)(x, y, v), fd, rtol=1e-6, atol=1e-8)


@numba.njit
def mixed_tuple(x):
    return (x * 2.0, 3, math.sin(x))


@numba.njit
def consume_tuple(t, y):
    return t[0] * y + t[2] * t[1]


def passes_mixed_tuple(x, y):
    return consume_tuple(mixed_tuple(x), y) * x


def test_hvp_through_saved_tuple_with_int_item():
    # the tangent record of a (float, int, float) record is (float, float)
    g = adjit.grad(passes_mixed_tuple)
    h = 1e-5
    fd = (g(0.7 + h, 1.3) - g(0.7 - h, 1.3)) / (2 * h)
    assert adjit.hvp(passes_mixed_tuple)(0.7, 1.3, 1.0) == pytest.approx(fd, rel=1e-7)


def elementwise_chain(x, y):
    return np.sum(np.sin(np.cos(np.exp(x)))) + np.sum((x * y - 2.0) ** 2) + np.dot(np.exp(x), y)


def test_hvp_through_elementwise_array_operations():
    x = np.linspace(0.1, 1.0, 6)
    y = np.cos(x)
    v = np.sin(np.arange(6.0))
    g = adjit.grad(elementwise_chain)
    h = 1e-5
    fd = (g(x + h * v, y) - g(x - h * v, y)) / (2 * h)
    np.testing.assert_allclose(adjit.hvp(elementwise_chain)(x, y, v), fd, rtol=1e-6, atol=1e-8)


def weighted_terms(x, a, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * y[i] * a + math.sin(y[i] * x[i])
    return s


def test_hvp_with_several_argnums_is_the_joint_hessian_product():
    """hvp(f, (0, 2))(x, a, y, vx, vy): the (x, y) blocks of the Hessian applied to
    (vx, vy), a held fixed; checked against central differences of the gradient."""
    rng = np.random.default_rng(3)
    x, y, vx, vy = (rng.standard_normal(5) for _ in range(4))
    a, va, eps = 0.7, 0.3, 1e-6
    g = adjit.grad(weighted_terms, argnums=(0, 2))
    hx, hy = adjit.hvp(weighted_terms, argnums=(0, 2))(x, a, y, vx, vy)
    plus, minus = g(x + eps * vx, a, y + eps * vy), g(x - eps * vx, a, y - eps * vy)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * eps), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hy, (plus[1] - minus[1]) / (2 * eps), rtol=1e-6, atol=1e-7)
    g3 = adjit.grad(weighted_terms, argnums=(0, 1, 2))
    h3 = adjit.hvp(weighted_terms, argnums=(0, 1, 2))(x, a, y, vx, va, vy)
    plus = g3(x + eps * vx, a + eps * va, y + eps * vy)
    minus = g3(x - eps * vx, a - eps * va, y - eps * vy)
    for got, p, m in zip(h3, plus, minus):
        np.testing.assert_allclose(got, (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                   rtol=1e-6, atol=1e-7)
    # a tuple of one argnum is a tuple of one block
    (hx_only,) = adjit.hvp(weighted_terms, argnums=(0,))(x, a, y, vx)
    np.testing.assert_allclose(hx_only, adjit.hvp(weighted_terms)(x, a, y, vx), rtol=1e-14)


def test_hvp_tangents_are_checked():
    x = np.ones(3)
    with pytest.raises(adjit.ArgumentError, match="'y'"):
        adjit.hvp(weighted_terms, argnums=(0, 2))(x, 0.5, x, x, np.ones((3, 1)))
    with pytest.raises(adjit.ArgumentError, match="argnums"):
        adjit.hvp(weighted_terms, argnums=(0, 1.5))


def test_hvp_seed_carries_no_tangent():
    """grad seeds its reverse pass with the constant 1.0: under jvp that seed is inactive,
    so the JVP of grad's body (which holds the reverse pass, its ``adjit_ybar`` renamed
    apart) computes no ``ybar%dot`` terms."""
    import re
    from adjit.transform import forward
    x = np.linspace(-1.0, 1.0, 6)
    adjit.hvp(rosenbrock)(x, x)
    g = adjit.grad(rosenbrock)
    programs = [p for p in forward._programs.values() if p.func is g]
    assert programs and all(p.active_args == (0,) for p in programs)
    text = programs[0].show()
    assert "adjit_ybar" in text and "%dot" in text
    assert not re.search(r"adjit_ybar\S*%dot", text)


@numba.njit
def _relu(z):
    return z * (z >= 0)


def small_mlp(W2, W1, Y, X):
    return np.sum((Y - W2 @ _relu(W1 @ X)) ** 2)


def test_hvp_through_matrix_products_and_array_helpers():
    """Forward-over-reverse through the reverse rules of ``@`` (shadow updates
    ``s += g @ b.T``) and an @njit helper returning an array (``s += ybar``): checked
    against central differences of the gradient (small step, away from relu's kinks)."""
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 5)),
            rng.standard_normal((3, 2)), rng.standard_normal((5, 2)))
    vs = tuple(rng.standard_normal(a.shape) for a in args)
    nums = (0, 1, 2, 3)
    hv = adjit.hvp(small_mlp, argnums=nums)(*args, *vs)
    g = adjit.grad(small_mlp, argnums=nums)
    eps = 1e-6
    plus = g(*[a + eps * v for a, v in zip(args, vs)])
    minus = g(*[a - eps * v for a, v in zip(args, vs)])
    for got, p, m in zip(hv, plus, minus):
        np.testing.assert_allclose(got, (p - m) / (2 * eps), rtol=1e-6, atol=1e-6)


def accumulate_in_place(x):
    y = np.zeros_like(x)
    y += x * x
    y -= 0.5
    y += x
    return np.sum(y * y)


def test_jvp_of_in_place_array_updates():
    """``a += b`` / ``a -= c`` on arrays are linear updates: their tangent is the same
    update on the tangents (and a scalar right-hand side has a zero tangent)."""
    x = np.array([0.3, -0.7, 1.2])
    value, tangent = adjit.jvp(accumulate_in_place)(x, np.ones(3))
    y = x * x - 0.5 + x
    assert value == pytest.approx(np.sum(y * y), rel=1e-14)
    assert tangent == pytest.approx(np.sum(2.0 * y * (2.0 * x + 1.0)), rel=1e-14)


def inactive_in_place(x):
    w = np.ones(3)
    w *= 2.0  # no tangent reaches w: copied as it is
    k = 3
    k *= 2
    return np.sum(w * x) * k


def test_jvp_copies_in_place_updates_without_tangents():
    x = np.array([0.3, -0.7, 1.2])
    value, tangent = adjit.jvp(inactive_in_place)(x, np.ones(3))
    assert value == pytest.approx(12.0 * np.sum(x), rel=1e-14)
    assert tangent == pytest.approx(36.0, rel=1e-14)


def test_gp_lml_benchmark_in_every_mode():
    # Cholesky, x[:, None] broadcasting and np.diag: the suite's gp_lml workload
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
    from bench.gp_lml import gp_lml, hand_grad
    from adjit.testing import check_grad, check_jvp
    x = 0.2 * np.arange(8.0)
    y = np.random.default_rng(0).standard_normal(8)
    grads = check_grad(gp_lml, x, y, 1.0, argnums=(0, 1, 2))
    for got, want in zip(grads, hand_grad(x, y, 1.0)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    check_jvp(gp_lml, x, y, 1.0)
    # its HVP works too (checked by hand); at over a minute of compilation it is left to
    # the parts it is made of: test_hvp[cholesky], test_hvp[diag] and the broadcasting tests


def _scaled_quartic(x, scale=3.0):
    return scale * np.sum(x ** 4) + np.sum(x[:-1] * x[1:])


def test_hessian_of_a_function_whose_other_parameters_have_defaults():
    """One required argument is what hessian needs; the others keep their defaults (it
    used to count every parameter and refuse)."""
    x = np.array([0.5, -1.0, 2.0])
    want = np.diag(36.0 * x ** 2) + np.eye(3, k=1) + np.eye(3, k=-1)
    np.testing.assert_allclose(adjit.hessian(_scaled_quartic)(x), want, rtol=1e-12)


def _sin_weighted(x):
    w = np.sin(x)  # one operation: not a fused loop (capture/fused_sums.py), scalar code
    return np.sum(w * w[0])


_hvp_of_sin_weighted = adjit.hvp(_sin_weighted)
_jvp_of_sin_weighted = adjit.jvp(_sin_weighted)


@pytest.mark.parametrize("inner", ["hvp", "jvp"])
def test_forward_mode_over_forward_mode_array_code_is_refused_in_the_users_terms(inner):
    """A third derivative (jvp over hvp) or jvp over jvp of array code reaches adjit's own
    forward-mode code for arrays, which has no rules of its own yet: the refusal names
    the user's function and line, and says what was missing, never silently wrong."""
    x, ones = np.linspace(0.1, 1.0, 4), np.ones(4)
    if inner == "hvp":
        outer = numba.njit(lambda x: np.sum(_hvp_of_sin_weighted(x, ones)))
    else:
        outer = numba.njit(lambda x: _jvp_of_sin_weighted(x, ones)[1])
    with pytest.raises(adjit.UnsupportedError) as caught:
        adjit.jvp(outer)(x, ones)
    message = str(caught.value)
    assert "forward-mode derivative of adjit's own forward-mode code" in message
    assert "in function '_sin_weighted'" in message
    # the line of the first array operation the outer forward mode meets
    line = "np.sum(w * w[0])" if inner == "hvp" else "w = np.sin(x)"
    assert line in message
    assert "tangent_like" in message  # what was missing, quoted as the detail


def test_a_held_hessian_follows_a_rebound_helper(tmp_path, monkeypatch):
    """``hessian(f)`` held across a rebind, called again from Python and requested anew,
    gives the new Hessian (its column loop and the overload inside it kept the first
    HVP's code compiled in)."""
    import sys
    import textwrap
    (tmp_path / "adjit_rebind_hessian.py").write_text(textwrap.dedent("""
        import math, numba

        @numba.njit
        def helper(a):
            return math.sin(a)

        def f(x):
            s = 0.0
            for v in x:
                s += helper(v)
            return s
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import adjit_rebind_hessian as mod
    x = np.array([0.3, -0.7, 1.1])
    held = adjit.hessian(mod.f)
    np.testing.assert_allclose(held(x), np.diag(-np.sin(x)), rtol=1e-12, atol=1e-15)
    mod.helper = numba.njit(lambda a: a ** 3)
    np.testing.assert_allclose(held(x), np.diag(6 * x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(adjit.hessian(mod.f)(x), np.diag(6 * x), rtol=1e-12,
                               atol=1e-15)
    sys.modules.pop("adjit_rebind_hessian")


def _element_loops(x):
    """``for v in x`` over elements (a slice, ``.flat``), a running product and a
    comprehension: each element's adjoint is added where the iterator stood."""
    s = 0.0
    for v in x:
        s += (v - 1.0) ** 2
    for v in x[1:]:
        s += math.sin(v) * v
    p = 1.0
    for v in x.flat:
        p *= v
    return s + p + sum([math.cos(v) for v in x])


def test_element_loops_at_points_where_partials_are_zero():
    """An element whose adjoint is exactly 0 but whose tangent is not (a minimum, a zero
    factor of a product) kept a zero Hessian row: the reverse of ``next`` skipped zero
    adjoints, a test that forward mode differentiated as it stood."""
    from adjit.testing import check_hvp
    for x in (np.array([1.0, 0.5, 2.0]), np.zeros(3), np.array([0.0, 0.5, 2.0])):
        check_hvp(_element_loops, x)
    x = np.array([1.0, 0.0, 2.0])  # (v - 1)^2 at v = 1, sin(v) v and cos(v) at 0
    h = np.diag([2.0 - math.cos(1.0), 2.0 + 2.0 - 1.0, 2.0 + 2 * math.cos(2.0) - 2.0 * math.sin(2.0)
                 - math.cos(2.0)])
    h += np.array([[0.0, 2.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # p = x0 x1 x2
    np.testing.assert_allclose(adjit.hessian(_element_loops)(x), h, rtol=1e-12, atol=1e-12)


def test_sinc_second_derivative_at_zero():
    """sinc''(0) = -pi^2/3: its partial was ``0 * x`` at 0, with no tangent."""
    assert np.isclose(adjit.hvp(lambda x: np.sinc(x))(0.0, 1.0), -math.pi ** 2 / 3, rtol=1e-14)
    np.testing.assert_allclose(adjit.hessian(lambda x: np.sum(np.sinc(x)))(np.zeros(2)),
                               -math.pi ** 2 / 3 * np.eye(2), rtol=1e-14)


def test_hvp_through_asarray_of_float32_weights_as_float64():
    # np.asarray(w, dtype=np.float64) of float32 w is a converting copy (x.astype)
    from corpus.float32 import X8, float32_weights_as_float64 as f
    x = X8.astype(np.float64) * 0.5
    v = np.linspace(0.5, 1.5, 8).astype(np.float32)
    h = adjit.hvp(f, 0)(X8, x, v)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, (2.0 - np.sin(X8.astype(np.float64)) * x) * v, rtol=1e-5)


def test_hessian_called_from_njit_with_too_many_arguments_is_an_argument_error():
    """The binding check of transforms called from @njit code reached hessian's column
    loop too, whose dispatcher had no message for it (an AttributeError)."""
    h = adjit.hessian(_sin_x_squared)

    @numba.njit
    def two(x):
        return h(x, x)

    @numba.njit
    def one(x):
        return h(x)
    x = np.array([0.3, -0.8])
    np.testing.assert_allclose(one(x), adjit.hessian(_sin_x_squared)(x), rtol=1e-14)
    with pytest.raises(adjit.ArgumentError, match=r"takes \(x\); too many"):
        two(x)
