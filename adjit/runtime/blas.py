"""``gemm_accumulate(x, y, out)``: ``out += x @ y`` in one BLAS call, with no temporary.

A reverse pass adds the adjoint of a matrix product into a shadow (``W_bar += G @ H.T``).
Through NumPy operators that costs a contiguous copy of the transposed operand, a new
product array and a pass adding it in. BLAS ``gemm`` computes ``C = alpha A B + beta C``
in place: with ``beta = 1`` the product lands in the shadow directly, and a transposed
operand is a flag, not a copy. Numba's own ``@`` always calls it with ``beta = 0``.

The intrinsic calls ``numba_xxgemm``, the BLAS entry point Numba's linear algebra uses
(SciPy's BLAS, which Numba requires for ``@``). It takes 2-D float64 arrays, ``x`` and
``y`` C- or F-contiguous (a transpose of a C array is F) and ``out`` C-contiguous; callers
check the shapes first (``accumulate_product``).
"""
import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_CHAR = ir.IntType(8)
_VOIDPTR = ir.IntType(8).as_pointer()


def gemm_ready(*arrays):
    """Whether ``gemm_accumulate`` takes these types: 2-D float64, inputs C or F, out C."""
    *inputs, out = arrays
    return (all(isinstance(a, types.Array) and a.ndim == 2 and a.dtype == types.float64
                for a in arrays)
            and all(a.layout in "CF" for a in inputs) and out.layout == "C")


def _operand(builder, typ, array):
    """(transpose flag, leading dimension, data pointer) of a C-ordered result's operand
    in BLAS's column-major terms: a C array is its own transpose there."""
    rows, cols = cgutils.unpack_tuple(builder, array.shape, 2)
    same = typ.layout == "C"
    flag = ir.Constant(_CHAR, ord("n" if same else "t"))
    lead = cols if same else rows
    return flag, lead, builder.bitcast(array.data, _VOIDPTR)


@intrinsic
def gemm_accumulate(typingctx, x, y, out):
    """``out += x @ y`` (shapes ``(m, k)``, ``(k, n)``, ``(m, n)``, all nonzero)."""
    if not gemm_ready(x, y, out):
        return None
    sig = types.void(x, y, out)

    def codegen(context, builder, sig, args):
        from numba.np.linalg import ensure_blas
        ensure_blas()
        intp = context.get_value_type(types.intp)
        xa, ya, oa = (context.make_array(t)(context, builder, v)
                      for t, v in zip(sig.args, args))
        m, k = cgutils.unpack_tuple(builder, xa.shape, 2)
        n = cgutils.unpack_tuple(builder, ya.shape, 2)[1]
        trans_y, ld_y, data_y = _operand(builder, sig.args[1], ya)
        trans_x, ld_x, data_x = _operand(builder, sig.args[0], xa)
        one = cgutils.alloca_once_value(builder, context.get_constant(types.float64, 1.0))
        fnty = ir.FunctionType(ir.IntType(32), [
            _CHAR, _CHAR, _CHAR, intp, intp, intp, _VOIDPTR, _VOIDPTR, intp,
            _VOIDPTR, intp, _VOIDPTR, _VOIDPTR, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        # column-major: out^T (n x m) += y^T (n x k) @ x^T (k x m)
        status = builder.call(fn, [
            ir.Constant(_CHAR, ord("d")), trans_y, trans_x, n, m, k,
            builder.bitcast(one, _VOIDPTR), data_y, ld_y, data_x, ld_x,
            builder.bitcast(one, _VOIDPTR), builder.bitcast(oa.data, _VOIDPTR), n])
        with builder.if_then(cgutils.is_not_null(builder, status), likely=False):
            context.call_conv.return_user_exc(builder, RuntimeError,
                                              ("adjit: the BLAS matrix product failed",))
        return context.get_dummy_value()

    return sig, codegen


@numba.njit
def accumulate_product(x, y, out):
    """``out += x @ y`` through ``gemm_accumulate`` after NumPy's shape checks; empty
    products add nothing."""
    m, k = x.shape
    if y.shape[0] != k or out.shape != (m, y.shape[1]):
        raise ValueError("adjit: matrix product shadow of the wrong shape")
    if m == 0 or k == 0 or y.shape[1] == 0:
        return
    gemm_accumulate(x, y, out)
