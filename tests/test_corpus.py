"""Every transform over every program of the corpus (tests/corpus)."""
import numpy as np
import pytest

import adjit
from adjit.testing import _primal, check_grad, check_vjp
from corpus import MODULES, all_cases, load

ALL = all_cases()


def _ids(pairs):
    return [f"{m}-{c.id}" for m, c in pairs]


def _subset():
    """First and last case of every module, and every case with an integer argument."""
    seen, out = set(), []
    for m in MODULES:
        cases = load(m)
        picked = [cases[0], cases[-1]] + [
            c for c in cases
            if any(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in c.args)]
        for c in picked:
            if (m, c.id) not in seen:
                seen.add((m, c.id))
                out.append((m, c))
    return out


SUBSET = _subset()


def _as_tuple(g, argnums):
    return g if isinstance(argnums, tuple) else (g,)


def _tol(x):
    return 1e-5 if np.asarray(x).dtype == np.float32 else 1e-12


def _assert_close(a, b, rtol, what):
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    assert a64.shape == b64.shape, f"{what}: shape {a64.shape} != {b64.shape}"
    assert np.allclose(a64, b64, rtol=rtol, atol=rtol), f"{what}:\n  {a!r}\n  {b!r}"


@pytest.mark.parametrize("case", [c for _, c in ALL], ids=_ids(ALL))
def test_grad(case):
    check_grad(case.fn, *case.args, argnums=case.argnums)


@pytest.mark.parametrize("case", [c for _, c in SUBSET], ids=_ids(SUBSET))
def test_value_and_grad(case):
    depth = adjit.runtime.current_depth()
    value, g = adjit.value_and_grad(case.fn, argnums=case.argnums)(*case.args)
    assert adjit.runtime.current_depth() == depth
    expected = _primal(case.fn)(*case.args)
    vtol = max(_tol(a) for a in case.args)
    _assert_close(value, expected, vtol, "value_and_grad value vs primal")
    ref = adjit.grad(case.fn, argnums=case.argnums)(*case.args)
    for k, gk, rk in zip(_as_tuple(case.argnums, case.argnums), _as_tuple(g, case.argnums),
                         _as_tuple(ref, case.argnums)):
        _assert_close(gk, rk, _tol(case.args[k]), f"value_and_grad gradient of argument {k} vs grad")


@pytest.mark.parametrize("case", [c for _, c in SUBSET], ids=_ids(SUBSET))
def test_vjp(case):
    # value, one cotangent per argument (0 for ints) and finite differences of 2 * f
    value, cots = check_vjp(case.fn, *case.args, ybar=2.0)
    ref = adjit.grad(case.fn, argnums=case.argnums)(*case.args)
    for k, rk in zip(_as_tuple(case.argnums, case.argnums), _as_tuple(ref, case.argnums)):
        _assert_close(cots[k], 2.0 * np.asarray(rk), _tol(case.args[k]),
                      f"vjp cotangent of argument {k} vs 2 * grad")


def test_argnums_on_int_argument_raises():
    from corpus.int_args import power_by_loop
    with pytest.raises(adjit.ArgumentError):
        adjit.grad(power_by_loop, argnums=1)(1.2, 5)
