# bench/experiments/ssd-cache-recovery.sh
# Crash recovery on the HDD tier with a warm ssd_cache (tac) vs without: kill -9 1 and 3 minutes after a checkpoint; recovery time and the cache's hit ratio before and after.
#
# Per configuration ("cache": tac, --pct of the database; "wb": the same in
# write-back mode (PC); "lc": lazy cleaning (LC, the thesis's baseline: its
# cache starts empty after the crash); "nocache": stock PostgreSQL,
# ssd_cache not loaded) one
# server, a fresh copy of the pristine
# pgbench database on the HDD tier (cache_server_start), restarted with
# shared_buffers --shared_buffers_mb (the database is a few times that) and
# a memory cap of shared_buffers plus 10% of the database (at least 96 MB)
# for the OS.  --warmup seconds of skewed select-only fill the cache.  Then,
# for each T in --crash_after:
#   before   a clean restart (stop, sync, drop_caches, start: shared_buffers
#            and the OS cache as cold as after the crash, the cache file
#            kept), ssd_cache_reset_stats(), --read_seconds of the skewed
#            select-only load: tps and the cache's hit ratio;
#   write    CHECKPOINT, ssd_cache_reset_stats(), pgbench's TPC-B-like
#            script (-n -c --clients -j 2) for T seconds;
#   crash    the cache's used_slots, mode and hit ratio of the write phase,
#            then kill -9 of the postmaster; wait until all its children have
#            exited; sync and drop the OS caches;
#   recover  start (pg_ctl -w) timed until the server accepts connections;
#            from its log: the redo and end-of-recovery checkpoint times, the
#            WAL replayed; the HDD's reads and writes meanwhile; with the
#            cache, the time until ssd_cache_stats.mode is 'write-through'
#            (polled), used_slots then and the hits/misses of recovery;
#   ramp-up  with --ramp_seconds > 0: the write load again at once, tps
#            every 5 s, and the time until an interval reaches 90% of the
#            write phase's throughput before the crash (the thesis's Table
#            2.3: PC is warm at once, LC starts empty);
#   after    the same read phase as "before".
# Transactions of a write phase are counted in pgbench_history (those that
# survived the crash).  The nocache configuration runs the same phases.
# --workload tpcc runs the thesis's workload instead (Tables 2.1-2.3 are
# TPC-C): --scale is then the number of warehouses, and the warm-up, the
# read phases and the write load are all the TPC-C-like standard mix
# (bench/workloads/tpcc); a write phase's transactions are then its
# New-Orders that survived the crash (district.d_next_o_id, the thesis's
# tpmC basis), and its tps the mean of pgbench's progress before the crash.
# --wal ssd puts pg_wal on the SSD tier in every configuration (a log device
# of its own, as in the thesis's set-up): recovery then waits on data pages,
# which are what the cache holds, rather than on reading the WAL back from
# the slow disk.
#
# Options: --scale 30 --pct 25 --shared_buffers_mb 128 --warmup 120
#          --read_seconds 30 --crash_after "60 180" --clients 4
#          --read_clients 8 --configs "cache nocache" --stop kill
#          --ramp_seconds 0 --wal tier --workload tpcb
# --stop fast replaces the crash by a fast shutdown (pg_ctl stop -m fast):
# the control for what the write load alone does to the cache's hit ratio.
# --rate N (transactions per second, 0 = as fast as possible) throttles the
# write load (pgbench -R): below what the slower configuration sustains,
# both commit the same transactions before the crash and replay the same
# WAL, so recovery times compare at equal work.

OLTP_DB=bench

# The installed ssd_cache.so (an install elsewhere can replace it while a
# run goes on; every server start loads the file as it is then).
rec_so_id() {
	local so
	so="$("$PG_CONFIG" --pkglibdir)/ssd_cache.so"
	echo "md5 $(md5sum "$so" | cut -c1-12), modified $(date -u -r "$so" '+%Y-%m-%d %H:%M:%S UTC')"
}

