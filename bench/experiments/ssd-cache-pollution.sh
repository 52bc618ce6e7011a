# bench/experiments/ssd-cache-pollution.sh
# Scan pollution: skewed select-only on the HDD tier with a 25% cache, alone and with concurrent large scans of a cold table, tac vs clock.
#
# Per policy, one server: a warm-up long enough to fill the cache, then four
# measured phases:
#   clean       the OLTP workload alone;
#   seqscan     plus a loop of sequential scans of a 160 MB cold table
#               (one row per page);
#   random      plus a loop of index scans of the same table in random key
#               order, so every cold page is read once, at random;
#   clean-after the OLTP workload alone again.
# The polluted phases are compared with the mean of the two scan-free phases
# around them, so that a cache still warming up does not pass for pollution.
# Reported per phase: OLTP tps and the hit ratio of the OLTP relations
# (pgbench_accounts and its key, from ssd_cache_relations), which the
# polluter's own reads do not dilute.  The polluter also competes for the
# HDD's 200 IOPS, so tps falls in every polluted phase; the hit ratio is the
# cache's doing.
#
# Options: --scale 30 --seconds 60 --warmup 240 --clients 8 --pct 25
#          --policies "tac clock"

experiment_main() {
	local scale=30 seconds=60 warmup=240 clients=8 pct=25 policies="tac clock"
	parse_options ssd-cache-pollution "$@"
	local pristine db_mb policy phase
	pristine=$(cache_pristine "$scale")
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	meta workloads "pgbench select-only, skewed (random_gaussian 5.0), scale $scale, database ${db_mb} MB incl. a 160 MB cold table; cache ${pct}% of the database"
	meta settings "clients $clients (-j 2), warm-up ${warmup} s, then four phases of ${seconds} s on the same server"
	echo "policy,phase,tps,oltp_hit_ratio,oltp_cached_blocks,cold_cached_blocks,admissions,refusals,sequential_reads" >"$RESULT.csv"

	for policy in $policies; do
		cache_server_start "$pristine" "$db_mb" hdd "$policy" "$pct" "pollution-$policy"
		skewed_pgbench "$warmup" "$clients" "$scale" "$RUN_DIR/$policy-warmup.out"
		for phase in clean seqscan random clean-after; do
			pollution_phase "$policy" "$phase" "$seconds" "$clients" "$scale"
		done
		cache_server_stop
	done
}

# The polluter: a loop of scans of the cold table until killed.
polluter() {
	local sql
	case $1 in
	seqscan) sql="SELECT sum(length(pad)) FROM cold" ;;
	random) sql="SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT sum(length(pad)) FROM cold WHERE r >= 0" ;;
	esac
	while bench_psql -d bench -c "$sql" >/dev/null 2>&1; do :; done
}

pollution_phase() {
	local policy=$1 phase=$2 seconds=$3 clients=$4 scale=$5 ppid="" out stats
	out="$RUN_DIR/$policy-$phase.out"
	bench_psql -d bench -c "SELECT ssd_cache_reset_stats()" >/dev/null
	if [ "$phase" = seqscan ] || [ "$phase" = random ]; then
		polluter "$phase" &
		ppid=$!
	fi
	skewed_pgbench "$seconds" "$clients" "$scale" "$out" -P 10
	if [ -n "$ppid" ]; then
		kill "$ppid" 2>/dev/null || true
		pkill -f "FROM cold" 2>/dev/null || true
		wait "$ppid" 2>/dev/null || true
		# A backend whose client is gone keeps scanning until it has a
		# result to send; stop it, or it competes with the next phase.
		bench_psql -d bench -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
			WHERE query LIKE '%FROM cold%' AND pid <> pg_backend_pid()" >/dev/null
	fi
	stats=$(bench_psql -d bench -At -F, -c "
		SELECT round(sum(hits)::numeric / nullif(sum(hits + misses), 0), 4),
			   sum(cached_blocks) FILTER (WHERE relation::text LIKE 'pgbench_accounts%'),
			   coalesce((SELECT sum(cached_blocks) FROM ssd_cache_relations WHERE relation::text = 'cold'), 0),
			   (SELECT admissions FROM ssd_cache_stats), (SELECT refusals FROM ssd_cache_stats),
			   (SELECT sequential_reads FROM ssd_cache_stats)
		FROM ssd_cache_relations WHERE relation::text LIKE 'pgbench_accounts%'")
	local res
	res=$(pgbench_result "$out")
	echo "$policy,$phase,${res%% *},$stats" >>"$RESULT.csv"
	log "$policy $phase: tps ${res%% *}; hit ratio, cached, cold cached, admissions, refusals, seq: $stats"
}
