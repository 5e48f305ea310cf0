"""One compile of each Numba overload per signature, shared by all of adjit's pipelines.

Typing ``np.diag(L)`` compiles Numba's implementation of ``np.diag`` for those argument
types, and Numba keeps that compile per signature *and per compile flags*: the flags of
the function being compiled, which it pushes on its ``ConfigStack``. adjit's capture of
the primal and its generated code ran under different flags (the primal's own options;
``fastmath={"nsz"}`` and no wrappers), so every NumPy and LAPACK overload the primal uses
was compiled twice in a process: once to capture the primal, once for the derivative,
which calls the same functions in its forward pass. ``gp_lml``'s first gradient compiled
``np.diag``, ``np.linalg.cholesky`` and ``np.eye`` twice each.

Under ``SharedOverloadCompiles`` a pipeline pushes canonical flags instead: only the
options that decide how a callee compiles and what it computes (NRT, ``nsz`` fast-math,
the primal's error model and bounds checking). The function's own flags, which its passes
read (wrappers among them), are unchanged.
"""
from numba.core.compiler import Flags
from numba.core.cpu import FastMathOptions

#: the options a canonical flag set carries over from the function's flags
_SEMANTIC = ("error_model", "boundscheck")


class _CanonicalOnCopy(Flags):
    """The function's flags; their copy (what Numba pushes for the compile) is the
    canonical set."""

    __slots__ = ()

    def copy(self):
        canonical = Flags()
        canonical.nrt = True
        canonical.fastmath = FastMathOptions({"nsz"})
        for name in _SEMANTIC:
            if self.is_set(name):
                setattr(canonical, name, getattr(self, name))
        return canonical


class SharedOverloadCompiles:
    """Mixin for a Numba ``CompilerBase``: its compile pushes canonical flags, so the
    overloads it types are compiled once for every adjit pipeline."""

    def _compile_core(self):
        self.state.flags = _CanonicalOnCopy(self.state.flags)
        return super()._compile_core()
