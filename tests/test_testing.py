"""adjit.testing itself, with a fake ``adjit.grad`` / ``adjit.vjp`` (no differentiator needed)."""
import math
from collections import namedtuple

import numba
import numpy as np
import pytest

import adjit
import adjit.runtime
from adjit import finite_differences, testing
from adjit.testing import check_grad, check_vjp, numerical_grad


def f_scalar(x, y):
    return math.sin(x) * y


def df_scalar(x, y):
    return math.cos(x) * y, math.sin(x)


def f_array(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * (i + 1)
    return s


def df_array(x):
    return 2.0 * x * np.arange(1, x.shape[0] + 1)


def f_matrix(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += math.sin(a[i, j]) * (i + 2 * j)
    return s


def df_matrix(a):
    i, j = np.indices(a.shape)
    return np.cos(a) * (i + 2 * j)


def f_int(x, n):
    return x * n


def f_tuple(t, y):
    return t[0] * t[1] * y


@numba.njit
def f_dispatcher(x):
    return x ** 3


def f_array_out(x):
    return x * 2.0


class Fake:
    """Stands in for adjit: grad/vjp return what a test decides; depth can be made to leak."""

    def __init__(self, grads, depth_leak=0, mutate=False):
        self.grads = grads            # fn -> callable(*args) -> tuple of all partials
        self.depth = 0
        self.depth_leak = depth_leak
        self.mutate = mutate

    def current_depth(self):
        return self.depth

    def grad(self, f, argnums=0):
        def call(*args):
            self.depth += self.depth_leak
            if self.mutate:
                args[0][0] += 1.0
            full = self.grads[f](*args)
            if isinstance(argnums, tuple):
                return tuple(full[k] for k in argnums)
            return full[argnums]
        return call


@pytest.fixture
def fake(monkeypatch):
    grads = {
        f_scalar: df_scalar,
        f_array: lambda x: (df_array(x).astype(x.dtype),),
        f_matrix: lambda a: (df_matrix(a).astype(a.dtype),),
        f_int: lambda x, n: (float(n), 0),
        f_tuple: lambda t, y: ((t[1] * y, t[0] * y), t[0] * t[1]),
        f_dispatcher: lambda x: (3.0 * x * x,),
    }
    fk = Fake(grads)
    monkeypatch.setattr(adjit, "grad", fk.grad, raising=False)
    monkeypatch.setattr(adjit.runtime, "current_depth", fk.current_depth, raising=False)
    return fk


# ------------------------------------------------------------------ correct gradients pass

def test_scalar_passes_and_returns_gradient(fake):
    g = check_grad(f_scalar, 0.3, 2.0, argnums=(0, 1))
    assert g == pytest.approx(df_scalar(0.3, 2.0), rel=1e-15)
    assert check_grad(f_scalar, 0.3, 2.0) == pytest.approx(math.cos(0.3) * 2.0)


def test_float32_scalar_passes(fake):
    check_grad(f_scalar, np.float32(0.3), np.float32(2.0), argnums=(0, 1))


@pytest.mark.parametrize("n", [5, 200])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_array_passes(fake, n, dtype):
    x = np.linspace(-1.0, 1.0, n).astype(dtype)
    g = check_grad(f_array, x)
    assert g.dtype == dtype and g.shape == x.shape


def test_matrix_passes(fake):
    check_grad(f_matrix, np.random.default_rng(0).standard_normal((3, 4)))


def test_int_argument_passed_through(fake):
    check_grad(f_int, 0.7, 3)


def test_tuple_argument(fake):
    check_grad(f_tuple, (0.5, 1.5), 2.0, argnums=(0, 1))


def test_dispatcher_is_its_own_primal(fake):
    assert testing._primal(f_dispatcher) is f_dispatcher
    check_grad(f_dispatcher, 1.3)


def test_primal_is_cached():
    assert testing._primal(f_scalar) is testing._primal(f_scalar)


# ------------------------------------------------------------------ wrong gradients fail

def test_wrong_scalar_fails_with_both_values(fake):
    fake.grads[f_scalar] = lambda x, y: (math.cos(x) * y * 1.001, math.sin(x))
    with pytest.raises(AssertionError) as info:
        check_grad(f_scalar, 0.3, 2.0)
    msg = str(info.value)
    assert "f_scalar" in msg and "argument 0" in msg
    assert repr(math.cos(0.3) * 2.0 * 1.001) in msg          # adjit's value
    assert "finite differences" in msg


def test_wrong_second_argnum_fails(fake):
    fake.grads[f_scalar] = lambda x, y: (math.cos(x) * y, -math.sin(x))
    check_grad(f_scalar, 0.3, 2.0, argnums=0)
    with pytest.raises(AssertionError, match="argument 1"):
        check_grad(f_scalar, 0.3, 2.0, argnums=(0, 1))


def test_wrong_float32_fails(fake):
    fake.grads[f_scalar] = lambda x, y: (math.cos(x) * y * 1.05, math.sin(x))
    with pytest.raises(AssertionError):
        check_grad(f_scalar, np.float32(0.3), np.float32(2.0))


def test_zero_gradient_fails(fake):
    fake.grads[f_scalar] = lambda x, y: (0.0, 0.0)
    with pytest.raises(AssertionError):
        check_grad(f_scalar, 0.3, 2.0)


def test_nan_gradient_fails(fake):
    fake.grads[f_scalar] = lambda x, y: (float("nan"), math.sin(x))
    with pytest.raises(AssertionError):
        check_grad(f_scalar, 0.3, 2.0)


def test_one_wrong_element_small_array_fails(fake):
    def bad(x):
        g = df_array(x)
        g[2] += 1e-3
        return (g,)
    fake.grads[f_array] = bad
    with pytest.raises(AssertionError, match=r"\[2\]"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 5))


def test_wrong_large_array_fails_dot_product_test(fake):
    def bad(x):
        g = df_array(x)
        g[17] += 0.05 * np.abs(g).max()
        return (g,)
    fake.grads[f_array] = bad
    with pytest.raises(AssertionError, match="dot-product"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 200))


