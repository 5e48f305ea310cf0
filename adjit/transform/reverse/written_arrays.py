"""Checks on element writes that reverse mode cannot undo or attribute (a mixin of the
reverse context): writes into arrays inside tuple arguments, into views a helper
returns, into undifferentiated arguments, and through a name that is one array on one
path and another on the other."""
import numpy as np
from numba.core import ir, types

from ...capture.effects import call_writes, callee_container_writes
from ...capture.returned_memory import item_shares_memory, shares_argument_memory
from ...rules.arrays import lookup_allocation
from ...rules.classify import call_name


class WrittenArrays:
    """``check_written_argument`` and what it reads (see the module)."""

    def read_at_variable_index(self, name):
        """Whether array ``name`` is (a view of) an item read out of a tuple at a
        variable index."""
        return any(self.dynamic_item(self.definition(link)) is not None
                   for link in self.view_chain(name))

    def check_written_argument(self, stmt, base):
        """A differentiated value written into an argument that has no gradient; any
        write into an array of a tuple argument (its old values could not be restored)."""
        if base is not None and self.argument_item(self.definition(base)) is not None:
            raise self.unsupported(f"writing into {self.user_name(stmt.target.name)}, an "
                                   "array inside a tuple argument,", stmt.loc,
                                   "pass the array as an argument of its own")
        self.check_helper_memory_write(stmt.target, base, stmt.loc)
        if base is None and self.read_at_variable_index(stmt.target.name):
            raise self.unsupported(f"writing into {self.user_name(stmt.target.name)}, an "
                                   "array read out of a tuple at a variable index (as in "
                                   "'for a in arrays'),", stmt.loc,
                                   "write into each array by name (arrays[0][i] = ...)")
        arg = self.definition(base) if base is not None else None
        if (isinstance(arg, ir.Arg) and arg.index not in self.shadowed_args
                and (stmt.value.name in self.act.active
                     or stmt.value.name in self.act.carriers)):
            raise self.unsupported(f"writing into an array argument ('{arg.name}') that is "
                                   "not differentiated", stmt.loc,
                                   "add it to argnums, or write into a new array")

    def check_helper_memory_write(self, target, base, loc):
        """A write into an array a helper returned that may share memory with its
        arguments or with another item it returned (``t = tail(y)``, ``U =
        as_grid(u)``, ``A, r = make(x)`` with ``r = A[0]``): the shadow reverse mode gives
        the result would miss the write's effect on the other name. Refused."""
        made = self.definition(base) if base is not None else None
        call, item = self.returning_call(made)
        if call is None or not (shares_argument_memory(self.fn, call) if item is None
                                else item_shares_memory(self.fn, call, item)):
            return
        callee = call_name(self.callee_object(call.func))
        raise self.unsupported(f"writing into {self.user_name(target.name)}, a view "
                               f"of an argument that '{callee}(...)' returns,", loc,
                               "write into the argument itself (y[1:] instead of "
                               "tail(y)), or return a copy from the helper")

    def returning_call(self, value):
        """``(call, None)`` when ``value`` is an ``@njit`` helper's call, ``(call, k)``
        when it is item ``k`` of the tuple such a call returns, else ``(None, None)``."""
        item = None
        if (isinstance(value, ir.Expr) and value.op == "static_getitem"
                and isinstance(value.index, int)):
            item, value = value.index, self.definition(self.array_root(value.value.name))
            if isinstance(value, ir.Expr) and value.op == "exhaust_iter":
                value = self.definition(self.array_root(value.value.name))
        if (isinstance(value, ir.Expr) and value.op == "call"
                and isinstance(self.typeof(value.func.name), types.Dispatcher)):
            return value, item
        return None, None

    def check_container_writes(self, stmt):
        """A call of an ``@njit`` helper that writes array items of a tuple argument
        (``step((pos, vel), dt)`` updating both in place): reverse mode would neither see
        the writes nor restore the arrays (a gradient that ignored the helper once, and
        arrays read back after the helper changed them). Refused; forward mode handles
        it. A helper whose analysis fails is assumed to write."""
        value = stmt.value
        ftype = self.typeof(value.func.name)
        sig = self.fn.calltypes.get(value)
        if not isinstance(ftype, types.Dispatcher) or sig is None or self.has_rule(value.func):
            return
        holding = [i for i, a in enumerate(value.args) if _holds_arrays(self.typeof(a.name))]
        if not holding:
            return
        try:
            written = callee_container_writes(ftype.dispatcher,
                                          tuple(types.unliteral(t) for t in sig.args))
        except Exception:  # cannot analyse the callee: assume the worst
            written = holding
        for i in holding:
            if i in written or value.vararg is not None:
                callee = ftype.dispatcher.py_func.__qualname__
                shown = self._container_name(value.args[i].name)
                typ = self.typeof(value.args[i].name)
                kind = ("a tuple of arrays" if isinstance(typ, types.BaseTuple) else
                        "a list of arrays" if isinstance(typ, types.ListType) else
                        "an object holding arrays")
                raise self.unsupported(
                    f"passing {shown}, {kind}, to "
                    f"'{callee}', which writes into its arrays,", stmt.loc,
                    "pass the arrays as separate arguments (step(pos, vel, dt))")

    def _container_name(self, name):
        """How the user wrote a container argument: ``'(pos, vel)'`` for a tuple built
        in the call, else its ``user_name``."""
        if "%built" in name:  # a tuple rebuilt from its items (capture.tuple_builds)
            return self.user_name(name.split("%built")[0])
        made = self.definition(name)
        if not (isinstance(made, ir.Expr) and made.op == "build_tuple"):
            return self.user_name(name)
        items = (self.user_name(v.name).strip("'") for v in made.items)
        return f"'({', '.join(items)})'"

    def check_merged_write(self, target, loc):
        """An element write (or a derived helper's write) into ``target``, a variable
        that merges an array with another one on
        different paths (``y = z if inplace else np.zeros_like(z)``, then ``y[0] = ...``):
        on the aliasing path it writes into ``z``, which the reverse pass, keeping one
        shadow for ``y``, would not see (a wrong gradient). Refused unless every merged
        array is made in the function and used only through the merge."""
        root = self.array_root(target.name)
        value = self.definition(root)
        if not (isinstance(value, ir.Expr) and value.op == "phi") or (
                self.alias_phi_source(root) is not None):  # (``root``: through copies)
            return
        label = self.defs[root][0][0]
        for v in self._merged_sources(root, label, self.cfg.dominators(), {root}):
            base = self.array_base(v.name)
            made = self.definition(base) if base is not None else None
            if (base is None or isinstance(made, ir.Arg) or not self.is_allocation(made)
                    or self._uses_besides_early_writes(base, label) > 1):
                shown = self.user_name(base if base is not None else v.name)
                written = self.user_name(target.name)
                what = (f"which is {shown} on one path and another array on another"
                        if shown != written else  # ``C = f(x) if p else g(x)``
                        "which holds different arrays on different paths to this write")
                advice = ("adjit follows such a write only when each array merged is "
                          "allocated in the function (np.zeros, np.empty, x.copy(), ...) and "
                          "used only under the merged name: ")
                advice += (f"copy the argument first ({made.name} = {made.name}.copy()), as "
                           "when buffers are swapped in a loop, or let each step write into "
                           "one array by name (step(u, unew); step(unew, u))"
                           if isinstance(made, ir.Arg)
                           else "allocate one array before the branches and fill it on each "
                           "path, or write into each array by its own name")
                raise self.unsupported(f"writing into {written}, {what},", loc, advice)

    def _merged_sources(self, phi, label, dom, seen):
        """The arrays phi ``phi`` merges: its incoming values, except one carried around a
        loop (its shadow passes its adjoint back), unless that is another phi, whose
        own sources entering the loop count (``u, unew = unew, u``: the buffer written
        may be the other one's first array, perhaps an argument)."""
        value = self.definition(phi)
        for v, came_from in zip(value.incoming_values, value.incoming_blocks):
            if not isinstance(v, ir.Var):
                continue
            if label not in dom[came_from]:
                yield v
                continue
            source = self.array_root(v.name)
            made = self.definition(source)
            if isinstance(made, ir.Expr) and made.op == "phi" and source not in seen:
                seen.add(source)
                yield from self._merged_sources(source, label, dom, seen)

    def _uses_besides_early_writes(self, name, label):
        """How many statements read variable ``name``, leaving out element writes into
        it that come only before the merge in block ``label`` (in no block reachable
        from it, around loops too). The merge and what feeds it are one use; another is
        a second name for the array (``w = unew``) or a read the merged name may alias.
        An early element write (a boundary value written into a scratch buffer before
        the time loop that swaps it, ``unew[0] = 0.0``) sees the array by one name, and so
        do a copy taken before the merge (``_copies_it``) and a read of its values
        (``_reads_values``)."""
        after = self.cfg.reachable_from(label)
        return sum(1 for node, block in self.blocks.items() for s in block.body
                   if not isinstance(s, ir.Del) and any(v.name == name for v in s.list_vars())
                   and not (isinstance(s, ir.Assign) and s.target.name == name)
                   and not self._reads_only_its_shape(s)
                   and (node in after or not (_element_write_into(s, name)
                                              or self._copies_it(s)
                                              or self._reads_values(s, name, after)
                                              or self._helper_only_reads(s, name)
                                              or self._makes_new_array_of(s))))

    def _reads_values(self, stmt, name, after):
        """Whether ``stmt`` reads values of array ``name`` and makes no second name for
        it: one scalar (``v[0] = u[0]``), or a view used only as what is copied into
        another array before the merge (``v[0, :] = u[0, :]``), as when a Dirichlet
        boundary is copied from the state into the scratch buffer before the loop that
        swaps the two."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem")
                and value.value.name == name):
            return False
        view = stmt.target.name
        if not isinstance(self.typeof(view), types.Array):
            return True
        uses = [(node, s) for node, block in self.blocks.items() for s in block.body
                if s is not stmt and not isinstance(s, ir.Del)
                and any(v.name == view for v in s.list_vars())]
        return bool(uses) and all(
            node not in after and isinstance(s, (ir.SetItem, ir.StaticSetItem))
            and s.value.name == view and s.target.name != name for node, s in uses)

    def _helper_only_reads(self, stmt, name):
        """Whether ``stmt`` calls an ``@njit`` helper that reads array ``name`` and
        neither writes it nor returns anything that could share its memory (a float):
        no second name for it (``p = forces(pos, F)`` before a time loop that rebinds
        ``pos = pos % L``, as velocity Verlet does)."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not (isinstance(value, ir.Expr) and value.op == "call"
                and isinstance(self.typeof(value.func.name), types.Dispatcher)
                and isinstance(self.typeof(stmt.target.name), (types.Number, types.NoneType))):
            return False
        try:
            written = call_writes(self.fn, value)
        except Exception:  # cannot analyse the callee: it may write anything
            return False
        return not any(v.name == name for v in written)

    def _makes_new_array_of(self, stmt):
        """Whether ``stmt`` is arithmetic on arrays (``F = -y ** 3``, ``y * dt``), whose
        result is always new memory: a read of the values, no second name."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        return (isinstance(value, ir.Expr) and value.op in ("binop", "unary")
                and isinstance(self.typeof(stmt.target.name), types.Array))

    def _copies_it(self, stmt):
        """Whether ``stmt`` is ``c = np.copy(a)`` (``a.copy()``): new memory, and, before
        the merge, values no write through the merged name has changed yet (``u_new =
        u.copy()`` before a time loop that swaps the two)."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(value, ir.Expr) and value.op == "getattr":  # the bound method
            return value.attr == "copy"
        return (isinstance(value, ir.Expr) and value.op == "call"
                and self.callee_object(value.func) is np.copy)

    def _reads_only_its_shape(self, stmt):
        """Whether ``stmt`` reads arrays only for their shape or to make a new array from
        them (``v = np.ones_like(x)``, ``n = x.shape[0]``): no second name for ``x``."""
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(value, ir.Expr) and value.op == "getattr":
            return value.attr in ("shape", "size", "ndim", "dtype")
        return (isinstance(value, ir.Expr) and value.op == "call"
                and lookup_allocation(self.callee_object(value.func)) is not None)


def _element_write_into(stmt, name):
    """Whether ``stmt`` writes elements of array ``name`` (``name[i] = v``) and reads
    ``name`` nowhere else in it."""
    return (isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and stmt.target.name == name
            and stmt.value.name != name
            and getattr(stmt, "index", None) is not None
            and not (isinstance(stmt.index, ir.Var) and stmt.index.name == name))


def _holds_arrays(typ):
    """Whether a tuple, typed List or ``@jitclass`` instance holds arrays, at any depth."""
    if isinstance(typ, types.BaseTuple):
        return any(isinstance(t, types.Array) or _holds_arrays(t) for t in typ.types)
    if isinstance(typ, types.ListType):
        return isinstance(typ.dtype, types.Array) or _holds_arrays(typ.dtype)
    if isinstance(typ, types.ClassInstanceType):
        return any(isinstance(t, types.Array) for t in typ.struct.values())
    return False
