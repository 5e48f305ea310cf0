"""SquareToMultiply: ``a ** 2`` becomes ``a * a`` for a float and for a float array whose
square has its own type, so its adjoint is a product's, not a general power's."""
import operator

import numpy as np
from numba.core import ir, types

from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture
from adjit.testing import check_grad, check_hvp, check_jvp


def _binops(fn, argtypes):
    """The operators left after normalising (without fusing sums, which would take the
    product into a loop: ``capture/fused_sums.py``)."""
    import pytest
    from adjit import config
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config, "FUSE_SUMS", False)
        typed = normalise(capture(fn, argtypes))
    return [s.value.fn for b in typed.func_ir.blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
            and s.value.op == "binop"]


def squared_error(y, p):
    return np.sum((y - p) ** 2)


def squared_ints(k):
    return np.sum(k ** 2)


def test_a_float_array_squared_is_a_product():
    vec = types.float64[::1]
    ops = _binops(squared_error, (vec, vec))
    assert operator.pow not in ops and ops.count(operator.mul) == 1


def test_an_integer_array_squared_stays_a_power():
    assert operator.pow in _binops(squared_ints, (types.int64[::1],))


def test_squared_error_in_every_mode():
    y, p = np.array([0.3, -1.2, 0.8, 2.1]), np.array([0.1, 0.4, -0.5, 1.0])
    grads = check_grad(squared_error, y, p, argnums=(0, 1))
    np.testing.assert_allclose(grads[0], 2 * (y - p), rtol=1e-12)
    check_jvp(squared_error, y, p)
    check_hvp(squared_error, y, p, argnums=(0, 1))
