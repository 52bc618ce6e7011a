#!/usr/bin/env python3
"""Summary of bench/run pax-drift."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)
fresh = {k: float(v) for k, v in rows[0].items() if k != "state"}
lines = ["# pax-drift", ""] + report.setup_section(meta) + [
    "", "| state | FlashScan blocks read | / fresh | table blocks | / fresh | groups | row map blocks | sparse groups |",
    "|---|---|---|---|---|---|---|---|"]
for r in rows:
    b, t = float(r["blocks_read"]), float(r["table_blocks"])
    lines.append(f"| {r['state'].replace('_', ' ')} | {b:,.0f} | {b / fresh['blocks_read']:.2f}x | {t:,.0f} | "
                 f"{t / fresh['table_blocks']:.2f}x | {r['groups']} | {r['row_map_blocks']} | {r['sparse_groups']} |")
lines += ["", "Target (the pax issue): FlashScan blocks read after the changes and VACUUM within 1.1x of the fresh load's."]
open(result + ".md", "w").write("\n".join(lines) + "\n")
