"""Shadow arrays (fdata) of the reverse pass, and which primal arrays it may read.

Every active array has a shadow of its shape that the reverse pass increments in place:
- an argument's shadow is an argument of the reverse function (``x_adjit_shadow``);
- a view's shadow (``X[i]``, ``x[a:b]``, a row of ``for row in X``) is the same view of
  its parent's shadow, rebuilt from the saved index where it is needed;
- an array allocated in the function (``np.zeros`` ...) gets a zeroed shadow ``y%shadow``
  at the start of the reverse pass, from its shape saved going forward (``y%shape``), or,
  allocated in a loop or a branch, a fresh one at its first reverse use after each
  allocation (``y%fresh``). Its values never reach the reverse pass (reads are saved).
- the result of an elementwise operation (``np.sin(x)``, ``a * b``) or of a matrix product
  (``A @ B``) is a new array too and gets a shadow the same way; when the reverse pass
  needs its values it recomputes it, provided it is never written and its inputs are
  readable (``elementwise.py``, ``matmul.py``).

The reverse pass may read a primal array only when it holds what it held at the matching
forward point. Element writes ``a[i] = v`` into arguments save the overwritten value and
restore it on the way back, so arguments stay readable; arrays modified in ways that are
not undone (slice writes, ``a += b``, calls that may write) are never read going back.
"""
import numpy as np
from numba.core import ir, types

from ...ir.builder import fresh_name
from ...ir.nodes import copy_root, is_basic_index
from ...ir.lists import ARRAY_MAKERS, LIST_OF_ARRAYS_ADVICE, list_reduction

from ...rules.arrays import fresh_shadow, lookup_allocation
from ...capture.effects import call_returns, call_writes, callee_draws_random
from ...capture.returned_memory import fresh_results
from ...ir.value_types import copy_type, is_float_array
from .saved_shapes import SavedShapes, shape_of  # noqa: F401 (shape_of: re-exported)
from .tuple_items import TupleItems
from .user_names import UserNames
from .written_arrays import WrittenArrays
from ...rules.classify import (array_op_site, classify_call, elementwise_parts,
                               emit_array_op, has_rule, matmul_parts, written_call_name)
from ...rules.refusal_hints import unsupported_detail


def shadow_arg(name):
    return f"{name}_adjit_shadow"


def local_shadow(name):
    return f"{name}%shadow"


def argument_memory(name):
    """The reverse pass's name for argument array ``name``'s own memory: restores write
    through it, because the pass rebinds ``name`` to a snapshot where a block reads the
    argument's values between writes (``ReversePass.save_array``)."""
    return f"{name}%memory"


def argument_memory_of(ctx, arr, e):
    """Where the reverse pass writes old values back into argument array ``arr`` (or a
    view of one): the argument's own memory, or the same view of it (``row = x[0:2]``),
    because the pass may bind the argument's name to a snapshot of its values
    (``ReversePass.save_array``). Other arrays are ``arr`` itself."""
    base = ctx.array_base(arr.name)
    if base is None or not isinstance(ctx.definition(base), ir.Arg):
        return arr
    memory = e.var(argument_memory(base))
    if arr.name == base:
        return memory
    value = ctx.definition(arr.name)
    op = getattr(value, "op", None)
    index = (value.index if op == "getitem" else
             value.index_var if op == "static_getitem" else None)
    if index is not None and value.value.name == base:
        return e.getitem(memory, index, hint="view")
    return arr


def fresh_flag(name):
    return f"{name}%fresh"


def counter(name):
    return f"{name}%idx"


def empty_array(e, typ, **kw):
    """``np.zeros`` of ``typ``'s rank and dtype with every length 0: a shadow not made
    yet (``y%fresh`` marks it), or an array item's 'no cotangent' (``add_cotangent``)."""
    shape = e.tuple([e.const(0, hint="zero")] * typ.ndim, hint="shape")
    return e.call(np.zeros, [shape, e.glob(getattr(np, str(typ.dtype)))], **kw)


def is_element_index(typ, ndim):
    """An index that selects one element of an ``ndim`` array: ``i`` or ``(i, j)``."""
    if isinstance(typ, types.BaseTuple):
        return len(typ.types) == ndim and all(isinstance(t, types.Integer) for t in typ.types)
    return ndim == 1 and isinstance(typ, types.Integer)


