"""Content fingerprints of differentiated functions, for the on-disk derivative cache.

A derivative cached on disk may be reused by another process only if everything it was
built from is unchanged. ``fingerprint(func, key)`` hashes:

- the bytecode, constants, defaults and names of ``func`` and of every user function it
  reaches through its globals and closure (``freshness.snapshot`` walks them);
- the value of every global and closure variable those functions read: numbers, strings,
  tuples and arrays by content, user functions and dispatchers by their code (and the
  compile options that change results), library functions, modules and classes by name;
- user-registered differentiation rules (``adjit.extend``);
- ``key`` (the transform, its ``argnums`` and options), and the versions of adjit (a hash
  of its sources), Numba, llvmlite, NumPy and Python.

A value it cannot hash by content (an arbitrary object) makes the function uncacheable:
``Uncacheable`` says which name, and the transform works without the disk cache.
"""
import enum
import hashlib
import pickle
import types as pytypes

import numpy as np

from ..compile.caches import is_library_module
from ..compile.stamps import environment_stamp
from ..errors import Uncacheable
from .freshness import python_function, snapshot

def _code_digest(code, h):
    """Feed a code object (recursively through nested code) into ``h``."""
    h.update(code.co_code)
    h.update(repr((code.co_name, code.co_names, code.co_varnames, code.co_freevars,
                   code.co_cellvars, code.co_argcount, code.co_kwonlyargcount)).encode())
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _code_digest(const, h)
        else:
            h.update(repr(const).encode())


def _function_digest(py_func, h):
    """A user function: its code, defaults and keyword defaults."""
    _code_digest(py_func.__code__, h)
    for value in (py_func.__defaults__ or ()) + tuple((py_func.__kwdefaults__ or {}).items()):
        _value_digest(value, h, f"a default of {py_func.__qualname__}")


def _module_name(name):
    """A module's name, with a script's under one name: ``__main__`` in the process that
    runs it is ``__mp_main__`` in the workers ``multiprocessing`` spawns, which should
    find the same cached derivatives."""
    return "__main__" if name == "__mp_main__" else name


def _named(value):
    """``module.qualname`` of a function, class or object."""
    module = _module_name(getattr(value, '__module__', '?'))
    return f"{module}.{getattr(value, '__qualname__', value)}"


