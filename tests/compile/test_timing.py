"""ADJIT_TIMING: where the first compile of a derivative went."""
import re

import numba
import pytest

import adjit
import adjit.config


def test_timing_prints_a_tree_whose_own_times_add_up(monkeypatch, capsys):
    @numba.njit
    def timed_helper(x):
        return x * x * x

    def timed(x):
        return timed_helper(x) + 2.0 * x

    monkeypatch.setattr(adjit.config, "TIMING", True)
    assert adjit.grad(timed)(1.5) == pytest.approx(3 * 1.5 ** 2 + 2.0, rel=1e-14)
    err = capsys.readouterr().err
    head, *rows = [ln for ln in err.splitlines() if ln.strip()]
    total = float(re.search(r"grad_timed  ([0-9.]+) s", head).group(1))
    kinds = re.findall(r"^\s+(capture|transform|numba)\s+(\S+)\s+([0-9.]+) s", err, re.M)
    assert {k for k, _, _ in kinds} == {"capture", "transform", "numba"}
    # the transform holds its own passes (one compile); a callee's passes are compiled
    assert ("numba", "timed_helper_fwd") in {(k, n) for k, n, _ in kinds}
    assert ("numba", "timed_fwd_tape") not in {(k, n) for k, n, _ in kinds}
    assert any(k == "capture" and n.endswith("timed_helper") for k, n, _ in kinds)
    own = sum(float(t) for _, _, t in kinds)
    assert own == pytest.approx(total, abs=0.002 * len(kinds) + 1e-3)
    assert rows[-1].strip().startswith("totals: capture")


def test_timing_is_silent_when_off(capsys):
    def quiet(x):
        return x * 4.0

    assert adjit.grad(quiet)(1.0) == 4.0
    assert "adjit timing" not in capsys.readouterr().err
