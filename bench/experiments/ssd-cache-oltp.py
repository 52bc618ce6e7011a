#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-oltp."""
import os
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
base = {r["config"]: r for r in rows if r["policy"] == "none"}
none_tps = float(base["hdd-nocache"]["tps"]) if "hdd-nocache" in base else None
ssd_tps = float(base["ssd-nocache"]["tps"]) if "ssd-nocache" in base else None
sizes = sorted({float(r["cache_pct"]) for r in rows if r["policy"] != "none"})
colors = {"tac": "tab:green", "clock": "tab:orange", "tac+wb": "tab:purple", "tac+wb16": "tab:brown",
          "tac+lc": "tab:gray"}
policies = [p for p in dict.fromkeys(r["policy"] for r in rows) if p != "none"]
names = {"tac": "tac, write-through", "clock": "clock, write-through",
         "tac+wb": "tac, write-back (PC)", "tac+wb16": "tac, write-back, batches of 16 (PC2)",
         "tac+lc": "tac, lazy cleaning (LC)"}

fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
ax = axes[0]
for policy in policies:
    pts = sorted((float(r["cache_pct"]), float(r["tps"])) for r in rows if r["policy"] == policy)
    if pts:
        ax.plot([p for p, _ in pts], [t for _, t in pts], marker="o", color=colors.get(policy),
                label=f"HDD tier + ssd_cache ({names.get(policy, policy)})")
        for p, t in pts:
            ax.annotate(f"{t:,.0f}", (p, t), textcoords="offset points", xytext=(0, 6), ha="center")
if none_tps:
    ax.axhline(none_tps, color="tab:red", linestyle="--", label=f"HDD tier, no cache ({none_tps:,.0f})")
if ssd_tps:
    ax.axhline(ssd_tps, color="tab:blue", linestyle="--", label=f"all data on SSD tier ({ssd_tps:,.0f})")
ax.set_yscale("log")
ax.set_xlabel("SSD cache size, % of the database")
ax.set_ylabel("tps (log)")
ax.set_title("Throughput: " + meta.get("workloads", "").split(",")[0])
ax.set_xticks(sizes)
ax.legend(fontsize=8)

ax = axes[1]
for policy in policies:
    pts = sorted((float(r["cache_pct"]), float(r["hit_ratio"] or 0)) for r in rows if r["policy"] == policy)
    if pts:
        ax.plot([p for p, _ in pts], [h for _, h in pts], marker="o", color=colors.get(policy),
                label=names.get(policy, policy))
ax.set_ylim(0, 1)
ax.set_xlabel("SSD cache size, % of the database")
ax.set_ylabel("SSD hit ratio (of shared_buffers misses)")
ax.set_title("Cache hit ratio in the measured interval")
ax.set_xticks(sizes)
ax.legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

name = os.path.basename(result)
title = os.environ.get("SSDKIT_OLTP_TITLE", "ssd-cache-oltp: ssd_cache on the HDD tier, skewed select-only")
if "tpcc" in name:
    title = "ssd-cache-tpcc: ssd_cache on the HDD tier, " + meta.get("workloads", "TPC-C-like").split(",")[0]
elif "tpcb" in name:
    title = "ssd-cache-tpcb: ssd_cache on the HDD tier, " + meta.get("workloads", "TPC-B-like").split(",")[0]
