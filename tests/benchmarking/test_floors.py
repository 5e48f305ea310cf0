"""The tape-written references of ``large_single_block`` (``adjit.benchmarking.floors``)
compute adjit's derivatives, so their times are a floor of the same computation."""
import numba
import numpy as np
import pytest

from adjit.benchmarking import floors
from adjit.suite import large_single_block as w


def test_tape_written_derivatives_are_the_closed_forms():
    x, v = np.array([0.9, 0.99]), np.array([0.3, -1.1])
    ys, yds = np.empty(w.N_MULTIPLIES), np.empty(w.N_MULTIPLIES)
    gx, gb = numba.njit(w.tape_grad)(x, ys)
    assert gx == pytest.approx(x[1] ** 400, rel=1e-12)
    assert gb == pytest.approx(400 * x[0] * x[1] ** 399, rel=1e-12)
    hx, hb = numba.njit(w.tape_hvp)(x, v, ys, yds)
    # H = [[0, 400 b^399], [400 b^399, 400 * 399 x0 b^398]]
    assert hx == pytest.approx(400 * x[1] ** 399 * v[1], rel=1e-12)
    assert hb == pytest.approx(400 * x[1] ** 399 * v[0]
                               + 400 * 399 * x[0] * x[1] ** 398 * v[1], rel=1e-12)


def test_the_report_gives_each_ratio_to_the_primal():
    """(``measure`` compiles the hvp of the 400-line block, seconds of compile: it runs
    as a benchmark, not here; it checks the references against adjit itself.)"""
    text = floors.report({"primal": 2e-7, "grad": 5e-7, "tape hvp": 1e-6})
    assert text.splitlines()[1].split()[-3:] == ["2.50", "x", "primal"]
    assert text.splitlines()[2].startswith("tape hvp") and "5.00 x primal" in text


def test_scalar_loop_branch_tape_gradient_is_the_gradient():
    """The hand-written reverse gradient whose compile time is issue 12's floor for the
    row (``compile_floors``) computes what adjit's does, and central differences do."""
    from adjit.benchmarking import compile_floors
    from adjit.suite import scalar_loop_branch as s
    x = 0.37
    hand = numba.njit(s.tape_grad)(x, np.zeros(1000, np.bool_), np.zeros(1000))
    h = 1e-6
    assert hand == pytest.approx((s.primal(x + h) - s.primal(x - h)) / (2 * h), rel=1e-6)
    assert compile_floors.measure("tape_grad") > 0.0
