"""Capture Numba's typed SSA IR for one signature of a function.

A typing-only Numba pipeline runs the untyped passes and ``NopythonTypeInference``; a pass
right after it copies ``func_ir`` (phis included: ``PreLowerStripPhis`` would destroy them),
``typemap``, ``calltypes`` and ``return_type`` and ends the pipeline early, so nothing is
lowered or compiled. Results are cached per (function, argument types).
"""
import operator
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import numba
from numba.core import compiler, ir, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.registry import cpu_target
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import build_definitions
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import DeadBranchPrune

from ..errors import ArgumentError, UnsupportedError, primal_refusal
from ..compile.caches import owned_cache
from ..compile.capture_typing import set_captured_return_type, typing_only
from ..compile.dispatcher import BuildGeneratedIR
from ..compile.timing import phase
from ..compile.shared_overloads import SharedOverloadCompiles
from ..compile.typing_memo import MemoisedScalarTyping


@dataclass
class TypedFunction:
    """The typed SSA IR of one function specialised to ``argtypes``."""

    py_func: object
    argtypes: tuple
    func_ir: ir.FunctionIR
    typemap: dict
    calltypes: dict
    return_type: types.Type
    dispatcher: object = None
    extra: dict = field(default_factory=dict)

    @property
    def name(self):
        return self.py_func.__qualname__

    @property
    def user_name(self):
        """The function's name in messages: for one adjit generated, the user's function
        it derives (``grad_loss`` and ``loss_fwd`` are ``loss``)."""
        return getattr(self.py_func, "_adjit_primal_name", None) or self.name

    @property
    def arg_names(self):
        return tuple(self.func_ir.arg_names)

    def typeof(self, var):
        """The Numba type of a variable (``ir.Var`` or name)."""
        return self.typemap[var if isinstance(var, str) else var.name]


@register_pass(mutates_CFG=False, analysis_only=True)
class CaptureTypedIR(FunctionPass):
    """Copy the typed SSA IR, then stop the pipeline: capture needs no lowering."""

    _name = "adjit_capture_typed_ir"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        # FunctionIR.copy() copies blocks and statement lists but keeps the statement and
        # expression objects, so the identity-keyed calltypes still apply to the copy.
        captured = (state.func_ir.copy(), dict(state.typemap), dict(state.calltypes),
                    state.return_type)
        raise compiler._EarlyPipelineCompletion(captured)


@register_pass(mutates_CFG=True, analysis_only=False)
class PruneNoneChecksOfArguments(FunctionPass):
    """``if out is None: out = np.empty_like(x)`` where ``out`` is passed an array: the
    branch is never taken, so it goes, as Numba prunes it for an omitted ``out``. Left in,
    ``out`` would merge the argument with a new array, and reverse mode would refuse a
    helper that writes ``out`` as one that writes its argument and returns a new array.
    (Numba's own pruning needs the argument's variable assigned once; here it is
    reassigned in the branch.) A compared variable counts as the argument when that is
    its only definition, or, in the entry block, its last one before the test."""

    _name = "adjit_prune_none_checks_of_arguments"
    _TESTS = {operator.is_: False, operator.eq: False, operator.is_not: True,
              operator.ne: True}  # the branch taken when the argument is not None

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        entry = min(func_ir.blocks)
        pruned = False
        for label, block in func_ir.blocks.items():
            branch = block.body[-1]
            if isinstance(branch, ir.Branch):
                taken = self.taken(func_ir, state.args, block, label == entry, branch)
                if taken is not None:
                    block.body[-1] = ir.Jump(taken, branch.loc)
                    pruned = True
        if pruned:
            for dead in compute_cfg_from_blocks(func_ir.blocks).dead_nodes():
                del func_ir.blocks[dead]
            func_ir._definitions = build_definitions(func_ir.blocks)
        return pruned

    def taken(self, func_ir, argtypes, block, is_entry, branch):
        """The label a ``branch`` on ``arg is None`` (``is not``, ``==``, ``!=``) always
        takes for a never-None argument, else None."""
        local = {}
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                local[stmt.target.name] = stmt.value

        def value_of(var):
            defs = func_ir._definitions.get(var.name, [])
            if is_entry and var.name in local:
                return local[var.name]
            return defs[0] if len(defs) == 1 else None
        test = value_of(branch.cond)
        if isinstance(test, ir.Expr) and test.op == "call" and len(test.args) == 1:
            callee = value_of(test.func)
            if isinstance(callee, ir.Global) and callee.value is bool:
                test = value_of(test.args[0])
        if not (isinstance(test, ir.Expr) and test.op == "binop"
                and test.fn in self._TESTS):
            return None
        sides = [value_of(test.lhs), value_of(test.rhs)]
        args = [v for v in sides if isinstance(v, ir.Arg)]
        nones = [v for v in sides if isinstance(v, ir.Const) and v.value is None]
        if len(args) != 1 or len(nones) != 1 or args[0].index >= len(argtypes):
            return None
        typ = argtypes[args[0].index]
        if isinstance(typ, (types.NoneType, types.Optional, types.Omitted, types.Dummy)) or (
                typ == types.pyobject):
            return None
        return branch.truebr if self._TESTS[test.fn] else branch.falsebr