experiment_main() {
	local scale=30 pct=25 shared_buffers_mb=128 warmup=120 read_seconds=30 crash_after="60 180"
	local clients=4 read_clients=8 configs="cache nocache" stop=kill rate=0 ramp_seconds=0 wal=tier
	local workload=tpcb
	parse_options ssd-cache-recovery "$@"
	case $workload in
	tpcb) OLTP_DB=bench ;;
	tpcc) OLTP_DB=tpcc ;;
	*) die "ssd-cache-recovery: --workload is tpcb or tpcc, not '$workload'" ;;
	esac
	REC_WORKLOAD=$workload
	case $wal in tier | ssd) ;; *) die "ssd-cache-recovery: --wal is tier or ssd, not '$wal'" ;; esac
	CACHE_WAL=$wal
	REC_RAMP_SECONDS=$ramp_seconds
	local so_start
	so_start=$(rec_so_id)
	meta ssd_cache_build "installed ssd_cache.so at the start: $so_start"
	local pristine db_mb config
	if [ "$workload" = tpcc ]; then
		pristine=$(cache_pristine_tpcc "$scale")
	else
		pristine=$(cache_pristine "$scale")
	fi
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	[ "$workload" = tpcc ] &&
		meta workloads "TPC-C-like, $scale warehouses (database ${db_mb} MB, $(awk -v d="$db_mb" -v s="$shared_buffers_mb" 'BEGIN { printf "%.1f", d / s }')x shared_buffers), standard mix NO 45 / P 43 / OS 4 / D 4 / SL 4 for the warm-up, the read phases and the write load (-c $clients -j 2 for writes, -c $read_clients for the others); transactions: New-Orders that survived the crash, write tps: pgbench's progress before it (all five transactions)$([ "$rate" = 0 ] || echo "; write load throttled to $rate tps (pgbench -R)")" ||
	meta workloads "pgbench scale $scale (database ${db_mb} MB, $(awk -v d="$db_mb" -v s="$shared_buffers_mb" 'BEGIN { printf "%.1f", d / s }')x shared_buffers): write load pgbench's TPC-B-like script (-n -c $clients -j 2); read phases and warm-up skewed select-only (bench/workloads/select-skewed.sql, -c $read_clients -j 2)$([ "$rate" = 0 ] || echo "; write load throttled to $rate tps (pgbench -R)")"
	meta settings "HDD tier; shared_buffers ${shared_buffers_mb} MB, memory cap shared_buffers + max(10% of the database, 96 MB); PostgreSQL defaults otherwise (checkpoint_timeout 5min, max_wal_size 1GB, data checksums on); cache: ssd_cache tac at ${pct}% of the database on the SSD tier; no cache: stock PostgreSQL (shared_preload_libraries empty); warm-up ${warmup} s, read phases ${read_seconds} s, read phases after a clean restart (before) and after the crash recovery (after), both with cold shared_buffers and OS cache; crash T s after a CHECKPOINT for T in: ${crash_after}; crash = kill -9 of the postmaster, wait for its children, sync + drop_caches, start; WAL on the $([ "$wal" = ssd ] && echo "SSD tier" || echo "HDD tier")$([ "$stop" = kill ] || echo "; CONTROL RUN: --stop $stop, a clean pg_ctl stop -m $stop instead of the crash")"
	echo "config,stop,crash_after_s,cache_mb,write_tps,transactions,wal_mb,recovery_s,log_recovery_s,redo_s,checkpoint_s,checkpoint_buffers,hdd_reads,hdd_writes,verify_s,mode_at_crash,used_at_crash,write_hit_ratio,used_after_recovery,recovery_hits,recovery_misses,recovery_admissions,recovery_evictions,recovery_invalidations,hit_before,hit_after,used_after_read,read_tps_before,read_tps_after,ramp_s,ramp_tps,cache_log" >"$RESULT.csv"

	for config in $configs; do
		recovery_config "$pristine" "$db_mb" "$config" "$scale" "$pct" "$shared_buffers_mb" "$warmup" \
			"$read_seconds" "$crash_after" "$clients" "$read_clients" "$stop" "$rate"
	done
	[ "$(rec_so_id)" = "$so_start" ] || {
		meta ssd_cache_build_changed "ssd_cache.so was replaced during the run (now $(rec_so_id)): the server starts after it used another build"
		log "WARNING: ssd_cache.so was replaced during the run"
	}
}

