"""How each ``g * d`` of a derivative is emitted (``transform/partials.py``): guarded in
the select form where the primal loops, in the NaN-branch form in straight-line code,
and plainly where ``d`` is a finite nonzero constant. Every choice keeps the guard's
values: a zero seed never turns an infinite partial into NaN, in every mode."""
import math

import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


def scaled_square(x):
    return 100.0 * x * x + 0.5 * x


def scaled_loop(x, n):
    s = 0.0
    for i in range(n):
        a = 3 * x - i
        s += 100.0 * a * a
    return s


def discarded_infinity(x, y):
    """``x * y`` with y = inf is discarded by the branch: x's derivative is 2x."""
    t = x * y
    if t > 1e300:
        t = 0.0
    return t + x * x


def discarded_infinity_loop(x, y, n):
    s = 0.0
    for i in range(n):
        t = x * y
        if t > 1e300:
            t = 0.0
        s += t + x * x
    return s


@pytest.mark.parametrize("f, args", [(scaled_square, (0.7,)), (scaled_loop, (0.3, 4))])
def test_constant_partials_multiply_plainly_in_every_mode(f, args, capsys):
    check_grad(f, *args)
    check_jvp(f, *args)
    check_hvp(f, *args)
    adjit.show(adjit.grad(f), *args)
    text = capsys.readouterr().out
    reverse = text[text.index("---- reverse pass"):]
    # 100.0 * a: the adjoint of a is a plain product with the constant
    assert "%bar * $const" in reverse, reverse


@pytest.mark.parametrize("f, args", [(discarded_infinity, (1.5, math.inf)),
                                     (discarded_infinity_loop, (1.5, math.inf, 3))])
def test_a_zero_seed_times_infinity_contributes_nothing(f, args):
    """Straight-line code (NaN-branch form) and a loop (select form) alike."""
    n = args[2] if len(args) > 2 else 1
    assert adjit.grad(f)(*args) == pytest.approx(2 * 1.5 * n)
    value, tangent = adjit.jvp(f)(*args, 1.0, 0.0)
    assert tangent == pytest.approx(2 * 1.5 * n)
    assert adjit.hvp(f)(*args, 1.0) == pytest.approx(2.0 * n)


def test_forms_follow_the_primal_loops(capsys):
    adjit.show(adjit.grad(discarded_infinity), 1.5, 2.0)
    straight = capsys.readouterr().out
    adjit.show(adjit.grad(discarded_infinity_loop), 1.5, 2.0, 3)
    looped = capsys.readouterr().out
    assert "adjoint_product_chain" in straight
    assert "adjoint_product_chain" not in looped[looped.index("---- reverse pass"):]
    assert "adjoint_product" in looped
    # y = 2: t = 3 is kept, so d/dx of 3 * (x * y + x * x) is 3 * (y + 2 x) = 15
    assert adjit.grad(discarded_infinity_loop)(1.5, 2.0, 3) == pytest.approx(15.0)


def product_loop(x, y, n):
    """Tangents of two-operand products in a loop: forward mode sums each pair of
    products with one NaN check (``adjoint_product_sum``)."""
    s = 0.0
    for i in range(n):
        s += x * y + math.sin(x * y) * x
    return s


def elementwise_loop(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i] * 2.0
    return out.sum()


def long_block(x):
    a = x  # 56 dependent products, more statements than a helper has
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01; a = a * x * 1.01
    return a


def jvp_form(f, *args):
    """The guarded product forward mode picks for f's own code."""
    import numba
    from adjit.capture.typed_ir import capture
    from adjit.transform.forward import ForwardContext
    argtypes = tuple(numba.typeof(a) for a in args)
    return ForwardContext(capture(f, argtypes), (0,)).product.__name__


