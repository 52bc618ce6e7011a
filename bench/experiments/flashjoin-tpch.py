#!/usr/bin/env python3
"""Summary and plot of bench/run flashjoin-tpch."""
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
VARIANTS = ["heap", "hpax", "flashjoin", "default", "duckdb_1", "duckdb"]
by = {(r["query"], r["variant"]): r for r in rows}
queries = [q for q in ("q3", "q10") if any(k[0] == q for k in by)]

lines = ["# flashjoin-tpch", ""] + report.setup_section(meta) + [""]
lines += ["| query | " + " | ".join(f"{v} ms" for v in VARIANTS) +
          " | heap / flashjoin | hpax / flashjoin | same rows | plans (heap; hpax; flashjoin; default) |",
          "|" + "---|" * (len(VARIANTS) + 5)]
fig, ax = plt.subplots(figsize=(8, 4))
for qi, q in enumerate(queries):
    ms = {v: report.num(by.get((q, v)), "ms") for v in VARIANTS}
    md5s = {by[(q, v)]["rows_md5"] for v in ("heap", "hpax", "flashjoin", "default") if (q, v) in by}
    r1 = f"{ms['heap'] / ms['flashjoin']:.2f}x" if ms["heap"] and ms["flashjoin"] else ""
    r2 = f"{ms['hpax'] / ms['flashjoin']:.2f}x" if ms["hpax"] and ms["flashjoin"] else ""
    plans = "; ".join(by[(q, v)]["plan"] for v in ("heap", "hpax", "flashjoin", "default") if (q, v) in by)
    lines.append(f"| {q} | " + " | ".join(f"{ms[v]:,.0f}" if ms[v] else "" for v in VARIANTS) +
                 f" | {r1} | {r2} | {'yes' if len(md5s) == 1 else 'NO'} | {plans} |")
    for vi, v in enumerate(VARIANTS):
        if ms[v]:
            ax.bar(qi + (vi - 2.5) * 0.13, ms[v] / 1000, width=0.13, label=v if qi == 0 else None)
ax.set_xticks(range(len(queries)))
ax.set_xticklabels(queries)
ax.set_ylabel("seconds (cold, best of runs)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
