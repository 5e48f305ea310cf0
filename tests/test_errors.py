"""Refusal messages (``adjit/errors.py``) name the function and the source line."""
import numba
import numpy as np
import pytest

import adjit


@numba.njit(inline="always")
def _largest_singular_value(x):
    return np.linalg.svd(np.outer(x, x))[1][0]


def _feature_loss(x):
    return _largest_singular_value(x) + 1.0


def test_a_refusal_inside_an_inlined_helper_names_the_helper():
    """Numba inlines ``inline='always'`` helpers before adjit sees the code: the line is
    the helper's, so the message says which function holds it."""
    with pytest.raises(adjit.UnsupportedError) as info:
        adjit.grad(_feature_loss)(np.array([0.5, 1.0, -0.3]))
    message = str(info.value)
    assert "in function '_feature_loss' (in '_largest_singular_value', inlined into it)" \
        in message
    assert "np.linalg.svd(np.outer(x, x))" in message


def _own_refusal(x):
    return np.linalg.svd(np.outer(x, x))[1][0]


def test_a_refusal_in_the_function_itself_names_only_it():
    with pytest.raises(adjit.UnsupportedError) as info:
        adjit.grad(_own_refusal)(np.array([0.5, 1.0, -0.3]))
    assert "in function '_own_refusal' at" in str(info.value)
    assert "inlined" not in str(info.value)