def test_forward_mode_forms_follow_the_code(capsys):
    """jvp of the user's code: a float reduction loop and long straight-line code check
    for NaN with the guard in a cold block, two products at a time
    (``adjoint_product_sum``); an elementwise loop (it vectorises) and a short function
    (a helper that such a loop inlines) keep the NaN-select form; forward mode over a
    straight-line reverse pass (hvp) keeps the reverse pass's form."""
    import numpy as np
    assert jvp_form(product_loop, 0.7, 1.3, 3) == "adjoint_product_branch"
    assert jvp_form(long_block, 0.9) == "adjoint_product_branch"
    assert jvp_form(elementwise_loop, np.ones(3), np.ones(3)) == "adjoint_product_chain"
    assert jvp_form(discarded_infinity, 1.5, 2.0) == "adjoint_product_chain"
    adjit.show(adjit.jvp(product_loop), 0.7, 1.3, 3)
    assert "adjoint_product_sum" in capsys.readouterr().out
    from adjit.transform.forward import ForwardContext, derive_jvp
    from numba.core import types
    grad_program = derive_jvp(adjit.grad(discarded_infinity),
                              (types.float64, types.float64), (0, 1))
    assert ForwardContext(grad_program.typed, (0, 1)).product.__name__ == (
        "adjoint_product_chain")
    # closed forms: d/dx = n (y + sin(xy) + x y cos(xy)), d/dy = n (x + x^2 cos(xy))
    x, y, n = 0.7, 1.3, 3
    _, tx = adjit.jvp(product_loop)(x, y, n, 1.0, 0.0)
    assert tx == pytest.approx(n * (y + math.sin(x * y) + x * y * math.cos(x * y)))
    _, ty = adjit.jvp(product_loop)(x, y, n, 0.0, 1.0)
    assert ty == pytest.approx(n * (x + x * x * math.cos(x * y)))
    check_jvp(product_loop, x, y, n)
    check_hvp(product_loop, x, y, n)
    _, t = adjit.jvp(long_block)(0.9, 1.0)
    assert t == pytest.approx(29 * 1.01 ** 28 * 0.9 ** 28, rel=1e-12)
    check_hvp(long_block, 0.9)


def test_hvp_over_a_reverse_loop_checks_for_nan_by_branch():
    """Forward mode over a gradient's loops: the reverse loop's select-checked products
    become branch-checked ones, each tangent's two products one ``adjoint_product_sum``
    (``partials.generated_product_form``, ``branch_checked``), and a
    zero seed times infinity still contributes nothing (the primal loop's y = inf is
    discarded by the branch); the Hessian against its closed form and finite
    differences."""
    from numba.core import types
    from adjit.transform.forward import derive_jvp
    import re
    floats = (types.float64, types.float64, types.intp)
    for f in (discarded_infinity_loop, product_loop):
        text = derive_jvp(adjit.grad(f), floats, (0, 1)).show()
        calls = set(re.findall(r"call \$(adjoint_product\w*?)(?:%\d+)?\(", text))
        assert calls == ({"adjoint_product_branch", "adjoint_product_sum"}
                         if f is product_loop else {"adjoint_product_branch"}), calls
    assert adjit.hvp(discarded_infinity_loop)(1.5, math.inf, 3, 1.0) == 6.0
    # d2/dx2 of n (x y + x sin(x y))
    x, y, n = 0.7, 1.3, 3
    assert adjit.hvp(product_loop)(x, y, n, 1.0) == pytest.approx(
        n * (2 * y * math.cos(x * y) - x * y * y * math.sin(x * y)), rel=1e-12)
    check_hvp(product_loop, x, y, n)


def test_a_pair_sum_guards_a_zero_tangent_times_infinity():
    """x * y with y = inf and y's tangent 0: the term x%dot * y is NaN unless guarded; its
    pair x * y%dot is finite. The branch taken on NaN recomputes both guarded."""
    s, t = adjit.jvp(discarded_infinity_loop)(1.5, math.inf, 3, 1.0, 0.0)
    assert t == pytest.approx(2 * 1.5 * 3)
    # a genuine NaN stays NaN: a NaN tangent on a nonzero partial
    _, t = adjit.jvp(product_loop)(0.7, 1.3, 2, math.nan, 0.0)
    assert math.isnan(t)
    # both products NaN-free but inf - inf: the guarded sum gives NaN too, as it must
    _, t = adjit.jvp(product_loop)(1.0, 1.0, 1, math.inf, -math.inf)
    assert math.isnan(t)


def inner_product(x, y):
    return x * y


def inner_product_loop(x, y, n):
    s = 0.0
    for i in range(n):
        s += x * y + math.sin(x * y)
    return s


def test_forward_mode_over_a_jvp_program_names_its_tangents_apart():
    """jvp of code that calls adjit.jvp: the outer tangent of the program's ``x`` must not
    be the program's own ``x%dot`` (with inner tangents other than the outer ones, that
    collision gave 1.0 instead of 0.5 for d/dx of x%dot * y + x * y%dot)."""
    import numba
    jp, jl = adjit.jvp(inner_product), adjit.jvp(inner_product_loop)

    @numba.njit
    def outer(x, y):
        return jp(x, y, 1.0, 0.5)[1]  # y + 0.5 x

    @numba.njit
    def outer_loop(x, y):
        return jl(x, y, 3, 1.0, 0.5)[1]

    x, y = 0.7, 1.3
    assert adjit.jvp(outer)(x, y, 1.0, 0.0)[1] == pytest.approx(0.5)
    assert adjit.jvp(outer)(x, y, 0.0, 1.0)[1] == pytest.approx(1.0)
    # outer_loop = 3 (y + y cos(xy) + 0.5 (x + x cos(xy))); its x-derivative:
    u = x * y
    expected = 3 * (-y * y * math.sin(u) + 0.5 * (1 + math.cos(u) - u * math.sin(u)))
    assert adjit.jvp(outer_loop)(x, y, 1.0, 0.0)[1] == pytest.approx(expected, rel=1e-12)
    check_jvp(outer_loop, x, y)