def test_permuted_matrix_gradient_fails(fake):
    fake.grads[f_matrix] = lambda a: (df_matrix(a)[::-1].copy(),)
    with pytest.raises(AssertionError):
        check_grad(f_matrix, np.random.default_rng(0).standard_normal((3, 4)))


# ------------------------------------------------------------------ type / shape / dtype

def test_array_instead_of_scalar_fails(fake):
    fake.grads[f_scalar] = lambda x, y: (np.array([math.cos(x) * y]), math.sin(x))
    with pytest.raises(AssertionError, match="float scalar"):
        check_grad(f_scalar, 0.3, 2.0)


def test_int_instead_of_float_fails(fake):
    fake.grads[f_int] = lambda x, n: (n, 0)
    with pytest.raises(AssertionError, match="float scalar"):
        check_grad(f_int, 0.7, 3)


def test_wrong_shape_fails(fake):
    fake.grads[f_array] = lambda x: (df_array(x)[:-1],)
    with pytest.raises(AssertionError, match="shape"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 5))


def test_wrong_dtype_fails(fake):
    fake.grads[f_array] = lambda x: (df_array(x).astype(np.float64),)
    with pytest.raises(AssertionError, match="dtype"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 5).astype(np.float32))


def test_aliasing_gradient_fails(fake):
    fake.grads[f_array] = lambda x: (x,)
    with pytest.raises(AssertionError, match="shares memory"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 5))


def test_missing_tuple_fails(fake, monkeypatch):
    # argnums=(0, 1) but the gradient comes back as a bare scalar
    monkeypatch.setattr(adjit, "grad", lambda f, argnums=0: (lambda x, y: math.cos(x) * y))
    with pytest.raises(AssertionError, match="tuple"):
        check_grad(f_scalar, 0.3, 2.0, argnums=(0, 1))


