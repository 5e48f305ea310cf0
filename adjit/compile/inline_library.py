"""A code library for functions that only ever run inlined into another compiled function.

Numba finalises every function it compiles on its own: function passes, the full -O3
module pipeline, then machine code in the JIT engine. adjit's internal functions (forward
and reverse passes, rule helpers, adjit's ``@overload``s) are never called from Python:
the transform that calls them links their LLVM IR in and optimises the whole again.
Optimising and code-generating each of them first was most of the compile time of a first
gradient.

``InlineOnlyLibrary`` keeps Numba's cheap per-function simplification of a function and
skips the module passes (unless ``optimise_alone``) and the machine code. Only its
environment global reaches the JIT engine, because Numba stores the function's environment
pointer there after compiling it. Such a function has no native entry point: a generated
internal dispatcher is never called from Python, and an ``InternalDispatcher`` (a helper
made by ``internal_jit``) runs an ordinarily compiled twin when it is.
"""
import numba
from llvmlite import binding as ll
from llvmlite import ir as llvmir
from numba.core import cgutils
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import Compiler, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.registry import CPUDispatcher
from numba.core.typed_passes import NopythonTypeInference

from ..runtime.loader import use_fast_library_class
from .capture_typing import TypedFromCapture
from .kernel_cache import enable_kernel_cache, name_apart
from .llvm_options import machine_sinking_for


class InlineOnlyLibrary(JITCodeLibrary):
    """A JIT code library whose code is only linked into callers, never run by itself."""

    def add_llvm_module(self, ll_module):
        """Simplify the lowered module function by function (Numba's per-function passes,
        which are cheap), then link it in: the caller's finalisation runs the module
        passes over the whole. Without this first simplification, the caller's -O3 left
        the inlined reverse loop of a forward-over-reverse unvectorised (rosenbrock_loop's
        hvp cost 5.2 primal calls instead of 3.3)."""
        self._optimize_functions(ll_module)
        self._final_module.link_in(ll_module)

    #: also run the module passes on this function alone, before its callers inline it,
    #: if its module (with the callees linked in) is small (``OPTIMISE_ALONE_LINES``)
    optimise_alone = False

    def _optimize_final_module(self):
        """No module passes (the caller runs them over the linked whole), unless
        ``optimise_alone`` and the module is small: forward-mode programs of scalar
        code, whose loops -O3 vectorises only when they are optimised alone first
        (rosenbrock_loop's hvp: 1.7 primal calls, not 6.7). A program that inlines array
        kernels is ten times larger; optimising it alone first took seconds (a quarter
        of ``simple_mlp``'s first hvp, a third of ``broadcast_sin_cos_exp``'s) and made
        none of the suite's derivatives faster."""
        if self.optimise_alone and _lines(self._final_module) <= OPTIMISE_ALONE_LINES:
            super()._optimize_final_module()
            self.optimised = True

    #: whether the module passes ran over this library's final module (see above)
    optimised = False

    def serialize_using_object_code(self):
        """For Numba's disk cache (``kernel_cache``): there is no object code, so the
        entry is the LLVM bitcode, callees linked in, rebuilt as an inline-only library."""
        return self.serialize_using_bitcode()

    def _finalize_final_module(self):
        """Give the engine only the environment globals (Numba writes the function's
        environment there); emit no machine code."""
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        env_names = [gv.name for gv in self._final_module.global_variables
                     if gv.name.startswith("_ZN08NumbaEnv")]
        if env_names:
            module = self._codegen._create_empty_module(self.name + ".env")
            for name in env_names:
                gv = llvmir.GlobalVariable(module, cgutils.voidptr_t, name=name)
                gv.linkage = "common"
                gv.initializer = cgutils.get_null_value(gv.type.pointee)
            env_module = ll.parse_assembly(str(module))
            self._codegen._add_module(env_module)
        self._finalized = True


#: the largest module (lines of LLVM IR, callees linked in) optimised alone first: the
#: suite's scalar programs have 300 to 900, those with array kernels 4,000 to 25,000
OPTIMISE_ALONE_LINES = 2000


def _lines(module):
    """Lines of a module's LLVM IR: its size, counted in a few milliseconds."""
    return str(module).count("\n")


