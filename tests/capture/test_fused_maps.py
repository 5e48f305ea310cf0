"""FuseElementwiseMaps (``adjit/capture/fused_sums.py``): an elementwise expression whose
array the code keeps becomes one loop writing a new array (``fused_loops.fused_map_helper``).
Each case against finite differences in grad, jvp and hvp; the value against the
primal's, bit for bit (the same operations on each element); and whether it was fused,
from the captured IR.
"""
import numpy as np
import pytest
from numba import njit, typeof

import adjit
from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture
from adjit.testing import check_grad, check_hvp, check_jvp
from fusion_counts import allocations_per_call, count_fused


def _fused_maps(f, *args):
    """How many elementwise expressions of ``f`` at ``args`` became fused maps."""
    return count_fused("fused_map", f, *args)


def radial_decay(x, y):
    """Two trees: r (read only by w's tree, so inside it) and w, kept and sliced."""
    r = np.sqrt(x * x + y * y)
    w = np.exp(-r) * np.sin(x)
    return w[0] * 2.0 + np.sum(w[1:] * y[1:])


def matrix_map(A, B):
    C = np.tanh(A * B + 0.5) - A / (1.0 + B * B)
    return C[1, 2] + C[0, 0] * C[2, 1]


def fortran_map(A, B):
    C = np.cos(A * B) * A  # Fortran operands: a Fortran result, written in its order
    return C[1, 0] - C[0, 1] * 3.0


def outer_grid(x, row):
    """Length-1 axes broadcast: the grid of x[i] * row[j]."""
    M = np.exp(x[:, None] * row[None, :]) + x[:, None]
    return M[2, 1] * M[0, 3]


def cube(T):
    U = np.sin(T) * T + 1.0
    return U[1, 0, 1] * U[0, 1, 0]


def kept_for_a_cumsum(x):
    """The map's array is read by np.cumsum, which is not elementwise."""
    c = np.cumsum(np.log1p(x * x) * 0.5)
    return c[-1] * c[1]


@njit
def returned(x, y):
    return np.sin(x) * y + x


def _returned_sum(x, y):
    return np.sum(returned(x, y) ** 2.0)


X1 = np.linspace(0.1, 1.3, 7)
X2 = np.linspace(0.2, 1.4, 12).reshape(3, 4)
XF = np.asfortranarray(X2)
X3 = np.linspace(0.1, 1.2, 8).reshape(2, 2, 2)

CASES = [
    (radial_decay, (X1, X1[::-1].copy()), (0, 1), 1),
    (matrix_map, (X2, X2[::-1].copy() * 0.5), (0, 1), 1),
    (fortran_map, (XF, np.asfortranarray(X2 * 0.3)), (0, 1), 1),
    (outer_grid, (X1, np.linspace(0.0, 1.0, 4)), (0, 1), 1),
    (cube, (X3,), 0, 1),
    (kept_for_a_cumsum, (X1,), 0, 1),
    (_returned_sum, (X1, X1 * 0.5), (0, 1), 0),
]
IDS = ["radial_decay", "2d", "fortran", "broadcast_grid", "3d", "cumsum", "helper"]


@pytest.mark.parametrize("f, args, argnums, fused", CASES, ids=IDS)
def test_fused_maps_in_every_mode(f, args, argnums, fused):
    assert _fused_maps(f, *args) == fused
    check_grad(f, *args, argnums=argnums)
    check_jvp(f, *args)
    check_hvp(f, *args, argnums=argnums)
    value, _ = adjit.value_and_grad(f, argnums=argnums)(*args)
    assert value == njit(f)(*args)  # the same operations on each element


def test_a_helper_returning_a_map_is_fused_in_the_helper():
    """``returned`` is an @njit callee of ``_returned_sum``: its derivative is derived
    from its own IR, where the returned expression is a fused map."""
    assert _fused_maps(returned, X1, X1) == 1
    out = adjit.jvp(returned)(X1, X1 * 0.5, np.ones(7), np.zeros(7))[1]
    np.testing.assert_allclose(out, np.cos(X1) * X1 * 0.5 + 1.0, rtol=1e-14)


