"""Expose generated Numba IR as ordinary Numba dispatchers.

Each generated function is a real ``numba.njit`` dispatcher around a stub whose parameters
carry the right names. Its pipeline does not translate bytecode: the first pass asks the
stub's builder for the IR of the requested signature, then Numba's own type inference and
lowering passes run on it. So generated code is callable from Python, from ``@njit`` code
(where LLVM can inline it) and can be fed to adjit again.
"""
import inspect
import types as pytypes
import weakref

from numba.core import ir, sigutils, typed_passes, types, untyped_passes
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.registry import CPUDispatcher

from ..errors import (AdjitError, ArgumentError, UnsupportedError, first_reason,
                      primal_refusal)
from ..ir.checks import after_rewrite
from ..ir.inlining import drop_unreachable
from ..runtime import truncate_current
from .caches import track_dispatcher
from .capture_typing import TypedFromCapture
from .inline_library import UseInlineOnlyLibrary
from .kernel_cache import name_apart
from . import lowering_memo  # noqa: F401  (remembers Numba's loc question, on import)
from .llvm_options import AdjitCodegenOptions
from .typing_memo import MemoisedScalarTyping
from .shared_overloads import SharedOverloadCompiles
from .unwinding import UnwindingNativeLowering
from .shared_globals import share_call_globals
from .whole_writes import rewrite_whole_array_writes
from .timing import note_llvm, phase


#: the function unpickling calls to rebuild a public transform (``api`` sets it, so that
#: this lower layer never imports the API)
_rebuilders = []


def set_rebuilder(rebuild):
    """Register ``rebuild(*adjit_spec)``, which unpickling a transform dispatcher calls."""
    _rebuilders[:] = [rebuild]


def _stub_template():
    return None


def _star_stub_template(*args):
    return None


def make_stub(name, arg_names, builder, defaults=None):
    """A Python function named ``name`` with parameters ``arg_names`` (``*args`` when
    None) and no body; the dispatcher built on it gets its IR from
    ``builder(argtypes) -> blocks``. With ``*args`` Numba passes one StarArgTuple."""
    if arg_names is None:
        code = _star_stub_template.__code__.replace(co_name=name, co_qualname=name)
    else:
        code = _stub_template.__code__.replace(
            co_argcount=len(arg_names), co_varnames=tuple(arg_names),
            co_nlocals=len(arg_names), co_name=name, co_qualname=name)
    # a real module's globals: Numba derives symbol names from the module, and recursion
    # only resolves when both of its derivations agree
    stub = pytypes.FunctionType(code, globals(), name, defaults)
    # weakly: Numba's dispatcher finalizer (a GC root) keeps each compile result, which
    # keeps the stub; a strong builder would keep the differentiated function, and so its
    # transforms and their dispatchers, alive for ever. The dispatcher holds it strongly.
    stub._adjit_builder = (weakref.WeakMethod(builder) if inspect.ismethod(builder)
                           else weakref.ref(builder))
    return stub


def builder_of(stub):
    """The builder of a generated stub (alive as long as its dispatcher is)."""
    builder = stub._adjit_builder()
    if builder is None:
        raise RuntimeError(f"adjit: the dispatcher of {stub.__name__} was freed")
    return builder


@register_pass(mutates_CFG=True, analysis_only=False)
class BuildGeneratedIR(FunctionPass):
    """Replace bytecode translation: the IR comes from the stub's builder."""

    _name = "adjit_build_generated_ir"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        stub = state.func_id.func
        name_apart(state.func_id)  # generated stubs all live in this module
        with phase("transform", stub.__name__):
            try:
                blocks = builder_of(stub)(tuple(state.args))
            except AdjitError:
                raise
            except Exception as error:  # adjit's bug (or Numba's): say so, in adjit's terms
                raise compile_error(stub, state.args, error) from error
        blocks = drop_unreachable(blocks)  # e.g. after a spliced pass that always raises
        # slice writes without Numba's slice assignment (whole_writes); not in a plain
        # function, whose IR adjit also differentiates in reverse mode
        if not getattr(stub, "_adjit_plain", False):
            blocks = rewrite_whole_array_writes(blocks)
        blocks = share_call_globals(blocks)  # one load per callee
        # building may create intrinsics (tape pops of new record types): install them
        state.typingctx.refresh()
        state.targetctx.refresh()
        arg_names = tuple(state.func_id.arg_names)
        after_rewrite(blocks, f"build of {stub.__name__}", arg_names)
        loc = blocks[min(blocks)].loc
        func_ir = ir.FunctionIR(blocks, False, state.func_id, loc, {},
                                len(arg_names), arg_names)
        state.func_ir = func_ir
        state.nargs = len(arg_names)
        return True


