# bench/experiments/flashjoin-tpch.sh
# TPC-H Q3 and Q10: heap, pax with FlashScan (HPAX), FlashJoin, the default plan, and DuckDB.
#
# The FlashJoin paper's Figure 13 on the SSD tier: TPC-H at --sf (generated
# once by DuckDB's tpch extension), customer, orders, lineitem and nation
# in heap (with their primary keys, as tpch_load adds them) and copied into
# pax tables (no indexes), and the same rows as Parquet for DuckDB.  Every
# run is cold (PostgreSQL stopped, caches dropped, restarted; DuckDB: caches
# dropped, a new process).  work_mem --work_mem with hash_mem_multiplier 1
# (the paper's memory per operator); PostgreSQL serial (no parallel
# workers, no JIT), DuckDB with one thread and with its default threads.
# Variants:
#   heap       the heap tables (PostgreSQL's plan, indexes available)
#   hpax       pax, FlashScan, flashscan.flashjoin = off (early materialization)
#   flashjoin  pax, flashscan.flashjoin = rewrite (late materialization)
#   default    pax, default settings (flashscan.flashjoin = cost)
# Each query runs --runs times, best kept; every PostgreSQL variant must
# return the same rows.
#
# Options: --sf 1  --runs 2  --memory_mb 512  --work_mem 16MB

experiment_main() {
	local sf=1 runs=2 memory_mb=512 work_mem=16MB
	parse_options flashjoin-tpch "$@"

	local pristine data py dir="$BENCH_DIR/tpch-sf$sf"
	py=$(bench_venv)
	pristine=$(pristine_cluster "tpch-join-sf$sf" load_tpch_join "$sf")
	data=$(tier_copy "$pristine" ssd tpchjoin)

	echo "query,variant,ms,rows_md5,plan" >"$RESULT.csv"
	meta settings "SSD tier; TPC-H SF ${sf}: customer, orders, lineitem, nation in heap (primary keys) and in pax (default groups, no indexes), and in Parquet for DuckDB ($("$py" -c 'import duckdb; print(duckdb.__version__)')); memory cgroup ${memory_mb} MB for PostgreSQL and DuckDB alike; shared_buffers 128MB; work_mem ${work_mem}; hash_mem_multiplier 1; jit off; max_parallel_workers_per_gather 0; every run cold; best of ${runs}"

	set_memory_limit "${memory_mb}M"
	local opts="-c shared_buffers=128MB -c jit=off -c max_parallel_workers_per_gather=0 -c hash_mem_multiplier=1 -c work_mem=$work_mem -c shared_preload_libraries=flashscan"
	local q variant
	for q in q3 q10; do
		for variant in heap hpax flashjoin default; do
			tpchj_pg_run "$data" "$opts" "$q" "$variant" "$runs"
		done
		for variant in duckdb_1 duckdb; do
			tpchj_duckdb_run "$py" "$dir" "$q" "$variant" "$runs"
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

load_tpch_join() {
	tpch_load tpch "$1" --parquet
	bench_psql -d tpch -c "CREATE EXTENSION flashscan"
	local t
	for t in customer orders lineitem nation; do
		bench_psql -d tpch -c "CREATE TABLE ${t}_pax (LIKE $t) USING pax" \
			-c "INSERT INTO ${t}_pax SELECT * FROM $t" -c "VACUUM (FREEZE, ANALYZE) ${t}_pax"
	done
}

# tpchj_query Q SUFFIX: the query over customer$SUFFIX, orders$SUFFIX, ...
tpchj_query() {
	local q=$1 s=$2
	case $q in
	q3) echo "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
		FROM customer$s, orders$s, lineitem$s
		WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
		  AND o_orderdate < date '1995-03-15' AND l_shipdate > date '1995-03-15'
		GROUP BY l_orderkey, o_orderdate, o_shippriority
		ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10" ;;
	q10) echo "SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name,
		       c_address, c_phone, c_comment
		FROM customer$s, orders$s, lineitem$s, nation$s
		WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
		  AND o_orderdate >= date '1993-10-01' AND o_orderdate < date '1993-10-01' + interval '3' month
		  AND l_returnflag = 'R' AND c_nationkey = n_nationkey
		GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
		ORDER BY revenue DESC, c_custkey LIMIT 20" ;;
	esac
}

tpchj_pg_run() {
	local data=$1 opts=$2 q=$3 variant=$4 runs=$5 s=_pax settings="" best="" i ms md5 plan
	case $variant in
	heap) s="" ;;
	hpax) settings="SET flashscan.flashjoin = off;" ;;
	flashjoin) settings="SET flashscan.flashjoin = rewrite;" ;;
	default) ;;
	esac
	for ((i = 0; i < runs; i++)); do
		pg_cold_start "$data" "$RUN_DIR/tpch.log" "$opts"
		ms=$(bench_psql -d tpch -At -c "$settings EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $(tpchj_query "$q" "$s")" |
			/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])')
		best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
	done
	md5=$(bench_psql -d tpch -At -c "$settings SELECT md5(string_agg(r::text, '|')) FROM ($(tpchj_query "$q" "$s")) r")
	plan=$(bench_psql -d tpch -At -c "$settings EXPLAIN (COSTS OFF) $(tpchj_query "$q" "$s")" |
		grep -oE "Flash Fetch|Hash Join|Merge Join|Nested Loop" | sort | uniq -c | awk '{printf "%s%s x%s", sep, $2" "$3, $1; sep="; "}')
	echo "$q,$variant,$best,$md5,$plan" >>"$RESULT.csv"
	log "$q $variant: $best ms ($md5) $plan"
}

tpchj_duckdb_run() {
	local py=$1 dir=$2 q=$3 variant=$4 runs=$5 threads="" best
	[ "$variant" = duckdb_1 ] && threads=1
	best=$(tpch_duckdb_best "$py" "$dir" "customer orders lineitem nation" "$(tpchj_query "$q" "")" \
		"$threads" "$runs")
	echo "$q,$variant,$best,," >>"$RESULT.csv"
	log "$q $variant: $best ms"
}
