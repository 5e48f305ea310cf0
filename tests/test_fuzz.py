"""The random-program fuzzer (adjit.fuzz): a fixed seeded batch must be all correct, the
generator must be deterministic, and the checker must catch a wrong derivative."""
import numpy as np
import pytest

import adjit
from adjit.fuzz import MODES, check_program, generate
from adjit.fuzz.check import Checker, load, normalise
from adjit.fuzz.runner import check_one, is_failure
from adjit.testing import numerical_grad

# (seed, index) of programs that compile quickly; the whole batch takes about a minute
# loops, while/break, helpers (keyword, tuple, recursive), local arrays, out= writes
SCALAR = [(777, 68), (777, 14), (777, 36), (777, 44), (777, 24), (777, 30)]
ARRAY = [(777, 27), (777, 67), (777, 15), (777, 9)]
BATCH = [(s, i, "scalar") for s, i in SCALAR] + [(s, i, "array") for s, i in ARRAY]


@pytest.mark.parametrize("seed,index,kind", BATCH, ids=[f"{k}-{s}-{i}" for s, i, k in BATCH])
def test_seeded_program(seed, index, kind, tmp_path):
    """Every mode of a fixed generated program is ok (or honestly unsupported)."""
    rec = check_one(seed, index, kind, MODES, str(tmp_path))
    bad = {m: o for m, o in rec["outcomes"].items() if o["status"] in ("wrong", "crash")}
    assert not bad, (f"{bad}\n{rec['source']}\n{rec['args']}")
    assert all(o["status"] != "invalid" for o in rec["outcomes"].values()), rec["outcomes"]


def test_generator_is_deterministic():
    """The same seed gives the same program and inputs; another seed another program."""
    for kind in ("scalar", "array"):
        a, b = generate(7, 3, kind), generate(7, 3, kind)
        assert a.source == b.source and a.args_source() == b.args_source()
        assert generate(8, 3, kind).source != a.source
    assert generate(7, 0, "all").kind == "scalar" and generate(7, 1, "all").kind == "array"


def test_generated_programs_compile(tmp_path):
    """Numba can compile and run generated programs (checked without adjit: primal only)."""
    for i in range(6):
        p = generate(5, i, "all")
        checker = Checker(p, load(p, str(tmp_path)))
        bad = checker.primal_outcome()
        assert bad is None or bad.status == "nondifferentiable", (bad, p.source)


def _fd_grad(f, argnums):
    """A finite-difference stand-in for adjit.grad (no adjit compilation)."""
    def g(*args):
        """Central differences of the primal, shaped like adjit.grad's result."""
        return numerical_grad(f, *args, argnums=argnums)
    return g


def _scaled(transform, factor):
    """A transform whose results are off by ``factor`` (the checker must notice)."""
    def make(f, argnums):
        """The scaled transform of ``f``."""
        inner = transform(f, argnums)

        def g(*args):
            """The inner result times ``factor``."""
            r = inner(*args)
            return tuple(np.asarray(x) * factor if isinstance(x, np.ndarray) else x * factor
                         for x in r) if isinstance(r, tuple) else r * factor
        return g
    return make


def _program():
    """A small generated scalar program with two float arguments."""
    for i in range(50):
        p = generate(1, i, "scalar")
        if len(p.float_slots()) >= 2:
            return p
    raise AssertionError("no program with two float arguments")


def test_checker_accepts_finite_differences(tmp_path):
    """A correct gradient (here from finite differences) passes the checker."""
    out = check_program(_program(), str(tmp_path), ("grad",), {"grad": _fd_grad})
    assert out["grad"].status in ("ok", "nondifferentiable"), out["grad"]


def test_checker_detects_wrong_gradient(tmp_path):
    """A gradient off by 1% is reported as wrong, with both numbers."""
    out = check_program(_program(), str(tmp_path), ("grad",),
                        {"grad": _scaled(_fd_grad, 1.01)})
    assert out["grad"].status == "wrong", out["grad"]
    assert out["grad"].expected and out["grad"].got


