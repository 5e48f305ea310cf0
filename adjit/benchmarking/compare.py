"""``adjit bench --compare OLD.json``: each ratio of this run beside the same ratio of an
earlier ``--json`` run, so a regression shows in one command.

The change is ``new / old - 1`` (``+25%``: the derivative now costs a quarter more per
primal call). Workloads or ratios missing from either run show ``-``. Ratios are
compared, not times: they are what the table reports, and they travel between machines
better than times do.
"""
import json

from .report import fmt_ratio

#: (column header, row key) of the ratios compared
COMPARED = (("grad", "ratio"), ("jvp", "jvp_ratio"), ("hvp", "hvp_ratio"))


class CompareError(ValueError):
    """The file given to ``--compare`` is not a JSON report of ``adjit bench``."""


def load_rows(path):
    """``{workload name: row}`` of an ``adjit bench --json`` report."""
    try:
        with open(path) as fh:
            doc = json.load(fh)
        return {row["name"]: row for row in doc["rows"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"cannot read {path} as an adjit bench --json report: {exc}")


def change(old, new):
    """``new`` against ``old`` as a signed percentage, or '-' when either is missing."""
    if old is None or new is None or old <= 0:
        return "-"
    return f"{100.0 * (new / old - 1.0):+.0f}%"


def format_comparison(rows, old_rows):
    """A table: per workload and ratio, the old value, the new one and the change."""
    header = ["name"] + [f"{h} old  new  change" for h, _ in COMPARED]
    lines = []
    for row in rows:
        old = old_rows.get(row["name"], {})
        cells = [row["name"]]
        for _, key in COMPARED:
            before, after = old.get(key), row.get(key)
            cells.append(f"{fmt_ratio(before)}  {fmt_ratio(after)}  {change(before, after)}")
        lines.append(cells)
    widths = [max(len(r[i]) for r in [header] + lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in [header] + lines)
