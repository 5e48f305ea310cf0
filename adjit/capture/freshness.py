"""Whether what a function calls is still what adjit compiled against.

Numba resolves a function's globals (helpers, constants) when it types the function, and
adjit caches what it built from that typing. ``ensure_current(func)``, called whenever a
transform is requested, compares the objects ``func`` and, recursively, its ``@njit``
callees now read from their globals and closures with what they read the last time; a
rebound name invalidates adjit's caches (``compile.caches.invalidate_all``).

Numba's compiled code keeps the callees and constants it was typed against. An ``@njit``
helper ``h1`` compiled before the user rebound its callee ``h2`` still calls the old
``h2``, while adjit derives ``h1`` from its source, which reads the new one; reverse mode,
which may call ``h1`` to recompute its result, would mix the two. So ``ensure_current``
also recompiles such helpers (``recompile_stale``), and then the helpers that call them.
"""
import threading
import types as pytypes

from numba.core import ir, types
from numba.core.dispatcher import Dispatcher

from ..compile.caches import OwnedCache, invalidate_all, is_library_module

_snapshots = OwnedCache("snapshot")
_lock = threading.Lock()


def _code_names(code):
    """Every global name ``code`` and the code objects nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def python_function(obj):
    """The Python function behind a Numba dispatcher, ufunc wrapper or stencil, or None."""
    if isinstance(obj, pytypes.FunctionType):
        return obj
    if isinstance(obj, pytypes.ModuleType):  # (NumPy's module __getattr__ is slow to fail)
        return None
    inner = getattr(obj, "py_func", None)
    if inner is None:
        inner = getattr(getattr(obj, "_dispatcher", None), "py_func", None)
    if inner is None:  # a @numba.stencil kernel keeps the IR of its Python function
        inner = getattr(getattr(getattr(obj, "kernel_ir", None), "func_id", None), "func", None)
    return inner if isinstance(inner, pytypes.FunctionType) else None


def _is_user(py_func):
    """Whether ``py_func`` is user code, which can be rebound or edited."""
    return not is_library_module(getattr(py_func, "__module__", None))


def _module_attributes(name, module, names):
    """``(qualified name, value)`` of the attributes of a user module that code reading
    ``names`` may access (``helpers.f``): rebinding them is rebinding a callee."""
    if not isinstance(module, pytypes.ModuleType) or is_library_module(module.__name__):
        return []
    scope = module.__dict__
    return [(f"{name}.{attr}", scope[attr], scope, attr) for attr in sorted(names)
            if attr in scope]


def snapshot(func, watch=None):
    """``[(function, name, object)]``: what ``func`` and its callees read, recursively.
    ``watch``, a list, receives ``(namespace, key, object)`` for each read, where the
    namespace is a globals dict, a module's dict or a closure cell (``StalenessCheck``)."""
    out, seen, todo = [], set(), [python_function(func) or func]
    while todo:
        py_func = todo.pop()
        if not isinstance(py_func, pytypes.FunctionType) or py_func in seen:
            continue
        seen.add(py_func)
        scope = py_func.__globals__
        names = _code_names(py_func.__code__)
        read = [(name, scope[name], scope, name) for name in sorted(names) if name in scope]
        for name, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
            try:
                read.append((name, cell.cell_contents, cell, None))
            except ValueError:  # an empty cell
                continue
        k = 0
        while k < len(read):  # pkg.sub.helper: modules of modules, each one once
            name, value = read[k][:2]
            if isinstance(value, pytypes.ModuleType) and name.count(".") < 8:
                read += _module_attributes(name, value, names)
            k += 1
        for name, value, namespace, key in read:
            out.append((py_func, name, value))
            if watch is not None:
                watch.append((namespace, key, value))
            inner = python_function(value)
            if inner is not None and _is_user(inner):
                todo.append(inner)
            for overload in user_overloads(value):  # read as a callee of the reader
                out.append((py_func, f"{name} (@overload)", overload))
                todo.append(overload)
    return out


def user_overloads(func):
    """The typing functions of the user's ``@overload(func)``s. Their code holds the
    implementations Numba compiles for calls of ``func`` (and adjit derives), so they are
    read as ``func``'s callees: an edited overload changes the fingerprint."""
    if not isinstance(func, pytypes.FunctionType):
        return []
    found = (getattr(t, "_overload_func", None)
             for ftype in _registered_globals().get(func, ())
             for t in getattr(ftype, "templates", ()))
    return [f for f in found if isinstance(f, pytypes.FunctionType) and _is_user(f)]


_registered = {"count": -1, "types": {}}


def _registered_globals():
    """``{object: [Numba types]}`` of Numba's typing registry of globals, where
    ``@overload`` registers each function it types; re-indexed only when it grew (every
    snapshot asks, so a scan of the registry each time would be too slow)."""
    from numba.core.typing.templates import builtin_registry
    entries = builtin_registry.globals
    if _registered["count"] != len(entries):
        index = {}
        for value, typ in list(entries):
            try:
                index.setdefault(value, []).append(typ)
            except TypeError:  # an unhashable registered object: no function of the user's
                continue
        _registered.update(count=len(entries), types=index)
    return _registered["types"]


def _same(old, new):
    return len(old) == len(new) and all(
        a[0] is b[0] and a[1] == b[1] and a[2] is b[2] for a, b in zip(old, new))


