"""Running many programs: in-process, or in worker subprocesses that survive hard crashes.

A worker (``python -m adjit.fuzz --worker ...``) checks its programs one by one and prints
one protocol line per event on stdout. The parent notices a worker that dies (a segfault in
generated code) or stalls (``--timeout``), records that program as a crash, and starts a
new worker for the remaining programs.
"""
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

from .assemble import generate
from .check import MODES, Outcome, check_program

TAG = "@@adjit-fuzz "


def record(program, outcomes, seconds):
    """The JSON-ready record of one checked program."""
    return {"seed": program.seed, "index": program.index, "kind": program.kind,
            "source": program.source, "args": program.args_source(),
            "seconds": seconds, "outcomes": {m: o.to_dict() for m, o in outcomes.items()}}


def check_one(seed, index, kind, modes, directory, transforms=None):
    """Generate and check program ``index``; return its record."""
    program = generate(seed, index, kind)
    t0 = time.perf_counter()
    outcomes = check_program(program, directory, modes, transforms)
    return record(program, outcomes, time.perf_counter() - t0)


def is_failure(rec):
    """True when some mode of the record is wrong or crashed."""
    return any(o["status"] in ("wrong", "crash") for o in rec["outcomes"].values())


def worker_main(seed, kind, indices, modes):
    """Body of a worker process: check ``indices`` in order, one protocol line per event."""
    directory = tempfile.mkdtemp(prefix="adjit-fuzz-")
    out = sys.stdout
    sys.stdout = sys.stderr            # programs' and numba's prints stay off the protocol
    try:
        for i in indices:
            out.write(TAG + json.dumps({"event": "start", "index": i}) + "\n")
            out.flush()
            rec = check_one(seed, i, kind, modes, directory)
            out.write(TAG + json.dumps({"event": "result", "record": rec}) + "\n")
            out.flush()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


def _crash_record(seed, index, kind, modes, message, detail, seconds):
    """The record of a program whose worker died or timed out."""
    program = generate(seed, index, kind)
    outs = {m: Outcome("crash", detail, message) for m in modes}
    return record(program, outs, seconds)


class _Worker:
    """One worker subprocess and the programs it still has to check."""

    def __init__(self, seed, kind, indices, modes, checks, logdir):
        """Start ``python -m adjit.fuzz --worker`` on ``indices``."""
        self.indices, self.current, self.started = list(indices), None, None
        env = dict(os.environ)
        env["ADJIT_CHECKS"] = "1" if checks else "0"
        self.log_path = os.path.join(logdir, f"worker-{indices[0]}-{time.time_ns()}.log")
        self.log = open(self.log_path, "w")
        cmd = [sys.executable, "-m", "adjit.fuzz", "--worker", "--seed", str(seed),
               "--kind", kind, "--modes", ",".join(modes),
               "--indices", ",".join(map(str, indices))]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     text=True, bufsize=1)

    def log_tail(self, n=3000):
        """The end of the worker's stderr (for a crash report; the log may be closed
        already, after a timeout killed the worker)."""
        if not self.log.closed:
            self.log.flush()
        try:
            with open(self.log_path) as fh:
                return fh.read()[-n:]
        except OSError:
            return ""

    def kill(self):
        """Stop this worker (only the process this runner started)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


def run_isolated(seed, kind, indices, modes, jobs, timeout, checks, on_record, stop,
                 recycle=20):
    """Check ``indices`` in ``jobs`` worker processes; ``on_record`` gets every record;
    ``stop()`` returning True ends the run early. A worker checks at most ``recycle``
    programs: Numba's compiled code piles up in a process and slows it down."""
    logdir = tempfile.mkdtemp(prefix="adjit-fuzz-logs-")
    queue = list(indices)
    sel = selectors.DefaultSelector()

    def spawn(leftover=()):
        """Start a worker on the leftover indices of a finished one, else the queue."""
        queue[:0] = list(leftover)
        if queue:
            w = _Worker(seed, kind, queue[:recycle], modes, checks, logdir)
            del queue[:recycle]
            sel.register(w.proc.stdout, selectors.EVENT_READ, w)

    def lost(w, message):
        """Record the program a dead or stalled worker was checking."""
        on_record(_crash_record(seed, w.current, kind, modes, message, w.log_tail(),
                                time.time() - w.started))
        w.indices.remove(w.current)
        w.current = None

    for _ in range(jobs):
        spawn()
    try:
        while sel.get_map() and not stop():
            for key, _ in sel.select(timeout=5.0):
                w = key.data
                line = w.proc.stdout.readline()
                if line.startswith(TAG):
                    msg = json.loads(line[len(TAG):])
                    if msg["event"] == "start":
                        w.current, w.started = msg["index"], time.time()
                    else:
                        on_record(msg["record"])
                        w.indices.remove(msg["record"]["index"])
                        w.current = None
                elif line == "":                      # the worker exited
                    sel.unregister(w.proc.stdout)
                    code = w.proc.wait()
                    if w.current is not None:
                        lost(w, f"worker died (exit status {code})")
                    w.kill()
                    spawn(w.indices)
            for key in list(sel.get_map().values()):
                w = key.data
                if w.current is not None and time.time() - w.started > timeout:
                    sel.unregister(w.proc.stdout)
                    w.kill()
                    lost(w, f"timeout: no result within {timeout:g} s")
                    spawn(w.indices)
    finally:
        for key in list(sel.get_map().values()):
            key.data.kill()
        shutil.rmtree(logdir, ignore_errors=True)


def run_inprocess(seed, kind, indices, modes, on_record, stop, transforms=None):
    """Check ``indices`` in this process (tests; faster start, no crash isolation)."""
    directory = tempfile.mkdtemp(prefix="adjit-fuzz-")
    try:
        for i in indices:
            if stop():
                break
            on_record(check_one(seed, i, kind, modes, directory, transforms))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run(n, seed=0, kind="all", start=0, only=None, modes=MODES, jobs=1, timeout=600.0,
        keep_going=False, isolate=True, checks=True, on_record=None, time_limit=None,
        recycle=20):
    """Check programs ``start .. start+n-1`` (or just ``only``); return their records, in
    index order. Without ``keep_going`` the run stops at the first wrong or crash; after
    ``time_limit`` seconds it stops too (programs still being checked are dropped)."""
    indices = [only] if only is not None else list(range(start, start + n))
    records, t0 = [], time.time()

    def collect(rec):
        """Keep a record and pass it on."""
        records.append(rec)
        if on_record:
            on_record(rec)

    def stop():
        """Stop early at the first failure unless --keep-going."""
        if time_limit is not None and time.time() - t0 > time_limit:
            return True
        return not keep_going and any(is_failure(r) for r in records)

    if isolate:
        run_isolated(seed, kind, indices, modes, max(1, jobs), timeout, checks, collect, stop,
                     max(1, recycle))
    else:
        import adjit.config
        adjit.config.CHECKS = checks
        run_inprocess(seed, kind, indices, modes, collect, stop)
    return sorted(records, key=lambda r: r["index"])

