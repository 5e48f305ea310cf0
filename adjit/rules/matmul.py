"""Reverse-mode helpers for matrix products producing arrays: ``C = A @ B`` and
``np.dot(A, B)`` with ``A`` 2-D and ``B`` 2-D or 1-D or ``A`` 1-D and ``B`` 2-D, and ``C = np.kron(A, B)`` with ``A``
and ``B`` both 1-D or both 2-D.

``update_a(g, b, shadow)`` adds ``g @ b.T`` (the outer product ``g b^T`` for a 1-D ``b``)
into ``A``'s shadow, ``update_b(g, a, shadow)`` adds ``a.T @ g`` (``np.outer(a, g)`` for a
1-D ``a``) into ``B``'s shadow; ``g``
is ``C``'s shadow. Both use BLAS (through SciPy, which Numba's ``@`` needs too): for
contiguous operands and a C-contiguous shadow, one ``gemm`` that adds the product into
the shadow in place (``runtime/blas.py``), else ``@`` and an addition.
"""
import operator

import numpy as np
from numba.core import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..compile.inline_library import INTERNAL_JIT_OPTIONS, internal_jit
from ..ir.purity import accumulating_kernel, pure_kernel
from ..runtime.blas import accumulate_product, gemm_ready
from .primitive import ALLOCATES, PRIMITIVES, Primitive
from .registry import _name


def _transposed(typ):
    """The type of ``x.T`` for an array type ``x``."""
    return typ.copy(layout={"C": "F", "F": "C"}.get(typ.layout, "A"))


def matmul_update_a(g, b, shadow):
    """``shadow += g @ b.T`` (``np.outer(g, b)`` for a 1-D ``b``)."""


@overload(matmul_update_a, jit_options=INTERNAL_JIT_OPTIONS)
def _matmul_update_a_impl(g, b, shadow):
    if isinstance(b, types.Array) and b.ndim == 1:
        def update1(g, b, shadow):
            if shadow.shape != (g.shape[0], b.shape[0]):
                raise ValueError("adjit: matrix product shadow of the wrong shape")
            for i in range(g.shape[0]):
                gi = g[i]
                for j in range(b.shape[0]):
                    shadow[i, j] += gi * b[j]
        return update1

    if gemm_ready(g, _transposed(b), shadow):
        return lambda g, b, shadow: accumulate_product(g, b.T, shadow)  # one gemm
    if b.layout in "CF":  # Numba's @ takes a transposed contiguous operand as it is
        def update_vm(g, b, shadow):
            shadow += np.ascontiguousarray(g) @ b.T
        return update_vm

    def update2(g, b, shadow):
        shadow += np.ascontiguousarray(g) @ np.ascontiguousarray(b.T)
    return update2


def matmul_update_b(g, a, shadow):
    """``shadow += a.T @ g``."""


@overload(matmul_update_b, jit_options=INTERNAL_JIT_OPTIONS)
def _matmul_update_b_impl(g, a, shadow):
    if isinstance(a, types.Array) and a.ndim == 1:  # c = a @ B: B's shadow += outer(a, g)
        def update_outer(g, a, shadow):
            if shadow.shape != (a.shape[0], g.shape[0]):
                raise ValueError("adjit: matrix product shadow of the wrong shape")
            for i in range(a.shape[0]):
                ai = a[i]
                for j in range(g.shape[0]):
                    shadow[i, j] += ai * g[j]
        return update_outer

    if gemm_ready(_transposed(a), g, shadow):
        return lambda g, a, shadow: accumulate_product(a.T, g, shadow)  # one gemm
    if a.layout in "CF":
        def update_mv(g, a, shadow):
            shadow += a.T @ np.ascontiguousarray(g)
        return update_mv

    def update(g, a, shadow):
        shadow += np.ascontiguousarray(a.T) @ np.ascontiguousarray(g)
    return update


# called from generated reverse code: as dispatchers
update_a = accumulating_kernel(
    internal_jit(lambda g, b, shadow: matmul_update_a(g, b, shadow)))
update_b = accumulating_kernel(
    internal_jit(lambda g, a, shadow: matmul_update_b(g, a, shadow)))

@accumulating_kernel
@internal_jit
def kron_update_a(g, b, shadow):
    """``shadow[i, j] += sum_kl g[i*p + k, j*q + l] * b[k, l]`` for ``C = kron(A, B)``
    (``b`` of shape (p, q)); the 1-D case drops the second index."""
    if b.ndim == 1:
        p = b.shape[0]
        for i in range(shadow.shape[0]):
            acc = 0.0
            for k in range(p):
                acc += g[i * p + k] * b[k]
            shadow[i] += acc
        return
    p, q = b.shape[0], b.shape[-1]
    for i in range(shadow.shape[0]):
        for j in range(shadow.shape[-1]):
            acc = 0.0
            for k in range(p):
                for m in range(q):
                    acc += g[i * p + k, j * q + m] * b[k, m]
            shadow[i, j] += acc


