# bench/lib/workloads.sh: loading and running the benchmark workloads.
# Every function takes the connection from bench_psql / BENCH_DIR / BENCH_PORT
# (lib/common.sh) and a database name.

WORKLOADS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../workloads" && pwd)

bench_pgbench() {
	runuser -u postgres -- "$PGBIN/pgbench" -h "$BENCH_DIR" -p "$BENCH_PORT" "$@"
}

# pgbench_load DB SCALE: pgbench's TPC-B-like tables.
pgbench_load() {
	local db=$1 scale=$2
	bench_psql -d postgres -c "CREATE DATABASE $db"
	bench_pgbench -i -q -s "$scale" "$db" >/dev/null 2>&1
}

# tpcc_load DB WAREHOUSES: the nine tables, two loader processes at a time.
tpcc_load() {
	local db=$1 w=$2
	bench_psql -d postgres -c "CREATE DATABASE $db"
	bench_psql -d "$db" -f "$WORKLOADS/tpcc/schema.sql" >/dev/null
	bench_psql -d "$db" -c "SELECT tpcc_load_items()" >/dev/null
	seq 1 "$w" | xargs -P 2 -I{} runuser -u postgres -- "$PGBIN/psql" -X -q \
		-h "$BENCH_DIR" -p "$BENCH_PORT" -d "$db" -v ON_ERROR_STOP=1 \
		-c "SELECT tpcc_load_warehouse({})" >/dev/null
	bench_psql -d "$db" -c "SELECT tpcc_index()" -c "VACUUM ANALYZE" >/dev/null
}

# The pgbench options of the TPC-C mix.
tpcc_pgbench_args() {
	local w=$1 t=$WORKLOADS/tpcc
	echo "-n -D warehouses=$w --max-tries=10" \
		"-f $t/neworder.sql@45 -f $t/payment.sql@43 -f $t/orderstatus.sql@4" \
		"-f $t/delivery.sql@4 -f $t/stocklevel.sql@4"
}

# New-Orders committed so far (each advances one district's d_next_o_id).
tpcc_new_orders() {
	bench_psql -d "$1" -At -c "SELECT sum(d_next_o_id - 3001) FROM district"
}

# tpcc_run DB WAREHOUSES SECONDS OUTFILE [pgbench options...]
# Writes pgbench's output to OUTFILE and prints "tpmC tps latency_ms".
tpcc_run() {
	local db=$1 w=$2 secs=$3 out=$4
	shift 4
	local before after
	before=$(tpcc_new_orders "$db")
	# shellcheck disable=SC2046
	bench_pgbench $(tpcc_pgbench_args "$w") -T "$secs" "$@" "$db" >"$out" 2>&1
	after=$(tpcc_new_orders "$db")
	local tps lat
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | tail -1)
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out" | head -1)
	awk -v n=$((after - before)) -v s="$secs" -v tps="$tps" -v lat="$lat" \
		'BEGIN { printf "%.1f %s %s\n", n * 60 / s, tps, lat }'
}

# pgbench_result FILE: "tps latency_ms" from pgbench output.
pgbench_result() {
	local tps lat
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$1" | tail -1)
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$1" | head -1)
	echo "$tps $lat"
}

# pgbench_progress FILE: the per-interval tps of "-P" as a space-separated list.
pgbench_progress() {
	sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\2/p' "$1" | tr '\n' ' '
}

# The Python environment with DuckDB and its TPC-H extension (PyPI), made
# once under BENCH_DIR.
bench_venv() {
	local venv=$BENCH_DIR/venv
	if ! "$venv/bin/python" -c 'import duckdb, duckdb_extension_tpch' 2>/dev/null; then
		/usr/bin/python3 -m venv "$venv"
		"$venv/bin/pip" install -q duckdb==1.5.5 duckdb-extension-tpch==1.5.5
	fi
	echo "$venv/bin/python"
}

