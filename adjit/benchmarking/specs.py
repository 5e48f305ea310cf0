"""Argument specs for user benchmarks: ``x=randn(1000)``, ``n=int(10)``, ``a=float(0.5)``.

Specs are parsed with a small grammar (no ``eval``)::

    SPEC  := NAME '=' KIND '(' [NUMBER {',' NUMBER}] ')'
    KIND  := randn | rand | zeros | ones | int | float

``randn``/``rand``/``zeros``/``ones`` take a shape (empty for a scalar) and build float64
values; random kinds are redrawn for every repeat. ``int``/``float`` take one constant.
"""
import re
from dataclasses import dataclass

import numpy as np

ARRAY_KINDS = ("randn", "rand", "zeros", "ones")
CONST_KINDS = ("int", "float")
_SPEC_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_INT_RE = re.compile(r"^[+-]?\d+$")


class SpecError(ValueError):
    """A malformed ``NAME=SPEC`` argument."""


@dataclass(frozen=True)
class ArgSpec:
    """One parsed argument spec: a name, a kind and its numeric parameters."""

    name: str
    kind: str
    params: tuple

    @property
    def differentiable(self):
        """True for float scalars and float arrays, which adjit differentiates."""
        return self.kind != "int"

    @property
    def random(self):
        """True when the value is redrawn for every repeat."""
        return self.kind in ("randn", "rand")

    def make(self, rng):
        """Build one value of this argument from the numpy Generator ``rng``."""
        if self.kind == "int":
            return int(self.params[0])
        if self.kind == "float":
            return float(self.params[0])
        shape = tuple(int(p) for p in self.params)
        if self.kind == "randn":
            v = rng.standard_normal(shape)
        elif self.kind == "rand":
            v = rng.random(shape)
        elif self.kind == "zeros":
            v = np.zeros(shape)
        else:
            v = np.ones(shape)
        return float(v) if shape == () else v

    def __str__(self):
        return f"{self.name}={self.kind}({', '.join(str(p) for p in self.params)})"


def _number(text, spec):
    """Parse one int or float literal, raising SpecError on anything else."""
    text = text.strip()
    if _INT_RE.match(text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise SpecError(f"bad number {text!r} in argument spec {spec!r}") from None
    return value


def parse_spec(text):
    """Parse ``NAME=KIND(ARGS)`` into an :class:`ArgSpec`; raise SpecError if malformed."""
    m = _SPEC_RE.match(text)
    if not m:
        raise SpecError(f"argument spec {text!r} is not of the form NAME=KIND(ARGS), "
                        f"e.g. x=randn(1000), n=int(10), a=float(0.5)")
    name, kind, inner = m.group(1), m.group(2), m.group(3).strip()
    params = tuple(_number(p, text) for p in inner.split(",")) if inner else ()
    if kind in ARRAY_KINDS:
        for p in params:
            if not isinstance(p, int) or p < 0:
                raise SpecError(f"shape of {text!r} must be non-negative integers")
    elif kind == "int":
        if len(params) != 1 or not isinstance(params[0], int):
            raise SpecError(f"{text!r}: int() takes exactly one integer")
    elif kind == "float":
        if len(params) != 1:
            raise SpecError(f"{text!r}: float() takes exactly one number")
        params = (float(params[0]),)
    else:
        raise SpecError(f"unknown kind {kind!r} in {text!r}; expected one of "
                        f"{', '.join(ARRAY_KINDS + CONST_KINDS)}")
    return ArgSpec(name, kind, params)


def order_specs(specs, param_names, func_name="function"):
    """Order parsed specs by the function's parameter names; every parameter needs one."""
    by_name = {}
    for s in specs:
        if s.name in by_name:
            raise SpecError(f"argument {s.name!r} given twice")
        by_name[s.name] = s
    unknown = [n for n in by_name if n not in param_names]
    if unknown:
        raise SpecError(f"{func_name} has no parameter(s) {', '.join(unknown)}; "
                        f"its parameters are {', '.join(param_names)}")
    missing = [n for n in param_names if n not in by_name]
    if missing:
        raise SpecError(f"no --arg given for parameter(s) {', '.join(missing)} of {func_name}")
    return [by_name[n] for n in param_names]
