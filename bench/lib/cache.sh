# bench/lib/cache.sh: running PostgreSQL with data on the HDD tier and
# ssd_cache's file on the SSD tier, for the ssd-cache-* experiments.

# cache_conf POLICY CACHE_MB: server settings for a run with the cache
# (CACHE_MB 0: ssd_cache not loaded at all, i.e. stock PostgreSQL).  POLICY
# is tac or clock, write-through; "+wb" makes it write-back (PC), "+wbN"
# write-back with ssd_cache.evict_batch N (PC2), e.g. tac+wb128, and "+lc"
# lazy cleaning (LC, the baseline), whose cleaner writes back
# ssd_cache.evict_batch pages per sync as PC2's does (128, the default; "+lcN":
# N).
cache_conf() {
	local policy=${1%%+*} mb=$2 mode=write_through batch=1
	case $1 in
	*+wb) mode=write_back ;;
	*+wb[0-9]*) mode=write_back batch=${1##*+wb} ;;
	*+lc) mode=lazy_cleaning batch=128 ;;
	*+lc[0-9]*) mode=lazy_cleaning batch=${1##*+lc} ;;
	esac
	if [ "$mb" -gt 0 ]; then
		cat <<CONF
shared_preload_libraries = 'ssd_cache'
ssd_cache.path = '$BENCH_DIR/ssd/ssd_cache.dat'
ssd_cache.size = '${mb}MB'
ssd_cache.policy = '$policy'
ssd_cache.mode = '$mode'
ssd_cache.evict_batch = $batch
CONF
	else
		echo "shared_preload_libraries = ''"
	fi
}

# cache_prepare PRISTINE TIER CONFLINES: copy the pristine cluster to the
# tier's data directory and append the run's settings; prints the directory.
cache_prepare() {
	local pristine=$1 tier=$2 conf=$3 data
	data="$(tier_dir "$tier")/data"
	rm -rf "$data"
	cp -a "$pristine" "$data"
	rm -f "$data/.loaded"
	printf '%s\n' "$conf" >>"$data/postgresql.conf"
	sync
	echo "$data"
}

# The pristine TPC-C cluster (database "tpcc"), loaded once.
cache_pristine_tpcc() {
	pristine_cluster "tpcc$1" tpcc_load tpcc "$1"
}

# pgbench at a scale, plus a cold table outside the OLTP working set for the
# pollution runs: one row per page, a random key to read it in random order.
load_pgbench_with_cold() {
	pgbench_load bench "$1"
	bench_psql -d bench -c "CREATE TABLE cold (id int, r float8, pad text)" \
		-c "ALTER TABLE cold ALTER pad SET STORAGE PLAIN" \
		-c "INSERT INTO cold SELECT g, random(), repeat('c', 7000) FROM generate_series(1, 20000) g" \
		-c "CREATE INDEX cold_r ON cold (r)"
	bench_psql -d bench -c "VACUUM ANALYZE"
}

# The pristine pgbench cluster (loaded once on the SSD tier, unthrottled).
cache_pristine() {
	pristine_cluster "pgbench$1" load_pgbench_with_cold "$1"
}

# Write-back counters of ssd_cache_stats as "absorbed_writes
# checkpoint_writes_absorbed write_backs fresher_pages disk_writes".
cache_wb_counters() {
	bench_psql -d "$1" -At -F' ' -c "SELECT absorbed_writes, checkpoint_writes_absorbed, write_backs, fresher_pages, disk_writes FROM ssd_cache_stats" 2>/dev/null ||
		echo "0 0 0 0 0"
}

# Checkpoints (timed and requested) completed so far.
checkpoints_done() {
	bench_psql -d "$1" -At -c "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter" 2>/dev/null || echo 0
}

# ssd_cache_stats as "hits misses admissions refusals sequential_reads used_slots".
cache_counters() {
	bench_psql -d "$1" -At -F' ' -c "SELECT hits, misses, admissions, refusals, sequential_reads, used_slots FROM ssd_cache_stats" 2>/dev/null ||
		echo "0 0 0 0 0 0"
}

# cache_prefill DB RELATION...: fill the empty cache before the warm-up by
# reading each relation once, in the order given (the hot small tables and
# the indexes before a large heap), with sequential detection off so those
# reads are offered as random ones would be; then detection back on, the
# admissions drained and the OS page cache dropped, so every configuration
# starts its warm-up alike.  A uniform workload (TPC-B's pgbench_accounts)
# fills a cache of hundreds of MB at the HDD's random-read pace in hours;
# read in order, in seconds.  Run for the no-cache configurations too (the
# reads then only pass through).  Logs the time taken and how full the cache
# is.
cache_prefill() {
	local db=$1 t0 used prev=-1 i secs rel
	shift
	t0=$(date +%s)
	if [ "$CACHE_MB" -gt 0 ]; then
		bench_psql -d "$db" -q -c "ALTER SYSTEM SET ssd_cache.sequential_detection = 'none'" -c "SELECT pg_reload_conf()" >/dev/null
		sleep 1
	fi
	bench_psql -d "$db" -q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" >/dev/null
	for rel in "$@"; do
		bench_psql -d "$db" -q -c "SELECT pg_prewarm('$rel', 'read')" >/dev/null
	done
	if [ "$CACHE_MB" -gt 0 ]; then
		# The admission worker writes the offered pages behind the reads.
		for i in $(seq 1 120); do
			used=$(cache_counters "$db" | awk '{ print $6 }')
			[ "$used" = "$prev" ] && break
			prev=$used
			sleep 2
		done
		bench_psql -d "$db" -q -c "ALTER SYSTEM RESET ssd_cache.sequential_detection" -c "SELECT pg_reload_conf()" >/dev/null
	fi
	drop_caches
	secs=$(($(date +%s) - t0))
	log "prefill: ${secs} s$([ "$CACHE_MB" -gt 0 ] && awk -v u="$used" -v mb="$CACHE_MB" 'BEGIN { printf ", cache %.1f%% full", 100 * u / (mb * 128) }')"
}

