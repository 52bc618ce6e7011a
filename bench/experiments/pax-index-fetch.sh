# bench/experiments/pax-index-fetch.sh
# Random index fetches of a few columns: heap against pax, pax reading every column or only the needed ones.
#
# The measurement of the pax issue ("2,000 random index fetches of 2 of 16
# columns"): a 16-column table of --rows rows (ints, floats, dates, short
# texts) in heap and in pax with a btree on id, --fetches random ids in a
# keys table, and
#   SELECT sum(t.c2), max(t.c16) FROM keys JOIN t ON t.id = keys.k
# run as a nested loop over index probes (hash and merge joins and bitmap
# scans off), warm (one run first to load the caches), --runs times per
# variant in turn, best kept:
#   heap        the heap table
#   pax_all     pax, flashscan.scan_needed_columns = off (every column read)
#   pax_needed  pax, the default (only c2, c16 and id read)
# Also with 8 columns fetched (--wide_cols), where pax reads more.
#
# Options: --rows 2000000  --fetches 2000  --runs 5  --memory_mb 1024

experiment_main() {
	local rows=2000000 fetches=2000 runs=5 memory_mb=1024
	parse_options pax-index-fetch "$@"

	local pristine data
	pristine=$(pristine_cluster "pax-index-fetch-${rows}" load_fetch_tables "$rows" "$fetches")
	data=$(tier_copy "$pristine" ssd paxfetch)
	echo "columns,variant,ms" >"$RESULT.csv"
	meta settings "SSD tier; ${rows} rows x 16 columns in heap and pax (default groups), btree on id; ${fetches} random keys; memory cgroup ${memory_mb} MB; shared_buffers 128MB; nested loop over index scans (enable_hashjoin, enable_mergejoin, enable_bitmapscan off); warm; best of ${runs}"
	set_memory_limit "${memory_mb}M"
	pg_start "$data" "$RUN_DIR/fetch.log" "-c shared_buffers=128MB -c jit=off -c shared_preload_libraries=flashscan"
	local cols v i
	for cols in "sum(t.c2), max(t.c16)" "sum(t.c2), sum(t.c3), max(t.c4), max(t.c5), sum(t.c6), sum(t.c7), max(t.c10), sum(t.c16)"; do
		for ((i = 0; i <= runs; i++)); do
			for v in heap pax_all pax_needed; do
				fetch_run "$cols" "$v" "$i"
			done
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

load_fetch_tables() {
	bench_psql -d postgres -c "CREATE DATABASE fetchdb"
	bench_psql -d fetchdb -c "CREATE EXTENSION flashscan" -c "
		CREATE TABLE t_heap ($(wide16_columns));
		INSERT INTO t_heap $(wide16_select "$1");
		CREATE TABLE t_pax (LIKE t_heap) USING pax;
		INSERT INTO t_pax SELECT * FROM t_heap;
		CREATE INDEX ON t_heap (id);
		CREATE INDEX ON t_pax (id);
		CREATE TABLE keys AS SELECT (random() * ($1 - 1))::int + 1 AS k FROM generate_series(1, $2);" \
		-c "VACUUM (FREEZE, ANALYZE)"
}

fetch_run() {
	local cols=$1 variant=$2 i=$3 tab=t_pax settings="SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off;" ms
	case $variant in
	heap) tab=t_heap ;;
	pax_all) settings+=" SET flashscan.scan_needed_columns = off;" ;;
	esac
	ms=$(bench_psql -d fetchdb -At -c "$settings EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT $cols FROM keys JOIN $tab t ON t.id = keys.k" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])')
	# the first round only warms the caches
	[ "$i" -eq 0 ] && return
	echo "$(echo "$cols" | tr -cd ',' | wc -c | awk '{print $1 + 1}'),$variant,$ms" >>"$RESULT.csv"
}
