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
num = report.num


def states_report():
    """The --grid 0 run: warm / half / cold states, serial and parallel."""
    cells = {}
    order = []
    for r in rows:
        key = (r["table"], r["state"], int(r["workers"]), r["limit"] or "")
        if key not in cells:
            order.append(key)
        cells.setdefault(key, {})[r["variant"]] = r
    lines = ["# SSD Sort vs the built-in Sort in the states a server is in (bench/run ssd-sort-grid --grid 0)", ""]
    lines += report.setup_section(meta)
    lines += ["", "## Results", "",
              "Milliseconds for a client to read every row (COPY ... TO STDOUT).  Built-in: ssd_sort.enable off; "
              "SSD Sort: enable_sort off (the planner then picks serial or parallel SSD Sort); planner: nothing forced.  "
              "Planner ÷ best: the chosen plan's time ÷ the faster of built-in and SSD Sort (with LIMIT, SSD Sort is "
              "not offered: the best is the built-in top-N sort).", "",
              "| table | rows | MB (heap / total) | state | workers | LIMIT | built-in ms (plan) | SSD Sort ms (plan) | "
              "SSD ÷ built-in | planner pick | planner ÷ best |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    n = good = 0
    worst, worst_key = 1.0, None
    par = []
    for key in order:
        c = cells[key]
        b, s_, p = c.get("builtin"), c.get("ssd_sort"), c.get("planner")
        if not (b and p):
            continue
        bt, pt = num(b, "best_ms"), num(p, "best_ms")
        st = num(s_, "best_ms") if s_ and "SSD_Sort" in s_["plan"] else None
        best = min(x for x in (bt, st) if x)
        pr = pt / best
        n += 1
        good += pr <= 1.10
        if pr > worst:
            worst, worst_key = pr, key
        if st and key[2] > 0 and not key[3] and "Gather_Merge+SSD_Sort" in s_["plan"]:
            par.append((key, bt / st))
        lines.append(f"| {key[0]} | {b['rows']} | {b['heap_mb']} / {b['total_mb']} | {key[1]} | {key[2]} | {key[3] or '-'} | "
                     f"{bt:.0f} ({b['plan']}) | "
                     + (f"{st:.0f} ({s_['plan']}) | {st / bt:.2f} | " if st else "not offered | - | ")
                     + f"{p['plan']} | {pr:.2f} |")
    lines += ["", f"- Planner within 1.1x of the faster plan in {good} of {n} cells; worst {worst:.2f}"
              + (f" ({worst_key[0]}, {worst_key[1]}, {worst_key[2]} workers{', LIMIT' if worst_key[3] else ''})." if worst_key else ".")]
    for key, r in par:
        lines.append(f"- Parallel SSD Sort vs the built-in parallel sort, {key[0]} {key[1]}: {r:.2f}x")
    lines.append("")
    model = result + "-model.txt"
    if os.path.exists(model):
        lines += ["QDTT model of the tier:", "", "```"] + open(model).read().rstrip().splitlines() + ["```", ""]
    open(result + ".md", "w").write("\n".join(lines) + "\n")
    fig, ax = plt.subplots(figsize=(12, 4.5))
    labels, vals = [], []
    for key in order:
        c = cells[key]
        if c.get("builtin") and c.get("planner"):
            labels.append(f"{key[0]}/{key[1]}/w{key[2]}{'/L' if key[3] else ''}")
            vals.append(num(c["planner"], "best_ms") / min(x for x in (num(c["builtin"], "best_ms"),
                        num(c["ssd_sort"], "best_ms") if c.get("ssd_sort") and "SSD_Sort" in c["ssd_sort"]["plan"] else None) if x))
    ax.bar(range(len(vals)), vals, color=["tab:green" if v <= 1.1 else "tab:red" for v in vals])
    ax.axhline(1.1, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, rotation=70, fontsize=7)
    ax.set_title("planner's choice ÷ faster plan")
    fig.tight_layout()
    fig.savefig(result + ".png", dpi=110)


if rows and "state" in rows[0]:
    states_report()
    sys.exit(0)

cells = {}  # (row_bytes, order, work_mem, cache) -> variant -> row
for r in rows:
    key = (int(r["row_bytes"]), r.get("order", "random"), r["work_mem"], int(r["cache_pct"]))
    cells.setdefault(key, {})[r["variant"]] = r


num = report.num


def wm_key(wm):
    return int(wm.rstrip("MB"))


def secs(r, field):
    """Seconds; a stopped run's total is a lower bound (its time to first
    row was measured by a separate cursor fetch, so it is exact)."""
    v = num(r, field)
    if v is None:
        return "-"
    stopped = r.get("censored") == "1" and field == "total_ms"
    return (">" if stopped else "") + f"{v / 1000:.2f}"


def ratio(a, b, fmt="{:.2f}x"):
    return fmt.format(a / b) if a and b else "-"


keys = sorted(cells, key=lambda k: (k[1] != "random", k[0], wm_key(k[2]), k[3]))
lines = ["# SSD Sort vs the built-in Sort (bench/run ssd-sort-grid)", ""]
lines += report.setup_section(meta)
for k in ("query", "settings"):
    if k in meta and k != "settings":
        lines.append(f"- **{k}**: {meta[k]}")
lines += ["", "## Results", "",
          "Speed-ups are built-in ÷ SSD Sort (> 1: SSD Sort faster).  Temp ratio = built-in temp written ÷ SSD Sort's.  "
          "Index = an Index Scan on the key (the thesis's section 4.6).  Est. ratio = the planner's cost of Sort ÷ its cost "
          "of SSD Sort (> 1: it prefers SSD Sort).  Planner: the plan picked with both allowed (index scans off), and its "
          "time ÷ the faster of the two.  \">\" marks a run stopped at its cap (its total is a lower bound; its time "
          "to first row comes from a separate cold cursor fetch).", "",
          "| row B | order | rows | work_mem | cache | built-in total s | SSD Sort total s | index total s | total speed-up | "
          "built-in TTFR s | SSD TTFR s | index TTFR s | TTFR speed-up | temp MB built-in / SSD | temp ratio | "
          "SSD Sort runs / passes | est. ratio | planner pick | planner ÷ best |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
n_cells = n_good = n_ttfr_ok = n_ttfr_cells = 0
worst_planner, worst_cell = 1.0, None
for key in keys:
    c = cells[key]
    b, s, i, p = c.get("builtin"), c.get("ssd_sort"), c.get("index"), c.get("planner")
    if not (b and s):
        continue
    bt, st = num(b, "total_ms"), num(s, "total_ms")
    bf, sf = num(b, "ttfr_ms"), num(s, "ttfr_ms")
    btemp, stemp = num(b, "temp_written_kb"), num(s, "temp_written_kb")
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
        if pr is not None and pr > worst_planner:
            worst_planner, worst_cell = pr, key
    if key[0] >= 256 and bf and sf:
        n_ttfr_cells += 1
        n_ttfr_ok += bf / sf > 1
    if temp_r:
        temp_s = f"{temp_r:.1f}x"
    elif s.get("censored") == "1":
        temp_s = "-"
    else:
        temp_s = "pairs sorted in memory"
    runs_s = f"{s.get('runs') or 0}/{s.get('merge_passes') or 0}" if s.get("censored") != "1" else "-"
    est = ratio(num(b, "est_total"), num(s, "est_total"))
    pr_s = f"{pr:.2f}" if pr is not None else ""
    lines.append(
        f"| {key[0]} | {key[1]} | {b['rows']} | {key[2]} | {key[3]}% | {secs(b, 'total_ms')} | {secs(s, 'total_ms')} | "
        f"{secs(i, 'total_ms')} | {'<' if s.get('censored') == '1' else ''}{ratio(bt, st)} | {secs(b, 'ttfr_ms')} | {secs(s, 'ttfr_ms')} | {secs(i, 'ttfr_ms')} | "
        f"{ratio(bf, sf)} | {(btemp or 0)/1024:.1f} / "
        f"{'-' if s.get('censored') == '1' else f'{(stemp or 0)/1024:.1f}'} | {temp_s} | {runs_s} | {est} | {pick} | {pr_s} |")
lines += ["",
          f"- Time to first row faster than the built-in Sort in {n_ttfr_ok} of {n_ttfr_cells} cells with rows >= 256 B.",
          f"- Planner within 10% of the faster plan in {n_good} of {n_cells} cells; worst planner ÷ best = {worst_planner:.2f}"
          + (f" ({worst_cell[0]} B, {worst_cell[1]} order, work_mem {worst_cell[2]}, cache {worst_cell[3]}%)." if worst_cell else "."),
          ""]
model = result + "-model.txt"
if os.path.exists(model):
    lines += ["QDTT model of the tier used to cost the fetch:", "", "```"] + open(model).read().rstrip().splitlines() + ["```", ""]
open(result + ".md", "w").write("\n".join(lines) + "\n")

# Plot: total-time and TTFR speed-up per cell.
fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
labels = [f"{k[0]}B{'s' if k[1] != 'random' else ''}/{k[2]}/{k[3]}%" for k in keys
          if "builtin" in cells[k] and "ssd_sort" in cells[k]]
tot, ttf = [], []
for k in keys:
    c = cells[k]
    if "builtin" in c and "ssd_sort" in c:
        tot.append(num(c["builtin"], "total_ms") / num(c["ssd_sort"], "total_ms"))
        ttf.append(num(c["builtin"], "ttfr_ms") / (num(c["ssd_sort"], "ttfr_ms") or num(c["ssd_sort"], "total_ms")))
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