rec_sql() {
	bench_psql -d "$OLTP_DB" -At -F ' ' -c "$1"
}

# "hit_ratio used_slots hits misses mode" of the cache, or "- - - - -".
rec_cache_stats() {
	if [ "$CACHE_MB" -gt 0 ]; then
		rec_sql "SELECT coalesce(hit_ratio::text, '-'), used_slots, hits, misses, mode FROM ssd_cache_stats"
	else
		echo "- - - - -"
	fi
}

rec_reset_stats() {
	[ "$CACHE_MB" -eq 0 ] || rec_sql "SELECT ssd_cache_reset_stats()" >/dev/null
}

# rec_load SECONDS CLIENTS SCALE OUT [pgbench options]: the read phase's
# load (skewed select-only, or the TPC-C mix).
rec_load() {
	local seconds=$1 clients=$2 scale=$3 out=$4
	shift 4
	if [ "$REC_WORKLOAD" = tpcc ]; then
		# shellcheck disable=SC2046
		bench_pgbench $(tpcc_pgbench_args "$scale") -c "$clients" -j 2 -T "$seconds" "$@" tpcc >"$out" 2>&1
	else
		skewed_pgbench "$seconds" "$clients" "$scale" "$out" "$@"
	fi
}

# rec_write_load SECONDS CLIENTS SCALE OUT RATE PROGRESS: the write phase's
# load (pgbench's TPC-B-like script, or the TPC-C mix), tps reported every
# PROGRESS seconds.
rec_write_load() {
	local seconds=$1 clients=$2 scale=$3 out=$4 rate=$5 progress=$6 args
	args="-n -c $clients -j 2 -T $seconds -P $progress $([ "$rate" = 0 ] || echo "-R $rate")"
	if [ "$REC_WORKLOAD" = tpcc ]; then
		# shellcheck disable=SC2046,SC2086
		bench_pgbench $(tpcc_pgbench_args "$scale") $args tpcc >"$out" 2>&1
	else
		# shellcheck disable=SC2086
		bench_pgbench $args bench >"$out" 2>&1
	fi
}

# The survivors' counter: pgbench_history's rows (TPC-B, one per
# transaction) or the New-Orders (TPC-C).
rec_committed() {
	if [ "$REC_WORKLOAD" = tpcc ]; then
		tpcc_new_orders "$OLTP_DB"
	else
		rec_sql "SELECT count(*) FROM pgbench_history"
	fi
}

# A write phase's throughput: its survivors over T (TPC-B), or the mean of
# pgbench's progress up to T (TPC-C, whose survivors are New-Orders only).
rec_write_tps() {
	local n=$1 out=$2 t=$3
	if [ "$REC_WORKLOAD" = tpcc ]; then
		sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$out" |
			awk -v t="$t" '$1 <= t { s += $2; k++ } END { if (k) printf "%.1f", s / k }'
	else
		awk -v n="$n" -v t="$t" 'BEGIN { printf "%.1f", n / t }'
	fi
}

# rec_read_phase SECONDS CLIENTS SCALE OUT: prints "tps hit_ratio used_slots".
rec_read_phase() {
	local stats
	rec_reset_stats
	rec_load "$@"
	stats=$(rec_cache_stats)
	echo "$(pgbench_result "$4" | cut -d' ' -f1) $(echo "$stats" | cut -d' ' -f1-2)"
}

# rec_log_ts LOGFILE PATTERN: epoch seconds of the last line matching PATTERN.
rec_log_ts() {
	local ts
	ts=$(grep -E "$2" "$1" | tail -1 | awk '{ print $1, $2, $3 }' || true)
	[ -n "$ts" ] && date -d "$ts" +%s.%N || echo ""
}

