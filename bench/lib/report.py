"""Shared pieces of the experiments' summaries (bench/experiments/*.py)."""
import csv
import os


def read_csv(result):
    with open(result + ".csv") as f:
        return list(csv.DictReader(f))


def read_meta(result):
    meta = {}
    with open(result + ".meta") as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("\t")
            meta[key] = value
    return meta


def setup_section(meta):
    """Markdown for the run's setup and the device table."""
    lines = ["## Setup", ""]
    for key in ("date", "machine", "postgresql", "hdd_tier", "workloads", "settings"):
        if key in meta:
            lines.append(f"- **{key.replace('_', ' ')}**: {meta[key]}")
    table = meta.get("device_table")
    if table and os.path.exists(table):
        lines += ["", "Device table (`bench/tiers fio`, fio libaio, O_DIRECT, 2 GiB file):", ""]
        lines += open(table).read().strip().splitlines()
    return lines


def num(r, field):
    """A CSV row's field as a float, None when the row or the field is empty."""
    v = r.get(field, "") if r else ""
    return float(v) if v not in ("", None) else None
