#!/usr/bin/env python3
"""Turn the fio JSON lines written by bench/tiers into a markdown table."""
import json
import sys

rows = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    tier, rw, bs, qd = j["name"].split("-")
    side = j["write"] if rw == "randwrite" else j["read"]
    lat = side["clat_ns"]
    p99 = lat.get("percentile", {}).get("99.000000", 0) / 1000.0
    label = {"randread": f"{bs} random read QD{qd[2:]}",
             "read": f"{bs} sequential read QD{qd[2:]}",
             "randwrite": f"{bs} random write QD{qd[2:]}"}[rw]
    rows.setdefault(label, {})[tier] = (side["iops"], side["bw_bytes"] / 1e6,
                                        lat["mean"] / 1000.0, p99)

print("| fio test | SSD tier | HDD tier |")
print("|---|---|---|")
for label, tiers in rows.items():
    cells = []
    for t in ("ssd", "hdd"):
        if t in tiers:
            iops, mbs, mean, p99 = tiers[t]
            cells.append(f"{iops:,.0f} IOPS, {mbs:,.0f} MB/s, mean {mean:,.0f} µs, p99 {p99:,.0f} µs")
        else:
            cells.append("-")
    print(f"| {label} | {cells[0]} | {cells[1]} |")
