#!/usr/bin/env python3
"""Plot and summary of bench/run tiers-baseline."""
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
by = {(r["tier"], r["workload"]): r for r in rows}
names = {"tpcb": "pgbench TPC-B-like", "tpcc": "TPC-C-like mix"}
colors = {"hdd": "tab:red", "ssd": "tab:blue"}

fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
ax = axes[0]
workloads = [w for w in ("tpcb", "tpcc") if any(k[1] == w for k in by)]
width = 0.38
for i, tier in enumerate(("hdd", "ssd")):
    vals = [float(by[(tier, w)]["tps"]) if (tier, w) in by else 0 for w in workloads]
    bars = ax.bar([x + (i - 0.5) * width for x in range(len(workloads))], vals, width,
                  label=f"{tier.upper()} tier", color=colors[tier])
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:,.0f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom")
ax.set_yscale("log")
ax.set_xticks(range(len(workloads)), [names[w] for w in workloads])
ax.set_ylabel("transactions per second (log)")
ax.set_title("Throughput, stock PostgreSQL 15")
ax.legend()

for ax, w in zip(axes[1:], ("tpcb", "tpcc")):
    for tier in ("hdd", "ssd"):
        r = by.get((tier, w))
        if not r:
            continue
        prog = [float(x) for x in r["progress_tps"].split()]
        ax.plot([10 * (i + 1) for i in range(len(prog))], prog, marker="o",
                color=colors[tier], label=f"{tier.upper()} tier")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("tps per 10 s (symlog)")
    ax.set_title(f"{names[w]}: progress")
    ax.legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# tiers-baseline: stock PostgreSQL 15 on the HDD tier vs the SSD tier", ""]
md.append("Command: `bench/run tiers-baseline " + meta.get("args", "").strip() + "`")
md.append("")
md += report.setup_section(meta)
md += ["", "## Results", "",
       "| tier | workload | db MB | shared_buffers MB | memory cap MB | tps | tpmC | latency ms "
       "| buffer hit % | device read IOPS | device write IOPS | checkpoints |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    md.append(f"| {r['tier']} | {names[r['workload']]} | {r['db_mb']} | {r['shared_buffers_mb']} "
              f"| {r['memory_limit_mb']} | {float(r['tps']):,.1f} | {r['tpmc'] or '-'} "
              f"| {r['latency_ms']} | {r['hit_pct']} | {r['dev_read_iops']} "
              f"| {r['dev_write_iops']} | {r['checkpoints']} |")
md += ["", "Per-10-second tps (pgbench -P 10):", ""]
for r in rows:
    md.append(f"- {r['tier']} {names[r['workload']]}: {r['progress_tps']}")

md += ["", "## Conclusions", ""]
for w in workloads:
    h, s = by.get(("hdd", w)), by.get(("ssd", w))
    if h and s:
        ratio = float(s["tps"]) / max(float(h["tps"]), 1e-9)
        line = (f"- {names[w]}: the SSD tier runs {ratio:.1f}x the HDD tier's throughput "
                f"({float(s['tps']):,.0f} vs {float(h['tps']):,.0f} tps")
        if h["tpmc"]:
            line += f"; tpmC {float(s['tpmc']):,.0f} vs {float(h['tpmc']):,.0f}"
        line += "). This is the gap ssd_cache has to close."
        md.append(line)
for w in workloads:
    h = by.get(("hdd", w))
    if not h:
        continue
    reads = float(h["dev_read_iops"])
    writes = float(h["dev_write_iops"])
    limit = 200.0
    bound = reads >= 0.8 * limit or writes >= 0.8 * limit
    md.append(f"- HDD tier, {names[w]}: the device served {reads:.0f} reads/s and "
              f"{writes:.0f} writes/s against a limit of {limit:.0f} each, "
              + ("so the run is bound by the emulated disk's random I/O."
                 if bound else
                 "below the limit: this run is NOT bound by the emulated disk; check the setup."))
md += ["", "Raw data: `tiers-baseline.csv`; plot: `tiers-baseline.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
