#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-recovery."""
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

num = report.num
result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
# The read phases run the workload the meta names (TPC-C mix or skewed select-only).
phase = "TPC-C mix" if meta.get("workloads", "").startswith("TPC-C") else "skewed select-only"
name = os.path.basename(result)
crashes = sorted({int(r["crash_after_s"]) for r in rows})
configs = [c for c in ("cache", "wb", "lc", "nocache") if any(r["config"] == c for r in rows)]
labels = {"cache": "with ssd_cache (tac)", "wb": "with ssd_cache (tac, write-back)",
          "lc": "with ssd_cache (tac, lazy cleaning)", "nocache": "without (stock)"}
stop = rows[0].get("stop", "kill") if rows else "kill"
control = stop != "kill"
event = "crash" if not control else f"stop -m {stop}"


def row(config, t):
    for r in rows:
        if r["config"] == config and int(r["crash_after_s"]) == t:
            return r
    return None


fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
ax = axes[0]
width = 0.38
parts = (("redo_s", "redo", 1.0), ("checkpoint_s", "end-of-recovery checkpoint", 0.6),
         (None, "rest (data directory fsync, startup, waits)", 0.25))
colors = {"cache": "tab:green", "wb": "tab:purple", "lc": "tab:olive", "nocache": "tab:gray"}
for j, config in enumerate(configs):
    for k, t in enumerate(crashes):
        r = row(config, t)
        if not r:
            continue
        x = k + (j - (len(configs) - 1) / 2) * width
        total = num(r, "recovery_s") or 0
        bottom = 0
        for field, part, alpha in parts:
            v = num(r, field) if field else max(total - bottom, 0)
            v = v or 0
            ax.bar(x, v, width, bottom=bottom, color=colors[config], alpha=alpha,
                   label=f"{labels[config]}: {part}" if k == 0 else None, edgecolor="black", linewidth=0.3)
            bottom += v
        ax.annotate(f"{total:.1f} s", (x, max(total, bottom)), ha="center", va="bottom", fontsize=8)
ax.set_xticks(range(len(crashes)), [f"{'kill -9' if not control else event} {t} s after a checkpoint"
                                     for t in crashes])
ax.set_ylabel("seconds from start until connections are accepted")
ax.set_title("Crash recovery, HDD tier" if not control else f"Start after pg_ctl stop -m {stop} (control), HDD tier")
top = max([num(r, "recovery_s") or 0 for r in rows] + [1])
ax.set_ylim(0, top * 1.75)
ax.legend(fontsize=7, loc="upper left")

ax = axes[1]
xs, before, after = [], [], []
for k, t in enumerate(crashes):
    r = row("cache", t)
    if r and num(r, "hit_before") is not None:
        xs.append(k)
        before.append(num(r, "hit_before"))
        after.append(num(r, "hit_after") or 0)
ax.bar([x - 0.2 for x in xs], before, 0.4, color="tab:blue", label=f"before the {event} (after a clean restart)")
ax.bar([x + 0.2 for x in xs], after, 0.4, color="tab:orange",
       label="right after recovery" if not control else f"right after the {event} and start")
for x, b, a in zip(xs, before, after):
    ax.annotate(f"{b:.3f}", (x - 0.2, b), ha="center", va="bottom", fontsize=8)
    ax.annotate(f"{a:.3f}", (x + 0.2, a), ha="center", va="bottom", fontsize=8)
for k, t in enumerate(crashes):
    r = row("cache", t)
    if r and r["used_at_crash"]:
        ax.annotate(f"slots used: {int(r['used_at_crash']):,} at the {event},\n"
                    f"{int(r['used_after_recovery'] or 0):,} after the start",
                    (k, 0.05), ha="center", fontsize=7)
ax.set_ylim(0, 1.1)
ax.set_xticks(range(len(crashes)), [f"{t} s" for t in crashes])
ax.set_xlabel(f"{event} after")
ax.set_ylabel(f"ssd_cache hit ratio, {phase} phase")
ax.set_title(f"Cache hit ratio before the {event} and after the start")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-recovery: crash recovery with a warm ssd_cache vs without"
      + ("" if not control else f" (control run: pg_ctl stop -m {stop} instead of kill -9)"), "",
      f"Command: `bench/run {name} " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
for key in ("ssd_cache_build_changed", "ssd_cache_build"):
    if key in meta:
        md.insert(md.index("## Setup") + 2, f"- **{key.replace('_', ' ')}**: {meta[key]}")
