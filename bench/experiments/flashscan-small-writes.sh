# bench/experiments/flashscan-small-writes.sh
# Small transactions on pax (single-row INSERT and UPDATE, the delta page) against heap: tps, bytes, WAL.
#
# Two tables of the same 100,000 rows (bigint id with a btree index, int,
# float8, short text), one heap and one pax (loaded in bulk: groups).  Then
# for each table in turn, with pgbench (--clients sessions, one transaction
# per statement): --txns single-row INSERTs of new ids, then --txns
# single-row UPDATEs of random existing rows; after each phase the table's
# size, the WAL written and the groups/delta pages of the pax table; then
# VACUUM, and a full scan (count and sum over every row) before and after
# it.  The server runs on the SSD tier with autovacuum off, so that the
# delta is measured before VACUUM turns it into groups.
#
# Options: --txns 20000  --clients 2

experiment_main() {
	local txns=20000 clients=2
	parse_options flashscan-small-writes "$@"

	local pristine data per_client
	pristine=$(pristine_cluster small-writes load_small_writes)
	data=$(tier_copy "$pristine" ssd smallwrites)
	per_client=$((txns / clients))
	meta settings "SSD tier; 100,000 preloaded rows per table (pax loaded in bulk); pgbench -n -c $clients -j $clients -t $per_client per phase, one single-row statement per transaction; shared_buffers 256MB; autovacuum off; synchronous_commit on"

	pg_start "$data" "$RUN_DIR/server.log" \
		"-c shared_buffers=256MB -c autovacuum=off -c shared_preload_libraries=flashscan -c max_wal_size=4GB"
	echo "table,phase,tps,ms,size_bytes,wal_bytes,groups,delta_pages" >"$RESULT.csv"
	local t
	for t in heap pax; do
		small_writes_scan "$t" loaded
		small_writes_phase "$t" insert "INSERT INTO sw_$t VALUES (:id, :id % 1000, random(), 'note ' || :id);" \
			"\\set id 1000000 + random(1, 1000000000)" "$clients" "$per_client"
		small_writes_phase "$t" update "UPDATE sw_$t SET v = v + 1 WHERE id = :id;" \
			"\\set id random(1, 100000)" "$clients" "$per_client"
		small_writes_scan "$t" scan_before_vacuum
		small_writes_sql "$t" vacuum "VACUUM sw_$t"
		small_writes_scan "$t" scan_after_vacuum
	done
	pg_stop "$data"
	rm -rf "$data"
}

load_small_writes() {
	bench_psql -d postgres -c "CREATE DATABASE sw"
	bench_psql -d sw -c "CREATE EXTENSION flashscan" \
		-c "CREATE TABLE sw_heap (id bigint, k int, v float8, note text)" \
		-c "CREATE TABLE sw_pax (LIKE sw_heap) USING pax" \
		-c "INSERT INTO sw_heap SELECT g, g % 1000, random(), 'note ' || g FROM generate_series(1, 100000) g" \
		-c "INSERT INTO sw_pax SELECT * FROM sw_heap" \
		-c "CREATE INDEX ON sw_heap (id)" -c "CREATE INDEX ON sw_pax (id)" \
		-c "VACUUM ANALYZE sw_heap" -c "VACUUM ANALYZE sw_pax"
}

# small_writes_state TABLE: "size groups delta_pages" of sw_TABLE.
small_writes_state() {
	local t=$1
	if [ "$t" = pax ]; then
		bench_psql -d sw -At -F ' ' -c "SELECT pg_relation_size('sw_pax'), count(*), count(*) FILTER (WHERE delta) FROM pax_groups('sw_pax')"
	else
		echo "$(bench_psql -d sw -At -c "SELECT pg_relation_size('sw_heap')") 0 0"
	fi
}

small_writes_lsn() { bench_psql -d sw -At -c "SELECT pg_current_wal_lsn()"; }

small_writes_wal() { bench_psql -d sw -At -c "SELECT pg_wal_lsn_diff('$2', '$1')"; }

# small_writes_phase TABLE PHASE STATEMENT SETLINE CLIENTS TXNS_PER_CLIENT
small_writes_phase() {
	local t=$1 phase=$2 stmt=$3 setline=$4 clients=$5 n=$6 script="$RUN_DIR/$1-$2.sql"
	local lsn0 lsn1 out="$RUN_DIR/$1-$2.out" tps lat state
	printf '%s\n%s\n' "$setline" "$stmt" >"$script"
	chown postgres: "$script"
	lsn0=$(small_writes_lsn)
	bench_pgbench -n -c "$clients" -j "$clients" -t "$n" -f "$script" sw >"$out" 2>&1 ||
		{ tail "$out" >&2; die "pgbench $t $phase failed"; }
	lsn1=$(small_writes_lsn)
	read -r tps lat < <(pgbench_result "$out")
	state=$(small_writes_state "$t")
	log "$t $phase: $tps tps, state $state"
	echo "$t,$phase,$tps,$lat,${state// /,},$(small_writes_wal "$lsn0" "$lsn1")" |
		awk -F, -v OFS=, '{ print $1, $2, $3, $4, $5, $8, $6, $7 }' >>"$RESULT.csv"
}

# small_writes_sql TABLE PHASE SQL: run SQL once, timed.
small_writes_sql() {
	local t=$1 phase=$2 sql=$3 lsn0 lsn1 t0 t1 state
	lsn0=$(small_writes_lsn)
	t0=$(date +%s%N)
	bench_psql -d sw -c "$sql"
	t1=$(date +%s%N)
	lsn1=$(small_writes_lsn)
	state=$(small_writes_state "$t")
	echo "$t,$phase,,$(((t1 - t0) / 1000000)),${state// /,},$(small_writes_wal "$lsn0" "$lsn1")" |
		awk -F, -v OFS=, '{ print $1, $2, $3, $4, $5, $8, $6, $7 }' >>"$RESULT.csv"
}

# small_writes_scan TABLE PHASE: a full scan, best of 3 (warm).
small_writes_scan() {
	local t=$1 phase=$2 best="" i ms state
	for i in 1 2 3; do
		ms=$(bench_psql -d sw -At -c "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*), sum(v) FROM sw_$t" |
			/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])')
		best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
	done
	state=$(small_writes_state "$t")
	echo "$t,$phase,,$best,${state// /,},0" |
		awk -F, -v OFS=, '{ print $1, $2, $3, $4, $5, $8, $6, $7 }' >>"$RESULT.csv"
}
