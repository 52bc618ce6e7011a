#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-restart."""
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
steady = float(rows[0]["steady_tps"])
series = {}
for r in rows:
    series.setdefault(r["restart"], []).append((float(r["second"]), float(r["tps"])))


def time_to(points, level):
    for sec, tps in points:
        if tps >= level:
            return sec
    return None


fig, ax = plt.subplots(figsize=(9, 4.5))
labels = {"persistent": "restart with the persistent cache", "empty": "restart with an empty cache"}
colors = {"persistent": "tab:green", "empty": "tab:gray"}
for mode, pts in series.items():
    ax.plot([s for s, _ in pts], [t for _, t in pts], marker="o", color=colors[mode], label=labels[mode])
ax.axhline(steady, color="black", linestyle="--", label=f"steady state before restart ({steady:,.0f} tps)")
ax.axhline(0.9 * steady, color="black", linestyle=":", label="90% of steady state")
ax.set_xlabel("seconds after restart")
ax.set_ylabel("tps (5-second intervals)")
ax.set_title("Throughput after a restart, HDD tier + ssd_cache (tac, 25%)")
ax.legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-restart: warm restart with the persistent cache", "",
      "Command: `bench/run ssd-cache-restart " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "", f"Steady state before the restarts: {steady:,.1f} tps.", "",
       "| restart | pages loaded | preparation ms | seconds to 90% of steady state | mean tps, first 30 s |",
       "|---|---|---|---|---|"]
res = {}
for mode, pts in series.items():
    first = [r for r in rows if r["restart"] == mode][0]
    t90 = time_to(pts, 0.9 * steady)
    res[mode] = t90
    early = [t for s, t in pts if s <= 30]
    md.append(f"| {mode} | {first['cached_pages'] or 0} | {first['preparation_ms'] or '-'} | "
              f"{t90 if t90 is not None else 'not reached in ' + str(int(pts[-1][0])) + ' s'} | "
              f"{sum(early) / max(len(early), 1):,.1f} |")
md += ["", "Per-5-second tps:", ""]
for mode, pts in series.items():
    md.append(f"- {mode}: " + " ".join(f"{t:.0f}" for _, t in pts))
md += ["", "## Conclusions", ""]
p, e = res.get("persistent"), res.get("empty")
md.append(f"- With the persistent cache the server is back at 90% of its steady state after "
          f"{p if p is not None else 'more than the measured'} s; with an empty cache after "
          f"{e if e is not None else 'more than the measured'} s.")
md += ["", "Raw data: `ssd-cache-restart.csv`; plot: `ssd-cache-restart.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
