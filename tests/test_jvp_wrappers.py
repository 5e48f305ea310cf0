"""The IR of jvp(jvp(f)) (``adjit/jvp_wrappers.py``): second derivatives against closed
forms and central differences, its argument errors, and the refusals of what it does not
take (a third level, a *args function)."""
import math

import numpy as np
import pytest

import adjit


def _sqrt(x):
    return math.sqrt(x)


def _sin_times_square(x, y):
    return math.sin(x) * y * y


def test_direct_nested_jvp_gives_second_derivatives():
    """jvp(jvp(f)) was refused (jvp(f) takes *args); it differentiates f's JVP program
    now, and returns JAX's ((f, df), (f', df')). Closed forms of f = sin(x) y^2."""
    jj = adjit.jvp(adjit.jvp(_sin_times_square))
    x, y = 0.3, 1.7
    (value, dx), (tx, dxx) = jj(x, y, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    assert value == pytest.approx(math.sin(x) * y * y, rel=1e-14)
    assert dx == pytest.approx(math.cos(x) * y * y, rel=1e-14) and tx == pytest.approx(dx)
    assert dxx == pytest.approx(-math.sin(x) * y * y, rel=1e-14)
    assert jj(x, y, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0)[1][1] == pytest.approx(
        2.0 * y * math.cos(x), rel=1e-14)  # d2f / dx dy
    # the inner tangent's shape is checked as jvp(f) checks it
    jg = adjit.jvp(adjit.jvp(lambda a: np.sum(np.sin(a) * a)))
    a = np.array([0.2, 0.5, -0.3])
    assert jg(a, np.ones(3), np.ones(3), np.zeros(3))[1][1] == pytest.approx(
        np.sum(2.0 * np.cos(a) - a * np.sin(a)), rel=1e-13)
    with pytest.raises(adjit.ArgumentError, match=r"^jvp\(jvp\(.*<lambda>\)\): the "
                       "tangent of 'a' must have the shape"):
        jg(a, np.ones(2), np.ones(3), np.zeros(3))
    # the outer tangent of the inner one, named as the user knows it (not adjit's name)
    with pytest.raises(adjit.ArgumentError, match="tangent of 'da' must have the shape"):
        jg(a, np.ones(3), np.ones(3), np.zeros(2))
    with pytest.raises(adjit.ArgumentError, match=r"jvp\(jvp\(_sin_times_square\)\) takes"):
        jj(x, y, 1.0)


def _tuple_layer(p, x):
    W, b = p
    return np.sum(np.tanh(W * x + b)) * x


def test_direct_nested_jvp_reads_tuple_tangents_by_their_types():
    """(P, x, dP, dx, ex, edx): two readings of six values fit the count (the tuple held
    fixed at the inner level, or given dP); the one whose inner tangents have their
    arguments' types is taken (the first by count was, and refused dP as x's tangent).
    Checked against central differences of jvp along the outer tangents."""
    P, dP = (np.array([0.5, -0.3]), 0.2), (np.array([1.0, 0.0]), 0.5)
    jt = adjit.jvp(_tuple_layer)
    h = 1e-6
    plus, minus = jt(P, 0.7 + h * 0.4, dP, 0.2 - h * 0.5), jt(P, 0.7 - h * 0.4, dP, 0.2 + h * 0.5)
    inner, outer = adjit.jvp(jt)(P, 0.7, dP, 0.2, 0.4, -0.5)
    np.testing.assert_allclose(inner, jt(P, 0.7, dP, 0.2), rtol=1e-14)
    np.testing.assert_allclose(outer, [(plus[k] - minus[k]) / (2 * h) for k in (0, 1)],
                               rtol=1e-7)


def test_a_star_args_function_is_refused_with_advice_about_itself():
    """The advice was about nesting jvp, whatever the function was."""
    with pytest.raises(adjit.ArgumentError, match=r"takes \*args.*one parameter per argument"):
        adjit.grad(lambda *a: a[0] * a[1])


def test_a_third_level_of_jvp_is_refused_with_advice():
    """The advice, followed as written, gives the second derivative (it once said to call
    ``adjit.jvp(f)`` inside the wrapper, which compiled code cannot do)."""
    with pytest.raises(adjit.ArgumentError, match="wrap it in a function of named") as info:
        adjit.jvp(adjit.jvp(adjit.jvp(_sqrt)))
    assert "jf = adjit.jvp(f); def df(x): return jf(x, 1.0)[1]" in str(info.value)
    jf = adjit.jvp(_sqrt)

    def df(x):
        return jf(x, 1.0)[1]
    assert adjit.jvp(df)(4.0, 1.0)[1] == pytest.approx(-0.25 * 4.0 ** -1.5, rel=1e-12)
