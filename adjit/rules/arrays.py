"""Rules for array primitives: reductions and products of float arrays to a float scalar.

Shadow-array updates are small numba-compiled functions called from the generated reverse
code (LLVM inlines them), so each rule is Python, never generated source.
"""
import numba


@numba.njit(cache=False)
def add_nonzero_at(shadow, index, g):
    """``shadow[index] += g`` unless ``g`` is zero: the reverse of an exhausted iterator's
    last ``next`` has a zero adjoint and an index one past the end."""
    if g != 0:
        shadow[index] += g
