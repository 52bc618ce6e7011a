# bench/experiments/ssd-cache-restart.sh
# Restart: time back to 90% of steady-state throughput after a restart with the persistent cache, vs the same restart with an empty cache.
#
# One server on the HDD tier with a 25% tac cache runs the skewed select-only
# workload until the cache is warm (--warmup); its last 30 seconds give the
# steady-state tps.  Then, twice: stop, drop the OS cache, start, and run
# --seconds with 5-second progress; the first time the cache file is kept
# (warm restart), the second time it is deleted (empty cache).
# shared_buffers and the OS cache start cold both times.
#
# Options: --scale 30 --warmup 240 --seconds 120 --clients 8 --pct 25

experiment_main() {
	local scale=30 warmup=240 seconds=120 clients=8 pct=25
	parse_options ssd-cache-restart "$@"
	local pristine db_mb steady mode
	pristine=$(cache_pristine "$scale")
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	meta workloads "pgbench select-only, skewed (random_gaussian 5.0), scale $scale, database ${db_mb} MB; tac cache ${pct}% of the database"
	meta settings "clients $clients (-j 2), warm-up ${warmup} s, then ${seconds} s after each restart, progress every 5 s"
	echo "restart,second,tps,steady_tps,preparation_ms,cached_pages" >"$RESULT.csv"

	cache_server_start "$pristine" "$db_mb" hdd tac "$pct" restart
	skewed_pgbench "$warmup" "$clients" "$scale" "$RUN_DIR/warmup.out" -P 5
	steady=$(sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\2/p' "$RUN_DIR/warmup.out" |
		tail -6 | awk '{ s += $1; n++ } END { printf "%.1f", s / n }')
	log "steady state: $steady tps"

	for mode in persistent empty; do
		pg_stop "$DATA"
		[ "$mode" = empty ] && rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
		drop_caches
		pg_start "$DATA" "$RUN_DIR/restart-$mode.log" "$SERVER_OPTS"
		local prep cached
		prep=$(sed -n 's/.*preparation phase loaded \([0-9]*\) of .* in \([0-9.]*\) ms.*/\2/p' "$RUN_DIR/restart-$mode.log" | tail -1)
		cached=$(sed -n 's/.*preparation phase loaded \([0-9]*\) of .*/\1/p' "$RUN_DIR/restart-$mode.log" | tail -1)
		skewed_pgbench "$seconds" "$clients" "$scale" "$RUN_DIR/$mode.out" -P 5
		sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$RUN_DIR/$mode.out" |
			while read -r sec tps; do
				echo "$mode,$sec,$tps,$steady,$prep,$cached" >>"$RESULT.csv"
			done
		log "$mode restart: preparation ${prep} ms, ${cached} pages loaded"
	done
	cache_server_stop
}
