#!/usr/bin/env python3
"""Summary and plot of bench/run pax-sysbench."""
import csv
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

# the targets, pax tps / heap tps
TARGETS = {"oltp_point_select": 0.8, "oltp_read_only": 0.8, "select_random_ranges": 0.8,
           "oltp_write_only": 0.6, "oltp_read_write": 0.6}

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
tps = {(r["script"], r["threads"], r["am"]): report.num(r, "tps") for r in rows}
scripts = list(dict.fromkeys(r["script"] for r in rows))
threads = list(dict.fromkeys(r["threads"] for r in rows))

lines = ["# pax-sysbench", ""] + report.setup_section(meta) + [
    "", "## Transactions per second", "",
    "| script | threads | heap tps | pax tps | pax / heap | target |", "|---|---|---|---|---|---|"]
labels, ratios = [], []
for s in scripts:
    for t in threads:
        h, p = tps.get((s, t, "heap")), tps.get((s, t, "pax"))
        if h is None or p is None:
            continue
        ratio = p / h if h else float("nan")
        target = TARGETS.get(s)
        verdict = "" if target is None else (f">= {target} " + ("met" if ratio >= target else "missed"))
        lines.append(f"| {s} | {t} | {h:,.1f} | {p:,.1f} | {ratio:.2f}x | {verdict} |")
        labels.append(f"{s.replace('oltp_', '')}/{t}")
        ratios.append(ratio)

sizes_file = result + "-sizes.csv"
if os.path.exists(sizes_file):
    with open(sizes_file) as f:
        sizes = {(r["state"], r["am"]): int(r["bytes"] or 0) for r in csv.DictReader(f)}
    lines += ["", "## Table size (main forks)", "",
              "| state | heap MB | pax MB | pax / its loaded size |", "|---|---|---|---|"]
    loaded = sizes.get(("loaded", "pax"))
    for state in dict.fromkeys(k[0] for k in sizes):
        h, p = sizes.get((state, "heap"), 0), sizes.get((state, "pax"), 0)
        rel = f"{p / loaded:.2f}x" if loaded else ""
        lines.append(f"| {state.replace('_', ' ')} | {h / 1e6:,.1f} | {p / 1e6:,.1f} | {rel} |")
    lines += ["", "Targets: pax after oltp_update_non_index <= 1.3x its loaded size, after VACUUM <= 1.1x."]

fig, ax = plt.subplots(figsize=(9, 4))
ax.bar(range(len(ratios)), ratios)
ax.axhline(1.0, color="grey", linewidth=0.8)
ax.set_xticks(range(len(labels)))
ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
ax.set_ylabel("pax tps / heap tps")
fig.tight_layout()
fig.savefig(result + ".png", dpi=100)
open(result + ".md", "w").write("\n".join(lines) + "\n")
