"""``@numba.stencil`` kernels called from differentiated code become ordinary helpers.

Numba lowers a stencil call by building, per argument types, a function that allocates
the output, fills its border with ``cval`` and loops over the interior, with the kernel's
relative indices (``a[-1]``) made absolute. ``StencilToHelper`` takes that function's IR
from Numba (``StencilFunc._stencil_wrapper``, stopped just before it compiles) and wraps it
in a generated dispatcher. The call then names a plain helper, which adjit differentiates
like any other ``@njit`` callee, in every mode: its loops and element reads and writes are
what the kernel computes, so no stencil-specific derivative rule exists to get wrong.

A call with ``out=`` (``kernel(u, out=unew)``) becomes a call of the function Numba
builds for that form, which fills ``unew`` (leaving its border alone) and returns it; the
helper takes ``unew`` as its last argument. Calls with ``neighborhood=`` are left alone
(and refused as unsupported by the transform).
"""
import threading

from numba.core import compiler, ir, ssa, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from numba.stencils.stencil import StencilFunc

from ..compile.caches import owned_cache
from ..compile.dispatcher import generated_dispatcher
from ..ir.builder import fresh_name
from ..ir.nodes import global_values

_helpers = owned_cache("stencil_helper")
_lock = threading.RLock()


class _StencilIR(Exception):
    """Carries the IR out of Numba's stencil builder, which would compile it next."""


def stencil_ir(sf, argtypes, with_out=False):
    """The untyped SSA IR of Numba's loop function for kernel ``sf`` on ``argtypes``
    (the last of which is the ``out=`` array when ``with_out``: the function then fills
    it and returns it)."""
    with global_compiler_lock:
        sf._typingctx.refresh()
        inputs = argtypes[:-1] if with_out else argtypes
        result = argtypes[-1] if with_out else None
        rtype, typemap, calltypes = sf.get_return_type(inputs)

        def stop(typingctx, targetctx, func_ir, *args, **kwargs):
            raise _StencilIR(func_ir)

        real = compiler.compile_ir
        compiler.compile_ir = stop  # (under the compiler lock: no other compile runs)
        try:
            sf._stencil_wrapper(result, None, rtype, typemap, calltypes, *argtypes)
        except _StencilIR as found:
            func_ir = found.args[0]
        finally:
            compiler.compile_ir = real
    ssa.reconstruct_ssa(func_ir)
    return func_ir


def stencil_helper(sf, argtypes, with_out=False):
    """A generated dispatcher computing ``sf(*args)`` (``sf(*args, out=o)`` with ``o``
    passed last when ``with_out``) for ``argtypes`` (one per pair)."""
    key = (sf, tuple(argtypes), with_out)
    with _lock:
        if key not in _helpers:
            arg_names = list(sf.kernel_ir.arg_names) + (["adjit_out"] if with_out else [])

            def build(types_now):
                blocks = stencil_ir(sf, tuple(types.unliteral(t) for t in types_now),
                                    with_out).blocks
                return _rename_arg(blocks, len(arg_names) - 1, "adjit_out") if with_out \
                    else blocks

            name = f"stencil_{getattr(sf.kernel_ir.func_id, 'func_name', 'kernel')}"
            _helpers[key] = generated_dispatcher(name.replace("<", "").replace(">", ""),
                                                 arg_names, build, plain=True)
        return _helpers[key]


def _rename_arg(blocks, index, name):
    """Numba names the ``out`` parameter after the kernel's free names; the helper's
    stub calls it ``name``."""
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg) and \
                    stmt.value.index == index:
                stmt.value = ir.Arg(name, index, stmt.value.loc)
    return blocks


def unread_result(fn, target, typ):
    """Whether ``target`` (a stencil call's result, of another layout than ``typ``, the
    helper's) is never read: a call made for its ``out=`` array alone, whose result
    may take the helper's type."""
    old = fn.typeof(target.name)
    if not (isinstance(old, types.Array) and isinstance(typ, types.Array)
            and (old.dtype, old.ndim) == (typ.dtype, typ.ndim)):
        return False
    return not any(target.name in (v.name for v in stmt.list_vars())
                   for block in fn.func_ir.blocks.values() for stmt in block.body
                   if not (isinstance(stmt, ir.Assign) and stmt.target.name == target.name)
                   and not isinstance(stmt, ir.Del))


class StencilToHelper:
    """``y = kernel(a, ...)`` with a ``@stencil`` kernel -> ``y = helper(a, ...)``."""

    name = "stencil_to_helper"

    def run(self, fn):
        gvals = global_values(fn.func_ir.blocks)
        tyctx = cpu_target.typing_context
        for block in fn.func_ir.blocks.values():
            for stmt in list(block.body):
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(value, ir.Expr) and value.op == "call"
                        and value.vararg is None and {k for k, _ in value.kws} <= {"out"}
                        and isinstance(gvals.get(value.func.name), StencilFunc)):
                    continue
                args = list(value.args) + [v for _, v in value.kws]  # out= goes last
                argtypes = tuple(fn.typeof(a.name) for a in args)
                helper = stencil_helper(gvals[value.func.name], argtypes, bool(value.kws))
                fnty = types.Dispatcher(helper)
                sig = tyctx.resolve_function_type(fnty, argtypes, {})
                if sig is None:
                    continue
                if sig.return_type != fn.typeof(stmt.target.name):
                    if not unread_result(fn, stmt.target, sig.return_type):
                        continue
                    # out=u[:, :]: the helper returns the view Numba types as a C array
                    fn.typemap[stmt.target.name] = sig.return_type
                var = ir.Var(block.scope, fresh_name("$stencil"), stmt.loc)
                block.body.insert(block.body.index(stmt),
                                  ir.Assign(ir.Global(helper.__name__, helper, stmt.loc), var,
                                            stmt.loc))
                fn.typemap[var.name] = fnty
                new = ir.Expr.call(var, args, (), stmt.loc)
                del fn.calltypes[value]
                fn.calltypes[new] = sig
                stmt.value = new
