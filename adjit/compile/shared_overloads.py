"""One compile of each Numba overload per signature, shared by all of adjit's pipelines.

Typing ``np.diag(L)`` compiles Numba's implementation of ``np.diag`` for those argument
types, and Numba keeps that compile per signature *and per compile flags*: the flags of
the function being compiled, which it pushes on its ``ConfigStack``. adjit's capture of
the primal and its generated code ran under different flags (the primal's own options;
``fastmath={"nsz"}`` and no wrappers), so every NumPy and LAPACK overload the primal uses
was compiled twice in a process: once to capture the primal, once for the derivative,
which calls the same functions in its forward pass. ``gp_lml``'s first gradient compiled
``np.diag``, ``np.linalg.cholesky`` and ``np.eye`` twice each.

Under ``SharedOverloadCompiles`` a pipeline pushes canonical flags instead: the flags a
plain ``@numba.njit`` function pushes, with the primal's error model and bounds checking
(the options that change what a callee computes). So the overloads are also shared with
the user's own ``@njit`` primal, which a user (and ``check_grad``) usually compiles in
the same process: ``sequences_2d`` of the tests compiled 79 NumPy overloads for its
primal, then the same 79 again for its gradient. The callees compile without adjit's
``nsz`` fast-math, as the primal's do, so the forward pass computes what the primal
computes. The function's own flags, which its passes read (wrappers and ``nsz`` among
them), are unchanged.

The canonical set is one shared, read-only object per error model and bounds checking.
Numba keys its overload cache on ``(context, argument types, keywords, flags)``, and a
``Flags`` object hashes by its option names only, so every lookup with a fresh copy
compared all the options of both sets (14 s of a 317 s profile of 27 tests). An
identical object compares equal at once.
"""
import functools
from types import MappingProxyType

from numba.core.compiler import Flags
from numba.core.registry import cpu_target

#: the options a canonical flag set carries over from the function's flags
_SEMANTIC = ("error_model", "boundscheck")


def _njit_flags():
    """The flags Numba compiles a plain ``@njit`` function with, and pushes for its
    callees (the dispatcher parses its options ``{"nopython": True}`` the same way)."""
    flags = Flags()
    cpu_target.options.parse_as_flags(flags, {"nopython": True})
    return flags


_NJIT_FLAGS = _njit_flags()


class _CanonicalOnCopy(Flags):
    """The function's flags; their copy (what Numba pushes for the compile) is the
    canonical set."""

    __slots__ = ()

    def copy(self):
        return _canonical(tuple((name, getattr(self, name)) for name in _SEMANTIC
                                if self.is_set(name)))


@functools.lru_cache(maxsize=None)
def _canonical(semantic):
    """The one canonical flag set with the ``semantic`` options (name, value) set;
    read-only, as it is shared (an option's setter raises ``TypeError``)."""
    canonical = _NJIT_FLAGS.copy()
    for name, value in semantic:
        setattr(canonical, name, value)
    canonical._values = MappingProxyType(dict(canonical._values))
    return canonical


class SharedOverloadCompiles:
    """Mixin for a Numba ``CompilerBase``: its compile pushes canonical flags, so the
    overloads it types are compiled once for every adjit pipeline."""

    def _compile_core(self):
        self.state.flags = _CanonicalOnCopy(self.state.flags)
        return super()._compile_core()
