# bench/experiments/ssd-cache-admission.sh
# Admission throughput: how many random misses per second a full cache admits (each needs an eviction) with data on the SSD tier, where misses come fastest.
#
# pgbench select-only (-S, uniform) at --scale on the SSD tier, shared_buffers
# 16 MB and a memory cap leaving the OS 96 MB, so that nearly every read
# reaches the storage manager and the device; the cache (--cache_mb, a small
# share of the database) fills during --warmup seconds and then evicts for
# every admission.  Measured over --seconds: reads that missed the cache,
# admissions, refusals (the policy's or a full admission queue's), evictions
# and directory writes per second.  --policy clock admits every random miss
# (the most admission work); tac admits past its bar only.  The installed
# ssd_cache.so is named in the settings, so runs of two builds compare.
#
# Options: --scale 30 --cache_mb 32 --policies "clock tac" --modes
#          "write_through write_back" --clients 8 --warmup 30 --seconds 30

experiment_main() {
	local scale=30 cache_mb=32 policies="clock tac" modes="write_through write_back" clients=8
	local warmup=30 seconds=30 so
	parse_options ssd-cache-admission "$@"
	local pristine db_mb
	pristine=$(cache_pristine "$scale")
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	so="$("$PG_CONFIG" --pkglibdir)/ssd_cache.so"
	meta workloads "pgbench select-only (-S, uniform), scale $scale (database ${db_mb} MB), data on the SSD tier"
	meta settings "cache ${cache_mb} MB on the SSD tier, shared_buffers 16 MB, memory cap 112 MB, clients $clients (-j 2), warm-up ${warmup} s then ${seconds} s measured; ssd_cache.so md5 $(md5sum "$so" | cut -c1-12)"
	echo "config,policy,mode,tps,misses_per_s,admissions_per_s,refusals_per_s,evictions_per_s,dir_writes_per_s,used_slots" >"$RESULT.csv"
	local policy mode
	for policy in $policies; do
		for mode in $modes; do
			admission_run "$pristine" "$policy" "$mode" "$cache_mb" "$clients" "$warmup" "$seconds"
		done
	done
}

adm_counters() {
	bench_psql -d bench -At -F' ' -c "SELECT misses, admissions, refusals, evictions, directory_writes, used_slots FROM ssd_cache_stats"
}

admission_run() {
	local pristine=$1 policy=$2 mode=$3 cache_mb=$4 clients=$5 warmup=$6 seconds=$7
	local config="$policy-$mode" conf data out c0 c1 res
	conf=$(cache_conf "$policy$([ "$mode" = write_back ] && echo +wb)" "$cache_mb")
	data=$(cache_prepare "$pristine" ssd "$conf")
	rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
	drop_caches
	set_memory_limit 112M
	pg_cold_start "$data" "$RUN_DIR/$config.log" "-c shared_buffers=16MB -c wal_level=replica"
	bench_psql -d bench -c "CREATE EXTENSION IF NOT EXISTS ssd_cache" >/dev/null
	bench_pgbench -n -S -c "$clients" -j 2 -T "$warmup" bench >"$RUN_DIR/$config-warmup.out" 2>&1
	c0=$(adm_counters)
	out="$RUN_DIR/$config.out"
	bench_pgbench -n -S -c "$clients" -j 2 -T "$seconds" bench >"$out" 2>&1
	c1=$(adm_counters)
	res=$(pgbench_result "$out")
	echo "$config,$policy,$mode,${res%% *},$(echo "$c0 $c1" | awk -v s="$seconds" '{
		printf "%.0f,%.0f,%.0f,%.0f,%.0f,%d", ($7 - $1) / s, ($8 - $2) / s, ($9 - $3) / s, ($10 - $4) / s, ($11 - $5) / s, $12 }')" >>"$RESULT.csv"
	log "$config: tps ${res%% *}; $(tail -1 "$RESULT.csv")"
	pg_stop "$data"
	rm -rf "$data"
	set_memory_limit -1
}
