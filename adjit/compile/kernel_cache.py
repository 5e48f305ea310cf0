"""The on-disk cache of adjit's own internal functions: rule kernels, scalar partials.

An elementwise adjoint kernel (``rules/elementwise.elementwise_update``), a scalar partial
or a reduction helper depends only on adjit's sources and its argument types, so it is
compiled once per signature on a machine, not once per process: the first ``grad`` of an
array function in a new process loads its kernels instead of compiling them (about half of
``broadcast_sin_cos_exp``'s first gradient). The JVP programs ``hvp`` derives from them
are kept the same way (``enable_derived_cache``).

It is Numba's cache (``numba.core.caching``, in the first writable directory Numba would
use for the kernel's source file) with what internal functions need:

- **What is stored**: their code only ever runs inlined into a caller
  (``InlineOnlyLibrary``), so an entry holds the LLVM bitcode, callees linked in, and is
  rebuilt as an inline-only library with no machine code.
- **When stale**: the key is the signature (only types known by their printed form), the
  CPU, Numba's optimisation level and inherited flags, adjit's and Numba's environment
  variables, and a digest: adjit's sources and versions (``stamps.environment_stamp``),
  the kernel's code and, recursively, the code and values in its closure (a kernel
  built for ``sin`` holds ``sin``'s partial). A closure holding anything else (a user's
  function, registered through ``adjit.extend``) is not cached. A derived program's
  digest chains its kernel's with each derivation (never a generated stub's: all stubs
  have the same code).
- **Named by content**: an internal function with a digest is compiled under a uid
  computed from it (``content_uid``), not Numba's per-process count, so entries written
  by different processes never share a symbol name with different code.
- **Robust**: one entry per index file, written atomically; an unreadable entry is
  ignored with a ``CacheWarning`` and the kernel compiled again (``GuardedCache``).

``ADJIT_KERNEL_CACHE=0`` turns it off; ``adjit.clear_cache()`` deletes the files.
"""
import functools
import hashlib
import itertools
import os
import sys
import types as pytypes

from numba.core import caching, compiler, config, types
from numba.core.bytecode import FunctionIdentity
from numba.core.targetconfig import ConfigStack

from .. import config as adjit_config
from ..errors import Uncacheable
from .disk_cache import GuardedCache, _SingleEntryFile, remove_files
from .stamps import environment_stamp

_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _adjit_function(value):
    """The Python function of an adjit-defined function or dispatcher, else None. A
    generated function's stub is not one: its code is the same for every generated
    function, and what it computes is built at run time (``make_stub``)."""
    func = getattr(value, "py_func", value)
    if (isinstance(func, pytypes.FunctionType)
            and (func.__module__ or "").split(".")[0] == "adjit"
            and not hasattr(func, "_adjit_builder")):
        return func
    return None


def _static(typ):
    """Whether a Numba type is known by its printed form alone: numbers, arrays, tuples,
    plain literals. A function or class type prints only a name, so a kernel called
    with one is not cached (two functions of one name would share an entry)."""
    if isinstance(typ, (types.Number, types.Boolean, types.NoneType, types.SliceType,
                        types.NumberClass, types.DType)):
        return True
    if isinstance(typ, types.Array):
        return _static(typ.dtype)
    if isinstance(typ, types.BaseTuple):
        return all(_static(t) for t in typ.types)
    if isinstance(typ, types.Omitted):
        return isinstance(typ.value, _PLAIN)
    if isinstance(typ, types.Literal):
        return isinstance(typ.literal_value, _PLAIN)
    return False


def static_signature(argtypes):
    """Whether every argument type is ``_static``."""
    return all(_static(t) for t in getattr(argtypes, "args", argtypes))


