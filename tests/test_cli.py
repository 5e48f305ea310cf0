"""The ``adjit bench`` CLI runs on a tiny case and writes valid JSON/CSV; spec parsing.

No timing assertions: speed is measured by ``adjit bench``, never by tests.
"""
import csv
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from adjit.benchmarking import Config, SpecError, Workload, parse_spec, run_workloads
from adjit.benchmarking.runner import ROW_KEYS
from adjit.benchmarking.specs import order_specs
from adjit.benchmarking.workloads import discover, suite_module_names
from adjit.cli import main

SUITE_NAMES = {
    "sum_1000", "_sum_1000", "sum_sin_1000", "_sum_sin_1000", "kron_sum",
    "naive_map_sin_cos_exp", "broadcast_sin_cos_exp", "simple_mlp", "gp_lml",
    "large_single_block", "rosenbrock_loop", "scalar_loop_branch", "logsumexp_loop",
}
DOCUMENTED_ROW_KEYS = {"name", "status", "primal_s", "grad_s", "ratio"}


# -- spec parsing ---------------------------------------------------------------------------
def test_parse_array_specs():
    rng = np.random.default_rng(0)
    s = parse_spec("x=randn(1000)")
    assert (s.name, s.kind, s.params) == ("x", "randn", (1000,))
    assert s.make(rng).shape == (1000,) and s.differentiable and s.random
    s = parse_spec(" W = randn( 10 , 20 ) ")
    assert s.name == "W" and s.make(rng).shape == (10, 20)
    assert parse_spec("z=zeros(3)").make(rng).tolist() == [0.0, 0.0, 0.0]
    assert parse_spec("o=ones(2,2)").make(rng).sum() == 4.0
    u = parse_spec("u=rand(50)").make(rng)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert isinstance(parse_spec("t=randn()").make(rng), float)


def test_parse_constant_specs():
    rng = np.random.default_rng(0)
    n = parse_spec("n=int(10)")
    assert n.make(rng) == 10 and isinstance(n.make(rng), int) and not n.differentiable
    a = parse_spec("a=float(0.5)")
    assert a.make(rng) == 0.5 and a.differentiable and not a.random
    assert parse_spec("b=float(-2)").make(rng) == -2.0
    assert parse_spec("c=float(1e-3)").make(rng) == 1e-3


@pytest.mark.parametrize("bad", [
    "x", "x=", "=randn(3)", "x=randn", "x=randn(3", "x=foo(3)", "x=randn(2.5)",
    "x=randn(-1)", "n=int(1.5)", "n=int()", "a=float()", "a=float(1,2)",
    "x=randn(__import__('os'))", "x=randn(1);import os",
])
def test_parse_rejects(bad):
    with pytest.raises(SpecError):
        parse_spec(bad)


def test_order_specs():
    specs = [parse_spec("b=int(2)"), parse_spec("a=randn(3)")]
    assert [s.name for s in order_specs(specs, ["a", "b"])] == ["a", "b"]
    with pytest.raises(SpecError, match="no --arg"):
        order_specs(specs[:1], ["a", "b"])
    with pytest.raises(SpecError, match="no parameter"):
        order_specs(specs + [parse_spec("c=int(1)")], ["a", "b"])
    with pytest.raises(SpecError, match="twice"):
        order_specs(specs + [parse_spec("a=randn(2)")], ["a", "b"])


# -- suite discovery (no compilation) -------------------------------------------------------
def test_suite_discovery():
    workloads = discover()
    assert {w.name for w in workloads} == SUITE_NAMES
    assert suite_module_names()[0] == "sum_1000"
    rng = np.random.default_rng(0)
    for w in workloads:
        inputs = w.make_inputs(rng)
        assert isinstance(inputs, tuple) and callable(w.primal)
        assert all(0 <= k < len(inputs) for k in w.argnums_tuple)
    assert [w.name for w in discover("^_sum")] == ["_sum_1000", "_sum_sin_1000"]


# -- the CLI on a tiny user function ----------------------------------------------------------
USER_SOURCE = textwrap.dedent("""
    def sumsq(x, n, a):
        s = 0.0
        for i in range(x.shape[0]):
            s += a * x[i] * x[i]
        return s + n
""")


