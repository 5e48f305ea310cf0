"""Rules for scalar math: ``math.*`` and the scalar forms of NumPy ufuncs."""
import math

import numpy as np

from ..compile.inline_library import internal_jit
from .core import ONE, beside_primal, defderivs

_SQRT_PI = math.sqrt(math.pi)

# Partials follow IEEE semantics, as JAX does (they are compiled with NumPy's error
# model): d sqrt(0) = inf, d log(0) = inf, and where the primal is NaN because the
# argument is outside the domain (log(-1), atanh(2)) so is the partial (``nan * x``, so
# that its own derivative, which hvp takes, is NaN too).


def pow_base_partial(a, b):
    """d a**b / da = b a**(b-1). At a = 0 with b < 1, ``0 ** (b - 1)`` with an integer b
    raises ZeroDivisionError where the primal need not (``v ** i`` at v = 0, i = 0 is 1):
    there the partial is 0 for b = 0, and otherwise the same power with a float exponent,
    whose IEEE value is inf and whose own derivative (hvp's) is ``b (b-1) 0 ** (b-2)``,
    inf of that sign (a constant ``b * inf`` gave a second derivative of 0)."""
    if a != 0 or b >= 1:
        return b * a ** (b - 1)
    return 0.0 * a if b == 0 else b * a ** (b - 1.0)


def pow_exponent_partial(ans, a, b):
    """d a**b / db = a**b log(a), taken as 0 at a = 0 (as JAX does), where 0**b is
    constant in b for b > 0."""
    return ans * math.log(a) if a != 0 else 0.0


defderivs((math.sin, np.sin), beside_primal(lambda x: math.cos(x), math.cos))
defderivs((math.cos, np.cos), beside_primal(lambda x: -math.sin(x), math.sin, negate=True))
defderivs((math.tan, np.tan), lambda ans, x: 1.0 + ans * ans)
defderivs((math.asin, np.arcsin), lambda x: 1.0 / math.sqrt(1.0 - x * x))
defderivs((math.acos, np.arccos), lambda x: -1.0 / math.sqrt(1.0 - x * x))
defderivs((math.atan, np.arctan), lambda x: 1.0 / (1.0 + x * x))
defderivs((math.sinh, np.sinh), lambda x: math.cosh(x))
defderivs((math.cosh, np.cosh), lambda x: math.sinh(x))
defderivs((math.tanh, np.tanh), lambda ans, x: 1.0 - ans * ans)
defderivs((math.asinh, np.arcsinh), lambda x: 1.0 / math.sqrt(x * x + 1.0))
defderivs((math.acosh, np.arccosh),
          lambda x: 1.0 / math.sqrt(x * x - 1.0) if x >= 1.0 else math.nan * x)
defderivs((math.atanh, np.arctanh),
          lambda x: 1.0 / (1.0 - x * x) if abs(x) <= 1.0 else math.nan * x)
defderivs((math.exp, np.exp), lambda ans, x: ans)
defderivs((math.expm1, np.expm1), lambda ans, x: ans + 1.0)
defderivs((np.exp2,), lambda ans, x: ans * 0.6931471805599453)
defderivs((math.log, np.log), lambda x: 1.0 / x if x >= 0.0 else math.nan * x)
defderivs((math.log1p, np.log1p), lambda x: 1.0 / (1.0 + x) if x >= -1.0 else math.nan * x)
defderivs((math.log10, np.log10),
          lambda x: 0.4342944819032518 / x if x >= 0.0 else math.nan * x)
defderivs((math.log2, np.log2),
          lambda x: 1.4426950408889634 / x if x >= 0.0 else math.nan * x)