# tpch_load DB SF [--parquet]: generate with DuckDB, COPY into PostgreSQL,
# add the keys, VACUUM ANALYZE.  The generated files stay in
# BENCH_DIR/tpch-sfSF for reuse (and for DuckDB's side of comparisons).
tpch_load() {
	local db=$1 sf=$2 dir="$BENCH_DIR/tpch-sf$2" py t
	py=$(bench_venv)
	[ -f "$dir/lineitem.csv" ] || "$py" "$WORKLOADS/tpch/dbgen.py" "$sf" "$dir" ${3:-} >&2
	chmod -R a+rX "$dir"
	bench_psql -d postgres -c "CREATE DATABASE $db"
	bench_psql -d "$db" -f "$WORKLOADS/tpch/schema.sql" >/dev/null
	for t in region nation part supplier partsupp customer orders lineitem; do
		bench_psql -d "$db" -c "COPY $t FROM '$dir/$t.csv' (FORMAT csv, DELIMITER '|')"
	done
	bench_psql -d "$db" \
		-c "ALTER TABLE region ADD PRIMARY KEY (r_regionkey)" \
		-c "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)" \
		-c "ALTER TABLE part ADD PRIMARY KEY (p_partkey)" \
		-c "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)" \
		-c "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)" \
		-c "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)" \
		-c "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)" \
		-c "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)" \
		-c "VACUUM (FREEZE, ANALYZE)"
}

# tpch_duckdb_best PY DIR "TABLES" SQL THREADS RUNS: DuckDB's best time (ms)
# over RUNS cold runs (caches dropped, a new process in the memory cgroup)
# of SQL over views of DIR/<table>.parquet; THREADS empty: DuckDB's default.
tpch_duckdb_best() {
	local py=$1 dir=$2 tables=$3 sql=$4 threads=$5 runs=$6 best="" i ms
	for ((i = 0; i < runs; i++)); do
		drop_caches
		ms=$(in_cgroup "$py" -c '
import duckdb, sys, time
con = duckdb.connect()
if sys.argv[1]:
    con.execute("SET threads = " + sys.argv[1])
for t in sys.argv[3].split():
    con.execute("CREATE VIEW %s AS SELECT * FROM read_parquet(\x27%s/%s.parquet\x27)" % (t, sys.argv[2], t))
t = time.perf_counter()
con.execute(sys.argv[4]).fetchall()
print(round((time.perf_counter() - t) * 1000, 1))' "$threads" "$dir" "$tables" "$sql")
		best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
	done
	echo "$best"
}

# tk_load DB TABLE K N: QDTT's T_k (workloads/synthetic.sql).
tk_load() {
	bench_psql -d "$1" -f "$WORKLOADS/synthetic.sql" >/dev/null
	bench_psql -d "$1" -c "SELECT * FROM bench_make_tk('$2', $3, $4)" -c "VACUUM (FREEZE) $2"
}

# sort_table_load DB TABLE ROW_BYTES N [ORDER]: SSD-sort's fixed-row-size
# table, rows in random key order or (ORDER "key") in key order, with a
# btree index on the key.
sort_table_load() {
	bench_psql -d "$1" -f "$WORKLOADS/synthetic.sql" >/dev/null
	bench_psql -d "$1" -c "SELECT * FROM bench_make_sort_table('$2', $3, $4, '${5:-random}')" \
		-c "CREATE INDEX ON $2 (key)" -c "VACUUM (FREEZE, ANALYZE) $2"
}

# The 16-column rows of the pax experiments (ints, floats, dates, short
# texts): wide16_columns gives the column list, wide16_select N a SELECT
# of N such rows (id 1 to N).
wide16_columns() {
	echo "id int, c2 int, c3 float8, c4 date, c5 text, c6 int, c7 float8, c8 int, c9 date, c10 text, c11 int, c12 float8, c13 int, c14 text, c15 int, c16 float8"
}

wide16_select() {
	echo "SELECT i, i, i * 0.5, date '2000-01-01' + i % 9000, 'val' || (i % 100000), i % 1000, i * 1.5,
		i % 77, date '2010-01-01' + i % 3000, md5(i::text), i % 13, i * 2.5, i % 500,
		'x' || (i % 777), i % 100, i * 0.1
		FROM generate_series(1, $1) i"
}