# ------------------------------------------------------------------ side conditions

def test_tape_depth_leak_fails(fake):
    fake.depth_leak = 1
    with pytest.raises(AssertionError, match="tape depth"):
        check_grad(f_scalar, 0.3, 2.0)


def test_argument_mutation_fails(fake):
    fake.mutate = True
    with pytest.raises(AssertionError, match="modified argument 0"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 5))


def test_non_scalar_output_is_an_argument_error(fake):
    with pytest.raises(adjit.ArgumentError, match="float scalar"):
        check_grad(f_array_out, np.ones(3))


def test_bad_argnums_are_argument_errors(fake):
    """They were a plain ValueError and TypeError, unlike the transforms' own."""
    with pytest.raises(adjit.ArgumentError, match="out of range for 1 arguments"):
        check_grad(f_array, np.ones(3), argnums=3)
    with pytest.raises(adjit.ArgumentError, match="an int or a tuple of ints"):
        check_grad(f_array, np.ones(3), argnums=0.5)


# ------------------------------------------------------------------ numerical_grad, check_vjp

def test_numerical_grad_closed_forms():
    assert numerical_grad(f_scalar, 0.3, 2.0, argnums=(0, 1)) == pytest.approx(
        df_scalar(0.3, 2.0), rel=1e-9)
    x = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(numerical_grad(f_array, x), df_array(x), rtol=1e-8, atol=1e-9)
    a = np.random.default_rng(1).standard_normal((2, 3))
    np.testing.assert_allclose(numerical_grad(f_matrix, a), df_matrix(a), rtol=1e-8, atol=1e-9)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(numerical_grad(f_array, x32), df_array(x), rtol=1e-2, atol=1e-3)
    t = numerical_grad(f_tuple, (0.5, 1.5), 2.0)
    assert t == pytest.approx((3.0, 1.0), rel=1e-9)


def _fake_vjp(monkeypatch, impl):
    monkeypatch.setattr(adjit, "vjp", lambda f: impl, raising=False)


def test_check_vjp_passes(fake, monkeypatch):
    _fake_vjp(monkeypatch, lambda x, n, ybar: (x * n, (ybar * n, 0)))
    check_vjp(f_int, 0.7, 3, ybar=2.0)


def test_check_vjp_array_output(fake, monkeypatch):
    _fake_vjp(monkeypatch, lambda x, ybar: (x * 2.0, (2.0 * ybar,)))
    check_vjp(f_array_out, np.linspace(0.0, 1.0, 4))


def test_check_vjp_wrong_cotangent_fails(fake, monkeypatch):
    _fake_vjp(monkeypatch, lambda x, n, ybar: (x * n, (n, 0)))   # forgot ybar
    with pytest.raises(AssertionError, match="cotangent"):
        check_vjp(f_int, 0.7, 3, ybar=2.0)


def test_check_vjp_int_cotangent_must_be_zero(fake, monkeypatch):
    _fake_vjp(monkeypatch, lambda x, n, ybar: (x * n, (ybar * n, 1)))
    with pytest.raises(AssertionError, match="integer argument 1"):
        check_vjp(f_int, 0.7, 3, ybar=2.0)


def test_check_vjp_wrong_value_fails(fake, monkeypatch):
    _fake_vjp(monkeypatch, lambda x, n, ybar: (x * n + 1e-6, (ybar * n, 0)))
    with pytest.raises(AssertionError, match="value"):
        check_vjp(f_int, 0.7, 3, ybar=2.0)


def _gravity(m, x):
    # a mass of order 1e9 beside a position of order 1 (N-body codes)
    return 6.674e-11 * m * np.sum(np.sin(x) / (1.0 + x * x))


