# bench/experiments/ssd-cache-oltp.sh
# ssd_cache on the HDD tier: skewed pgbench select-only with tac and clock at 12.5/25/50% of the database, vs no cache and vs all data on the SSD tier.
#
# Every run: a fresh copy of one pristine pgbench database on the tier, an
# empty cache file on the SSD tier, a cold start in the memory cgroup,
# --warmup seconds of the workload (the cache fills at the HDD's pace), then
# --seconds measured.  shared_buffers is 3% of the database; the memory cap
# leaves the OS about 10% of the database (at least 96 MB) for its cache.
#
# Options: --scale 30 --seconds 60 --warmup 90 --clients 8
#          --sizes "12.5 25 50" --policies "tac clock" --baselines "none ssd"
# A policy with "+wb" runs the cache write-back (tac+wb: PC), with "+wbN"
# write-back evicting N pages at a time (tac+wb128: PC2), with "+lc" lazy
# cleaning (tac+lc: LC).  --wal ssd puts pg_wal on the SSD tier in every
# configuration; --checkpoint-timeout S sets checkpoint_timeout in every
# configuration (the default, 5 min, never fires within a run); --progress S
# reports tps every S seconds of the measured interval (10 by default; 1
# shows checkpoint stalls, the thesis's Fig. 2.1).  --rate R offers R
# transactions a second (pgbench -R) in the warm-up and the measurement
# instead of as many as the clients can run: the thesis's TPC-C is bound by
# its terminals, so "matches the all-SSD throughput" means keeping up with
# the offered load (0, the default: no limit).  --prefill yes fills each
# empty cache before the warm-up with one read of each relation in
# OLTP_PREFILL_RELATIONS (cache_prefill; ssd-cache-tpcb's default, whose
# uniform accesses would take hours to fill it at the HDD's pace).

OLTP_DB=bench
OLTP_DEFAULT_SCALE=30

experiment_main() {
	local scale=$OLTP_DEFAULT_SCALE seconds=60 warmup=90 clients=8 sizes="12.5 25 50"
	local policies=${OLTP_DEFAULT_POLICIES:-"tac clock"}
	local baselines="none ssd" mix=${OLTP_DEFAULT_MIX:-} wal=tier checkpoint_timeout="" progress=10
	local rate=0 prefill=${OLTP_DEFAULT_PREFILL:-no}
	parse_options ssd-cache-oltp "$@"
	OLTP_PREFILL=$prefill
	OLTP_RATE=$rate
	OLTP_MIX=$mix
	CACHE_WAL=$wal
	CACHE_CHECKPOINT_TIMEOUT=$checkpoint_timeout
	OLTP_PROGRESS=$progress
	local pristine db_mb
	pristine=$(oltp_pristine "$scale")
	db_mb=$(du -sm "$pristine/base" | cut -f1)
	meta workloads "$(oltp_description "$scale") database ${db_mb} MB"
	meta settings "clients $clients (-j 2), warm-up ${warmup} s then ${seconds} s measured, every run from a cold start with an empty cache$([ "$prefill" = yes ] && echo " filled before the warm-up by one read of $(echo $OLTP_PREFILL_RELATIONS | sed 's/ /, /g') in that order (bench/lib/cache.sh cache_prefill)"), WAL on the $([ "$wal" = ssd ] && echo "SSD tier" || echo "data's tier"), checkpoint_timeout ${checkpoint_timeout:-300} s, tps reported every ${progress} s$([ "$rate" = 0 ] || echo ", offered load $rate transactions/s (pgbench -R)")"
	echo "config,tier,policy,cache_pct,cache_mb,tps,tpmc,latency_ms,hit_ratio,admissions,refusals,used_slots,dev_read_iops,progress_tps,dev_write_iops,filled_pct,absorbed_writes,checkpoint_absorbed,write_backs,fresher_pages,checkpoints" >"$RESULT.csv"

	local b
	for b in $baselines; do
		case $b in
		none) oltp_run "$pristine" "$db_mb" hdd none 0 "$clients" "$warmup" "$seconds" "$scale" ;;
		ssd) oltp_run "$pristine" "$db_mb" ssd none 0 "$clients" "$warmup" "$seconds" "$scale" ;;
		esac
	done
	local size policy
	for size in $sizes; do
		for policy in $policies; do
			oltp_run "$pristine" "$db_mb" hdd "$policy" "$size" "$clients" "$warmup" "$seconds" "$scale"
		done
	done
}