class Shadows(TupleItems, SavedShapes, WrittenArrays, UserNames):
    """Mixin of ``ReverseContext``: shadows, views, local arrays and array readability."""

    def init_shadows(self):
        self.array_iterators = set()  # getiter vars over active arrays (need a counter)
        self.saved_shapes = {}        # id(stmt) -> [(y%shape, y.shape)] after ``y = ...``
        self.tuple_items = self.find_tuple_items()
        self.local_arrays, self.lazy_arrays = self.find_local_arrays()
        self.written, self.mutated, self.unrestored = self.find_writes()

    # -- aliasing ---------------------------------------------------------------------
    def array_root(self, name):
        """Follow copies and casts back to the variable that really defines an array."""
        return copy_root(self.definition, name)

    def view_of(self, name, loc):
        """``(parent var, index var)`` when array ``name`` is a view of another array made
        by basic indexing (``X[i]``, ``x[a:b]``, ``X[i, 1:]``) or is the row of an iteration
        over a 2-D+ array (index: the iterator's position counter); else None.

        A view shares memory with its parent, so its shadow is the same view of the
        parent's shadow; fancy indexing copies and is refused."""
        value = self.definition(self.array_root(name))
        if not isinstance(value, ir.Expr):
            return None
        indexed = self.indexed_array(value)
        if indexed is not None:
            if not self.basic_view(value, indexed[1]):
                raise self.unsupported("indexing an array with an array or mask",
                                       self.defs[self.array_root(name)][0][1].loc,
                                       "reverse mode gathers with an integer index array or "
                                       "a mask (x[idx], rows E[idx], V[faces]); index one "
                                       "axis at a time, as E[idx][:, cols]")
            return indexed
        if value.op == "pair_first":
            array, iter_var = self.iterated_array(value, loc)
            if self.typeof(array.name).ndim >= 2:
                return array, ir.Var(iter_var.scope, self.iteration_counter(iter_var), loc)
        return None

    def index_type(self, expr, index):
        sig = self.fn.calltypes.get(expr)
        return sig.args[1] if sig is not None else self.typeof(index.name)

    def iterated_array(self, pair_first, loc):
        """``(array var, getiter var)`` of ``pair_first(iternext(getiter(array)))``."""
        pair = self.definition(pair_first.value.name)
        if isinstance(pair, ir.Expr) and pair.op == "iternext":
            root = self.array_root(pair.value.name)
            source = self.definition(root)
            if (isinstance(source, ir.Expr) and source.op == "getiter"
                    and isinstance(self.typeof(source.value.name), types.Array)):
                return source.value, ir.Var(source.value.scope, root, loc)
        raise self.unsupported("iteration over this kind of object", loc,
                               "only iteration over arrays is differentiable")

    def iteration_counter(self, iter_var):
        """Name of the position counter of an array iterator (maintained by the forward
        pass, read by the reverse pass like any other saved integer)."""
        self.array_iterators.add(iter_var.name)
        self.synthetic_types[counter(iter_var.name)] = types.intp
        return counter(iter_var.name)

    def view_chain(self, name):
        """Array ``name`` and each array whose memory it views, nearest first, each
        through its copies (``array_root``); at most 100 steps."""
        for _ in range(100):
            name = self.array_root(name)
            yield name
            parent = self.view_parent(name)
            if parent is None:
                return
            name = parent.name

    def array_base(self, name):
        """The variable that owns an array's memory: an argument or a local allocation,
        through copies and views; None when unknown (a phi of arrays, a call result)."""
        for link in self.view_chain(name):
            value = self.definition(link)
            if (isinstance(value, ir.Arg) or self.is_allocation(value)
                    or self.argument_item(value) is not None):
                return link
        return None

    def indexed_array(self, value):
        """``(array, index var)`` when ``value`` indexes an array (``a[i]``, ``a[1:]``;
        the index var is None for a constant index without one), else None."""
        if value.op in ("getitem", "static_getitem") and isinstance(
                self.typeof(value.value.name), types.Array):
            return value.value, value.index if value.op == "getitem" else value.index_var
        return None

    def basic_view(self, value, index):
        """Whether indexing with ``index`` makes a view (integers and slices)."""
        return index is not None and is_basic_index(self.index_type(value, index))

    def view_parent(self, name):
        """The array that view ``name`` shares memory with (no side effects), or None."""
        value = self.definition(self.array_root(name))
        if not isinstance(value, ir.Expr):
            return None
        indexed = self.indexed_array(value)
        if indexed is not None and self.basic_view(value, indexed[1]):
            return indexed[0]
        site = array_op_site(self.fn, value)
        if site is not None and site.op.shape == "view":
            return site.args[0]
        returned = self.alias_source(value)
        if returned is not None:  # the helper returned the array it was given
            return returned
        source = self.alias_phi_source(self.array_root(name))
        if source is not None:
            return ir.Var(self.blocks[self.cfg.entry].scope, source, value.loc)
        if value.op == "pair_first":
            pair = self.definition(value.value.name)
            if isinstance(pair, ir.Expr) and pair.op == "iternext":
                source = self.definition(self.array_root(pair.value.name))
                if (isinstance(source, ir.Expr) and source.op == "getiter"
                        and isinstance(self.typeof(source.value.name), types.Array)
                        and self.typeof(source.value.name).ndim >= 2):
                    return source.value
        return None

    def is_allocation(self, value):
        """An array constructor, or an elementwise operation (``np.sin(x)``, ``a * b``),
        whose result is a new array."""
        if isinstance(value, ir.Expr) and value.op == "call":
            made = list_reduction(self.fn, value, self.definition)
            if made is not None and made[0] in ARRAY_MAKERS:  # np.array(L): a new array
                return True
        return (isinstance(value, ir.Expr) and value.op == "call"
                and lookup_allocation(self.callee_object(value.func)) is not None) or (
                    self.fresh_op(value) is not None) or self.new_item_of_call(value)

    def elementwise(self, value):
        """``(primitive, operands)`` of an elementwise array operation, else None."""
        return elementwise_parts(self.fn, value)

    def matmul(self, value):
        """``(primitive, [a, b])`` of a matrix product returning an array, else None."""
        return matmul_parts(self.fn, value)

    def fresh_op(self, value):
        """``(primitive, operands)`` of an operation whose result is a new array the
        reverse pass may recompute (elementwise operations, matrix products), else None."""
        site = array_op_site(self.fn, value)
        if site is not None and site.op.shape != "view":
            return site.op, site.args
        return self.elementwise(value) or self.matmul(value) or self.array_call(value)

    def array_call(self, value):
        """``(callee, args)`` of a call to an ``@njit`` function without a rule that returns
        a new float array and writes none of its arguments (its derived reverse takes the
        result's shadow as ``ybar``; the reverse pass recomputes it by calling it again),
        else None."""
        if not (isinstance(value, ir.Expr) and value.op == "call") or (
                value.kws or value.vararg or value.varkwarg):
            return None
        if (not isinstance(self.typeof(value.func.name), types.Dispatcher)
                or self.has_rule(value.func)):
            return None
        sig = self.fn.calltypes.get(value)
        if sig is None or not is_float_array(sig.return_type):
            return None
        if call_writes(self.fn, value) and not self.returns_fresh(value):
            return None
        if self.alias_source(value) is not None:  # ``return v`` (a check): v, not a new array
            return None
        return value.func, list(value.args)

    def returns_fresh(self, value):
        """Whether helper call ``value`` returns an array that is new on every path."""
        found = call_returns(self.fn, value, fresh_results)
        return found is not None and found[0] and found[1] is None

    def draws_random(self, value):
        """Whether ``value`` is an array an ``@njit`` helper returns (``array_call``) that
        must not be computed again: it draws random numbers (calling it again would
        return other numbers) or writes into its arguments (a second call would write
        them again, from their updated values). The reverse pass keeps the array the
        forward sweep got instead."""
        if self.array_call(value) is None:
            return False
        if call_writes(self.fn, value):
            return True
        sig = self.fn.calltypes[value]
        return callee_draws_random(self.typeof(value.func.name).dispatcher,
                                   tuple(types.unliteral(t) for t in sig.args))

    def rematerialisable(self, name):
        """Whether the reverse pass may recompute elementwise result ``name``: it is never
        written, the arrays it reads may be read (recursively recomputed), and it is not
        a matrix product or a factorisation or solve, which cost more than their result
        does to keep: those the forward sweep saves (by reference)."""
        if self.written & {name, None} or self.mutated & {name, None}:
            return False
        value = self.definition(name)
        site = array_op_site(self.fn, value)
        if self.matmul(value) is not None or (site is not None and site.op.shape == "nonlinear"):
            return False
        _, operands = self.fresh_op(value)
        return all(self.readable(a.name) for a in operands
                   if isinstance(self.typeof(a.name), types.Array))

    # -- shadows --------------------------------------------------------------------
    def shadow_of(self, var, loc, e):
        """The shadow array of an active array, as a variable of ``e``'s block.

        Arguments and local allocations have one; a view's shadow is the same view of its
        parent's shadow, emitted into ``e`` from the primal index (which the reverse-pass
        builder saves or recomputes like any other value it reads)."""
        name = self.array_root(var.name)
        value = self.definition(name)
        if isinstance(value, ir.Arg):
            if value.index not in self.shadowed_args:
                raise self.unsupported(f"writing into an array argument ('{value.name}') "
                                       "that is not differentiated", loc)
            return e.var(shadow_arg(value.name))
        if name in self.local_arrays:
            return e.var(local_shadow(name))
        if name in self.lazy_arrays:  # zeroed (or reallocated) after each allocation
            shadow = e.call(fresh_shadow, [e.var(local_shadow(name)), e.var(shape_of(name)),
                                           e.var(fresh_flag(name))], target=local_shadow(name))
            e.assign(ir.Const(False, loc), target=fresh_flag(name))
            return shadow
        view = self.view_of(name, loc)
        if view is not None:
            parent, index = view
            return e.getitem(self.shadow_of(parent, loc, e), index, hint="shadow")
        site = array_op_site(self.fn, value)
        if site is not None and site.op.shape == "view":
            parent = self.shadow_of(site.args[0], loc, e)
            return emit_array_op(e, site, [parent] + site.args[1:], hint="shadow")
        returned = self.alias_source(value)
        if returned is not None:
            return self.shadow_of(returned, loc, e)
        item = self.argument_item(value)
        if item is not None:  # item k of a tuple argument: item k of its shadow tuple
            return e.item(e.var(shadow_arg(item[0].name)), item[1], hint="shadow")
        source = self.alias_phi_source(name)
        if source is not None:
            return self.shadow_of(ir.Var(var.scope, source, loc), loc, e)
        item = self.dynamic_item(value)
        if item is not None:  # ``arrays[k]``: item k of the items' shadows
            return e.getitem(self.tuple_shadows(item[0], loc, e), e.var(item[1].name),
                             hint="shadow")
        # refused where the array is made (the line the user must change), not where
        # the reverse pass first met a use of it
        made = getattr(value, "loc", None) or loc
        self.refuse_unsupported_call(value, made)
        if (isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem")
                and isinstance(self.typeof(value.value.name), (types.List, types.ListType))):
            raise self.unsupported(f"{self.user_name(var.name)}, an array read out of a "
                                   "list", made, LIST_OF_ARRAYS_ADVICE)
        raise self.unsupported(f"{self.user_name(var.name)} (an array made inside the "
                               "function from differentiated inputs)", made,
                               "no rule says how this array is made; register one with "
                               "adjit.extend, or build it with NumPy calls or an @njit "
                               "helper")

    def refuse_unsupported_call(self, value, loc):
        """An array made by a call no rule covers: refuse the call itself, by name and
        with its reason (as its own handler would, which runs later going backwards).
        An item unpacked from a call's tuple (``U, s, Vt = np.linalg.svd(A)``) is made by
        that call, and so is an attribute of it (``w.real`` of ``w, v = np.linalg.eig(a)``),
        refused on the call's line."""
        for _ in range(6):
            if isinstance(value, ir.Var):  # a copy (``w`` unpacked from a tuple)
                value = self.definition(value.name)
                continue
            if not (isinstance(value, ir.Expr) and value.op in (
                    "static_getitem", "exhaust_iter", "pair_first", "getattr")):
                break
            value = self.definition(value.value.name)
        if not (isinstance(value, ir.Expr) and value.op == "call"):
            return
        loc = value.loc or loc
        cls = classify_call(self.fn, value)
        if cls.kind == "unsupported":  # (before the writes: such a call may write anything)
            name = written_call_name(cls, str(self.typeof(value.func.name)), loc)
            raise self.unsupported(f"'{name}'", loc, unsupported_detail(self.fn, value, cls))
        if (isinstance(self.typeof(value.func.name), types.Dispatcher)
                and call_writes(self.fn, value)):  # why array_call passed it over
            callee = self.typeof(value.func.name).dispatcher.py_func.__qualname__
            raise self.unsupported(
                f"'{callee}' writing into its arguments and returning an array that may "
                "be one of them on some path and a new one on another", loc,
                "copy the argument where the helper starts (u = u.copy(), as when it "
                "swaps buffers in a loop), return a new array on every path (v.copy() "
                "where it returns an argument), or return nothing and read the array it "
                "filled")

    def find_local_arrays(self):
        """Active arrays allocated in the function, ``{name: stmt}``: those allocated once
        on every path to a return get their shadow up front; the others (allocated in a
        loop or a branch) get a fresh one at their first use after each allocation."""
        upfront, lazy = {}, {}
        dom = None
        for label, block in self.blocks.items():
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and self.is_allocation(stmt.value)
                        and stmt.target.name in self.act.active
                        and is_float_array(self.typeof(stmt.target.name))):
                    continue
                name = stmt.target.name
                dom = dom or self.cfg.dominators()
                once = not self.cfg.in_loop(label) and all(label in dom[r]
                                                           for r in self.cfg.returns)
                (upfront if once else lazy)[name] = stmt
                self.record_shape(stmt)
        for stmt in self.array_phis():
            lazy[stmt.target.name] = stmt
            self.record_shape(stmt)
        return upfront, lazy

    def array_phis(self):
        """Active float-array phis (``y = y + h * f(y)`` in a loop) that get a shadow of
        their own, as scalars get an adjoint: along the edge taken backwards it is added
        into the incoming array's shadow, then it starts afresh. A phi that only merges
        one argument shares that argument's shadow instead."""
        found = []
        for block in self.blocks.values():
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                        and stmt.value.op == "phi" and self.active_array(stmt.target)):
                    continue
                if self.alias_phi_source(stmt.target.name) is None:
                    found.append(stmt)
        return found

    def returned_root(self, name):
        """``array_root``, also through helpers that return the array they were given
        (``w = step(w, dt)`` after updating ``w`` in place), so that a phi merging such
        results from two branches is recognised as one array's memory."""
        root = self.array_root(name)
        for _ in range(64):
            value = self.definition(root)
            returned = (self.alias_source(value) if isinstance(value, ir.Expr)
                        and value.op in ("call", "static_getitem") else None)
            if returned is None:
                return root
            root = self.array_root(returned.name)
        return root

    def alias_phi_source(self, name, _seen=()):
        """For a phi of arrays that all are one array's memory (``a = x`` on two paths, or
        ``w -= lr * g`` in a loop, whose phi merges ``w`` with itself; or the exit phi of a
        rotated ``while`` loop, merging ``w`` with the loop's own alias phi), that array."""
        value = self.definition(name)
        if not (isinstance(value, ir.Expr) and value.op == "phi") or name in _seen:
            return None
        sources = set()
        for v in value.incoming_values:
            if isinstance(v, ir.Var):
                root = self.returned_root(v.name)
                if root != name:
                    sources.add(self.alias_phi_source(root, _seen + (name,)) or root)
        sources.discard(name)
        return sources.pop() if len(sources) == 1 else None

    # -- which primal arrays the reverse pass may read ----------------------------------
    def find_writes(self):
        """``(written, mutated, unrestored)`` array bases: ``written`` by element writes
        here or in a derived callee (undone on the way back when they are arguments, and
        by the callee's reverse), ``mutated`` in ways that are not undone, ``unrestored``
        the written ones whose element writes here are not undone (local arrays). An
        unknown base is recorded as None."""
        written, mutated, unrestored = set(), set(), set()
        for block in self.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and isinstance(
                        self.typeof(stmt.target.name), types.Array):
                    base = self.array_base(stmt.target.name)
                    self.check_written_argument(stmt, base)
                    self.check_merged_write(stmt.target, stmt.loc)
                    index = stmt.index if isinstance(stmt, ir.SetItem) else stmt.index_var
                    # element and selection writes alike are undone on the way back,
                    # in arguments only (rev_setitem)
                    (written if index is not None else mutated).add(base)
                    if base is None or not isinstance(self.definition(base), ir.Arg):
                        unrestored.add(base)
                    continue
                value = getattr(stmt, "value", None)
                if not isinstance(value, ir.Expr):
                    continue
                if value.op == "inplace_binop" and isinstance(self.typeof(value.lhs.name),
                                                               types.Array):
                    mutated.add(self.array_base(value.lhs.name))
                elif value.op == "call":
                    self.check_container_writes(stmt)
                    for arr in call_writes(self.fn, value):  # a helper's returned view too
                        self.check_helper_memory_write(arr, self.array_base(arr.name),
                                                       stmt.loc)
                    for arr in self.arrays_a_call_may_write(stmt):
                        mutated.add(self.array_base(arr.name))
                    if self.derives_call(stmt):  # its reverse restores its writes
                        for arr in call_writes(self.fn, value):
                            self.check_merged_write(arr, stmt.loc)
                            written.add(self.array_base(arr.name))
        return written, mutated, unrestored

    def has_rule(self, func_var):
        """Whether a rule (or a non-differentiable declaration) is registered for the
        called object, which then is not derived even if it is an ``@njit`` function."""
        callee, _ = self.callee_key(func_var)
        return has_rule(callee)

    def derives_call(self, stmt):
        """Whether the reverse pass runs an ``@njit`` callee's derived reverse (which also
        undoes the callee's writes): it has no rule, and its result is active or it
        receives an active array."""
        if (not isinstance(self.typeof(stmt.value.func.name), types.Dispatcher)
                or self.has_rule(stmt.value.func)):
            return False
        return (self.active_float(stmt.target) or self.active_tuple(stmt.target)
                or self.active_array(stmt.target) or any(self.active_array(a) for a in stmt.value.args))

    def arrays_a_call_may_write(self, stmt):
        """Array arguments of a call that it may write without undoing it: those of any
        call but a derived ``@njit`` callee (whose reverse undoes its writes)."""
        return [] if self.derives_call(stmt) else call_writes(self.fn, stmt.value)

    def copy_before(self, before, source, hint):
        """Have the forward pass copy array ``source`` just before a statement, by adding
        to that statement's ``before`` list (``StmtInfo``), into a new variable kept by
        reference (nothing writes it); return the copy's name."""
        from numba.core.registry import cpu_target
        func, copy = fresh_name("$copy"), fresh_name(hint)
        self.synthetic_types[func] = cpu_target.typing_context.resolve_value_type(np.copy)
        self.synthetic_types[copy] = copy_type(self.typeof(source.name))
        self.saved_by_reference.add(copy)
        before.extend([
            (func, ir.Global("copy", np.copy, source.loc)),
            (copy, ir.Expr.call(ir.Var(source.scope, func, source.loc), [source], (),
                                source.loc))])
        return copy

    def never_written(self, name):
        """Whether no statement anywhere can write into the memory of array ``name`` (a
        phi of such arrays included): the reverse pass may then keep it by reference."""
        changed = self.written | self.mutated
        if None in changed:
            return False
        todo, seen = [name], set()
        while todo:
            n = self.array_root(todo.pop())
            if n in seen:
                continue
            seen.add(n)
            base = self.array_base(n)
            if base is not None:
                if base in changed:
                    return False
                continue
            value = self.definition(n)
            if not (isinstance(value, ir.Expr) and value.op == "phi"):
                return False
            todo.extend(v.name for v in value.incoming_values if isinstance(v, ir.Var))
        return True

    def may_write(self, stmt, name):
        """Whether ``stmt`` may write into the memory of array ``name``."""
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            targets = [stmt.target]
        elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
            value = stmt.value
            if value.op == "inplace_binop":
                targets = [value.lhs]
            elif value.op == "call":
                targets = call_writes(self.fn, value)
            else:
                return False
        else:
            return False
        mine = self.array_base(name)
        return any(mine is None or self.array_base(t.name) in (mine, None)
                   for t in targets if isinstance(self.typeof(t.name), types.Array))

    def readable(self, name, reads_data=True, remat=True):
        """Whether the reverse pass may use primal array ``name``: it must be (a view of)
        an argument that is never modified without being restored; reading its elements
        (``reads_data``) also needs the reads to be recomputed at the right point, which
        element-written arrays cannot promise (their element reads are saved instead).
        The result of an elementwise operation is recomputed (``remat``) when it is never
        written and its inputs are readable."""
        base = self.array_base(name)
        if base is not None and self.fresh_op(self.definition(base)) is not None:
            return remat and self.rematerialisable(base)  # recomputed where it is read
        if base is None or base in self.local_arrays or base in self.lazy_arrays:
            return False
        if base in self.mutated or None in self.mutated:
            return False
        if base in self.unrestored or None in self.unrestored:
            return False  # written here and never restored: it holds its final values
        return not (reads_data and (base in self.written or None in self.written))

