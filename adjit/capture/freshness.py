"""Whether what a function calls is still what adjit compiled against.

Numba resolves a function's globals (helpers, constants) when it types the function, and
adjit caches what it built from that typing. ``ensure_current(func)``, called whenever a
transform is requested, compares the objects ``func`` and, recursively, its ``@njit``
callees now read from their globals and closures with what they read the last time; a
rebound name invalidates adjit's caches (``compile.caches.invalidate_all``).
"""
import threading
import types as pytypes

from ..compile.caches import invalidate_all

_snapshots = {}
_lock = threading.Lock()


def _code_names(code):
    """Every global name ``code`` and the code objects nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def _python_function(obj):
    """The Python function behind a Numba dispatcher or ufunc wrapper, or None."""
    if isinstance(obj, pytypes.FunctionType):
        return obj
    inner = getattr(obj, "py_func", None)
    if inner is None:
        inner = getattr(getattr(obj, "_dispatcher", None), "py_func", None)
    return inner if isinstance(inner, pytypes.FunctionType) else None


def snapshot(func):
    """``[(function, name, object)]``: what ``func`` and its callees read, recursively."""
    out, seen, todo = [], set(), [_python_function(func) or func]
    while todo:
        py_func = todo.pop()
        if not isinstance(py_func, pytypes.FunctionType) or py_func in seen:
            continue
        seen.add(py_func)
        scope = py_func.__globals__
        for name in sorted(_code_names(py_func.__code__)):
            if name in scope:
                value = scope[name]
                out.append((py_func, name, value))
                todo.append(_python_function(value))
        for name, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            out.append((py_func, name, value))
            todo.append(_python_function(value))
    return out


def _same(old, new):
    return len(old) == len(new) and all(
        a[0] is b[0] and a[1] == b[1] and a[2] is b[2] for a, b in zip(old, new))


def ensure_current(func):
    """Invalidate adjit's caches when a name ``func`` (or a callee) reads was rebound
    since ``func`` was last transformed."""
    py_func = _python_function(func)
    if py_func is None:
        return
    new = snapshot(py_func)
    with _lock:
        old = _snapshots.get(py_func)
        _snapshots[py_func] = new
    if old is not None and not _same(old, new):
        invalidate_all()
