#!/usr/bin/env python3
"""Summary and plot of bench/run flashjoin-star."""
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
VARIANTS = ["hnsm", "hpax", "flashjoin", "default"]
by = {(r["ways"], r["variant"]): r for r in rows}
ways = sorted({r["ways"] for r in rows}, key=int)

lines = ["# flashjoin-star", ""] + report.setup_section(meta)
if os.path.exists(result + "-sizes.txt"):
    lines += ["", f"- **sizes**: {open(result + '-sizes.txt').read().strip()}"]
lines += ["", f"- **query**: `{meta.get('query', '')}`", "",
          "| ways | " + " | ".join(f"{v} ms (MB read, temp MB)" for v in VARIANTS) +
          " | hnsm / flashjoin | hpax / flashjoin | default chose |",
          "|" + "---|" * (len(VARIANTS) + 4)]
fig, ax = plt.subplots(figsize=(7, 4))
for v in VARIANTS:
    ax.plot([int(w) for w in ways], [report.num(by.get((w, v)), "ms") / 1000 if by.get((w, v)) else None
                                     for w in ways], marker="o", label=v)
for w in ways:
    ms = {v: report.num(by.get((w, v)), "ms") for v in VARIANTS}
    cells = [f"{ms[v]:,.0f} ({float(by[(w, v)]['device_read_mb']):,.0f}, {float(by[(w, v)]['temp_mb']):,.0f})"
             if by.get((w, v)) else "" for v in VARIANTS]
    r1 = f"{ms['hnsm'] / ms['flashjoin']:.2f}x" if ms["hnsm"] and ms["flashjoin"] else ""
    r2 = f"{ms['hpax'] / ms['flashjoin']:.2f}x" if ms["hpax"] and ms["flashjoin"] else ""
    chose = by[(w, "default")]["plan"] if by.get((w, "default")) else ""
    lines.append(f"| {w} | " + " | ".join(cells) + f" | {r1} | {r2} | {chose} |")
ax.set_xlabel("relations joined")
ax.set_ylabel("seconds (cold)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
