"""Runtime helpers of the generated code for lists of floats (``ir/lists.py``).

In reverse mode a list's shadow is a float array indexed like the list. The forward pass
saves the position each ``append`` and each element access used (``list_index``); the
reverse pass grows the shadow as reads add into it and takes the adjoint of an appended
value back out of it. They are ordinary ``@njit`` functions, so forward mode (``hvp``)
differentiates them like user code.
"""
import numpy as np

from ..compile.inline_library import internal_jit
from .core import nondiff


@internal_jit
def list_index(lst, i):
    """The position ``lst[i]`` refers to now (a negative index counts from the end)."""
    if i < 0:
        return i + len(lst)
    return i


@internal_jit
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


@internal_jit
def shadow_take(shadow, k):
    """The adjoint gathered at position ``k`` (0 when nothing was added there), which
    is then cleared: the element it belonged to is gone going backwards."""
    if k < shadow.shape[0]:
        g = shadow[k]
        shadow[k] = 0.0
        return g
    return shadow[:0].sum()  # a zero of the shadow's precision


@internal_jit
def shadow_add_prefix(shadow, n, g):
    """``shadow[:n] += g``: ``sum(L)`` of a list that held ``n`` items."""
    for k in range(n):
        shadow = shadow_add(shadow, k, g)
    return shadow


@internal_jit
def shadow_add_array(shadow, g):
    """``shadow[:len(g)] += g``: ``np.array(L)`` passes its shadow on to the list's."""
    for k in range(g.shape[0]):
        shadow = shadow_add(shadow, k, g[k])
    return shadow


@internal_jit
def list_argmax(lst):
    """The position of the first largest item: the one ``max(L)`` returns."""
    best = 0
    for k in range(1, len(lst)):
        if lst[k] > lst[best]:
            best = k
    return best


@internal_jit
def list_argmin(lst):
    """The position of the first smallest item: the one ``min(L)`` returns."""
    best = 0
    for k in range(1, len(lst)):
        if lst[k] < lst[best]:
            best = k
    return best


# positions: no derivative (and the generated code passes lists to them)
nondiff(list_index, list_argmax, list_argmin)