def test_cli_user_function_writes_json_and_csv(tmp_path, capsys):
    src = tmp_path / "tiny_user_fn.py"
    src.write_text(USER_SOURCE)
    jpath, cpath = tmp_path / "out.json", tmp_path / "out.csv"
    rc = main(["bench", f"{src}:sumsq", "--arg", "x=randn(5)", "--arg", "n=int(2)",
               "--arg", "a=float(0.5)", "--quick", "--repeat", "3",
               "--json", str(jpath), "--csv", str(cpath)])
    assert rc == 0
    out = capsys.readouterr()
    assert "sumsq" in out.out and "ratio" in out.out  # the table
    assert "[1/1]" in out.err  # progress

    doc = json.loads(jpath.read_text())
    assert {"cpu", "cores", "python", "numba", "numpy", "platform"} <= set(doc["machine"])
    (row,) = doc["rows"]
    assert DOCUMENTED_ROW_KEYS <= set(row)
    assert row["name"].endswith(":sumsq")
    assert isinstance(row["status"], str) and row["status"]
    assert row["primal_s"] > 0
    assert row["argnums"] == [0, 2]  # x and a are floats; n is an int
    if row["status"] == "ok":
        assert row["grad_s"] > 0 and row["ratio"] > 0

    with open(cpath, newline="") as fh:
        reader = csv.DictReader(fh)
        assert DOCUMENTED_ROW_KEYS <= set(reader.fieldnames)
        rows = list(reader)
    assert len(rows) == 1 and rows[0]["status"] == row["status"]

    # a second run compares its ratios with the first run's JSON
    rc = main(["bench", f"{src}:sumsq", "--arg", "x=randn(5)", "--arg", "n=int(2)",
               "--arg", "a=float(0.5)", "--quick", "--repeat", "3", "--compare", str(jpath)])
    assert rc == 0
    compared = capsys.readouterr().out.split(f"against {jpath}")[1]
    assert "sumsq" in compared and "grad old  new  change" in compared


