"""Element writes through a name that is one array on one path and another on the other
(``y = z if inplace else np.zeros_like(z)``): on the aliasing path they write into ``z``,
which the reverse pass did not see (wrong gradients, an argument left modified). Reverse
mode refuses them by name; forward mode, which writes through the same memory, is
right; merges of arrays made for the merge alone, and loop-carried buffers, still work,
also when one buffer is the argument (reverse mode copies it first)."""
import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


def _write_through_a_maybe_alias(x, inplace):
    z = x * 1.0
    y = z if inplace else np.zeros_like(z)
    y[0] = 2.0 * y[1]
    return np.sum(z ** 2)


def _write_into_a_maybe_argument(x, inplace):
    if inplace:
        y = x
    else:
        y = x.copy()
    y[0] = y[0] * y[1]
    return np.sum(x * y)


def _keep_the_better_state(x):
    a = x * 1.0
    b = np.sin(x)
    best = a
    if np.sum(b ** 2) < np.sum(a ** 2):
        best = b
    best[0] = best[0] * 2.0
    return np.sum(a * b)


def _either_new_array(x, flag):
    y = np.zeros_like(x) if flag else np.ones_like(x)
    y[0] = x[1] * x[2]
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [(_write_through_a_maybe_alias, (True,)),
                                     (_write_into_a_maybe_argument, (True,)),
                                     (_keep_the_better_state, ())])
def test_a_write_through_a_merged_alias_is_refused_in_reverse_mode(f, args):
    x = np.array([0.5, -0.3, 0.8])
    before = x.copy()
    with pytest.raises(adjit.UnsupportedError, match=r"on one path and another array"):
        adjit.grad(f)(x, *args)
    assert np.array_equal(x, before)
    check_jvp(f, x, *args)  # forward mode writes the tangent through the same memory


def test_a_merge_of_arrays_made_for_it_alone_still_differentiates():
    x = np.array([0.5, -0.3, 0.8])
    for flag in (True, False):
        check_grad(_either_new_array, x, flag)


def _alias_carried_into_a_loop(x):
    z = x * 1.0
    y = z
    for _ in range(3):
        y[0] = y[1] * 2.0
        y = y * 0.9
    return np.sum(z ** 2) + np.sum(y)


def _swapped_buffers(x):
    a = x.copy()
    b = x * 2.0
    for _ in range(3):
        for i in range(b.shape[0]):
            b[i] = b[i] * x[i]
        a, b = b, a
    return np.sum(a * x) + np.sum(b)


def test_an_alias_carried_into_a_loop_and_written_is_refused():
    """The first iteration writes into z through y; z is read after the loop."""
    x = np.array([0.5, -0.3, 0.8])
    with pytest.raises(adjit.UnsupportedError, match=r"'y', which is 'z' on one path"):
        adjit.grad(_alias_carried_into_a_loop)(x)
    check_jvp(_alias_carried_into_a_loop, x)
    check_grad(_swapped_buffers, x)  # buffers used only through the loop: supported


def _boundary_then_swapped_buffers(u0, nsteps):
    """The usual PDE time loop: a boundary value written into the scratch buffer once,
    before the loop that swaps it with the state."""
    u = u0.copy()
    unew = np.zeros_like(u0)
    unew[0] = 0.0
    for _ in range(nsteps):
        unew[1:] = u[1:] + 0.1 * u[:-1] * u[1:]
        u, unew = unew, u
    return np.sum(u ** 2)


def _alias_made_before_the_swap_loop(u0, nsteps):
    u = u0.copy()
    unew = np.zeros_like(u0)
    w = unew  # after the first swap, w is the other buffer's old name
    for _ in range(nsteps):
        unew[1:] = u[1:] + 0.1 * u[:-1] * u[1:]
        w[0] = u[0] * 2.0
        u, unew = unew, u
    return np.sum(u ** 2)


def _written_before_a_branch_merge(x, flag):
    z = x * 1.0
    z[0] = x[2] * 3.0
    y = z if flag else np.ones_like(x)
    y[1] = y[0] * x[1]
    return np.sum(y * x)


def test_element_writes_before_the_merge_still_differentiate():
    """A write into a buffer before the merge that carries it (a boundary value set before
    the time loop) was refused as if the buffer were used under two names."""
    u0 = np.linspace(0.1, 1.0, 5)
    for nsteps in (3, 4):
        check_grad(_boundary_then_swapped_buffers, u0, nsteps)
    check_jvp(_boundary_then_swapped_buffers, u0, 3)
    v = np.linspace(-1.0, 1.0, 5)
    hv = adjit.hvp(_boundary_then_swapped_buffers)(u0, 3, v)
    g = adjit.grad(_boundary_then_swapped_buffers)
    eps = 1e-5
    fd = (g(u0 + eps * v, 3) - g(u0 - eps * v, 3)) / (2 * eps)
    assert np.allclose(hv, fd, rtol=1e-6, atol=1e-8)
    x = np.array([0.5, -0.3, 0.8])
    for flag in (True, False):
        check_grad(_written_before_a_branch_merge, x, flag)


