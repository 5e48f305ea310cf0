"""Reverse mode: an array argument swapped with a buffer of the function's own is copied
where the function starts.

Time-stepping code often swaps its argument with a scratch buffer::

    def relax(u, f, n_iter):
        u_new = u.copy()
        for it in range(n_iter):
            for i in range(1, n - 1):
                u_new[i] = 0.5 * (u[i - 1] + u[i + 1] - h2 * f[i])
            u, u_new = u_new, u
        return np.sum(u * u)

From the second sweep on, ``u_new`` is the caller's ``u``, so every other sweep writes
into the argument: the name written through (``u_new``) is the argument on one path and
the buffer on another, and reverse mode, which keeps one shadow per name, cannot follow
that. It derives the function as if it began with ``u = u.copy()``: the values are the
same, and the caller's array is left as it was, as reverse mode leaves every argument it
writes into. (Forward mode follows the writes into the argument, as the primal does.)

Only the derivation sees the copy: analyses of the function as a callee (what a caller's
call of it writes, whether it returns new memory) see the primal, which does write into
its argument, and so does the primal a caller may call again.
"""
import numpy as np
from numba.core import ir
from numba.core.ir_utils import build_definitions
from numba.core.registry import cpu_target

from ...capture.effects import _aliases, memory_root
from ...ir.builder import fresh_name
from ...ir.nodes import defining_stmts
from ...ir.value_types import is_float_array
from ..analysis import written_arrays


def swapped_arguments(fn):
    """The float-array arguments written through a variable that merges them with another
    array (a phi whose incoming arrays have different memory), by name."""
    defs = defining_stmts(fn.func_ir.blocks)
    args = {s.target.name for b in fn.func_ir.blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Arg)
            and is_float_array(fn.typeof(s.target.name))}
    if not args:
        return set()

    def definition(name):
        found = defs.get(name, ())
        return found[0][1].value if len(found) == 1 else None

    def merges_memories(name):
        value = definition(name)
        return (isinstance(value, ir.Expr) and value.op == "phi"
                and memory_root(fn, definition, name) is None)

    found = set()
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            for target in written_arrays(fn, stmt, defs)[0]:
                aliases = _aliases(fn, target.name, defs)
                if aliases & args and any(merges_memories(n) for n in aliases):
                    found |= aliases & args
    return found


def copy_swapped_arguments(fn):
    """``fn``, or a copy of it in which each swapped argument is copied where the function
    starts: ``u = arg(0)`` becomes ``u.arg = arg(0); u = np.copy(u.arg)``, so every use of
    ``u`` reads the copy. ``fn`` itself (the shared capture) is left as it is."""
    swapped = swapped_arguments(fn)
    if not swapped:
        return fn
    func_ir = fn.func_ir.copy()  # new blocks and statement lists, the same statements
    typemap, calltypes = dict(fn.typemap), dict(fn.calltypes)
    entry = func_ir.blocks[min(func_ir.blocks)]
    tyctx = cpu_target.typing_context
    fnty = tyctx.resolve_value_type(np.copy)
    for name in sorted(swapped):
        at = next(i for i, s in enumerate(entry.body)
                  if isinstance(s, ir.Assign) and s.target.name == name)
        stmt = entry.body[at]
        loc = stmt.loc
        given = ir.Var(entry.scope, fresh_name(f"{name}.arg"), loc)  # shown as the name
        func = ir.Var(entry.scope, fresh_name("$np_copy"), loc)
        call = ir.Expr.call(func, [given], (), loc)
        sig = tyctx.resolve_function_type(fnty, (typemap[name],), {})
        typemap[given.name], typemap[func.name] = typemap[name], fnty
        typemap[name] = sig.return_type
        calltypes[call] = sig
        entry.body[at:at + 1] = [ir.Assign(stmt.value, given, loc),
                                 ir.Assign(ir.Global("copy", np.copy, loc), func, loc),
                                 ir.Assign(call, stmt.target, loc)]
    func_ir._definitions = build_definitions(func_ir.blocks)
    return type(fn)(fn.py_func, fn.argtypes, func_ir, typemap, calltypes, fn.return_type,
                    dispatcher=fn.dispatcher, extra=dict(fn.extra))
