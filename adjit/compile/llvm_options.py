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


#: a function with more basic blocks than this is code-generated without machine sinking:
#: the suite's transforms have 18 to 1,104, ``large_single_block``'s hvp 3,210
SINKING_BLOCK_LIMIT = 2000


def most_blocks(module):
    """The number of basic blocks of the module's largest function."""
    return max((sum(1 for _ in f.blocks) for f in module.functions
                if not f.is_declaration), default=0)


@contextmanager
def machine_sinking_for(module):
    """Code generation of ``module``, without LLVM's machine sinking if one of its
    functions has more than ``SINKING_BLOCK_LIMIT`` basic blocks.

    Machine sinking moves an instruction into the one successor block that uses it; its
    time grows faster than the number of blocks. Forward mode over a long straight-line
    reverse sweep emits each guarded product as a branch
    (``ForwardContext.chain_as_branch``): ``large_single_block``'s hvp has 3,210 blocks,
    and sinking took 4 of its 10 s of code generation, for code no faster (its hvp
    ran at 6.2 primal calls without, 6.9 with). Its gradient keeps one block of selects,
    which the code generator splits late; sinking makes that one faster (3.0 primal
    calls, 3.65 without), so it is kept below the limit."""
    if most_blocks(module) <= SINKING_BLOCK_LIMIT:
        yield
        return
    with _lock:
        ll.set_option("adjit", "-disable-machine-sink=1")
    try:
        yield
    finally:
        with _lock:
            ll.set_option("adjit", "-disable-machine-sink=0")
