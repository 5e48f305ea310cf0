"""A flat tuple of floats and float arrays as a differentiated argument (``params = (W,
b)``): ``grad`` returns a tuple of the same structure, as JAX does, and ``hvp`` takes a
tangent of that structure. Checked against closed forms and finite differences."""
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp


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
    check_hvp(f, *args)


def test_a_tangent_of_another_structure_is_refused():
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params' must match"):
        adjit.hvp(layer_loss)(P, X, np.ones(2))
    with pytest.raises(adjit.ArgumentError, match="tangent of 'params\\[1\\]' must have"):
        adjit.hvp(layer_loss)(P, X, (np.ones((2, 2)), np.ones(3)))
