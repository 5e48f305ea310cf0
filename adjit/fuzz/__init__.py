"""adjit's random-program fuzzer: ``python -m adjit.fuzz --n N --seed S``.

It generates small numba-compatible programs (branches, value-dependent loops,
break/continue, ``@njit`` helpers with keyword arguments, tuples, array reads and writes,
local and whole-array operations, the math rules) and checks ``adjit.grad``, ``adjit.jvp``
and ``adjit.hvp`` on each against central finite differences, plus determinism, the tape
depth, and that arguments are left as they must be. See ``adjit/fuzz/check.py`` for the
outcomes and ``python -m adjit.fuzz --help`` for the options.

Modules: ``exprs`` (expressions), ``programs`` (statements), ``assemble`` (helpers, ``f``,
inputs), ``check`` (finite-difference checks), ``runner`` (workers), ``report``.
"""
from .assemble import generate
from .check import MODES, Outcome, check_program
from .runner import run

__all__ = ["generate", "check_program", "run", "MODES", "Outcome"]
