"""Where the forward sweep takes the shape of a local array from, for the reverse pass.

The reverse pass allocates the shadow of an array made in the function from its shape,
which the forward sweep saves (``y%shape``) right after ``y`` is defined. Saving the
shape of the argument an elementwise chain maps (``x`` for ``np.sin(2.0 * x)``) rather
than the result's lets a gradient's forward sweep drop the result when nothing else
reads it (``ir/dead_code``).
"""
from numba.core import ir, types

from ...rules.classify import elementwise_parts


def shape_of(name):
    return f"{name}%shape"


class SavedShapes:
    """Mixin of ``Shadows``: the shapes the forward sweep saves."""

    def record_shape(self, stmt):
        """Have the forward pass save ``y%shape`` right after ``y`` is defined: the
        reverse pass allocates ``y``'s shadow from it."""
        name = stmt.target.name
        ndim = self.typeof(name).ndim
        self.synthetic_types[shape_of(name)] = types.UniTuple(types.intp, ndim)
        source = self.same_shape_operand(stmt.value, ndim) or stmt.target
        shape = ir.Expr.getattr(source, "shape", stmt.loc)
        self.saved_shapes[id(stmt)] = [(shape_of(name), shape)]

    def same_shape_operand(self, value, ndim):
        """The earliest array with the shape of an elementwise result, through a chain
        of elementwise operations of one array operand each (``np.sin(x)``,
        ``2.0 * np.exp(x)``, ``(y - m) ** 2``): an argument of the function where the
        chain starts at one, else the last array the chain passes through. Each is
        computed before the result, so saving its shape never keeps more alive, and lets
        a gradient's forward pass drop the result when nothing else reads it
        (``dead_code``). None when the value is no such chain."""
        found = None
        for _ in range(64):
            parts = elementwise_parts(self.fn, value) if isinstance(value, ir.Expr) else None
            if parts is None:
                return found
            arrays = [a for a in parts[1] if isinstance(self.typeof(a.name), types.Array)]
            if len(arrays) != 1 or self.typeof(arrays[0].name).ndim != ndim:
                return found
            found = arrays[0]
            value = self.definition(found.name)
            if isinstance(value, ir.Arg):
                return found
        return found
