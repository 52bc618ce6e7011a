# bench/experiments/ssd-cache-overhead.sh
# Overhead: a workload that always hits shared_buffers, stock PostgreSQL vs the same server with ssd_cache enabled (tac), SSD tier.
#
# pgbench select-only (-S) at scale 10 with shared_buffers 512 MB, so no
# read reaches the storage manager after the warm-up; any difference is the
# cost of having ssd_cache loaded.  The two configurations alternate for
# --rounds rounds of --seconds each, and the ratio of their mean tps is
# reported (2 vCPUs: the client runs on the same cores).
#
# Options: --scale 10 --seconds 30 --rounds 3 --clients 4

experiment_main() {
	local scale=10 seconds=30 rounds=3 clients=4 r config
	parse_options ssd-cache-overhead "$@"
	local pristine
	pristine=$(cache_pristine "$scale")
	meta workloads "pgbench select-only (-S), scale $scale, shared_buffers 512 MB (every read hits shared_buffers)"
	meta settings "clients $clients (-j 2), $rounds alternating rounds of ${seconds} s, 10 s warm-up per start; ssd_cache: tac, 64 MB cache file on the SSD tier"
	echo "round,config,tps,latency_ms" >"$RESULT.csv"
	set_memory_limit -1
	for r in $(seq 1 "$rounds"); do
		for config in stock ssd_cache; do
			local conf data out
			if [ "$config" = stock ]; then conf=$(cache_conf none 0); else conf=$(cache_conf tac 64); fi
			data=$(cache_prepare "$pristine" ssd "$conf")
			rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
			pg_cold_start "$data" "$RUN_DIR/$config.log" "-c shared_buffers=512MB"
			bench_pgbench -n -S -c "$clients" -j 2 -T 10 bench >/dev/null 2>&1
			out="$RUN_DIR/$config-$r.out"
			bench_pgbench -n -S -c "$clients" -j 2 -T "$seconds" bench >"$out" 2>&1
			local res
			res=$(pgbench_result "$out")
			echo "$r,$config,${res%% *},${res#* }" >>"$RESULT.csv"
			log "round $r $config: tps ${res%% *}"
			pg_stop "$data"
			rm -rf "$data"
		done
	done
}
