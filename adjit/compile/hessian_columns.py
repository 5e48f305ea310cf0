"""The dense Hessian's column loop: one HVP per unit vector, then symmetrised.

A jitted function that takes the HVP dispatcher as an argument, so one loop serves
every ``adjit.hessian``; its overload's compiled implementations hold the HVP's code
and are cleared with the other caches when a callee is rebound."""
import numba
import numpy as np
from numba.core import types

from .caches import registered_cache, track_dispatcher
from .inline_library import INTERNAL_JIT_OPTIONS


def _columns_kernel():
    """Build the jitted column loop and register its overload caches for clearing."""
    from numba.extending import overload

    def columns(hv, x):
        pass

    @overload(columns, jit_options=INTERNAL_JIT_OPTIONS)
    def columns_impl(hv, x):
        if isinstance(x, types.Float):
            return lambda hv, x: hv(x, 1.0)
        if not (isinstance(x, types.Array) and isinstance(x.dtype, types.Float)):
            from ..errors import ArgumentError
            raise ArgumentError(f"adjit.hessian takes a function of one float or float "
                                f"array; the argument given is {x}. Use adjit.hvp for "
                                "other arguments (a tuple: one HVP per tangent tuple)")

        def impl(hv, x):
            n = x.size
            out = np.empty((n, n), dtype=x.dtype)
            # C-ordered, whatever x's layout (a Fortran-ordered x made e's reshape fail);
            # element j of x counts in C order, in the columns and the rows alike
            e = np.zeros(x.shape, x.dtype)
            flat = e.reshape(n)
            for j in range(n):
                flat[j] = 1.0
                col = np.ravel(hv(x, e))
                for i in range(n):
                    out[i, j] = col[i]
                flat[j] = 0.0
            for i in range(n):
                for j in range(i + 1, n):
                    s = 0.5 * (out[i, j] + out[j, i])
                    out[i, j] = s
                    out[j, i] = s
            # as JAX: x.shape + x.shape, H[i, j, k, l] = d2f / dx[i, j] dx[k, l]
            # for a matrix, and 0-d for a 0-d x
            return out.reshape(x.shape + x.shape)
        return impl

    class CompiledColumns:
        """The overload's compiled implementations hold the HVP's code: a rebound callee
        (``invalidate_all``) must drop them, as it resets ``hessian_columns``."""

        @staticmethod
        def clear():
            from numba.core.registry import cpu_target
            try:
                function_type = cpu_target.typing_context.resolve_value_type(columns)
            except ValueError:  # Numba has not installed the overload yet: none compiled
                return
            for template in function_type.templates:
                template._impl_cache.clear()
                template._compiled_overloads.clear()
    registered_cache(CompiledColumns)
    return track_dispatcher(numba.njit(lambda hv, x: columns(hv, x)))


hessian_columns = _columns_kernel()