def long_discarded_infinity(x, y):
    """A loop-free function long enough that forward mode over its reverse sweep checks
    products in blocks of their own (``ForwardContext.chain_as_branch``), with
    ``x * y`` (y = inf) discarded by a branch."""
    t = x * y
    if t > 1e300:
        t = 0.0
    a = x * x
    b = a * x + 0.5 * a
    c = b * a - x
    d = c * c + b
    e = d * x - a * b
    f = e * 0.25 + d * c
    g = f * x + e
    h = g * g - f * a
    return t + h * 0.001 + b


def test_hvp_over_a_long_reverse_sweep_keeps_the_guard():
    """hvp = d/dx of grad, from finite differences of the gradient, and finite: the
    zero seed of the discarded ``x * inf`` contributes nothing to the Hessian either."""
    check_grad(long_discarded_infinity, 0.7, math.inf)
    check_hvp(long_discarded_infinity, 0.7, math.inf)
    value = adjit.hvp(long_discarded_infinity)(0.7, math.inf, 1.0)
    assert math.isfinite(value)
    # jvp of grad returns the gradient too: the reverse sweep's own products, redone in
    # forward mode, keep their guard
    grad, hvp = adjit.jvp(adjit.grad(long_discarded_infinity))(0.7, math.inf, 1.0, 0.0)
    assert grad == pytest.approx(adjit.grad(long_discarded_infinity)(0.7, math.inf))
    assert hvp == pytest.approx(value)


def squares(x, y):
    d = x - y
    e = x  # a copy: e * x is a square
    return d * d + e * x + math.sin(d) * d


def loop_carried_products(x, n):
    """``a * b`` where ``b`` copies ``a`` before ``a`` is reassigned: not a square."""
    a = x
    s = 0.0
    for i in range(n):
        b = a
        a = a * 1.5 + 0.1
        s += a * b + b * b
    return s


def test_a_square_is_one_product_in_every_mode(capsys):
    """``x * x`` (one variable, or a copy of it) is differentiated as ``g * 2x``: one
    guarded product where there were two."""
    x, y = 0.7, -0.4
    d = x - y
    want_x = 2 * d + 2 * x + math.cos(d) * d + math.sin(d)
    assert adjit.grad(squares)(x, y) == pytest.approx(want_x, rel=1e-14)
    _, t = adjit.jvp(squares)(x, y, 1.0, 0.0)
    assert t == pytest.approx(want_x, rel=1e-14)
    # d2/dx2 = 2 + 2 + 2 cos d - d sin d
    assert adjit.hvp(squares)(x, y, 1.0) == pytest.approx(
        4 + 2 * math.cos(d) - d * math.sin(d), rel=1e-13)
    for check in (check_grad, check_jvp, check_hvp):
        check(squares, x, y)
        check(loop_carried_products, 0.3, 4)
    adjit.show(adjit.grad(squares), x, y)
    reverse = capsys.readouterr().out.split("---- reverse pass")[1]
    # one product per square, one pair (both products, one NaN check) for sin(d) * d,
    # one for sin's partial
    assert reverse.count("= call $adjoint_product") == 2 + 1 + 1, reverse
    assert reverse.count("= call $adjoint_product_pair") == 1, reverse
    assert "= e + e" in reverse and "= d + d" in reverse, reverse
    # the guard holds: a zero seed against an infinite square
    assert adjit.grad(discarded_infinity)(1.5, math.inf) == pytest.approx(3.0)


def test_loop_carried_copy_is_not_a_square():
    # s = sum a_k b_k + b_k^2 with b_k = a_{k-1}, a_k = 1.5 a_{k-1} + 0.1: the exact
    # derivative by forward substitution
    x, n = 0.3, 4
    a, da, ds = x, 1.0, 0.0
    for _ in range(n):
        b, db = a, da
        a, da = a * 1.5 + 0.1, 1.5 * da
        ds += da * b + a * db + 2 * b * db
    assert adjit.grad(loop_carried_products)(x, n) == pytest.approx(ds, rel=1e-14)


