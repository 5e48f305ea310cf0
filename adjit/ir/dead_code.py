"""Dead-code removal over generated blocks.

``grad`` and ``hvp`` never read the primal value that the forward pass returns. The
forward pass built for them (``ReverseProgram.fwd_tape``) returns None instead, and this
pass then drops every statement that only fed the value: in a loop whose reverse pass
recomputes what it reads, nothing is left but the trip count. Doing it on the IR keeps
the generated program small and does not depend on LLVM proving the value unused.
Pure reads (``getitem``) and NumPy calls that only compute their result (``np.sin(x)``,
``np.sum(a)``: ``numpy_effects.pure_numpy_call``) go too, so an exception they would
raise in dead code is lost; the divisions and powers that may raise
``ZeroDivisionError`` stay.
"""
import math
import operator

from numba.core import ir

from .builder import fresh_name
from .nodes import global_values
from .numpy_effects import pure_numpy_call
from .purity import calls_pure_kernel

# expressions without effects: removing one whose result is unused changes nothing
_PURE_OPS = frozenset({"binop", "unary", "getitem", "static_getitem", "getattr", "cast",
                       "build_tuple", "pair_first", "pair_second", "phi", "typed_getitem"})
_RAISING = (operator.truediv, operator.floordiv, operator.mod, operator.pow)


def discard_result(blocks):
    """Make every return return None, then drop what only fed the returned value."""
    for block in blocks.values():
        if isinstance(block.terminator, ir.Return):
            loc = block.terminator.loc
            none = ir.Var(block.scope, fresh_name("none"), loc)
            block.insert_before_terminator(ir.Assign(ir.Const(None, loc), none, loc))
            block.body[-1] = ir.Return(none, loc)
    return remove_dead_code(blocks)


def remove_dead_code(blocks, removable=None):
    """Delete assignments of pure values that no effectful statement needs, directly or
    through other assignments (so a loop-carried accumulator nobody reads goes too).
    ``removable(stmt)``, if given, limits which assignments may go."""
    globals_ = global_values(blocks)
    pure = [s for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and effect_free(s.value, globals_)
            and (removable is None or removable(s))]
    pure_ids = {id(s) for s in pure}
    live = set()
    for block in blocks.values():
        for stmt in block.body:
            if id(stmt) not in pure_ids:
                live.update(v.name for v in stmt.list_vars())
    changed = True
    while changed:
        changed = False
        for stmt in pure:
            if stmt.target.name in live:
                for var in stmt.value.list_vars() if isinstance(stmt.value, ir.Expr) else (
                        [stmt.value] if isinstance(stmt.value, ir.Var) else []):
                    if var.name not in live:
                        live.add(var.name)
                        changed = True
    for block in blocks.values():
        block.body = [s for s in block.body
                      if id(s) not in pure_ids or s.target.name in live]
    return blocks


def effect_free(value, globals_):
    """Whether evaluating ``value`` has no effect besides its result (or an exception
    of a division or power, which dead-code removal keeps)."""
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
        return True
    if not isinstance(value, ir.Expr):
        return False
    if value.op == "binop" and value.fn in _RAISING:
        return False  # Numba raises ZeroDivisionError like Python: keep the exception
    if value.op in _PURE_OPS:
        return True
    if calls_pure_kernel(value, globals_):  # adjit's tangent kernels
        return True
    if value.op == "call":  # math functions of scalars, NumPy functions without effects
        func = globals_.get(value.func.name)
        if getattr(func, "__module__", None) == "math" or func in vars(math).values():
            return True
        return value.vararg is None and pure_numpy_call(func, len(value.args),
                                                        bool(value.kws))
    return False
