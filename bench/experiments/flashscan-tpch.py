#!/usr/bin/env python3
"""Plot and summary of bench/run flashscan-tpch."""
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
VARIANTS = ["heap", "pax_seq", "pax_flashscan", "duckdb_1", "duckdb"]
t = {}
md5 = {}
for r in rows:
    t[(r["query"], r["variant"])] = float(r["ms"])
    if r["rows_md5"]:
        md5[(r["query"], r["variant"])] = r["rows_md5"]

lines = ["# TPC-H Q1 and Q6: heap, pax, FlashScan and DuckDB (bench/run flashscan-tpch)", ""]
lines += report.setup_section(meta)
sizes = result + "-sizes.txt"
if os.path.exists(sizes):
    lines.append(f"- **lineitem**: {open(sizes).read().strip()}")
lines += ["", "## Results", "",
          "Best of the runs, ms, every run cold.  heap / pax_seq / pax_flashscan: PostgreSQL, serial; "
          "pax_seq = the pax table without FlashScan.  duckdb_1 / duckdb: DuckDB over Parquet with one "
          "thread / its default threads.", "",
          "| query | " + " | ".join(VARIANTS) + " | heap ÷ FlashScan | FlashScan ÷ DuckDB (1 thread) | FlashScan ÷ DuckDB | heap and pax rows equal |",
          "|---" * (len(VARIANTS) + 5) + "|"]
for q in ("q1", "q6"):
    vals = [t.get((q, v)) for v in VARIANTS]
    f = t.get((q, "pax_flashscan"))
    same = len({md5.get((q, v)) for v in ("heap", "pax_seq", "pax_flashscan")}) == 1
    lines.append(f"| {q.upper()} | " + " | ".join(f"{v:.0f}" if v else "-" for v in vals)
                 + f" | {t[(q, 'heap')] / f:.2f}x | {f / t[(q, 'duckdb_1')]:.2f}x | {f / t[(q, 'duckdb')]:.2f}x | "
                 + ("yes" if same else "NO") + " |")
open(result + ".md", "w").write("\n".join(lines) + "\n")

fig, ax = plt.subplots(figsize=(8, 4))
w = 0.15
for i, v in enumerate(VARIANTS):
    ax.bar([j + i * w for j in range(2)], [t.get((q, v), 0) for q in ("q1", "q6")], w, label=v)
ax.set_xticks([j + 2 * w for j in range(2)])
ax.set_xticklabels(["Q1", "Q6"])
ax.set_ylabel("ms (cold)")
ax.legend()
fig.tight_layout()
fig.savefig(result + ".png", dpi=110)
