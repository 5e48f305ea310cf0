"""Runtime switches, read from the environment once at import.

- ``ADJIT_CHECKS=1``   run IR invariant checks after every rewrite (the tests turn this on).
- ``ADJIT_DUMP_IR=1``  print the IR after every normalisation and transform pass.
- ``ADJIT_TIMING=1``   print where each derivative's compile time went (capture, transform,
  Numba and LLVM per generated function) to stderr; see ``compile/timing.py``.
- ``ADJIT_KERNEL_CACHE=0`` compile adjit's rule kernels in every process instead of
  keeping them on disk (``compile/kernel_cache.py``).
- ``ADJIT_FUSE_SUMS=0`` differentiate elementwise expressions (under ``np.sum`` or kept as
  arrays) through the array rules, one operation at a time, instead of as one fused
  loop (``capture/fused_sums.py``): to compare the two.
"""
import os

CHECKS = os.environ.get("ADJIT_CHECKS", "0") not in ("", "0")
DUMP_IR = os.environ.get("ADJIT_DUMP_IR", "0") not in ("", "0")
TIMING = os.environ.get("ADJIT_TIMING", "0") not in ("", "0")
KERNEL_CACHE = os.environ.get("ADJIT_KERNEL_CACHE", "1") not in ("", "0")
FUSE_SUMS = os.environ.get("ADJIT_FUSE_SUMS", "1") not in ("", "0")
