"""The on-disk cache of derivatives (``adjit.grad(f, cache=True)``).

It is Numba's own cache (``numba.core.caching``: object code plus the bitcode for
inlining, pickled ``CompileResult``) with three differences that derivatives need:

- **Where**: the directory Numba would use for ``f`` itself (``NUMBA_CACHE_DIR``, else
  ``__pycache__`` beside ``f``'s source file, else the user-wide cache directory). Files
  are named ``adjit-<module>.<function>-<transform>-<fingerprint>...``.
- **When stale**: the index is stamped with the content fingerprint of ``f`` and every
  callee it reaches (``capture/fingerprint.py``), not with the mtime of one source file.
  An entry is used only when the fingerprint, the signature and the CPU all match.
- **Robust**: each signature has its own index file, written atomically, so processes
  writing at once lose nothing; an unreadable, truncated or damaged file (each file
  carries a SHA-256 checksum of its contents) is reported with a ``CacheWarning`` and
  ignored (the derivative is compiled and the file rewritten).
"""
import glob
import hashlib
import inspect
import os
import pickle
import sys
import warnings

from numba.core import caching, compiler

from ..errors import CacheWarning, Uncacheable


def _base_locator(py_func):
    """The locator Numba would use to cache ``py_func`` itself, or None."""
    try:
        source = inspect.getfile(py_func)
    except TypeError:
        return None
    for cls in caching.CacheImpl._locator_classes:
        locator = cls.from_function(py_func, source)
        if locator is not None:
            return locator
    return None


class _SingleEntryFile(caching.IndexDataCacheFile):
    """An index holding one signature: saving never reads the old (maybe corrupt)
    index, the data file is written before the index that names it, and the data file
    carries its key and stamp too, so a data file that is not this entry's (copied or
    renamed over it) is never loaded. Both files start with a SHA-256 digest of the
    rest, checked before anything is unpickled: object code with a flipped bit loaded
    as if valid gave a wrong gradient, or crashed the process."""

    def save(self, key, data):
        name = self._data_name(1)
        self._save_data(name, (key, self._source_stamp, data))
        self._save_index({key: name})

    def _save_data(self, name, data):
        with self._open_for_write(self._data_path(name)) as f:
            f.write(_sealed(self._dump(data)))

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as f:
            return pickle.loads(_unsealed(f.read(), name))

    def _save_index(self, overloads):
        with self._open_for_write(self._index_path) as f:
            pickle.dump(self._version, f, protocol=-1)
            f.write(_sealed(self._dump((self._source_stamp, overloads))))

    def _load_index(self):
        try:
            with open(self._index_path, "rb") as f:
                version = pickle.load(f)
                data = f.read()
        except FileNotFoundError:
            return {}
        if version != self._version:
            return {}
        stamp, overloads = pickle.loads(_unsealed(data, self._index_name))
        return overloads if stamp == self._source_stamp else {}

    def load(self, key):
        entry = super().load(key)
        if entry is None:
            return None
        stored_key, stamp, data = entry
        if stored_key != key or stamp != self._source_stamp:
            raise ValueError("the data file belongs to another entry")
        return data


#: what a cache file's digest is prefixed with (the format of adjit's cache files)
_SEAL = b"adjit-sha256:"


def _sealed(payload):
    """``payload`` behind its SHA-256 digest."""
    return _SEAL + hashlib.sha256(payload).digest() + payload


def _unsealed(data, name):
    """The payload of ``_sealed`` data; ValueError if the digest does not match it."""
    start = len(_SEAL) + 32
    if data[:len(_SEAL)] != _SEAL or hashlib.sha256(data[start:]).digest() != data[
            len(_SEAL):start]:
        raise ValueError(f"{name} does not match its checksum (a damaged file)")
    return data[start:]


def file_prefix(py_func):
    """The start of every cache file name of ``py_func``'s derivatives."""
    module = os.path.splitext(os.path.basename(inspect.getfile(py_func)))[0]
    qualname = py_func.__qualname__.replace("<", "").replace(">", "")
    return f"adjit-{module}.{qualname}"


class GuardedCache(caching.Cache):
    """Loading for adjit's disk caches: an entry that cannot be read (corrupt, truncated,
    foreign) is reported with a ``CacheWarning`` and compiled again, and ``Uncacheable``
    (from the key) means no entry. Subclasses may refuse a signature (``_loadable``),
    rebuild entries their own way (``_rebuild``) and react to ``Uncacheable``."""

    def _loadable(self, sig):
        return True

    def _rebuild(self, target_context, data):
        return compiler.CompileResult._rebuild(target_context, *data)

    def _uncacheable(self):
        """Called when the key cannot be computed (``Uncacheable``)."""

    def _load_overload(self, sig, target_context):
        if not self._enabled or not self._loadable(sig):
            return None
        key = self._index_key(sig, target_context.codegen())
        try:
            data = self._file(key).load(key)
            if data is None:
                return None
            return self._rebuild(target_context, data)
        except Uncacheable:
            self._uncacheable()
            return None
        except Exception as exc:  # a corrupt, truncated or foreign file: recompile
            warnings.warn(f"adjit: ignoring the unreadable disk-cache entry of {self._name} "
                          f"in {self._cache_path} ({type(exc).__name__}: {exc}); "
                          "recompiling", CacheWarning, stacklevel=2)
            return None