md += ["", "## Results", "",
       f"| config | {event} after | write tps | transactions | WAL replayed MB | recovery s | redo s "
       "| end-of-recovery checkpoint s (buffers) | HDD reads / writes during recovery "
       f"| write-through after s | slots at {event} → after recovery | recovery hits / misses "
       "| recovery admissions / evictions / invalidations "
       "| hit ratio before → after | read tps before → after |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for config in configs:
    for t in crashes:
        r = row(config, t)
        if not r:
            continue
        cache = config != "nocache"
        md.append(
            f"| {config} | {t} s | {r['write_tps']} | {r['transactions']} | {r['wal_mb'] or '-'} "
            f"| {r['recovery_s']} | {r['redo_s'] or '-'} | {r['checkpoint_s'] or '-'} ({r['checkpoint_buffers'] or '-'}) "
            f"| {r['hdd_reads']} / {r['hdd_writes']} "
            f"| {r['verify_s'] if cache else '-'} "
            f"| {(r['used_at_crash'] + ' → ' + r['used_after_recovery']) if cache else '-'} "
            f"| {(r['recovery_hits'] + ' / ' + r['recovery_misses']) if cache else '-'} "
            f"| {(r['recovery_admissions'] + ' / ' + r['recovery_evictions'] + ' / ' + r['recovery_invalidations']) if cache else '-'} "
            f"| {((r['hit_before'] or '-') + ' → ' + (r['hit_after'] or '-')) if cache else '-'} "
            f"| {float(r['read_tps_before']):,.0f} → {float(r['read_tps_after']):,.0f} |")
md += ["", "recovery s: from `pg_ctl start` until it reports the server accepting connections (redo, the "
       "end-of-recovery checkpoint, the rest of startup); redo s and the checkpoint come from the server log. "
       f"Hit ratio and read tps: the {phase} phase after a clean restart (before) and right after "
       "the crash recovery (after), both with shared_buffers and the OS cache cold; recovery hits / misses: "
       "the cache's counters from the start until the mode became write-through (admissions, evictions and "
       "invalidations likewise).",
       "", f"ssd_cache's log lines at each start after the {event}:", ""]
for t in crashes:
    r = row("cache", t)
    if r and r["cache_log"]:
        md.append(f"- {t} s: " + "; ".join(f"`{x}`" for x in r["cache_log"].split("|")))
ramp = [(config, t, row(config, t)) for config in configs for t in crashes
        if row(config, t) and row(config, t).get("ramp_tps")]
if ramp:
    md += ["", "Ramp-up after the recovery (the write load again at once; tps every 5 s; the time until an "
           "interval reaches 90% of the write phase's throughput before the crash):", "",
           "| config | after | tps before the crash | 90% reached after | tps every 5 s |", "|---|---|---|---|---|"]
    for config, t, r in ramp:
        md.append(f"| {config} | {t} s | {num(r, 'write_tps') or '-'} | "
                  f"{(r['ramp_s'] + ' s') if r.get('ramp_s') else 'not within the phase'} | {r['ramp_tps']} |")
md += ["", "## Conclusions", ""]
for config, t, r in ramp:
    if config in ("wb", "lc"):
        s90 = num(r, "ramp_s")
        md.append(f"- Ramp-up, {labels[config]}, crash {t} s after a checkpoint: 90% of the throughput before "
                  f"the crash after {f'{s90:.0f} s' if s90 else 'more than the phase'}"
                  + (f" (target for write-back: within 60 s: {'met' if s90 and s90 <= 60 else 'NOT met'})"
                     if config == "wb" else "") + ".")
for t in crashes:
    for cfg in ("cache", "wb", "lc"):
        c, n = row(cfg, t), row("nocache", t)
        if c and n and num(n, "recovery_s") and cfg in ("wb", "lc"):
            speed = num(n, "recovery_s") / num(c, "recovery_s")
            rate = speed * ((num(c, "transactions") or 0) / (num(n, "transactions") or 1))
            md.append(f"- {labels[cfg].capitalize()}, {event} {t} s after a checkpoint: recovery "
                      f"{num(c, 'recovery_s'):.1f} s vs "
                      f"{num(n, 'recovery_s'):.1f} s without the cache = **{speed:.2f}x faster**"
                      + (f" (target >= 1.7x: {'met' if speed >= 1.7 else 'NOT met'})" if cfg == "wb" else "")
                      + f"; transactions of the write phase "
                      f"{int(num(c, 'transactions') or 0):,} vs {int(num(n, 'transactions') or 0):,}, "
                      f"recovery rate (the thesis's time speed-up x throughput ratio) {rate:.2f}x.")
            continue
        if c and n and num(n, "recovery_s"):
            ratio = num(c, "recovery_s") / num(n, "recovery_s")
            line = (f"- {event.capitalize()} {t} s after a checkpoint: {'recovery' if not control else 'start'} "
                    f"{num(c, 'recovery_s'):.1f} s with the cache vs {num(n, 'recovery_s'):.1f} s without = "
                    f"**{ratio:.2f}x**"
                    + ("" if control else f" (target <= 1.0x: {'met' if ratio <= 1.0 else 'NOT met'})"))
            if not control and num(c, "transactions") and num(n, "transactions"):
                pc = num(c, "recovery_s") / num(c, "transactions") * 1000
                pn = num(n, "recovery_s") / num(n, "transactions") * 1000
                line += (f"; the write phases committed {int(num(c, 'transactions')):,} vs "
                         f"{int(num(n, 'transactions')):,} transactions, i.e. {pc:.2f} vs {pn:.2f} s of recovery "
                         f"per 1,000 ({pc / pn:.2f}x)")
            md.append(line + ".")
        if c and num(c, "hit_before") is not None:
            hb, ha = num(c, "hit_before"), num(c, "hit_after") or 0
            rel = f"{ha / hb - 1:+.1%}" if hb > 0 else "before was 0"
            ok = ha >= 0.95 * hb
            md.append(f"- Cache hit ratio of the read phase, {event} after {t} s: {hb:.4f} before the {event}, {ha:.4f} "
                      f"after the start ({rel}" + ("" if control else f"; target within 5% of before: {'met' if ok else 'NOT met'}")
                      + "); "
                  
                      f"slots used {int(num(c, 'used_at_crash') or 0):,} at the {event}, "
                      f"{int(num(c, 'used_after_recovery') or 0):,} once the mode was write-through "
                      f"({num(c, 'verify_s') or '-'} s after the start).")
md += ["", f"Raw data: `{name}.csv`; plot: `{name}.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
