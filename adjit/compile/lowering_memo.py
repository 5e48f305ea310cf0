"""Remember whether a Numba lowering implementation takes a ``loc`` argument.

Numba wraps the implementation it lowers each call, operator and intrinsic with
(``numba.core.base._wrap_missing_loc``), and asks every time, through
``inspect.signature``, whether the implementation accepts ``loc``. Derivative code is
mostly such calls: ``large_single_block``'s gradient asked 4,400 times. The answer
depends only on the implementation function, so it is remembered per function (weakly:
a function that goes away takes its entry with it). The patch is Numba-wide, and changes
no answer Numba gives.
"""
import weakref

from numba.core import base

_numba_has_loc = base._has_loc
_answers = weakref.WeakKeyDictionary()


def _remembered_has_loc(fn):
    """``numba.core.base._has_loc``, remembered per implementation function."""
    try:
        return _answers[fn]
    except (KeyError, TypeError):  # not asked yet, or not weakly referable
        pass
    answer = _numba_has_loc(fn)
    try:
        _answers[fn] = answer
    except TypeError:
        pass
    return answer


base._has_loc = _remembered_has_loc
