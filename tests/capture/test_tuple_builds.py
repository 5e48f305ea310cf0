"""Tuple concatenation and slicing (``adjit/capture/tuple_builds.py``) become tuples built
from constant-index reads, so every mode differentiates them item by item. ``grad`` of a
concatenation was silently zero before, and forward mode could not slice a tuple. The
rows of an array unpacked into names (``a, b, c = abc``) become row views ``abc[k]``:
reverse mode refused them, and ``jvp`` wrote into the caller's tangent through them."""
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
    with pytest.raises(adjit.UnsupportedError, match=r"'\+' returning UniTuple"):
        adjit.grad(concatenated_again)(0.7)


@numba.njit
def _tridiagonal_solve(abc, d):
    a, b, c = abc  # the three diagonals, unpacked into rows
    n = d.shape[0]
    cp, dp, x = np.empty(n), np.empty(n), np.empty(n)
    cp[0], dp[0] = c[0] / b[0], d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def tridiagonal_loss(columns, d):
    x = _tridiagonal_solve(columns.T, d)  # rows of a transpose: strided views
    return np.sum(x * x)


def rows_written(P):
    p, q, r = P
    p[0] = q[1] * r[2]  # writes P through its first row
    return np.sum(P * P) + np.sum(p * q)


RNG = np.random.default_rng(0)
COLUMNS = np.column_stack((RNG.uniform(0.1, 0.3, 5), RNG.uniform(2.0, 3.0, 5),
                           RNG.uniform(0.1, 0.3, 5)))
UNPACKED = {"tridiagonal_loss": (tridiagonal_loss, (COLUMNS, RNG.standard_normal(5))),
            "rows_written": (rows_written, (RNG.standard_normal((3, 4)),))}


@pytest.mark.parametrize("mode", list(CHECKS))
@pytest.mark.parametrize("case", list(UNPACKED))
def test_unpacked_rows(case, mode):
    f, args = UNPACKED[case]
    CHECKS[mode](f, *(a.copy() for a in args))


def test_unpacked_rows_closed_form_and_tangent_untouched():
    P = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0], [0.2, 0.7, 1.5]])
    # rows_written = sum(P'^2) + p' . q with p'[0] = q1 r2: the gradient by hand
    q1, r2 = P[1, 1], P[2, 2]
    p0 = q1 * r2
    want = 2 * P.copy()
    want[0, 0] = 0.0
    want[0, 1:] += P[1, 1:]
    want[1] += P[0]
    want[1, 0] += p0 - P[0, 0]
    want[1, 1] += (2 * p0 + P[1, 0]) * r2
    want[2, 2] += (2 * p0 + P[1, 0]) * q1
    np.testing.assert_allclose(adjit.grad(rows_written)(P.copy()), want, rtol=1e-13)
    dP = np.full((3, 3), 0.1)
    adjit.jvp(rows_written)(P.copy(), dP)
    assert np.all(dP == 0.1)  # the write through p went to jvp's own copy


def test_unpacking_the_wrong_number_of_rows_still_raises():
    with pytest.raises(ValueError):
        adjit.grad(rows_written)(np.ones((4, 4)))
