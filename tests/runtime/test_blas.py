"""``runtime/blas.py``: the product added into a shadow in place, for every operand layout,
against NumPy; and the matrix-product shadow updates built on it allocate nothing."""
import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

from adjit.rules.matmul import update_a, update_b
from adjit.runtime.blas import accumulate_product

RNG = np.random.default_rng(3)


def _layout(a, layout):
    return {"C": np.ascontiguousarray, "F": np.asfortranarray,
            "A": lambda m: np.repeat(m, 2, axis=1)[:, ::2]}[layout](a)


@pytest.mark.parametrize("xl", "CFA")
@pytest.mark.parametrize("yl", "CFA")
def test_accumulated_product_matches_numpy(xl, yl):
    x, y = RNG.standard_normal((7, 5)), RNG.standard_normal((5, 9))
    out = RNG.standard_normal((7, 9))
    expected = out + x @ y
    # A-layout operands go through update_a's NumPy path, the others through gemm
    update_a(_layout(x, xl), _layout(y.T.copy(), yl), out)
    assert np.allclose(out, expected, rtol=1e-13, atol=1e-13)
    if "A" not in (xl, yl):
        out2 = expected - x @ y
        accumulate_product(_layout(x, xl), _layout(y, yl), out2)
        assert np.allclose(out2, expected, rtol=1e-13, atol=1e-13)


def test_vector_shadows_and_empty_products():
    g, a = RNG.standard_normal(3), RNG.standard_normal((3, 5))
    s = RNG.standard_normal(5)
    expected = s + a.T @ g
    update_b(g, a, s)
    assert np.allclose(s, expected, rtol=1e-13, atol=1e-13)
    g2, b = RNG.standard_normal(4), RNG.standard_normal((6, 4))
    s = RNG.standard_normal(6)
    expected = s + g2 @ b.T
    update_a(g2, b, s)
    assert np.allclose(s, expected, rtol=1e-13, atol=1e-13)
    out = RNG.standard_normal((3, 0))
    accumulate_product(np.ones((3, 2)), np.ones((2, 0)), out)  # nothing to add
    with pytest.raises(ValueError, match="wrong shape"):
        accumulate_product(np.ones((3, 2)), np.ones((2, 4)), np.zeros((3, 3)))


@numba.njit
def _updates(g, w, h, shadow_w, shadow_h, n):
    for _ in range(n):
        update_a(g, h, shadow_w)   # W_bar += G @ H.T
        update_b(g, w, shadow_h)   # H_bar += W.T @ G
    return shadow_w[0, 0] + shadow_h[0, 0]


def _allocations(*args):
    before = rtsys.get_allocation_stats()
    _updates(*args)
    return rtsys.get_allocation_stats().alloc - before.alloc


def test_shadow_updates_allocate_nothing_in_a_compiled_loop():
    """The loop's iterations allocate nothing: 50 more calls, not one allocation more
    (a fixed few come from calling the compiled loop)."""
    g, w, h = RNG.standard_normal((8, 6)), RNG.standard_normal((8, 5)), RNG.standard_normal((4, 6))
    sw, sh = np.zeros((8, 4)), np.zeros((5, 6))
    _updates(g, w, h, sw, sh, 1)
    _nrt_python.memsys_enable_stats()
    try:
        few = _allocations(g, w, h, sw, sh, 10)
        many = _allocations(g, w, h, sw, sh, 60)
    finally:
        _nrt_python.memsys_disable_stats()
    assert many == few
    assert np.allclose(sw, 71 * (g @ h.T)) and np.allclose(sh, 71 * (w.T @ g))
