"""``unwinding_call``: call a derivative pass so that an exception leaves no records.

A derivative's forward pass pushes records that its reverse pass pops. When an exception
passes through the pair (a ``raise`` in a helper, Numba's own ``IndexError`` under
``boundscheck``, a ``ValueError`` from ``np.linalg``), the records pushed so far must go:
the exception may be caught in ``@njit`` code that calls the transform again in a loop,
and Numba cannot re-raise from an ``except`` block. So a transform calls its passes through
this intrinsic, which emits Numba's ordinary call of the pass's compiled overload but,
where Numba would propagate an error status at once, first sets the tape back to the depth
the transform was entered with::

    depth = tape_depth(tape)
    unwinding_call(fwd_tape, tape, depth, x, y)   # fwd_tape(tape, x, y)

The arrays held by dropped records keep their references (they leak, as a Python-level
truncate does); the tape's words are reclaimed.
"""

from llvmlite import ir as llvm_ir
from numba.core import cgutils, errors, imputils, types
from numba.extending import intrinsic

from adjit.runtime.tape import _call, _check_tape, _link_fast_path


def _inline_call_site(builder, callee):
    """Mark the call just emitted to ``callee`` ``alwaysinline``: the transform's own
    passes are inlined into it, so they see its constants (grad's seed ``ybar = 1.0``) and
    the call goes. Only these call sites are forced: forcing every derived pass (those of
    ``@njit`` callees too) into one function made LLVM's optimisation superlinear, a
    minute and more for a Runge-Kutta step called in a loop."""
    for instr in reversed(builder.block.instructions):
        if isinstance(instr, llvm_ir.CallInstr) and instr.callee is callee:
            instr.attributes.add("alwaysinline")
            return


@intrinsic
def unwinding_call(typingctx, fn, tape, depth, *args):
    """``fn(tape, *args)``; on an exception, ``tape`` is set back to ``depth`` first."""
    _check_tape(tape)
    if not isinstance(fn, types.Dispatcher):
        raise errors.TypingError("adjit unwinding_call: expects a dispatcher")
    call_args = (tape,) + tuple(args)
    inner = typingctx.resolve_function_type(fn, call_args, {})
    if inner is None:
        raise errors.TypingError(f"adjit unwinding_call: {fn} cannot take {call_args}")

    def codegen(context, builder, sig, llargs):
        cres = fn.dispatcher.get_compile_result(inner)
        values = [llargs[1]] + cgutils.unpack_tuple(builder, llargs[3], len(args))
        values = [context.cast(builder, v, have, want)
                  for v, have, want in zip(values, call_args, cres.signature.args)]
        status, result = context.call_internal_no_propagate(
            builder, cres.fndesc, cres.signature, values)
        _inline_call_site(builder, context.declare_function(builder.module, cres.fndesc))
        context.add_linking_libs([cres.library])
        with cgutils.if_unlikely(builder, status.is_error):
            _link_fast_path(context)
            _call(builder, "adjit_tape_set_depth", llargs[1], llargs[2])
            context.call_conv.return_status_propagate(builder, status)
        result = imputils.fix_returning_optional(context, builder, cres.signature, status,
                                                 result)
        return context.cast(builder, result, cres.signature.return_type, sig.return_type)
    star = types.StarArgTuple.from_types(args)  # Numba packs a *args parameter
    return inner.return_type(fn, tape, types.int64, star), codegen