recovery_config() {
	local pristine=$1 db_mb=$2 config=$3 scale=$4 pct=$5 sb_mb=$6 warmup=$7 read_seconds=$8
	local crash_after=$9 clients=${10} read_clients=${11} stop=${12} rate=${13} os_mb use_pct=$5 t
	local policy=tac
	[ "$config" = nocache ] && use_pct=0
	[ "$config" = wb ] && policy=tac+wb
	[ "$config" = lc ] && policy=tac+lc
	cache_server_start "$pristine" "$db_mb" hdd "$policy" "$use_pct" "recovery-$config"
	# The harness sizes shared_buffers at 3% of the database: restart with
	# this experiment's.
	pg_stop "$DATA"
	os_mb=$((db_mb / 10)); [ "$os_mb" -ge 96 ] || os_mb=96
	set_memory_limit "$((sb_mb + os_mb))M"
	SERVER_OPTS="-c shared_buffers=${sb_mb}MB"
	log "$config: shared_buffers ${sb_mb} MB, memory cap $((sb_mb + os_mb)) MB"
	pg_cold_start "$DATA" "$RUN_DIR/$config-start.log" "$SERVER_OPTS"
	rec_load "$warmup" "$read_clients" "$scale" "$RUN_DIR/$config-warmup.out"
	log "$config: warm-up done, cache: $(rec_cache_stats)"
	for t in $crash_after; do
		recovery_crash "$config" "$t" "$scale" "$read_seconds" "$clients" "$read_clients" "$stop" "$rate"
	done
	cache_server_stop
}

