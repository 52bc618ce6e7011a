#!/usr/bin/env python3
"""Plot and summary of bench/run pax-logical-wal."""
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
by = {(r["level"], r["table"], r["phase"]): r for r in rows}
phases = ["bulk", "bulk-update", "insert", "update", "delete", "bulk-delete"]


def wal_per_change(level, t, p):
    r = by[(level, t, p)]
    return float(r["wal_bytes"]) / float(r["changes"])


def speed(level, t, p):
    """Changes per second: pgbench's tps, or the bulk statement's rows / time."""
    r = by[(level, t, p)]
    if r["tps"]:
        return float(r["tps"])
    return float(r["changes"]) / (float(r["ms"]) / 1000.0)


fig, axes = plt.subplots(1, 2, figsize=(13, 4))
for ax, (title, fn) in zip(axes, [
        ("WAL bytes per change, logical / replica", lambda t, p: wal_per_change("logical", t, p) / wal_per_change("replica", t, p)),
        ("changes per second, logical / replica", lambda t, p: speed("logical", t, p) / speed("replica", t, p))]):
    for i, t in enumerate(("heap", "pax")):
        vals = [fn(t, p) for p in phases]
        xs = [j + (i - 0.5) * 0.38 for j in range(len(phases))]
        ax.bar(xs, vals, width=0.38, label=t)
        for x, v in zip(xs, vals):
            ax.annotate(f"{v:.2f}", (x, v), ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(phases)), phases)
    ax.set_title(title)
    ax.legend()
fig.suptitle("What wal_level = logical costs heap and pax")
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# pax-logical-wal: what wal_level = logical costs pax and heap", "",
      "Command: `bench/run pax-logical-wal " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## WAL per change and its ratio", "",
       "| phase | heap replica B | heap logical B | heap ratio | pax replica B | pax logical B | pax ratio | pax ratio / heap ratio | logical adds B: heap / pax |",
       "|---|---|---|---|---|---|---|---|---|"]
for p in phases:
    hr, hl = wal_per_change("replica", "heap", p), wal_per_change("logical", "heap", p)
    pr, pl = wal_per_change("replica", "pax", p), wal_per_change("logical", "pax", p)
    md.append(f"| {p} | {hr:,.0f} | {hl:,.0f} | {hl / hr:.2f} | {pr:,.0f} | {pl:,.0f} | {pl / pr:.2f} | "
              f"{(pl / pr) / (hl / hr):.2f} | {round(hl - hr) + 0:+,} / {round(pl - pr) + 0:+,} |")
md += ["", "## Changes per second and its ratio", "",
       "| phase | heap replica | heap logical | heap ratio | pax replica | pax logical | pax ratio |",
       "|---|---|---|---|---|---|---|"]
for p in phases:
    hr, hl = speed("replica", "heap", p), speed("logical", "heap", p)
    pr, pl = speed("replica", "pax", p), speed("logical", "pax", p)
    md.append(f"| {p} | {hr:,.0f} | {hl:,.0f} | {hl / hr:.2f} | {pr:,.0f} | {pl:,.0f} | {pl / pr:.2f} |")
md += ["", "Raw data: `pax-logical-wal.csv`; plot: `pax-logical-wal.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
