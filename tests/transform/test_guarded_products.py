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
