#!/usr/bin/env python3
"""Generate TPC-H data offline with DuckDB's tpch extension (from PyPI).

usage: dbgen.py SCALE_FACTOR OUTDIR [--parquet]

Writes OUTDIR/<table>.csv ('|'-separated, no header) for PostgreSQL's COPY,
and with --parquet also OUTDIR/<table>.parquet for DuckDB-side comparisons.
"""
import glob
import os
import sys

import duckdb
import duckdb_extension_tpch

TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer",
          "orders", "lineitem"]


def connect_tpch():
    """A DuckDB connection with the tpch extension (shipped by the PyPI package) loaded."""
    ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_tpch.__file__),
                                 "extensions", "*", "tpch.duckdb_extension"))
    if not ext:
        sys.exit("tpch: the duckdb-extension-tpch package ships no extension file")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext[0]}'")
    return con


def main():
    sf, outdir = float(sys.argv[1]), sys.argv[2]
    parquet = "--parquet" in sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    con = connect_tpch()
    con.execute(f"CALL dbgen(sf={sf})")
    for t in TABLES:
        con.execute(f"COPY {t} TO '{outdir}/{t}.csv' (FORMAT csv, DELIMITER '|', HEADER false)")
        if parquet:
            con.execute(f"COPY {t} TO '{outdir}/{t}.parquet' (FORMAT parquet)")
        print(t, con.execute(f"SELECT count(*) FROM {t}").fetchone()[0], flush=True)


if __name__ == "__main__":
    main()
