# bench/experiments/ssd-cache-drop.sh
# DROP TABLE and TRUNCATE of tables with 0.1, 1 and 4 GB in ssd_cache (SSD tier): time, directory writes, invalidations.
#
# One server on the SSD tier with a --cache_mb cache file (clock policy,
# ssd_cache.sequential_detection = none, so that a sequential scan offers
# every page), shared_buffers 128 MB, no memory cap.  For each size and each
# operation (DROP TABLE, then TRUNCATE): create a table of that size (one
# 1,000-byte row per 8 kB page, fillfactor 10, frozen), restart the server
# cleanly so that none of it is left in shared_buffers, scan
# it with SELECT count(*) until ssd_cache_relations says --min_cached of its
# blocks are cached (the admission queue holds 512 pages, so one scan admits
# only what the worker keeps up with; the queue is drained after each
# pass, at most --max_passes passes), then time the operation (psql's
# \timing, and the wall clock around psql) and take the deltas of
# ssd_cache_stats.directory_writes, invalidations and used_slots.  With
# --baseline yes, the same operation on a table of the same size that was
# never read (nothing cached: the cost of the operation itself).
#
# The cache file, the largest table and its WAL must fit on the SSD tier:
# without that room the sizes become "0.1 0.5 2" and the cache 2560 MB
# (said in the settings).
#
# Options: --sizes "0.1 1 4" --cache_mb 5120 --ops "drop truncate"
#          --baseline yes --max_passes 10 --min_cached 0.99

DROP_DB=bench
DROP_OPTS="-c shared_buffers=128MB"

# The installed ssd_cache.so (an install elsewhere can replace it while a
# run goes on; every server start loads the file as it is then).
drop_so_id() {
	local so
	so="$("$PG_CONFIG" --pkglibdir)/ssd_cache.so"
	echo "md5 $(md5sum "$so" | cut -c1-12), modified $(date -u -r "$so" '+%Y-%m-%d %H:%M:%S UTC')"
}

experiment_main() {
	local sizes="0.1 1 4" cache_mb=5120 ops="drop truncate" baseline=yes max_passes=10 min_cached=0.99
	parse_options ssd-cache-drop "$@"
	local so_start
	so_start=$(drop_so_id)
	meta ssd_cache_build "installed ssd_cache.so at the start: $so_start"
	local pristine data conf avail_mb need_mb largest note=""

	# Room on the SSD tier: the cache file, the largest table, its WAL
	# (about a tenth of it; max_wal_size 4 GB) and 2 GB to spare.
	avail_mb=$(df -Pm "$BENCH_DIR/ssd" | awk 'NR == 2 { print $4 }')
	largest=$(echo "$sizes" | tr ' ' '\n' | sort -g | tail -1)
	need_mb=$(awk -v c="$cache_mb" -v s="$largest" 'BEGIN { printf "%d", c + s * 1024 * 1.1 + 4096 + 2048 }')
	if [ "$avail_mb" -lt "$need_mb" ]; then
		note="; only ${avail_mb} MB free on the SSD tier for ${need_mb} MB needed: scaled down from sizes \"$sizes\" GB and a ${cache_mb} MB cache"
		sizes="0.1 0.5 2" cache_mb=2560
		log "only ${avail_mb} MB free on the SSD tier (${need_mb} MB needed): sizes $sizes GB, cache ${cache_mb} MB"
	fi

	pristine=$(pristine_cluster drop drop_load)
	conf="$(cache_conf clock "$cache_mb")
ssd_cache.sequential_detection = 'none'
autovacuum = off
max_wal_size = '4GB'
checkpoint_timeout = '1h'"
	data=$(cache_prepare "$pristine" ssd "$conf")
	DROP_DATA=$data
	rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
	set_memory_limit -1
	pg_cold_start "$data" "$RUN_DIR/server.log" "$DROP_OPTS"
	bench_psql -d "$DROP_DB" -c "CREATE EXTENSION ssd_cache"

	meta workloads "one table per size and operation: (id int, pad text), one 1,000-byte row per 8 kB page (fillfactor 10), VACUUM (FREEZE) and CHECKPOINT after the load; sizes $sizes GB"
	meta settings "SSD tier, shared_buffers 128 MB, no memory cap, autovacuum off, max_wal_size 4GB, checkpoint_timeout 1h; ssd_cache ${cache_mb} MB, policy clock, sequential_detection none; cache filled by SELECT count(*) passes until ${min_cached} of the table is cached (at most ${max_passes} passes, admission queue drained after each); SSD tier ${avail_mb} MB free before the run${note}"
	echo "size_gb,op,kind,table_blocks,cached_blocks,fill_passes,fill_s,op_ms,wall_ms,directory_writes,invalidations,used_before,used_after,mode_after" >"$RESULT.csv"

	local size op
	for size in $sizes; do
		for op in $ops; do
			drop_run "$size" "$op" cached "$max_passes" "$min_cached"
			[ "$baseline" = yes ] && drop_run "$size" "$op" uncached 0 0
		done
	done
	pg_stop "$data"
	rm -rf "$data" "$BENCH_DIR/ssd/ssd_cache.dat"
	[ "$(drop_so_id)" = "$so_start" ] || {
		meta ssd_cache_build_changed "ssd_cache.so was replaced during the run (now $(drop_so_id)): the server restarts after it used another build"
		log "WARNING: ssd_cache.so was replaced during the run"
	}
}

