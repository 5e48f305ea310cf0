"""Generated code that Numba cannot type is adjit's bug: the user gets an
``UnsupportedError`` naming the function and Numba's reason, never a raw TypingError."""
import math

import numba
import numpy as np
import pytest
from numba.core import ir

import adjit
from adjit.compile.dispatcher import generated_dispatcher
from adjit.ir.builder import Emitter


def _untypable(argtypes):
    """IR that calls ``math.sin`` on an array: Numba's typing refuses it."""
    loc = ir.Loc(__file__, 1)
    scope = ir.Scope(None, loc)
    block = ir.Block(scope, loc)
    e = Emitter(block, scope, loc)
    x = e.assign(ir.Arg("x", 0, loc), target="x")
    e.ret(e.call(math.sin, [x]))
    return {0: block}


def test_untypable_generated_code_is_an_unsupported_error():
    broken = generated_dispatcher("grad_broken", ["x"], _untypable)
    with pytest.raises(adjit.UnsupportedError, match="(?s)internal error.*grad_broken"):
        broken(np.ones(3))
    try:
        broken(np.ones(3))
    except adjit.UnsupportedError as err:
        assert not isinstance(err, numba.core.errors.TypingError)
        assert "sin" in str(err)  # Numba's reason is kept


def _crashing_builder(argtypes):
    """A builder with a bug (an AttributeError inside adjit)."""
    return None.blocks


def test_a_crashing_builder_is_an_unsupported_error():
    broken = generated_dispatcher("grad_crashing", ["x"], _crashing_builder)
    with pytest.raises(adjit.UnsupportedError, match="(?s)internal error.*AttributeError"):
        broken(1.0)


@numba.njit
def _compiles(x):
    return x * 2.0


def test_an_internal_error_stays_one_when_the_primal_compiles():
    # a failure is reported as the user's only when Numba cannot compile the user's own
    # function either (compile_error): this primal compiles
    broken = generated_dispatcher("grad_compiles", ["x"], _crashing_builder, primal=_compiles)
    with pytest.raises(adjit.UnsupportedError, match="(?s)internal error.*AttributeError"):
        broken(1.0)
