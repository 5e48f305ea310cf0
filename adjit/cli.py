"""Command-line interface: ``adjit bench`` (also ``python -m adjit bench``).

::

    adjit bench [--filter REGEX] [--json PATH] [--csv PATH] [--plot PATH.png] [--quick]
                [--repeat R] [--compile] [MODULE_OR_FILE:FUNCTION --arg NAME=SPEC ...]
    adjit bench --profile NAME

Without a target it runs the built-in suite (``adjit.suite``); with one it benchmarks that
function, differentiated with respect to its float/array arguments, on inputs built from the
``--arg`` specs (``x=randn(1000)``, ``x=randn(10,10)``, ``n=int(10)``, ``a=float(0.5)``).
The table goes to stdout, progress to stderr.
"""
import argparse
import os
import sys
import time


def build_parser():
    """The argparse parser for ``adjit`` and its ``bench`` subcommand."""
    parser = argparse.ArgumentParser(prog="adjit", description="adjit command-line tools")
    sub = parser.add_subparsers(dest="command")
    b = sub.add_parser("bench", help="gradient/primal time ratios of the suite or a function",
                       description="Benchmark adjit gradients against their primals. Every "
                       "gradient is checked before it is timed; times come from compiled "
                       "driver loops over varying inputs.")
    b.add_argument("target", nargs="?", metavar="MODULE_OR_FILE:FUNCTION",
                   help="benchmark this function instead of the built-in suite")
    b.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="input spec for the target's parameter NAME: randn(SHAPE), "
                   "rand(SHAPE), zeros(SHAPE), ones(SHAPE), int(N), float(X)")
    b.add_argument("--filter", metavar="REGEX", help="only suite workloads whose name matches")
    b.add_argument("--json", metavar="PATH", help="write machine info and rows as JSON")
    b.add_argument("--csv", metavar="PATH", help="write the rows as CSV")
    b.add_argument("--plot", metavar="PATH.png", help="bar chart of the ratios (matplotlib)")
    b.add_argument("--quick", action="store_true", help="few short rounds: a smoke test")
    b.add_argument("--repeat", type=int, metavar="R",
                   help="calls per timing round (default: calibrated to the round length)")
    b.add_argument("--rounds", type=int, metavar="N", help="timing rounds (default 7, quick 2)")
    b.add_argument("--jobs", type=int, metavar="N",
                   help="benchmark suite workloads in N worker processes (default: one per "
                   "core with --quick, else 1): compiling is one core's work, so a first "
                   "--quick run takes about half as long; timings then share the machine")
    b.add_argument("--seed", type=int, default=0, help="random seed for the inputs")
    b.add_argument("--profile", metavar="NAME",
                   help="where the gradient of suite workload NAME spends its time: forward "
                   "and reverse sweep, tape bytes, allocations, vectorised loops")
    b.add_argument("--compare", metavar="OLD.json",
                   help="print each ratio beside the same ratio of an earlier --json run, "
                   "with the change")
    b.add_argument("--compile", action="store_true",
                   help="also time the primal's compile and the first grad, jvp and hvp, "
                   "each in a fresh process, and the first grad loaded from the disk cache")
    return parser


def _progress(msg):
    """Progress line to stderr."""
    print(msg, file=sys.stderr, flush=True)


