"""Runtime helpers of the generated code for lists of floats (``ir/lists.py``).

In reverse mode a list's shadow is a float array indexed like the list. The forward pass
saves the position each ``append`` and each element access used (``list_index``); the
reverse pass grows the shadow as reads add into it and takes the adjoint of an appended
value back out of it. They are ordinary ``@njit`` functions, so forward mode (``hvp``)
differentiates them like user code.
"""
import numba
import numpy as np

from .core import nondiff


@numba.njit
def list_index(lst, i):
    """The position ``lst[i]`` refers to now (a negative index counts from the end)."""
    if i < 0:
        return i + len(lst)
    return i


@numba.njit
def shadow_add(shadow, k, g):
    """``shadow[k] += g``, first growing the shadow when ``k`` is past its end; returns
    the shadow (a new array when it grew)."""
    n = shadow.shape[0]
    if k >= n:
        grown = np.zeros(max(k + 1, 2 * n), shadow.dtype)
        for j in range(n):
            grown[j] = shadow[j]
        shadow = grown
    shadow[k] += g
    return shadow


@numba.njit
def shadow_take(shadow, k):
    """The adjoint gathered at position ``k`` (0 when nothing was added there), which
    is then cleared: the element it belonged to is gone going backwards."""
    if k < shadow.shape[0]:
        g = shadow[k]
        shadow[k] = 0.0
        return g
    return shadow[:0].sum()  # a zero of the shadow's precision


nondiff(list_index)  # a position: no derivative (and generated code passes lists to it)