recovery_crash() {
	local config=$1 t=$2 scale=$3 read_seconds=$4 clients=$5 read_clients=$6 stop=$7 rate=$8
	local tag="$config-$2s" before after h0 h1 n wtps wpid crash_stats logf dev d0 d1 s0 s1
	local hit_w used_c mode_c recovery_s
	logf="$RUN_DIR/$tag.log"
	dev=$(tier_device hdd)

	# Start the "before" phase as cold as the "after" one: a clean restart.
	pg_cold_start "$DATA" "$RUN_DIR/$tag-restart.log" "$SERVER_OPTS"
	before=$(rec_read_phase "$read_seconds" "$read_clients" "$scale" "$RUN_DIR/$tag-before.out")
	log "$tag: before the crash: read tps, hit ratio, used slots: $before"
	h0=$(rec_committed)
	rec_sql "CHECKPOINT" >/dev/null
	rec_reset_stats
	rec_write_load $((t + 120)) "$clients" "$scale" "$RUN_DIR/$tag-write.out" "$rate" 10 &
	wpid=$!
	sleep "$t"
	crash_stats=$(rec_cache_stats)
	if [ "$stop" = kill ]; then
		crash_server "$DATA"
	else
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA" -m "$stop" -w -t 900 stop >/dev/null
	fi
	wait "$wpid" || true
	read -r hit_w used_c _ _ mode_c <<<"$crash_stats"
	log "$tag: $([ "$stop" = kill ] && echo killed || echo "stopped (-m $stop)") $t s after the checkpoint; cache then: mode $mode_c, $used_c slots used, write-phase hit ratio $hit_w"

	drop_caches
	d0=$(diskstats "$dev")
	s0=$(date +%s.%N)
	pg_start "$DATA" "$logf" "$SERVER_OPTS"
	s1=$(date +%s.%N)
	d1=$(diskstats "$dev")
	recovery_s=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b - a }')

	# The server's own account of the recovery.
	local started ready redo_start redo_end redo_s ckpt_s ckpt_buf wal_mb log_s
	started=$(rec_log_ts "$logf" "starting PostgreSQL")
	ready=$(rec_log_ts "$logf" "ready to accept connections")
	log_s=$(awk -v a="$started" -v b="$ready" 'BEGIN { if (a != "" && b != "") printf "%.2f", b - a }')
	redo_start=$(sed -n 's/.*redo starts at \([0-9A-F]*\/[0-9A-F]*\).*/\1/p' "$logf" | tail -1)
	redo_end=$(sed -n 's/.*redo done at \([0-9A-F]*\/[0-9A-F]*\).*/\1/p' "$logf" | tail -1)
	redo_s=$(sed -n 's/.*redo done at .*elapsed: \([0-9.]*\) s.*/\1/p' "$logf" | tail -1)
	read -r ckpt_buf ckpt_s <<<"$(awk '/checkpoint starting: end-of-recovery/ { on = 1 }
		on && /checkpoint complete: wrote/ {
			b = $0; sub(/.*checkpoint complete: wrote /, "", b); sub(/ .*/, "", b)
			t = $0; sub(/.* total=/, "", t); sub(/ s.*/, "", t)
			print b, t; on = 0 }' "$logf" | tail -1)"
	wal_mb=""
	[ -n "$redo_start" ] && [ -n "$redo_end" ] &&
		wal_mb=$(rec_sql "SELECT round(pg_wal_lsn_diff('$redo_end', '$redo_start') / 1048576.0, 1)")

	# With the cache: wait for write-through, then its state.
	local verify_s="" used_r="" hits_r="" misses_r="" adm_r="" ev_r="" inv_r="" st mode i cache_log=""
	if [ "$CACHE_MB" -gt 0 ]; then
		for i in $(seq 1 6000); do
			mode=$(rec_sql "SELECT mode FROM ssd_cache_stats")
			case $mode in write-through | write-back | "lazy cleaning") break ;; esac
			sleep 0.1
		done
		verify_s=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
		case $mode in write-through | write-back | "lazy cleaning") true ;; *) false ;; esac ||
			{ log "$tag: mode still '$mode' after 600 s"; verify_s=""; }
		st=$(rec_cache_stats)
		read -r _ used_r hits_r misses_r _ <<<"$st"
		read -r adm_r ev_r inv_r <<<"$(rec_sql "SELECT admissions, evictions, invalidations FROM ssd_cache_stats")"
		cache_log=$( (grep -o 'ssd_cache: .*' "$logf" || true) | (grep -v 'storage manager hooked' || true) |
			tr '",' "';" | tr '\n' '|' | sed 's/|$//')
	fi
	log "$tag: recovery ${recovery_s} s (log: ${log_s} s, redo ${redo_s:-?} s of ${wal_mb:-?} MB WAL, end-of-recovery checkpoint ${ckpt_s:-?} s, ${ckpt_buf:-?} buffers)${verify_s:+; write-through after $verify_s s, $used_r slots used}"

	# Ramp-up: the write load at once, against the throughput before the crash.
	local ramp_s="" ramp_tps="" pre_tps
	h1=$(rec_committed)
	n=$((h1 - h0))
	wtps=$(rec_write_tps "$n" "$RUN_DIR/$tag-write.out" "$t")
	if [ "${REC_RAMP_SECONDS:-0}" -gt 0 ]; then
		pre_tps=$wtps
		rec_write_load "$REC_RAMP_SECONDS" "$clients" "$scale" "$RUN_DIR/$tag-ramp.out" "$rate" 5 || true
		ramp_tps=$(pgbench_progress "$RUN_DIR/$tag-ramp.out")
		ramp_s=$(echo "$ramp_tps" | awk -v p="$pre_tps" '{ for (i = 1; i <= NF; i++) if ($i >= 0.9 * p) { print i * 5; exit } }')
		log "$tag: ramp-up: 90% of the ${pre_tps} tps before the crash after ${ramp_s:-more than $REC_RAMP_SECONDS} s; tps every 5 s: $ramp_tps"
	fi

	after=$(rec_read_phase "$read_seconds" "$read_clients" "$scale" "$RUN_DIR/$tag-after.out")
	log "$tag: after recovery: read tps, hit ratio, used slots: $after"

	local hdd_r hdd_w tb hb ub ta ha ua
	read -r hdd_r hdd_w <<<"$(echo "$d0 $d1" | awk '{ print $5 - $1, $6 - $2 }')"
	read -r tb hb ub <<<"$before"
	read -r ta ha ua <<<"$after"
	[ "$CACHE_MB" -gt 0 ] || { hit_w=""; used_c=""; mode_c=""; hb=""; ha=""; ua=""; }
	[ "$hit_w" = - ] && hit_w=""
	[ "$hb" = - ] && hb=""
	[ "$ha" = - ] && ha=""
	echo "$config,$stop,$t,$CACHE_MB,$wtps,$n,$wal_mb,$recovery_s,$log_s,$redo_s,$ckpt_s,$ckpt_buf,$hdd_r,$hdd_w,$verify_s,$mode_c,$used_c,$hit_w,$used_r,$hits_r,$misses_r,$adm_r,$ev_r,$inv_r,$hb,$ha,$ua,$tb,$ta,$ramp_s,\"$ramp_tps\",\"$cache_log\"" >>"$RESULT.csv"
}
