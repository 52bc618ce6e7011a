#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-sort-grid."""
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

cells = {}  # (row_bytes, work_mem, cache) -> variant -> row
for r in rows:
    key = (int(r["row_bytes"]), r["work_mem"], int(r["cache_pct"]))
    cells.setdefault(key, {})[r["variant"]] = r


def num(r, field):
    v = r.get(field, "")
    return float(v) if v not in ("", None) else None


def wm_key(wm):
    return int(wm.rstrip("MB"))


keys = sorted(cells, key=lambda k: (k[0], wm_key(k[1]), k[2]))
lines = ["# SSD Sort vs the built-in Sort (bench/run ssd-sort-grid)", ""]
lines += report.setup_section(meta)
for k in ("query", "settings"):
    if k in meta and k != "settings":
        lines.append(f"- **{k}**: {meta[k]}")
lines += ["", "## Results", "",
          "Speed-ups are built-in ÷ SSD Sort (> 1: SSD Sort faster).  Temp ratio = built-in temp written ÷ SSD Sort's.  "
          "Planner: the plan picked with both allowed, and its time ÷ the faster of the two.", "",
          "| row B | rows | work_mem | cache | built-in total s | SSD Sort total s | total speed-up | built-in TTFR s | SSD TTFR s | TTFR speed-up | temp MB built-in / SSD | temp ratio | SSD Sort runs / merge passes | planner pick | planner ÷ best |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
n_cells = n_good = n_ttfr_ok = n_ttfr_cells = 0
worst_planner = 1.0
for key in keys:
    c = cells[key]
    b, s, p = c.get("builtin"), c.get("ssd_sort"), c.get("planner")
    if not (b and s):
        continue
    bt, st = num(b, "total_ms"), num(s, "total_ms")
    bf, sf = num(b, "ttfr_ms"), num(s, "ttfr_ms")
    btemp, stemp = num(b, "temp_written_kb"), num(s, "temp_written_kb")
    cens = " (censored)" if s["censored"] == "1" else ""
    ratio_t = bt / st if bt and st else None
    ratio_f = bf / sf if bf and sf else None
    temp_r = btemp / stemp if btemp and stemp else None
    pick, pr = "", None
    if p:
        pick = p["plan"]
        pt = num(p, "total_ms")
        best = min(bt, st)
        pr = pt / best if pt else None
        n_cells += 1
        if pr is not None and pr <= 1.10:
            n_good += 1
        if pr is not None:
            worst_planner = max(worst_planner, pr)
    if key[0] >= 256 and ratio_f is not None:
        n_ttfr_cells += 1
        n_ttfr_ok += ratio_f > 1
    temp_s = f"{temp_r:.1f}x" if temp_r else "pairs sorted in memory"
    runs_s = f"{s.get('runs', '')}/{s.get('merge_passes', '')}"
    pr_s = f"{pr:.2f}" if pr is not None else ""
    lines.append(
        f"| {key[0]} | {b['rows']} | {key[1]} | {key[2]}% | {bt/1000:.2f} | {st/1000:.2f}{cens} | "
        f"{ratio_t:.2f}x | {bf/1000:.2f} | {sf/1000:.2f} | {ratio_f:.2f}x | "
        f"{(btemp or 0)/1024:.1f} / {(stemp or 0)/1024:.1f} | {temp_s} | {runs_s} | {pick} | {pr_s} |")
lines += ["",
          f"- Time to first row faster than the built-in Sort in {n_ttfr_ok} of {n_ttfr_cells} cells (rows >= 256 B).",
          f"- Planner within 10% of the faster plan in {n_good} of {n_cells} cells; worst planner ÷ best = {worst_planner:.2f}.",
          ""]
model = result + "-model.txt"
if os.path.exists(model):
    lines += ["QDTT model of the tier used to cost the fetch:", "", "```"] + open(model).read().rstrip().splitlines() + ["```", ""]
open(result + ".md", "w").write("\n".join(lines) + "\n")

# Plot: total-time and TTFR speed-up per cell.
fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
labels = [f"{k[0]}B/{k[1]}/{k[2]}%" for k in keys if "builtin" in cells[k] and "ssd_sort" in cells[k]]
tot, ttf = [], []
for k in keys:
    c = cells[k]
    if "builtin" in c and "ssd_sort" in c:
        tot.append(num(c["builtin"], "total_ms") / num(c["ssd_sort"], "total_ms"))
        ttf.append(num(c["builtin"], "ttfr_ms") / max(num(c["ssd_sort"], "ttfr_ms") or 1e-9, 1e-9))
for ax, vals, title in ((axes[0], tot, "total time speed-up (built-in / SSD Sort)"),
                        (axes[1], ttf, "time-to-first-row speed-up")):
    ax.bar(range(len(vals)), vals, color=["tab:green" if v >= 1 else "tab:red" for v in vals])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, rotation=70, fontsize=7)
    ax.set_yscale("log")
    ax.set_title(title)
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)
