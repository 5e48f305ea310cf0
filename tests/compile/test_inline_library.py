"""Internal code is compiled once, inside its callers: the inline-only library, the
intrinsics that replace small jitted helpers, and the Python twin of a helper."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.compile.inline_library import InlineOnlyLibrary, internal_jit
from adjit.rules.arrays import zeros_shadow
from adjit.rules.core import (adjoint_product, adjoint_product_chain, adjoint_product_pair,
                              adjoint_product_sum_pair)
from adjit.transform.partials import product_form


@numba.njit
def _select_product(g, d):
    return adjoint_product(g, d)


@numba.njit
def _chain_product(g, d):
    return adjoint_product_chain(g, d)


@numba.njit
def _chain_sum(gs, ds):
    """The NaN-branch form inside a loop and a reduction, where LLVM may vectorise it."""
    s = 0.0
    for i in range(gs.shape[0]):
        s += adjoint_product_chain(gs[i], ds[i])
    return s


@pytest.fixture(params=["select", "chain"])
def _product(request):
    return _select_product if request.param == "select" else _chain_product


@pytest.mark.parametrize("g, d, expected", [
    (2.0, 3.0, 6.0),
    (0.0, math.inf, 0.0),      # a zero seed does not turn an infinite partial into NaN
    (math.nan, 0.0, 0.0),      # a zero partial does not pass a NaN seed on
    (-1.5, 2, -3.0),           # float times int promotes as g * d does
    (2, 3, 6),
    (1 + 2j, 2.0, 2 + 4j),
])
def test_adjoint_product_guards_zero_factors(_product, g, d, expected):
    got = _product(g, d)
    assert got == expected and type(got) is type(expected)


def test_adjoint_product_keeps_float32(_product):
    assert _product(np.float32(1.5), np.float32(2.0)) == 3.0
    compiled = _product.overloads[(numba.float32, numba.float32)]
    assert compiled.signature.return_type == numba.float32


@numba.njit
def _pair(g, d1, d2):
    return adjoint_product_pair(g, d1, d2)


@numba.njit
def _sum_pair(g, d1, h, e1, d2, e2):
    """(g d1 + h e1, g d2 + h e2): the tangents of a pair, as forward mode emits them."""
    return adjoint_product_sum_pair(g, d1, h, e1, g, d2, h, e2)


@pytest.mark.parametrize("g, d1, d2, expected", [
    (2.0, 3.0, -4.0, (6.0, -8.0)),
    (0.0, math.inf, 1.0, (0.0, 0.0)),        # a zero seed against inf: nothing
    (1.0, math.nan, 2.0, (math.nan, 2.0)),   # one NaN product leaves the other alone
    (2.0, 0.0, math.nan, (0.0, math.nan)),   # a zero partial does not pass NaN on
    (0.0, 0.0, 0.0, (0.0, 0.0)),
])
def test_a_pair_of_products_keeps_each_guard(g, d1, d2, expected):
    """``adjoint_product_pair`` checks the two products with one compare; each value is
    what ``adjoint_product_chain`` gives for it."""
    got = _pair(g, d1, d2)
    np.testing.assert_equal(got, expected)
    np.testing.assert_equal(got, (_chain_product(g, d1), _chain_product(g, d2)))


def test_a_pair_of_product_sums_keeps_each_guard():
    inf, nan = math.inf, math.nan
    np.testing.assert_equal(_sum_pair(1.0, 2.0, 3.0, 4.0, 5.0, 6.0), (14.0, 23.0))
    # a zero tangent against an infinite factor, beside a finite sum
    np.testing.assert_equal(_sum_pair(0.0, inf, 2.0, 1.0, 3.0, 4.0), (2.0, 8.0))
    np.testing.assert_equal(_sum_pair(1.0, nan, 0.0, inf, 1.0, 1.0), (nan, 1.0))
    got = _sum_pair(np.float32(1.0), np.float32(2.0), np.float32(0.5), np.float32(4.0),
                    np.float32(3.0), np.float32(2.0))
    assert got == (4.0, 4.0)
    (compiled,) = [c for sig, c in _sum_pair.overloads.items() if sig[0] == numba.float32]
    assert compiled.signature.return_type == numba.types.UniTuple(numba.float32, 2)


def test_chain_product_guards_inside_a_loop():
    gs = np.array([0.0, 2.0, np.nan, 1.0, 0.0, 3.0, 4.0, 0.5, 1.0])
    ds = np.array([np.inf, 3.0, 0.0, -np.inf, np.nan, 1.0, 0.5, 2.0, 0.0])
    # 0*inf, nan*0, 0*nan contribute 0; 1*-inf stays -inf
    assert _chain_sum(gs, ds) == -np.inf
    keep = np.isfinite(ds) & ~np.isnan(gs)
    assert _chain_sum(gs[keep], ds[keep]) == pytest.approx(float(gs[keep] @ ds[keep]))


def _straight(x):
    return x * x


def _looped(x):
    s = 0.0
    for i in range(3):
        s += x * i
    return s


def test_product_form_follows_the_loops():
    blocks = {f: numba.core.compiler.run_frontend(f).blocks for f in (_straight, _looped)}
    assert product_form(blocks[_straight]) is adjoint_product_chain
    assert product_form(blocks[_looped]) is adjoint_product


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


def test_derivative_passes_compile_inside_the_transform():
    """grad(f) and jvp(f) hold their passes in their own IR (ir.inlining): one Numba
    compile each, behind the unwinding entry, and none of the passes' own dispatchers."""
    from numba.core import types

    from adjit.transform.forward import derive_jvp
    from adjit.transform.reverse.program import derive

    def f(x):
        s = 0.0
        for i in range(3):
            s += math.sin(x * i)
        return s

    g = adjit.grad(f)
    assert g(0.7) == pytest.approx(sum(i * math.cos(0.7 * i) for i in range(3)), rel=1e-13)
    program = derive(f, (types.float64,), (0,))
    assert not program.fwd_tape.overloads and not program.rev.overloads
    (compiled,) = g.overloads.values()
    assert not isinstance(compiled.library, InlineOnlyLibrary)
    assert "_unwound" in compiled.library.get_llvm_str()  # the private body

    h = adjit.hvp(f)  # one compile of hvp(f), one of the tangent of grad(f)'s body
    want = sum(-i * i * math.sin(0.7 * i) for i in range(3)) * 2.0
    assert h(0.7, 2.0) == pytest.approx(want, rel=1e-12)
    assert not program.fwd_tape.overloads and not program.rev.overloads
    assert derive_jvp(g, (types.float64,), (0,), tangent_only=True).dispatcher.overloads

    y, ydot = adjit.jvp(f)(0.7, 2.0)
    assert ydot == pytest.approx(2.0 * sum(i * math.cos(0.7 * i) for i in range(3)))
    assert not derive_jvp(f, (types.float64,), (0,)).dispatcher.overloads


