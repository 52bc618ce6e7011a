# bench/experiments/pax-drift.sh
# What scattered deletes and updates leave behind in a pax table: its size and the blocks a FlashScan of two columns reads, fresh, after the changes, after VACUUM.
#
# The measurement of the pax issue's "delete/update drift": a 16-column
# table of --rows rows (ints, floats, dates, short texts, the default group
# size) loaded in bulk with a btree on id; a FlashScan of two of its columns
# (SELECT sum(c2), max(c16) ... WHERE c3 >= 0, every row) counts the blocks
# it reads (EXPLAIN ANALYZE's Blocks Read); then --delete_permille per mille
# of the rows deleted spread over the table (every id % (1000 /
# --delete_permille) = 7) and --updates single-row UPDATEs of random rows,
# the count again; then VACUUM and the count again, against the fresh load's.
# Also the table's size (main fork) at each step.  Warm, dev-size: the
# point is blocks and bytes, not time.
#
# Options: --rows 1000000  --delete_permille 1  --updates 80

experiment_main() {
	local rows=1000000 delete_permille=1 updates=80
	parse_options pax-drift "$@"
	local pristine data
	pristine=$(pristine_cluster "pax-drift-$rows" load_drift "$rows")
	data=$(tier_copy "$pristine" ssd paxdrift)
	meta settings "SSD tier; ${rows} rows x 16 columns in pax (default groups), btree on id; ${delete_permille} per mille deleted (id % $((1000 / delete_permille)) = 7), ${updates} single-row UPDATEs of random ids; FlashScan of 2 columns; default settings, autovacuum off"
	echo "state,blocks_read,table_blocks,groups,row_map_blocks,sparse_groups" >"$RESULT.csv"
	pg_start "$data" "$RUN_DIR/drift.log" "-c shared_preload_libraries=flashscan -c autovacuum=off"
	drift_state fresh
	bench_psql -d drift -c "DELETE FROM t WHERE id % $((1000 / delete_permille)) = 7"
	local i
	for ((i = 0; i < updates; i++)); do
		bench_psql -d drift -c "UPDATE t SET c6 = c6 + 1 WHERE id = (random() * ($rows - 1))::int + 1"
	done
	drift_state after_changes
	bench_psql -d drift -c "VACUUM t"
	drift_state after_vacuum
	pg_stop "$data"
	rm -rf "$data"
}

load_drift() {
	bench_psql -d postgres -c "CREATE DATABASE drift"
	bench_psql -d drift -c "CREATE EXTENSION flashscan" -c "
		CREATE TABLE t ($(wide16_columns)) USING pax;
		INSERT INTO t $(wide16_select "$1");
		CREATE INDEX ON t (id);" -c "VACUUM (FREEZE, ANALYZE) t"
}

# drift_state STATE: blocks a two-column FlashScan reads, and the table's shape.
drift_state() {
	local blocks shape
	blocks=$(bench_psql -d drift -At -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN (ANALYZE, FORMAT JSON) SELECT sum(c2), max(c16) FROM t WHERE c3 >= 0" |
		/usr/bin/python3 -c '
import json, sys
def find(n):
    if "Blocks Read" in n:
        return n["Blocks Read"]
    for c in n.get("Plans", []):
        r = find(c)
        if r is not None:
            return r
print(find(json.load(sys.stdin)[0]["Plan"]))')
	shape=$(bench_psql -d drift -At -F ',' -c "SELECT pg_relation_size('t') / 8192, count(*), coalesce(sum(row_map_blocks), 0), count(*) FILTER (WHERE sparse) FROM pax_groups('t')")
	echo "$1,$blocks,$shape" >>"$RESULT.csv"
	log "$1: blocks read $blocks; table blocks, groups, row map blocks, sparse groups: $shape"
}
