"""Floats that only steer control flow (``transform/control_only.py``) carry no derivative
in either mode, so a call with no rule there is computed, not refused; every gradient is
checked against finite differences in grad, jvp and hvp."""
import numba
import numpy as np
import pytest

import adjit
from adjit.capture.typed_ir import capture
from adjit.testing import check_grad, check_hvp, check_jvp
from adjit.transform.control_only import control_only
from numba.core import types


def halve_until_small(x):
    # the stopping test takes a norm adjit has no rule for (ord=np.inf)
    y = x.copy()
    k = 0
    while np.linalg.norm(y, np.inf) > 0.3 and k < 50:
        y = 0.5 * y + 0.01 * np.sin(y)
        k += 1
    return np.sum(y ** 2) + k * np.sum(x)


def newton_sqrt(a):
    # err is scaled and compared: control only; the iterate is the output
    x = a
    for _ in range(50):
        dx = (x * x - a) / (2.0 * x)
        err = abs(dx) / max(abs(x), 1e-12)
        x = x - dx
        if err < 1e-14:
            break
    return x


@numba.njit
def _relax(y, out):
    """Writes into ``out`` and returns a float the caller only compares."""
    change = 0.0
    for i in range(y.shape[0]):
        new = 0.5 * (y[i] + np.cos(y[i]))
        change = max(change, abs(new - y[i]))
        out[i] = new
    return change


def helper_result_compared(x):
    # the helper's float result steers the loop, but the helper writes into `out`,
    # which reaches the output: the call is differentiated, never skipped
    y = x.copy()
    out = np.empty_like(x)
    for _ in range(30):
        if _relax(y, out) < 1e-9:
            break
        y[:] = out
    return np.sum(out * x)


X3 = np.array([0.7, -1.3, 2.2])
CASES = [(halve_until_small, (X3,)), (newton_sqrt, (2.7,)), (helper_result_compared, (X3,))]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_grad(f, args):
    check_grad(f, *args)


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_jvp(f, args):
    check_jvp(f, *args)


@pytest.mark.parametrize("f,args", CASES[:2], ids=IDS[:2])
def test_hvp(f, args):
    check_hvp(f, *args)


def test_newton_sqrt_derivative_is_the_closed_form():
    assert adjit.grad(newton_sqrt)(2.7) == pytest.approx(0.5 / np.sqrt(2.7), rel=1e-10)


def _user_names(fn, names):
    return {n.split(".")[0] for n in names if not n.startswith("$")}


def test_the_analysis_finds_only_compared_values():
    fn = capture(numba.njit(newton_sqrt), (types.float64,))
    found = _user_names(fn, control_only(fn))
    assert "err" in found
    assert not {"x", "dx", "a"} & found


def test_a_helper_writing_an_argument_is_never_control_only():
    fn = capture(numba.njit(helper_result_compared), (types.float64[::1],))
    calls = [s.target.name for b in fn.func_ir.blocks.values() for s in b.body
             if getattr(getattr(s, "value", None), "op", None) == "call"
             and isinstance(fn.typeof(s.value.func.name), types.Dispatcher)]
    assert calls and not set(calls) & control_only(fn)


def test_a_refusal_in_the_output_stays():
    # a nuclear norm has no rule: refused where it reaches the output
    def f(a):
        return np.linalg.norm(a, "nuc") + np.sum(a)
    m = np.outer(X3, X3)
    with pytest.raises(adjit.UnsupportedError, match="norm"):
        adjit.grad(f)(m)
    with pytest.raises(adjit.UnsupportedError, match="norm"):
        adjit.jvp(f)(m, m)


def _chain(x):
    # c1..c3 reach the output through c3; c4, c5 feed only the comparison. Sorted by
    # name, each sweep of a fixed-point loop would drop one of c1..c3 per pass: the
    # worklist must still drop all three
    c1 = x * 2.0
    c2 = c1 * 3.0
    c3 = c2 * 0.5
    c4 = c3 * 7.0
    c5 = c4 - 1.0
    if c5 > 0.0:
        return c3
    return -c3


def test_control_only_drops_a_whole_chain_that_reaches_the_output():
    fn = capture(_chain, (types.float64,))
    names = control_only(fn)
    base = {n.split(".")[0] for n in names}
    assert {"c4", "c5"} <= base
    assert not base & {"c1", "c2", "c3", "x"}
    check_grad(_chain, 0.7)
    check_jvp(_chain, 0.7)
    check_hvp(_chain, 0.7)
