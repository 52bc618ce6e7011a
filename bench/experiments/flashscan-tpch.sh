# bench/experiments/flashscan-tpch.sh
# TPC-H Q1 and Q6 on lineitem in heap and in pax (with and without FlashScan), and in DuckDB over Parquet.
#
# lineitem at scale factor --sf, generated once by DuckDB's tpch extension
# (bench/workloads/tpch/dbgen.py), loaded into PostgreSQL as a heap table
# and copied into a pax table (the default group size); the same rows as a
# Parquet file on the same disk for DuckDB, the tool an analyst would pick
# instead.  Every run is cold (PostgreSQL stopped, caches dropped,
# restarted; DuckDB: caches dropped, a new process).  PostgreSQL runs
# serially (no parallel workers, no JIT); DuckDB with one thread, like for
# like, and with its default threads.  Each query is run --runs times and the
# best time kept; heap and pax must return the same rows.
#
# Options: --sf 1  --runs 2  --memory_mb 512

experiment_main() {
	local sf=1 runs=2 memory_mb=512
	parse_options flashscan-tpch "$@"

	local pristine data py dir="$BENCH_DIR/tpch-sf$sf"
	py=$(bench_venv)
	pristine=$(pristine_cluster "tpch-pax-sf$sf" load_tpch_pax "$sf")
	data=$(tier_copy "$pristine" ssd tpchpax)

	echo "query,variant,ms,rows_md5" >"$RESULT.csv"
	meta settings "SSD tier; TPC-H SF ${sf} lineitem in heap, in pax (default groups), and in Parquet for DuckDB ($("$py" -c 'import duckdb; print(duckdb.__version__)')); memory cgroup ${memory_mb} MB for PostgreSQL and DuckDB alike; shared_buffers 128MB; jit off; max_parallel_workers_per_gather 0; every run cold; best of ${runs}"
	bench_psql -d tpch -At -c "SELECT 'heap ' || pg_size_pretty(pg_relation_size('lineitem')) || ', pax ' || pg_size_pretty(pg_relation_size('lineitem_pax'))" 2>/dev/null >"$RESULT-sizes.txt" || true

	set_memory_limit "${memory_mb}M"
	local opts="-c shared_buffers=128MB -c jit=off -c max_parallel_workers_per_gather=0 -c shared_preload_libraries=flashscan"
	local q variant r
	for q in q1 q6; do
		for variant in heap pax_seq pax_flashscan; do
			tpch_pg_run "$data" "$opts" "$q" "$variant" "$runs"
		done
		for variant in duckdb_1 duckdb; do
			tpch_duckdb_run "$py" "$dir/lineitem.parquet" "$q" "$variant" "$runs"
		done
	done
	bench_psql -d tpch -At -c "SELECT 'heap ' || pg_size_pretty(pg_relation_size('lineitem')) || ', pax ' || pg_size_pretty(pg_relation_size('lineitem_pax')) || ', parquet ' || pg_size_pretty($(stat -c %s "$dir/lineitem.parquet")::bigint)" >"$RESULT-sizes.txt"
	pg_stop "$data"
	rm -rf "$data"
}

load_tpch_pax() {
	tpch_load tpch "$1" --parquet
	bench_psql -d tpch -c "CREATE EXTENSION flashscan" \
		-c "CREATE TABLE lineitem_pax (LIKE lineitem) USING pax" \
		-c "INSERT INTO lineitem_pax SELECT * FROM lineitem" \
		-c "VACUUM (FREEZE, ANALYZE) lineitem_pax"
}

tpch_query() {
	local q=$1 tab=$2
	case $q in
	q1) echo "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
		sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
		sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,
		avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
		FROM $tab WHERE l_shipdate <= date '1998-12-01' - interval '90' day
		GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus" ;;
	q6) echo "SELECT sum(l_extendedprice * l_discount) AS revenue FROM $tab
		WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-01-01' + interval '1' year
		AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24" ;;
	esac
}

tpch_pg_run() {
	local data=$1 opts=$2 q=$3 variant=$4 runs=$5 tab=lineitem_pax settings="" best="" i ms md5
	case $variant in
	heap) tab=lineitem ;;
	pax_seq) settings="SET flashscan.enable = off;" ;;
	pax_flashscan) settings="" ;;
	esac
	for ((i = 0; i < runs; i++)); do
		pg_cold_start "$data" "$RUN_DIR/tpch.log" "$opts"
		ms=$(bench_psql -d tpch -At -c "$settings EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $(tpch_query "$q" "$tab")" |
			/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])')
		best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
	done
	md5=$(bench_psql -d tpch -At -c "$settings SELECT md5(string_agg(r::text, '|')) FROM ($(tpch_query "$q" "$tab")) r")
	echo "$q,$variant,$best,$md5" >>"$RESULT.csv"
	log "$q $variant: $best ms ($md5)"
}

tpch_duckdb_run() {
	local py=$1 parquet=$2 q=$3 variant=$4 runs=$5 threads="" best
	[ "$variant" = duckdb_1 ] && threads=1
	best=$(tpch_duckdb_best "$py" "$(dirname "$parquet")" lineitem "$(tpch_query "$q" lineitem)" \
		"$threads" "$runs")
	echo "$q,$variant,$best," >>"$RESULT.csv"
	log "$q $variant: $best ms"
}
