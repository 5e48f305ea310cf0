"""The unwinding entry of a public transform: an exception leaves no records.

A derivative's forward pass pushes records that its reverse pass pops. When an exception
passes through them (a ``raise`` in a helper, Numba's own ``IndexError`` under
``boundscheck``, a ``ValueError`` from ``np.linalg``), the records pushed so far must go:
the exception may be caught in ``@njit`` code that calls the transform again in a loop,
and Numba cannot re-raise from an ``except`` block. A transform holds its passes inline
(``ir.inlining``) and is lowered under a private name (``compile.unwinding``); its public
symbol reads the tape's depth, calls that code and, where Numba would propagate an error
status, first sets the tape back to that depth::

    depth = tape_depth(tape)
    status = grad_f_unwound(...)
    if status is an error: tape_set_depth(tape, depth)
    return status

The arrays held by dropped records keep their references (they leak, as a Python-level
truncate does); the tape's words are reclaimed.
"""

from llvmlite import ir as llvm_ir
from numba.core import cgutils
from numba.core.callconv import RETCODE_NONE, RETCODE_OK

from adjit.runtime.tape import _call, _link_fast_path


def emit_unwinding_entry(context, public, body):
    """Fill ``public``, a transform's own symbol, with a call of ``body`` (its lowered
    code, of the same function type) that sets the tape back to its depth at entry when
    ``body`` returns an error status, so a transform can hold its passes inline: an
    exception raised anywhere in them (and perhaps caught in the ``@njit`` code that
    called the transform) leaves no records."""
    _link_fast_path(context)
    entry = public.append_basic_block("entry")
    read = public.append_basic_block("read_depth")
    run = public.append_basic_block("run")
    unwind = public.append_basic_block("unwind")
    done = public.append_basic_block("done")
    builder = llvm_ir.IRBuilder(entry)
    tape = _call(builder, "adjit_tape_acquire")  # null only when out of memory
    builder.cbranch(cgutils.is_null(builder, tape), run, read)
    builder.position_at_end(read)
    depth_read = _call(builder, "adjit_tape_depth", tape)
    builder.branch(run)
    builder.position_at_end(run)
    depth = builder.phi(depth_read.type)
    depth.add_incoming(llvm_ir.Constant(depth_read.type, 0), entry)
    depth.add_incoming(depth_read, read)
    status = builder.call(body, list(public.args))
    ok = builder.icmp_signed("==", status, RETCODE_OK)
    none = builder.icmp_signed("==", status, RETCODE_NONE)  # a success returning None
    builder.cbranch(builder.or_(ok, none), done, unwind)
    builder.position_at_end(unwind)
    now = _call(builder, "adjit_tape_acquire")
    with builder.if_then(cgutils.is_not_null(builder, now)):
        _call(builder, "adjit_tape_set_depth", now, depth)
    builder.branch(done)
    builder.position_at_end(done)
    builder.ret(status)
