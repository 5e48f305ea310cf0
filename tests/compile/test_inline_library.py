"""Internal code is compiled once, inside its callers: the inline-only library, the
intrinsics that replace small jitted helpers, and the Python twin of a helper."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.compile.inline_library import InlineOnlyLibrary, internal_jit
from adjit.rules.arrays import zeros_shadow
from adjit.rules.core import adjoint_product


@numba.njit
def _product(g, d):
    return adjoint_product(g, d)


@pytest.mark.parametrize("g, d, expected", [
    (2.0, 3.0, 6.0),
    (0.0, math.inf, 0.0),      # a zero seed does not turn an infinite partial into NaN
    (math.nan, 0.0, 0.0),      # a zero partial does not pass a NaN seed on
    (-1.5, 2, -3.0),           # float times int promotes as g * d does
    (2, 3, 6),
    (1 + 2j, 2.0, 2 + 4j),
])
def test_adjoint_product_guards_zero_factors(g, d, expected):
    got = _product(g, d)
    assert got == expected and type(got) is type(expected)


def test_adjoint_product_keeps_float32():
    assert _product(np.float32(1.5), np.float32(2.0)) == 3.0
    compiled = _product.overloads[(numba.float32, numba.float32)]
    assert compiled.signature.return_type == numba.float32


@numba.njit
def _zeros(a):
    return zeros_shadow(a)


@pytest.mark.parametrize("a", [np.ones(5), np.ones((2, 3)), np.ones((4, 6))[::2, ::3],
                               np.asfortranarray(np.ones((3, 2))), np.ones(0),
                               np.ones((2, 2), np.float32), np.ones((2, 3, 4), order="F"),
                               np.ones((3, 4, 2))[:, ::2], np.array(2.5)])
def test_zeros_shadow_is_zeros_like(a):
    z = _zeros(a)
    assert z.shape == a.shape and z.dtype == a.dtype and not z.any()
    if numba.typeof(a).layout == "F":
        assert z.flags.f_contiguous
    else:
        assert z.flags.c_contiguous


@internal_jit
def _cube(x):
    return x * x * x


def test_internal_helper_called_from_python_runs_its_twin():
    @numba.njit
    def caller(x):
        return _cube(x) + 1.0

    assert caller(2.0) == 9.0
    (compiled,) = _cube.overloads.values()
    assert isinstance(compiled.library, InlineOnlyLibrary)
    assert _cube(3.0) == 27.0  # from Python: the ordinary twin, not the inline-only code


def test_derivative_passes_compile_into_the_transform():
    def f(x):
        s = 0.0
        for i in range(3):
            s += math.sin(x * i)
        return s

    g = adjit.grad(f)
    assert g(0.7) == pytest.approx(sum(i * math.cos(0.7 * i) for i in range(3)), rel=1e-13)
    (compiled,) = g.overloads.values()
    assert not isinstance(compiled.library, InlineOnlyLibrary)
    code = compiled.library.get_llvm_str()
    assert "f_rev" in code  # the reverse pass is linked into the transform's own module
