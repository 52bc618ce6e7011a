# bench/experiments/qdtt-planning.sh
# What planning with a QDTT model costs statements planned at every execution: pgbench -S and TPC-B, qdtt.enable on vs off, alternating rounds.
#
# pgbench scale --scale on the SSD tier, shared_buffers 1 GB (everything in
# memory: the cost measured is planning's, not I/O), qdtt_costing preloaded
# and the default tablespace calibrated once with qdtt_calibrate() as a DBA
# would (--calibration_mb).  Then, on the same server, --rounds rounds of
# pgbench with the simple protocol (every statement parsed and planned),
# --clients clients, --seconds per run, alternating qdtt.enable = on and
# off (PGOPTIONS), for the select-only script (-S) and TPC-B.  The figure of
# merit is the ratio of the mean tps with the model to the mean without,
# per script.
#
# Options: --scale 10  --seconds 20  --rounds 5  --clients 1  --calibration_mb 256

experiment_main() {
	local scale=10 seconds=20 rounds=5 clients=1 calibration_mb=256
	parse_options qdtt-planning "$@"
	local pristine data r script enable out res
	pristine=$(pristine_cluster "pgbench-$scale" pgbench_load bench "$scale")
	data=$(tier_copy "$pristine" ssd qdttplanning)
	set_memory_limit -1
	meta settings "SSD tier; pgbench scale $scale, shared_buffers 1GB (all in memory); qdtt_costing preloaded, pg_default calibrated with qdtt_calibrate(mb => $calibration_mb); $rounds rounds of ${seconds} s per script and setting, $clients client(s), simple protocol, qdtt.enable on and off alternating on one server"
	pg_start "$data" "$RUN_DIR/server.log" "-c shared_buffers=1GB -c shared_preload_libraries=qdtt_costing"
	bench_psql -d bench -c "CREATE EXTENSION IF NOT EXISTS qdtt_costing"
	log "qdtt_calibrate(pg_default, $calibration_mb MB)"
	bench_psql -d bench -At -c "SELECT points_measured, max_beneficial_queue_depth, round((prepare_seconds + measure_seconds)::numeric, 1) FROM qdtt_calibrate('pg_default', $calibration_mb)" >"$RUN_DIR/calibration.txt"
	meta calibration "$(cat "$RUN_DIR/calibration.txt") (points measured | max beneficial queue depth | seconds)"
	bench_psql -d bench -c "SELECT band_pages, queue_depths, cost_us FROM qdtt_model" >"$RESULT-model.txt"
	echo "round,script,qdtt,tps,latency_ms" >"$RESULT.csv"
	for script in select-only tpcb; do
		local sflag=""
		[ "$script" = select-only ] && sflag="-S"
		# warm-up: every page in shared_buffers, both settings' code paths hot
		for enable in on off; do
			PGOPTIONS="-c qdtt.enable=$enable" bench_pgbench -n $sflag -c "$clients" -j "$clients" -T 5 bench >/dev/null 2>&1
		done
		for r in $(seq 1 "$rounds"); do
			for enable in on off; do
				out="$RUN_DIR/$script-$enable-$r.out"
				PGOPTIONS="-c qdtt.enable=$enable" bench_pgbench -n $sflag -M simple -c "$clients" -j "$clients" \
					-T "$seconds" bench >"$out" 2>&1 || { tail "$out" >&2; die "pgbench failed"; }
				res=$(pgbench_result "$out")
				echo "$r,$script,$enable,${res%% *},${res#* }" >>"$RESULT.csv"
				log "round $r $script qdtt.enable=$enable: ${res%% *} tps"
			done
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}
