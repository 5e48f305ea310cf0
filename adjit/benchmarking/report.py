"""Output of benchmark rows: terminal table, JSON, CSV and a bar chart of the ratios."""
import csv
import json
import math

from .runner import ROW_KEYS

# (header, row key, formatter name)
TABLE_COLUMNS = (
    ("name", "name", "text"),
    ("primal", "primal_s", "time"),
    ("grad", "grad_s", "time"),
    ("ratio", "ratio", "ratio"),
    ("hand", "hand_ratio", "ratio"),
    ("jvp", "jvp_ratio", "ratio"),
    ("hvp", "hvp_ratio", "ratio"),
    ("1st grad", "grad_compile_s", "time"),
    ("primal jit", "primal_compile_s", "time"),
    ("Enzyme", "ref_enzyme", "text"),
    ("status", "status", "text"),
)


#: with ``adjit bench --compile``: first derivatives, each from a fresh process
COMPILE_COLUMNS = (
    ("primal jit", "primal_first_s", "time"),
    ("1st grad", "grad_first_s", "time"),
    ("warm grad", "warm_first_s", "time"),
    ("1st jvp", "jvp_first_s", "time"),
    ("1st hvp", "hvp_first_s", "time"),
    ("cached grad", "cached_first_s", "time"),
)


def columns_for(rows):
    """The table's columns: the fresh-process compile columns replace the in-process
    ones when they were measured."""
    if not any(r.get("grad_first_s") is not None for r in rows):
        return TABLE_COLUMNS
    keep = [c for c in TABLE_COLUMNS if c[1] not in ("grad_compile_s", "primal_compile_s")]
    return tuple(keep[:-2]) + COMPILE_COLUMNS + tuple(keep[-2:])


def fmt_time(s):
    """Seconds in a readable unit (ns, us, ms, s); '-' for None."""
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_ratio(r):
    """A ratio with two decimals; '-' for None."""
    if r is None:
        return "-"
    return f"{r:.2f}" if r >= 0.01 else f"{r:.1e}"


def _cell(row, key, kind):
    """Formatted cell text for one column of one row."""
    v = row.get(key)
    if kind == "time":
        return fmt_time(v)
    if kind == "ratio":
        return fmt_ratio(v)
    return "-" if v is None else str(v)


def format_table(rows, max_status=60):
    """A plain-text table of the rows; ratios are gradient (or jvp/hvp) time / primal time."""
    columns = columns_for(rows)
    header = [c[0] for c in columns]
    body = []
    for r in rows:
        cells = [_cell(r, key, kind) for _, key, kind in columns]
        if len(cells[-1]) > max_status:
            cells[-1] = cells[-1][:max_status - 3] + "..."
        body.append(cells)
    widths = [max(len(x) for x in col) for col in zip(header, *body)]
    right = {i for i, c in enumerate(columns) if c[2] in ("time", "ratio")}

    def line(cells):
        """One row, numbers right-aligned."""
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(header), line(["-" * w for w in widths])] + [line(c) for c in body]
    notes = []
    for r in rows:
        status = str(r.get("status"))
        if status == "wrong" and r.get("error"):
            notes.append(f"  {r['name']}: wrong: {r['error']}")
        elif len(status) > max_status:
            notes.append(f"  {r['name']}: {status}")
        notes += [f"  {r['name']}: {k.split('_')[0]} {r[k]}"
                  for k in ("hand_status", "jvp_status", "hvp_status")
                  if r.get(k) not in (None, "ok", "unavailable")]
    if notes:
        out += ["", "notes:"] + notes
    return "\n".join(out)


def format_machine(machine):
    """One line describing where the numbers come from."""
    return (f"{machine.get('cpu')} ({machine.get('cores')} cores), {machine.get('platform')}, "
            f"python {machine.get('python')}, numba {machine.get('numba')}, "
            f"numpy {machine.get('numpy')}")


def _clean(v):
    """JSON-safe value: NaN/inf become None."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_json(path, machine, rows, config=None):
    """Write ``{"machine": ..., "config": ..., "rows": [...]}`` to ``path``."""
    doc = {"machine": machine,
           "rows": [{k: _clean(r.get(k)) for k in ROW_KEYS} for r in rows]}
    if config is not None:
        doc["config"] = dict(config)
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")


def write_csv(path, rows):
    """Write the rows as CSV with a header of ``ROW_KEYS`` (lists joined by spaces)."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(ROW_KEYS))
        writer.writeheader()
        for r in rows:
            out = {}
            for k in ROW_KEYS:
                v = _clean(r.get(k))
                if isinstance(v, (list, tuple)):
                    v = " ".join(str(x) for x in v)
                out[k] = "" if v is None else v
            writer.writerow(out)


def write_plot(path, rows, machine=None):
    """Bar chart (log scale) of gradient/hand/jvp/hvp ratios per workload, saved to ``path``.

    Needs matplotlib (the ``plot`` extra); raises RuntimeError with install advice otherwise.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install 'adjit[plot]' "
                           "(or pip install matplotlib)") from None
    series = [("adjit grad", "ratio"), ("hand-written", "hand_ratio"),
              ("jvp", "jvp_ratio"), ("hvp", "hvp_ratio")]
    series = series[:1] + [s for s in series[1:] if any(r.get(s[1]) is not None for r in rows)]
    names = [r["name"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(rows) + 2), 4.5))
    width = 0.8 / max(1, len(series))
    for k, (label, key) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(rows))]
        ys = [r.get(key) or 0.0 for r in rows]
        ax.bar(xs, ys, width, label=label)
    ref_label = "Enzyme (upper end)"
    for i, r in enumerate(rows):
        ref = r.get("ref_enzyme")
        if ref:
            hi = float(str(ref).split("-")[-1])
            ax.plot([i - 0.45, i + 0.45], [hi, hi], color="k", lw=1.5, label=ref_label)
            ref_label = None
        if r.get("ratio") is None:
            x0 = i - (len(series) - 1) / 2 * width
            ax.text(x0, 1.0, str(r.get("status", "")).split(":")[0], rotation=90,
                    ha="center", va="bottom", fontsize=7, color="gray")
    ax.axhline(1.0, color="gray", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("time / primal time")
    title = "adjit benchmark ratios"
    if machine:
        title += f"\n{machine.get('cpu')}, numba {machine.get('numba')}"
    ax.set_title(title, fontsize=9)
    if series or any(r.get("ref_enzyme") for r in rows):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
