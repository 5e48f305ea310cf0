"""Forward mode over the corpus: jvp against finite differences, and forward-over-reverse
(hvp = jvp(grad(f))) against finite differences of the verified gradient."""
import math

import numba
import numpy as np
import pytest
from corpus import all_cases

import adjit
from adjit.testing import check_jvp

ALL = all_cases()
SCALAR = [(m, c) for m, c in ALL
          if isinstance(c.argnums, int) and all(isinstance(a, (float, int, np.floating))
                                                for a in c.args)
          and isinstance(c.args[c.argnums], float)]


def _ids(cases):
    return [f"{m}-{c.id}" for m, c in cases]


@pytest.mark.parametrize("case", [c for _, c in ALL], ids=_ids(ALL))
def test_jvp(case):
    try:
        check_jvp(case.fn, *case.args)
    except adjit.UnsupportedError as exc:
        pytest.skip(f"reverse and forward mode both reject it: {exc}".splitlines()[0]) \
            if _reverse_rejects(case) else pytest.fail(str(exc))


def _reverse_rejects(case):
    try:
        adjit.grad(case.fn, case.argnums)(*case.args)
    except adjit.UnsupportedError:
        return True
    return False


@pytest.mark.parametrize("case", [c for _, c in SCALAR], ids=_ids(SCALAR))
def test_hvp_forward_over_reverse(case):
    if _reverse_rejects(case):
        pytest.skip("reverse mode rejects it (UnsupportedError)")
    g = adjit.grad(case.fn, case.argnums)
    k = case.argnums
    x = case.args[k]
    h = 1e-4 * max(1.0, abs(x))

    def at(v):
        args = list(case.args)
        args[k] = v
        return g(*args)

    fd = (at(x + h) - at(x - h)) / (2 * h)
    hv = adjit.hvp(case.fn, k)(*case.args, 1.0)
    assert abs(hv - fd) <= 1e-4 * max(1.0, abs(fd)), (hv, fd)
    grad_value, hv2 = adjit.jvp(g)(*case.args, *[1.0 if i == k else 0.0
                                                   for i, a in enumerate(case.args)
                                                   if isinstance(a, float)])
    assert hv2 == pytest.approx(hv, rel=1e-12, abs=1e-12)
    assert grad_value == pytest.approx(g(*case.args), rel=1e-12, abs=1e-12)


def chain_of_ufuncs(x):
    return np.sum(np.sin(np.cos(np.exp(x))))


def array_arithmetic(x, y):
    return np.sum((x * y - 2.0) ** 2 / (1.0 + y * y))


def scaled_dot(x, a):
    return np.dot(np.exp(x) * a, x)


@pytest.mark.parametrize("fn, args", [
    (chain_of_ufuncs, (np.linspace(0.1, 1.0, 12).reshape(3, 4),)),
    (array_arithmetic, (np.linspace(0.1, 1.0, 6), np.cos(np.linspace(0.1, 1.0, 6)))),
    (scaled_dot, (np.linspace(0.1, 1.0, 5), 0.7)),
], ids=["chain_of_ufuncs", "array_arithmetic", "scaled_dot"])
def test_jvp_elementwise_array_operations(fn, args):
    check_jvp(fn, *args)


def _matern_kernel_sum(x):
    """A Matern-3/2 kernel: its distance matrix is 0 on the diagonal, where sqrt's
    partial is infinite and the tangent of the difference exactly 0."""
    r = np.sqrt((x[:, None] - x[None, :]) ** 2)
    return np.sum((1.0 + r) * np.exp(-r))


def _matern_kernel_sum_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            r = math.sqrt((x[i] - x[j]) ** 2)
            s += (1.0 + r) * math.exp(-r)
    return s


def test_jvp_of_an_array_sqrt_at_an_exact_zero_is_guarded_as_the_loop_is():
    """A zero tangent times sqrt's infinite partial at 0 gave NaN for the array code
    (plain products of whole arrays); it is 0, as in the loop and in reverse mode."""
    x, v = np.array([0.3, -0.4, 1.0]), np.array([1.0, 2.0, -1.0])
    tangent = adjit.jvp(_matern_kernel_sum)(x, v)[1]
    assert tangent == pytest.approx(adjit.jvp(_matern_kernel_sum_loop)(x, v)[1], rel=1e-12)
    assert tangent == pytest.approx(adjit.grad(_matern_kernel_sum)(x) @ v, rel=1e-12)
    d = lambda x: np.sum(np.sqrt((x - x[0]) ** 2))  # noqa: E731
    assert adjit.jvp(d)(x, v)[1] == pytest.approx(-3.0, rel=1e-12)  # |x_i - x_0| . v
    np.testing.assert_allclose(adjit.hvp(_matern_kernel_sum)(x, v),
                               adjit.hvp(_matern_kernel_sum_loop)(x, v), rtol=1e-12)