class GeneratedPipeline(SharedOverloadCompiles, MemoisedScalarTyping, AdjitCodegenOptions,
                        CompilerBase):
    """BuildGeneratedIR, then Numba's standard typed and lowering passes (less the
    after-inference rewrites, which are optimisations)."""

    def define_pipelines(self):
        pm = PassManager("adjit_generated")
        pm.add_pass(BuildGeneratedIR, "adjit: build IR")
        pm.add_pass(untyped_passes.FixupArgs, "fix up args")
        pm.add_pass(untyped_passes.IRProcessing, "processing IR")
        pm.add_pass(typed_passes.NopythonTypeInference, "nopython frontend")
        pm.add_pass(typed_passes.PreLowerStripPhis, "remove phis nodes")
        pm.add_pass(typed_passes.InlineOverloads, "inline overloaded functions")
        # no NopythonRewrites: its array-expression fusion builds Python functions whose
        # parameters are IR variable names, and generated names contain '%' on purpose
        if getattr(self.state.func_id.func, "_adjit_internal", False):
            pm.add_pass(UseInlineOnlyLibrary, "adjit: inline-only code library")
        lowering = DefaultPassBuilder.define_nopython_lowering_pipeline(self.state)
        unwinding = getattr(self.state.func_id.func, "_adjit_unwinding", False)
        for pass_cls, desc in lowering.passes:
            if unwinding and pass_cls is typed_passes.NativeLowering:
                pass_cls = UnwindingNativeLowering  # passes inlined: see compile/unwinding
            pm.add_pass(pass_cls, desc)
        pm.finalize()
        return [pm]


class GeneratedDispatcher(TypedFromCapture, CPUDispatcher):
    """A CPU dispatcher that never specialises on literal argument types.

    Generated code passes constants (``Literal[int](5)``) as often as variables; compiling
    one specialisation per literal would recompile, and would break recursion whose inner
    call has the non-literal type."""

    def add_overload(self, cres):
        """Keep the compiled code, drop the typed IR: Numba's finalizer of this dispatcher
        (a GC root) holds every compile result, and generated IR refers to the
        differentiated function's other derivatives, so keeping it would keep every
        function adjit ever differentiated alive. (Numba's own disk cache drops the same
        fields.) ``adjit.show`` prints the IR instead."""
        cres.fndesc.typemap = cres.fndesc.calltypes = None
        super().add_overload(cres._replace(type_annotation=None))

    def compile(self, sig):
        args, return_type = sigutils.normalize_signature(sig)
        args = tuple(types.unliteral(a) for a in args)
        if args in self.overloads:  # compiled already: nothing to time
            return super().compile(args if return_type is None else return_type(*args))
        with phase("numba", self.py_func.__name__) as step:
            entry = super().compile(args if return_type is None else return_type(*args))
            note_llvm(step, self.overloads.get(args))
        return entry


class TransformDispatcher(GeneratedDispatcher):
    """The dispatcher of a public transform (``grad(f)``, ``jvp(f)``, ...).

    Its code holds the derivative passes inline, behind an entry that sets the tape back
    on an error status (``compile.unwinding``), so an exception leaves no records on the
    thread's tape, wherever it is caught. Called from
    Python, no derivative can be running on this thread underneath, so the tape is also
    emptied before any exception propagates.

    Generated code that Numba cannot type or lower is adjit's bug, or Numba's, never the
    user's: it is reported as an ``UnsupportedError`` naming the function and Numba's
    reason, not as Numba's error from inside adjit."""

    def compile(self, sig):
        from numba.core.errors import NumbaError
        try:
            return super().compile(sig)
        except AdjitError:  # (an UnsupportedError is also a NotImplementedError)
            raise
        except (NumbaError, AssertionError, NotImplementedError) as error:
            # compiling runs none of the user's code: each of these is a compiler's
            # failure (Numba's lowering asserts on ``X[X > 0.1]`` of a 2-D X, whose
            # primal it cannot compile either), never the user's error as such
            raise compile_error(self.py_func, sigutils.normalize_signature(sig)[0],
                                error) from None

    def __reduce__(self):
        """Pickle as "the same transform of the same function" (``adjit_spec``): the
        receiving process rebuilds it, and loads its code from the disk cache when the
        transform was made with ``cache=True``."""
        spec = getattr(self, "adjit_spec", None)
        if spec is None:
            raise TypeError(f"{self!r} is an internal adjit function and cannot be pickled")
        return _rebuilders[0], spec

    def get_call_template(self, args, kws):
        """Numba's call template for a call from ``@njit`` code, with arguments that do
        not bind to the transform's parameters reported as from Python (an
        ``ArgumentError``), not as Numba's ``TypingError`` about adjit's function."""
        try:
            inspect.signature(self.py_func).bind(*args, **kws)
        except TypeError as error:
            raise self._argument_count_error(error) from None
        return super().get_call_template(args, kws)

    def __call__(self, *args, **kwargs):
        refresh = getattr(self, "adjit_refresh", None)
        if refresh is not None:  # a rebound callee: recompile against the current one
            refresh()
        try:
            return super().__call__(*args, **kwargs)
        except BaseException as error:
            truncate_current(0)
            if isinstance(error, TypeError) and str(error).startswith(_BINDING_ERRORS):
                error = _binding_reason(self.py_func, args, kwargs) or error
                raise self._argument_count_error(error) from None
            raise

    def _argument_count_error(self, error):
        """Numba's "not enough arguments" (or a keyword it cannot bind) in the transform's
        terms: its parameters (``vjp``, ``jvp`` and ``hvp`` take values positionally)."""
        params = ", ".join(inspect.signature(self.py_func).parameters)
        if params == "args":
            then = "ybar" if self.py_func.__name__.startswith("vjp_") else "the tangents"
            return ArgumentError(f"adjit: {self.py_func.__name__} takes the function's "
                                 f"arguments positionally, then {then}; {error}")
        return ArgumentError(f"adjit: {self.py_func.__name__} takes ({params}); {error}")


