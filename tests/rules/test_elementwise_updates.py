"""The reverse rule of an elementwise operation adds ``g * d`` into a shadow in one loop
(``rules/elementwise.py``). That loop vectorises: it sums the products only for a scalar
operand, and reads broadcast operands through a step of 0 instead of testing every
element. Checked on the optimised LLVM IR at Numba's default -O3, in a subprocess (the
tests run at -O1, which has no loop vectoriser)."""
import os
import subprocess
import sys

import numpy as np

from adjit.rules.core import lookup
from adjit.rules.elementwise import elementwise_update

CHILD = r'''
import operator, re
import numba, numpy as np
from adjit.rules.core import lookup
from adjit.rules.elementwise import elementwise_update
update = elementwise_update(lookup(operator.mul).partials[0], 2)  # d(a * b)/da = b

@numba.njit
def add_adjoint(g, ans, a, b, shadow):
    update(g, ans, a, b, shadow)

x = np.ones((8, 5))
add_adjoint(x, x, x, x, np.zeros((8, 5)))
ir = add_adjoint.inspect_llvm(add_adjoint.signatures[0])
print(len(re.findall(r"<\d+ x double>", ir)))
'''


def test_the_update_of_an_array_operand_vectorises():
    env = dict(os.environ, NUMBA_OPT="3")
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 0


_mul_da = elementwise_update(lookup(np.multiply).partials[0], 2)


def test_updates_with_broadcast_operands_add_the_right_adjoints():
    """Operands of the result's shape, a row, a column and a scalar: the shadow of a
    broadcast operand sums the products over the axes it was broadcast along, and a
    scalar operand's adjoint is the returned total."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal((4, 3))
    for a, b in [(rng.standard_normal((4, 3)), rng.standard_normal((4, 3))),
                 (rng.standard_normal(3), rng.standard_normal((4, 1))),
                 (rng.standard_normal((4, 1)), rng.standard_normal(3))]:
        ans = a * b
        shadow = np.zeros(np.shape(a))
        _mul_da(g, ans, a, b, shadow)
        want = _unbroadcast(g * b, np.shape(a))
        np.testing.assert_allclose(shadow, want, rtol=1e-13)
    b = rng.standard_normal((4, 3))
    total = _mul_da(g, 2.0 * b, 2.0, b, 0.0)  # a scalar operand: its adjoint is the total
    np.testing.assert_allclose(total, np.sum(g * b), rtol=1e-13)


def _unbroadcast(full, shape):
    """``full`` summed down to ``shape`` (NumPy's broadcasting rules, backwards)."""
    full = full.sum(axis=tuple(range(full.ndim - len(shape)))) if full.ndim > len(shape) else full
    axes = tuple(k for k, n in enumerate(shape) if n == 1 and full.shape[k] != 1)
    return full.sum(axis=axes, keepdims=True) if axes else full
