"""The Numba-idiom corpus (tests/corpus/numba_idioms.py) in every mode: grad, jvp and
forward-over-reverse hvp, against finite differences."""
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp
from corpus import load

CASES = load("numba_idioms")
IDS = [c.id for c in CASES]


def _argnums(case):
    return case.argnums if isinstance(case.argnums, tuple) else (case.argnums,)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad(case):
    check_grad(case.fn, *case.args, argnums=case.argnums)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp(case):
    check_jvp(case.fn, *case.args)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hvp(case):
    for k in _argnums(case):
        check_hvp(case.fn, *case.args, argnums=k)
