"""Runtime switches, read from the environment once at import.

- ``ADJIT_CHECKS=1``   run IR invariant checks after every rewrite (the tests turn this on).
- ``ADJIT_DUMP_IR=1``  print the IR after every normalisation and transform pass.
- ``ADJIT_TIMING=1``   print where each derivative's compile time went (capture, transform,
  Numba and LLVM per generated function) to stderr; see ``compile/timing.py``.
- ``ADJIT_KERNEL_CACHE=0`` compile adjit's rule kernels in every process instead of
  keeping them on disk (``compile/kernel_cache.py``).
"""
import os

CHECKS = os.environ.get("ADJIT_CHECKS", "0") not in ("", "0")
DUMP_IR = os.environ.get("ADJIT_DUMP_IR", "0") not in ("", "0")
TIMING = os.environ.get("ADJIT_TIMING", "0") not in ("", "0")
KERNEL_CACHE = os.environ.get("ADJIT_KERNEL_CACHE", "1") not in ("", "0")
