"""``python -m adjit.fuzz --n N --seed S``: check random programs against finite differences.

Exit status 1 when any mode of any program is wrong or crashed, else 0.
"""
import argparse
import sys
import time

from .check import MODES


def parse(argv):
    """The command-line options."""
    p = argparse.ArgumentParser(prog="python -m adjit.fuzz", description=(
        "Generate random numba-compatible programs and check adjit's grad, jvp and hvp "
        "against central finite differences."))
    p.add_argument("--n", type=int, default=20, help="number of programs (default 20)")
    p.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    p.add_argument("--kind", choices=("scalar", "array", "all"), default="all",
                   help="program kind; 'all' alternates scalar and array (default)")
    p.add_argument("--start", type=int, default=0, help="first program index (default 0)")
    p.add_argument("--only", type=int, default=None, help="check just this program index")
    p.add_argument("--modes", default=",".join(MODES), help="comma list of grad,jvp,hvp")
    p.add_argument("--out", default=None, help="write a markdown findings report here")
    p.add_argument("--jsonl", default=None, help="append one JSON record per program here")
    p.add_argument("--keep-going", action="store_true",
                   help="do not stop at the first wrong or crashing program")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds one program may take before it counts as a crash")
    p.add_argument("--time-limit", type=float, default=None,
                   help="stop after this many seconds and report what was checked")
    p.add_argument("--recycle", type=int, default=20,
                   help="programs per worker process before a fresh one starts (default 20)")
    p.add_argument("--inprocess", action="store_true",
                   help="check in this process (no protection against hard crashes)")
    p.add_argument("--no-checks", action="store_true",
                   help="do not run adjit's IR invariant checks (ADJIT_CHECKS)")
    p.add_argument("--shrink", default=None, metavar="MODE",
                   help="with --only: delete lines while MODE still fails the same way, "
                        "and print the smaller program (read from the --jsonl log when "
                        "one is given, else regenerated from --seed)")
    p.add_argument("--show", action="store_true", help="print each program before checking")
    p.add_argument("--quiet", action="store_true", help="no per-program progress lines")
    p.add_argument("--summarise", default=None, metavar="JSONL",
                   help="print (and with --out write) the summary of an earlier --jsonl log")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--indices", default="", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def progress_line(rec, done, total, t0):
    """One line per checked program: index, kind, per-mode status, time."""
    st = " ".join(f"{m}={o['status']}" for m, o in rec["outcomes"].items())
    return (f"[{done}/{total} {time.time() - t0:6.0f}s] #{rec['index']:<5} {rec['kind']:<6} "
            f"{st}  ({rec['seconds']:.1f} s)")


def summarise(path, modes, out):
    """The summary (and report) of the records of an earlier run's JSON log."""
    import json

    from . import report
    with open(path) as fh:
        records = sorted((json.loads(ln) for ln in fh if ln.strip()),
                         key=lambda r: (r["seed"], r["index"]))
    print(report.summary_text(records, modes, None))
    if out:
        with open(out, "w") as fh:
            fh.write(report.markdown(records, modes, None, f"--summarise {path}"))
    return 1 if report.failures(records) else 0


def main(argv=None):
    """Run the fuzzer; return the exit status."""
    args = parse(sys.argv[1:] if argv is None else argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    bad = [m for m in modes if m not in MODES]
    if bad:
        sys.exit(f"unknown mode(s) {bad}; choose from {MODES}")
    if args.worker:
        from .runner import worker_main
        return worker_main(args.seed, args.kind, [int(i) for i in args.indices.split(",")],
                           modes)
    if args.summarise:
        return summarise(args.summarise, modes, args.out)
    if args.shrink:
        if args.only is None or args.shrink not in MODES:
            sys.exit("--shrink MODE needs --only INDEX and a mode of grad, jvp, hvp")
        import adjit.config
        adjit.config.CHECKS = not args.no_checks
        from .assemble import generate
        from .shrink import find_record, program_from_record, shrink
        program = (program_from_record(find_record(args.jsonl, args.seed, args.only))
                   if args.jsonl else generate(args.seed, args.only, args.kind))
        print(shrink(program, args.shrink))
        print("# arguments:", program.args_source())
        return 0
    from . import report
    from .assemble import generate
    from .runner import is_failure, run
    total = 1 if args.only is not None else args.n
    t0, done = time.time(), [0]
    jsonl = open(args.jsonl, "a") if args.jsonl else None

    def on_record(rec):
        """Progress, failure details as they come, and the JSON log."""
        done[0] += 1
        if not args.quiet:
            print(progress_line(rec, done[0], total, t0), flush=True)
        if args.show:
            print(rec["source"], "\n#", rec["args"], flush=True)
        if is_failure(rec):
            for r, m in report.failures([rec]):
                print(report.failure_text(r, m), flush=True)
        if jsonl:
            import json
            jsonl.write(json.dumps(rec) + "\n")
            jsonl.flush()

    if args.show and args.only is not None:
        p = generate(args.seed, args.only, args.kind)
        print(p.source, "\n#", p.args_source(), flush=True)
    records = run(args.n, seed=args.seed, kind=args.kind, start=args.start, only=args.only,
                  modes=modes, jobs=args.jobs, timeout=args.timeout,
                  keep_going=args.keep_going, isolate=not args.inprocess,
                  checks=not args.no_checks, on_record=on_record,
                  time_limit=args.time_limit, recycle=args.recycle)
    elapsed = time.time() - t0
    print(report.summary_text(records, modes, elapsed))
    fails = report.failures(records)
    if fails:
        print(f"\n{len(fails)} failing mode(s):")
        for r, m in fails:
            print(f"  {r['outcomes'][m]['status']:<6} {m:<5} --seed {r['seed']} "
                  f"--kind {r['kind']} --only {r['index']}: "
                  f"{r['outcomes'][m]['message'] or r['outcomes'][m]['detail'].splitlines()[0]}")
    if args.out:
        command = "python -m adjit.fuzz " + " ".join(sys.argv[1:] if argv is None else argv)
        with open(args.out, "w") as fh:
            fh.write(report.markdown(records, modes, elapsed, command))
        print(f"report written to {args.out}")
    if jsonl:
        jsonl.close()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