def _digest_code(code, h):
    h.update(code.co_code)
    h.update(repr((code.co_name, code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _digest_code(const, h)
        else:
            h.update(repr(const).encode())


def _digest_value(value, h, depth):
    """Feed one closure or default value into ``h``; raises ``Uncacheable``."""
    func = _adjit_function(value)
    if isinstance(value, _PLAIN):
        h.update(f"{type(value).__name__}:{value!r}".encode())
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__name__}[{len(value)}]".encode())
        for item in value:
            _digest_value(item, h, depth)
    elif isinstance(value, types.Type) and _static(value):
        h.update(f"numba-type:{value!r}".encode())
    elif func is not None and depth:
        h.update(f"function:{func.__module__}.{func.__qualname__}".encode())
        options = getattr(value, "targetoptions", None) or {}
        h.update(repr(sorted((k, repr(v)) for k, v in options.items())).encode())
        _digest_function(func, h, depth - 1)
    elif _library_named(value):
        h.update(f"named:{getattr(value, '__module__', '')}.{value.__name__}".encode())
    else:
        raise Uncacheable(f"its closure holds {type(value).__name__} {value!r:.60}")


def _library_named(value):
    """A builtin function, a NumPy ufunc, or a class of NumPy's, Numba's, Python's or
    adjit's: known by its name."""
    if isinstance(value, pytypes.BuiltinFunctionType) or type(value).__name__ == "ufunc":
        return True
    root = (getattr(value, "__module__", "") or "").split(".")[0]
    return isinstance(value, type) and root in ("numpy", "numba", "builtins", "adjit")


def _digest_function(func, h, depth=8):
    """Code, defaults and closure of an adjit function, recursively."""
    _digest_code(func.__code__, h)
    for value in func.__defaults__ or ():
        _digest_value(value, h, depth)
    for cell in func.__closure__ or ():
        _digest_value(cell.cell_contents, h, depth)


def kernel_digest(func):
    """The hex digest of an internal function for its disk-cache key; raises
    ``Uncacheable`` when its closure holds something adjit cannot hash by content."""
    h = hashlib.sha256(environment_stamp().encode())
    h.update(f"{func.__module__}.{func.__qualname__}".encode())
    _digest_function(func, h)
    return h.hexdigest()


#: content uids lie far above Numba's per-process counter of compiles
_CONTENT_UID_BASE = 1 << 62


def content_uid(func):
    """A uid for the symbol names of internal function ``func`` computed from its content
    (the kernel digest), or None when it has none.

    Numba names a compiled function by its qualified name, a uid counted per process,
    its argument types and its flags. A cache entry's bitcode keeps the names of the
    process that wrote it, and callers link entries in with ``linkonce_odr`` linkage,
    which keeps one definition of a name. Closures of one factory share their name
    (``elementwise_update.<locals>.update``, a partial's ``<lambda>``), so a kernel
    loaded from disk and another compiled now (or loaded from another process's entry)
    could meet under one name with different code: one silently replaced the other (a
    zero gradient of ``np.logaddexp(x, b)``). Named by content, one name is one code."""
    digest_of = getattr(func, "_adjit_content_digest", None)
    try:
        if digest_of is not None:
            digest = digest_of()
        elif _adjit_function(func) is not None:
            digest = kernel_digest(func)
        else:
            return None
    except Uncacheable:
        return None
    return _CONTENT_UID_BASE + int(digest[:15], 16)


#: Numba's uids count compiles per process; this random salt, drawn at import, keeps
#: the uids of adjit's functions in one process apart from every other process's
_PROCESS_SALT = (int.from_bytes(os.urandom(4), "little") + 1) << 24
# Numba's own count starts there too: a user's @njit helpers compiled into a derivative
# cached on disk keep Numba's names, and helpers made by one factory share a qualified
# name (``make(k).<locals>.h``), so two processes' derivatives of ``make(1.0)`` and
# ``make(2.0)``, loaded into a third, ran one ``h`` for both
FunctionIdentity._unique_ids = itertools.count(
    _PROCESS_SALT + next(FunctionIdentity._unique_ids))


def name_apart(func_id, argtypes=None):
    """Give a function adjit compiles a uid no other process's different code has: its
    content's (``content_uid``) when ``argtypes`` is given and static (a function or
    dispatcher argument calls code that may be compiled anew), else Numba's count plus
    this process's salt. Generated stubs all live in one module, so two processes'
    ``grad_f`` of two modules' ``f`` differed by the count alone, and an ``@njit``
    caller of both, loaded from the disk cache, ran one for both."""
    uid = content_uid(func_id.func) if (argtypes is not None
                                         and static_signature(argtypes)) else None
    if uid is None:
        if func_id.unique_id >= _PROCESS_SALT:
            return  # salted already (a generated internal stub: at build, then here)
        uid = _PROCESS_SALT + func_id.unique_id
    func_id.unique_id = uid
    func_id.unique_name = f"{func_id.func_qualname}${uid}"


class KernelCache(GuardedCache):
    """A Numba dispatcher cache for one internal function (see the module)."""

    def __init__(self, py_func, source, library_class, digest=None, label=""):
        """The cache of kernel ``py_func``, or (``label``) of a program derived from it,
        whose ``digest()`` then also covers what it was derived for. Entries are rebuilt
        as ``library_class`` (``InlineOnlyLibrary``)."""
        self._library_class = library_class
        self._name = f"{py_func.__module__}.{py_func.__qualname__}{label}"
        self._label = label
        self._py_func = py_func
        self._digest_of = digest or (lambda: kernel_digest(py_func))
        self._source = source
        qualname = py_func.__qualname__.replace("<", "").replace(">", "")
        self._prefix = f"adjit-kernel-{py_func.__module__}.{qualname}{label}"
        self._digest = None
        self.enable()

    @property
    def _cache_path(self):
        locator = _writable_locator(self._source)
        if locator is None:
            raise Uncacheable(f"no writable cache directory for {self._source}")
        return locator.get_cache_path()

    def _file(self, key):
        """The index/data pair of one signature of this kernel's current digest."""
        if self._digest is None:
            self._digest = self._digest_of()  # raises Uncacheable
        digest = hashlib.sha256(repr((key, self._digest)).encode()).hexdigest()[:24]
        base = f"{self._prefix}-{digest}.{sys.implementation.cache_tag}"
        return _SingleEntryFile(self._cache_path, base, self._digest)

    def _index_key(self, sig, codegen):
        """The signature, the CPU, and what else decides the code: Numba's optimisation
        level, the flags a callee inherits from the function being compiled, and
        adjit's and Numba's environment variables (SVML, fast-math, debug options)."""
        adjit_env = tuple(sorted((k, v) for k, v in os.environ.items()
                                 if k.startswith(("ADJIT_", "NUMBA_"))
                                 and k != "NUMBA_CACHE_DIR"))
        return (str(sig), codegen.magic_tuple(), config.OPT, config.BOUNDSCHECK,
                config.DEBUGINFO_DEFAULT, _inherited_flags(), adjit_env)

    def _loadable(self, sig):
        return static_signature(sig)

    def _rebuild(self, target_context, data):
        return rebuild_inline_only(target_context, data, self._library_class)

    def _uncacheable(self):
        self.disable()

    def _save_overload(self, sig, cres):
        if (not self._enabled or cres.library.has_dynamic_globals
                or not static_signature(sig)):
            return
        try:
            key = self._index_key(sig, cres.codegen)
            self._file(key).save(key, cres._reduce())
        except (Uncacheable, OSError):  # OSError: a directory that cannot be written
            self.disable()


def _inherited_flags():
    """The flags a callee compiled now inherits (``numba.core.cpu`` ``finalize``)."""
    top = ConfigStack.top_or_none()
    if top is None:
        return None
    return tuple(repr(getattr(top, name)) if top.is_set(name) else None
                 for name in ("nrt", "fastmath", "error_model", "forceinline", "boundscheck"))


def rebuild_inline_only(target_context, data, library_class):
    """A ``CompileResult`` from a cache entry, its code in a ``library_class``
    (``InlineOnlyLibrary``: LLVM IR for callers to inline, no machine code)."""
    codegen = target_context.codegen()
    kind = data[0][1]
    if kind != "bitcode":
        raise ValueError(f"a {kind!r} entry, not bitcode")
    before = codegen._library_class
    codegen._library_class = library_class
    try:
        return compiler.CompileResult._rebuild(target_context, *data)
    finally:
        codegen._library_class = before


def enable_kernel_cache(dispatcher, library_class):
    """Give an internal dispatcher the disk cache, when it has a source file; its entries
    are rebuilt as ``library_class``."""
    if not adjit_config.KERNEL_CACHE:
        return
    py_func = dispatcher.py_func
    if _adjit_function(py_func) is None:
        return
    source = getattr(py_func.__code__, "co_filename", None)
    if source and os.path.isfile(source):
        # the options it is compiled with too: internal_jit(f, ...) beside internal_jit(f)
        options = repr(sorted((k, repr(v)) for k, v in dispatcher.targetoptions.items()))

        def digest():
            text = f"{kernel_digest(py_func)}/{options}"
            return hashlib.sha256(text.encode()).hexdigest()
        dispatcher._cache = KernelCache(py_func, source, library_class, digest)


@functools.lru_cache(maxsize=None)
def _writable_locator(source):
    """The first of Numba's cache locators for ``source`` whose directory can be written
    (beside the source, else Numba's user-wide directory), or None."""
    for cls in caching.CacheImpl._locator_classes:
        locator = cls.from_function(enable_kernel_cache, source)
        if locator is None:
            continue
        try:
            locator.ensure_cache_path()
        except OSError:
            continue
        return locator
    return None


def enable_derived_cache(dispatcher, kernel, label, derived_for):
    """Give the dispatcher of a program derived from a cached kernel (its JVP, or the JVP
    of that) the disk cache, keyed by the kernel's own digest, the chain of ``label``s
    and each ``derived_for()`` (argument types, active arguments, the user's rules):
    loading it skips capturing the kernel and deriving the program."""
    cache = getattr(kernel, "_cache", None)
    if not isinstance(cache, KernelCache):
        return
    base = cache._digest_of  # the kernel's, through every derivation before this one

    def digest():
        text = f"{base()}/{label}/{derived_for()!r}"
        return hashlib.sha256(text.encode()).hexdigest()
    dispatcher._cache = KernelCache(cache._py_func, cache._source, cache._library_class,
                                    digest, f"{cache._label}-{label}")
    dispatcher.py_func._adjit_content_digest = digest  # its symbol names (content_uid)


def clear_kernel_cache():
    """Delete every kernel cache file of adjit's (all versions), in the directories Numba
    would use for adjit's source files. Returns the number of files removed."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    directories = set()
    for source in root.rglob("*.py"):
        locator = _writable_locator(str(source))
        if locator is not None:
            directories.add(locator.get_cache_path())
    return sum(remove_files(directory, "adjit-kernel-") for directory in directories)
