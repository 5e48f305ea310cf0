"""Arrays inside tuples, for the reverse pass.

An array item of a tuple is an array variable of its own once it is read out
(``call, put = price(...)``, ``t[1]``):
- an item of a tuple built here (``(a, b)``) is that item's variable;
- an item of the tuple an ``@njit`` helper returns is the argument the helper returns as
  that item (``return accel, potential``), or else a new array with a shadow of its own,
  which the helper's derived reverse takes as the item's cotangent;
- an item of a tuple argument is item ``k`` of the argument's tuple of shadows.
"""
from numba.core import ir, types

from ...capture.effects import returned_argument_of_call, returned_item_argument_of_call
from ...ir.value_types import is_float_array
from ...rules.arrays import zeros_shadow


class TupleItems:
    """Mixin of ``Shadows``: where the arrays read out of tuples come from."""

    def tuple_root(self, name):
        """Follow copies, casts and unpacking (``exhaust_iter``) of a tuple back to the
        variable that defines it."""
        for _ in range(100):
            name = self.array_root(name)
            value = self.definition(name)
            if not (isinstance(value, ir.Expr) and value.op == "exhaust_iter"
                    and isinstance(self.typeof(value.value.name), types.BaseTuple)):
                break  # (unpacking an array makes a new tuple: its root is itself)
            name = value.value.name
        return name

    def tuple_item(self, value):
        """``(tuple root, k)`` when ``value`` reads constant item ``k`` of a tuple (``t[0]``,
        or ``a, b = t``), else None."""
        if not (isinstance(value, ir.Expr) and value.op == "static_getitem"
                and isinstance(value.index, int)):
            return None
        typ = self.typeof(value.value.name)
        if not isinstance(typ, types.BaseTuple) or not typ.types:
            return None
        return self.tuple_root(value.value.name), value.index % len(typ.types)

    def dynamic_item(self, value):
        """``(tuple var, index var)`` when ``value`` reads an item of a homogeneous tuple
        of float arrays at a variable index (``arrays[k]``, as ``for a in arrays``
        becomes), else None."""
        if not (isinstance(value, ir.Expr) and value.op == "getitem"):
            return None
        typ = self.typeof(value.value.name)
        if isinstance(typ, types.UniTuple) and is_float_array(typ.dtype):
            return value.value, value.index
        return None

    def tuple_shadows(self, tup, loc, e):
        """The tuple of the shadows of ``tup``'s items, indexable like ``tup``: a tuple
        argument's tuple of shadows, or a tuple built here from its items' shadows (a
        zero scratch array for an item that takes no adjoint)."""
        root = self.tuple_root(tup.name)
        made = self.definition(root)
        if isinstance(made, ir.Arg):  # (an argument's shadow is a tuple of shadows)
            return self.shadow_of(ir.Var(tup.scope, root, loc), loc, e)
        if isinstance(made, ir.Expr) and made.op == "build_tuple":
            return e.tuple([self.shadow_of(item, loc, e) if self.active_array(item)
                            else e.call(zeros_shadow, [e.var(item.name)], hint="scratch")
                            for item in made.items], hint="shadows")
        raise self.unsupported(f"reading an array out of {self.user_name(tup.name)} at a "
                               "variable index", loc, "the tuple must be an argument or "
                               "built in the function; a tuple a call returned has no "
                               "shadows to index")

    def item_alias(self, value):
        """The array variable an array item of a tuple is: item ``k`` of ``(a, b)``, or
        the argument a called helper returns as that item (``return y, out``); else None."""
        found = self.tuple_item(value)
        if found is None:
            return None
        root, k = found
        made = self.definition(root)
        if isinstance(made, ir.Expr) and made.op == "build_tuple":
            return made.items[k] if isinstance(self.typeof(made.items[k].name),
                                               types.Array) else None
        return returned_item_argument_of_call(self.fn, made, k)

    def alias_source(self, value):
        """The array a call result or tuple item is another name for: the argument a
        helper returns (``return out``), or an array item of a tuple; else None."""
        returned = returned_argument_of_call(self.fn, value)
        return returned if returned is not None else self.item_alias(value)

    def argument_item(self, value):
        """``(ir.Arg, k)`` when ``value`` reads float-array item ``k`` of a tuple argument
        that has a tuple of shadows, else None."""
        found = self.tuple_item(value)
        if found is None:
            return None
        arg = self.definition(found[0])
        if (isinstance(arg, ir.Arg) and arg.index in self.shadowed_args
                and is_float_array(self.typeof(found[0]).types[found[1]])):
            return arg, found[1]
        return None

    def new_item_of_call(self, value):
        """Whether ``value`` reads a new float array out of the tuple an ``@njit`` helper
        returned (``call, put = price(...)``): such an item gets a shadow of its own, which
        the helper's derived reverse takes as that item's cotangent."""
        found = self.tuple_item(value)
        if found is None or self.item_alias(value) is not None:
            return False
        root, k = found
        made = self.definition(root)
        return (isinstance(made, ir.Expr) and made.op == "call"
                and isinstance(self.typeof(made.func.name), types.Dispatcher)
                and not self.has_rule(made.func)
                and is_float_array(self.typeof(root).types[k]))

    def find_tuple_items(self):
        """``{tuple root: {k: [names]}}``: the active arrays read out of each tuple."""
        found = {}
        for block in self.blocks.values():
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and stmt.target.name in self.act.active
                        and is_float_array(self.typeof(stmt.target.name))):
                    continue
                item = self.tuple_item(stmt.value)
                if item is not None:
                    found.setdefault(item[0], {}).setdefault(item[1], []).append(
                        stmt.target.name)
        return found

    def stale_after(self, stmt):
        """Arrays made in a loop whose shadows start afresh once the reverse pass has
        passed ``stmt`` going backwards: the array ``stmt`` allocates, or the new arrays
        of the tuple a helper call returns (read out of it later, so the tuple's call is
        where they are made)."""
        if not isinstance(stmt, ir.Assign):
            return []
        name = stmt.target.name
        if (name in self.lazy_arrays and not self.new_item_of_call(stmt.value)
                and not (isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi")):
            return [name]
        items = self.tuple_items.get(name, {})
        return [n for names in items.values() for n in names if n in self.lazy_arrays]
