#!/usr/bin/env python3
"""Plot and summary of bench/run flashscan-small-writes."""
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
txns = int(meta.get("args", "").split("--txns")[1].split()[0]) if "--txns" in meta.get("args", "") else 20000
by = {(r["table"], r["phase"]): r for r in rows}


def num(t, phase, key):
    v = by[(t, phase)][key]
    return float(v) if v not in ("", None) else None


def growth(t, phase, prev):
    return num(t, phase, "size_bytes") - num(t, prev, "size_bytes")


phases = [("insert", "loaded"), ("update", "insert")]
fig, axes = plt.subplots(1, 3, figsize=(12, 4))
for ax, (title, fn) in zip(axes, [
        ("table growth, bytes per transaction", lambda t, p, prev: growth(t, p, prev) / txns),
        ("WAL, bytes per transaction", lambda t, p, prev: num(t, p, "wal_bytes") / txns),
        ("tps", lambda t, p, prev: num(t, p, "tps"))]):
    for i, t in enumerate(("heap", "pax")):
        vals = [fn(t, p, prev) for p, prev in phases]
        xs = [j + (i - 0.5) * 0.38 for j in range(len(phases))]
        ax.bar(xs, vals, width=0.38, label=t)
        for x, v in zip(xs, vals):
            ax.annotate(f"{v:,.0f}", (x, v), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(phases)), [p for p, _ in phases])
    ax.set_title(title)
    ax.legend()
fig.suptitle("Single-row transactions: heap vs pax (delta page)")
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# flashscan-small-writes: single-row transactions on pax (the delta page) and heap", "",
      "Command: `bench/run flashscan-small-writes " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "",
       "| table | phase | tps | ms (statement, scan) | size | WAL | groups | delta pages |",
       "|---|---|---|---|---|---|---|---|"]
for r in rows:
    md.append(f"| {r['table']} | {r['phase']} | {r['tps']} | {r['ms']} | {int(r['size_bytes']):,} | "
              f"{int(float(r['wal_bytes'])):,} | {r['groups']} | {r['delta_pages']} |")
md += ["", "## Per transaction", "", "| phase | heap growth B | pax growth B | heap WAL B | pax WAL B | pax/heap tps |",
       "|---|---|---|---|---|---|"]
for p, prev in phases:
    md.append(f"| {p} | {growth('heap', p, prev) / txns:,.1f} | {growth('pax', p, prev) / txns:,.1f} | "
              f"{num('heap', p, 'wal_bytes') / txns:,.0f} | {num('pax', p, 'wal_bytes') / txns:,.0f} | "
              f"{num('pax', p, 'tps') / num('heap', p, 'tps'):.2f} |")
md += ["", "## Scans (count and sum over every row, warm, best of 3)", "",
       "| table | before VACUUM ms | after VACUUM ms | VACUUM ms | size after VACUUM |", "|---|---|---|---|---|"]
for t in ("heap", "pax"):
    md.append(f"| {t} | {num(t, 'scan_before_vacuum', 'ms'):,.1f} | {num(t, 'scan_after_vacuum', 'ms'):,.1f} | "
              f"{num(t, 'vacuum', 'ms'):,.0f} | {int(num(t, 'vacuum', 'size_bytes')):,} |")
md += ["", "Raw data: `flashscan-small-writes.csv`; plot: `flashscan-small-writes.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
