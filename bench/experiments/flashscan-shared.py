#!/usr/bin/env python3
"""Summary of bench/run flashscan-shared."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import report  # noqa: E402

result = sys.argv[1]
rows = report.read_csv(result)
meta = report.read_meta(result)

# (tier, cache, variant, window) -> batches
runs = defaultdict(list)
for r in rows:
    runs[(r["tier"], r["cache_pct"], r["variant"], r["window"])].append(r)


def total(batches, field):
    return sum(float(b[field]) for b in batches)


def mean_batch(batches):
    return total(batches, "batch_ms") / len(batches) if batches else 0


def by_repeat(batches):
    out = defaultdict(list)
    for b in batches:
        out[b.get("repeat") or "1"].append(b)
    return out


def time_ratio(bs, lone):
    """Mean batch time over lone's, then each repeat's when there are several."""
    lt = mean_batch(lone)
    if not lt:
        return ""
    text = f"{mean_batch(bs) / lt:.2f}"
    reps, lreps = by_repeat(bs), by_repeat(lone)
    pairs = [(reps[r], lreps[r]) for r in reps if r in lreps]
    if len(pairs) > 1:
        text += " (" + ", ".join(f"{mean_batch(a) / mean_batch(b):.2f}" for a, b in pairs) + ")"
    return text


lines = ["# flashscan-shared", ""] + report.setup_section(meta) + [""]
same = True
for tier in dict.fromkeys(r["tier"] for r in rows):
    lines += [f"## {tier.upper()} tier", "",
              "| cache | configuration | batch time (s, sum) | mean query (ms) | queries done at 10/50/90% of a batch (ms, mean) |"
              " device reads | read MB | reads / lone pax | batch time / lone pax |",
              "|---|---|---|---|---|---|---|---|---|"]
    for cache in dict.fromkeys(r["cache_pct"] for r in rows if r["tier"] == tier):
        keys = [k for k in runs if k[0] == tier and k[1] == cache]
        lone = runs.get((tier, cache, "pax_lone", next((k[3] for k in keys if k[2] == "pax_lone"), "")))
        # every configuration returns the same rows per batch
        by_batch = defaultdict(set)
        for k in keys:
            for b in runs[k]:
                by_batch[b["batch"]].add(b["result_md5"])
        same = same and all(len(s) == 1 for s in by_batch.values())
        for k in keys:
            bs = runs[k]
            name = k[2] + (f" (W={k[3]})" if k[2] == "pax_shared" else "")
            reads, mb, t = total(bs, "read_requests"), total(bs, "read_mb"), total(bs, "batch_ms") / 1000
            mq = total(bs, "mean_query_ms") / len(bs)
            rr = tr = ""
            if lone and k[2] != "pax_lone":
                lr = total(lone, "read_requests") / len(lone)
                rr = f"{reads / len(bs) / lr:.2f}" if lr else ""
                tr = time_ratio(bs, lone)
            curve = " / ".join(f"{total(bs, f) / len(bs):,.0f}" for f in ("done_p10_ms", "done_p50_ms", "done_p90_ms")) \
                if bs[0].get("done_p10_ms") else ""
            lines.append(f"| {cache}% | {name} | {t:.1f} | {mq:,.0f} | {curve} | {reads:,.0f} | {mb:,.0f} | {rr} | {tr} |")
    lines.append("")
lines += ["Every configuration returned the same rows for every batch: " + ("yes" if same else "**NO**"), "",
          "Ratios are of means per batch; with several repeats, each repeat's batch-time ratio follows in"
          " parentheses (the variants ran interleaved).", "",
          "Targets (the shared scans issue): device read requests at least 30% below lone FlashScan at every cache"
          " size (reads / lone pax <= 0.70); batch time better on the HDD tier and no worse on the SSD tier."]
open(result + ".md", "w").write("\n".join(lines) + "\n")
