"""float32 through forward-over-reverse and forward mode. A forward rule that computes a
float32 value's tangent in float64 (``np.linalg.cholesky``, ``np.cumprod``, ``slogdet``)
had its tangent record read back as float32 words under ``hvp`` (wrong Hessians, some of
1e27); tape pushes are now checked against the types their pops read
(``runtime.tape.checked_push``) and tangents go in their primal's type
(``forward_tape.record_form``). Each hvp is compared with central differences of the
float64 gradient along the same direction."""
import numpy as np
import numba
import pytest
from numba import types

import adjit
from adjit.runtime.tape import checked_push, record_fits
from adjit.testing import check_grad

A = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])
V = np.array([[1.0, 0.2, 0.0], [0.2, 0.5, 0.1], [0.0, 0.1, -0.3]])


def _half_logdet_by_cholesky(a):
    return np.sum(np.log(np.diag(np.linalg.cholesky(a))))


def _squared_logdet(a):
    _, ld = np.linalg.slogdet(a)
    return ld * ld


def _cumprod_energy(w):
    return np.sum(np.cumprod(w) ** 2)


def _hvp_by_differences(f, x, v, eps=1e-5):
    g = adjit.grad(f)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def _eigenvalue_energy(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


def _eigenvector_weights(a):
    w, vecs = np.linalg.eigh(a)
    return np.sum(w * vecs[0] ** 2) + np.sum(vecs[:, 1] * np.array([0.3, -0.2, 0.5]))


@pytest.mark.parametrize("f, x, v", [
    (_half_logdet_by_cholesky, A, V),
    (_squared_logdet, A, V),
    # the eigh rules multiplied float64 with float32 matrices (an internal error)
    (_eigenvalue_energy, A, V),
    (_eigenvector_weights, A, V),
    (_cumprod_energy, np.array([0.4, -0.3, 0.8, 1.1]), np.array([1.0, -0.5, 0.3, 0.2])),
])
def test_float32_hvp_through_rules_with_float64_tangents(f, x, v):
    expected = _hvp_by_differences(f, x, v)
    got = adjit.hvp(f)(x.astype(np.float32), v.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)


def _shifted(w):
    return np.sum(np.sin(1.0 - w) * (w - 0.5)) + np.sum(w + 1.0)


def test_float32_array_and_python_float_in_forward_mode():
    """``w + 1.0`` with float32 ``w`` is a float64 array in Numba, its tangent float32:
    the tangent's two forms did not unify (an internal error in jvp and hvp)."""
    w = np.array([0.3, 0.6, -0.2])
    v = np.array([1.0, -0.5, 0.25])
    _, expected = adjit.jvp(_shifted)(w, v)
    _, got = adjit.jvp(_shifted)(w.astype(np.float32), v.astype(np.float32))
    assert got == pytest.approx(expected, rel=1e-5)
    got = adjit.hvp(_shifted)(w.astype(np.float32), v.astype(np.float32))
    np.testing.assert_allclose(got, _hvp_by_differences(_shifted, w, v), rtol=1e-4, atol=1e-5)


@numba.vectorize(["float32(float32)", "float64(float64)"])
def _square(x):
    return x * x


def _scaled_squares(s, x):
    return np.sum(_square(x * s))


def test_a_python_float_tangent_takes_its_float32_arguments_type():
    """A Python-float tangent of a float32 argument took the ufunc's float64 loop while
    the value took the float32 one: hvp gave -2.4 for 2.3. Tangents are converted to
    their argument's type."""
    s, x = np.float32(0.7), np.array([0.5, -1.0, 1.5], dtype=np.float32)
    expected = 2.0 * np.sum(x.astype(np.float64) ** 2)  # d2/ds2 of s^2 sum x^2
    assert adjit.hvp(_scaled_squares)(s, x, 1.0) == pytest.approx(expected, rel=1e-5)
    assert adjit.hvp(_scaled_squares)(s, x, 1) == pytest.approx(expected, rel=1e-5)
    _, tangent = adjit.jvp(_scaled_squares)(s, x, 1.0, np.zeros(3))
    assert tangent == pytest.approx(2.0 * 0.7 * np.sum(x.astype(np.float64) ** 2), rel=1e-5)


def test_record_types_that_would_be_misread_are_refused_at_typing():
    f32 = types.Array(types.float32, 1, "C")
    assert record_fits(types.Tuple([f32, types.float64]), types.Tuple([f32, types.float64]))
    assert record_fits(f32, f32.copy(layout="A"))  # read by its strides
    assert not record_fits(types.Array(types.float64, 1, "C"), f32)
    assert not record_fits(types.float64, types.float32)
    assert not record_fits(types.Array(types.float64, 2, "C"),
                           types.Array(types.float64, 2, "F"))
    push = checked_push(types.Tuple([types.float32]))

    @numba.njit
    def pushes_a_float64(tape, v):
        push(tape, (v,))

    with pytest.raises(numba.core.errors.TypingError, match="would be read back as"):
        pushes_a_float64.compile((types.voidptr, types.float64))


@numba.njit
def _least_squares_norm(A, b):
    x = np.linalg.lstsq(A, b)[0]
    return np.sum(x * x)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_float32_lstsq_is_refused_by_name_in_every_mode(mode):
    """float32 ``np.linalg.lstsq``: its parts' rules compute in float64, and each mode
    failed differently inside Numba (an internal error, or a bare ArgumentError about
    an adjit helper). It is now refused by name, with the conversion as advice."""
    A = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    b = np.ones(6, np.float32)
    calls = {"grad": lambda: adjit.grad(_least_squares_norm)(A, b),
             "jvp": lambda: adjit.jvp(_least_squares_norm)(A, b, A, b),
             "hvp": lambda: adjit.hvp(_least_squares_norm)(A, b, A)}
    with pytest.raises(adjit.UnsupportedError, match=r"(?s)np\.linalg\.lstsq.*float32.*astype"):
        calls[mode]()


def test_float64_lstsq_still_differentiates():
    """The float64 rewrite is unchanged: against central differences."""
    A = np.random.default_rng(1).standard_normal((6, 3))
    b = np.random.default_rng(2).standard_normal(6)
    check_grad(_least_squares_norm, A, b, argnums=(0, 1))


@numba.njit
def _kron_then_product(M):
    K = np.kron(M, M)
    return np.sum(K @ K)


def test_float32_kron_tangent_is_float32():
    """np.kron's tangent was allocated float64 for float32 factors, and the matrix
    product after it had mixed operands: an internal error in jvp and hvp."""
    M = np.linspace(0.2, 1.1, 4).reshape(2, 2)
    V = np.ones((2, 2))
    value, tangent = adjit.jvp(_kron_then_product)(M.astype(np.float32), V.astype(np.float32))
    expected = adjit.jvp(_kron_then_product)(M, V)
    assert value == pytest.approx(expected[0], rel=1e-5)
    assert tangent == pytest.approx(expected[1], rel=1e-5)
    got = adjit.hvp(_kron_then_product)(M.astype(np.float32), V.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, adjit.hvp(_kron_then_product)(M, V), rtol=1e-5)


@pytest.mark.parametrize("f", [_eigenvalue_energy, _eigenvector_weights])
def test_float32_eigh_in_forward_mode(f):
    _, expected = adjit.jvp(f)(A, V)
    value, tangent = adjit.jvp(f)(A.astype(np.float32), V.astype(np.float32))
    assert tangent == pytest.approx(expected, rel=2e-4)
