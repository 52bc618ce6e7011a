#!/usr/bin/env python3
"""Plot and summary of bench/run flashjoin-2way."""
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
VARIANTS = ["hnsm", "hpax", "fj_naive", "fj_sorted", "fj_auto"]
SWEEPS = [("projectivity", "projectivity", "projectivity (%), cardinality 1%"),
          ("cardinality", "cardinality", "result cardinality (%), projectivity 28%"),
          ("work_mem", "work_mem", "work_mem, cardinality 1%, projectivity 28%")]


def cells(sweep):
    """{x: {variant: row}} of a sweep; the projectivity sweep's 28% point
    also serves the cardinality sweep (both at 1%, 28%, the same work_mem)."""
    out = {}
    for r in rows:
        if r["sweep"] == sweep:
            out.setdefault(r[SWEEPS_KEY[sweep]], {})[r["variant"]] = r
    if sweep == "cardinality":
        for r in rows:
            if r["sweep"] == "projectivity" and r["projectivity"] == "28":
                out.setdefault(r["cardinality"], {})[r["variant"]] = r
    return out


SWEEPS_KEY = {s: k for s, k, _ in SWEEPS}


def xkey(sweep, x):
    if sweep == "work_mem":
        return float(x.rstrip("MBk"))
    return float(x)


fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
lines = ["# flashjoin-2way", ""]
lines += report.setup_section(meta)
if os.path.exists(result + "-sizes.txt"):
    lines += ["", f"- **sizes**: {open(result + '-sizes.txt').read().strip()}"]
lines += ["", f"- **query**: `{meta.get('query', '')}`", ""]
best_ratios = []
auto_ok = 0
auto_n = 0
for ax, (sweep, key, title) in zip(axes, SWEEPS):
    data = cells(sweep)
    xs = sorted(data, key=lambda x: xkey(sweep, x))
    for v in VARIANTS:
        ys = [report.num(data[x].get(v), "ms") for x in xs]
        if any(y is not None for y in ys):
            ax.plot([xkey(sweep, x) for x in xs], [y / 1000 if y else None for y in ys],
                    marker="o", label=v)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("seconds (cold)")
    if sweep != "work_mem":
        ax.set_xscale("log")
    ax.legend(fontsize=7)
    lines += [f"## Sweep: {title}", "",
              "| " + key + " | " + " | ".join(f"{v} ms (MB read)" for v in VARIANTS) +
              " | hnsm / best FlashJoin | hpax / best FlashJoin | fj_auto chose |",
              "|" + "---|" * (len(VARIANTS) + 4)]
    for x in xs:
        d = data[x]
        ms = {v: report.num(d.get(v), "ms") for v in VARIANTS}
        fj = [ms[v] for v in ("fj_naive", "fj_sorted") if ms[v]]
        best_fj = min(fj) if fj else None
        best_ordinary = min(m for m in (ms["hnsm"], ms["hpax"]) if m) if (ms["hnsm"] or ms["hpax"]) else None
        auto = d.get("fj_auto")
        if auto and best_fj and best_ordinary:
            auto_n += 1
            if ms["fj_auto"] <= 1.1 * min(best_fj, best_ordinary):
                auto_ok += 1
        cellv = []
        for v in VARIANTS:
            r = d.get(v)
            cellv.append(f"{ms[v]:,.0f} ({float(r['device_read_mb']):,.0f})" if r else "")
        r1 = f"{ms['hnsm'] / best_fj:.2f}x" if ms["hnsm"] and best_fj else ""
        r2 = f"{ms['hpax'] / best_fj:.2f}x" if ms["hpax"] and best_fj else ""
        if ms["hnsm"] and best_fj:
            best_ratios.append((sweep, x, ms["hnsm"] / best_fj))
        chose = ""
        if auto:
            chose = auto["plan"] + (f" ({auto['fetch_mode']})" if auto["fetch_mode"] else "")
        lines.append(f"| {x} | " + " | ".join(cellv) + f" | {r1} | {r2} | {chose} |")
    lines.append("")
lines += ["## Summary", "",
          f"- fj_auto (the default settings) within 1.1x of the fastest variant in {auto_ok} of {auto_n} cells.",
          ""]
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
