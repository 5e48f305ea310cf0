"""Every scalar rule against finite differences, on its own input domain, in float64 and
float32. Each rule is exercised by a one-line module-level function."""
import math
import re
import operator

import numba
import numpy as np
import pytest

from adjit.testing import check_grad

DTYPES = [np.float64, np.float32]


# ---------------------------------------------------------------------- operators
def op_add(x, y): return x + y
def op_sub(x, y): return x - y
def op_mul(x, y): return x * y
def op_div(x, y): return x / y
def op_pow(x, y): return x ** y
def op_floordiv(x, y): return x // y
def op_mod(x, y): return x % y
def op_neg(x): return -x
def op_abs(x): return abs(x)
def op_min(x, y): return min(x, y)
def op_max(x, y): return max(x, y)
def op_float(x): return float(x)


# ---------------------------------------------------------------------- math module
def m_sin(x): return math.sin(x)
def m_cos(x): return math.cos(x)
def m_tan(x): return math.tan(x)
def m_asin(x): return math.asin(x)
def m_acos(x): return math.acos(x)
def m_atan(x): return math.atan(x)
def m_sinh(x): return math.sinh(x)
def m_cosh(x): return math.cosh(x)
def m_tanh(x): return math.tanh(x)
def m_exp(x): return math.exp(x)
def m_expm1(x): return math.expm1(x)
def m_log(x): return math.log(x)
def m_log1p(x): return math.log1p(x)
def m_log10(x): return math.log10(x)
def m_log2(x): return math.log2(x)
def m_sqrt(x): return math.sqrt(x)
def m_erf(x): return math.erf(x)
def m_erfc(x): return math.erfc(x)
def m_lgamma(x): return math.lgamma(x)
def m_gamma(x): return math.gamma(x)
def m_atan2(y, x): return math.atan2(y, x)
def m_pow(x, y): return math.pow(x, y)
def m_hypot(x, y): return math.hypot(x, y)


# ---------------------------------------------------------------------- NumPy scalar forms
def np_sin(x): return np.sin(x)
def np_cos(x): return np.cos(x)
def np_tan(x): return np.tan(x)
def np_arcsin(x): return np.arcsin(x)
def np_arccos(x): return np.arccos(x)
def np_arctan(x): return np.arctan(x)
def np_sinh(x): return np.sinh(x)
def np_cosh(x): return np.cosh(x)
def np_tanh(x): return np.tanh(x)
def np_exp(x): return np.exp(x)
def np_expm1(x): return np.expm1(x)
def np_log(x): return np.log(x)
def np_log1p(x): return np.log1p(x)
def np_log10(x): return np.log10(x)
def np_log2(x): return np.log2(x)
def np_sqrt(x): return np.sqrt(x)
def np_abs(x): return np.abs(x)
def np_arctan2(y, x): return np.arctan2(y, x)
def np_power(x, y): return np.power(x, y)
def np_hypot(x, y): return np.hypot(x, y)


def op_pos(x): return +x
def m_asinh(x): return math.asinh(x)
def m_acosh(x): return math.acosh(x)
def m_atanh(x): return math.atanh(x)
def m_fabs(x): return math.fabs(x)
def np_arcsinh(x): return np.arcsinh(x)
def np_arccosh(x): return np.arccosh(x)
def np_arctanh(x): return np.arctanh(x)
def np_exp2(x): return np.exp2(x)
def np_cbrt(x): return np.cbrt(x)
def np_square(x): return np.square(x)
def m_radians(x): return math.radians(x) * math.cos(np.radians(x))
def np_deg2rad(x): return np.deg2rad(x) ** 2
def m_degrees(x): return math.degrees(x) * np.degrees(x)
def np_rad2deg(x): return np.rad2deg(x) ** 3
def np_absolute(x): return np.absolute(x)
def np_fabs(x): return np.fabs(x)
def np_negative(x): return np.negative(x)
def np_positive(x): return np.positive(x)
def np_conj(x): return np.conj(x) * np.conjugate(x * x)
def np_float64(x): return np.float64(x) * x
def np_float32(x): return np.float32(x) * x          # float32 arguments only
def np_add(x, y): return np.add(x, y) * x
def np_subtract(x, y): return np.subtract(x, y) * x
def np_multiply(x, y): return np.multiply(x, y)
def np_divide(x, y): return np.divide(x, y)
def np_true_divide(x, y): return np.true_divide(x, y)
def np_maximum(x, y): return np.maximum(x, y) * x
def np_fmax(x, y): return np.fmax(x, y) * x
def np_minimum(x, y): return np.minimum(x, y) * x
def np_fmin(x, y): return np.fmin(x, y) * x
def np_logaddexp(x, y): return np.logaddexp(x, y) * x
def np_logaddexp2(x, y): return np.logaddexp2(x, y) * x
def np_reciprocal(x): return np.reciprocal(x)
def np_sinc(x): return np.sinc(x)
def np_remainder(x, y): return np.remainder(x, y) * x
def np_mod(x, y): return np.mod(x, y) + x
def np_fmod(x, y): return np.fmod(x, y) * y
def np_copysign(x, y): return np.copysign(x, y) * x + y
def m_ldexp(x, n): return math.ldexp(x * x, n) + x  # 2**n x^2 + x
def np_ldexp(x, n): return np.ldexp(x, n) * x  # 2**n x^2
def m_copysign(x, y): return math.copysign(x * x, y) + y


