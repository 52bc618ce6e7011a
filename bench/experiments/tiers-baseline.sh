# bench/experiments/tiers-baseline.sh
# Stock PostgreSQL, pgbench TPC-B-like and the TPC-C-like mix, data on the HDD tier vs the SSD tier.
#
# The gap ssd_cache has to close.  One cluster holds both databases; it is
# loaded once on the SSD tier (kept as a pristine copy for re-runs), then
# copied to each tier, so both tiers start from the same bytes.  Every
# measured run starts cold (stop, drop the OS cache, start) in the memory
# cgroup, with shared_buffers about 3% of the workload's database.
#
# Options: --scale N (pgbench, 100) --warehouses N (TPC-C, 10)
#          --seconds N (per run, 120) --clients N (8) --tiers "hdd ssd"

experiment_main() {
	local scale=100 warehouses=10 seconds=120 clients=8 tiers="hdd ssd"
	parse_options tiers-baseline "$@"

	local pristine
	pristine=$(pristine_cluster "pgbench$scale-tpcc$warehouses" load_baseline "$scale" "$warehouses")

	echo "tier,workload,clients,seconds,shared_buffers_mb,memory_limit_mb,db_mb,tps,tpmc,latency_ms,blks_read,blks_hit,hit_pct,dev_read_iops,dev_write_iops,dev_read_mbs,dev_write_mbs,checkpoints,progress_tps" >"$RESULT.csv"
	meta settings "clients $clients (pgbench -j 2), $seconds s a run, checkpoint_timeout 60s, max_wal_size 4GB, synchronous_commit on, full_page_writes on; pgbench client outside the cgroups"
	meta workloads "pgbench TPC-B-like scale $scale; TPC-C-like $warehouses warehouses (bench/workloads/tpcc)"

	local tier data
	for tier in $tiers; do
		data=$(tier_copy "$pristine" "$tier" data)
		[ "$tier" = hdd ] && root_write_throttle "$HDD_IOPS"
		run_one "$tier" "$data" tpcb bench "$clients" "$seconds"
		run_one "$tier" "$data" tpcc tpcc "$clients" "$seconds" "$warehouses"
		[ "$tier" = hdd ] && root_write_throttle 0
		rm -rf "$data"
	done
}

# Both workloads in one cluster.
load_baseline() {
	pgbench_load bench "$1"
	tpcc_load tpcc "$2"
}

# The servers' settings for every run.
BASELINE_OPTS="-c checkpoint_timeout=60s -c max_wal_size=4GB"

# run_one TIER DATA WORKLOAD DB CLIENTS SECONDS [WAREHOUSES]
run_one() {
	local tier=$1 data=$2 workload=$3 db=$4 clients=$5 seconds=$6 warehouses=${7:-}
	local out="$RUN_DIR/$tier-$workload.out" dev db_mb sb_mb mem_mb
	dev=$(tier_device "$tier")

	# The database's size sets shared_buffers (3%) and the memory cgroup
	# (shared_buffers + about 24% of the database for the OS cache and the
	# processes, the proportions of the DESIGN.md baseline: 48 MB / 400 MB
	# for pgbench scale 100).  Small databases get floors of 16 MB and
	# 160 MB, below which the server's own processes do not fit.
	pg_start "$data" "$RUN_DIR/$tier.log" "-c shared_buffers=128MB $BASELINE_OPTS"
	db_mb=$(bench_psql -d "$db" -At -c "SELECT pg_database_size('$db') / 1048576")
	pg_stop "$data"
	drop_caches
	sb_mb=$((db_mb * 3 / 100))
	[ "$sb_mb" -ge 16 ] || sb_mb=16
	local os_mb=$((db_mb * 24 / 100))
	[ "$os_mb" -ge 160 ] || os_mb=160
	mem_mb=$((sb_mb + os_mb))
	set_memory_limit "${mem_mb}M"

	log "$tier $workload: cold start, shared_buffers ${sb_mb}MB, memory cgroup ${mem_mb}MB, database ${db_mb}MB"
	pg_cold_start "$data" "$RUN_DIR/$tier.log" "-c shared_buffers=${sb_mb}MB $BASELINE_OPTS"
	bench_psql -d "$db" -c "SELECT pg_stat_reset()" >/dev/null
	local ckpt0 d0 d1 tpmc="" res
	ckpt0=$(bench_psql -d "$db" -At -c "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter")
	d0=$(diskstats "$dev")
	if [ "$workload" = tpcc ]; then
		res=$(tpcc_run "$db" "$warehouses" "$seconds" "$out" -c "$clients" -j 2 -P 10)
		tpmc=${res%% *}
		res=${res#* }
	else
		bench_pgbench -n -c "$clients" -j 2 -T "$seconds" -P 10 "$db" >"$out" 2>&1
		res=$(pgbench_result "$out")
	fi
	d1=$(diskstats "$dev")
	local stats
	stats=$(bench_psql -d "$db" -At -F, -c "
		SELECT blks_read, blks_hit, round(100.0 * blks_hit / nullif(blks_hit + blks_read, 0), 1),
			   (SELECT checkpoints_timed + checkpoints_req - $ckpt0 FROM pg_stat_bgwriter)
		FROM pg_stat_database WHERE datname = '$db'")
	local io
	io=$(echo "$d0 $d1" | awk -v s="$seconds" '{ printf "%.0f,%.0f,%.1f,%.1f", ($5-$1)/s, ($6-$2)/s, ($7-$3)/s/1e6, ($8-$4)/s/1e6 }')
	local tps=${res%% *} lat=${res#* }
	IFS=, read -r br bh hit ck <<<"$stats"
	echo "$tier,$workload,$clients,$seconds,$sb_mb,$mem_mb,$db_mb,$tps,$tpmc,$lat,$br,$bh,$hit,$io,$ck,\"$(pgbench_progress "$out")\"" >>"$RESULT.csv"
	log "$tier $workload: tps $tps ${tpmc:+tpmC $tpmc }latency $lat ms; device r/w IOPS ${io%,*,*}"
	pg_stop "$data"
}