def kinetic_energy(v, m):
    return 0.5 * m * v * v + 100.0 * v * v


def test_a_scaled_square_is_one_product_when_its_scale_is_constant(capsys):
    """``k * x * x`` is ``(k x) x``: with ``k`` not differentiated, its derivative is one
    product ``2 (k x) dx``; with ``k`` differentiated (``m`` below) the usual two."""
    v, m = 1.3, 0.8
    assert adjit.grad(kinetic_energy)(v, m) == pytest.approx(m * v + 200.0 * v, rel=1e-14)
    dv, dm = adjit.grad(kinetic_energy, argnums=(0, 1))(v, m)
    assert (dv, dm) == (pytest.approx(m * v + 200.0 * v, rel=1e-14),
                        pytest.approx(0.5 * v * v, rel=1e-14))
    assert adjit.jvp(kinetic_energy)(v, m, 1.0, 0.0)[1] == pytest.approx(m * v + 200 * v,
                                                                         rel=1e-14)
    assert adjit.jvp(kinetic_energy)(v, m, 0.0, 1.0)[1] == pytest.approx(0.5 * v * v,
                                                                         rel=1e-14)
    assert adjit.hvp(kinetic_energy)(v, m, 1.0) == pytest.approx(m + 200.0, rel=1e-14)
    assert adjit.hvp(kinetic_energy, argnums=(0, 1))(v, m, 1.0, 1.0) == (
        pytest.approx(m + 200.0 + v, rel=1e-14), pytest.approx(v, rel=1e-14))
    for check in (check_grad, check_jvp, check_hvp):
        check(kinetic_energy, v, m)
    adjit.show(adjit.grad(kinetic_energy), v, m)
    reverse = capsys.readouterr().out.split("---- reverse pass")[1]
    # one product per scaled square, and 0.5 m's own into v (its seed stays zero: the
    # square's product went to v directly); without the rewrite there were five
    assert reverse.count("= call $adjoint_product") == 3, reverse


def product(x, y):
    return x * y


def test_paired_products_keep_each_guard_in_every_mode(capsys):
    """The two products of ``x * y`` with both operands differentiated are one call with
    one NaN check (``adjoint_product_pair``). Each keeps its own guard: a zero seed
    against inf contributes nothing, and a NaN in one product leaves the other as it is."""
    grad = adjit.grad(discarded_infinity, argnums=(0, 1))
    assert grad(1.5, math.inf) == (pytest.approx(3.0), 0.0)
    assert grad(1.5, 2.0) == (pytest.approx(2.0 + 3.0), pytest.approx(1.5))
    # d/dx of the gradient (x's second derivative 2; y's gradient stays 0)
    assert adjit.jvp(grad)(1.5, math.inf, 1.0, 0.0)[1] == (pytest.approx(2.0), 0.0)
    assert adjit.hvp(discarded_infinity, argnums=(0, 1))(1.5, math.inf, 1.0, 0.0) == (
        pytest.approx(2.0), 0.0)
    long_grad = adjit.grad(long_discarded_infinity, argnums=(0, 1))
    gx, gy = long_grad(0.7, math.inf)
    assert gx == pytest.approx(adjit.grad(long_discarded_infinity)(0.7, math.inf))
    assert gy == 0.0
    hx, hy = adjit.jvp(long_grad)(0.7, math.inf, 1.0, 0.0)[1]
    assert hx == pytest.approx(adjit.jvp(adjit.grad(long_discarded_infinity))(
        0.7, math.inf, 1.0, 0.0)[1]) and hy == 0.0
    # a NaN product beside a finite one
    gx, gy = adjit.grad(product, argnums=(0, 1))(0.7, math.nan)
    assert math.isnan(gx) and gy == pytest.approx(0.7)
    # the gradient (y, x) along (0, 1) and (1, 0); a zero tangent against the NaN y
    # contributes nothing
    along = adjit.jvp(adjit.grad(product, argnums=(0, 1)))
    assert along(0.7, math.nan, 0.0, 1.0)[1] == (1.0, 0.0)
    assert along(0.7, math.nan, 1.0, 0.0)[1] == (0.0, 1.0)
    adjit.show(adjit.grad(product, argnums=(0, 1)), 0.7, 0.2)
    assert "adjoint_product_pair" in capsys.readouterr().out.split("---- reverse pass")[1]
    for check in (check_grad, check_jvp, check_hvp):
        check(product, 0.7, -1.3, argnums=(0, 1)) if check is not check_jvp else check(
            product, 0.7, -1.3)