def _boundary_copied_then_swapped(u0, r):
    """The Dirichlet form: the scratch buffer's boundary copied from the state (element
    reads of the state before the loop that swaps the two)."""
    u = u0.copy()
    v = np.empty_like(u)
    v[0] = u[0]
    v[-1] = u[-1]
    for _ in range(4):
        for i in range(1, u.shape[0] - 1):
            v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1])
        u, v = v, u
    return np.sum(u ** 2)


def test_a_boundary_copied_from_the_state_before_the_swap_loop_in_every_mode():
    """``v[0] = u[0]`` before ``u, v = v, u``: the element reads of ``u`` counted as a
    second name for it, and grad and hvp refused the function."""
    u0 = np.linspace(0.1, 1.0, 6)
    check_grad(_boundary_copied_then_swapped, u0, 0.2, argnums=(0, 1))
    check_jvp(_boundary_copied_then_swapped, u0, 0.2)
    check_hvp(_boundary_copied_then_swapped, u0, 0.2, argnums=(0, 1))


def _edges_copied_then_swapped(u0, r):
    """The 2-D form: the scratch buffer's edges copied from the state as row and column
    slices (views of the state, used only as what is copied) before the swap loop."""
    u = u0.copy()
    v = np.empty_like(u)
    v[0, :] = u[0, :]
    v[-1, :] = u[-1, :]
    v[:, 0] = u[:, 0]
    v[:, -1] = u[:, -1]
    for _ in range(3):
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                             + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1])
        u, v = v, u
    return np.sum(u ** 2)


def test_edges_copied_from_the_state_before_the_swap_loop_in_every_mode():
    """``v[0, :] = u[0, :]`` before ``u, v = v, u``: the view read counted as a second
    name for ``u``, and grad and hvp refused the function."""
    u0 = np.random.default_rng(4).random((5, 5))
    check_grad(_edges_copied_then_swapped, u0, 0.1, argnums=(0, 1))
    check_jvp(_edges_copied_then_swapped, u0, 0.1)
    check_hvp(_edges_copied_then_swapped, u0, 0.1, argnums=(0, 1))


def test_an_alias_made_before_the_merge_is_still_refused():
    """``w = unew`` before the swap loop: after one swap ``w[0] = ...`` writes into the
    other buffer, which one shadow per name would miss (a wrong gradient)."""
    u0 = np.linspace(0.1, 1.0, 5)
    with pytest.raises(adjit.UnsupportedError,
                       match=r"'unew', which holds different arrays on different paths"):
        adjit.grad(_alias_made_before_the_swap_loop)(u0, 3)
    check_jvp(_alias_made_before_the_swap_loop, u0, 3)


@numba.njit
def _forces(pos, forces):
    for i in range(pos.shape[0]):
        forces[i] = -pos[i] ** 3
    return np.sum(pos ** 4) / 4


def _verlet_like(x):
    # positions read by the force helper before the loop, updated in place, wrapped
    # into a new array (pos = pos % L) and read again
    y = x.copy()
    F = np.zeros_like(y)
    p = _forces(y, F)
    for _ in range(3):
        y += 0.1 * F
        y = y % 4.0
        p = _forces(y, F)
    return np.sum(y) + p


def _verlet_like_read_before(x):
    # the same, with the value read before the loop in the result: the array the
    # first in-place update overwrites was read by the helper
    y = x.copy()
    F = np.zeros_like(y)
    p0 = _forces(y, F)
    for _ in range(3):
        y += 0.1 * F * y
        y = np.sin(y) + 0.5
        _forces(y, F)
    return np.sum(y * y) + p0 * p0


def _verlet_inline_force(x):
    # the force computed inline from the state before the loop: a new array of it
    y = x.copy()
    F = -y ** 3
    for _ in range(3):
        y += 0.1 * F
        y = y % 4.0
        F = -y ** 3
    return np.sum(y * y)


