"""Tuple concatenation and slicing (``adjit/capture/tuple_builds.py``) become tuples built
from constant-index reads, so every mode differentiates them item by item. ``grad`` of a
concatenation was silently zero before, and forward mode could not slice a tuple."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.njit
def _pair(x):
    return (x, x * x)


def concatenated(x):
    t = (x, 2.0 * x) + (3.0 * x,)
    return t[0] * t[2]  # 3 x^2


def concatenated_in_loop(x):
    acc = 0.0
    for i in range(3):
        t = _pair(x * i) + (x,)
        acc += t[1] * t[2] + t[0]
    return acc


def sliced(x, y):
    t = (x, y) + (x * y, math.sin(y))
    u = t[1:3]
    s = 0.0
    for v in t[1:]:
        s += v * v
    return u[0] * u[1] + s + (x, y, 3.0)[::-1][1] * t[-1]


CASES = {"concatenated": (concatenated, (0.7,)),
         "concatenated_in_loop": (concatenated_in_loop, (0.7,)),
         "sliced": (sliced, (0.7, 0.4))}
CHECKS = {"grad": check_grad, "jvp": check_jvp, "hvp": check_hvp}


@pytest.mark.parametrize("mode", list(CHECKS))
@pytest.mark.parametrize("case", list(CASES))
def test_tuple_operations(case, mode):
    f, args = CASES[case]
    CHECKS[mode](f, *args)


def test_concatenation_closed_form():
    assert adjit.grad(concatenated)(0.7) == pytest.approx(6 * 0.7, rel=1e-14)
    assert adjit.jvp(concatenated)(0.7, 1.0)[1] == pytest.approx(6 * 0.7, rel=1e-14)
    assert adjit.hvp(concatenated)(0.7, 1.0) == pytest.approx(6.0, rel=1e-14)


def test_reverse_mode_refuses_a_tuple_operation_it_has_no_rule_for(monkeypatch):
    """Without the rewrite, ``+`` of tuples holding differentiated values is refused by
    name, not differentiated as zero."""
    from adjit.capture import normalise
    kept = [p for p in normalise.NORMALISE if p.name != "tuple_operations_to_builds"]
    monkeypatch.setattr(normalise, "NORMALISE", kept)

    def concatenated_again(x):  # a new function: nothing derived before is reused
        t = (x, 2.0 * x) + (3.0 * x,)
        return t[0] * t[2]
    with pytest.raises(adjit.UnsupportedError, match="'add'"):
        adjit.grad(concatenated_again)(0.7)
