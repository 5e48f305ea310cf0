"""Checking one generated program: adjit's grad, jvp and hvp against finite differences.

Each mode ends in one outcome: ``ok``, ``wrong`` (a number, determinism, the tape depth or
the arguments after the call differ from what they must be), ``crash`` (any exception other
than ``adjit.UnsupportedError`` / ``adjit.ArgumentError``), ``unsupported``, or
``nondifferentiable`` (central differences at two step sizes disagree: a branch flips or a
kink lies within the step, so there is nothing to compare against). A program Numba itself
cannot compile is ``invalid`` (a generator bug, not an adjit one).
"""
import importlib.util
import math
import os
import re
import struct
import sys
import time
import traceback
from dataclasses import asdict, dataclass

import numpy as np

from .assemble import program_rng

MODES = ("grad", "jvp", "hvp")
STATUSES = ("ok", "wrong", "crash", "unsupported", "nondifferentiable", "invalid")
REL_STEP = float(np.finfo(np.float64).eps) ** (1.0 / 3.0)
RTOL, ATOL, NOISE = 1e-5, 1e-7, 32.0
EPS = float(np.finfo(np.float64).eps)


@dataclass
class Outcome:
    """The result of one mode on one program."""
    status: str
    detail: str = ""       # what disagreed, or the traceback of a crash
    message: str = ""      # normalised error message (unsupported / crash), for counting
    expected: str = ""
    got: str = ""
    seconds: float = 0.0

    def to_dict(self):
        """A JSON-ready dict (the worker protocol and the report use it)."""
        return asdict(self)


class _Failed(Exception):
    """Raised inside a mode check to end it with an outcome."""

    def __init__(self, outcome):
        """Carry the outcome to the mode's driver."""
        super().__init__(outcome.status)
        self.outcome = outcome


def default_transforms():
    """adjit's own transforms; tests swap one for a deliberately wrong one."""
    import adjit
    return {"grad": lambda f, argnums: adjit.grad(f, argnums=argnums),
            "jvp": lambda f: adjit.jvp(f),
            "hvp": lambda f, argnums: adjit.hvp(f, argnums=argnums)}


_loaded = [0]


