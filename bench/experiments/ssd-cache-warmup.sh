# bench/experiments/ssd-cache-warmup.sh
# Buffer-pool warm-up after a clean restart and after a crash: no warm-up, pg_prewarm's autoprewarm, ssd_cache's warm-up (scenario b, with and without the SSD cache, and scenario a); Park's peak-90% time.
#
# Per tier (--tiers) and configuration (--configs):
#   none         stock PostgreSQL, nothing preloaded;
#   autoprewarm  pg_prewarm.autoprewarm = on (dumps at shutdown; before the
#                crash autoprewarm_dump_now(), its periodic dump);
#   ours         ssd_cache loaded without a cache file: the warm-up alone,
#                defaults (estimator on, io share 0.5);
#   ours_ssd     the same with an ssd_cache file of --pct% of the database on
#                the SSD tier (tac; HDD tier only);
#   ours_hold    ours with ssd_cache.warmup_hold_connections = on (scenario
#                a): clients wait until the pool is loaded.
# one server on a fresh copy of the pristine pgbench database (scale
# --scale), shared_buffers --sb_pct% of the database, a memory cap of
# shared_buffers + max(10% of the database, 96 MB):
#   warm     skewed select-only (-c --clients) for --warm seconds from cold;
#            its last 20 s are the peak before the clean restart;
#   clean    CHECKPOINT, fast stop, drop the OS cache, start, and the same
#            load at once for --measure seconds, tps every second (-P 1);
#            with connections held, the time until the first connection
#            gets in comes first (tps 0 meanwhile);
#   crash    --rewarm seconds more of the load (the peak before the crash),
#            CHECKPOINT (autoprewarm: autoprewarm_dump_now()), kill -9 of
#            the postmaster, drop the OS cache, start, measure again.
# Metrics (Park): peak-90% time, the first second whose 3-second mean
# reaches 90% of that run's peak; average tps up to the no-warm-up run's
# peak-90% time; sustained tps, the last 20 s.
#
# Options: --scale 30 --sb_pct 25 --pct 25 --clients 8 --tiers "hdd ssd"
#          --configs "none autoprewarm ours ours_ssd ours_hold"
#          --warm 150 --measure 120 --rewarm 30
#          (on the SSD tier warm, measure and rewarm are divided by
#          --ssd_divisor 3)

OLTP_DB=bench

warmup_conf() {
	local config=$1 cache_mb=$2
	case $config in
	none) echo "shared_preload_libraries = ''" ;;
	autoprewarm)
		echo "shared_preload_libraries = 'pg_prewarm'"
		echo "pg_prewarm.autoprewarm = on"
		;;
	ours) echo "shared_preload_libraries = 'ssd_cache'" ;;
	ours_hold)
		echo "shared_preload_libraries = 'ssd_cache'"
		echo "ssd_cache.warmup_hold_connections = on"
		;;
	ours_ssd)
		echo "shared_preload_libraries = 'ssd_cache'"
		echo "ssd_cache.path = '$BENCH_DIR/ssd/ssd_cache.dat'"
		echo "ssd_cache.size = '${cache_mb}MB'"
		;;
	*) die "ssd-cache-warmup: unknown configuration '$config'" ;;
	esac
}

# Mean of the last N values of a space-separated list.
tail_mean() {
	echo "$1" | awk -v n="$2" '{ s = 0; c = 0; for (i = (NF > n ? NF - n + 1 : 1); i <= NF; i++) { s += $i; c++ } if (c) printf "%.1f", s / c }'
}

# The warm-up's account: "seconds pages_loaded disk_reads request_kb
# pages_per_chunk break_even preload" ("- ..." without ssd_cache).
warmup_state() {
	local config=$1 i
	case $config in
	ours*)
		for i in $(seq 1 600); do
			[ "$(bench_psql -d "$OLTP_DB" -At -c "SELECT phase IN ('done', 'nothing to load') FROM ssd_cache_warmup")" = t ] && break
			sleep 0.5
		done
		bench_psql -d "$OLTP_DB" -At -F' ' -c "SELECT round(extract(epoch FROM finished_at - started_at)::numeric, 2), pages_loaded, disk_reads,
			coalesce((SELECT request_kb || ' ' || round(pages_per_chunk::numeric, 1) || ' ' || round(break_even_pages::numeric, 1) || ' ' || preload
			          FROM ssd_cache_warmup_devices ORDER BY disk_pages DESC LIMIT 1), '- - - -')
			FROM ssd_cache_warmup"
		;;
	*) echo "- - - - - - -" ;;
	esac
}

