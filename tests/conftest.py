"""Shared test setup: make the ``corpus`` package (tests/corpus) importable."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

# IR invariant checks run after every rewrite in the tests (ADJIT_CHECKS=1 does the same
# for subprocesses such as the examples).
import adjit.config  # noqa: E402

adjit.config.CHECKS = True