@pytest.mark.parametrize("f", [_verlet_like, _verlet_like_read_before, _verlet_inline_force])
def test_a_helper_reading_the_state_before_the_loop_is_no_second_name(f):
    """A helper that only reads the array and returns a float, or arithmetic making a new
    array of it, made no second name for it, but counted as one: grad and hvp refused
    the velocity-Verlet pattern."""
    x = np.array([0.5, 1.2, 2.1])
    check_grad(f, x)
    check_jvp(f, x)
    check_hvp(f, x)


def _updated_then_rebound(x0):
    # a velocity-Verlet-like loop: a constant increment made from the state's shape,
    # then the state rebound to a new array (a periodic wrap, a rescale)
    x = x0.copy()
    v = np.ones_like(x)
    for _ in range(3):
        x += v
        x = x * 0.5
    return np.sum(x ** 2)


def test_an_array_read_only_for_its_shape_is_no_second_name():
    """``np.ones_like(x)`` reads ``x``'s shape and makes a new array: no alias of the copy
    that the loop merges with its rebound state (this was refused, with advice that
    could not be followed)."""
    from adjit.testing import check_hvp
    x0 = np.array([0.5, 1.0, 2.5])
    check_grad(_updated_then_rebound, x0)
    check_jvp(_updated_then_rebound, x0)
    check_hvp(_updated_then_rebound, x0)


def _two_updates_per_step(vel, n):
    # npbench's nbody: two half-step kicks of one argument per iteration
    for _ in range(n):
        vel += vel * 0.1
        vel += vel * 0.2
    return np.sum(vel * vel)


def test_two_in_place_updates_of_one_argument_in_a_loop():
    """The second update writes through a copy of the loop's phi of ``vel`` with itself:
    one array, not a merge of two (it was refused as one)."""
    from adjit.testing import check_hvp
    x = np.array([0.3, -0.2, 1.1])
    assert np.allclose(adjit.grad(_two_updates_per_step)(x.copy(), 3), 2 * x * 1.32 ** 6)
    check_grad(_two_updates_per_step, x.copy(), 3)
    check_jvp(_two_updates_per_step, x.copy(), 3)
    check_hvp(_two_updates_per_step, x.copy(), 3)


def _binomial_tree(x, put):
    # the vectorised American-option tree: C is made on either branch under one name
    if put:
        C = np.maximum(x * 2.0, 0.0)
    else:
        C = np.maximum(x * 3.0, 0.0)
    for i in range(2, -1, -1):
        C[:i + 1] = 0.5 * (C[1:i + 2] + C[0:i + 1])
        C = C[:-1]
        C = np.maximum(C, 0.1)
    return C[0]


def test_a_merge_of_two_arrays_with_one_name_says_so():
    """Both arrays are named C: the message says the paths hold different arrays instead
    of "C on one path and another array on another"."""
    x = np.array([0.3, 0.5, 0.9, 1.2])
    with pytest.raises(adjit.UnsupportedError,
                       match=r"writing into 'C', which holds different arrays on different "
                             r"paths to this write"):
        adjit.grad(_binomial_tree)(x, True)
    check_jvp(_binomial_tree, x, True)


@numba.njit
def _jacobi_sweep(u, unew):
    for i in range(1, u.shape[0] - 1):
        unew[i] = u[i + 1] * u[i - 1] + 0.5 * u[i]


def _swap_with_the_argument(u):
    """Double buffering with the argument itself as one buffer: every other sweep
    writes into the caller's array."""
    unew = np.zeros_like(u)
    for _ in range(3):
        for i in range(1, u.shape[0] - 1):
            unew[i] = u[i + 1] * u[i - 1] + 0.5 * u[i]
        u, unew = unew, u
    return np.sum(u * u)


def _helper_swaps_with_the_argument(u):
    """The same, the sweep in an ``@njit`` helper filling its ``unew``."""
    unew = np.zeros_like(u)
    for _ in range(3):
        _jacobi_sweep(u, unew)
        u, unew = unew, u
    return np.sum(u * u)


def _helper_swaps_with_a_copy(u):
    """The advice followed: the argument copied first."""
    u = u.copy()
    unew = np.zeros_like(u)
    for _ in range(3):
        _jacobi_sweep(u, unew)
        u, unew = unew, u
    return np.sum(u * u)