class ModulePassesOnlyLibrary(JITCodeLibrary):
    """The code library of a public transform: its functions go straight into the module,
    without Numba's per-function passes first. The module passes run the same
    simplifications over them anyway; run twice, they were a sixth of the LLVM time of a
    scalar gradient's first compile."""

    def add_llvm_module(self, ll_module):
        """Link the lowered module in as it is (see the class)."""
        ll_module.data_layout = self._codegen._data_layout
        self._final_module.link_in(ll_module)

    def _optimize_final_module(self):
        """The module passes; only Numba's cheap ones if the generated programs this
        transform calls were all optimised alone already (``InlineOnlyLibrary.optimised``,
        as forward-mode programs of scalar code are). The full passes would optimise the
        same program again, to inline it into a wrapper that checks arguments and calls
        it: 20 of the 237 ms of ``scalar_loop_branch``'s first hvp. (Its runtime from
        Python is the same: one call more. Compiled code that calls the transform, such
        as the benchmark's drivers, optimises the whole again as before.) adjit's tape
        runtime (``loader.fast_library``, ``runtime``) is inlined where the programs were
        optimised, and does not count."""
        programs = [lib for lib in self._linking_libraries if isinstance(lib, InlineOnlyLibrary)
                    and not getattr(lib, "runtime", False)]
        if programs and all(lib.optimised for lib in programs):
            mpm, mpb = self._codegen._module_pass_manager(
                loop_vectorize=False, slp_vectorize=False, opt=self._codegen._opt_level,
                cost="cheap")
            mpm.run(self._final_module, mpb)
            # the globals the inlined copies no longer use go too, as the full passes
            # drop them: a process address left in one keeps the transform off disk
            dce = ll.create_new_module_pass_manager()
            dce.add_global_dead_code_eliminate_pass()
            dce.run(self._final_module, ll.create_pass_builder(
                self._codegen._tm, ll.create_pipeline_tuning_options()))
            return
        super()._optimize_final_module()

    def _finalize_specific(self):
        """Generate machine code; very branchy code without machine sinking
        (``llvm_options.machine_sinking_for``)."""
        with machine_sinking_for(self._final_module):
            super()._finalize_specific()


@register_pass(mutates_CFG=False, analysis_only=False)
class UseInlineOnlyLibrary(FunctionPass):
    """Before lowering: an internal function's code goes into an ``InlineOnlyLibrary``."""

    _name = "adjit_use_inline_only_library"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        for func_id in {id(f): f for f in (state.func_id, state.func_ir.func_id)}.values():
            name_apart(func_id, state.args)  # see kernel_cache.name_apart
        if state.library is None:
            codegen = state.targetctx.codegen()
            state.library = InlineOnlyLibrary(codegen, state.func_id.func_qualname)
            state.library.optimise_alone = getattr(state.func_id.func,
                                                   "_adjit_optimise_alone", False)
            state.library.enable_object_caching()
        return True


class InlineOnlyPipeline(Compiler):
    """Numba's default pipeline, with an internal helper's code kept as IR for its
    callers (``UseInlineOnlyLibrary`` before lowering)."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(UseInlineOnlyLibrary, NopythonTypeInference)
        pm.finalize()
        return [pm]


# the tape's fast path is only ever inlined too
use_fast_library_class(InlineOnlyLibrary)


class InternalDispatcher(TypedFromCapture, CPUDispatcher):
    """The dispatcher of an adjit helper meant for generated code. Its own compiles have
    no native entry point, so a call from Python (a test, a user probing a rule) runs a
    twin compiled the ordinary way, once, on first such call. Typing a capture types it
    from its captured IR (``capture_typing``): ``hvp`` compiled every elementwise kernel
    of ``grad(f)``'s body, of which it only calls the JVPs."""

    def __call__(self, *args, **kwargs):
        twin = self.__dict__.get("_python_twin")
        if twin is None:
            options = {k: v for k, v in self.targetoptions.items()
                       if k not in ("no_cpython_wrapper", "no_cfunc_wrapper", "nopython")}
            twin = self._python_twin = numba.njit(self.py_func, **options)
        return twin(*args, **kwargs)


def internal_jit(func=None, **options):
    """``numba.njit`` for adjit's helpers that only generated code calls: no CPython or
    C wrapper, and code that is optimised and compiled only inside its callers.
    Usable bare (``@internal_jit``) or with Numba options."""
    if func is None:
        return lambda f: internal_jit(f, **options)
    targetoptions = {"nopython": True, **options,
                     "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
    dispatcher = InternalDispatcher(func, locals={}, targetoptions=targetoptions,
                                    pipeline_class=InlineOnlyPipeline)
    enable_kernel_cache(dispatcher, InlineOnlyLibrary)
    return dispatcher


#: ``jit_options`` for adjit's ``@overload`` implementations: like ``internal_jit``, their
#: code is optimised and compiled only inside the functions that call them
INTERNAL_JIT_OPTIONS = {"pipeline_class": InlineOnlyPipeline, "no_cfunc_wrapper": True}