# ---------------------------------------------------------------------- powers, special cases
def pow_int3(x): return x ** 3
def pow_float2(x): return x ** 2.0       # negative base: d/dy would be NaN but y is a constant
def pow_neg_int(x): return x ** -2
def pow_half(x): return x ** 0.5
def pow_const_base(x): return 2.0 ** x
def pow_int_arg(x, n): return x ** n      # integer exponent passed in
def m_pow_int_valued(x): return math.pow(x, 3.0)
def np_power_int_valued(x): return np.power(x, 3.0)


# ---------------------------------------------------------------------- int -> float
def int_times_float(x, n): return x * n
def float_plus_int(x, n): return x + n
def float_of_int(x, n): return float(n) * x + float(n)


# ---------------------------------------------------------------------- zero derivatives
def zero_comparison_factor(x): return x * (x > 0.5)          # bool -> float, no derivative
def zero_comparison_branch(x, y):
    if x > y:
        return x * 2.0
    return y * 3.0
def zero_int_conversion(x): return int(x) * 2 + x            # int(x) has no derivative
def zero_int_arithmetic(x):
    n = int(x * 10.0)
    k = (n * n + 3) % 7 - n // 3
    return x + k
def zero_floor(x): return math.floor(x) * x + math.ceil(x)   # math.floor/ceil give ints
def zero_np_floor(x): return np.floor(x) + x                 # np.floor gives a float
def zero_floordiv_const(x): return (x // 1.0) * 4.0 + x


UNARY = [
    (op_pos, [-1.3, 0.7]),
    (m_asinh, [-1.5, 0.3, 2.0]),
    (m_acosh, [1.2, 2.0, 5.0]),
    (m_atanh, [-0.7, 0.2, 0.6]),
    (m_fabs, [-1.3, 0.7]),
    (np_arcsinh, [-1.5, 0.3, 2.0]),
    (np_arccosh, [1.2, 2.0, 5.0]),
    (np_arctanh, [-0.7, 0.2, 0.6]),
    (np_exp2, [-1.0, 0.5, 2.0]),
    (np_cbrt, [0.3, 2.0, 9.0]),
    (np_square, [-1.3, 0.7]),
    (m_radians, [-40.0, 75.0]),
    (np_deg2rad, [-40.0, 75.0]),
    (m_degrees, [-0.4, 1.3]),
    (np_rad2deg, [-0.4, 1.3]),
    (np_absolute, [-1.3, 0.7]),
    (np_fabs, [-1.3, 0.7]),
    (np_negative, [-1.3, 0.7]),
    (np_positive, [-1.3, 0.7]),
    (np_conj, [-1.3, 0.7]),
    (np_reciprocal, [-1.3, 0.7]),
    (np_sinc, [-1.3, 0.4, 2.2]),
    (np_float64, [-1.3, 0.7]),
    (op_neg, [-1.3, 0.7]),
    (op_abs, [-1.3, 0.7]),
    (op_float, [-1.3, 0.7]),
    (m_sin, [-2.0, 0.3, 1.4]),
    (m_cos, [-2.0, 0.3, 1.4]),
    (m_tan, [-1.2, 0.4, 1.0]),
    (m_asin, [-0.9, 0.2, 0.7]),
    (m_acos, [-0.9, 0.2, 0.7]),
    (m_atan, [-3.0, 0.5, 2.0]),
    (m_sinh, [-1.5, 0.3, 2.0]),
    (m_cosh, [-1.5, 0.3, 2.0]),
    (m_tanh, [-1.5, 0.3, 2.0]),
    (m_exp, [-2.0, 0.5, 1.5]),
    (m_expm1, [-1.0, 0.001, 0.7]),
    (m_log, [0.1, 1.5, 20.0]),
    (m_log1p, [-0.5, 0.01, 3.0]),
    (m_log10, [0.1, 1.5, 20.0]),
    (m_log2, [0.1, 1.5, 20.0]),
    (m_sqrt, [0.09, 2.0, 9.0]),
    (m_erf, [-1.0, 0.3, 1.5]),
    (m_erfc, [-1.0, 0.3, 1.5]),
    (m_lgamma, [-1.3, 0.4, 2.5, 30.0]),
    (m_gamma, [-1.3, 0.4, 2.5, 7.0]),
    (np_sin, [-2.0, 0.3, 1.4]),
    (np_cos, [-2.0, 0.3, 1.4]),
    (np_tan, [-1.2, 0.4, 1.0]),
    (np_arcsin, [-0.9, 0.2, 0.7]),
    (np_arccos, [-0.9, 0.2, 0.7]),
    (np_arctan, [-3.0, 0.5, 2.0]),
    (np_sinh, [-1.5, 0.3, 2.0]),
    (np_cosh, [-1.5, 0.3, 2.0]),
    (np_tanh, [-1.5, 0.3, 2.0]),
    (np_exp, [-2.0, 0.5, 1.5]),
    (np_expm1, [-1.0, 0.001, 0.7]),
    (np_log, [0.1, 1.5, 20.0]),
    (np_log1p, [-0.5, 0.01, 3.0]),
    (np_log10, [0.1, 1.5, 20.0]),
    (np_log2, [0.1, 1.5, 20.0]),
    (np_sqrt, [0.09, 2.0, 9.0]),
    (np_abs, [-1.3, 0.7]),
    (pow_int3, [-1.5, 0.8]),
    (pow_float2, [-1.5, 0.8]),
    (pow_neg_int, [-1.5, 0.8]),
    (pow_half, [0.3, 2.5]),
    (pow_const_base, [-1.0, 0.7]),
    (m_pow_int_valued, [-1.5, 0.8]),
    (np_power_int_valued, [-1.5, 0.8]),
    (zero_comparison_factor, [0.2, 0.9]),
    (zero_int_conversion, [-1.3, 2.7]),
    (zero_int_arithmetic, [0.33, 1.47]),
    (zero_floor, [-1.3, 2.7]),
    (zero_np_floor, [-1.3, 2.7]),
    (zero_floordiv_const, [-1.3, 2.7]),
]

BINARY = [
    (np_add, [(1.3, -0.4)]),
    (np_subtract, [(1.3, -0.4)]),
    (np_multiply, [(1.3, -0.4)]),
    (np_divide, [(1.3, -0.4)]),
    (np_true_divide, [(1.3, -0.4)]),
    (np_maximum, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_fmax, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_minimum, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_fmin, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_logaddexp, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_logaddexp2, [(1.3, -0.4), (-0.7, 2.1)]),
    (np_remainder, [(5.3, 2.1), (-5.3, 2.1), (5.3, -2.1)]),
    (np_mod, [(5.3, 2.1), (-5.3, 2.1)]),
    (np_fmod, [(5.3, 2.1), (-5.3, 2.1), (5.3, -2.1)]),
    (np_copysign, [(1.3, -0.4), (-0.7, 2.1)]),
    (m_copysign, [(1.3, -0.4), (-0.7, 2.1)]),
    (op_add, [(1.3, -0.4)]),
    (op_sub, [(1.3, -0.4)]),
    (op_mul, [(1.3, -0.4), (-0.7, 2.1)]),
    (op_div, [(1.3, -0.4), (-0.7, 2.1)]),
    (op_pow, [(1.3, 2.2), (0.7, -1.5), (2.0, 0.5)]),
    (op_floordiv, [(5.3, 2.1), (-5.3, 2.1)]),
    (op_mod, [(5.3, 2.1), (-5.3, 2.1), (5.3, -2.1), (0.7, 1.9)]),
    (op_min, [(0.3, 0.8), (0.9, -0.2)]),
    (op_max, [(0.3, 0.8), (0.9, -0.2)]),
    (m_atan2, [(0.6, 0.8), (-0.6, 0.8), (0.6, -0.8)]),
    (m_pow, [(1.3, 2.2), (0.7, -1.5)]),
    (m_hypot, [(0.6, 0.8), (-1.5, 0.2)]),
    (np_arctan2, [(0.6, 0.8), (-0.6, 0.8), (0.6, -0.8)]),
    (np_power, [(1.3, 2.2), (0.7, -1.5)]),
    (np_hypot, [(0.6, 0.8), (-1.5, 0.2)]),
    (zero_comparison_branch, [(1.3, 0.4), (0.2, 0.9)]),
]

WITH_INT = [
    (pow_int_arg, [(-1.5, 3), (0.8, -2)]),
    (int_times_float, [(0.7, 3), (0.7, -2)]),
    (float_plus_int, [(0.7, 3)]),
    (float_of_int, [(0.7, 3), (0.7, -2)]),
    (m_ldexp, [(0.7, 3), (-1.3, -2)]),
    (np_ldexp, [(0.7, 3), (-1.3, -2)]),
]


def _dtype_id(d):
    return np.dtype(d).name


@pytest.mark.parametrize("dtype", DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("fn,points", UNARY, ids=[f.__name__ for f, _ in UNARY])
def test_unary(fn, points, dtype):
    for x in points:
        check_grad(fn, dtype(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("fn,points", BINARY, ids=[f.__name__ for f, _ in BINARY])
def test_binary(fn, points, dtype):
    for x, y in points:
        check_grad(fn, dtype(x), dtype(y), argnums=(0, 1))


@pytest.mark.parametrize("dtype", DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("fn,points", WITH_INT, ids=[f.__name__ for f, _ in WITH_INT])
def test_float_with_int_argument(fn, points, dtype):
    for x, n in points:
        check_grad(fn, dtype(x), n)


def _ldexp_of_array(x, n):
    return np.sum(np.ldexp(x, n) * np.sin(x))


@pytest.mark.parametrize("fn,x,n", [(m_ldexp, -1.3, -2), (np_ldexp, 0.7, 3),
                                    (np_ldexp, np.float32(0.7), 3),
                                    (_ldexp_of_array, np.array([0.3, -1.2, 2.0]),
                                     np.array([1, -2, 3]))],
                         ids=["math", "numpy", "float32", "array"])
def test_ldexp_in_every_mode(fn, x, n):
    """``ldexp(x, n)`` is ``x * 2**n``: its integer exponent is not differentiated (the
    grad of ``np_ldexp`` is ``2**(n+1) x``)."""
    from adjit.testing import check_hvp, check_jvp
    g = check_grad(fn, x, n)
    if fn is np_ldexp:
        assert g == pytest.approx(2.0 ** (n + 1) * x, rel=1e-6)
    check_jvp(fn, x, n)
    check_hvp(fn, x, n)


def test_floordiv_and_mod_values():
    """The derivatives the rules must produce, spelled out (float64)."""
    gx, gy = check_grad(op_floordiv, 5.3, 2.1, argnums=(0, 1))
    assert gx == 0.0 and gy == 0.0
    for x, y in [(5.3, 2.1), (-5.3, 2.1), (5.3, -2.1)]:
        gx, gy = check_grad(op_mod, x, y, argnums=(0, 1))
        assert gx == pytest.approx(1.0, rel=1e-12)
        assert gy == pytest.approx(-math.floor(x / y), rel=1e-12)


def test_zero_derivative_constructs_are_exact():
    """Comparisons, int(), floor and integer arithmetic contribute exactly nothing."""
    assert check_grad(zero_comparison_factor, 0.9) == 1.0
    assert check_grad(zero_comparison_factor, 0.2) == 0.0
    assert check_grad(zero_int_conversion, 2.7) == 1.0
    assert check_grad(zero_int_arithmetic, 1.47) == 1.0
    assert check_grad(zero_floor, 2.7) == 2.0
    assert check_grad(zero_np_floor, 2.7) == 1.0
    assert check_grad(zero_floordiv_const, 2.7) == 1.0
    assert check_grad(zero_comparison_branch, 1.3, 0.4, argnums=(0, 1)) == (2.0, 0.0)


@pytest.mark.parametrize("fn,points", UNARY + BINARY,
                         ids=[f.__name__ for f, _ in UNARY + BINARY])
def test_forward_and_forward_over_reverse(fn, points):
    """Every scalar rule in forward mode (jvp) and forward-over-reverse (hvp), float64,
    at its middle point, against finite differences."""
    from adjit.testing import check_hvp, check_jvp
    point = points[len(points) // 2]
    args = tuple(float(a) for a in (point if isinstance(point, tuple) else (point,)))
    check_jvp(fn, *args)
    for k in range(len(args)):
        check_hvp(fn, *args, argnums=k)


# rule key -> the test function exercising it, where the names differ
_SPELLED = {operator.truediv: "op_div", operator.pos: "op_pos", operator.floordiv: "op_floordiv",
            operator.mod: "op_mod", operator.neg: "op_neg", operator.add: "op_add",
            operator.sub: "op_sub", operator.mul: "op_mul", operator.pow: "op_pow",
            np.double: "np_float64", np.single: "np_float32"}


def test_every_scalar_rule_has_a_case():
    """A rule registered in adjit/rules without a case here fails: every primitive is
    tested in reverse, forward and forward-over-reverse mode."""
    from adjit.rules.core import NONDIFF, lookup
    from adjit.rules.primitive import PRIMITIVES
    cases = [f for f, _ in UNARY + BINARY + WITH_INT] + [np_float32]
    names = {f.__name__ for f in cases}
    used = set().union(*(set(f.__code__.co_names) for f in cases))
    missing = []
    for key in [k for k in PRIMITIVES.keys("scalar") if lookup(k) is not NONDIFF]:
        if isinstance(key, numba.core.dispatcher.Dispatcher):
            continue  # a user's rule (tests/test_extend.py), not one of adjit's
        spelled = _SPELLED.get(key)
        name = getattr(key, "__name__", str(key))
        if spelled is not None and spelled in names:
            continue
        if spelled is None and name in used:
            continue
        missing.append(name)
    assert not missing, f"registered scalar rules without a test case: {missing}"


def test_float32_conversion():
    """``np.float32(x)`` of a float32 is the identity (of a float64 it rounds, which
    finite differences cannot see through)."""
    check_grad(np_float32, np.float32(0.7))
    check_grad(np_float32, np.float32(-1.3))



def sin_cos_loop(x, y):
    """sin and cos partials computed beside their primal calls, in a loop."""
    s = 0.0
    for i in range(6):
        s += math.sin(x * i) * math.cos(y + i) - np.sin(y) * np.cos(x * y)
    return s


def sin_sum(x, n):
    """The shape of a scalar loop whose gradient fuses sin and cos into one sincos."""
    s = 0.0
    for i in range(n):
        s += math.sin(x * i) * x
    return s


@pytest.mark.parametrize("dtype", DTYPES)
def test_sin_cos_partials_beside_the_primal(dtype):
    """The forward sweep computes cos(u) next to sin(u) (``beside_primal``) and saves
    it, in every mode."""
    from adjit.testing import check_hvp, check_jvp
    x, y = dtype(0.7), dtype(-1.3)
    check_grad(sin_cos_loop, x, y, argnums=(0, 1))
    if dtype is np.float64:
        check_jvp(sin_cos_loop, x, y)
        check_hvp(sin_cos_loop, x, y, argnums=0)
        check_hvp(sin_cos_loop, x, y, argnums=1)


def test_sin_and_its_partial_are_one_sincos_call():
    """In a loop's gradient, LLVM computes sin(u) and the saved cos(u) in one call."""
    import adjit
    check_grad(sin_sum, 0.3, 50)  # against finite differences
    grad = adjit.grad(sin_sum)
    assert "sincos" in "".join(grad.inspect_asm().values())


def map_sin_cos_exp(x, out):
    """``out[i] = sin(cos(exp(x[i])))``: each argument of sin and cos is a call's result,
    which the reverse pass reads from the tape anyway."""
    for i in range(x.shape[0]):
        out[i] = math.sin(math.cos(math.exp(x[i])))
    return np.sum(out)


def test_partials_of_calls_on_saved_arguments_are_computed_beside_them():
    """sin(cos(u)): cos's result would be saved for sin's partial, so the forward sweep
    saves sin's partial cos(cos(u)) in its place (and -sin(u) for cos), in every mode;
    the reverse pass calls no transcendental of its own (only the forward's sincos)."""
    import adjit
    from adjit.testing import check_hvp, check_jvp
    x, out = np.linspace(-1.0, 1.2, 7), np.zeros(7)
    check_grad(map_sin_cos_exp, x, out, argnums=0)
    check_jvp(map_sin_cos_exp, x, out)
    check_hvp(map_sin_cos_exp, x, out, argnums=0)
    grad = adjit.grad(map_sin_cos_exp)
    called = set(re.findall(r"movabsq\s+\$(\w+),", "".join(grad.inspect_asm().values())))
    assert "sincos" in called and not called & {"sin", "cos"}, called
