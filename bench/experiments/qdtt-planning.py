#!/usr/bin/env python3
"""Plot and summary of bench/run qdtt-planning."""
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
scripts = ["select-only", "tpcb"]
tps = {(s, q): [float(r["tps"]) for r in rows if r["script"] == s and r["qdtt"] == q]
       for s in scripts for q in ("on", "off")}
mean = {k: statistics.mean(v) for k, v in tps.items() if v}
ratio = {s: mean[(s, "on")] / mean[(s, "off")] for s in scripts}
# per round: the on run over the off run of the same round
per_round = {s: [a / b for a, b in zip(tps[(s, "on")], tps[(s, "off")])] for s in scripts}

fig, ax = plt.subplots(figsize=(7, 4.2))
for i, s in enumerate(scripts):
    ax.scatter([i] * len(per_round[s]), per_round[s], zorder=3)
    ax.bar(i, ratio[s], color="lightgray", zorder=1)
    ax.annotate(f"{ratio[s]:.3f}", (i, ratio[s]), ha="center", va="bottom")
ax.axhline(0.95, color="tab:red", linewidth=0.8, label="target 0.95")
ax.set_xticks(range(len(scripts)), scripts)
ax.set_ylabel("tps with the model / without (dots: rounds)")
ax.set_title("Planning with a QDTT model, simple protocol")
ax.legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# qdtt-planning: what planning with a QDTT model costs", "",
      "Command: `bench/run qdtt-planning " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "", "| script | mean tps, qdtt.enable = on | mean tps, off | ratio | per-round ratios |",
       "|---|---|---|---|---|"]
for s in scripts:
    md.append(f"| {s} | {mean[(s, 'on')]:,.0f} | {mean[(s, 'off')]:,.0f} | {ratio[s]:.3f} | "
              + ", ".join(f"{x:.3f}" for x in per_round[s]) + " |")
md += ["", "## Conclusions", ""]
for s in scripts:
    md.append(f"- {s}: the model costs {100 * (1 - ratio[s]):.1f}% of the throughput "
              f"(target: at most 5%: {'met' if ratio[s] >= 0.95 else 'NOT met'}).")
md += ["", "Model used: `qdtt-planning-model.txt`. Raw data: `qdtt-planning.csv`; plot: `qdtt-planning.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
