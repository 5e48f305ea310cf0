"""Small helpers to emit Numba IR statements.

The derivative programs are Numba IR (``numba.core.ir``) built statement by statement. The
``Emitter`` appends to one block and invents fresh variable names in the function's scope,
so transform code reads like the program it produces.
"""
import copy
import itertools
import operator

from numba.core import ir

_counter = itertools.count()


def fresh_name(hint):
    """A variable name that cannot clash with Numba's (they never contain '%')."""
    return f"{hint}%{next(_counter)}"


class Emitter:
    """Append statements to ``block``; every statement carries ``loc`` (the source line)."""

    def __init__(self, block, scope, loc):
        self.block = block
        self.scope = scope
        self.loc = loc

    def var(self, name):
        """The ``ir.Var`` called ``name`` in this scope."""
        return ir.Var(self.scope, name, self.loc)

    def assign(self, value, target=None, hint="t"):
        """Emit ``target = value`` (a fresh target by default); return the target var."""
        if target is None:
            target = fresh_name(hint)
        if isinstance(target, str):
            target = self.var(target)
        self.block.append(ir.Assign(value, target, self.loc))
        return target

    def const(self, value, hint="c"):
        return self.assign(ir.Const(value, self.loc), hint=hint)

    def glob(self, value, name=None):
        """Load a Python object (function, module, dispatcher) as an ``ir.Global``."""
        name = name or getattr(value, "__name__", "g")
        return self.assign(ir.Global(name, value, self.loc), hint=f"${name}")

    def call(self, func, args, hint="call", target=None):
        """Call a Python object (loaded as a global) or a var holding a callee."""
        fvar = func if isinstance(func, ir.Var) else self.glob(func)
        expr = ir.Expr.call(fvar, list(args), (), self.loc)
        return self.assign(expr, target=target, hint=hint)

    def binop(self, fn, lhs, rhs, target=None, hint="b"):
        return self.assign(ir.Expr.binop(fn, lhs, rhs, self.loc), target=target, hint=hint)

    def add(self, lhs, rhs, target=None):
        return self.binop(operator.add, lhs, rhs, target=target, hint="acc")

    def neg(self, value):
        return self.assign(ir.Expr.unary(operator.neg, value, self.loc), hint="neg")

    def tuple(self, items, hint="tup"):
        return self.assign(ir.Expr.build_tuple(list(items), self.loc), hint=hint)

    def item(self, tup, index, target=None, hint="it"):
        expr = ir.Expr.static_getitem(tup, index, None, self.loc)
        return self.assign(expr, target=target, hint=hint)

    def getitem(self, arr, index, hint="el"):
        return self.assign(ir.Expr.getitem(arr, index, self.loc), hint=hint)

    def setitem(self, arr, index, value):
        self.block.append(ir.SetItem(arr, index, value, self.loc))

    def stmt(self, stmt):
        self.block.append(stmt)

    def jump(self, label):
        self.block.append(ir.Jump(label, self.loc))

    def branch(self, cond, truebr, falsebr):
        self.block.append(ir.Branch(cond, truebr, falsebr, self.loc))

    def ret(self, value):
        """Return through ``Expr.cast``, as Numba's lowering expects."""
        casted = self.assign(ir.Expr.cast(value, self.loc), hint="$ret")
        self.block.append(ir.Return(casted, self.loc))


def new_block(scope, loc):
    return ir.Block(scope, loc)


def raise_unless(blocks, e, cond, exc_class, args):
    """Go on only where ``cond`` (a boolean var) holds; where it does not, a block of its
    own raises ``exc_class(*args)`` (constants and vars: Numba's dynamic raise). ``e``
    emits into one of ``blocks``; returns an emitter on the block that goes on. A check
    written this way is part of its function: no function of its own to compile."""
    fail, go_on = max(blocks) + 1, max(blocks) + 2
    e.branch(cond, go_on, fail)
    blocks[fail] = new_block(e.scope, e.loc)
    blocks[fail].append(ir.DynamicRaise(exc_class, tuple(args), e.loc))
    blocks[go_on] = new_block(e.scope, e.loc)
    return Emitter(blocks[go_on], e.scope, e.loc)


def clone_value(value):
    """A shallow copy of an assigned value, so generated IR never shares nodes with the
    primal (Numba passes mutate nodes and key calltypes by node identity)."""
    if isinstance(value, ir.Expr):
        new = ir.Expr(value.op, value.loc, **dict(value._kws))
        if value.op == "phi":
            new.incoming_values = list(value.incoming_values)
            new.incoming_blocks = list(value.incoming_blocks)
        elif value.op in ("call", "build_tuple", "build_list", "build_set"):
            for key in ("args", "items"):
                if key in new._kws:
                    new._kws[key] = list(new._kws[key])
        return new
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
        return type(value)(*_ctor_args(value))
    return value  # ir.Var, ir.Arg: immutable enough


def _ctor_args(value):
    if isinstance(value, ir.Const):
        return (value.value, value.loc, value.use_literal_type)
    if isinstance(value, ir.Global):
        return (value.name, value.value, value.loc)
    return (value.index, value.name, value.value, value.loc)


def clone_stmt(stmt):
    """A copy of a statement whose expression node is fresh."""
    if isinstance(stmt, ir.Assign):
        return ir.Assign(clone_value(stmt.value), stmt.target, stmt.loc)
    new = copy.copy(stmt)
    return new


def copy_blocks(blocks):
    """Blocks Numba may edit without touching ``blocks``: new blocks, body lists and
    expression nodes (``clone_stmt``), sharing the variables and the scope. A deep copy
    cost a tenth of a long reverse pass's compile."""
    copies = {}
    for label, block in blocks.items():
        copies[label] = ir.Block(block.scope, block.loc)
        copies[label].body = [clone_stmt(stmt) for stmt in block.body]
    return copies