# The workload, as hooks another experiment can redefine (ssd-cache-tpcc).
oltp_pristine() {
	cache_pristine "$1"
}

oltp_description() {
	echo "pgbench select-only, skewed (bench/workloads/select-skewed.sql: random_gaussian 5.0), scale $1,"
}

# oltp_workload SECONDS CLIENTS SCALE OUTFILE [pgbench options]: prints
# "tps tpmC latency" (tpmC empty where it does not apply).
oltp_workload() {
	local out=$4
	skewed_pgbench "$@"
	local res
	res=$(pgbench_result "$out")
	echo "${res%% *} - ${res#* }"
}

# oltp_run PRISTINE DB_MB TIER POLICY CACHE_PCT CLIENTS WARMUP SECONDS SCALE
oltp_run() {
	local pristine=$1 db_mb=$2 tier=$3 policy=$4 pct=$5 clients=$6 warmup=$7 seconds=$8 scale=$9
	local config out c0 c1 d0 d1 dev w0 w1 wb filled wiops k0 k1
	config="$tier-$policy-$pct"
	[ "$policy" = none ] && config="$tier-nocache"
	out="$RUN_DIR/$config.out"
	dev=$(tier_device "$tier")

	cache_server_start "$pristine" "$db_mb" "$tier" "$policy" "$pct" "$config"
	[ "${OLTP_PREFILL:-no}" = yes ] && cache_prefill "$OLTP_DB" $OLTP_PREFILL_RELATIONS
	local limit=()
	[ "${OLTP_RATE:-0}" = 0 ] || limit=(-R "$OLTP_RATE")
	oltp_workload "$warmup" "$clients" "$scale" "$out.warmup" "${limit[@]}" >/dev/null
	c0=$(cache_counters "$OLTP_DB")
	w0=$(cache_wb_counters "$OLTP_DB")
	k0=$(checkpoints_done "$OLTP_DB")
	d0=$(diskstats "$dev")
	local tps tpmc lat hit adm ref used iops
	read -r tps tpmc lat <<<"$(oltp_workload "$seconds" "$clients" "$scale" "$out" -P "${OLTP_PROGRESS:-10}" "${limit[@]}")"
	[ "$tpmc" = - ] && tpmc=""
	d1=$(diskstats "$dev")
	c1=$(cache_counters "$OLTP_DB")
	w1=$(cache_wb_counters "$OLTP_DB")
	k1=$(checkpoints_done "$OLTP_DB")
	# How full the cache was when the measurement started, and what write-back did during it.
	filled=$(echo "$c0" | awk -v mb="$CACHE_MB" '{ if (mb > 0) printf "%.1f", 100 * $6 / (mb * 128) }')
	wb=$(echo "$w0 $w1" | awk '{ printf "%d,%d,%d,%d", $6 - $1, $7 - $2, $8 - $3, $9 }')
	wiops=$(echo "$d0 $d1" | awk -v s="$seconds" '{ printf "%.0f", ($6 - $2) / s }')

	read -r hit adm ref used <<<"$(echo "$c0 $c1" | awk '{
		h = $7 - $1; m = $8 - $2;
		printf "%s %d %d %d", (h + m > 0 ? sprintf("%.4f", h / (h + m)) : ""), $9 - $3, $10 - $4, $12 }')"
	iops=$(echo "$d0 $d1" | awk -v s="$seconds" '{ printf "%.0f", ($5 - $1) / s }')
	if [ "$CACHE_MB" -eq 0 ]; then
		hit="" adm="" ref="" used="" filled="" wb=",,,"
	fi
	echo "$config,$tier,$policy,$pct,$CACHE_MB,$tps,$tpmc,$lat,$hit,$adm,$ref,$used,$iops,\"$(pgbench_progress "$out")\",$wiops,$filled,$wb,$((k1 - k0))" >>"$RESULT.csv"
	log "$config: tps $tps${tpmc:+, tpmC $tpmc}, latency $lat ms, hit ratio ${hit:-n/a}, device reads/s $iops"
	cache_server_stop
}