class TypingOnlyPipeline(SharedOverloadCompiles, MemoisedScalarTyping, CompilerBase):
    """Numba's untyped passes (and ``PruneNoneChecksOfArguments``) plus type inference;
    ends at ``CaptureTypedIR``."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm.add_pass_after(PruneNoneChecksOfArguments, DeadBranchPrune)
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(CaptureTypedIR, "adjit: capture typed IR")
        pm.finalize()
        return [pm]


class GeneratedTypingPipeline(SharedOverloadCompiles, MemoisedScalarTyping, CompilerBase):
    """For adjit's own generated functions: build their IR, infer types, capture.

    This is what lets adjit transform its own output again (``jvp(grad(f))``)."""

    def define_pipelines(self):
        from numba.core import untyped_passes
        from numba.core.compiler_machinery import PassManager

        pm = PassManager("adjit_generated_typing")
        pm.add_pass(BuildGeneratedIR, "adjit: build IR")
        pm.add_pass(untyped_passes.FixupArgs, "fix up args")
        pm.add_pass(untyped_passes.IRProcessing, "processing IR")
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(CaptureTypedIR, "adjit: capture typed IR")
        pm.finalize()
        return [pm]


def is_generated(func):
    """Whether ``func`` is a dispatcher adjit generated (its IR comes from a builder)."""
    return hasattr(py_function_of(func), "_adjit_builder")


_cache = owned_cache("typed_ir")
_lock = threading.RLock()


def py_function_of(func):
    """The Python function behind a plain function or a Numba dispatcher."""
    return getattr(func, "py_func", func)


def capture(func, argtypes):
    """Typed SSA IR of ``func`` (plain function or ``@njit`` dispatcher) for ``argtypes``."""
    py_func = py_function_of(func)
    argtypes = tuple(argtypes)
    key = (py_func, argtypes)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
    _refuse_object_mode(py_func)
    flags = compiler.Flags()
    flags.nrt = True
    if isinstance(func, numba.core.dispatcher.Dispatcher):
        cpu_target.options.parse_as_flags(flags, func.targetoptions)
    pipeline = GeneratedTypingPipeline if is_generated(func) else TypingOnlyPipeline
    if pipeline is TypingOnlyPipeline and _calls_itself(func):
        # typing a self-recursive dispatcher's body types its recursive call through the
        # dispatcher, which Numba refuses while the same signature is being typed here:
        # compile the primal first, as calling it would
        func.compile(argtypes)
    with global_compiler_lock, phase("capture", py_func.__qualname__), \
            typing_only(), _in_progress(key):
        cpu_target.target_context.refresh()
        try:
            func_ir, typemap, calltypes, rtype = compiler.compile_extra(
                cpu_target.typing_context, cpu_target.target_context, py_func,
                args=argtypes, return_type=None, flags=flags, locals={},
                pipeline_class=pipeline)
        except numba.core.errors.TypingError as e:
            if pipeline is not TypingOnlyPipeline:
                raise
            # the user's function does not type for these arguments
            raise primal_refusal(py_func.__name__, argtypes, e) from None
    typed = TypedFunction(py_func, argtypes, func_ir, typemap, calltypes, rtype,
                          dispatcher=func if func is not py_func else None)
    with _lock:
        _cache.setdefault(key, typed)
    return _cache[key]


_capturing = threading.local()


@contextmanager
def _in_progress(key):
    """Mark ``key`` as being captured on this thread (see ``_return_type_of``)."""
    keys = _capturing.__dict__.setdefault("keys", set())
    keys.add(key)
    try:
        yield
    finally:
        keys.discard(key)


def _return_type_of(dispatcher, argtypes):
    """The return type of a generated callee, from its captured typed IR (so typing a
    capture compiles nothing); None while that same capture is in progress (a recursive
    call), where Numba's own resolution applies."""
    key = (py_function_of(dispatcher), argtypes)
    if key in getattr(_capturing, "keys", ()):
        return None
    return capture(dispatcher, argtypes).return_type


set_captured_return_type(_return_type_of)


def _refuse_object_mode(py_func):
    """An ``objmode`` block runs Python objects, which adjit cannot differentiate: refuse
    it by its source line before Numba's typing fails on the lifted block."""
    import dis
    code = getattr(py_func, "__code__", None)
    if code is None or not {"objmode", "objmode_context"} & set(code.co_names):
        return
    line = code.co_firstlineno
    for ins in dis.get_instructions(code):
        if ins.starts_line is not None:
            line = ins.starts_line
        if ins.argval in ("objmode", "objmode_context"):
            break
    loc = ir.Loc(code.co_filename, line)
    raise UnsupportedError("a 'with numba.objmode(...)' block", py_func.__qualname__, loc,
                           "object mode runs Python objects, which adjit cannot "
                           "differentiate; move the block out of the differentiated "
                           "function, or compute its result before and pass it in")


def _calls_itself(func):
    """Whether ``func`` is a Numba dispatcher whose body names itself (recursion)."""
    if not isinstance(func, numba.core.dispatcher.Dispatcher):
        return False
    py_func = func.py_func
    return py_func.__globals__.get(py_func.__name__) is func and (
        py_func.__name__ in py_func.__code__.co_names)


def check_arity(py_func, args):
    """Raise a clear ArgumentError when a transform gets the wrong number of arguments."""
    import inspect
    nparams = len(inspect.signature(py_func).parameters)
    if len(args) != nparams:
        raise ArgumentError(f"{py_func.__qualname__} takes {nparams} arguments, got {len(args)}")
