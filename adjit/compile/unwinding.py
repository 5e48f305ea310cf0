"""Lowering of a public transform whose derivative passes are inlined in its own IR.

A transform (``grad(f)``, ``jvp(f)``, ...) holds its forward and reverse passes in its
own body, so Numba compiles one function per derivative instead of three. The passes
push and pop tape records, and an exception that leaves them midway (perhaps to be caught
in ``@njit`` code that calls the transform again) must not leave records behind. So the
transform's code is lowered under a private name, and its public symbol only calls that
code and, on an error status, sets the tape back to the depth it had on entry
(``runtime.guard.emit_unwinding_entry``). LLVM inlines the one into the other. Every
public transform is lowered this way, ``hvp(f)`` too, whose JVP program of ``grad(f)``'s
body pushes and pops records.
"""
import copy

from llvmlite import ir as llvm_ir
from numba.core import lowering
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import NativeLowering

from ..runtime.guard import emit_unwinding_entry
from .inline_library import ModulePassesOnlyLibrary


class UnwindingLower(lowering.Lower):
    """Numba's lowering, with the body in a private function behind an unwinding entry."""

    def setup_function(self, fndesc):
        """Declare the public symbol and fill it with the unwinding entry; lower the
        function body into a private twin (``self.function``), always inlined."""
        public = self.context.declare_function(self.module, fndesc)
        private = copy.copy(fndesc)
        private.mangled_name = fndesc.mangled_name + "_unwound"
        body = self.context.declare_function(self.module, private)
        body.linkage = "internal"
        body.attributes.add("alwaysinline")
        emit_unwinding_entry(self.context, public, body)
        self.function = body
        self.entry_block = body.append_basic_block("entry")
        self.builder = llvm_ir.IRBuilder(self.entry_block)
        self.call_helper = self.call_conv.init_call_helper(self.builder)


@register_pass(mutates_CFG=True, analysis_only=False)
class UnwindingNativeLowering(NativeLowering):
    """``NativeLowering`` with ``UnwindingLower``: for public transforms."""

    _name = "adjit_unwinding_native_lowering"

    @property
    def lowering_class(self):
        return UnwindingLower

    def run_pass(self, state):
        """Lower into a ``ModulePassesOnlyLibrary`` (the transform's own code library)."""
        if state.library is None:
            state.library = ModulePassesOnlyLibrary(state.targetctx.codegen(),
                                                    state.func_id.func_qualname)
            state.library.enable_object_caching()
        return super().run_pass(state)