def _value_digest(value, h, where):
    """Feed one global or closure value into ``h`` (functions contribute by name here:
    ``snapshot`` lists user functions separately and their code is hashed there)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(f"{type(value).__name__}:{value!r}".encode())
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__name__}[{len(value)}]".encode())
        for item in value:
            _value_digest(item, h, where)
    elif isinstance(value, np.ndarray):
        h.update(f"array:{value.dtype.str}:{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, pytypes.ModuleType):
        h.update(f"module:{_module_name(value.__name__)}".encode())
    elif python_function(value) is not None:
        py_func = python_function(value)
        options = getattr(value, "targetoptions", None) or {}
        h.update(f"function:{_named(py_func)}:{sorted(map(repr, options.items()))}".encode())
    elif isinstance(value, type) and issubclass(value, enum.Enum):
        # Numba compiles an Enum's member values in as constants
        h.update(f"enum:{_named(value)}".encode())
        for member in value:
            h.update(member.name.encode())
            _value_digest(member.value, h, f"{where}.{member.name}")
    elif isinstance(value, type) or is_library_module(getattr(value, "__module__", None)):
        h.update(f"named:{type(value).__name__}:{_named(value)}".encode())
    else:
        try:
            h.update(pickle.dumps(value, protocol=4))
        except Exception:
            raise Uncacheable(f"{where} is {type(value).__name__} {value!r:.60}, whose "
                              "content adjit cannot fingerprint") from None


def _user_rules_digest(h):
    """Rules registered through ``adjit.extend`` change derivatives without changing code."""
    from ..compile.caches import user_registrations
    for keys, rule in user_registrations():
        h.update(repr([_named(python_function(k) or k) for k in keys]).encode())
        _rule_digest(rule, h, 3)


def user_rules_stamp():
    """The hex digest of the rules registered through ``adjit.extend``: part of the key of
    anything cached that was derived through the rule registry."""
    h = hashlib.sha256()
    _user_rules_digest(h)
    return h.hexdigest()


def _rule_digest(part, h, depth):
    """A rule object: the user functions in it by code, everything else by value."""
    py_func = python_function(part)
    if py_func is not None:
        if is_library_module(py_func.__module__):
            h.update(_named(py_func).encode())
        else:
            _function_digest(py_func, h)
    elif isinstance(part, (tuple, list)) and depth:
        for item in part:
            _rule_digest(item, h, depth - 1)
    elif hasattr(part, "__dict__") and not isinstance(part, type) and depth:
        h.update(_named(type(part)).encode())
        for name, value in sorted(vars(part).items()):
            h.update(name.encode())
            _rule_digest(value, h, depth - 1)
    else:
        _value_digest(part, h, "a registered rule")


def _functions_held(value, depth):
    """The Python functions of the ``@njit`` helpers and functions held in a tuple or
    list (by name only in ``_value_digest``: their code counts too)."""
    if not isinstance(value, (tuple, list)) or not depth:
        return
    for item in value:
        found = python_function(item)
        if found is not None:
            yield found
        yield from _functions_held(item, depth - 1)


def _transform_digest(value):
    """The content of an adjit transform (``grad(f)``, reached as a function of its own,
    as in ``jvp(grad(f))``, or read as a global by an ``@njit`` caller): its kind and
    argnums and its function's fingerprint, or None for anything else. Its generated
    stub's code is the same for every function (``jvp(grad(f))`` of two modules' ``f``
    shared one entry)."""
    spec = getattr(value, "adjit_spec", None)
    if spec is None:
        return None
    return fingerprint(spec[1], f"{spec[0]}/{spec[2]!r}")


def fingerprint(func, key):
    """The hex content fingerprint of ``func`` (a function or dispatcher) for the
    transform described by ``key`` (a string); raises ``Uncacheable``."""
    h = hashlib.sha256(environment_stamp().encode())
    h.update(key.encode())
    inner = _transform_digest(func)
    if inner is not None:
        h.update(f"transform:{inner}".encode())
        return h.hexdigest()
    root = python_function(func)
    if root is None:
        raise Uncacheable(f"{func!r} is not a Python function or Numba dispatcher")
    _value_digest(func, h, "the function")
    done, entries, contents = set(), set(), {}
    _digest_once(root, h, done, contents)
    for py_func, name, value in snapshot(root):
        entry = hashlib.sha256(name.encode())
        _value_digest(value, entry, f"'{name}' (read by {py_func.__qualname__})")
        key = (_content_digest(py_func, contents), entry.digest())
        if key in entries:  # the same read by another copy of the same function
            continue
        entries.add(key)
        # the reader, and a user function it reads: a helper that reads no global of
        # its own is never a reader, and its code and defaults count all the same
        for reached in (py_func, python_function(value)):
            if (reached is not None
                    and not is_library_module(getattr(reached, "__module__", None))):
                _digest_once(reached, h, done, contents)
        h.update(entry.digest())
        inner = _transform_digest(value)
        if inner is not None:
            h.update(f"transform:{inner}".encode())
        for held in _functions_held(value, 3):  # ``OPS = (h,)``: ``OPS[0](x)``
            if not is_library_module(getattr(held, "__module__", None)):
                _digest_once(held, h, done, contents)
    _user_rules_digest(h)
    return h.hexdigest()


def _content_digest(py_func, contents):
    """A digest of a function's name, code and defaults, computed once per function in
    one fingerprint (``contents``: by object; a function reading many globals is a
    reader in many snapshot entries)."""
    if id(py_func) not in contents:
        own = hashlib.sha256(_named(py_func).encode())
        _function_digest(py_func, own)
        contents[id(py_func)] = own.digest()
    return contents[id(py_func)]


def _digest_once(py_func, h, done, contents):
    """Feed ``py_func``'s content (``_content_digest``) into ``h`` unless a function of
    the same name and content was fed already (``done``). A worker process that
    unpickles a derivative rebuilds its ``@njit`` helpers by value, one copy per name
    they are reached by (``from lib import soft`` and ``lib.soft``): counted by object,
    the worker's fingerprint differed from its parent's, and it compiled everything
    again."""
    digest = _content_digest(py_func, contents)
    if digest not in done:
        done.add(digest)
        h.update(digest)
