#!/usr/bin/env python3
"""Summary of bench/run ssd-cache-admission."""
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
name = os.path.basename(result)
rows = report.read_csv(result)
meta = report.read_meta(result)

fig, ax = plt.subplots(figsize=(8, 4.2))
x = range(len(rows))
ax.bar([i - 0.2 for i in x], [float(r["admissions_per_s"]) for r in rows], 0.4, label="admissions/s")
ax.bar([i + 0.2 for i in x], [float(r["refusals_per_s"]) for r in rows], 0.4, label="refusals/s")
ax.set_xticks(list(x), [r["config"] for r in rows])
ax.set_ylabel("per second")
ax.legend()
ax.set_title("Admissions into a full cache, data on the SSD tier")
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-admission: admission throughput into a full cache", "",
      f"Command: `bench/run {name} " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "",
       "| config | tps | cache misses/s | admissions/s | refusals/s | evictions/s | directory writes/s | slots used |",
       "|---|---|---|---|---|---|---|---|"]
for r in rows:
    md.append(f"| {r['config']} | {float(r['tps']):,.0f} | {r['misses_per_s']} | {r['admissions_per_s']} "
              f"| {r['refusals_per_s']} | {r['evictions_per_s']} | {r['dir_writes_per_s']} | {r['used_slots']} |")
md += ["", "## Conclusions", ""]
for r in rows:
    miss = float(r["misses_per_s"]) or 1
    md.append(f"- {r['config']}: {float(r['admissions_per_s']) / miss:.0%} of the cache misses admitted, "
              f"{float(r['refusals_per_s']) / miss:.0%} refused, "
              f"{float(r['dir_writes_per_s']) / max(float(r['evictions_per_s']), 1):.2f} directory writes per eviction.")
md += ["", f"Raw data: `{name}.csv`; plot: `{name}.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