# warmup_measure CONFIG SECONDS OUT: hold seconds (time until a client
# gets in), then the per-second tps list in OUT.
warmup_measure() {
	local config=$1 seconds=$2 out=$3 t0 t1
	t0=$(date +%s.%N)
	bench_psql -d "$OLTP_DB" -c "SELECT 1" >/dev/null
	t1=$(date +%s.%N)
	skewed_pgbench "$seconds" "$WU_CLIENTS" "$WU_SCALE" "$out" -P 1
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

warmup_run() {
	local pristine=$1 db_mb=$2 tier=$3 config=$4 warm=$5 measure=$6 rewarm=$7
	local sb_mb os_mb cache_mb=0 peak hold series st kind
	sb_mb=$((db_mb * WU_SB_PCT / 100))
	os_mb=$((db_mb / 10)); [ "$os_mb" -ge 96 ] || os_mb=96
	[ "$config" = ours_ssd ] && cache_mb=$((db_mb * WU_PCT / 100))
	DATA=$(cache_prepare "$pristine" "$tier" "$(warmup_conf "$config" "$cache_mb")")
	TIER=$tier
	rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
	[ "$tier" = hdd ] && root_write_throttle "$HDD_IOPS"
	set_memory_limit "$((sb_mb + os_mb))M"
	SERVER_OPTS="-c shared_buffers=${sb_mb}MB"
	log "$tier/$config: shared_buffers ${sb_mb} MB, memory cap $((sb_mb + os_mb)) MB, cache ${cache_mb} MB"
	pg_cold_start "$DATA" "$RUN_DIR/$tier-$config.log" "$SERVER_OPTS"
	case $config in
	autoprewarm) bench_psql -d "$OLTP_DB" -c "CREATE EXTENSION pg_prewarm" ;;
	ours*) bench_psql -d "$OLTP_DB" -c "CREATE EXTENSION ssd_cache" ;;
	esac

	skewed_pgbench "$warm" "$WU_CLIENTS" "$WU_SCALE" "$RUN_DIR/$tier-$config-warm.out" -P 1
	peak=$(tail_mean "$(pgbench_progress "$RUN_DIR/$tier-$config-warm.out")" 20)
	log "$tier/$config: peak before the clean restart $peak tps"

	for kind in clean crash; do
		if [ "$kind" = clean ]; then
			bench_psql -d "$OLTP_DB" -c CHECKPOINT
			pg_stop "$DATA"
		else
			skewed_pgbench "$rewarm" "$WU_CLIENTS" "$WU_SCALE" "$RUN_DIR/$tier-$config-rewarm.out" -P 1
			peak=$(tail_mean "$(pgbench_progress "$RUN_DIR/$tier-$config-rewarm.out")" 20)
			log "$tier/$config: peak before the crash $peak tps"
			bench_psql -d "$OLTP_DB" -c CHECKPOINT
			[ "$config" = autoprewarm ] && bench_psql -d "$OLTP_DB" -c "SELECT autoprewarm_dump_now()" >/dev/null
			sleep 3		# ssd_cache's recorder polls every second
			crash_server "$DATA"
		fi
		drop_caches
		pg_start "$DATA" "$RUN_DIR/$tier-$config-$kind.log" "$SERVER_OPTS"
		hold=$(warmup_measure "$config" "$measure" "$RUN_DIR/$tier-$config-$kind.out")
		series=$(pgbench_progress "$RUN_DIR/$tier-$config-$kind.out")
		st=$(warmup_state "$config")
		log "$tier/$config/$kind: first connection after $hold s; warm-up: $st; tps: $(echo "$series" | cut -c1-200)"
		echo "$tier,$config,$kind,$db_mb,$sb_mb,$cache_mb,$peak,$hold,$(echo "$st" | tr ' ' ','),\"$series\"" >>"$RESULT.csv"
	done
	pg_stop "$DATA"
	[ "$tier" = hdd ] && root_write_throttle 0
	rm -rf "$DATA"
	rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
}

experiment_main() {
	local scale=30 sb_pct=25 pct=25 clients=8 tiers="hdd ssd"
	local configs="none autoprewarm ours ours_ssd ours_hold" warm=150 measure=120 rewarm=30 ssd_divisor=3
	parse_options ssd-cache-warmup "$@"
	WU_SCALE=$scale WU_SB_PCT=$sb_pct WU_PCT=$pct WU_CLIENTS=$clients
	local pristine db_mb tier config w m r
	pristine=$(cache_pristine "$scale")
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	meta workloads "pgbench scale $scale (database ${db_mb} MB): skewed select-only (bench/workloads/select-skewed.sql, -c $clients -j 2, -P 1)"
	meta settings "shared_buffers ${sb_pct}% of the database, memory cap shared_buffers + max(10% of the database, 96 MB), data checksums on, PostgreSQL defaults otherwise; ssd_cache warm-up defaults (ssd_cache.warmup_io_share 0.5, warmup_preload auto, warmup_max_request 512kB, warmup_pool_fraction 0.95); ours_ssd: an ssd_cache file of ${pct}% of the database on the SSD tier (tac, write-through); HDD tier: warm $warm s, measure $measure s, rewarm $rewarm s; SSD tier: each divided by $ssd_divisor"
	echo "tier,config,restart,db_mb,sb_mb,cache_mb,peak_tps,hold_s,warmup_s,pages_loaded,disk_reads,request_kb,pages_per_chunk,break_even,preload,tps" >"$RESULT.csv"
	for tier in $tiers; do
		w=$warm m=$measure r=$rewarm
		[ "$tier" = ssd ] && { w=$((warm / ssd_divisor)); m=$((measure / ssd_divisor)); r=$((rewarm / ssd_divisor)); }
		for config in $configs; do
			[ "$tier" = ssd ] && [ "$config" = ours_ssd ] && continue
			warmup_run "$pristine" "$db_mb" "$tier" "$config" "$w" "$m" "$r"
		done
	done
}
