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
from .purity import accumulated_argument, allocates_zeros, calls_pure_kernel

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


def remove_dead_code(blocks, removable=None, element_writes=False):
    """Delete assignments of pure values that no effectful statement needs, directly or
    through other assignments (so a loop-carried accumulator nobody reads goes too).
    ``removable(stmt)``, if given, limits which assignments may go. With
    ``element_writes``, element writes and ``accumulating_kernel`` updates into an
    array adjit allocated here (``local_arrays``) go too when nothing that stays reads
    the array's values: hvp's gradient, which it discards."""
    globals_ = global_values(blocks)
    if element_writes:
        _allocate_from_the_source(blocks, globals_)
    pure = [s for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and (
                effect_free(s.value, globals_)
                or (element_writes and allocates_zeros(s.value, globals_)))
            and (removable is None or removable(s))]
    arrays = local_arrays(blocks, globals_) if element_writes else {}
    writes = [(s, target.name) for b in blocks.values() for s in b.body
              for target in [_written_array(s, globals_)]
              if target is not None and target.name in arrays]
    written = {id(s): name for s, name in writes}
    kept_ids = {id(s) for s in pure} | set(written)
    defining = {}  # variable -> the removable statements that assign it
    for stmt in pure:
        defining.setdefault(stmt.target.name, []).append(stmt)
    writing = {}  # local array -> the removable element writes into it
    for stmt, name in writes:
        writing.setdefault(arrays[name], []).append(stmt)
    live, read = set(), set()  # variables needed; arrays whose values are needed
    work, done = [], set()

    def need(stmt):
        """Mark what ``stmt`` uses as needed, and queue the statements that this makes
        needed: a worklist, so a chain of n assignments costs n steps, not n passes."""
        if id(stmt) in done:
            return
        done.add(id(stmt))
        for var in stmt.list_vars():
            if var.name not in live:
                live.add(var.name)
                work.extend(defining.get(var.name, ()))
        for var in _value_reads(stmt, globals_, arrays, written.get(id(stmt))):
            if var in arrays and arrays[var] not in read:
                read.add(arrays[var])
                work.extend(writing.get(arrays[var], ()))

    for block in blocks.values():
        for stmt in block.body:
            if id(stmt) not in kept_ids:
                need(stmt)
    while work:
        need(work.pop())
    for block in blocks.values():
        block.body = [s for s in block.body if id(s) not in kept_ids
                      or (arrays[written[id(s)]] in read if id(s) in written
                          else s.target.name in live)]
    return blocks


def _allocate_from_the_source(blocks, globals_):
    """``zeros_shadow(s)`` for ``s = zeros_shadow(x)`` becomes ``zeros_shadow(x)`` (the
    same shape, dtype and order), so that a tangent's allocation does not keep a shadow
    nobody else reads alive only for its shape."""
    sources = {}
    for block in blocks.values():
        for stmt in block.find_insts(ir.Assign):
            if allocates_zeros(stmt.value, globals_, like=True):
                sources.setdefault(stmt.target.name, []).append(stmt.value.args[0])
    for block in blocks.values():
        for stmt in block.find_insts(ir.Assign):
            value = stmt.value
            if allocates_zeros(value, globals_, like=True):
                made = sources.get(value.args[0].name, ())
                if len(made) == 1:  # defined once: the name holds that allocation
                    value.args = [made[0]]


def local_arrays(blocks, globals_):
    """``{name: allocation}`` for each array ``zeros_shadow`` or ``zeros_shaped``
    allocates in these blocks, and the names it is copied to (``b = a``): arrays whose
    values only element reads and writes of those names reach. Any other use that
    stays reads the values (``_value_reads``); ``zeros_shadow(a)`` reads a's shape."""
    arrays = {}
    for block in blocks.values():
        for stmt in block.find_insts(ir.Assign):
            if allocates_zeros(stmt.value, globals_):
                arrays[stmt.target.name] = stmt.target.name
    changed = True
    while changed:  # copies, in any block order
        changed = False
        for block in blocks.values():
            for stmt in block.find_insts(ir.Assign):
                if (isinstance(stmt.value, ir.Var) and stmt.value.name in arrays
                        and stmt.target.name not in arrays):
                    arrays[stmt.target.name] = arrays[stmt.value.name]
                    changed = True
    defined = {}
    for block in blocks.values():  # a name assigned twice might hold another array
        for stmt in block.find_insts(ir.Assign):
            defined[stmt.target.name] = defined.get(stmt.target.name, 0) + 1
    return {name: root for name, root in arrays.items() if defined[name] == 1
            and defined[root] == 1}


def _written_array(stmt, globals_):
    """The array an element write or an ``accumulating_kernel`` call writes into (its
    only effect), or None."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return stmt.target
    return accumulated_argument(stmt, globals_)


def _value_reads(stmt, globals_, arrays, written=None):
    """The variables whose array values ``stmt`` may read: all it uses, except the
    array it only writes into (``written``, the name of a local array), the source of
    a copy into a name of the same local array (``arrays``; the copy stands for it)
    and the argument of ``zeros_shadow``, which reads a shape."""
    if written is not None:
        return [v.name for v in stmt.list_vars() if v.name != written]
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return [v.name for v in stmt.list_vars()]
    if isinstance(stmt, ir.Assign):
        value = stmt.value
        if isinstance(value, ir.Var) and stmt.target.name in arrays:
            return []
        if allocates_zeros(value, globals_, like=True):
            return []
    return [v.name for v in stmt.list_vars()]


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