def test_the_layout_and_value_are_the_primals():
    for f, args in [(fortran_map, (XF, XF * 0.3)), (matrix_map, (X2, X2 * 0.5))]:
        typed = normalise(capture(f, tuple(typeof(a) for a in args)))
        assert typed.typemap["C"].layout == ("F" if f is fortran_map else "C")


def test_shapes_that_do_not_broadcast_raise_value_error():
    with pytest.raises(ValueError):
        returned(X1, X1[:4].copy())
    with pytest.raises(ValueError):
        adjit.grad(_returned_sum)(X1, X1[:4].copy())
    with pytest.raises(ValueError):
        adjit.grad(radial_decay)(X1, X1[:4].copy())


def test_division_by_zero_gives_inf_as_the_arrays_do():
    def ratio(x, y):
        r = x / y + x
        return r[0] + r[1]
    x, y = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    assert _fused_maps(ratio, x, y) == 1
    value, g = adjit.value_and_grad(ratio)(x, y)
    assert value == np.inf and np.isinf(g[0])


def single_operation(x):
    s = np.sin(x)
    return s[0] * s[1]


def read_outside_the_tree(x):
    t = np.sin(x) * x        # t is read by u's tree and by the return: a tree of its own
    u = np.exp(t) + t
    return u[0] * t[1]


def written_between(x):
    y = x.copy()
    t = np.sin(y) * y
    y[0] = 5.0               # after t: t keeps the old y[0]; u, a map of its own, reads
    u = t * 2.0 + y          # t as an operand and the new y
    return u[0] + u[1]


@pytest.mark.parametrize("f, fused", [(single_operation, 0), (read_outside_the_tree, 2),
                                      (written_between, 2)],
                         ids=["single_operation", "read_outside", "written_between"])
def test_trees_left_alone_or_cut(f, fused):
    assert _fused_maps(f, X1) == fused
    check_grad(f, X1)
    check_hvp(f, X1)
    assert adjit.value_and_grad(f)(X1)[0] == njit(f)(X1)


_grad_radial = adjit.grad(radial_decay, argnums=(0, 1))


@njit
def _gradients(x, y, n):
    t = 0.0
    for _ in range(n):
        gx, gy = _grad_radial(x, y)
        t += gx[0] + gy[1]
    return t


def test_a_fused_gradient_allocates_no_temporary_per_operation():
    """grad of radial_decay, in a compiled loop: 8 allocations per call (the two
    gradients; the map's array, made by the derived helper, with its shadows on both
    sides of the call; ``w[1:] * y[1:]`` and its shadow; the helper's result). Through
    the array rules (``ADJIT_FUSE_SUMS=0``) it made 28: an array per elementwise
    operation and an adjoint per operation going back."""
    assert allocations_per_call(_gradients, X1, X1[::-1].copy()) == 8


def heat_step(u, k):
    """A stencil written with slices: the slices between the operations write nothing,
    so the whole update is one map."""
    unew = u.copy()
    unew[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]) * k[1:-1]
    return np.sum(unew * unew)


def test_a_slice_stencil_is_one_map_and_normalising_again_changes_nothing():
    """The IR is normalised once: a second ``normalise`` of the captured IR (another
    analysis of the same derivative) leaves it as it is, where running the passes again
    fused what the first run had left, and the two analyses disagreed on the records."""
    args = (X1, X1[::-1].copy())
    typed = normalise(capture(heat_step, tuple(typeof(a) for a in args)))
    def text():
        return "\n".join(str(s) for b in typed.func_ir.blocks.values() for s in b.body)
    before = text()
    assert _fused_maps(heat_step, *args) == 1
    assert normalise(typed) is typed and text() == before
    check_grad(heat_step, *args, argnums=(0, 1))
    check_jvp(heat_step, *args)
    check_hvp(heat_step, *args, argnums=(0, 1))
    assert adjit.value_and_grad(heat_step)(*args)[0] == njit(heat_step)(*args)