def _arctan2_sum(x, y):
    return np.sum(np.arctan2(x, y))


def test_jvp_broadcasts_a_length_one_operand():
    check_jvp(_arctan2_sum, np.linspace(0.2, 1.0, 3), np.array([0.7]))


def test_jvp_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError):
        adjit.jvp(_arctan2_sum)(np.ones(3), np.ones(2), np.ones(3), np.ones(2))


@numba.njit
def relu(z):
    return z * (z >= 0)


def small_mlp(W2, W1, Y, X):
    return np.sum((Y - W2 @ relu(W1 @ X)) ** 2)


def kron_sum(a, b):
    return np.sum(np.kron(a, b))


def tanh_matvec(A, x):
    return np.sum(np.tanh(np.dot(A, x)))


def test_jvp_bilinear_array_products():
    rng = np.random.default_rng(3)
    check_jvp(small_mlp, rng.standard_normal((3, 4)), rng.standard_normal((4, 5)),
              rng.standard_normal((3, 2)), rng.standard_normal((5, 2)))
    check_jvp(kron_sum, rng.standard_normal((2, 2)), rng.standard_normal((3, 3)))
    # both factors varying: one fused helper (the MatrixProduct rule's forward helper, rules/matmul.py), any shapes
    check_jvp(kron_sum, rng.standard_normal((2, 3)), rng.standard_normal((4, 1)))
    check_jvp(kron_sum, rng.standard_normal(3), rng.standard_normal(4))
    check_jvp(small_mlp, np.asfortranarray(rng.standard_normal((3, 4))),
              rng.standard_normal((4, 5)), rng.standard_normal((3, 2)),
              rng.standard_normal((5, 2)))
    check_jvp(tanh_matvec, rng.standard_normal((3, 4)), rng.standard_normal(4))


@numba.njit
def _accumulate_squares(x, g):
    for i in range(x.shape[0]):
        g[i] += x[i] * x[i]


def _accumulates_into(x, g):
    _accumulate_squares(x, g)  # (tslearn's jacobian product: G += ...)
    return np.sum(g * g)


def test_jvp_leaves_the_tangents_of_written_arguments_alone():
    x, g = np.array([0.5, 1.0, 1.5]), np.array([0.1, -0.2, 0.3])
    dx, dg = np.ones(3), np.array([1.0, 0.0, 2.0])
    g_in = g.copy()
    value, tan = adjit.jvp(_accumulates_into)(x, g, dx, dg)
    final = g_in + x * x
    assert value == pytest.approx(np.sum(final * final), rel=1e-14)
    assert tan == pytest.approx(np.sum(2 * final * (dg + 2 * x * dx)), rel=1e-14)
    np.testing.assert_array_equal(dg, [1.0, 0.0, 2.0])  # was updated in place
    np.testing.assert_array_equal(g, final)  # the primal's own write stays, as in Numba
    check_jvp(_accumulates_into, x, g_in)


def _squares_in_a_dict(x):
    d = numba.typed.Dict.empty(key_type=numba.int64, value_type=numba.float64)
    for i in range(x.shape[0]):
        d[i] = x[i] ** 2
    s = 0.0
    for k in d:
        s += d[k]
    return s


def test_a_typed_dict_write_is_refused_alike_in_both_modes():
    """A differentiated value written into a typed Dict: both modes name the Dict (jvp
    called it "a constant array")."""
    x = np.ones(3)
    for transform, args in ((adjit.jvp(_squares_in_a_dict), (x, x)),
                            (adjit.grad(_squares_in_a_dict), (x,))):
        with pytest.raises(adjit.UnsupportedError,
                           match=r"(?s)into the typed Dict 'd'.*store them in an array"):
            transform(*args)


def _parameters_in_a_dict(x):
    d = {"a": x[0], "b": x[1]}
    return d["a"] * d["b"]


def test_a_dict_literal_is_refused_by_name_with_advice_in_both_modes():
    """jvp printed the raw IR of the 'build_map' node; grad named Numba's Dict type."""
    x = np.array([0.3, -0.7])
    for transform, args in ((adjit.jvp(_parameters_in_a_dict), (x, x)),
                            (adjit.grad(_parameters_in_a_dict), (x,))):
        with pytest.raises(adjit.UnsupportedError) as info:
            transform(*args)
        message = str(info.value)
        assert "'d'" in message and "$" not in message and "build_map" not in message
        assert "instead" in message or "keep named parameters" in message