def _binding_reason(py_func, args, kwargs):
    """Why ``args`` and ``kwargs`` do not bind to ``py_func``'s parameters, as Python says
    it (an unknown keyword named first, as in a call), or None."""
    params = inspect.signature(py_func).parameters
    unknown = [k for k in kwargs if k not in params]
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return TypeError(f"got an unexpected keyword argument '{unknown[0]}'")
    try:
        inspect.signature(py_func).bind(*args, **kwargs)
    except TypeError as reason:
        return reason
    return None


#: the starts of Numba's messages for arguments that do not bind to the parameters
_BINDING_ERRORS = ("not enough arguments", "too many arguments", "missing argument",
                   "some keyword arguments unexpected", "got multiple values")


class RefreshedJit(CPUDispatcher):
    """A plain ``@njit`` function around a transform (``hessian``'s column loop): Numba
    compiles the transform's code into it, so a rebound callee would leave it stale. It
    runs the transform's staleness check first (``adjit_refresh``, which resets every
    tracked dispatcher when a name was rebound), and is tracked, so it compiles again."""

    def get_call_template(self, args, kws):
        """As ``TransformDispatcher.get_call_template``: arguments that do not bind are
        an ``ArgumentError`` naming the parameters."""
        try:
            inspect.signature(self.py_func).bind(*args, **kws)
        except TypeError as error:
            params = ", ".join(inspect.signature(self.py_func).parameters)
            raise ArgumentError(f"adjit: {self.py_func.__name__} takes ({params}); "
                                f"{error}") from None
        return super().get_call_template(args, kws)

    def __call__(self, *args, **kwargs):
        refresh = getattr(self, "adjit_refresh", None)
        if refresh is not None:
            refresh()
        return super().__call__(*args, **kwargs)

    def __reduce__(self):
        """Pickle as the transform it serves (``adjit_spec``: ``hessian(f)``), rebuilt by
        the receiving process; pickled as a function by value, the column loop lost the
        overload it calls (a TypingError in a process-pool worker)."""
        spec = getattr(self, "adjit_spec", None)
        if spec is None:
            return super().__reduce__()
        return _rebuilders[0], spec


def refreshed_jit(py_func, refresh):
    """``numba.njit(py_func)`` as a ``RefreshedJit`` checking ``refresh`` on each call."""
    dispatcher = RefreshedJit(py_func, targetoptions={"nopython": True})
    dispatcher.adjit_refresh = refresh
    return track_dispatcher(dispatcher)


