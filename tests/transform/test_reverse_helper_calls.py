"""Arrays returned by @njit helpers: the reverse pass recomputes them by calling the
helper again, except when the helper draws random numbers or writes into its arguments:
then it keeps the array the forward sweep got (a second call would draw other numbers, or
write the arguments again from their updated values)."""
import math

import numpy as np
import numba
import pytest

import adjit
from adjit.testing import check_grad


@numba.njit
def _scaled(x):
    return x * 3.0


@numba.njit
def _noisy_scaled(x):
    return x * np.random.standard_normal()


@numba.njit
def _calls_noisy(x):
    return _noisy_scaled(x) + 1.0


def squares_of_scaled(x):
    y = _scaled(x)
    return np.sum(y * y)


def squares_of_noisy(x):
    np.random.seed(3)
    y = _noisy_scaled(x)
    return np.sum(y * y)


def squares_of_nested_noisy(x):
    np.random.seed(3)
    y = _calls_noisy(x)
    return np.sum(y * y)


def test_deterministic_helper_is_called_again():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(adjit.grad(squares_of_scaled)(x), 18.0 * x, rtol=1e-14)
    check_grad(squares_of_scaled, x)


@numba.njit
def _seeded_draw():
    np.random.seed(3)
    return np.random.standard_normal()


@pytest.mark.parametrize("fn, shift", [(squares_of_noisy, 0.0), (squares_of_nested_noisy, 1.0)])
def test_random_helper_result_is_kept_not_drawn_again(fn, shift):
    """y = x * r (+ 1) with one draw r: the gradient is 2 r (r x + shift) for the r of
    this call (it was refused: the reverse pass would call the helper again and draw
    another r)."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.5, -1.0, 2.0])
    r = _seeded_draw()
    np.testing.assert_allclose(adjit.grad(fn)(x), 2.0 * r * (r * x + shift), rtol=1e-13)
    check_grad(fn, x)
    check_jvp(fn, x)
    check_hvp(fn, x)


@numba.njit
def _generator_scaled(x, rng):
    return x * rng.standard_normal()


def squares_of_generator_scaled(x, rng):
    y = _generator_scaled(x, rng)
    return np.sum(y * y)


def test_helper_drawing_from_a_generator_argument_uses_its_one_draw():
    r = np.random.default_rng(0).standard_normal()
    x = np.ones(3)
    np.testing.assert_allclose(
        adjit.grad(squares_of_generator_scaled)(x, np.random.default_rng(0)),
        2.0 * r * r * x, rtol=1e-13)


@numba.njit
def _gaussian(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


@numba.njit
def _kde(eval_points, samples, bandwidths):
    # numba-examples' kernel density estimate: enumerate and zip over the arguments
    result = np.zeros_like(eval_points)
    for i, eval_x in enumerate(eval_points):
        for sample, bandwidth in zip(samples, bandwidths):
            result[i] += _gaussian((eval_x - sample) / bandwidth) / bandwidth
        result[i] /= len(samples)
    return result


def _kde_total(eval_points, samples, bandwidths):
    return np.sum(_kde(eval_points, samples, bandwidths) ** 2)


def test_a_helper_iterating_its_arguments_does_not_write_them():
    # enumerate(x) and zip(a, b) only read their arrays: the helper's result is an
    # array made from differentiated inputs, recomputed by calling the helper again
    from adjit.testing import check_hvp, check_jvp
    args = (np.linspace(-1.0, 1.0, 4), np.array([0.3, -0.2, 0.5]), np.array([0.8, 1.1, 0.6]))
    check_grad(_kde_total, *args, argnums=(0, 1, 2))
    check_jvp(_kde_total, *args)
    check_hvp(_kde_total, *args, argnums=(0, 1, 2))


def _scaled_sines(x, a):
    return np.sum(np.sin(x)) * a


def test_a_plain_function_transformed_first_then_jitted_as_a_helper():
    """``grad(f)`` of the plain function, then ``numba.njit(f)`` called from other code:
    the shared derived program held the plain function, which has no ``py_func`` (an
    internal AttributeError in every mode)."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.3, -0.2])
    assert np.allclose(adjit.grad(_scaled_sines)(x, 2.0), 2.0 * np.cos(x), rtol=1e-14)
    helper = numba.njit(_scaled_sines)

    def wrapped(x, a):
        return helper(x, a) + 1.0
    check_grad(wrapped, x, 2.0, argnums=(0, 1))
    check_jvp(wrapped, x, 2.0)
    check_hvp(wrapped, x, 2.0)


@numba.njit
def _doubled(x, out=None):
    if out is None:
        out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i] * x[i]
    return out