def _type_classes(sig):
    """The classes of a signature's types, nested: types that print alike differ by class
    (a tuple argument and the ``*args`` tuple of an ``@njit`` caller, ``UniTuple`` and
    ``StarArgUniTuple``), and would share one single-entry file, each overwriting the
    other's entry, so no process found its own."""
    def describe(typ):
        inner = getattr(typ, "types", None)
        if isinstance(inner, tuple):
            return f"{type(typ).__name__}({','.join(map(describe, inner))})"
        return type(typ).__name__
    return ";".join(describe(t) for t in sig) if isinstance(sig, tuple) else repr(type(sig))


class DerivativeCache(GuardedCache):
    """A Numba dispatcher cache for one derivative (see the module docstring).

    The fingerprint is computed whenever the cache is consulted (about a millisecond,
    once per compiled signature), so an entry written before a callee was rebound in this
    process is never loaded after it."""

    def __init__(self, stub, py_func, label, stamp, locator):
        self._name = f"{label}({py_func.__qualname__})"
        self._py_func = stub  # its bytecode is part of Numba's index key
        self._stamp, self._locator = stamp, locator
        self._cache_path = locator.get_cache_path()
        self._prefix = f"{file_prefix(py_func)}-{label}"
        self.enable()

    def _file(self, key):
        """The index/data pair of one signature under the current fingerprint (one entry
        per index file, so concurrent writers of different signatures lose nothing)."""
        stamp = self._stamp()
        digest = hashlib.sha256((repr(key) + _type_classes(key[0])).encode()).hexdigest()[:12]
        base = f"{self._prefix}-{stamp[:16]}-{digest}.{sys.implementation.cache_tag}"
        return _SingleEntryFile(self._cache_path, base, stamp)

    def _save_overload(self, sig, cres):
        if not self._enabled:
            return
        if cres.library.has_dynamic_globals:
            warnings.warn(f"adjit: {self._name} is not cached on disk: its code embeds "
                          "process addresses (ctypes pointers or large global arrays)",
                          CacheWarning, stacklevel=2)
            return
        try:
            self._locator.ensure_cache_path()
            key = self._index_key(sig, cres.codegen)
            self._file(key).save(key, cres._reduce())
        except Uncacheable:
            return
        except OSError as exc:
            warnings.warn(f"adjit: could not write the disk cache of {self._name}: {exc}",
                          CacheWarning, stacklevel=2)


def enable_disk_cache(dispatcher, py_func, label, stamp):
    """Make ``dispatcher`` (the transform ``label`` of ``py_func``) load and save its
    compiled code on disk, under the fingerprint ``stamp()`` (which raises
    ``Uncacheable``). Returns False, with a ``CacheWarning`` saying why, when the
    function cannot be cached (no source file, or a global adjit cannot fingerprint)."""
    if isinstance(dispatcher._cache, DerivativeCache):
        return True
    base = _base_locator(py_func)
    if base is None:
        warnings.warn(f"adjit: {label}({py_func.__qualname__}) is not cached on disk: "
                      f"{_no_locator_reason(py_func)}", CacheWarning, stacklevel=4)
        return False
    try:
        stamp()
    except Uncacheable as exc:
        warnings.warn(f"adjit: {label}({py_func.__qualname__}) is not cached on disk: {exc}",
                      CacheWarning, stacklevel=4)
        return False
    dispatcher._cache = DerivativeCache(dispatcher.py_func, py_func, label, stamp, base)
    return True


def _no_locator_reason(py_func):
    """Why Numba's locators found no cache directory for ``py_func``: it has no source
    file (``exec``, an interactive session), or no directory for it is writable."""
    try:
        source = inspect.getfile(py_func)
    except TypeError:
        source = None
    if source is None or not os.path.isfile(source):
        return ("it has no source file (defined by exec or in an interactive session); "
                "define it in a module to cache it")
    return f"no writable cache directory for its source file {source}"


def clear_cache(py_func):
    """Delete every disk-cache file of ``py_func``'s derivatives (all transforms, all
    fingerprints). Returns the number of files removed."""
    base = _base_locator(py_func)
    if base is None:
        return 0
    return remove_files(base.get_cache_path(), file_prefix(py_func) + "-")


def remove_files(directory, prefix):
    """Delete the files of ``directory`` whose names start with ``prefix``; how many."""
    removed = 0
    for path in glob.glob(os.path.join(glob.escape(directory), glob.escape(prefix) + "*")):
        try:
            os.remove(path)
            removed += 1
        except OSError:
            pass
    return removed
