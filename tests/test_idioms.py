"""The Numba-idiom corpora (tests/corpus/numba_idioms.py, array_tuples.py) in every
mode: grad, jvp and forward-over-reverse hvp, against finite differences."""
import pytest

from adjit.testing import check_grad, check_hvp, check_jvp
from corpus import load

CASES = load("numba_idioms") + load("array_tuples")
IDS = [c.id for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad(case):
    check_grad(case.fn, *case.args, argnums=case.argnums)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp(case):
    check_jvp(case.fn, *case.args)


# rk4_trajectory is left out of hvp: its forward-over-reverse program (four derived rhs
# calls per step) takes about three minutes to compile; euler_loop_carried covers
# loop-carried arrays under hvp. stencil_smoothing (a minute) likewise: the other two
# stencil cases cover @stencil under hvp. dot_into_out (minutes under hvp): matrix
# products have hvp tests of their own in tests/transform/test_reverse_matmul.py.
# option_book_value (Black-Scholes, ten minutes under hvp), unused_item and band_width
# (a minute each): indexed_item, mixed_items, pendulum_loop, tuple_argument and
# star_arguments cover tuples of arrays under hvp. fitted_in_place (a minute and a half):
# test_reverse_matmul.py covers its vector-matrix products under hvp.
HVP_CASES = [c for c in CASES
             if c.id not in ("rk4_trajectory", "stencil_smoothing", "dot_into_out",
                             "option_book_value", "unused_item", "band_width",
                             "fitted_in_place")]


@pytest.mark.parametrize("case", HVP_CASES, ids=[c.id for c in HVP_CASES])
def test_hvp(case):
    check_hvp(case.fn, *case.args, argnums=case.argnums)