def _into_given_out(x):
    b = np.empty_like(x)
    _doubled(x, out=b)
    return np.sum(b * np.sin(b))


def _into_new_out(x):
    return np.sum(np.sin(_doubled(x)))


def test_the_out_is_none_idiom_with_out_given_and_omitted():
    """``if out is None: out = np.empty_like(x)`` with ``out`` given: the branch is never
    taken, and reverse mode refused the helper as one writing its argument and returning
    a new array (the capture now prunes it, as Numba does for an omitted ``out``)."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.3, -0.7, 0.5])
    for f in (_into_given_out, _into_new_out):
        check_grad(f, x)
        check_jvp(f, x)
        check_hvp(f, x)


@numba.njit
def _forces(x, f):
    pot = 0.0
    for i in range(x.shape[0]):
        f[i] = -x[i] ** 3 + 0.1 * x[(i + 1) % x.shape[0]]
        pot += 0.25 * x[i] ** 4
    return f, pot


def _md_steps(x0):
    x = x0.copy()
    f = np.zeros_like(x)
    f, pot = _forces(x, f)
    for _ in range(3):
        x += 0.1 * f
        f, pot = _forces(x, f)
    return pot + np.sum(f * f)


def test_a_helper_returning_the_array_it_filled_in_a_tuple_rebinds_it():
    """``f, pot = forces(x, f)`` in a time loop (molecular dynamics): the loop's phi
    merges f with the tuple item the helper returns, which is f itself; reverse mode
    refused it as views of an array from different branches."""
    from adjit.testing import check_hvp, check_jvp
    x0 = np.array([0.5, -0.3, 0.8])
    check_grad(_md_steps, x0)
    check_jvp(_md_steps, x0)
    check_hvp(_md_steps, x0)


@numba.njit
def _heat_step(u, unew, r):
    n = u.shape[0]
    unew[0] = 0.0
    unew[n - 1] = 0.0
    for i in range(1, n - 1):
        unew[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return unew


def _double_buffered_heat(u0, r):
    u = u0.copy()
    unew = np.empty_like(u)
    for _ in range(10):
        unew = _heat_step(u, unew, r)
        u, unew = unew, u
    return np.sum(u ** 2)


def test_double_buffering_with_the_filled_buffer_returned():
    """``unew = step(u, unew, r); u, unew = unew, u``: the loop's phi takes the helper's
    result, which is its ``unew`` argument; reverse mode refused it as merging views."""
    from adjit.testing import check_hvp, check_jvp
    u0 = np.sin(np.linspace(0.0, 3.0, 8))
    check_grad(_double_buffered_heat, u0, 0.2, argnums=(0, 1))
    check_jvp(_double_buffered_heat, u0, 0.2)
    check_hvp(_double_buffered_heat, u0, 0.2)


_PAIRS = np.array([[0, 2], [1, 0]])  # module level: Numba types it (and its rows) read-only
_SCALES = np.array([0.5, 1.5, 2.0])


@numba.njit
def _sgd_rows(W, idx, lr):
    for i in range(idx.shape[0]):
        W[idx[i]] -= lr * W[idx[i]] ** 2
    return 0.0


def _word2vec_like_step(W):
    for s in range(2):
        _sgd_rows(W, _PAIRS[s], 0.1)
    return np.sum(W ** 2)


@numba.njit
def _scale_into(x, c, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * c[i]


def _scaled_by_a_global(x):
    out = np.zeros(3)
    _scale_into(x, _SCALES, out)
    return np.sum(out ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
@pytest.mark.parametrize("f, arg", [
    (_word2vec_like_step, np.array([[0.3, 0.5], [0.2, -0.4], [0.7, 0.1]])),
    (_scaled_by_a_global, np.array([0.1, 0.2, 0.3]))])
def test_a_read_only_global_array_passed_to_a_helper(f, arg, mode):
    """A module-level array (or its row) is read-only to Numba; the helper's derivative
    was refused as an internal error (built for a read-only type, called with a
    writable one)."""
    from adjit.testing import check_hvp, check_jvp
    {"grad": check_grad, "jvp": check_jvp, "hvp": check_hvp}[mode](f, arg.copy())
    if f is _scaled_by_a_global:
        want = {"grad": 2 * arg * _SCALES ** 2, "jvp": np.sum(2 * arg * _SCALES ** 2),
                "hvp": 2 * _SCALES ** 2}[mode]
        got = {"grad": lambda: adjit.grad(f)(arg), "jvp": lambda: adjit.jvp(f)(arg, np.ones(3))[1],
               "hvp": lambda: adjit.hvp(f)(arg, np.ones(3))}[mode]()
        np.testing.assert_allclose(got, want, rtol=1e-13)


@numba.njit
def _thomas(a, b, c, d):
    """A tridiagonal solve as it is commonly written: eliminates into ``b`` and ``d`` in
    place, then back-substitutes into a new array."""
    n = d.shape[0]
    for i in range(1, n):
        w = a[i] / b[i - 1]
        b[i] = b[i] - w * c[i - 1]
        d[i] = d[i] - w * d[i - 1]
    x = np.empty(n)
    x[n - 1] = d[n - 1] / b[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = (d[i] - c[i] * x[i + 1]) / b[i]
    return x


def _implicit_heat(u0, k, steps):
    """Backward Euler steps of u_t = k u_xx, one tridiagonal solve per step."""
    n = u0.shape[0]
    u = u0.copy()
    for _ in range(steps):
        a = np.full(n, -k)
        c = np.full(n, -k)
        b = np.full(n, 1.0 + 2.0 * k)
        u = _thomas(a, b, c, u.copy())
    return np.sum(u * u)


def _solve_in_callers_arrays(diag, rhs):
    """The helper eliminates into the caller's own arguments, read again afterwards."""
    n = rhs.shape[0]
    x = _thomas(np.full(n, -1.0), diag, np.full(n, -1.0), rhs)
    return np.sum(x * x) + np.sum(diag * rhs)


