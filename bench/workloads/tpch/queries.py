#!/usr/bin/env python3
"""Write TPC-H's 22 queries as DuckDB's tpch extension gives them (standard
SQL that PostgreSQL runs unchanged) to DIR/qNN.sql, without the final
semicolon, so a caller can wrap one in a subquery.

usage: queries.py DIR
"""
import os
import sys

from dbgen import connect_tpch


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    con = connect_tpch()
    for nr, query in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall():
        with open(os.path.join(outdir, f"q{nr:02d}.sql"), "w") as f:
            f.write(query.strip().rstrip(";") + "\n")


if __name__ == "__main__":
    main()
