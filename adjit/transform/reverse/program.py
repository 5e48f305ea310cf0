"""The reverse-mode program of one (function, argument types, active arguments).

A ``ReverseProgram`` owns generated dispatchers that share the tape:
- ``fwd(adjit_tape, *args) -> y`` runs the primal and pushes what the reverse pass needs;
- ``fwd_tape(adjit_tape, *args) -> None`` pushes the same records but computes nothing
  else (for ``grad`` and ``hvp``, which never read y): see ``ir/dead_code.py``;
- ``rev(adjit_tape, *args, *shadows, adjit_ybar) -> cotangents`` pops it and returns one
  cotangent per argument (float adjoint, the shadow array, or 0); shadow arrays are passed
  only for active float-array arguments and are incremented in place.
Programs are cached per key and created before their IR is built, so a function that calls
itself finds its own program in the cache instead of deriving it again.
"""
import threading

from numba.core import ir, types

from ...capture.normalise import normalise
from ...ir.builder import copy_blocks
from ...ir.checks import after_rewrite
from ...capture.typed_ir import capture, py_function_of
from ...compile.dispatcher import generated_dispatcher
from ...errors import AdjitError, UnsupportedError
from ...ir.dead_code import discard_result
from ..analysis import activity
from .context import TAPE, YBAR, ReverseContext, shadow_arg, shadowed_array_args
from .forward_pass import build_forward
from .reverse_pass import ReversePass
from .swapped_arguments import copy_swapped_arguments
from ...compile.caches import owned_cache

_programs = owned_cache("reverse_program")
_lock = threading.RLock()


class ReverseProgram:
    """Forward and reverse dispatchers of one function specialisation."""

    def __init__(self, func, argtypes, active_args):
        self.func = func
        self.py_func = py_function_of(func)
        self.argtypes = tuple(argtypes)
        self.active_args = tuple(sorted(active_args))
        self._typed = None
        self._layout = None
        self._analysis = None   # (ctx, rev) while generated functions are being built
        self._built = set()
        # differentiated float arrays, and arrays written with differentiated values
        self.array_args = shadowed_array_args(
            self.typed, activity(self.typed, self.active_args), self.active_args)
        names = list(self.arg_names)
        shadows = [shadow_arg(names[i]) for i in self.array_args]
        base = self.py_func.__name__
        self.fwd = generated_dispatcher(f"{base}_fwd", [TAPE] + names, self._build_fwd,
                                        internal=True, primal=func)
        self.fwd_tape = generated_dispatcher(f"{base}_fwd_tape", [TAPE] + names,
                                             self._build_fwd_tape, internal=True,
                                             primal=func)
        self.rev = generated_dispatcher(f"{base}_rev", [TAPE] + names + shadows + [YBAR],
                                        self._build_rev, internal=True, primal=func)
        self._typed = None

    @property
    def arg_names(self):
        import inspect
        return tuple(inspect.signature(self.py_func).parameters)

    @property
    def typed(self):
        """The normalised typed IR of the primal (captured once), with swapped arguments
        copied first (``swapped_arguments``)."""
        if self._typed is None:
            self._typed = copy_swapped_arguments(normalise(capture(self.func, self.argtypes)))
        return self._typed

    def analysis(self):
        """The one analysis of this derivative (context and reverse blocks), shared by the
        forward pass, the tape-only forward pass, the reverse pass and ``show``. It is
        released once the reverse pass and a forward pass are built (a derivative keeps
        no IR); a later build, such as the other forward pass, analyses again, and
        ``_check_layouts`` checks that its records are the ones already compiled."""
        if self._analysis is None:
            self._analysis = self.analyse()
        return self._analysis

    def _done(self, part):
        """Note that ``part`` is built; release the analysis when nothing else is due."""
        self._built.add(part)
        if "rev" in self._built and self._built & {"fwd", "fwd_tape"}:
            self._analysis, self._typed = None, None

    def analyse(self):
        """A fresh context plus the reverse blocks (which fix the record layouts)."""
        _refuse_nested_reverse(self.typed)
        ctx = ReverseContext(self.typed, self.active_args)
        ctx.derive = derive_call
        rev = ReversePass(ctx)
        names = list(self.arg_names)
        rev.build(names, [shadow_arg(names[i]) for i in self.array_args])
        self._check_layouts(rev)
        return ctx, rev

    def _check_layouts(self, rev):
        """The forward pass pushes the records of one analysis and the reverse pass pops
        those of another (each generated function is built on its own): their layouts,
        the types of every block's record, must be the same."""
        ctx = rev.ctx
        layout = {label: tuple(types.unliteral(ctx.typeof(n)) for n in names)
                  for label, names in rev.records.items()}
        if self._layout is None:
            self._layout = layout
        elif layout != self._layout:
            raise AdjitError(f"internal: the tape records of {self.py_func.__qualname__} "
                             "differ between two analyses; please report this")

    def _check(self, argtypes, extra):
        """The dispatcher is asked for the types of the call site. They must be the
        program's, except that an array may differ in layout: a view rebuilt in a reverse
        pass (``a[i]`` of a C array) can be 'C' where the primal typed it 'A'. The IR is
        layout-agnostic, so one analysis serves both."""
        got = tuple(_any_layout(types.unliteral(t))
                    for t in argtypes[1:1 + len(self.argtypes)])
        want = tuple(_any_layout(t) for t in self.argtypes)
        if got != want or len(argtypes) != 1 + len(self.argtypes) + extra:
            raise AdjitError(f"internal: {self.py_func.__qualname__} derivative compiled "
                             f"for {argtypes}, built for {self.argtypes}")

    def _build_fwd(self, argtypes):
        self._check(argtypes, 0)
        return self.pass_blocks("fwd")

    def _build_fwd_tape(self, argtypes):
        self._check(argtypes, 0)
        return self.pass_blocks("fwd_tape")

    def _build_rev(self, argtypes):
        self._check(argtypes, len(self.array_args) + 1)
        return self.pass_blocks("rev")

    def pass_blocks(self, part):
        """The IR of one pass: ``fwd``, ``fwd_tape`` (records only) or ``rev``. Its
        dispatcher compiles it for the callers' forward and reverse passes; a public
        transform splices it into its own body instead (``ir.inlining``)."""
        ctx, rev = self.analysis()
        names = ("adjit_tape",) + self.arg_names
        if part == "rev":
            self._done("rev")
            blocks = copy_blocks(rev.blocks)  # Numba's passes edit the blocks they compile
            after_rewrite(blocks, f"reverse pass of {self.py_func.__qualname__}", names)
            return blocks
        blocks = build_forward(ctx, rev)
        if part == "fwd_tape":
            blocks = discard_result(blocks)
        after_rewrite(blocks, f"{'tape-only ' if part == 'fwd_tape' else ''}forward pass "
                      f"of {self.py_func.__qualname__}", names)
        self._done(part)
        return blocks

    def show(self):
        """Text of the primal, forward-pass and reverse-pass IR."""
        from ...ir.printing import format_blocks, format_function
        ctx, rev = self.analysis()
        return "\n".join([
            format_function(self.typed.func_ir, f"primal typed IR of {self.py_func.__qualname__}"),
            format_blocks(build_forward(ctx, rev), "forward pass"),
            format_blocks(rev.blocks, "reverse pass"),
        ])