def test_compare_table_and_bad_file(tmp_path, capsys):
    from adjit.benchmarking.compare import format_comparison
    old = {"a": {"name": "a", "ratio": 2.0, "jvp_ratio": 1.0, "hvp_ratio": None}}
    new = [{"name": "a", "ratio": 2.5, "jvp_ratio": 0.9, "hvp_ratio": 3.0},
           {"name": "b", "ratio": 1.0}]
    table = format_comparison(new, old).splitlines()
    assert table[1].split() == ["a", "2.00", "2.50", "+25%", "1.00", "0.90", "-10%",
                                "-", "3.00", "-"]
    assert table[2].split()[:4] == ["b", "-", "1.00", "-"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["bench", "--filter", "sum_1000", "--compare", str(bad)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_reports_bad_input(tmp_path, capsys):
    src = tmp_path / "tiny_user_fn2.py"
    src.write_text(USER_SOURCE)
    assert main(["bench", f"{src}:sumsq", "--arg", "x=randn(5)"]) == 2  # n, a missing
    assert main(["bench", f"{src}:sumsq", "--arg", "x=bogus(5)"]) == 2
    assert main(["bench", "--filter", "no_such_workload_xyz"]) == 2
    assert "adjit bench:" in capsys.readouterr().err


def test_python_dash_m_help():
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "adjit", "bench", "--help"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0
    assert "--filter" in proc.stdout and "--arg" in proc.stdout


# -- the harness itself, with stand-in transforms (independent of adjit's progress) ---------
def _sumsq(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def _sumsq_grad(x):
    return 2.0 * x


def _tiny_workload():
    return Workload(name="tiny", primal=_sumsq, argnums=0,
                    make_inputs=lambda rng: (rng.standard_normal(4),))


def test_harness_checks_before_timing():
    import numba

    right = {"grad": lambda f, argnums=0: numba.njit(_sumsq_grad)}
    wrong = {"grad": lambda f, argnums=0: numba.njit(lambda x: 2.5 * x)}
    cfg = Config.quick(repeat=3)
    ok_row, = run_workloads([_tiny_workload()], cfg, transforms=right)
    assert set(ok_row) == set(ROW_KEYS)
    assert ok_row["status"] == "ok" and ok_row["ratio"] > 0 and ok_row["grad_s"] > 0
    bad_row, = run_workloads([_tiny_workload()], cfg, transforms=wrong)
    assert bad_row["status"] == "wrong" and bad_row["grad_s"] is None
    assert bad_row["primal_s"] > 0


def test_compile_times_come_from_fresh_processes_and_the_cached_one_hits_the_cache():
    """``adjit bench --compile``: every figure is measured (a number, not a failure), and
    the cached figure is only reported when the new process loaded the gradient from the
    disk cache instead of compiling it."""
    from adjit.benchmarking.compile_times import compile_times
    from adjit.benchmarking.report import format_table
    times = compile_times("scalar_loop_branch", kinds=("primal", "grad", "warm", "cached"))
    assert set(times) == {"primal_first_s", "grad_first_s", "warm_first_s", "cached_first_s"}
    assert all(isinstance(v, float) and v > 0 for v in times.values()), times
    table = format_table([{"name": "scalar_loop_branch", "status": "ok", **times}])
    header = table.splitlines()[0]
    assert "cached grad" in header and "1st grad" in header and "warm grad" in header


def test_profile_splits_the_gradient_and_counts_tape_and_allocations():
    """``adjit bench --profile``: on scalar code neither the primal nor the gradient
    allocates (the zero-allocation promise, measured in a compiled loop), the forward sweep
    pushes records, and the report names every measurement."""
    from adjit.benchmarking.profile import profile
    from adjit.benchmarking.runner import Config
    from adjit.benchmarking.workloads import discover
    (workload,) = [w for w in discover() if w.name == "scalar_loop_branch"]
    import warnings
    with warnings.catch_warnings(record=True) as caught:  # its code is compiled, not loaded
        warnings.simplefilter("always")
        prof = profile(workload, Config.quick())
    assert not [w for w in caught if "Inspection disabled" in str(w.message)]
    assert prof.primal_allocs == 0 and prof.grad_allocs == 0
    assert prof.tape_words > 0
    assert min(prof.primal_s, prof.grad_s, prof.forward_s) > 0
    text = prof.report()
    for label in ("forward sweep", "reverse sweep", "tape pushed per call",
                  "heap allocations per call", "vector operations"):
        assert label in text


def test_quick_uses_the_disk_cache_and_times_from_python(monkeypatch):
    """``--quick``: every adjit transform is asked for ``cache=True`` (a repeated smoke
    test compiles nothing) and calls are timed from Python (no driver to compile)."""
    import numba
    from adjit.benchmarking import runner
    asked = []

    def fake_transform(name):
        def factory(f, argnums=0, cache=False):
            asked.append((name, cache))
            return numba.njit(_sumsq_grad)
        return factory if name == "grad" else None

    monkeypatch.setattr(runner, "_adjit_transform", fake_transform)
    cfg = Config.quick(repeat=5)
    assert cfg.disk_cache
    row, = run_workloads([_tiny_workload()], cfg)
    assert row["status"] == "ok" and row["grad_s"] > 0 and row["primal_s"] > 0
    assert asked == [("grad", True)]
    full = Config(repeat=5)
    assert not full.disk_cache
    assert runner.WorkloadRun(_tiny_workload(), full).transform("grad") is not None


def test_profile_does_not_time_a_forward_sweep_that_leaks_its_records():
    """A forward sweep whose records hold arrays leaks them when timed alone (only the
    reverse sweep releases them); ``leaks`` tells, and the profile then times it only as
    part of the gradient."""
    import numba
    import numpy as np
    from adjit.benchmarking.profile import Profile, leaks
    from adjit.runtime import tape_acquire, tape_depth, tape_push, tape_set_depth

    @numba.njit
    def holds_an_array(x):
        tape = tape_acquire()
        depth = tape_depth(tape)
        tape_push(tape, (x, np.empty(3)))
        tape_set_depth(tape, depth)
        return x

    @numba.njit
    def holds_scalars(x):
        tape = tape_acquire()
        depth = tape_depth(tape)
        tape_push(tape, (x, 2.0 * x))
        tape_set_depth(tape, depth)
        return x

    packed = (np.linspace(0.0, 1.0, 4),)
    assert leaks(holds_an_array, packed, 10)
    assert not leaks(holds_scalars, packed, 10)
    text = Profile("w", 1e-6, 3e-6, None, 10, 0, 1, 0, 0).report()
    assert "not timed apart" in text and "reverse sweep (" not in text


def test_jobs_run_suite_workloads_in_workers_and_keep_their_order(tmp_path, monkeypatch):
    """``--jobs 2``: two worker processes benchmark the suite, the heaviest
    (``COMPILE_WEIGHT``) first, and the rows come back in the suite's order, each checked
    against its reference as the sequential runner checks it."""
    from adjit.benchmarking.parallel import compile_weight, run_suite
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    workloads = discover("^(_sum_1000|rosenbrock_loop)$")
    assert [w.name for w in workloads] == ["_sum_1000", "rosenbrock_loop"]
    heard = []
    rows = run_suite(workloads, Config.quick(repeat=3), jobs=2, progress=heard.append)
    assert [r["name"] for r in rows] == ["_sum_1000", "rosenbrock_loop"]
    assert all(r["status"] == "ok" and r["grad_s"] > 0 and r["hvp_status"] == "ok"
               for r in rows), rows
    assert len(heard) == 2 and all("-> ok" in h for h in heard)
    weights = {w.name: compile_weight(w) for w in discover()}
    assert weights["gp_lml"] > weights["kron_sum"] > weights["_sum_1000"] == 1.0


def test_timings_are_interleaved_and_the_median_ratio_is_paired_by_round():
    """Every callable runs one round in turn, so a machine that slows down half way
    through a run slows every one alike, and the median ratio pairs rounds: a ratio
    that is 2 in every round comes out 2 whatever the machine did."""
    from adjit.benchmarking import drivers
    order, speed = [], iter([1, 1, 3, 3, 3, 3])  # the machine slows 3x after round 1

    def timer(label, cost):
        def one_round():
            order.append(label)
            return cost * next(speed) * 10
        return one_round, 10

    timings = drivers.time_interleaved({"primal": timer("primal", 1.0),
                                        "grad": timer("grad", 2.0)}, 3)
    assert order == ["primal", "grad"] * 3
    primal, grad = timings["primal"], timings["grad"]
    assert primal.samples == (1.0, 3.0, 3.0) and grad.samples == (2.0, 6.0, 6.0)
    assert drivers.paired_median_ratio(grad, primal) == 2.0

    def broken():
        raise RuntimeError("faulted")
    speed = iter([1] * 4)
    timings = drivers.time_interleaved({"primal": timer("primal", 1.0),
                                        "hvp": (broken, 1)}, 2)
    assert isinstance(timings["hvp"], RuntimeError) and timings["primal"].rounds == 2