def ensure_current(func):
    """Invalidate adjit's caches when a name ``func`` (or a callee) reads was rebound
    since ``func`` was last transformed."""
    py_func = python_function(func)
    if py_func is None:
        return
    watch = []
    new = snapshot(py_func, watch)
    with _lock:
        old = _snapshots.get((py_func,))
        _snapshots[(py_func,)] = new
        _watches[(py_func,)] = watch
    changed = old is not None and not _same(old, new)
    recompiled = (old is None or changed) and recompile_stale(func, new, old or ())
    if changed or recompiled:
        invalidate_all()


def _user_dispatcher(obj):
    """Whether ``obj`` is a Numba dispatcher of a user's function."""
    return isinstance(obj, Dispatcher) and _is_user(obj.py_func)


def _same_global(compiled, current):
    """Whether a global Numba froze (``compiled``) is still the one the function reads.
    A number or string rebound to an equal value counts as the same."""
    if compiled is current:
        return True
    plain = (int, float, complex, bool, str, bytes)
    return type(compiled) is type(current) and isinstance(current, plain) and \
        compiled == current


def _typed_against_other_globals(dispatcher):
    """Whether some compiled overload of ``dispatcher`` was typed against a global, a
    closure value or a module attribute holding a dispatcher, that its function now
    reads as another object. Overloads loaded from Numba's disk cache keep no IR, and
    are taken as current."""
    py_func = dispatcher.py_func
    scope = py_func.__globals__
    cells = dict(zip(py_func.__code__.co_freevars, py_func.__closure__ or ()))
    for cres in list(dispatcher.overloads.values()):
        annotation = getattr(cres, "type_annotation", None)
        typemap = getattr(annotation, "typemap", None) or {}
        for block in (getattr(annotation, "blocks", None) or {}).values():
            modules = {}
            for stmt in block.find_insts(ir.Assign):
                value = stmt.value
                if isinstance(value, ir.Global):
                    modules[stmt.target.name] = value.value
                    if value.name in scope and not _same_global(value.value,
                                                                scope[value.name]):
                        return True
                elif isinstance(value, ir.FreeVar) and value.name in cells:
                    current = _current_value(cells[value.name], None)
                    if not _same_global(value.value, current):
                        return True
                elif isinstance(value, ir.Expr) and value.op == "getattr" and \
                        isinstance(modules.get(value.value.name), pytypes.ModuleType):
                    typ = typemap.get(stmt.target.name)
                    current = getattr(modules[value.value.name], value.attr, _MISSING)
                    if isinstance(typ, types.Dispatcher) and _other(typ, current):
                        return True
    return False


def _other(typ, current):
    """Whether the dispatcher type ``typ`` Numba compiled against is not ``current``
    (a collected dispatcher, which Numba's type holds weakly, is not)."""
    try:
        return typ.dispatcher is not current
    except ReferenceError:
        return True


def _rebound_readers(old, new):
    """The functions that read a name bound to another object in ``new`` than in ``old``
    (two snapshots): this also catches a constant read as a module attribute
    (``cfg.K``), whose value Numba's typed IR does not keep."""
    before = {(reader, name): value for reader, name, value in old}
    return {reader for reader, name, value in new
            if before.get((reader, name), value) is not value}


def recompile_stale(func, reads, previous=()):
    """Recompile (Numba's ``recompile``) each compiled user dispatcher that ``func``
    reaches through ``reads`` (a ``snapshot``) whose code was typed against callees or
    constants it no longer reads (or that read a name rebound since the ``previous``
    snapshot), then each one that calls a recompiled one, callees first, so that all of
    them run the code adjit derives. Whether any was."""
    dispatchers = {d.py_func: d for d in [func] + [value for _, _, value in reads]
                   if _user_dispatcher(d)}
    calls = {py_func: [] for py_func in dispatchers}
    for reader, _, value in reads:
        if _user_dispatcher(value) and reader in calls:
            calls[reader].append(value)
    rebound = _rebound_readers(previous, reads)
    stale = {d.py_func for d in dispatchers.values() if d.overloads and (
        d.py_func in rebound or _typed_against_other_globals(d))}
    grown = bool(stale)
    while grown:
        callers = {p for p, callees in calls.items() if p not in stale and
                   dispatchers[p].overloads and any(c.py_func in stale for c in callees)}
        stale |= callers
        grown = bool(callers)
    done = set()

    def recompile(py_func):
        if py_func in done:
            return
        done.add(py_func)
        for callee in calls[py_func]:
            if callee.py_func in stale:
                recompile(callee.py_func)
        try:
            dispatchers[py_func].recompile()
        except Exception:  # its source no longer compiles: Numba dropped the stale code,
            pass           # and deriving it says why, as for a helper never compiled

    for py_func in sorted(stale, key=lambda p: p.__qualname__):
        recompile(py_func)
    return bool(stale)


_watches = OwnedCache("watch")
_MISSING = object()


def _current_value(namespace, key):
    if key is None:  # a closure cell
        try:
            return namespace.cell_contents
        except ValueError:
            return _MISSING
    return namespace.get(key, _MISSING)


class StalenessCheck:
    """Run on every call of a derivative from Python: one dictionary lookup per name its
    function reads (about half a microsecond), and ``ensure_current`` when one was
    rebound, so the derivative recompiles against the current callees."""

    __slots__ = ("func", "py_func")

    def __init__(self, func):
        self.func, self.py_func = func, python_function(func)

    def __call__(self):
        for namespace, key, value in _watches.get((self.py_func,), ()):
            current = namespace.get(key, _MISSING) if key is not None else \
                _current_value(namespace, key)
            if current is not value:
                ensure_current(self.func)
                return