def test_jvp_and_hvp_checks_step_each_argument_by_its_own_scale():
    """One step scaled by the largest argument (1e9) moved the positions by thousands,
    and the checks failed correct derivatives; each direction now carries its own
    argument's scale."""
    from adjit.testing import check_hvp, check_jvp
    x = np.array([0.3, -0.8, 1.1])
    check_jvp(_gravity, 2.0e9, x)
    check_hvp(_gravity, 2.0e9, x, argnums=(0, 1))


def test_check_grad_says_when_numba_cannot_compile_the_primal():
    """As ``adjit.grad`` does: an ``ArgumentError`` quoting Numba, not its TypingError."""
    def log_base_three(x):
        return math.log(x, 3.0)  # Numba has no two-argument math.log

    with pytest.raises(adjit.ArgumentError, match="Numba cannot compile"):
        check_grad(log_base_three, 1.3)


def _masked_2d(a):
    return np.sum(np.sin(a[a > 0.1]) ** 2)  # Numba types a 2-D mask, then fails lowering it


@pytest.mark.parametrize("check", ["check_grad", "check_vjp", "check_jvp", "check_hvp"])
def test_a_primal_numba_fails_to_lower_is_not_a_failed_check(check):
    """Numba fails ``a[mask]`` of a 2-D mask with a bare ``AssertionError`` from its
    lowering, which the checks would have passed on as if the derivative were wrong."""
    import adjit.testing
    a = np.random.default_rng(1).uniform(-1.0, 1.0, (4, 3))
    with pytest.raises(adjit.ArgumentError, match="Numba cannot compile.*AssertionError"):
        getattr(adjit.testing, check)(_masked_2d, a)


def _sin_weighted32(x):
    return np.sum(np.sin(x) * x * x)


def test_check_hvp_steps_float32_arguments_as_float32(monkeypatch):
    """A float32 gradient is rounded to float32: differenced over float64's step (6e-6)
    the rounding dominated, and a correct hvp failed. The step and tolerances now follow
    the arguments' dtype, and a wrong float32 hvp still fails."""
    from adjit.testing import check_hvp
    x = np.linspace(0.2, 1.4, 6).astype(np.float32)
    hv = check_hvp(_sin_weighted32, x)
    assert hv.dtype == np.float32
    real = adjit.hvp

    def off(f, argnums=0):
        h = real(f, argnums=argnums)
        return lambda *a: h(*a) * np.float32(1.05)

    monkeypatch.setattr(adjit, "hvp", off)
    with pytest.raises(AssertionError, match="H v"):
        check_hvp(_sin_weighted32, x)


_Params = namedtuple("_Params", ["alpha", "beta"])


@numba.njit
def _reads_fields(x, p):
    return p.alpha * np.sum(x ** 2) + p.beta * np.sum(np.cos(x))


def test_a_namedtuple_argument_stays_a_namedtuple():
    # the checks rebuilt it as a plain tuple, which 'p.alpha' cannot read
    x, p = np.array([0.3, -1.2, 0.5]), _Params(0.5, 1.5)
    np.testing.assert_allclose(check_grad(_reads_fields, x, p), x - 1.5 * np.sin(x))
    testing.check_jvp(_reads_fields, x, p)
    testing.check_hvp(_reads_fields, x, p)


@numba.njit
def _weighted_by_list(x, weights):
    s = 0.0
    for w in weights:
        s += np.sum(w * x)
    return s


def test_a_typed_list_argument_is_snapshotted_by_value():
    # the snapshot was the list itself, and comparing lists of arrays raised: every
    # check said the list was modified
    weights = numba.typed.List([np.arange(4.0), np.ones(4)])
    np.testing.assert_allclose(check_grad(_weighted_by_list, np.ones(4), weights),
                               [1.0, 2.0, 3.0, 4.0])
    snapshot = finite_differences._copy(weights)
    assert finite_differences._values_equal(weights, snapshot, exact=True)
    weights[0][1] = 7.0  # a change is still seen
    assert not finite_differences._values_equal(weights, snapshot, exact=True)