def load(program, directory):
    """Write the program to a module file and import it, so Numba can read source lines."""
    _loaded[0] += 1
    name = f"adjit_fuzz_s{program.seed}_{program.kind}_{program.index}_{_loaded[0]}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as fh:
        fh.write(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def normalise(msg):
    """An error message with names, paths, line numbers and numbers stripped, for counting."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(msg)).splitlines()
             if ln.strip()]
    if not lines:
        return ""
    s = lines[0]
    if len(lines) > 1 and lines[-1].startswith("(") and s.startswith("adjit cannot"):
        s += " " + lines[-1]
    s = re.sub(r" at /?\S+:\d+", "", s)
    s = re.sub(r"in function '[^']*'", "in function <f>", s)
    s = re.sub(r"\b(v|p|q|t|c|arr|e|g|i|k|w|h)\d+\b", r"\1N", s)
    s = re.sub(r"\badjit_fuzz_\w+", "<module>", s)
    s = re.sub(r"\b\d+\b", "N", s)
    s = re.sub(r"0x[0-9a-fA-F]+", "0x..", s)
    return s[:300]


def _copy(args):
    """Fresh copies of the arrays among ``args`` (programs may write into arguments)."""
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _bits(x):
    """A bit-exact fingerprint of a derivative result (floats, arrays, tuples)."""
    if isinstance(x, tuple):
        return tuple(_bits(e) for e in x)
    if isinstance(x, np.ndarray):
        return (x.shape, str(x.dtype), x.tobytes())
    if isinstance(x, (float, np.floating)):
        return struct.pack("<d", float(x))
    return repr(x)


def _flat(x):
    """A derivative result (float, array or tuple of these) as one float64 vector."""
    if isinstance(x, tuple):
        parts = [_flat(e) for e in x]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.atleast_1d(np.asarray(x, dtype=np.float64)).ravel()


def _fmt(v):
    """A short printable form of a float or vector."""
    v = np.asarray(v, dtype=np.float64)
    if v.size == 1:
        return repr(float(v.ravel()[0]))
    return np.array2string(v, precision=12, separator=", ", max_line_width=100)


def _depth():
    """The calling thread's tape depth (0 when adjit's runtime is unavailable)."""
    try:
        from adjit import runtime
        return runtime.current_depth()
    except Exception:  # pragma: no cover - depends on the runtime build
        return 0


def _moved(args, dirs, t):
    """``args`` moved by ``t`` along ``dirs`` ({slot: direction})."""
    new = _copy(args)
    for k, d in dirs.items():
        new[k] = args[k] + t * d
        if isinstance(args[k], float):
            new[k] = float(new[k])
    return new


def _central(F, args, dirs, h):
    """Central difference of ``F`` along ``dirs`` with step ``h``, and its rounding noise."""
    fp, fm = _flat(F(_moved(args, dirs, h))), _flat(F(_moved(args, dirs, -h)))
    noise = NOISE * EPS * max(float(np.max(np.abs(fp), initial=0.0)),
                              float(np.max(np.abs(fm), initial=0.0))) / (2 * h)
    return (fp - fm) / (2 * h), noise


def compare(ad, F, args, dirs, h, what, rtol=RTOL, atol=ATOL, scale_tol=0.0):
    """Check ``ad`` against central differences of ``F`` along ``dirs``.

    Raises _Failed(nondifferentiable) when the steps h and 2h disagree, _Failed(wrong)
    when ``ad`` matches none of the steps h, h/4 and the Richardson extrapolation."""
    ad = _flat(ad)
    if not np.all(np.isfinite(ad)):
        raise _Failed(Outcome("wrong", f"{what}: non-finite derivative", "", "", _fmt(ad)))
    d1, n1 = _central(F, args, dirs, h)
    d2, n2 = _central(F, args, dirs, 2 * h)
    if d1.shape != ad.shape:
        raise _Failed(Outcome("wrong", f"{what}: {ad.size} values, expected {d1.size}",
                              "", _fmt(d1), _fmt(ad)))
    if not (np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))):
        raise _Failed(Outcome("nondifferentiable", f"{what}: non-finite differences"))
    big = np.maximum(1.0, np.maximum(np.abs(d1), np.abs(d2)))
    if np.any(np.abs(d1 - d2) > 1e-6 * big + 8 * (n1 + n2) + scale_tol * np.max(big)):
        raise _Failed(Outcome("nondifferentiable", f"{what}: steps h and 2h disagree",
                              "", _fmt(d1), _fmt(d2)))
    rich = (4 * d1 - d2) / 3

    def close(ref, noise):
        """Elementwise agreement of ``ad`` with one estimate."""
        tol = atol + rtol * np.maximum(np.abs(ad), np.abs(ref)) + noise \
            + scale_tol * max(1.0, float(np.max(np.abs(ref), initial=0.0)))
        return np.abs(ad - ref) <= tol

    ok = close(d1, n1) | close(rich, n1)
    if not ok.all():
        d4, n4 = _central(F, args, dirs, h / 4)
        ok |= close(d4, n4)
    if not ok.all():
        raise _Failed(Outcome("wrong", f"{what}: disagrees with central differences",
                              "", _fmt(rich), _fmt(ad)))


def _unit(a, idx):
    """The unit direction of element ``idx`` of array ``a``."""
    d = np.zeros_like(a)
    d[idx] = 1.0
    return d


def _call_twice(make, args, who, expect_args=None, tangents=(), expect_tangents=None):
    """Call a derivative twice on fresh copies of ``args`` and ``tangents``: the results
    must be bit-identical, the tape depth kept, and the arguments and tangents afterwards
    as expected (unchanged by default; ``None`` entries of ``expect_tangents`` are not
    checked: jvp runs the primal's writes on the tangent of a written argument too)."""
    first, tans = _copy(args), _copy(tangents)
    depth = _depth()
    r1 = make()(*first, *tans)
    if _depth() != depth:
        raise _Failed(Outcome("wrong", f"{who}: tape depth {depth} before, {_depth()} after"))
    want = args if expect_args is None else expect_args
    for k, (a, b) in enumerate(zip(first, want)):
        if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True):
            raise _Failed(Outcome("wrong", f"{who}: argument {k} differs after the call",
                                  "", _fmt(b), _fmt(a)))
    want = tangents if expect_tangents is None else expect_tangents
    for k, (a, b) in enumerate(zip(tans, want)):
        if b is not None and isinstance(a, np.ndarray) and not np.array_equal(a, b):
            raise _Failed(Outcome("wrong", f"{who}: tangent {k} differs after the call",
                                  "", _fmt(b), _fmt(a)))
    r2 = make()(*_copy(args), *_copy(tangents))
    if _bits(r1) != _bits(r2):
        raise _Failed(Outcome("wrong", f"{who}: two calls gave different results",
                              "", _fmt(_flat(r1)), _fmt(_flat(r2))))
    return r1


