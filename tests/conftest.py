"""Shared test setup: make the ``corpus`` package (tests/corpus) importable."""
import os
import sys

# The tests check numbers, not speed, and nearly all their time is LLVM optimising the
# derivatives they compile: LLVM's -O1 (NUMBA_OPT=1) compiles about three times faster
# than Numba's default -O3 and computes the same values. Set before Numba is imported.
# The examples (tests/test_examples.py) run at -O3, as users run them; the benchmarks
# always do.
os.environ.setdefault("NUMBA_OPT", "1")

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

# IR invariant checks run after every rewrite in the tests (ADJIT_CHECKS=1 does the same
# for subprocesses such as the examples).
import adjit.config  # noqa: E402

adjit.config.CHECKS = True
