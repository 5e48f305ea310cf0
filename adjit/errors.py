"""Exceptions raised by adjit.

Every error a user can trigger names what went wrong: the construct, the function and the
source line for unsupported code; the offending argument for bad API usage.
"""
import re


class AdjitError(Exception):
    """Base class of every adjit error."""


class UnsupportedError(AdjitError, NotImplementedError):
    """A construct has no differentiation rule. Raised instead of returning a wrong answer."""

    def __init__(self, construct, func_name="<unknown>", loc=None, detail=""):
        self.construct = construct
        self.func_name = func_name
        self.loc = loc
        where = ""
        if loc is not None:
            where = f" at {getattr(loc, 'filename', '?')}:{getattr(loc, 'line', '?')}"
            line = _source_line(loc)
            if line:
                where += f"\n    {line}"
        shown = f"'{func_name}'"
        inner = _enclosing_def(loc) if loc is not None else None
        if inner and inner != func_name.rsplit(".", 1)[-1]:
            shown += f" (in '{inner}', inlined into it)"
        msg = f"adjit cannot differentiate {construct} in function {shown}{where}"
        if detail:
            msg += f"\n  ({detail})"
        super().__init__(msg)


class ArgumentError(AdjitError, ValueError):
    """A transform was called with bad arguments (argnums, output kind, tangent shape...).

    Raised from compiled code with several arguments (a message and the shapes it
    compares), it reads as one sentence."""

    def __str__(self):
        return " ".join(str(a) for a in self.args)


class Uncacheable(AdjitError):
    """A function reads a value whose content adjit cannot fingerprint, so its derivatives
    cannot be cached on disk (they still work, compiled in each process)."""


class CacheWarning(UserWarning):
    """The disk cache could not be used for one derivative (it still works, uncached)."""


def first_reason(error):
    """The first line of a Numba error that says what failed (not where)."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(error).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("Failed in", "During:"))]
    return (lines[0] if lines else "a typing error")[:300]


def numba_location(error):
    """``file:line (source)`` of the first place a Numba error points at, or ''. Numba
    quotes the function's first line, then the failing one above a ``^`` marker."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    match = re.search(r'File "([^"]+)", line (\d+):\n((?:.*\n)*?)\s*\^', text)
    if match is None:
        return ""
    path, line, quoted = match.groups()
    lines = [ln.strip() for ln in quoted.splitlines()
             if ln.strip() and not ln.strip().startswith("<source")]
    return f"{path}:{line}" + (f" ({lines[-1]})" if lines else "")


def primal_refusal(name, argtypes, error):
    """The ``ArgumentError`` for a user's function Numba cannot compile for these argument
    types: Numba would refuse the primal too, so it is said in the user's terms, not as
    an error from inside adjit."""
    shown = ", ".join(str(t) for t in argtypes)
    where = numba_location(error)
    return ArgumentError(
        f"adjit: Numba cannot compile '{name}' for arguments of types ({shown}), so there "
        f"is nothing to differentiate. Numba says: {first_reason(error).rstrip(':')}"
        + (f", at {where}" if where else "") + f". Calling '{name}' itself with these "
        "arguments shows Numba's whole message: either an argument has a type the function "
        "does not accept, or the function uses something Numba does not support")


def _enclosing_def(loc):
    """The name of the ``def`` whose body holds source line ``loc``, or None: code of an
    ``inline='always'`` helper keeps the helper's lines inside its caller."""
    try:
        lines = loc.get_lines()
    except Exception:
        return None
    if not lines or not loc.line or loc.line > len(lines):
        return None
    here = lines[loc.line - 1]
    if re.match(r"\s*def\s", here):  # the def line itself: no helper's body
        return None
    indent = len(here) - len(here.lstrip())
    for text in reversed(lines[:loc.line]):
        stripped = text.lstrip()
        found = re.match(r"def\s+(\w+)", stripped)
        if found and len(text) - len(stripped) < indent:
            return found.group(1)
    return None


def _source_line(loc):
    """The stripped source text of a numba ``ir.Loc``, or '' when unavailable."""
    try:
        lines = loc.get_lines()
        return lines[loc.line - 1].strip() if lines and loc.line else ""
    except Exception:
        return ""