def test_a_spliced_program_that_always_raises():
    """After a spliced program that never returns, the code that reads its result is
    unreachable and is dropped (``ir.inlining.drop_unreachable``): the user's exception
    comes out, as when the program was a call, and the tape is left as it was."""
    def always(x):
        raise ValueError("always raises")

    with pytest.raises(ValueError, match="always raises"):
        adjit.jvp(always)(1.0, 1.0)
    assert adjit.runtime.current_depth() == 0


def test_only_small_forward_programs_are_optimised_alone(monkeypatch):
    """A forward-mode program runs -O3 alone before its caller inlines it only when its
    module is small (``OPTIMISE_ALONE_LINES``): that vectorises scalar loops, and would
    cost seconds for programs that inline array kernels. Either way the hvp is right.
    The transform that calls a program optimised alone does not run the full passes
    over it again (``ModulePassesOnlyLibrary``)."""
    from numba.core.codegen import JITCodeLibrary

    from adjit.compile import inline_library
    optimised = []
    real = JITCodeLibrary._optimize_final_module

    def spy(self):
        optimised.append(self.name)
        return real(self)
    monkeypatch.setattr(JITCodeLibrary, "_optimize_final_module", spy)

    def loop(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i] * x[i]
        return s

    x, v = np.linspace(0.1, 1.0, 5), np.linspace(1.0, 2.0, 5)
    np.testing.assert_allclose(adjit.hvp(loop)(x, v), 6.0 * x * v, rtol=1e-13)
    assert "grad_loop_tangent" in optimised  # hvp's jvp of grad, returning the tangent
    # the hvp's own module, which calls that program, gets Numba's cheap passes only:
    # the full ones would optimise the program again to inline it
    assert "hvp_loop" not in optimised

    def loop2(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i] * x[i]
        return s

    optimised.clear()
    monkeypatch.setattr(inline_library, "OPTIMISE_ALONE_LINES", 10)
    np.testing.assert_allclose(adjit.hvp(loop2)(x, v), 6.0 * x * v, rtol=1e-13)
    assert "grad_loop2_tangent" not in optimised and "hvp_loop2" in optimised
