#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-warmup (Park's metrics)."""
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
name = os.path.basename(result)

ORDER = ["none", "autoprewarm", "ours", "ours_ssd", "ours_hold"]
LABELS = {"none": "no warm-up", "autoprewarm": "pg_prewarm autoprewarm",
          "ours": "ssd_cache warm-up (b)", "ours_ssd": "ssd_cache warm-up + SSD cache (b)",
          "ours_hold": "ssd_cache warm-up, connections held (a)"}


def series(r):
    """Per-second tps from the server's start: zeros while clients were held."""
    tps = [float(x) for x in r["tps"].split()]
    return [0.0] * int(round(float(r["hold_s"] or 0))) + tps


def peak90(r):
    s = series(r)
    target = 0.9 * float(r["peak_tps"])
    for i in range(len(s)):
        window = s[max(0, i - 2):i + 1]
        if len(window) == 3 and sum(window) / 3 >= target:
            return i + 1
    return None


def sustained(r):
    s = series(r)
    return sum(s[-20:]) / len(s[-20:]) if s else None


def avg_until(r, t):
    s = series(r)
    if t is None:
        t = len(s)
    part = s[:t]
    return sum(part) / len(part) if part else None


def fmt(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"


tiers = [t for t in ("hdd", "ssd") if any(r["tier"] == t for r in rows)]
kinds = [k for k in ("clean", "crash") if any(r["restart"] == k for r in rows)]

fig, axes = plt.subplots(len(tiers), len(kinds), figsize=(6.5 * len(kinds), 4 * len(tiers)),
                         squeeze=False)
lines = [f"# {name}", "", "Buffer-pool warm-up after a clean restart and after a crash "
         "(Park's metrics: peak-90% time, average tps up to the no-warm-up run's peak-90% time, "
         "sustained tps of the last 20 s).", ""]
lines += report.setup_section(meta)
lines += [""]
for ti, tier in enumerate(tiers):
    for ki, kind in enumerate(kinds):
        sel = {r["config"]: r for r in rows if r["tier"] == tier and r["restart"] == kind}
        base = sel.get("none")
        base_t90 = peak90(base) if base else None
        ax = axes[ti][ki]
        lines += [f"## {tier.upper()} tier, {kind} restart", "",
                  "| configuration | peak before (tps) | first connection (s) | peak-90% time (s) | "
                  "vs no warm-up | vs autoprewarm | avg tps to no-warm-up's peak-90% | sustained tps | "
                  "sustained vs no warm-up | warm-up s | pages loaded | disk reads | request kB | "
                  "pages/chunk | break-even | preload |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        apw = sel.get("autoprewarm")
        apw_t90 = peak90(apw) if apw else None
        for config in ORDER:
            r = sel.get(config)
            if not r:
                continue
            s = series(r)
            ax.plot(range(1, len(s) + 1), s, label=LABELS[config])
            t90 = peak90(r)
            sus = sustained(r)
            base_sus = sustained(base) if base else None
            horizon = len(s)
            t90s = f"{t90}" if t90 is not None else f">{horizon}"
            vs_none = (f"{base_t90 / t90:.2f}x" if t90 and base_t90 else
                       (f">{horizon / t90:.2f}x" if t90 and base else "–"))
            vs_apw = (f"{apw_t90 / t90:.2f}x" if t90 and apw_t90 else
                      (f">{horizon / t90:.2f}x" if t90 and apw else "–"))
            lines.append(
                f"| {LABELS[config]} | {r['peak_tps']} | {r['hold_s']} | {t90s} | {vs_none} | {vs_apw} | "
                f"{fmt(avg_until(r, base_t90))} | {fmt(sus)} | "
                f"{fmt(sus / base_sus if sus and base_sus else None, 3)} | {r['warmup_s']} | "
                f"{r['pages_loaded']} | {r['disk_reads']} | {r['request_kb']} | {r['pages_per_chunk']} | "
                f"{r['break_even']} | {r['preload']} |")
        lines.append("")
        ax.set_title(f"{tier.upper()} tier, {kind} restart")
        ax.set_xlabel("seconds after the server accepted connections")
        ax.set_ylabel("tps (pgbench -P 1)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)
lines += [f"![{name}]({name}.png)", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(lines))
print("\n".join(lines))