defderivs((math.sqrt, np.sqrt), lambda ans, x: 0.5 / ans)
defderivs((np.cbrt,), lambda ans, x: 1.0 / (3.0 * ans * ans))
defderivs((np.square,), lambda x: 2.0 * x)
defderivs((math.radians, np.radians, np.deg2rad), lambda x: 0.017453292519943295)
defderivs((math.degrees, np.degrees, np.rad2deg), lambda x: 57.29577951308232)
defderivs((math.erf,), lambda x: 2.0 / _SQRT_PI * math.exp(-x * x))
defderivs((math.erfc,), lambda x: -2.0 / _SQRT_PI * math.exp(-x * x))
# At the origin atan2 and hypot are not differentiable and their partials are 0/0; adjit
# takes 0 there, the subgradient convention it uses for the norm and the standard
# deviation, so a zero vector's angle or length does not turn a gradient into NaN
defderivs((math.atan2, np.arctan2),
          lambda y, x: x / (x * x + y * y) if x != 0.0 or y != 0.0 else 0.0 * x,
          lambda y, x: -y / (x * x + y * y) if x != 0.0 or y != 0.0 else 0.0 * y)
defderivs((math.hypot, np.hypot), lambda ans, x, y: x / ans if ans != 0.0 else 0.0 * x,
          lambda ans, x, y: y / ans if ans != 0.0 else 0.0 * y)
defderivs((math.pow, np.power, pow), pow_base_partial, pow_exponent_partial)
defderivs((np.abs, np.absolute, np.fabs, math.fabs), lambda x: 1.0 if x >= 0 else -1.0)
defderivs((np.negative,), lambda x: -1.0)
defderivs((np.positive,), ONE)
defderivs((np.conj, np.conjugate), ONE)  # of floats (complex values are refused elsewhere)
defderivs((np.add,), ONE, ONE)
defderivs((np.subtract,), ONE, lambda a, b: -1.0)
defderivs((np.multiply,), lambda a, b: b, lambda a, b: a)
defderivs((np.divide, np.true_divide), lambda a, b: 1.0 / b, lambda ans, a, b: -ans / b)
defderivs((np.maximum, np.fmax), lambda a, b: 1.0 if a >= b else 0.0,
          lambda a, b: 0.0 if a >= b else 1.0)
defderivs((np.minimum, np.fmin), lambda a, b: 1.0 if a <= b else 0.0,
          lambda a, b: 0.0 if a <= b else 1.0)



@internal_jit
def digamma(x):
    """The digamma function psi = d lgamma / dx (reflection below 1/2, then upward
    recurrence to 6 and the asymptotic series; about 1e-15 relative). nan at the poles."""
    result = 0.0
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        result -= math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))
    return result + math.log(x) - 0.5 / x - series


defderivs((math.lgamma,), lambda x: digamma(x))
defderivs((math.gamma,), lambda ans, x: ans * digamma(x))


def sinc_partial(x):
    """d sinc(x) / dx with ``sinc(x) = sin(pi x) / (pi x)``: ``(cos(pi x) - sinc(x)) / x``,
    0 at x = 0 (where sinc is flat), written ``-pi^2/3 x`` there so that its own
    derivative, sinc's second, is right at 0 (``0 * x`` made the Hessian 0 there)."""
    if x == 0.0:
        return (-math.pi * math.pi / 3.0) * x
    px = math.pi * x
    return (math.cos(px) - math.sin(px) / px) / x


def copysign_partial(a, b):
    """d copysign(a, b) / da = sign(a) sign(b) (the magnitude of ``a``, signed by ``b``)."""
    return math.copysign(1.0, a) * math.copysign(1.0, b)


def ldexp_partial(x, n):
    """d ldexp(x, n) / dx = 2**n: ``ldexp(x, n)`` is ``x * 2**n`` for an integer ``n``,
    which is not differentiated."""
    return math.ldexp(1.0, n)


defderivs((np.logaddexp,), lambda ans, a, b: math.exp(a - ans),
          lambda ans, a, b: math.exp(b - ans))
defderivs((np.logaddexp2,), lambda ans, a, b: 2.0 ** (a - ans),
          lambda ans, a, b: 2.0 ** (b - ans))
defderivs((np.reciprocal,), lambda ans, x: -ans * ans)
defderivs((np.sinc,), sinc_partial)
# Python's (floored) modulo and C's (truncated) fmod: a - b * floor(a / b), a - b * trunc(a / b)
defderivs((np.remainder, np.mod), ONE, lambda a, b: -math.floor(a / b))
defderivs((np.fmod,), ONE, lambda a, b: -math.trunc(a / b))
defderivs((np.copysign, math.copysign), copysign_partial, None)
defderivs((np.ldexp, math.ldexp), ldexp_partial, None)