@numba.njit
def _normalise_then_square(v):
    s = np.sqrt(np.sum(v * v))
    for i in range(v.shape[0]):
        v[i] /= s
    out = np.empty_like(v)
    for i in range(v.shape[0]):
        out[i] = v[i] * v[i] * s
    return out


def _result_written_after(x, y):
    """The new array is written by the caller; the written argument is read after."""
    v = x * y
    w = _normalise_then_square(v)
    w[0] = w[0] * 3.0
    return np.sum(w * v) * y + w[1]


def _in_a_branch(x, flag):
    v = x.copy()
    if flag > 0:
        w = _normalise_then_square(v)
    else:
        w = v * 1.0
    return np.sum(w * x)


_RNG = np.random.default_rng(1)
WRITING_HELPER_CASES = [
    (_implicit_heat, (_RNG.random(7), 0.3, 3), (0, 1)),
    (_solve_in_callers_arrays, (4.0 + _RNG.random(6), _RNG.random(6)), (0, 1)),
    (_result_written_after, (_RNG.random(5) + 0.1, 0.7), (0, 1)),
    (_in_a_branch, (_RNG.random(5) + 0.1, 1), 0),
    (_in_a_branch, (_RNG.random(5) + 0.1, -1), 0),
]


@pytest.mark.parametrize("fn, args, argnums", WRITING_HELPER_CASES,
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_helper_writing_its_arguments_and_returning_a_new_array(fn, args, argnums):
    """Reverse mode refused it (it recomputes a helper's new array by calling the helper
    again, which would eliminate twice); it now keeps the array the forward sweep got."""
    from adjit.testing import check_hvp, check_jvp
    check_grad(fn, *args, argnums=argnums)
    check_jvp(fn, *args)
    check_hvp(fn, *args, argnums=argnums)


def test_thomas_gradient_matches_the_closed_form():
    """d/d rhs of sum(x * x) with x = A^-1 rhs is 2 A^-T x (A symmetric here)."""
    n = 6
    diag, rhs = 4.0 + _RNG.random(n), _RNG.random(n)

    def loss(diag, rhs):
        return np.sum(_thomas(np.full(6, -1.0), diag.copy(), np.full(6, -1.0), rhs.copy()) ** 2)
    A = np.diag(diag) - np.eye(n, k=1) - np.eye(n, k=-1)
    x = np.linalg.solve(A, rhs)
    g_diag, g_rhs = adjit.grad(loss, argnums=(0, 1))(diag, rhs)
    lam = np.linalg.solve(A.T, 2.0 * x)
    np.testing.assert_allclose(g_rhs, lam, rtol=1e-12)
    np.testing.assert_allclose(g_diag, -lam * x, rtol=1e-12)


@numba.njit
def _scaled_in_place_maybe_returned(v, same):
    v *= 2.0
    if same:
        return v
    return v * 3.0


def _maybe_the_argument(x):
    v = x + 1.0
    return np.sum(_scaled_in_place_maybe_returned(v, True) * x)


def test_a_writing_helper_returning_an_argument_on_one_path_is_refused_by_name():
    from adjit.testing import check_jvp
    x = np.array([0.3, -0.7, 0.5])
    with pytest.raises(adjit.UnsupportedError,
                       match="'_scaled_in_place_maybe_returned' writing into its arguments "
                             "and returning an array that may be one of them"):
        adjit.grad(_maybe_the_argument)(x)
    check_jvp(_maybe_the_argument, x)  # forward mode handles it
