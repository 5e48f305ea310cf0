"""LLVM code-generator options set while adjit compiles a derivative, and only then.

A reverse sweep of straight-line code is one long basic block holding a NaN-guarded
select per product (``rules.core.adjoint_product_chain``), which LLVM's CodeGenPrepare
turns into a never-taken branch each. After every such split it starts its scan again
from the top of the function, unless the function counts as "huge" (more basic blocks
than ``-cgpp-huge-func``, 10,000 by default): then it starts again from the head of the
block it split. The code it produces is the same transformation either way; the time is
not: ``large_single_block``'s first hvp spent 4.4 s in CodeGenPrepare, 0.7 s with every
function counted as huge, and its first gradient 1.1 s against 0.2 s. Runtime measured
the same on every suite row.

The option is global to the process, so it is set only while one of adjit's pipelines
runs (``AdjitCodegenOptions``) and put back to LLVM's default afterwards: the user's own
``@njit`` functions compile as they would without adjit.
"""
import threading
from contextlib import contextmanager

import llvmlite.binding as ll

#: (option, adjit's value, LLVM's default)
OPTIONS = (("cgpp-huge-func", "0", "10000"),)

_lock = threading.Lock()
_depth = 0


@contextmanager
def adjit_codegen_options():
    """Within this block adjit's LLVM options hold; nested blocks (a derivative compiled
    while its caller compiles) keep them until the outermost one ends."""
    global _depth
    with _lock:
        if _depth == 0:
            for name, value, _ in OPTIONS:
                ll.set_option("adjit", f"-{name}={value}")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for name, _, default in OPTIONS:
                    ll.set_option("adjit", f"-{name}={default}")


class AdjitCodegenOptions:
    """Mixin for a Numba ``CompilerBase``: its passes, machine-code generation
    included, run under ``adjit_codegen_options``."""

    def _compile_core(self):
        with adjit_codegen_options():
            return super()._compile_core()