md = ["# " + title, "",
      f"Command: `bench/run {name} " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
md += ["", "## Results", "",
       "| config | cache % | cache MB | tps | vs no cache | tpmC | latency ms | hit ratio | admissions | refusals | slots used | HDD reads/s |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    ratio = f"{float(r['tps']) / none_tps:.2f}x" if none_tps else "-"
    md.append(f"| {r['config']} | {r['cache_pct']} | {r['cache_mb']} | {float(r['tps']):,.1f} | {ratio} "
              f"| {r.get('tpmc') or '-'} "
              f"| {r['latency_ms']} | {r['hit_ratio'] or '-'} | {r['admissions']} | {r['refusals']} "
              f"| {r['used_slots']} | {r['dev_read_iops']} |")
step = 10
m = re.search(r"tps reported every (\d+) s", meta.get("settings", ""))
if m:
    step = int(m.group(1))


def stalls(series):
    """Intervals below 10% of the run's median tps, and the longest run of them, in seconds."""
    v = [float(x) for x in series.split()]
    if not v:
        return 0, 0
    med = sorted(v)[len(v) // 2]
    low = [x < 0.1 * med for x in v]
    longest = cur = 0
    for b in low:
        cur = cur + 1 if b else 0
        longest = max(longest, cur)
    return sum(low) * step, longest * step


if step < 10:
    md += ["", f"Checkpoint stalls (the measured interval in {step}-second steps; a stall is an interval below "
           "10% of the run's median tps):", "", "| config | checkpoints | stalled s | longest stall s | min tps | median tps |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        v = sorted(float(x) for x in r["progress_tps"].split()) or [0]
        total, longest = stalls(r["progress_tps"])
        md.append(f"| {r['config']} | {r.get('checkpoints') or '-'} | {total} | {longest} | {v[0]:.1f} | {v[len(v) // 2]:.1f} |")
else:
    md += ["", f"Per-{step}-second tps in the measured interval:", ""]
    for r in rows:
        md.append(f"- {r['config']}: {r['progress_tps']}")
if any(r.get("absorbed_writes") not in (None, "") for r in rows):
    md += ["", "Writes in the measured interval (HDD writes/s from the device; the cache's counters):", "",
           "| config | cache full at start | HDD writes/s | writes absorbed by the SSD | of them by checkpoints | write-backs | fresher pages at end | checkpoints |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["policy"] == "none" and r["tier"] == "ssd":
            continue
        md.append(f"| {r['config']} | {(r.get('filled_pct') or '-') + ('%' if r.get('filled_pct') else '')} "
                  f"| {r.get('dev_write_iops') or '-'} | {r.get('absorbed_writes') or '-'} "
                  f"| {r.get('checkpoint_absorbed') or '-'} | {r.get('write_backs') or '-'} "
                  f"| {r.get('fresher_pages') or '-'} | {r.get('checkpoints') or '-'} |")
md += ["", "## Conclusions", ""]
if none_tps:
    for policy in policies:
        for r in sorted((r for r in rows if r["policy"] == policy), key=lambda r: float(r["cache_pct"])):
            md.append(f"- {policy} at {r['cache_pct']}%: {float(r['tps']) / none_tps:.2f}x the no-cache "
                      f"throughput (hit ratio {r['hit_ratio'] or '-'})"
                      + (f", {float(r['tps']) / ssd_tps:.0%} of all-SSD" if ssd_tps else "") + ".")
    t25 = [r for r in rows if r["policy"] == "tac" and float(r["cache_pct"]) == 25]
    if t25 and "select" in meta.get("workloads", ""):
        x = float(t25[0]["tps"]) / none_tps
        md.append(f"- Target (issue 4): tac at 25% with skewed access at least 3x no-cache: "
                  f"{x:.2f}x, {'met' if x >= 3 else 'NOT met'}.")
    if ssd_tps:
        for r in rows:
            if r["policy"] == "tac+wb" and float(r["cache_pct"]) >= 25:
                x = float(r["tps"]) / ssd_tps
                md.append(f"- Target (issue 21): write-back (PC) at {r['cache_pct']}% at least 0.9x all-SSD: "
                          f"{x:.2f}x, {'met' if x >= 0.9 else 'NOT met'}.")
    for r in rows:
        if r["policy"] in ("tac+wb", "tac+wb16"):
            lc = [w for w in rows if w["policy"] == "tac+lc" and w["cache_pct"] == r["cache_pct"]]
            if lc:
                x = float(r["tps"]) / float(lc[0]["tps"])
                md.append(f"- Target (issue 21): {names.get(r['policy'], r['policy'])} at {r['cache_pct']}% "
                          f"at least 2x LC: {x:.2f}x, {'met' if x >= 2 else 'NOT met'}.")
    for r in rows:
        if "+wb" in r["policy"] or "+lc" in r["policy"]:
            wt = [w for w in rows if w["policy"] == r["policy"].split("+")[0] and w["cache_pct"] == r["cache_pct"]]
            if wt:
                md.append(f"- {names.get(r['policy'], r['policy'])} at {r['cache_pct']}%: "
                          f"{float(r['tps']) / float(wt[0]['tps']):.2f}x write-through's throughput.")
md += ["", f"Raw data: `{name}.csv`; plot: `{name}.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
