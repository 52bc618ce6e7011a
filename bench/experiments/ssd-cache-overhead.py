#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-overhead."""
import os
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
tps = {c: [float(r["tps"]) for r in rows if r["config"] == c] for c in ("stock", "ssd_cache")}
mean = {c: statistics.mean(v) for c, v in tps.items() if v}
ratio = mean["ssd_cache"] / mean["stock"]

fig, ax = plt.subplots(figsize=(7, 4.2))
for i, c in enumerate(("stock", "ssd_cache")):
    ax.scatter([i] * len(tps[c]), tps[c], color="tab:blue" if i == 0 else "tab:green", zorder=3)
    ax.bar(i, mean[c], color="lightgray", zorder=1)
    ax.annotate(f"{mean[c]:,.0f}", (i, mean[c]), ha="center", va="bottom")
ax.set_xticks([0, 1], ["stock PostgreSQL", "with ssd_cache (tac)"])
ax.set_ylabel("tps (dots: rounds, bars: mean)")
ax.set_title(f"All reads hit shared_buffers: ssd_cache/stock = {ratio:.3f}")
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-overhead: cost of ssd_cache when everything hits shared_buffers", "",
      "Command: `bench/run ssd-cache-overhead " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "", "| round | config | tps | latency ms |", "|---|---|---|---|"]
for r in rows:
    md.append(f"| {r['round']} | {r['config']} | {float(r['tps']):,.1f} | {r['latency_ms']} |")
md += ["", "## Conclusions", "",
       f"- Mean tps: stock {mean['stock']:,.1f}, with ssd_cache {mean['ssd_cache']:,.1f}: ratio {ratio:.3f} "
       f"(round-to-round spread: stock {min(tps['stock']):,.0f}-{max(tps['stock']):,.0f}, "
       f"ssd_cache {min(tps['ssd_cache']):,.0f}-{max(tps['ssd_cache']):,.0f}).",
       f"- Target (issue 4): within 2% of stock: {'met' if ratio >= 0.98 else 'NOT met'}.",
       "", "Raw data: `ssd-cache-overhead.csv`; plot: `ssd-cache-overhead.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
