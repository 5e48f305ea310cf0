"""A flat tuple of floats and float arrays as a differentiated argument (``params = (W,
b)``): ``grad`` and ``vjp`` return a tuple of the same structure, as JAX does, and
``jvp`` and ``hvp`` take a tangent of that structure. Checked against closed forms and
finite differences."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp, check_vjp


def layer_loss(params, x):
    W, b = params
    return np.sum(np.tanh(W @ x + b) ** 2)


def scale_and_shift(params, x):
    a, c = params
    return a * a * x + c * a


def weights_and_scale(params, x):
    W, s = params
    return np.sum(np.sin(W * s) * x)


P = (np.array([[0.6, 0.1], [-0.2, 0.4]]), np.array([0.1, -0.2]))
X = np.array([1.0, 0.5])


def test_grad_of_a_tuple_of_arrays_is_a_tuple_of_the_closed_forms():
    gW, gb = adjit.grad(layer_loss)(P, X)
    t = np.tanh(P[0] @ X + P[1])
    dz = 2.0 * t * (1.0 - t * t)
    np.testing.assert_allclose(gW, np.outer(dz, X), rtol=1e-13)
    np.testing.assert_allclose(gb, dz, rtol=1e-13)
    value, (vW, vb) = adjit.value_and_grad(layer_loss)(P, X)
    assert value == pytest.approx(np.sum(t ** 2), rel=1e-14)
    np.testing.assert_allclose(vW, gW, rtol=1e-15)


def test_grad_of_a_tuple_of_floats_and_of_a_mixed_tuple():
    assert adjit.grad(scale_and_shift)((0.3, 0.7), 2.0) == pytest.approx((2 * 0.3 * 2.0 + 0.7,
                                                                          0.3), rel=1e-14)
    W, s = np.array([0.3, 0.4]), 1.5
    gW, gs = adjit.grad(weights_and_scale)((W, s), X)
    np.testing.assert_allclose(gW, np.cos(W * s) * s * X, rtol=1e-13)
    assert gs == pytest.approx(np.sum(np.cos(W * s) * W * X), rel=1e-13)
    # with the other argument too: a tuple of (the tuple's gradients, x's gradient)
    (g_params, gx) = adjit.grad(weights_and_scale, (0, 1))((W, s), X)
    np.testing.assert_allclose(g_params[0], gW, rtol=1e-15)
    np.testing.assert_allclose(gx, np.sin(W * s), rtol=1e-14)


def test_hvp_of_a_tuple_argument_against_the_closed_form():
    # d2/da2 = 2x, d2/dadc = 1, d2/dc2 = 0
    hv = adjit.hvp(scale_and_shift)((0.3, 0.7), 2.0, (1.0, 0.5))
    assert hv == pytest.approx((2 * 2.0 * 1.0 + 0.5, 1.0), rel=1e-14)


@pytest.mark.parametrize("f, args", [(layer_loss, (P, X)),
                                     (scale_and_shift, ((0.3, 0.7), 2.0)),
                                     (weights_and_scale, ((np.array([0.3, 0.4]), 1.5), X))],
                         ids=["arrays", "floats", "mixed"])
def test_tuple_arguments_against_finite_differences(f, args):
    check_grad(f, *args)
    check_vjp(f, *args)
    check_jvp(f, *args)
    check_hvp(f, *args)


def test_vjp_of_a_tuple_argument_is_a_tuple_of_cotangents():
    value, (ct, cx) = adjit.vjp(scale_and_shift)((0.3, 0.7), 2.0, 0.5)
    assert value == pytest.approx(0.3 * 0.3 * 2.0 + 0.7 * 0.3, rel=1e-15)
    assert ct == pytest.approx((0.5 * (2 * 0.3 * 2.0 + 0.7), 0.5 * 0.3), rel=1e-14)
    assert cx == pytest.approx(0.5 * 0.3 * 0.3, rel=1e-14)
    W, s = np.array([0.3, 0.4]), 1.5
    _, ((cW, cs), cX) = adjit.vjp(weights_and_scale)((W, s), X, 2.0)
    gW, gs = adjit.grad(weights_and_scale)((W, s), X)
    np.testing.assert_allclose(cW, 2.0 * gW, rtol=1e-14)
    assert cs == pytest.approx(2.0 * gs, rel=1e-14)
    # forward over it: the tangent of (a^2 x + c a)'s cotangents (2 a x + c, a) along
    # (da, dc) = (1, 0) is (2 x, 1), times ybar
    _, (_, ((dca, dcc), _)) = adjit.jvp(adjit.vjp(scale_and_shift))(
        (0.3, 0.7), 2.0, 0.5, (1.0, 0.0), 0.0, 0.0)
    assert (dca, dcc) == pytest.approx((0.5 * 2 * 2.0, 0.5), rel=1e-14)


def test_jvp_of_a_tuple_argument_against_the_closed_forms():
    # d/da (a^2 x + c a) = 2 a x + c, d/dc = a, d/dx = a^2
    value, tangent = adjit.jvp(scale_and_shift)((0.3, 0.7), 2.0, (1.0, 0.5), 0.25)
    assert value == pytest.approx(0.3 * 0.3 * 2.0 + 0.7 * 0.3, rel=1e-15)
    assert tangent == pytest.approx((2 * 0.3 * 2.0 + 0.7) * 1.0 + 0.3 * 0.5
                                    + 0.3 * 0.3 * 0.25, rel=1e-14)
    # integer tangents are converted to the items' float type, as for a float argument
    _, from_ints = adjit.jvp(scale_and_shift)((0.3, 0.7), 2.0, (1, 0), 0)
    assert from_ints == pytest.approx(2 * 0.3 * 2.0 + 0.7, rel=1e-14)
    # a tuple of arrays: the tangent of layer_loss along (dW, db) is its gradient's
    # inner product with them
    dW, db = np.array([[0.2, -0.1], [0.3, 0.5]]), np.array([1.0, -2.0])
    _, t = adjit.jvp(layer_loss)(P, X, (dW, db), np.zeros(2))
    gW, gb = adjit.grad(layer_loss)(P, X)
    assert t == pytest.approx(np.sum(gW * dW) + np.sum(gb * db), rel=1e-13)
    # given the float arguments' tangents only, the tuple is held fixed (a workspace)
    _, fixed = adjit.jvp(scale_and_shift)((0.3, 0.7), 2.0, 0.25)
    assert fixed == pytest.approx(0.3 * 0.3 * 0.25, rel=1e-14)
    # jvp of the gradient is the hvp
    _, hv = adjit.jvp(adjit.grad(scale_and_shift))((0.3, 0.7), 2.0, (1.0, 0.5), 0.0)
    assert hv == pytest.approx((2 * 2.0 * 1.0 + 0.5, 1.0), rel=1e-14)


@numba.njit
def _scaled_in_place(state, k):
    x, v = state
    x *= k
    return np.sum(x * v)


def _updates_a_tuple_item(state, k):
    x, v = state
    s = _scaled_in_place((x, v), k)
    return s + np.sum(x)


def test_jvp_of_a_tuple_whose_array_is_written_leaves_the_callers_tangent():
    x, v = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    dx, dv = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    given = (dx.copy(), dv.copy())
    value, tangent = adjit.jvp(_updates_a_tuple_item)((x.copy(), v), 3.0, given, 0.0)
    # f = k sum(x v) + k sum(x): d = k (dx . v + x . dv) + k sum(dx)
    assert value == pytest.approx(3.0 * np.sum(x * v) + 3.0 * np.sum(x), rel=1e-15)
    assert tangent == pytest.approx(3.0 * (dx @ v + x @ dv) + 3.0 * np.sum(dx), rel=1e-14)
    np.testing.assert_array_equal(given[0], dx)
    check_jvp(_updates_a_tuple_item, (x.copy(), v), 3.0)


def test_jvp_of_a_nested_tuple_is_refused_by_name():
    def nested(p):
        (a, b), c = p
        return a * b * c
    with pytest.raises(adjit.ArgumentError, match="'p'"):
        adjit.jvp(nested)(((1.0, 2.0), 3.0), ((1.0, 0.0), 0.0))


def test_a_tangent_of_another_structure_is_refused():
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params' must match"):
        adjit.hvp(layer_loss)(P, X, np.ones(2))
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params' must match"):
        adjit.jvp(layer_loss)(P, X, np.ones(2), np.ones(2))
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params\\[1\\]' must have"):
        adjit.jvp(layer_loss)(P, X, (np.ones((2, 2)), np.ones(3)), np.ones(2))
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params\\[1\\]' must have"):
        adjit.hvp(layer_loss)(P, X, (np.ones((2, 2)), np.ones(3)))
