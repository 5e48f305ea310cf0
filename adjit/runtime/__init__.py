"""adjit's native tape runtime: per-thread LIFO tapes of 8-byte words.

Numba intrinsics (usable in nopython code, inlined into it):
``tape_acquire``, ``tape_push``, ``pop_record(record_type)``, ``tape_depth``,
``tape_set_depth``. Python helpers: ``current_depth``, ``truncate_current``,
``runtime_stats``. Importing this package JIT-compiles only the small state module
(native/tape_state.ll); the fast path is built at the first intrinsic codegen.
"""

from adjit.runtime.loader import STATE as _STATE
from adjit.runtime.tape import (
    pop_record, record_words, tape_acquire, tape_depth, tape_push, tape_put, tape_reserve,
    tape_set_depth,
)

__all__ = [
    "tape_acquire", "tape_push", "pop_record", "tape_depth", "tape_set_depth",
    "record_words", "tape_reserve", "tape_put", "current_depth", "truncate_current", "runtime_stats",
]


def current_depth():
    """Words on the calling thread's tape (0 if the thread has no tape yet)."""
    return int(_STATE.current_depth())


def truncate_current(depth=0):
    """Drop the calling thread's tape back to ``depth`` words, e.g. after an exception
    escaped generated code mid-sweep and left records behind."""
    if _STATE.truncate_current(int(depth)) != 0:
        raise ValueError("cannot truncate tape of depth %d to %d" % (current_depth(), depth))


def runtime_stats():
    """Counters for tests and tuning.

    ``growths``: tape reallocations over all threads (atomic counter); ``tapes``: tapes
    created; ``tapes_freed``: tapes freed at thread exit; ``capacity_words`` and
    ``depth_words``: the calling thread's tape (0 without one); ``initial_words``.
    """
    return _STATE.stats()
