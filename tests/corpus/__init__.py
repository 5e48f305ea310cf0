"""A corpus of small Numba programs, one IR feature per function.

Each module is named after the IR feature its functions exercise and exports
``CASES = [Case(fn, args, argnums), ...]``. Inputs lie inside each function's smooth
domain (away from branch switches, kinks and trip-count changes), so central finite
differences are valid there.
"""
import importlib
from dataclasses import dataclass
from typing import Any, Callable

MODULES = (
    "straight_line",
    "branches",
    "early_return",
    "for_range",
    "while_loops",
    "break_continue",
    "nested_loops",
    "value_dependent_loops",
    "multi_phi",
    "calls",
    "array_reads",
    "array_writes",
    "tuples",
    "int_args",
    "math_funcs",
    "min_max_abs",
    "float32",
    "conversions",
    "lists",
)


@dataclass(frozen=True)
class Case:
    """One corpus program: differentiate ``fn(*args)`` with respect to ``args[argnums]``."""

    fn: Callable
    args: tuple
    argnums: Any = 0
    id: str = ""

    def __post_init__(self):
        if not self.id:
            name = getattr(getattr(self.fn, "py_func", self.fn), "__name__", "case")
            object.__setattr__(self, "id", name)


def load(module_name):
    """The ``CASES`` list of one corpus module."""
    return importlib.import_module(f"{__name__}.{module_name}").CASES


def all_cases():
    """``[(module_name, case), ...]`` for every corpus module, in a stable order."""
    out = []
    for m in MODULES:
        out.extend((m, c) for c in load(m))
    return out