def _refuse_nested_reverse(typed):
    """A call of one of adjit's reverse-mode transforms (``adjit.grad(g)(x)``) inside a
    function differentiated in reverse mode: refused by the name the user wrote, where
    the analysis would misread the generated function as a helper that writes its
    arguments."""
    for block in typed.func_ir.blocks.values():
        for stmt in block.find_insts(ir.Assign):
            value = stmt.value
            if not (isinstance(value, ir.Expr) and value.op == "call"):
                continue
            callee = getattr(typed.typeof(value.func.name), "dispatcher", None)
            spec = getattr(callee, "adjit_spec", None)
            if spec is not None and spec[0] != "jvp":
                name = f"adjit.{spec[0]}({py_function_of(spec[1]).__name__})"
                raise UnsupportedError(
                    f"'{name}' inside a function differentiated in reverse mode",
                    typed.name, stmt.loc,
                    "reverse mode over reverse mode is not supported: differentiate this "
                    "function with adjit.jvp (forward over reverse), or take second "
                    "derivatives with adjit.hvp or adjit.hessian of the inner function")


def _any_layout(typ):
    """A type up to array layouts and read-only flags (a row of a module-level array is
    read-only where the primal reads it, and may be typed writable where a pass rebuilds
    it); a ``*args`` tuple as the plain tuple a call packs."""
    if isinstance(typ, types.Array):
        return typ.copy(layout="A", readonly=False)
    if isinstance(typ, types.BaseTuple):
        return ("tuple",) + tuple(_any_layout(types.unliteral(t)) for t in typ.types)
    return typ


def derive(func, argtypes, active_args):
    """The cached ``ReverseProgram`` of ``func`` for ``argtypes`` and active arguments."""
    key = (py_function_of(func), tuple(argtypes), tuple(sorted(active_args)))
    with _lock:
        program = _programs.get(key)
        if program is None:
            program = _programs[key] = ReverseProgram(func, argtypes, active_args)
        return program


def derive_call(dispatcher, argtypes, active_args, loc):
    """The derived rule of an ``@njit`` callee, shared by every call site."""
    return derive(dispatcher, argtypes, active_args)


def program_count():
    """How many derived programs exist (tests check a shared callee is derived once)."""
    return len(_programs)
