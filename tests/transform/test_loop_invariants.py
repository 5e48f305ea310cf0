"""Numbers computed before a loop and read in it are saved once, at the loop's exit, not
with every iteration (``transform/reverse/loop_invariants.py``); gradients, JVPs and
HVPs against finite differences and closed forms."""
import math

import numpy as np
import pytest
from numba.core import types

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp
from adjit.transform.reverse.program import derive

X = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 0.6, 1.3])
VEC_W = (types.float64[::1], types.float64)


def scaled_squares(x, w):
    """a = 2 sin(w) is read by every iteration."""
    a = math.sin(w) * 2.0
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] * x[i]
    return s


def nested(x, w):
    """c (before both loops) is invariant in both; d (outer body) in the inner loop."""
    c = math.exp(0.1 * w)
    s = 0.0
    for i in range(x.shape[0]):
        d = math.sin(x[i] * c)
        for j in range(i + 1):
            s += d * c * x[j]
    return s


def with_break(x, w):
    """A loop left by a break or by running out: the exit has two predecessors."""
    a = math.cos(w)
    s = 0.0
    for i in range(x.shape[0]):
        if s > 3.0:
            break
        s += a * x[i] * x[i]
    return s


def while_loop(x, w):
    """A while loop reading an invariant and a loop-carried value."""
    a = math.tanh(w)
    s, i = 0.0, 0
    while i < x.shape[0]:
        s = s * a + math.sin(x[i])
        i += 1
    return s


def _saved_in_loops(fn):
    """The float names a loop block's record holds, over the blocks in loops."""
    from numba.core.analysis import compute_cfg_from_blocks
    ctx, rev = derive(fn, VEC_W, (0, 1)).analyse()
    in_loops = set().union(*(lp.body for lp in
                             compute_cfg_from_blocks(ctx.blocks).loops().values()))
    return {name for label in in_loops for name in rev.records[label]
            if isinstance(ctx.typeof(name), types.Float)}, rev


@pytest.mark.parametrize("fn", [scaled_squares, nested, with_break, while_loop])
def test_gradients_with_invariants_saved_once(fn):
    check_grad(fn, X, 0.7)
    check_jvp(fn, X, 0.7)
    check_hvp(fn, X, 0.7)


def test_a_loop_body_pushes_no_invariant():
    """scaled_squares' loop pushes nothing per iteration: ``sin(w)`` goes once into the
    exit's record, and ``a * x[i]`` is recomputed from it; closed forms."""
    saved, rev = _saved_in_loops(scaled_squares)
    assert saved == set()
    assert any("call" in name for names in rev.records.values() for name in names)
    gx, gw = adjit.grad(scaled_squares, argnums=(0, 1))(X, 0.7)
    assert np.allclose(gx, 4.0 * math.sin(0.7) * X, rtol=1e-14, atol=0)
    assert gw == pytest.approx(2.0 * math.cos(0.7) * np.sum(X * X), rel=1e-14)
    hw = adjit.hvp(scaled_squares, argnums=1)(X, 0.7, 1.0)
    assert hw == pytest.approx(-2.0 * math.sin(0.7) * np.sum(X * X), rel=1e-13)


def test_nested_loops_save_each_value_outside_the_loops_it_is_invariant_in():
    """c leaves both loops; d, made in the outer body, leaves the inner loop only."""
    saved, rev = _saved_in_loops(nested)
    assert not any(name.startswith("c") for name in saved), saved
    assert any(name.startswith("d") for name in saved), saved


def test_a_value_changed_by_the_loop_is_saved_per_iteration():
    """while_loop's running ``s`` is read by each iteration's adjoint and saved with it;
    ``tanh(w)`` once."""
    saved, rev = _saved_in_loops(while_loop)
    assert any(name.startswith("s") for name in saved), saved
    assert not any(name.startswith("a") or "call" in name for name in saved), saved


def rescaled_each_round(x, w):
    """v changes between rounds of the outer loop (a phi in its header) and is read by
    the inner loop: invariant in the inner loop, saved at the inner loop's exit each
    round, with the value that round read."""
    v = w
    s = 0.0
    for k in range(3):
        for j in range(x.shape[0]):
            s += v * x[j] * x[j]
        v = v * 0.5 + 0.1 * math.sin(s)
    return s


def test_a_value_an_outer_loop_changes_is_saved_per_round():
    check_grad(rescaled_each_round, X, 0.7)
    check_jvp(rescaled_each_round, X, 0.7)
    check_hvp(rescaled_each_round, X, 0.7)
