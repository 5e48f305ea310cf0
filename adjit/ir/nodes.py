"""Classifying IR statements and looking up what they name, shared by the passes."""
import contextlib
import threading

from numba.core import ir, types

_indexed = threading.local()  # id(blocks) -> (blocks, first values, ambiguous, globals)


@contextlib.contextmanager
def definitions_indexed(blocks):
    """While the body runs, ``single_definition`` and ``global_value`` answer for
    ``blocks`` from an index built once, instead of scanning every statement per
    question. Only for a phase that reads ``blocks`` without changing them (a transform
    building new IR from them): forward mode over ``large_single_block``'s reverse pass
    asked 4,000 times, 3 s of scanning."""
    indexes = _indexed.__dict__.setdefault("by_id", {})
    key = id(blocks)
    if key in indexes:
        yield
        return
    first, ambiguous, loads = {}, set(), {}
    for block in blocks.values():
        for stmt in block.find_insts(ir.Assign):
            name, value = stmt.target.name, stmt.value
            if isinstance(value, (ir.Global, ir.FreeVar)):
                loads.setdefault(name, value.value)
            if name in first:
                if not _same_value(first[name], value):
                    ambiguous.add(name)
            else:
                first[name] = value
    indexes[key] = (blocks, first, ambiguous, loads)
    try:
        yield
    finally:
        del indexes[key]


def _index_of(blocks):
    """The index ``definitions_indexed`` holds for ``blocks``, or None."""
    entry = _indexed.__dict__.get("by_id", {}).get(id(blocks))
    return entry if entry is not None and entry[0] is blocks else None


def node_kind(stmt):
    """The handler key of a statement: the expression op, or the node class name."""
    if isinstance(stmt, ir.Assign):
        value = stmt.value
        if isinstance(value, ir.Expr):
            return value.op
        if isinstance(value, ir.Var):
            return "var"
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return "global"
        return type(value).__name__.lower()
    return type(stmt).__name__.lower()


def source_name(name):
    """A variable's name as the user wrote it: without Numba's SSA version (``y.1``), the
    tag a splice adds to an inlined function's variables (``d#fwd#66``) or the suffix of
    a variable adjit made for it (``t%item0%7``, an item of the tuple ``t``)."""
    return name.split("#")[0].split(".")[0].split("%")[0]


#: how a user wrote the IR constructs no handler covers, and what to do instead
_CONSTRUCT_WORDS = {
    "build_map": ("a dict holding differentiated values",
                  "adjit differentiates values held in arrays, tuples and float lists: keep "
                  "named parameters in a tuple or in separate variables"),
    "build_set": ("a set holding differentiated values",
                  "keep the values in an array or a list"),
    "make_function": ("a function defined inside the differentiated function",
                      "define it at module level as an @njit helper"),
}


def construct_refusal(stmt):
    """``(construct, advice)`` refusing a statement no handler covers that touches a
    differentiated value: in the user's words where adjit knows the construct, naming
    the variable it assigns (not an SSA temporary); else the IR node's kind."""
    kind = node_kind(stmt)
    what, advice = _CONSTRUCT_WORDS.get(kind, (f"the construct '{kind}'",
                                               "no derivative rule covers it"))
    target = getattr(stmt, "target", None)
    if isinstance(target, ir.Var) and not target.name.startswith("$"):
        what += f" ('{source_name(target.name)}')"
    return what, advice


def global_value(blocks, var):
    """The Python object ``var`` was loaded from as a global or free variable, or None."""
    index = _index_of(blocks)
    if index is not None:
        return index[3].get(var.name)
    for block in blocks.values():
        for stmt in block.body:
            if (isinstance(stmt, ir.Assign) and stmt.target.name == var.name
                    and isinstance(stmt.value, (ir.Global, ir.FreeVar))):
                return stmt.value.value
    return None


def global_values(blocks):
    """Map variable name -> the Python object it was loaded from as a global."""
    return {s.target.name: s.value.value for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, (ir.Global, ir.FreeVar))}


def single_definition(blocks, name):
    """The single value assigned to ``name`` in ``blocks``, or None (none, or several
    different ones). The same method, global or constant assigned again counts as one:
    a reverse pass recomputes ``m = getattr(a, 'copy')`` in each block that reads it."""
    index = _index_of(blocks)
    if index is not None:
        return None if name in index[2] else index[1].get(name)
    found = None
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name == name:
                if found is not None and not _same_value(found, stmt.value):
                    return None
                found = found if found is not None else stmt.value
    return found


def _same_value(a, b):
    """Whether two assigned values are certainly equal: one global or constant object,
    or one attribute of one variable."""
    if isinstance(a, (ir.Global, ir.FreeVar)) and type(a) is type(b):
        return a.value is b.value
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        scalar = isinstance(a.value, (bool, int, float, str, type(None)))
        return a.value is b.value or (scalar and type(a.value) is type(b.value)
                                      and a.value == b.value)
    return (isinstance(a, ir.Expr) and isinstance(b, ir.Expr) and a.op == b.op == "getattr"
            and a.value.name == b.value.name and a.attr == b.attr)


def copy_root(definition, name, casts=True):
    """Follow plain copies (and casts, unless ``casts`` is False) back to the variable
    that defines ``name``; ``definition(name)`` gives a variable's single value."""
    seen = set()
    while name not in seen:
        seen.add(name)
        value = definition(name)
        if isinstance(value, ir.Var):
            name = value.name
        elif casts and isinstance(value, ir.Expr) and value.op == "cast":
            name = value.value.name
        else:
            break
    return name


def is_basic_index(typ):
    """Integers, slices, ``None`` (``np.newaxis``), ``...`` and tuples of them: indexing
    that returns a view, not a copy."""
    if isinstance(typ, types.BaseTuple):
        return all(is_basic_index(t) for t in typ.types)
    return isinstance(typ, (types.Integer, types.SliceType, types.NoneType,
                            types.EllipsisType))


def defining_stmts(blocks):
    """Map variable name -> list of (label, Assign) that define it."""
    defs = {}
    for label, block in blocks.items():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                defs.setdefault(stmt.target.name, []).append((label, stmt))
    return defs