def run_bench(args):
    """Execute ``adjit bench`` for parsed ``args``; return the exit code."""
    from adjit.benchmarking import report
    from adjit.benchmarking.parallel import run_suite
    from adjit.benchmarking.runner import Config, machine_info
    from adjit.benchmarking.specs import SpecError, parse_spec
    from adjit.benchmarking.workloads import discover, load_user

    if args.profile:
        return run_profile(args)
    if args.repeat is not None and args.repeat < 1:
        _progress("adjit bench: --repeat must be at least 1")
        return 2
    try:
        if args.target:
            workloads = [load_user(args.target, [parse_spec(a) for a in args.arg])]
        else:
            if args.arg:
                raise SpecError("--arg is only meaningful with a MODULE_OR_FILE:FUNCTION target")
            workloads = discover(args.filter)
    except SpecError as exc:
        _progress(f"adjit bench: {exc}")
        return 2
    except ImportError as exc:
        _progress(f"adjit bench: cannot import {args.target}: {exc}")
        return 2
    if not workloads:
        _progress(f"adjit bench: no workload matches --filter {args.filter!r}")
        return 2
    old_rows = None
    if args.compare:  # fail early, not after the whole run
        from adjit.benchmarking.compare import CompareError, load_rows
        try:
            old_rows = load_rows(args.compare)
        except CompareError as exc:
            _progress(f"adjit bench: {exc}")
            return 2
    if args.plot:  # fail early, not after the whole run
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            _progress("adjit bench: --plot needs matplotlib: pip install 'adjit[plot]'")
            return 2

    config = Config.quick(args.repeat) if args.quick else Config(repeat=args.repeat)
    config.seed = args.seed
    config.compile_times = args.compile
    if args.rounds:
        config.rounds = max(1, args.rounds)
    machine = machine_info()
    _progress(f"adjit bench: {len(workloads)} workload(s) on {report.format_machine(machine)}")
    t0 = time.perf_counter()
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1) if args.quick else 1
    rows = run_suite(workloads, config, max(1, jobs), progress=_progress)
    _progress(f"adjit bench: done in {time.perf_counter() - t0:.1f}s")

    print(report.format_table(rows))
    print(f"\n{report.format_machine(machine)}")
    print("ratio = gradient time / primal time (best of rounds); hand/jvp/hvp likewise; "
          "'1st grad' = time to first gradient, 'primal jit' = primal compile time"
          + ("; each from a fresh process, Numba's start-up excluded, with nothing on disk; "
             "'warm grad' = the same with adjit's rule kernels on disk from an earlier "
             "process; 'cached grad' = first gradient loaded from the disk cache "
             "(cache=True) in a new process"
             if args.compile else "")
          + ("; --quick: a smoke test, timed by calls from Python (dispatch included), "
             "with primals and derivatives from the disk cache once a first --quick run "
             "wrote them ('1st grad' is then a cache load)" if args.quick else ""))
    if old_rows is not None:
        from adjit.benchmarking.compare import format_comparison
        print(f"\nagainst {args.compare} (change = new / old - 1):")
        print(format_comparison(rows, old_rows))
    cfg = {"rounds": config.rounds, "target_s": config.target_s, "max_pool": config.max_pool,
           "repeat": config.repeat, "quick": bool(args.quick), "seed": config.seed}
    if args.json:
        report.write_json(args.json, machine, rows, cfg)
        _progress(f"adjit bench: wrote {args.json}")
    if args.csv:
        report.write_csv(args.csv, rows)
        _progress(f"adjit bench: wrote {args.csv}")
    if args.plot:
        report.write_plot(args.plot, rows, machine)
        _progress(f"adjit bench: wrote {args.plot}")
    return 0


def run_profile(args):
    """``adjit bench --profile NAME``: the profile of one suite workload's gradient."""
    from adjit.benchmarking.profile import profile
    from adjit.benchmarking.runner import Config, warm_up
    from adjit.benchmarking.workloads import discover
    workloads = [w for w in discover() if w.name == args.profile]
    if not workloads:
        _progress(f"adjit bench: no suite workload is named {args.profile!r}")
        return 2
    config = Config.quick(args.repeat) if args.quick else Config(repeat=args.repeat)
    warm_up()
    try:
        print(profile(workloads[0], config, _progress).report())
    except RuntimeError as exc:
        _progress(f"adjit bench: cannot profile {exc}")
        return 1
    return 0


BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads():
    """Default BLAS to one thread (unless the user set it) before scipy's BLAS loads.

    Threaded BLAS makes matmul/Cholesky timings swing by 2-3x on a shared machine; one
    thread keeps primal and gradient comparable. Export OPENBLAS_NUM_THREADS to override.
    """
    for var in BLAS_THREAD_VARS:
        os.environ.setdefault(var, "1")


def main(argv=None):
    """Entry point of the ``adjit`` console script; returns the process exit code."""
    pin_blas_threads()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "bench":
        return run_bench(args)
    parser.print_help()
    return 2
