#!/usr/bin/env python3
"""Summary and plot of bench/run pax-tpch."""
import math
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
ms = {(r["indexes"], r["query"], r["variant"]): r["ms"] for r in rows}
md5 = {(r["indexes"], r["query"], r["variant"]): r["rows_md5"] for r in rows}
queries = sorted({r["query"] for r in rows})
states = [s for s in ("keys", "extra") if any(k[0] == s for k in ms)]
TITLE = {"keys": "primary keys only", "extra": "with the extra indexes"}

lines = ["# pax-tpch", ""] + report.setup_section(meta)
if os.path.exists(result + "-sizes.txt"):
    lines += ["", "Sizes (tables with their indexes, before the extra indexes): " +
              open(result + "-sizes.txt").read().strip()]
fig, axes = plt.subplots(len(states), 1, figsize=(9, 3.2 * len(states)), squeeze=False)
for si, state in enumerate(states):
    lines += ["", f"## {TITLE[state]}", "",
              "| query | heap ms | pax ms | heap / pax (speed-up) | same rows | DuckDB ms |",
              "|---|---|---|---|---|---|"]
    logs, slower, labels, speedups = [], [], [], []
    for q in queries:
        h, p = ms.get((state, q, "heap")), ms.get((state, q, "pax"))
        d = ms.get(("duckdb", q, "duckdb"), "")
        if h is None or p is None:
            continue
        same = "yes" if md5.get((state, q, "heap")) and \
            md5.get((state, q, "heap")) == md5.get((state, q, "pax")) else "NO"
        if "timeout" in (h, p):
            lines.append(f"| {q} | {h} | {p} | | (not compared) | {d} |")
            continue
        h, p = float(h), float(p)
        sp = h / p
        logs.append(math.log(sp))
        labels.append(q)
        speedups.append(sp)
        if sp < 1 / 1.2:
            slower.append(f"{q} ({1 / sp:.2f}x slower)")
        lines.append(f"| {q} | {h:,.0f} | {p:,.0f} | {sp:.2f}x | {same} | {d} |")
    if logs:
        lines += ["", f"Geometric mean speed-up of pax over heap: **{math.exp(sum(logs) / len(logs)):.2f}x** "
                  f"over {len(logs)} queries; slower than 1.2x heap: {', '.join(slower) or 'none'}."]
    ax = axes[si][0]
    ax.bar(range(len(speedups)), speedups)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, fontsize=7)
    ax.set_ylabel("heap ms / pax ms")
    ax.set_title(TITLE[state], fontsize=9)
lines += ["", "Targets (the pax issue): no query slower than 1.2x heap with default settings, Q1 and Q6 "
          "at least 2.5x faster than heap, the geometric mean ahead of heap."]
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