@accumulating_kernel
@internal_jit
def kron_update_b(g, a, shadow):
    """``shadow[k, l] += sum_ij g[i*p + k, j*q + l] * a[i, j]`` for ``C = kron(A, B)``."""
    p, q = shadow.shape[0], shadow.shape[-1]
    if a.ndim == 1:
        for i in range(a.shape[0]):
            for k in range(p):
                shadow[k] += g[i * p + k] * a[i]
        return
    for i in range(a.shape[0]):
        for j in range(a.shape[-1]):
            aij = a[i, j]
            for k in range(p):
                for m in range(q):
                    shadow[k, m] += g[i * p + k, j * q + m] * aij


# forward rules for generated code that calls them (forward-over-reverse): both updates
# are bilinear in (g, other) and accumulate into the shadow, so the tangent of the shadow
# takes update(g%dot, other) + update(g, other%dot)
ACCUMULATING_BILINEAR = (update_a, update_b, kron_update_a, kron_update_b)



# -- forward mode: both factors varying -------------------------------------------------
# ``C%dot = dA @ B + A @ dB`` as two products and an addition makes three arrays; these
# helpers make one: a ``MatrixProduct``'s ``forward`` is its helper
# ``tangent(a, da, b, db)``, which forward mode calls when both factors have tangents.

def product_tangent_impl(a, da, b, db):
    """``da @ b + a @ db``."""


@overload(product_tangent_impl, jit_options=INTERNAL_JIT_OPTIONS)
def _product_tangent(a, da, b, db):
    if all(isinstance(t, types.Array) and t.ndim == 2 and t.dtype == types.float64
           for t in (a, da, b, db)) and gemm_ready(a, db, types.Array(types.float64, 2, "C")):
        def fused(a, da, b, db):
            out = da @ b  # a new C-contiguous array
            accumulate_product(a, db, out)
            return out
        return fused
    return lambda a, da, b, db: da @ b + a @ db


product_tangent = internal_jit(lambda a, da, b, db: product_tangent_impl(a, da, b, db))


def kron_tangent_impl(a, da, b, db):
    """``kron(da, b) + kron(a, db)``."""


@overload(kron_tangent_impl, jit_options=INTERNAL_JIT_OPTIONS)
def _kron_tangent(a, da, b, db):
    # the product's own element type (float32 factors: a float32 tangent, as np.kron's)
    dtype = np.result_type(*(as_dtype(t.dtype) for t in (a, da, b, db)))
    if a.ndim == 1:
        def kron1(a, da, b, db):
            p = b.shape[0]
            out = np.empty(a.shape[0] * p, dtype)
            for i in range(a.shape[0]):
                ai, dai = a[i], da[i]
                for k in range(p):
                    out[i * p + k] = dai * b[k] + ai * db[k]
            return out
        return kron1

    def kron2(a, da, b, db):
        p, q = b.shape
        out = np.empty((a.shape[0] * p, a.shape[1] * q), dtype)
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                aij, daij = a[i, j], da[i, j]
                for k in range(p):
                    row = i * p + k
                    for m in range(q):
                        out[row, j * q + m] = daij * b[k, m] + aij * db[k, m]
        return out
    return kron2


kron_tangent = internal_jit(lambda a, da, b, db: kron_tangent_impl(a, da, b, db))

class MatrixProduct(Primitive):
    """A matrix product of float arrays returning an array (``@``, ``np.dot``,
    ``np.kron``). Reverse: ``update_a(g, b, shadow_a)`` and ``update_b(g, a, shadow_b)``
    add the transposed products into the shadows. Forward: ``fused(a, da, b, db)`` is the
    whole tangent when both factors vary, else the product of the varying one's tangent."""

    family = "matmul"
    kind = "matmul"

    def __init__(self, name, updates, fused, same_rank=False):
        self.name, self.updates, self.fused, self.same_rank = name, updates, fused, same_rank

    def matches(self, argtypes, result_type):
        """Float factors of rank 1 or 2 (of one rank for ``kron``), an array result."""
        if len(argtypes) != 2:
            return False
        a, b = (types.unliteral(t) for t in argtypes)
        if not all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float)
                   and t.ndim in (1, 2) for t in (a, b, result_type)):
            return False
        return a.ndim == b.ndim if self.same_rank else True

    def effects(self):
        return ALLOCATES

    @property
    def reverse(self):
        return self.updates

    @property
    def forward(self):
        return self.fused


def defproduct(keys, updates, fused, same_rank=False):
    """Register a matrix product: its two shadow updates and its fused tangent."""
    fused = pure_kernel(fused)  # a new array: forward mode may compute it later
    PRIMITIVES.register(keys, MatrixProduct(_name(keys[0]), tuple(updates), fused,
                                            same_rank))


def lookup_product(prim):
    """The ``MatrixProduct`` registered for ``prim`` (``operator.matmul``), or None."""
    return PRIMITIVES.get(prim, "matmul")


defproduct([operator.matmul, np.dot], (update_a, update_b), product_tangent)
defproduct([np.kron], (kron_update_a, kron_update_b), kron_tangent, same_rank=True)
