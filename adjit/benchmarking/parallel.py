"""Suite workloads benchmarked in several worker processes (``adjit bench --jobs N``).

A first ``--quick`` run is nearly all compiling (the primal, the hand-written gradient and
adjit's ``grad``, ``jvp`` and ``hvp`` of each workload), and compiling is one core's work.
With a worker per core the suite compiles in about half the time. Each worker is a fresh
``spawn`` process, which imports the suite, finds its workload by name and runs it exactly
as the sequential runner does; its row comes back to the parent, which keeps the suite's
order. The heaviest workloads (``COMPILE_WEIGHT`` in their module) start first, so no
core idles at the end waiting on one long compile.

Timings taken while another worker compiles share the machine with it, so ``--jobs`` is
for the smoke test; the full table is measured one workload at a time.
"""
import concurrent.futures
import importlib
import multiprocessing
import time

from .runner import WorkloadRun, error_row, run_workloads, warm_up
from .workloads import SUITE_PACKAGE, discover


def _init_worker():
    """Each worker pays Numba's start-up once, before its first workload (as the
    sequential runner's ``warm_up``)."""
    warm_up()


def _run_by_name(name, config):
    """One suite workload's row, run in a worker; (row, seconds)."""
    start = time.perf_counter()
    (workload,) = discover(f"^{name}$")
    try:
        row = WorkloadRun(workload, config).run()
    except Exception as exc:  # a harness or input-generation failure: report it, go on
        row = error_row(workload.name, exc)
    return row, time.perf_counter() - start


def compile_weight(workload):
    """The relative first-compile cost its suite module declares (``COMPILE_WEIGHT``,
    default 1): the order in which workers take workloads, heaviest first."""
    module = importlib.import_module(workload.origin)
    return float(getattr(module, "COMPILE_WEIGHT", 1.0))


def is_suite(workload):
    """Whether a worker can find ``workload`` again by name (a suite workload)."""
    return workload.origin.startswith(SUITE_PACKAGE + ".")


def run_suite(workloads, config, jobs=1, progress=None):
    """``run_workloads``, in ``jobs`` worker processes when that is possible: more than
    one job and one workload, all from the suite, and no compile times (those are
    measured in fresh processes one at a time)."""
    say = progress or (lambda msg: None)
    if (jobs > 1 and len(workloads) > 1 and not config.compile_times
            and all(is_suite(w) for w in workloads)):
        return run_in_workers(workloads, config, min(jobs, len(workloads)), say)
    return run_workloads(workloads, config, progress=say)


def run_in_workers(workloads, config, jobs, progress):
    """Rows of ``workloads`` (all from the suite), in their order, run by ``jobs`` worker
    processes, heaviest first; ``progress`` hears of each as it finishes."""
    context = multiprocessing.get_context("spawn")
    order = sorted(range(len(workloads)), key=lambda i: -compile_weight(workloads[i]))
    rows = [None] * len(workloads)
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context,
                                                initializer=_init_worker) as pool:
        futures = {pool.submit(_run_by_name, workloads[i].name, config): i for i in order}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[future]
            try:
                row, seconds = future.result()
            except Exception as exc:  # the worker died (out of memory, a crash in LLVM)
                row, seconds = error_row(workloads[i].name, exc), 0.0
            rows[i] = row
            progress(f"[{done}/{len(workloads)}] {workloads[i].name} -> {row['status']} "
                     f"({seconds:.1f}s)")
    return rows
