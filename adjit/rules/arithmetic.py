"""Rules for Python's arithmetic operators on scalars (binop / unary nodes)."""
import math
import operator

from .core import MINUS_ONE, ONE, ZERO, arg, defderiv
from .scalar_math import pow_base_partial, pow_exponent_partial

defderiv(operator.add, ONE, ONE)
defderiv(operator.sub, ONE, MINUS_ONE)
defderiv(operator.mul, arg(1), arg(0))
defderiv(operator.truediv, lambda a, b: 1.0 / b, lambda ans, a, b: -ans / b)
defderiv(operator.pow, pow_base_partial, pow_exponent_partial)
defderiv(operator.floordiv, ZERO, ZERO)
defderiv(operator.mod, ONE, lambda a, b: -math.floor(a / b))
defderiv(operator.neg, MINUS_ONE)
defderiv(operator.pos, ONE)