class Checker:
    """Checks the modes of one program with a given set of transforms."""

    def __init__(self, program, module, transforms=None):
        """Compile the primal and evaluate it once at the program's point."""
        import numba
        from numba.core.registry import CPUDispatcher
        self.p, self.args = program, list(program.args)
        self.f = module.f
        self.primal = self.f if isinstance(self.f, CPUDispatcher) else numba.njit(self.f)
        self.tr = transforms or default_transforms()
        self.slots = program.float_slots()
        self.rng = program_rng(program.seed, program.index, program.kind, "check")
        single = len(self.slots) == 1 and self.rng.random() < 0.5
        self.argnums = self.slots[0] if single else tuple(self.slots)
        self.grad_ok = False

    def F(self, args):
        """The primal's value at ``args`` (on copies)."""
        return float(self.primal(*_copy(args)))

    def primal_outcome(self):
        """None when the primal runs and is finite; else the outcome of every mode."""
        try:
            y = self.F(self.args)
        except Exception as e:
            return Outcome("invalid", traceback.format_exc(limit=2), normalise(
                f"{type(e).__name__}: {e}"))
        if not math.isfinite(y) or abs(y) > 1e8:
            return Outcome("nondifferentiable", f"primal value {y!r}")
        self.y0 = y
        return None

    def _h(self, dirs):
        """The step: relative to the largest moved argument."""
        mags = [abs(float(np.max(np.abs(self.args[k])))) for k in dirs]
        return REL_STEP * max([1.0] + mags)

    def run(self, mode):
        """The outcome of one mode (exceptions from adjit are classified here)."""
        from adjit import ArgumentError, UnsupportedError
        t0 = time.perf_counter()
        try:
            out = getattr(self, "check_" + mode)()
        except _Failed as e:
            out = e.outcome
        except UnsupportedError as e:
            out = Outcome("unsupported", str(e), normalise(e))
        except ArgumentError as e:
            out = Outcome("unsupported", str(e), "ArgumentError: " + normalise(e))
        except Exception as e:
            out = Outcome("crash", traceback.format_exc(),
                          normalise(f"{type(e).__name__}: {e}"))
        out.seconds = time.perf_counter() - t0
        if mode == "grad":
            self.grad_ok = out.status in ("ok", "nondifferentiable")
        return out

    def _grad_fn(self):
        """adjit's gradient for the program's argnums (a fresh lookup each time)."""
        return self.tr["grad"](self.f, self.argnums)

    def check_grad(self):
        """Reverse mode: every partial derivative against central differences."""
        g = _call_twice(self._grad_fn, self.args, "grad")
        gs = g if isinstance(self.argnums, tuple) else (g,)
        if not isinstance(gs, tuple) or len(gs) != len(self.slots):
            raise _Failed(Outcome("wrong", f"grad returned {type(g).__name__}"))
        for k, gk in zip(self.slots, gs):
            a = self.args[k]
            name = self.p.arg_names[k]
            if isinstance(a, float):
                compare(gk, self.F, self.args, {k: 1.0}, REL_STEP * max(1.0, abs(a)),
                        f"d f / d {name}")
                continue
            if not isinstance(gk, np.ndarray) or gk.shape != a.shape:
                raise _Failed(Outcome("wrong", f"grad of {name}: expected shape {a.shape}",
                                      "", "", repr(gk)))
            for idx in np.ndindex(a.shape):
                compare(gk[idx], self.F, self.args, {k: _unit(a, idx)},
                        REL_STEP * max(1.0, abs(float(a[idx]))), f"d f / d {name}{list(idx)}")
        return Outcome("ok")

    def _direction(self):
        """Random tangents, one per differentiated argument (deterministic per program)."""
        out = {}
        for k in self.slots:
            a = self.args[k]
            if isinstance(a, float):
                out[k] = round(self.rng.gauss(0.0, 1.0), 3)
            else:
                out[k] = np.array([round(self.rng.gauss(0.0, 1.0), 3)
                                   for _ in range(a.size)]).reshape(a.shape)
        return out

    def check_jvp(self):
        """Forward mode: the tangent along a random direction, and the primal value."""
        dirs = self._direction()
        tans = [dirs[k] for k in self.slots]
        after = _copy(self.args)
        self.primal(*after)                     # jvp runs the primal's writes
        written = [k for k in self.slots if isinstance(self.args[k], np.ndarray)
                   and not np.array_equal(after[k], self.args[k])]
        res = _call_twice(lambda: self.tr["jvp"](self.f), self.args, "jvp", after, tans,
                          [None if k in written else dirs[k] for k in self.slots])
        if not isinstance(res, tuple) or len(res) != 2:
            raise _Failed(Outcome("wrong", "jvp did not return (value, tangent)", "", "",
                                  repr(res)))
        value, tan = res
        if not abs(float(value) - self.y0) <= 1e-12 * max(1.0, abs(self.y0)):
            raise _Failed(Outcome("wrong", "jvp value differs from the primal", "",
                                  repr(self.y0), repr(value)))
        compare(tan, self.F, self.args, dirs, self._h(dirs), "jvp tangent")
        return Outcome("ok")

    def check_hvp(self):
        """Forward-over-reverse: H v against differences of the gradient along v."""
        dirs = self._direction()
        vs = [dirs[k] for k in self.slots]
        hv = _call_twice(lambda: self.tr["hvp"](self.f, self.argnums), self.args, "hvp",
                         tangents=vs)
        if self.grad_ok:
            G = lambda a: self._grad_fn()(*a)            # noqa: E731
            compare(hv, G, self.args, dirs, self._h(dirs), "hvp", scale_tol=1e-6)
        else:                                            # no adjit gradient: FD of FD
            compare(hv, self._fd_grad, self.args, dirs, 1e-4 * self._h(dirs) / REL_STEP,
                    "hvp (vs differences of differences)", rtol=1e-3, atol=1e-5,
                    scale_tol=1e-4)
        return Outcome("ok")

    def _fd_grad(self, args):
        """A central-difference gradient (used only when adjit's gradient is unavailable)."""
        parts = []
        for k in self.slots:
            a = args[k]
            if isinstance(a, float):
                parts.append(_central(self.F, args, {k: 1.0}, 1e-4 * max(1.0, abs(a)))[0])
            else:
                for idx in np.ndindex(a.shape):
                    parts.append(_central(self.F, args, {k: _unit(a, idx)},
                                          1e-4 * max(1.0, abs(float(a[idx]))))[0])
        return tuple(parts)


def check_program(program, directory, modes=MODES, transforms=None):
    """Outcomes ({mode: Outcome}) of one program, loaded from a file in ``directory``."""
    try:
        module = load(program, directory)
        checker = Checker(program, module, transforms)
        bad = checker.primal_outcome()
    except Exception as e:
        bad = Outcome("invalid", traceback.format_exc(limit=3),
                      normalise(f"{type(e).__name__}: {e}"))
    if bad is not None:
        return {m: Outcome(**asdict(bad)) for m in modes}
    return {m: checker.run(m) for m in modes}