@numba.njit
def _pair(x):
    return x * 2.0, x * 3.0


def test_check_vjp_of_a_tuple_output_says_so():
    # it was a bare "float() argument must be ... not 'tuple'"
    with pytest.raises(adjit.ArgumentError, match="returns a tuple"):
        check_vjp(_pair, np.ones(3))


def _scaled_sines(x, a=2.0):
    return np.sum(np.sin(a * x))


@pytest.mark.parametrize("check", [testing.check_grad, testing.check_jvp, testing.check_hvp])
def test_checks_accept_omitted_trailing_defaults(check):
    """The checks compile the primal first; with ``a`` left out that compile must use its
    default (it said Numba could not compile the function)."""
    check(_scaled_sines, np.array([0.3, 0.7]))
    np.testing.assert_allclose(adjit.grad(_scaled_sines)(np.array([0.3, 0.7])),
                               2.0 * np.cos(2.0 * np.array([0.3, 0.7])), rtol=1e-14)


@numba.njit
def _option_price(s0, sigma, n_paths, n_steps):
    """A seeded Monte Carlo call price: its payoff has a kink at the strike."""
    np.random.seed(42)
    dt = 1.0 / n_steps
    total = 0.0
    for _ in range(n_paths):
        s = s0
        for _ in range(n_steps):
            z = np.random.standard_normal()
            s = s * math.exp((0.02 - 0.5 * sigma ** 2) * dt + sigma * math.sqrt(dt) * z)
        if s - 100.0 > 0.0:
            total += s - 100.0
    return math.exp(-0.02) * total / n_paths


def _priced(x):
    return _option_price(x[0], x[1], 50, 10)


def test_a_kink_crossed_by_the_dot_product_step_is_not_a_failure():
    """The direction's step, scaled by the price (105), also moved the volatility (0.25)
    far enough for paths to cross the strike: a correct gradient failed. A shorter step
    agrees, so the check passes."""
    g = check_grad(_priced, np.array([105.0, 0.25]))
    h = 1e-6  # central differences with a step that crosses no kink, as a reference
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        fd = (_priced(np.array([105.0, 0.25]) + e) - _priced(np.array([105.0, 0.25]) - e))
        assert g[k] == pytest.approx(fd / (2 * h), rel=1e-6)


def test_a_wrong_gradient_fails_the_dot_product_test_at_every_step(fake):
    """The shorter steps do not excuse an error that stays as the step shrinks."""
    def bad(x):
        g = df_array(x)
        g[3] += 1e-3 * np.abs(g).max()
        return (g,)
    fake.grads[f_array] = bad
    with pytest.raises(AssertionError, match="dot-product"):
        check_grad(f_array, np.linspace(-1.0, 1.0, 200))



def _nested_params_loss(params, x):
    (W, b), c = params
    return np.sum(np.tanh(W @ x + b) ** 2) * c


@pytest.mark.parametrize("check", [testing.check_grad, testing.check_hvp])
def test_a_nested_tuple_argument_is_an_argument_error_in_every_check(check):
    """check_hvp drew its random tangent before calling adjit.hvp, and NumPy failed on
    the tuple it could not take (a ValueError); every check says what adjit says."""
    params = ((0.5 * np.eye(2), np.array([0.1, -0.2])), 2.0)
    with pytest.raises(adjit.ArgumentError, match="argument 0.*only float scalars"
                                                  ".*flat tuples of these.*differentiable"):
        check(_nested_params_loss, params, np.array([1.0, 0.5]))


def test_a_star_args_function_gets_the_transforms_refusal():
    """check_grad said Numba could not compile it (a signature mismatch of its own
    making); the transforms' message says what to change."""
    @numba.njit
    def weighted(x, *ws):
        return x * ws[0] + ws[1]
    with pytest.raises(adjit.ArgumentError, match=r"takes \*args; transforms need named"):
        check_grad(weighted, 0.5, 2.0, 3.0)
