"""Counting what the fusion passes made of a function, and what its derivatives
allocate (shared by the fused-sum and fused-map tests)."""
from numba import typeof
from numba.core import ir

from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture


def count_fused(helper_name, f, *args):
    """How many calls of the fused-loop helper ``helper_name`` (``fused_sum``,
    ``fused_map``) the normalised IR of ``f`` at ``args`` loads."""
    typed = normalise(capture(f, tuple(typeof(a) for a in args)))
    return sum(1 for b in typed.func_ir.blocks.values() for s in b.body
               if isinstance(s, ir.Assign) and isinstance(s.value, ir.Global)
               and getattr(getattr(s.value.value, "py_func", None), "__name__", "")
               == helper_name)


def allocations_per_call(fn, *args):
    """Heap allocations per call of the compiled loop ``fn(*args, n)``, from the
    difference of 60 and 10 calls (after one call that compiles it)."""
    from numba.core.runtime import _nrt_python, rtsys
    fn(*args, 1)

    def allocations(n):
        before = rtsys.get_allocation_stats().alloc
        fn(*args, n)
        return rtsys.get_allocation_stats().alloc - before
    _nrt_python.memsys_enable_stats()
    try:
        few, many = allocations(10), allocations(60)
    finally:
        _nrt_python.memsys_disable_stats()
    return (many - few) / 50
