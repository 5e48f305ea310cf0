"""The rule table and the helpers that make most rules one line.

A scalar primitive ``y = p(a0, a1, ...)`` is described by its partial derivatives
``dy/da_k``. That single shape serves both modes: reverse mode emits
``a_k_bar += g * d_k(...)`` and forward mode ``dy = sum_k d_k(...) * da_k``.

A partial is one of
- ``ONE`` / ``MINUS_ONE``: the derivative is the constant 1 / -1 (no primal values needed);
- ``arg(k)``: the derivative is the primal argument ``a_k`` (``mul``);
- ``ZERO``: that argument does not influence the result differentiably;
- a Python function of the primal arguments, optionally led by ``ans`` (the primal
  result): ``lambda x: math.cos(x)`` or ``lambda ans, x: ans``. It is compiled with
  ``numba.njit`` on first use and called from the generated code, where LLVM inlines it.
  Only the parameters it actually reads are saved on the tape.

``nondiff(*prims)`` declares primitives with no derivative (comparisons, ``len``, ...):
the transform never guesses, so an undeclared primitive raises ``UnsupportedError``.
"""
import dis
import threading
from dataclasses import dataclass

import numba


class _Const:
    """A partial derivative that is a constant (1, -1) or absent (0)."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return self.name


ONE = _Const("ONE", 1.0)
MINUS_ONE = _Const("MINUS_ONE", -1.0)
ZERO = _Const("ZERO", 0.0)


@dataclass(frozen=True)
class ArgPartial:
    """The partial derivative equals primal argument ``index`` (e.g. d(a*b)/da = b)."""

    index: int


def arg(index):
    return ArgPartial(index)


class FuncPartial:
    """A partial derivative computed by a small numba-compiled function."""

    def __init__(self, func):
        self.func = func
        code = func.__code__
        params = code.co_varnames[:code.co_argcount]
        self.takes_ans = bool(params) and params[0] == "ans"
        self.params = params
        read = {ins.argval for ins in dis.get_instructions(func)
                if ins.opname.startswith("LOAD_FAST") or ins.opname == "LOAD_DEREF"}
        self.reads_ans = self.takes_ans and "ans" in read
        offset = 1 if self.takes_ans else 0
        # which primal arguments the partial reads: only those are saved on the tape
        self.reads_args = tuple(i for i, p in enumerate(params[offset:]) if p in read)
        self._jit = None
        self._lock = threading.Lock()

    @property
    def jit(self):
        """The numba dispatcher of the partial, created on first use."""
        with self._lock:
            if self._jit is None:
                self._jit = numba.njit(self.func)
            return self._jit

    def __repr__(self):
        return f"FuncPartial({self.func.__name__})"


@dataclass
class Rule:
    """Partial derivatives of a scalar primitive, one per positional argument."""

    name: str
    partials: tuple

    def partial(self, index):
        return self.partials[index] if index < len(self.partials) else ZERO


_RULES = {}
_NONDIFF = set()


def _as_partial(p):
    if p is None:
        return ZERO
    if isinstance(p, (_Const, ArgPartial, FuncPartial)):
        return p
    if callable(p):
        return FuncPartial(p)
    raise TypeError(f"not a partial derivative: {p!r}")


def defderiv(prim, *partials, name=None):
    """Register the partial derivatives of scalar primitive ``prim``, one per argument."""
    _RULES[prim] = Rule(name or getattr(prim, "__name__", str(prim)),
                        tuple(_as_partial(p) for p in partials))
    _NONDIFF.discard(prim)


def defderivs(prims, *partials):
    """The same partials for several spellings of one primitive (``math.sin``, ``np.sin``)."""
    for prim in prims:
        defderiv(prim, *partials)


def nondiff(*prims):
    """Declare primitives with no derivative: their outputs carry no adjoint."""
    for prim in prims:
        _NONDIFF.add(prim)
        _RULES.pop(prim, None)


_LINEAR = {}


def deflinear(prim, *positions):
    """Declare ``prim`` linear, jointly, in the arguments at ``positions`` (and independent
    of the others, which must be integers): its tangent is the same call on the tangents
    of those arguments. Also right for helpers that add into an array argument."""
    _LINEAR[prim] = tuple(positions)


def lookup_linear(prim):
    """The linear argument positions of ``prim``, or None."""
    try:
        return _LINEAR.get(prim)
    except TypeError:
        return None


def lookup(prim):
    """The rule of ``prim``, ``NONDIFF`` if declared non-differentiable, else ``None``."""
    try:
        if prim in _NONDIFF:
            return NONDIFF
        return _RULES.get(prim)
    except TypeError:  # unhashable callee
        return None


NONDIFF = Rule("nondiff", ())
