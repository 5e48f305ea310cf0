"""Keeping derivatives current: one place that forgets everything adjit has built.

adjit caches the typed IR it captured, the derivative programs it built and the
dispatchers it returned. Those go stale when a user rebinds a helper that a
differentiated function calls (the notebook pattern: re-run the helper's cell, then the
gradient's cell) or registers a rule after a function was first differentiated.
``invalidate_all`` clears every registered cache and resets every generated dispatcher,
so the next call of a transform the user already holds recompiles against the current
callees and rules. It is coarse on purpose: staleness is rare and correctness is not.
"""
import threading
import types
import weakref

_clearers = []
_dispatchers = weakref.WeakSet()
_lock = threading.RLock()


def registered_cache(cache):
    """Register a module-level cache (anything with ``clear()``) and return it."""
    _clearers.append(cache.clear)
    return cache


class _Store(dict):
    """The entries one function owns. Pickling a function (cloudpickle copies a dynamic
    function's ``__dict__``) drops them: they are per-process compiled state."""

    def __reduce__(self):
        return _Store, ()


_STORE = "_adjit_store"


class OwnedCache:
    """A dict keyed by tuples whose first item (a function, dispatcher or stencil) owns
    the entry. Entries live in the owner's ``__dict__``, so they die with it: redefining
    a function in a notebook frees what adjit built for the old one, as Numba frees its
    dispatchers. Owners without a ``__dict__`` fall back to a module-level dict."""

    def __init__(self, name):
        self._name = name
        self._owners = weakref.WeakSet()
        self._fallback = {}

    def _table(self, key, create=False):
        owner = key[0]
        try:
            store = owner.__dict__.get(_STORE)
            if store is None and create:
                store = owner.__dict__[_STORE] = _Store()
                self._owners.add(owner)
            elif store is not None and owner not in self._owners:
                self._owners.add(owner)
        except (AttributeError, TypeError):
            return self._fallback, key
        return store, (self._name,) + tuple(key[1:])

    def get(self, key, default=None):
        table, k = self._table(key)
        return default if table is None else table.get(k, default)

    def __contains__(self, key):
        table, k = self._table(key)
        return table is not None and k in table

    def __getitem__(self, key):
        table, k = self._table(key)
        if table is None:
            raise KeyError(key)
        return table[k]

    def __setitem__(self, key, value):
        table, k = self._table(key, create=True)
        table[k] = value

    def setdefault(self, key, value):
        table, k = self._table(key, create=True)
        return table.setdefault(k, value)

    def __iter__(self):
        """The keys, as they were given (owner first)."""
        yield from list(self._fallback)
        for owner in list(self._owners):
            for k in list(owner.__dict__.get(_STORE, ())):
                if k[0] == self._name:
                    yield (owner,) + k[1:]

    def __len__(self):
        return sum(1 for _ in self)

    def values(self):
        return [self[key] for key in self]

    def clear(self):
        """Forget this cache's entries (other caches' entries in the same stores stay)."""
        self._fallback.clear()
        for owner in list(self._owners):
            store = owner.__dict__.get(_STORE, {})
            for k in [k for k in store if k[0] == self._name]:
                del store[k]


def owned_cache(name):
    """A registered ``OwnedCache`` (cleared by ``invalidate_all``)."""
    return registered_cache(OwnedCache(name))


def track_dispatcher(dispatcher):
    """Remember a generated dispatcher so that ``invalidate_all`` can reset it."""
    _dispatchers.add(dispatcher)
    return dispatcher


_consulted = set()  # builtins, type keys: they live for ever anyway
_consulted_weakly = weakref.WeakSet()  # functions and dispatchers: they may be redefined


def note_consulted(key):
    """Record that a derivation asked the rule tables about ``key``: a later
    registration for it must invalidate what was built from the old answer."""
    try:
        _consulted_weakly.add(key)
    except TypeError:  # not weakly referenceable (a builtin, a tuple key)
        try:
            _consulted.add(key)
        except TypeError:  # unhashable keys have no rules either
            pass


def invalidate_if_consulted(keys):
    """Invalidate everything when a rule is registered for a key some derivation
    already consulted; registering rules for keys nothing has asked about (import time,
    a new helper) costs nothing."""
    try:
        if not any(key in _consulted or _weakly_in(key) for key in keys):
            return
    except TypeError:
        pass
    invalidate_all()


_user_registrations = []

#: top-level packages whose functions and objects are library code: identified by name,
#: never rebound or edited by the user (private ones such as ``_operator`` count too)
LIBRARY_ROOTS = ("numpy", "numba", "scipy", "math", "cmath", "adjit", "llvmlite", "builtins",
                 "operator", "functools", "itertools", "collections", "random")


def is_library_module(module_name):
    """Whether ``module_name`` belongs to a library (``LIBRARY_ROOTS``) rather than to the
    user. ``__main__`` (a script, a notebook) is the user's."""
    root = (module_name or "").split(".")[0]
    return root in LIBRARY_ROOTS or (root.startswith("_") and not root.startswith("__"))


def _is_user_key(key):
    """A Python function or Numba dispatcher defined outside the libraries."""
    func = getattr(key, "py_func", key)
    return isinstance(func, types.FunctionType) and not is_library_module(func.__module__)


def user_registrations():
    """``[(keys, rule)]`` registered for user functions (``adjit.extend``): part of the
    fingerprint of a cached derivative, since they change it without changing code."""
    return list(_user_registrations)


def _weakly_in(key):
    try:
        return key in _consulted_weakly
    except TypeError:
        return False


def record_user_registration(keys, rule):
    """Remember a rule registered for a user function (``adjit.extend``): it is part of
    the fingerprint of cached derivatives (``user_registrations``)."""
    if any(_is_user_key(key) for key in keys):
        _user_registrations.append((tuple(keys), rule))


def invalidate_all():
    """Forget every cached capture and program, and drop every generated dispatcher's
    compiled code (each recompiles on its next call)."""
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock, _lock:
        for clear in _clearers:
            clear()
        for dispatcher in list(_dispatchers):
            dispatcher._reset_overloads()