def _scaled_by_a_dict_entry(x, k):
    d = numba.typed.Dict.empty(key_type=numba.types.unicode_type,
                               value_type=numba.float64)
    d["k"] = k
    return np.sum(d["k"] * x * x)


def test_hvp_holds_the_other_arguments_fixed_without_tangents():
    """hvp(f, argnums=0) gave every float argument a (zero) tangent, so a float ``k``
    stored in a typed Dict was refused, though grad(f, 0) accepts it, and the message
    named adjit's 'grad_...' and a spliced 'd#fwd#NN'."""
    x = np.array([0.5, -0.3, 0.8])
    np.testing.assert_allclose(adjit.hvp(_scaled_by_a_dict_entry, argnums=0)(x, 1.2, np.ones(3)),
                               [2.4, 2.4, 2.4], rtol=1e-14)
    with pytest.raises(adjit.UnsupportedError) as info:  # k differentiated: refused
        adjit.hvp(_scaled_by_a_dict_entry, argnums=(0, 1))(x, 1.2, np.ones(3), 1.0)
    message = str(info.value)
    assert "'_scaled_by_a_dict_entry'" in message and "'d'" in message and "#" not in message


def _float32_dot_squared_in_float64(w, X):
    acc = 0.0
    for i in range(X.shape[0]):
        z = np.float32(0.0)
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        zz = np.float64(z)  # upcast before squaring
        acc += zz * zz
    return acc


def _upcast_square(v):
    u = np.float64(np.float32(v))
    return u * u


def test_hvp_through_an_upcast_of_a_float32_value():
    """The tangent of np.float64(<float32>) kept the float32 type; pushed beside the
    float64 value it was read back as float64 bits: hvp was 0 (grad and jvp right)."""
    X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], dtype=np.float32)
    w, v = np.array([0.3, -0.2], dtype=np.float32), np.array([1.0, 0.0], dtype=np.float32)
    np.testing.assert_allclose(adjit.hvp(_float32_dot_squared_in_float64)(w, X, v),
                               2 * (X.T @ X) @ v, rtol=1e-6)
    assert adjit.hvp(_upcast_square)(0.7, 1.0) == pytest.approx(2.0, rel=1e-12)


@numba.njit
def _maybe(x, k):
    if k < 0:
        return None
    return x * x + k


def _through_an_optional_helper(x):
    r = _maybe(x, 1)
    if r is not None:
        return np.sin(r)
    return 0.0


def _through_an_optional_value(x, k):
    r = x * x + k if k > 0 else None
    if r is not None:
        return np.sin(r)
    return 0.0


def test_a_value_that_may_be_none_is_refused_in_both_modes():
    """An optional float carries no tangent: jvp gave a zero tangent through it (a wrong
    number), where grad refuses it."""
    for f, args, tangents in ((_through_an_optional_helper, (0.7,), (1.0,)),
                              (_through_an_optional_value, (0.7, 1), (1.0,))):
        with pytest.raises(adjit.UnsupportedError, match="may be None|Optional"):
            adjit.jvp(f)(*args, *tangents)
        with pytest.raises(adjit.UnsupportedError, match="Optional"):
            adjit.grad(f)(*args)


def _writes_through_ravel(x):
    y = x.ravel()
    y[0] = 5.0 * y[1]
    return np.sum(x * x * x)


def test_a_fortran_tangent_of_an_argument_written_through_a_view():
    """The tangent of an argument the function writes into is copied (the caller's stays
    as it was); a Fortran-ordered one was copied in its own layout, and the view
    ``x.ravel()`` of it failed ("incompatible shape for array")."""
    X = np.arange(1.0, 7.0).reshape(2, 3)
    V = np.asfortranarray(np.arange(6.0).reshape(2, 3) + 1.0)
    before = V.copy()
    value, tangent = adjit.jvp(_writes_through_ravel)(X.copy(), V)
    Y = X.copy()
    Y[0, 0] = 5.0 * Y[0, 1]
    W = V.copy()
    W[0, 0] = 5.0 * W[0, 1]
    assert value == np.sum(Y ** 3) and tangent == pytest.approx(np.sum(3.0 * Y * Y * W))
    assert np.array_equal(V, before) and V.flags.f_contiguous
    hv = adjit.hvp(_writes_through_ravel)(X.copy(), V)
    assert np.allclose(hv, adjit.jvp(adjit.grad(_writes_through_ravel))(X.copy(), V)[1])
    assert np.allclose(hv, adjit.hvp(_writes_through_ravel)(X.copy(), np.ascontiguousarray(V)))
