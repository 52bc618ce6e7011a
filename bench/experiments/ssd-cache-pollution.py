#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-pollution."""
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
phases = ["clean", "seqscan", "random", "clean-after"]
policies = [p for p in ("tac", "clock") if any(r["policy"] == p for r in rows)]
by = {(r["policy"], r["phase"]): r for r in rows}
colors = {"tac": "tab:green", "clock": "tab:orange"}

fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
width = 0.38
for k, (ax, col, label) in enumerate(zip(axes, ("oltp_hit_ratio", "tps"),
                                          ("hit ratio of the OLTP relations", "OLTP tps"))):
    for i, p in enumerate(policies):
        vals = [float(by[(p, ph)][col] or 0) if (p, ph) in by else 0 for ph in phases]
        bars = ax.bar([x + (i - 0.5) * width for x in range(len(phases))], vals, width, color=colors[p], label=p)
        for b, v in zip(bars, vals):
            ax.annotate(f"{v:.2f}" if k == 0 else f"{v:,.0f}", (b.get_x() + b.get_width() / 2, v),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(phases)), ["alone", "+ sequential\nscans", "+ random\none-touch scans", "alone\nagain"])
    ax.set_title(label)
    ax.legend()
axes[0].set_ylim(0, 1.05)
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-pollution: OLTP hit ratio under concurrent scans", "",
      "Command: `bench/run ssd-cache-pollution " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "",
       "| policy | phase | OLTP tps | OLTP hit ratio | OLTP blocks cached | cold blocks cached | admissions | refusals | sequential reads |",
       "|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    md.append(f"| {r['policy']} | {r['phase']} | {float(r['tps']):,.1f} | {r['oltp_hit_ratio']} | "
              f"{r['oltp_cached_blocks']} | {r['cold_cached_blocks']} | {r['admissions']} | "
              f"{r['refusals']} | {r['sequential_reads']} |")
md += ["", "## Conclusions", ""]
def hit(p, ph):
    r = by.get((p, ph))
    return float(r["oltp_hit_ratio"]) if r and r["oltp_hit_ratio"] else None


# The reference is the scan-free phase before the scans (the cache is full by
# then); the phase after shows whether the damage outlasts the scans.
for p in policies:
    before = hit(p, "clean")
    if before is None:
        continue
    for ph in ("seqscan", "random"):
        h = hit(p, ph)
        if h is not None:
            md.append(f"- {p}, {ph}: OLTP hit ratio {h:.3f} against {before:.3f} before the scans "
                      f"({(h - before) / before:+.1%}); {by[(p, ph)]['cold_cached_blocks']} cold pages cached.")
    after = hit(p, "clean-after")
    if after is not None:
        md.append(f"- {p}, after the scans: OLTP hit ratio {after:.3f} ({(after - before) / before:+.1%} "
                  f"against before); {by[(p, 'clean-after')]['cold_cached_blocks']} cold pages still cached.")
t = [hit("tac", ph) for ph in ("clean", "seqscan", "random", "clean-after")]
if all(x is not None for x in t):
    worst = min(t[1:])
    ok = worst >= 0.9 * t[0]
    md.append(f"- Target (issue 4): tac keeps its hit ratio within 10% of the scan-free run: "
              f"{'met' if ok else 'NOT met'} (worst {worst:.3f} vs {t[0]:.3f}).")
c = [hit("clock", ph) for ph in ("clean", "random", "clean-after")]
if all(x is not None for x in c):
    trend = ("and does not recover afterwards" if c[2] <= c[1] else
             "and recovers only partly afterwards" if c[2] < c[0] else "and recovers afterwards")
    md.append(f"- clock loses hit ratio to the random one-touch scans {trend} "
              f"({c[0]:.3f} -> {c[1]:.3f} -> {c[2]:.3f}); sequential scans it refuses like tac.")
md += ["", "Raw data: `ssd-cache-pollution.csv`; plot: `ssd-cache-pollution.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
