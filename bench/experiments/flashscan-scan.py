#!/usr/bin/env python3
"""Plot and summary of bench/run flashscan-scan."""
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
VARIANTS = ("heap", "pax_seq", "flash", "flash_opt")

cells = {}
for r in rows:
    cells.setdefault((float(r["selectivity"]), int(r["columns"])), {})[r["variant"]] = r


f = report.num


lines = ["# FlashScan vs heap and pax scans (bench/run flashscan-scan)", ""]
lines += report.setup_section(meta)
if "query" in meta:
    lines.append(f"- **query**: {meta['query']}")
sizes = result + "-sizes.txt"
if os.path.exists(sizes):
    lines.append(f"- **tables**: {open(sizes).read().strip()}")
lines += ["", "## Results", "",
          "Times in ms (cold).  heap = heap Seq Scan; pax_seq = pax without FlashScan; flash = FlashScan; "
          "flash_opt = FlashScan with selection first.  Speed-up = heap ÷ flash_opt.  Read = MB the device "
          "read; needed = MB of the needed columns' minipages; read ÷ needed for plain FlashScan.", "",
          "| selectivity | columns | heap | pax_seq | flash | flash_opt | speed-up | groups skipped (opt) | "
          "read MB heap / flash / flash_opt | needed MB | flash read ÷ needed |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
target = None
worst_bytes = 0.0
for key in sorted(cells):
    c = cells[key]
    t = {v: f(c.get(v), "ms") for v in VARIANTS}
    speed = t["heap"] / t["flash_opt"] if t["heap"] and t["flash_opt"] else None
    fo = c.get("flash_opt", {})
    skipped = f"{fo.get('groups_skipped', '')}/{fo.get('groups_scanned', '')}"
    rd = {v: f(c.get(v), "device_read_mb") for v in VARIANTS}
    needed = f(c.get("flash"), "needed_mb")
    ratio = rd["flash"] / needed if rd["flash"] is not None and needed else None
    if key[1] < 16 and ratio is not None:
        worst_bytes = max(worst_bytes, ratio)
    if key == (0.0001, 2):
        target = speed
    lines.append(
        f"| {key[0] * 100:g}% | {key[1]} | "
        + " | ".join(f"{t[v]:.0f}" if t[v] is not None else "-" for v in VARIANTS)
        + f" | {speed:.2f}x | {skipped} | "
        + " / ".join(f"{rd[v]:.0f}" if rd[v] is not None else "-" for v in ("heap", "flash", "flash_opt"))
        + f" | {needed if needed is not None else '-'} | "
        + (f"{ratio:.2f}" if ratio is not None else "-") + " |")
lines += [""]
if target is not None:
    lines.append(f"- Target (0.01% selectivity, 2 of 16 columns, at least 3x faster than heap): {target:.2f}x.")
lines.append(f"- Target (bytes read within 1.2x of the needed minipages, fewer than 16 columns): worst {worst_bytes:.2f}x.")
cols = result + "-columns.csv"
if os.path.exists(cols):
    lines += ["", "Column sizes in pax (`pax_column_sizes`): column, minipage bytes, blocks read by a scan of it:", "", "```"]
    lines += open(cols).read().strip().splitlines() + ["```"]
open(result + ".md", "w").write("\n".join(lines) + "\n")

fig, axes = plt.subplots(1, len({k[0] for k in cells}), figsize=(16, 4), sharey=True)
if not hasattr(axes, "__len__"):
    axes = [axes]
for ax, s in zip(axes, sorted({k[0] for k in cells})):
    ks = sorted(k[1] for k in cells if k[0] == s)
    for v in VARIANTS:
        ax.plot(ks, [f(cells[(s, k)].get(v), "ms") for k in ks], marker="o", label=v)
    ax.set_title(f"selectivity {s * 100:g}%")
    ax.set_xlabel("columns read (of 16)")
    ax.set_xscale("log", base=2)
axes[0].set_ylabel("ms (cold)")
axes[0].legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)