@pytest.mark.parametrize("f", [_swap_with_the_argument, _helper_swaps_with_the_argument])
def test_buffers_swapped_with_the_argument_differentiate(f):
    """After one swap the loop writes into the argument: hvp was wrong and grad left the
    argument changed; then it was refused. Reverse mode now derives the function as if
    it copied the argument first (``transform/reverse/swapped_arguments.py``), and
    leaves the caller's array as it was; forward mode runs the primal's writes."""
    u0 = np.array([0.3, -1.2, 0.7, 2.0, -0.5])
    before = u0.copy()
    check_grad(f, u0)
    check_hvp(f, u0)
    assert np.array_equal(u0, before)
    u = u0.copy()
    value, g = adjit.value_and_grad(f)(u)
    assert np.array_equal(u, before)
    assert value == f(u0.copy())
    v = np.array([1.0, 0.3, 0.2, 0.1, 0.5])
    tangent = adjit.jvp(f)(u0.copy(), v.copy())[1]
    assert np.isclose(tangent, np.dot(g, v), rtol=1e-12)
    expected = (f(u0 + 1e-6 * v) - f(u0 - 1e-6 * v)) / 2e-6
    assert np.isclose(tangent, expected, rtol=1e-7)


def _swap_slices_with_the_argument(u, k, n):
    """Whole-slice sweeps (``unew[1:-1] = ...``) swapped with the argument."""
    unew = np.empty_like(u)
    unew[0] = 0.0
    unew[-1] = 0.0
    for _ in range(n):
        unew[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]) * k[1:-1]
        u, unew = unew, u
    return np.sum(u * u)


def _swap_grids_with_the_argument(U, n):
    """A 2-D five-point sweep swapped with the argument."""
    V = np.zeros_like(U)
    for _ in range(n):
        for i in range(1, U.shape[0] - 1):
            for j in range(1, U.shape[1] - 1):
                V[i, j] = 0.25 * (U[i - 1, j] + U[i + 1, j] + U[i, j - 1]
                                  + U[i, j + 1]) + 0.1 * U[i, j] ** 2
        U, V = V, U
    return np.sum(U * U)


@numba.njit
def _relax_copied(u, k, n):
    """The argument copied, then the buffer copied from the copy: the copy is read twice."""
    u = u.copy()
    unew = u.copy()
    for _ in range(n):
        for i in range(1, u.shape[0] - 1):
            unew[i] = 0.5 * (u[i - 1] + u[i + 1]) - 0.01 * k[i] * u[i] * u[i]
        u, unew = unew, u
    return u


def _relaxed_energy(u0, k):
    u = _relax_copied(u0, k, 3)
    return np.sum(u * u)


_RNG = np.random.default_rng(5)
_SWAPS = [(_swap_slices_with_the_argument, (_RNG.random(7), _RNG.random(7), 3), (0, 1)),
          (_swap_slices_with_the_argument, (_RNG.random(7), _RNG.random(7), 4), (0, 1)),
          (_swap_grids_with_the_argument, (_RNG.random((4, 5)), 3), 0),
          (_relaxed_energy, (_RNG.random(6), _RNG.random(6)), (0, 1))]


@pytest.mark.parametrize("f, args, argnums", _SWAPS, ids=lambda v: getattr(v, "__name__", ""))
def test_more_swapped_buffers_differentiate(f, args, argnums):
    before = [a.copy() for a in args if isinstance(a, np.ndarray)]
    check_grad(f, *args, argnums=argnums)
    check_jvp(f, *args)
    check_hvp(f, *args, argnums=argnums)
    assert all(np.array_equal(a, b) for a, b in zip(
        [a for a in args if isinstance(a, np.ndarray)], before))


@numba.njit
def _relax_returning_a_buffer(u, k, n):
    unew = u.copy()
    for _ in range(n):
        for i in range(1, u.shape[0] - 1):
            unew[i] = 0.5 * (u[i - 1] + u[i + 1]) - 0.01 * k[i] * u[i] * u[i]
        u, unew = unew, u
    return u


def _energy_of_returned_buffer(u0, k):
    u = _relax_returning_a_buffer(u0, k, 3)
    return np.sum(u * u)


def test_a_helper_returning_a_buffer_swapped_with_its_argument_is_refused():
    """Its result is the caller's array after an even number of sweeps: a caller's
    reverse pass cannot tell. Refused at the call, saying to copy the argument first
    (``_relax_copied``, which then works)."""
    u0, k = _RNG.random(6), _RNG.random(6)
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'_relax_returning_a_buffer' writing into its arguments.*"
                             r"u = u\.copy\(\)"):
        adjit.grad(_energy_of_returned_buffer)(u0, k)
    check_jvp(_energy_of_returned_buffer, u0, k)


def test_buffers_swapped_with_a_copy_differentiate():
    u0 = np.array([0.3, -1.2, 0.7, 2.0, -0.5])
    before = u0.copy()
    check_grad(_helper_swaps_with_a_copy, u0)
    check_jvp(_helper_swaps_with_a_copy, u0)
    check_hvp(_helper_swaps_with_a_copy, u0)
    assert np.array_equal(u0, before)