drop_load() {
	bench_psql -d postgres -c "CREATE DATABASE $DROP_DB"
}

drop_sql() {
	bench_psql -d "$DROP_DB" -At -F ' ' -c "$1"
}

# "directory_writes invalidations used_slots admission_queue mode"
drop_stats() {
	drop_sql "SELECT directory_writes, invalidations, used_slots, admission_queue, mode FROM ssd_cache_stats"
}

# Wait until the admission worker has written everything queued.
drop_drain() {
	local i
	for i in $(seq 1 600); do
		[ "$(drop_sql "SELECT admission_queue = 0 FROM ssd_cache_stats")" = t ] && return 0
		sleep 0.1
	done
	log "admission queue not empty after 60 s"
}

drop_cached_blocks() {
	drop_sql "SELECT coalesce(sum(cached_blocks), 0) FROM ssd_cache_relations WHERE relation = '$1'::regclass"
}

# drop_run SIZE_GB OP cached|uncached MAX_PASSES MIN_CACHED: one row of the CSV.
drop_run() {
	local size=$1 op=$2 kind=$3 max_passes=$4 min_cached=$5
	local t rows blocks cached=0 passes=0 fill_s=0 f0 f1 s0 s1 w0 w1 out op_ms wall_ms sql
	t="t_$(echo "$size" | tr . _)"
	rows=$(awk -v s="$size" 'BEGIN { printf "%d", s * 1024 * 1024 * 1024 / 8192 }')
	log "$size GB, $op, $kind: creating $t ($rows pages)"
	drop_sql "DROP TABLE IF EXISTS $t" >/dev/null
	bench_psql -d "$DROP_DB" \
		-c "CREATE TABLE $t (id int, pad text) WITH (fillfactor = 10, autovacuum_enabled = off)" \
		-c "INSERT INTO $t SELECT g, repeat('x', 1000) FROM generate_series(1, $rows) g" \
		-c "VACUUM (FREEZE) $t"
	blocks=$(drop_sql "SELECT pg_relation_size('$t') / 8192")
	# A clean restart, so that no page of the table is in shared_buffers
	# and every scan reads it through the storage manager (the cache file
	# persists).
	pg_stop "$DROP_DATA"
	pg_start "$DROP_DATA" "$RUN_DIR/server.log" "$DROP_OPTS"

	if [ "$kind" = cached ]; then
		f0=$(date +%s.%N)
		while [ "$passes" -lt "$max_passes" ]; do
			drop_sql "SELECT count(*) FROM $t" >/dev/null
			drop_drain
			passes=$((passes + 1))
			cached=$(drop_cached_blocks "$t")
			log "$t: pass $passes, $cached of $blocks pages cached"
			awk -v c="$cached" -v b="$blocks" -v m="$min_cached" 'BEGIN { exit !(c >= b * m) }' && break
		done
		f1=$(date +%s.%N)
		fill_s=$(awk -v a="$f0" -v b="$f1" 'BEGIN { printf "%.1f", b - a }')
	else
		# VACUUM's reads were admitted too: forget them.
		drop_drain
		drop_sql "SELECT ssd_cache_evict('$t')" >/dev/null
		cached=$(drop_cached_blocks "$t")
	fi
	drop_sql "CHECKPOINT" >/dev/null

	case $op in
	drop) sql="DROP TABLE $t" ;;
	truncate) sql="TRUNCATE $t" ;;
	esac
	s0=$(drop_stats)
	w0=$(date +%s%N)
	out=$(bench_psql -d "$DROP_DB" -c '\timing on' -c "$sql")
	w1=$(date +%s%N)
	s1=$(drop_stats)
	op_ms=$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
	wall_ms=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	local dw inv ub ua mode
	read -r dw inv ub ua mode <<<"$(echo "$s0 $s1" | awk '{ print $6 - $1, $7 - $2, $3, $8, $10 }')"
	echo "$size,$op,$kind,$blocks,$cached,$passes,$fill_s,$op_ms,$wall_ms,$dw,$inv,$ub,$ua,$mode" >>"$RESULT.csv"
	log "$size GB $op ($kind, $cached of $blocks pages cached): ${op_ms} ms (${wall_ms} ms wall), $dw directory writes, $inv invalidations, used slots $ub -> $ua, mode $mode"
	drop_sql "DROP TABLE IF EXISTS $t" >/dev/null
}
