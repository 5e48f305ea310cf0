"""Load the hand-written LLVM IR tape runtime (``adjit.native``).

Two modules, two lifetimes:

* ``tape_state.ll`` -- process-wide state (pthread key, counters) and slow paths. It is
  JIT-compiled once, at import, in a private MCJIT engine that is never disposed, and
  every symbol it defines is published with ``llvmlite.binding.add_symbol`` so any later
  JIT module (numba's, including object code loaded from numba's cache) resolves it by
  name.
* ``tape_fast.ll`` -- the inlinable push/pop fast path. It is wrapped, lazily at the first
  intrinsic codegen, in a numba ``CodeLibrary`` that each intrinsic links into the
  function being compiled, so LLVM inlines it there.
"""

import ctypes
from importlib import resources

import llvmlite.binding as ll

STATE_FILE = "tape_state.ll"
FAST_FILE = "tape_fast.ll"

# Symbols of tape_state.ll that other JIT modules refer to by name.
_PUBLISHED_FUNCTIONS = (
    "adjit_tape_create", "adjit_tape_grow", "adjit_tape_destroy",
    "adjit_tape_current_depth", "adjit_tape_truncate_current", "adjit_runtime_stats",
)
_PUBLISHED_GLOBALS = (
    "adjit_tape_key", "adjit_tape_growths", "adjit_tape_created", "adjit_tape_freed",
    "adjit_tape_initial_words",
)

_STATS_FIELDS = ("growths", "tapes", "tapes_freed", "capacity_words", "depth_words",
                 "initial_words")


def read_ir(name):
    """Return the text of one ``.ll`` file; works for editable checkouts and wheels."""
    return resources.files("adjit.native").joinpath(name).read_text(encoding="utf-8")


class _State:
    """The once-per-process compiled state module and its ctypes entry points."""

    def __init__(self):
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        target = ll.Target.from_default_triple()
        tm = target.create_target_machine(opt=2, jit=True)
        mod = ll.parse_assembly(read_ir(STATE_FILE))
        mod.triple = target.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        engine = ll.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        self.addresses = {}
        for name in _PUBLISHED_FUNCTIONS:
            self.addresses[name] = engine.get_function_address(name)
        for name in _PUBLISHED_GLOBALS:
            self.addresses[name] = engine.get_global_value_address(name)
        missing = [n for n, a in self.addresses.items() if not a]
        if missing:
            raise RuntimeError("adjit runtime: unresolved state symbols %s" % missing)
        # Threads may still exit (running the key destructor, which lives in this
        # engine's code) during interpreter shutdown: never free the engine.
        init = ctypes.CFUNCTYPE(ctypes.c_int32)(
            engine.get_function_address("adjit_state_init"))
        engine.detach()
        self._engine = engine
        for name, addr in self.addresses.items():
            ll.add_symbol(name, addr)

        rc = init()
        if rc != 0:
            raise OSError(rc, "adjit runtime: pthread_key_create failed")
        self.current_depth = ctypes.CFUNCTYPE(ctypes.c_int64)(
            self.addresses["adjit_tape_current_depth"])
        self.truncate_current = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64)(
            self.addresses["adjit_tape_truncate_current"])
        self._stats = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
            self.addresses["adjit_runtime_stats"])

    def stats(self):
        """Snapshot of the counters plus the calling thread's tape size."""
        out = (ctypes.c_int64 * len(_STATS_FIELDS))()
        self._stats(ctypes.addressof(out))
        return dict(zip(_STATS_FIELDS, out))


STATE = _State()

_fast_library = None
#: the code library class of the fast path: ``compile.inline_library`` registers its
#: inline-only library (``use_fast_library_class``), as this lower layer cannot import it
_fast_library_class = []


def use_fast_library_class(cls):
    """Build the fast-path library as a ``cls(codegen, name)`` (before its first use)."""
    _fast_library_class[:] = [cls]


def fast_library():
    """The finalized numba CodeLibrary holding tape_fast.ll (built on first use); an
    inline-only library once ``adjit.compile`` is imported: its IR is linked into the
    functions that call it.

    Called from intrinsic codegen, i.e. while numba holds its global compiler lock;
    the (re-entrant) lock is taken again so this is also safe from plain Python.
    """
    global _fast_library
    if _fast_library is not None:
        return _fast_library
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    with global_compiler_lock:
        if _fast_library is None:
            codegen = cpu_target.target_context.codegen()
            mod = ll.parse_assembly(read_ir(FAST_FILE))
            mod.name = "adjit_tape_fast"
            mod.triple = ll.get_process_triple()
            mod.data_layout = codegen._data_layout
            mod.verify()
            # only ever inlined (every function is ``alwaysinline``): no optimisation
            # or machine code of its own, which cost 20 ms of a process's first gradient
            lib = (_fast_library_class[0](codegen, "adjit_tape_fast") if _fast_library_class
                   else codegen.create_library("adjit_tape_fast"))
            lib.add_llvm_module(mod)
            lib.finalize()
            # what a caller needs of it is inlined where the caller's own code is
            # optimised: a wrapper around programs optimised alone need not be
            # (``inline_library.ModulePassesOnlyLibrary``)
            lib.runtime = True
            _fast_library = lib
    return _fast_library
