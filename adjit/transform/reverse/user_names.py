"""How the reverse pass names an SSA value in a refusal: as the user wrote it.

A variable is named by its own name (``'y'``), a temporary by what made it: the call
(``'np.diff(...)'``), the item, attribute or index read (``'x[1:]'``, ``'a.T'``), or the
operator (``the result of '*'``).
"""
from numba.core import ir

from ...ir.nodes import source_name
from ...rules.classify import call_name, operator_name


class UserNames:
    """Mixin of ``ReverseContext`` (through ``Shadows``): ``user_name``."""

    def user_name(self, name):
        """How the user wrote the value SSA variable ``name`` holds: the variable's own
        name, or for a temporary the call or operator that made it."""
        if not name.startswith("$"):
            return f"'{source_name(name)}'"
        value = self.definition(name)
        if isinstance(value, ir.Expr) and value.op == "call":
            callee = self.callee_object(value.func)
            if callee is None:
                key, _ = self.callee_key(value.func)
                return f"'{call_name(key)}(...)'" if key is not None else "a call's result"
            return f"'{call_name(callee)}(...)'"
        if self.tuple_item(value) is not None:
            return f"item {value.index} of {self.user_name(value.value.name)}"
        if isinstance(value, ir.Expr) and value.op == "getattr":
            inner = self.user_name(value.value.name)
            return (f"{inner[:-1]}.{value.attr}'" if inner.endswith("'")
                    else f"'.{value.attr}' of {inner}")
        if isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem"):
            inner = self.user_name(value.value.name)
            shown = (_constant_index_text(value.index) if value.op == "static_getitem"
                     else None) or "..."
            return f"{inner[:-1]}[{shown}]'" if inner.endswith("'") else f"a part of {inner}"
        if isinstance(value, ir.Expr) and value.op in ("binop", "inplace_binop"):
            return f"the result of '{operator_name(value.fn)}'"
        if isinstance(value, ir.Expr) and value.op == "build_tuple":
            return "the tuple built on this line (an index such as 'y[1:3, idx]')"
        return "an intermediate array"


def _constant_index_text(index):
    """A constant index as written (``:, 0`` for ``(slice(None), 0)``), or None."""
    items = index if isinstance(index, tuple) else (index,)
    parts = []
    for item in items:
        if isinstance(item, slice):
            ends = ["" if v is None else str(v) for v in (item.start, item.stop)]
            parts.append(":".join(ends) + ("" if item.step is None else f":{item.step}"))
        elif isinstance(item, int):
            parts.append(str(item))
        else:
            return None
    return ", ".join(parts)
