#!/usr/bin/env python3
"""Summary and plot of bench/run pax-index-fetch."""
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
VARIANTS = ["heap", "pax_all", "pax_needed"]
best = {}
for r in rows:
    key = (r["columns"], r["variant"])
    best[key] = min(best.get(key, float("inf")), float(r["ms"]))
cols = sorted({r["columns"] for r in rows}, key=int)
lines = ["# pax-index-fetch", ""] + report.setup_section(meta) + [
    "", "| columns fetched | heap ms | pax, every column ms | pax, needed columns ms | pax needed / heap |",
    "|---|---|---|---|---|"]
fig, ax = plt.subplots(figsize=(6, 4))
for i, c in enumerate(cols):
    ms = [best.get((c, v)) for v in VARIANTS]
    lines.append(f"| {c} | " + " | ".join(f"{m:,.1f}" for m in ms) + f" | {ms[2] / ms[0]:.2f}x |")
    for j, (v, m) in enumerate(zip(VARIANTS, ms)):
        ax.bar(i + (j - 1) * 0.27, m, width=0.27, label=v if i == 0 else None)
ax.set_xticks(range(len(cols)))
ax.set_xticklabels([f"{c} columns" for c in cols])
ax.set_ylabel("ms (best, warm)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