# cache_server_start PRISTINE DB_MB TIER POLICY PCT NAME: a fresh copy of the
# pristine cluster on TIER, an empty cache of PCT% of the database (0: no
# ssd_cache at all), shared_buffers 3% of the database, a memory cap leaving
# the OS about 10% (at least 96 MB), the root write throttle for the HDD
# tier, and a cold start.  Sets DATA, TIER and CACHE_MB for the caller.
cache_server_start() {
	local pristine=$1 db_mb=$2 tier=$3 policy=$4 pct=$5 name=$6 sb_mb os_mb
	CACHE_MB=$(awk -v d="$db_mb" -v p="$pct" 'BEGIN { printf "%d", d * p / 100 }')
	TIER=$tier
	sb_mb=$((db_mb * 3 / 100)); [ "$sb_mb" -ge 16 ] || sb_mb=16
	os_mb=$((db_mb / 10)); [ "$os_mb" -ge 96 ] || os_mb=96
	DATA=$(cache_prepare "$pristine" "$tier" "$(cache_conf "$policy" "$CACHE_MB")")
	rm -f "$BENCH_DIR/ssd/ssd_cache.dat"
	# CACHE_WAL=ssd: the WAL on the SSD tier for every configuration (the
	# usual production layout), so that only data pages meet the slow disk.
	rm -rf "$BENCH_DIR/ssd/pg_wal"
	if [ "${CACHE_WAL:-tier}" = ssd ] && [ "$tier" != ssd ]; then
		mv "$DATA/pg_wal" "$BENCH_DIR/ssd/pg_wal"
		ln -s "$BENCH_DIR/ssd/pg_wal" "$DATA/pg_wal"
	fi
	[ "$tier" = hdd ] && root_write_throttle "$HDD_IOPS"
	drop_caches
	set_memory_limit "$((sb_mb + os_mb))M"
	SERVER_OPTS="-c shared_buffers=${sb_mb}MB"
	[ -n "${CACHE_CHECKPOINT_TIMEOUT:-}" ] && SERVER_OPTS+=" -c checkpoint_timeout=${CACHE_CHECKPOINT_TIMEOUT}s"
	log "$name: cache ${CACHE_MB} MB, shared_buffers ${sb_mb} MB, memory cap $((sb_mb + os_mb)) MB"
	pg_cold_start "$DATA" "$RUN_DIR/$name.log" "$SERVER_OPTS"
	if [ "$CACHE_MB" -gt 0 ]; then
		bench_psql -d "${OLTP_DB:-bench}" -c "CREATE EXTENSION ssd_cache"
	fi
}

cache_server_stop() {
	pg_stop "$DATA"
	if [ "$TIER" = hdd ]; then
		root_write_throttle 0
	fi
	rm -rf "$DATA" "$BENCH_DIR/ssd/pg_wal"
}

# skewed_pgbench SECONDS CLIENTS SCALE OUTFILE [extra pgbench options]
skewed_pgbench() {
	local seconds=$1 clients=$2 scale=$3 out=$4
	shift 4
	bench_pgbench -n -c "$clients" -j 2 -T "$seconds" -D scale="$scale" \
		-f "$WORKLOADS/select-skewed.sql" "$@" bench >"$out" 2>&1
}

# crash_server DATA: kill -9 the postmaster, then wait for its children, which
# exit when they notice it is gone, and for all of them to be reaped (the
# new postmaster refuses to start while the old one's PID exists, even as a
# zombie).
crash_server() {
	local data=$1 pid children alive c i
	pid=$(head -1 "$data/postmaster.pid")
	children=$(pgrep -P "$pid" | tr '\n' ' ' || true)
	kill -9 "$pid"
	for i in $(seq 1 600); do
		alive=""
		for c in $pid $children; do
			kill -0 "$c" 2>/dev/null && alive="$alive $c"
		done
		[ -z "$alive" ] && return 0
		[ "$i" -eq 300 ] && { log "still running 30 s after the postmaster was killed:$alive; kill -9"; kill -9 $alive 2>/dev/null || true; }
		sleep 0.1
	done
	die "processes of the killed server did not go away:$alive"
}
