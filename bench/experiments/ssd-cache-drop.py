#!/usr/bin/env python3
"""Plot and summary of bench/run ssd-cache-drop."""
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
sizes = sorted({float(r["size_gb"]) for r in rows})
ops = [o for o in ("drop", "truncate") if any(r["op"] == o for r in rows)]
labels = {"drop": "DROP TABLE", "truncate": "TRUNCATE"}


def row(size, op, kind):
    for r in rows:
        if float(r["size_gb"]) == size and r["op"] == op and r["kind"] == kind:
            return r
    return None


fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
width = 0.8 / (2 * len(ops))
colors = {("drop", "cached"): "tab:red", ("truncate", "cached"): "tab:orange",
          ("drop", "uncached"): "tab:gray", ("truncate", "uncached"): "silver"}
ax = axes[0]
i = 0
for op in ops:
    for kind in ("cached", "uncached"):
        xs, ys = [], []
        for k, size in enumerate(sizes):
            r = row(size, op, kind)
            if r and r["op_ms"]:
                xs.append(k + (i - len(ops) + 0.5) * width)
                ys.append(float(r["op_ms"]))
        if xs:
            ax.bar(xs, ys, width, color=colors[(op, kind)],
                   label=f"{labels[op]}, {'cached' if kind == 'cached' else 'nothing cached'}")
            for x, y in zip(xs, ys):
                ax.annotate(f"{y:,.0f}", (x, y), ha="center", va="bottom", fontsize=7)
        i += 1
ax.axhline(1000, color="black", linestyle="--", label="target for 1 GB: 1 s")
ax.set_yscale("log")
ax.set_xticks(range(len(sizes)), [f"{s:g} GB" for s in sizes])
ax.set_xlabel("table size (all of it cached, for the 'cached' bars)")
ax.set_ylabel("statement time, ms (psql \\timing, log)")
ax.set_title("DROP TABLE / TRUNCATE with the table in ssd_cache")
ax.legend(fontsize=8)

ax = axes[1]
for j, op in enumerate(ops):
    pts = [(k, row(s, op, "cached")) for k, s in enumerate(sizes)]
    pts = [(k, r) for k, r in pts if r]
    xs = [k + (j - 0.5) * 0.35 for k, _ in pts]
    ys = [float(r["directory_writes"]) for _, r in pts]
    ax.bar(xs, ys, 0.35, color=colors[(op, "cached")], label=labels[op])
    for x, (_, r), y in zip(xs, pts, ys):
        ax.annotate(f"{y:,.0f}\n({int(r['invalidations']):,})", (x, y), ha="center",
                    va="bottom", fontsize=7)
ax.set_ylim(0, max([float(r["directory_writes"]) for r in rows if r["kind"] == "cached"] + [1]) * 1.25)
ax.set_xticks(range(len(sizes)), [f"{s:g} GB" for s in sizes])
ax.set_ylabel("directory writes during the statement")
ax.set_title("Cache directory writes (invalidated pages in parentheses)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)

md = ["# ssd-cache-drop: DROP TABLE and TRUNCATE of cached tables", "",
      f"Command: `bench/run {name} " + meta.get("args", "").strip() + "`", ""]
md += report.setup_section(meta)
for key in ("ssd_cache_build_changed", "ssd_cache_build"):
    if key in meta:
        md.insert(md.index("## Setup") + 2, f"- **{key.replace('_', ' ')}**: {meta[key]}")
md += ["", "## Results", "",
       "| size | statement | table pages | cached pages | fill passes | fill s | statement ms | wall ms "
       "| directory writes | invalidations | used slots before → after | mode after |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for size in sizes:
    for op in ops:
        for kind in ("cached", "uncached"):
            r = row(size, op, kind)
            if not r:
                continue
            what = labels[op] + ("" if kind == "cached" else " (nothing cached)")
            md.append(f"| {size:g} GB | {what} | {int(r['table_blocks']):,} | {int(r['cached_blocks']):,} "
                      f"| {r['fill_passes']} | {r['fill_s']} | {float(r['op_ms']):,.1f} "
                      f"| {float(r['wall_ms']):,.1f} | {int(r['directory_writes']):,} "
                      f"| {int(r['invalidations']):,} | {int(r['used_before']):,} → {int(r['used_after']):,} "
                      f"| {r['mode_after']} |")
md += ["", "Statement ms is psql's `\\timing` (the statement and its commit, where the cached pages "
       "are invalidated); wall ms is the whole psql call (connection included).", "",
       "## Conclusions", ""]
for op in ops:
    for size in sizes:
        r, u = row(size, op, "cached"), row(size, op, "uncached")
        if not r:
            continue
        cached = int(r["cached_blocks"])
        line = (f"- {labels[op]} of a {size:g} GB table with {cached:,} of {int(r['table_blocks']):,} pages "
                f"cached: {float(r['op_ms']):,.1f} ms, {int(r['directory_writes']):,} directory writes for "
                f"{int(r['invalidations']):,} invalidated pages")
        if u:
            extra = float(r["op_ms"]) - float(u["op_ms"])
            line += f"; with nothing cached {float(u['op_ms']):,.1f} ms"
            if cached:
                line += f", so the cache adds {extra:,.1f} ms ({extra * 1000 / cached:,.2f} µs per cached page)"
        md.append(line + ".")
one = [r for r in rows if float(r["size_gb"]) == 1.0 and r["op"] == "drop" and r["kind"] == "cached"]
if one:
    t = float(one[0]["op_ms"])
    md.append(f"- Target (issue 20): a 1 GB cached table drops in under a second: {t:,.1f} ms, "
              f"{'met' if t < 1000 else 'NOT met'}.")
else:
    md.append("- Target (issue 20), a 1 GB cached table drops in under a second: no 1 GB size in this run.")
md += ["", f"Raw data: `{name}.csv`; plot: `{name}.png`.", ""]
with open(result + ".md", "w") as f:
    f.write("\n".join(md))
