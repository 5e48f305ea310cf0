"""Summaries of a fuzzing run: the outcome table, error messages by count, failure details."""
from collections import Counter, defaultdict

from .check import STATUSES

FAILURES = ("wrong", "crash")


def counts(records, modes):
    """{mode: Counter(status)} over the records."""
    table = {m: Counter() for m in modes}
    for r in records:
        for m, o in r["outcomes"].items():
            if m in table:
                table[m][o["status"]] += 1
    return table


def by_message(records, status):
    """{message: (Counter(mode), first (seed, index, kind))} for one status."""
    out = defaultdict(lambda: [Counter(), None])
    for r in records:
        for m, o in r["outcomes"].items():
            if o["status"] == status:
                key = o["message"] or (o["detail"].splitlines() or ["?"])[0]
                entry = out[key]
                entry[0][m] += 1
                if entry[1] is None:
                    entry[1] = (r["seed"], r["index"], r["kind"])
    return sorted(out.items(), key=lambda kv: -sum(kv[1][0].values()))


def table_text(records, modes):
    """The outcome table: one row per mode, one column per status."""
    t = counts(records, modes)
    cols = [s for s in STATUSES if s != "invalid" or any(t[m][s] for m in modes)]
    width = max(len(c) for c in cols) + 2
    lines = ["mode  " + "".join(c.rjust(width) for c in cols)]
    for m in modes:
        lines.append(f"{m:<6}" + "".join(str(t[m][c]).rjust(width) for c in cols))
    return "\n".join(lines)


def messages_text(records, status, modes, limit=40):
    """Error messages of one status by count, with the modes and a first example."""
    lines = []
    for msg, (per_mode, (seed, index, kind)) in by_message(records, status)[:limit]:
        total = sum(per_mode.values())
        modes_s = " ".join(f"{m}={per_mode[m]}" for m in modes if per_mode[m])
        lines.append(f"{total:5d}  [{modes_s}]  {msg}   (e.g. --seed {seed} --kind {kind} "
                     f"--only {index})")
    return "\n".join(lines)


def timing_text(records, elapsed):
    """Wall time, time per program and per mode, and the slowest programs."""
    if not records:
        return "no programs"
    per_mode = defaultdict(list)
    for r in records:
        for m, o in r["outcomes"].items():
            per_mode[m].append(o["seconds"])
    if elapsed is None:                   # a summary of a log: no wall time known
        elapsed = sum(r["seconds"] for r in records)
        lines = [f"{len(records)} programs, {elapsed:.0f} s of checking in total "
                 f"({elapsed / len(records):.1f} s per program)"]
    else:
        lines = [f"{len(records)} programs in {elapsed:.0f} s wall "
                 f"({elapsed / len(records):.1f} s per program; "
                 f"checking time {sum(r['seconds'] for r in records) / len(records):.1f} s "
                 f"mean)"]
    lines.append("mean seconds per mode (compile + check): " + ", ".join(
        f"{m} {sum(v) / len(v):.1f}" for m, v in per_mode.items()))
    slow = sorted(records, key=lambda r: -r["seconds"])[:3]
    lines.append("slowest: " + ", ".join(
        f"{r['kind']} #{r['index']} {r['seconds']:.0f} s" for r in slow))
    return "\n".join(lines)


def failure_text(rec, mode, traceback_lines=30):
    """Everything needed to reproduce one wrong or crashing mode of a program."""
    o = rec["outcomes"][mode]
    head = (f"=== {o['status'].upper()} {mode}: seed {rec['seed']}, program {rec['index']} "
            f"({rec['kind']}) ===")
    lines = [head]
    if o["status"] == "wrong":
        lines.append(o["detail"])
        if o["expected"] or o["got"]:
            lines += [f"  expected (finite differences / reference): {o['expected']}",
                      f"  got (adjit):                                {o['got']}"]
    else:
        lines.append(o["message"])
        tb = o["detail"].rstrip().splitlines()[-traceback_lines:]
        lines += ["  " + ln for ln in tb]
    lines += [f"reproduce: python -m adjit.fuzz --seed {rec['seed']} --kind {rec['kind']} "
              f"--only {rec['index']} --modes {mode}",
              "--- program ---", rec["source"].rstrip(), "--- arguments ---", rec["args"], ""]
    return "\n".join(lines)


def failures(records):
    """(record, mode) for every wrong or crashing mode."""
    return [(r, m) for r in records for m, o in r["outcomes"].items()
            if o["status"] in FAILURES]


def summary_text(records, modes, elapsed):
    """The end-of-run summary printed by the CLI."""
    parts = ["", table_text(records, modes), "", timing_text(records, elapsed)]
    for status in ("unsupported", "crash", "invalid"):
        text = messages_text(records, status, modes)
        if text:
            parts += ["", f"{status} by message:", text]
    return "\n".join(parts)


def markdown(records, modes, elapsed, command):
    """The ``--out`` findings report: summary, messages and every failure in full."""
    parts = ["# adjit fuzz findings", "", f"command: `{command}`", "", "```",
             table_text(records, modes), "", timing_text(records, elapsed), "```"]
    for status in ("crash", "unsupported", "invalid"):
        text = messages_text(records, status, modes, limit=200)
        if text:
            parts += ["", f"## {status} by message", "", "```", text, "```"]
    fails = failures(records)
    parts += ["", f"## failures ({len(fails)})", ""]
    for rec, mode in fails:
        parts += ["```", failure_text(rec, mode), "```", ""]
    return "\n".join(parts)