def compile_error(stub, args, error):
    """The error for generated code that could not be built or compiled: the user's own
    function's, in the user's terms (``primal_refusal``), when Numba cannot compile that
    either for the same leading argument types (it refuses some code only when lowering
    it: a ufunc's ``out=`` keyword, a generator expression); else an internal error."""
    ref = getattr(stub, "_adjit_primal_ref", None)
    py_func = ref() if ref is not None else None
    args = tuple(args)
    if (inspect.getfullargspec(stub).varargs and len(args) == 1
            and isinstance(args[0], types.BaseTuple)):  # a ``*args`` stub (jvp, hvp)
        args = tuple(args[0].types)
    if py_func is not None:
        from numba import njit
        from numba.core.errors import NumbaError, TypingError
        params = inspect.signature(py_func).parameters.values()
        argtypes = tuple(types.unliteral(a) for a in args[:len(params)])
        if len(argtypes) == len(params) and all(
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            try:
                njit(py_func).compile(argtypes)
            except TypingError:  # (other types than the primal's: says nothing)
                pass
            except (NumbaError, AssertionError, NotImplementedError) as failure:
                return primal_refusal(py_func.__name__, argtypes, failure)
            except Exception:  # noqa: BLE001 (likewise)
                pass
    return internal_error(stub.__name__, error)


def internal_error(name, error):
    """The ``UnsupportedError`` for generated code adjit could not build or Numba could
    not type: the function, where in the user's source it was (when Numba says), and the
    error's type and first line. A custom vjp's parts that do not type are the user's
    ``fwd`` or ``bwd`` not fitting the function, and said so."""
    if "custom_vjp.py" in str(error):
        return UnsupportedError(
            "a function with a custom vjp (adjit.extend.defvjp) with these arguments", name,
            getattr(error, "loc", None),
            "its fwd and bwd do not compile together: fwd(*args) must return (value, "
            "residuals) and bwd(residuals, g) a tuple with one cotangent per argument, each "
            f"of its argument's type ({type(error).__name__}: {first_reason(error)})")
    return UnsupportedError(
        "this function (adjit generated code that Numba could not compile: an internal "
        "error, please report it)", name, getattr(error, "loc", None),
        f"{type(error).__name__}: {first_reason(error)}")


#: the primal's compilation options that change what its code does, not how fast it is:
#: derivatives honour them (an out-of-bounds index raises IndexError under
#: ``boundscheck=True``; ``error_model="numpy"`` divides by zero to inf)
SEMANTIC_OPTIONS = ("boundscheck", "error_model")


def primal_options(func):
    """The semantic options (``SEMANTIC_OPTIONS``) ``func`` was decorated with, if it is a
    Numba dispatcher (a generated one passes on its primal's)."""
    options = getattr(func, "targetoptions", None) or {}
    return {k: options[k] for k in SEMANTIC_OPTIONS if k in options}


def is_derivative(func):
    """Whether ``func`` (a function or dispatcher) is code adjit derived, with tape
    operations and in-place shadow updates, as opposed to a plain function whose IR adjit
    only supplies (a stencil's loops)."""
    stub = getattr(func, "py_func", func)
    return hasattr(stub, "_adjit_builder") and not getattr(stub, "_adjit_plain", False)


def generated_dispatcher(name, arg_names, builder, internal=False, defaults=None,
                         primal=None, plain=False, optimise_alone=False, options=None):
    """A Numba dispatcher whose IR per signature is ``builder(argtypes)``.

    ``internal`` functions are never called from Python: they have no CPython or C
    wrapper and keep their LLVM IR unoptimised in an ``InlineOnlyLibrary``, so the
    transform that calls them optimises and code-generates the whole once (inlining its
    own passes always, those of callees where LLVM's cost model says). ``primal`` is the
    function being differentiated, whose semantic options the derivative keeps. A
    ``plain`` function computes a primal (see ``is_derivative``). An ``optimise_alone``
    internal function also gets the module passes by itself first. ``options`` are more
    Numba options (a fused sum's ``error_model``)."""
    stub = make_stub(name, arg_names, builder, defaults)
    stub._adjit_plain = plain
    # messages about its code name the function it derives (``loss``, not ``grad_loss``)
    stub._adjit_primal_name = getattr(getattr(primal, "py_func", primal), "__qualname__", None)
    # weakly, as the builder: what a compile error is checked against (``compile_error``)
    primal_py = getattr(primal, "py_func", primal)
    stub._adjit_primal_ref = weakref.ref(primal_py) if callable(primal_py) else None
    stub._adjit_internal = internal
    stub._adjit_optimise_alone = optimise_alone
    # a public transform's own code unwinds the tape on an exception (compile/unwinding)
    stub._adjit_unwinding = not internal and not plain
    # nsz (no signed zeros) is the one fast-math flag: it lets LLVM drop the ``+ 0.0`` of
    # adjoints accumulated from zero and of zero tangents; only the sign of a zero result
    # can differ from strict IEEE. No reassociation, NaNs and infinities are kept.
    # no C wrapper: only a first-class function value (``types.FunctionType``) calls
    # through it, and building it cost 13 ms of every first gradient. Numba's ordinary
    # calls, from Python and from ``@njit`` code, and dispatcher arguments do not use it.
    options = {"nopython": True, "fastmath": {"nsz"}, "no_cfunc_wrapper": True,
               **primal_options(primal), **(options or {})}
    if internal:
        # not forceinline: a transform holds its own passes (ir.inlining), and LLVM's
        # cost model decides for the passes of callees
        options["no_cpython_wrapper"] = True
    cls = GeneratedDispatcher if internal else TransformDispatcher
    dispatcher = cls(stub, locals={}, targetoptions=options, pipeline_class=GeneratedPipeline)
    dispatcher.adjit_builder = builder  # the stub's reference is weak (see make_stub)
    return track_dispatcher(dispatcher)
