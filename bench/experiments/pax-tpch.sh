# bench/experiments/pax-tpch.sh
# TPC-H's 22 queries on heap and on pax tables, default settings, with the keys only and with the usual extra indexes; DuckDB as the outside reference.
#
# The measurement of the pax issue ("fast where users actually use it"):
# TPC-H at scale factor --sf, generated once by DuckDB's tpch extension,
# loaded into heap tables (schema public) with their primary keys, and
# copied into pax tables (schema pax, the default group size, the same
# keys).  The queries are DuckDB's texts of the 22 (tpch_queries()), run
# unchanged by PostgreSQL with search_path set to one schema or the other.
# Default settings (shared_buffers 128MB, 2 parallel workers, JIT as
# configured by default), flashscan preloaded, SSD tier, no memory cap:
# warm, every query run --runs times after one unmeasured run, best kept;
# heap and pax must return the same rows (md5 of the sorted rows).  Then
# the usual extra indexes (l_partkey, l_suppkey, o_custkey, ps_suppkey,
# c_nationkey, s_nationkey) in both schemas, ANALYZE, and the 22 again.
# A query over --timeout_s is stopped and reported as such.  DuckDB over
# Parquet files of the same rows (default threads, warm) for reference.
#
# Options: --sf 1  --runs 2  --timeout_s 300  --queries "1 2 ... 22"

experiment_main() {
	local sf=1 runs=2 timeout_s=300 queries="1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22"
	parse_options pax-tpch "$@"
	local pristine data py qdir="$RUN_DIR/queries" dir="$BENCH_DIR/tpch-sf$sf"
	py=$(bench_venv)
	"$py" "$WORKLOADS/tpch/queries.py" "$qdir"
	chmod -R a+rX "$qdir"
	pristine=$(pristine_cluster "tpch-pax-all-sf$sf" load_tpch_both "$sf")
	data=$(tier_copy "$pristine" ssd paxtpch)
	echo "indexes,query,variant,ms,rows_md5" >"$RESULT.csv"
	meta settings "SSD tier; TPC-H SF ${sf}, every table in heap (schema public) and in pax (schema pax, default groups), primary keys, then the extra indexes; default settings (shared_buffers 128MB, max_parallel_workers_per_gather 2, jit default), flashscan preloaded; warm (no memory cap), best of ${runs} after one unmeasured run; statement_timeout ${timeout_s} s; DuckDB $("$py" -c 'import duckdb; print(duckdb.__version__)') over Parquet, default threads, warm"
	set_memory_limit -1
	pg_start "$data" "$RUN_DIR/tpch.log" "-c shared_preload_libraries=flashscan"
	bench_psql -d tpch -At -c "SELECT 'heap ' || pg_size_pretty(sum(pg_total_relation_size(c.oid)) FILTER (WHERE nspname = 'public')) || ', pax ' || pg_size_pretty(sum(pg_total_relation_size(c.oid)) FILTER (WHERE nspname = 'pax')) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE relkind = 'r' AND nspname IN ('public', 'pax')" >"$RESULT-sizes.txt"
	local q idx
	for idx in keys extra; do
		if [ "$idx" = extra ]; then
			tpch_extra_indexes public
			tpch_extra_indexes pax
		fi
		for q in $queries; do
			q=$(printf 'q%02d' "$q")
			tpch_all_run "$idx" "$q" heap "$qdir/$q.sql" "$runs" "$timeout_s"
			tpch_all_run "$idx" "$q" pax "$qdir/$q.sql" "$runs" "$timeout_s"
		done
	done
	pg_stop "$data"
	rm -rf "$data"
	for q in $queries; do
		q=$(printf 'q%02d' "$q")
		echo "duckdb,$q,duckdb,$(tpch_duckdb_warm "$py" "$dir" "$qdir/$q.sql" "$runs")," >>"$RESULT.csv"
	done
}

load_tpch_both() {
	tpch_load tpch "$1" --parquet
	local t
	bench_psql -d tpch -c "CREATE EXTENSION flashscan" -c "CREATE SCHEMA pax"
	for t in region nation part supplier partsupp customer orders lineitem; do
		bench_psql -d tpch -c "CREATE TABLE pax.$t (LIKE public.$t INCLUDING ALL) USING pax" \
			-c "INSERT INTO pax.$t SELECT * FROM public.$t"
	done
	bench_psql -d tpch -c "VACUUM (FREEZE, ANALYZE)"
}

# The indexes a TPC-H user usually adds: the foreign keys not led by a primary key.
tpch_extra_indexes() {
	bench_psql -d tpch -c "SET search_path = $1" \
		-c "CREATE INDEX ON lineitem (l_partkey)" -c "CREATE INDEX ON lineitem (l_suppkey)" \
		-c "CREATE INDEX ON orders (o_custkey)" -c "CREATE INDEX ON partsupp (ps_suppkey)" \
		-c "CREATE INDEX ON customer (c_nationkey)" -c "CREATE INDEX ON supplier (s_nationkey)" \
		-c "ANALYZE"
}

# tpch_all_run INDEXES QUERY SCHEMA FILE RUNS TIMEOUT_S
tpch_all_run() {
	local idx=$1 q=$2 variant=$3 file=$4 runs=$5 timeout_s=$6 schema=public best="" i ms md5 sql
	[ "$variant" = pax ] && schema=pax
	sql=$(cat "$file")
	local set="SET search_path = $schema; SET statement_timeout = '${timeout_s}s';"
	local err="$RUN_DIR/$idx-$q-$variant.err"
	for ((i = 0; i <= runs; i++)); do
		# the plan of the last run stays in the run directory, to see why a query is slow
		if ! ms=$(bench_psql -d tpch -At -c "$set" -c "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $sql" 2>"$err" |
			tee "$RUN_DIR/$idx-$q-$variant.plan.json" | /usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)[0]; print(round(p["Planning Time"] + p["Execution Time"], 1))' 2>>"$err"); then
			grep -q "statement timeout" "$err" || { cat "$err" >&2; die "$q failed on $variant"; }
			best=timeout
			break
		fi
		# the first run only warms the caches
		[ "$i" -eq 0 ] && continue
		best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
	done
	md5=""
	[ "$best" != timeout ] &&
		md5=$(bench_psql -d tpch -At -c "$set" -c "SELECT md5(string_agg(r::text, '|' ORDER BY r::text)) FROM ($sql) r")
	echo "$idx,$q,$variant,$best,$md5" >>"$RESULT.csv"
	log "$idx $q $variant: $best ms ($md5)"
}

# tpch_duckdb_warm PY DIR FILE RUNS: DuckDB's best of RUNS after one run, over DIR's Parquet files.
tpch_duckdb_warm() {
	"$1" -c '
import duckdb, sys, time
con = duckdb.connect()
for t in "region nation part supplier partsupp customer orders lineitem".split():
    con.execute("CREATE VIEW %s AS SELECT * FROM read_parquet(\x27%s/%s.parquet\x27)" % (t, sys.argv[1], t))
sql = open(sys.argv[2]).read()
best = None
for i in range(int(sys.argv[3]) + 1):
    t = time.perf_counter()
    con.execute(sql).fetchall()
    ms = (time.perf_counter() - t) * 1000
    if i > 0:
        best = ms if best is None else min(best, ms)
print(round(best, 1))' "$2" "$3" "$4"
}
