"""Forward mode's post-condition: every handler that assigns an active variable must
assign its tangent too. A handler that forgets (simulated here) is an error naming the
variable and the line, never an undefined or stale tangent."""
import numpy as np
import pytest

import adjit
from adjit.transform import forward_handlers


def _uses_a_product(x, y):
    z = x * y
    return z + 1.0


def test_a_handler_that_assigns_no_tangent_is_an_error(monkeypatch):
    def forgetful(ctx, stmt, e):
        e.stmt(stmt)  # the primal only: no z%dot

    monkeypatch.setitem(forward_handlers.FWD_HANDLERS, "binop", forgetful)
    with pytest.raises(adjit.UnsupportedError, match="(?s)'z'.*no tangent"):
        adjit.jvp(_uses_a_product)(1.5, 2.0, 1.0, 0.0)


def test_the_same_function_has_the_right_tangent_with_the_real_handler():
    _, tangent = adjit.jvp(_uses_a_product)(1.5, 2.0, 1.0, 0.0)
    assert tangent == pytest.approx(2.0)
    _, tangent = adjit.jvp(_uses_a_product)(np.float64(1.5), 2.0, 0.0, 1.0)
    assert tangent == pytest.approx(1.5)