def test_checker_detects_wrong_jvp_and_errors(tmp_path):
    """A wrong tangent is wrong; exceptions are crash or unsupported by their type."""
    p = _program()

    def boom(f, argnums):
        """A transform that crashes."""
        raise RuntimeError("boom")

    def unsupported(f, argnums):
        """A transform that refuses the program."""
        raise adjit.UnsupportedError("'frobnicate'", "f")

    nd = len(p.float_slots())

    def bad_jvp_n(f):
        """A jvp with the right value and a wrong tangent."""
        def g(*a):
            """(primal value, 123.0)."""
            return adjit.testing._primal(f)(*a[:len(a) - nd]), 123.0
        return g

    out = check_program(p, str(tmp_path), ("grad", "jvp", "hvp"),
                        {"grad": boom, "jvp": bad_jvp_n, "hvp": unsupported})
    assert out["grad"].status == "crash" and "boom" in out["grad"].message
    assert out["jvp"].status == "wrong", out["jvp"]
    assert out["hvp"].status == "unsupported"
    assert out["hvp"].message == "adjit cannot differentiate 'frobnicate' in function <f>"


def test_checker_detects_nondeterminism_and_mutation(tmp_path):
    """Two calls with different results, or an argument changed by the call, are wrong."""
    p = generate(3, 1, "array")
    calls = [0]

    def flaky(f, argnums):
        """A gradient that changes from call to call."""
        inner = _fd_grad(f, argnums)

        def g(*args):
            """Finite differences plus a call-dependent offset."""
            calls[0] += 1
            r = inner(*args)
            return tuple(x + calls[0] * 1e-3 for x in r) if isinstance(r, tuple) \
                else r + calls[0] * 1e-3
        return g

    def mutating(f, argnums):
        """A gradient that writes into its first argument."""
        inner = _fd_grad(f, argnums)

        def g(*args):
            """Finite differences, then a write into args[0]."""
            r = inner(*args)
            args[0][0] += 1.0
            return r
        return g

    assert check_program(p, str(tmp_path), ("grad",), {"grad": flaky})["grad"].status == "wrong"
    out = check_program(p, str(tmp_path), ("grad",), {"grad": mutating})["grad"]
    assert out.status == "wrong" and "argument 0" in out.detail


def test_normalise_strips_names_and_lines():
    """Unsupported messages from different programs count as one."""
    a = normalise("adjit cannot differentiate 'sort' in function 'h3' at /tmp/x/m_1.py:12\n"
                  "    v3 = np.sort(a)\n  (no rule)")
    b = normalise("adjit cannot differentiate 'sort' in function 'f' at /tmp/y/m_2.py:40\n"
                  "    v9 = np.sort(b)\n  (no rule)")
    assert a == b == "adjit cannot differentiate 'sort' in function <f> (no rule)"


def test_is_failure():
    """Only wrong and crash make a run fail."""
    rec = {"outcomes": {"grad": {"status": "unsupported"}, "jvp": {"status": "ok"}}}
    assert not is_failure(rec)
    rec["outcomes"]["hvp"] = {"status": "crash"}
    assert is_failure(rec)


def test_a_timed_out_worker_is_a_crash_record(monkeypatch):
    """A program that takes longer than ``timeout`` is reported as a crash (with the
    worker's log), and the run goes on: the runner once died reading the closed log."""
    import json
    import subprocess
    import sys
    from adjit.fuzz import runner

    def stalled_worker(self, seed, kind, indices, modes, checks, logdir):
        """A worker that announces a program and never finishes it."""
        self.indices, self.current, self.started = list(indices), None, None
        self.log_path = f"{logdir}/stalled.log"
        self.log = open(self.log_path, "w")
        start = runner.TAG + json.dumps({"event": "start", "index": indices[0]})
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import time; print({start!r}, flush=True); "
             "time.sleep(60)"], stdout=subprocess.PIPE, stderr=self.log, text=True)

    monkeypatch.setattr(runner._Worker, "__init__", stalled_worker)
    records = []
    runner.run_isolated(777, "scalar", [68], ["grad"], 1, 0.5, True, records.append,
                        lambda: len(records) > 0)
    assert [r["index"] for r in records] == [68]
    outcome = records[0]["outcomes"]["grad"]
    assert outcome["status"] == "crash" and "timeout" in str(outcome)
