# bench/experiments/pax-logical-wal.sh
# What wal_level = logical costs pax (its decoding records) and heap: WAL bytes and tps per change.
#
# Two tables of the same --rows rows (bigint primary key, int, float8,
# short text), one heap and one pax.  The server runs on the SSD tier with
# flashscan preloaded and autovacuum off, once with wal_level = replica and
# once with wal_level = logical (no slot: the records are written either
# way, their decoding is the subscriber's cost).  For each table in turn:
# a bulk INSERT ... SELECT of --bulk rows and one UPDATE of a non-key
# column of all of them, then with pgbench (--clients sessions, one
# statement per transaction) --txns single-row INSERTs, --txns single-row
# UPDATEs of a non-key column and --txns single-row DELETEs by key, then
# one DELETE of half the bulk rows; WAL bytes and tps per phase.  The figure of merit is the
# ratio logical / replica of each table and phase, pax's against heap's.
#
# Options: --rows 200000  --bulk 100000  --txns 10000  --clients 2

experiment_main() {
	local rows=200000 bulk=100000 txns=10000 clients=2
	parse_options pax-logical-wal "$@"

	local pristine data per_client level t
	pristine=$(pristine_cluster "logical-wal-$rows" load_logical_wal "$rows")
	per_client=$((txns / clients))
	meta settings "SSD tier; $rows preloaded rows per table; bulk INSERT of $bulk rows and an UPDATE of them, then pgbench -n -c $clients -j $clients -t $per_client per phase (one single-row statement per transaction), then a DELETE of $((bulk / 2)) rows; shared_buffers 256MB; autovacuum off; synchronous_commit on; flashscan preloaded; wal_level replica, then logical (no slot)"
	echo "level,table,phase,tps,ms,wal_bytes,changes" >"$RESULT.csv"
	for level in replica logical; do
		data=$(tier_copy "$pristine" ssd logicalwal)
		pg_start "$data" "$RUN_DIR/server-$level.log" \
			"-c shared_buffers=256MB -c autovacuum=off -c shared_preload_libraries=flashscan -c max_wal_size=4GB -c wal_level=$level"
		for t in heap pax; do
			logical_wal_sql "$level" "$t" bulk "$bulk" \
				"INSERT INTO lw_$t SELECT g, g % 1000, random(), 'note ' || g FROM generate_series($rows + 1, $rows + $bulk) g"
			logical_wal_sql "$level" "$t" bulk-update "$bulk" \
				"UPDATE lw_$t SET v = v + 1 WHERE id > $rows"
			logical_wal_phase "$level" "$t" insert \
				"INSERT INTO lw_$t VALUES (:id, :id % 1000, random(), 'note ' || :id);" \
				"\\set id 10000000 + random(1, 1000000000000)" "$clients" "$per_client"
			logical_wal_phase "$level" "$t" update "UPDATE lw_$t SET v = v + 1 WHERE id = :id;" \
				"\\set id random(1, $rows)" "$clients" "$per_client"
			logical_wal_phase "$level" "$t" delete "DELETE FROM lw_$t WHERE id = :id;" \
				"\\set id random(1, $rows)" "$clients" "$per_client"
			logical_wal_sql "$level" "$t" bulk-delete "$((bulk / 2))" \
				"DELETE FROM lw_$t WHERE id > $rows + $bulk / 2"
		done
		pg_stop "$data"
		rm -rf "$data"
	done
}

load_logical_wal() {
	local rows=$1
	bench_psql -d postgres -c "CREATE DATABASE lw"
	bench_psql -d lw -c "CREATE EXTENSION flashscan" \
		-c "CREATE TABLE lw_heap (id bigint PRIMARY KEY, k int, v float8, note text)" \
		-c "CREATE TABLE lw_pax (LIKE lw_heap INCLUDING INDEXES) USING pax" \
		-c "INSERT INTO lw_heap SELECT g, g % 1000, random(), 'note ' || g FROM generate_series(1, $rows) g" \
		-c "INSERT INTO lw_pax SELECT * FROM lw_heap" \
		-c "VACUUM ANALYZE lw_heap" -c "VACUUM ANALYZE lw_pax"
}

logical_wal_lsn() { bench_psql -d lw -At -c "SELECT pg_current_wal_lsn()"; }

logical_wal_bytes() { bench_psql -d lw -At -c "SELECT pg_wal_lsn_diff('$2', '$1')"; }

# logical_wal_phase LEVEL TABLE PHASE STATEMENT SETLINE CLIENTS TXNS_PER_CLIENT
logical_wal_phase() {
	local level=$1 t=$2 phase=$3 stmt=$4 setline=$5 clients=$6 n=$7
	local script="$RUN_DIR/$level-$t-$phase.sql" out="$RUN_DIR/$level-$t-$phase.out" lsn0 lsn1 tps lat
	printf '%s\n%s\n' "$setline" "$stmt" >"$script"
	chown postgres: "$script"
	bench_psql -d lw -c CHECKPOINT
	lsn0=$(logical_wal_lsn)
	bench_pgbench -n -c "$clients" -j "$clients" -t "$n" -f "$script" lw >"$out" 2>&1 ||
		{ tail "$out" >&2; die "pgbench $level $t $phase failed"; }
	lsn1=$(logical_wal_lsn)
	read -r tps lat < <(pgbench_result "$out")
	log "$level $t $phase: $tps tps"
	echo "$level,$t,$phase,$tps,$lat,$(logical_wal_bytes "$lsn0" "$lsn1"),$((clients * n))" >>"$RESULT.csv"
}

# logical_wal_sql LEVEL TABLE PHASE CHANGES SQL: one statement, timed.
logical_wal_sql() {
	local level=$1 t=$2 phase=$3 changes=$4 sql=$5 lsn0 lsn1 t0 t1
	bench_psql -d lw -c CHECKPOINT
	lsn0=$(logical_wal_lsn)
	t0=$(date +%s%N)
	bench_psql -d lw -c "$sql"
	t1=$(date +%s%N)
	lsn1=$(logical_wal_lsn)
	log "$level $t $phase: $(((t1 - t0) / 1000000)) ms"
	echo "$level,$t,$phase,,$(((t1 - t0) / 1000000)),$(logical_wal_bytes "$lsn0" "$lsn1"),$changes" >>"$RESULT.csv"
}
