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


def track_dispatcher(dispatcher):
    """Remember a generated dispatcher so that ``invalidate_all`` can reset it."""
    _dispatchers.add(dispatcher)
    return dispatcher


_consulted = set()


def note_consulted(key):
    """Record that a derivation asked the rule tables about ``key``: a later
    registration for it must invalidate what was built from the old answer."""
    try:
        _consulted.add(key)
    except TypeError:  # unhashable keys have no rules either
        pass


def invalidate_if_consulted(keys):
    """Invalidate everything when a rule is registered for a key some derivation
    already consulted; registering rules for keys nothing has asked about (import time,
    a new helper) costs nothing."""
    try:
        if not any(key in _consulted for key in keys):
            return
    except TypeError:
        pass
    invalidate_all()


_user_registrations = []

#: modules whose objects adjit's own rules are registered for
_LIBRARY_ROOTS = ("numpy", "numba", "scipy", "math", "cmath", "adjit", "builtins", "operator")


def _is_user_key(key):
    """A Python function or Numba dispatcher defined outside the libraries."""
    func = getattr(key, "py_func", key)
    if not isinstance(func, types.FunctionType):
        return False
    root = (func.__module__ or "").split(".")[0]
    return root not in _LIBRARY_ROOTS and not root.startswith("_")


def user_registrations():
    """``[(keys, rule)]`` registered for user functions (``adjit.extend``): part of the
    fingerprint of a cached derivative, since they change it without changing code."""
    return list(_user_registrations)


class RuleTable:
    """A table of rules keyed by callee, the one kind every rule file keeps.

    Lookups are remembered (``note_consulted``), so registering a rule for a key some
    derivation already asked about invalidates what was built from the old answer.
    Unhashable keys (a callee Numba could not name) have no rules."""

    def __init__(self):
        self._rules = {}

    def register(self, keys, rule):
        """Set ``rule`` for every key in ``keys``."""
        invalidate_if_consulted(keys)
        if any(_is_user_key(key) for key in keys):
            _user_registrations.append((tuple(keys), rule))
        for key in keys:
            self._rules[key] = rule

    def get(self, key):
        """The rule of ``key``, or None."""
        note_consulted(key)
        try:
            return self._rules.get(key)
        except TypeError:
            return None

    def pop(self, key, default=None):
        """Remove the rule of ``key`` (another table now answers for it)."""
        return self._rules.pop(key, default)

    def __contains__(self, key):
        try:
            return key in self._rules
        except TypeError:
            return False

    def __getitem__(self, key):
        return self._rules[key]

    def __iter__(self):
        return iter(self._rules)

    def values(self):
        return self._rules.values()


def invalidate_all():
    """Forget every cached capture and program, and drop every generated dispatcher's
    compiled code (each recompiles on its next call)."""
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock, _lock:
        for clear in _clearers:
            clear()
        for dispatcher in list(_dispatchers):
            dispatcher._reset_overloads()
