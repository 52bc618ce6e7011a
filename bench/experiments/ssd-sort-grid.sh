# bench/experiments/ssd-sort-grid.sh
# SSD Sort vs the built-in Sort: row size x work_mem x cache grid (total time, time to first row, temp written, planner choice).
#
# The analogue of Ghodsnia ch. 4 (Figures 4.5/4.6, Table 4.4) on the SSD
# tier: SELECT * FROM sort_R ORDER BY key over a table of R-byte rows whose
# key is a random permutation, with the built-in Sort (ssd_sort.enable off)
# and SSD Sort (enable_sort off), and the plan the planner picks on its own.
# The qdtt_costing model of the tier is calibrated first, so SSD Sort's fetch
# is costed with it.  "Cache" is the OS page cache the memory cgroup leaves
# for the table (shared_buffers is a fixed 64 MB: a seq scan of a large table
# goes through a 256 kB ring, so the buffer pool does not hold the table in
# PostgreSQL 15 anyway); effective_cache_size says the same to the planner.
# Every run is cold.  Time to first row: SSD Sort's own "Time To First Row",
# the built-in Sort's actual startup time.  Temp written: the plan's temp
# blocks written.  A run slower than --cap_s is stopped and recorded as
# censored.
#
# Options: --rows "256 2048 4096" (row bytes)  --table_mb 512
#          --work_mems "1MB 8MB 64MB"  --caches "25 100" (% of the table)
#          --cap_s 300  --calibration_mb 256

experiment_main() {
	local rows="256 2048 4096" table_mb=512 work_mems="1MB 8MB 64MB" caches="25 100"
	local cap_s=300 calibration_mb=256
	parse_options ssd-sort-grid "$@"

	local pristine data
	pristine=$(pristine_cluster "sort-$(echo "$rows" | tr ' ' '_')-${table_mb}mb" load_sort_tables "$rows" "$table_mb")
	data=$(tier_copy "$pristine" ssd ssdsort)

	echo "row_bytes,rows,pages,work_mem,cache_pct,variant,plan,total_ms,ttfr_ms,temp_written_kb,runs,merge_passes,censored" >"$RESULT.csv"
	meta settings "SSD tier; table ${table_mb} MB per row size, key a random permutation; shared_buffers 64MB; memory cgroup = cache% x table + 160 MB; effective_cache_size = cache% x table + 64 MB; jit off, max_parallel_workers_per_gather 0; every run cold; SSD Sort prefetch depth 32; qdtt model calibrated on the tier (${calibration_mb} MB file)"
	meta query "SELECT * FROM sort_R ORDER BY key (EXPLAIN ANALYZE, BUFFERS)"

	set_memory_limit 2G
	pg_cold_start "$data" "$RUN_DIR/ssd.log" "-c shared_buffers=128MB $SORT_OPTS"
	bench_psql -d sortdb -c "CREATE EXTENSION IF NOT EXISTS qdtt_costing" \
		-c "SELECT points_measured, max_beneficial_queue_depth FROM qdtt_calibrate('pg_default', $calibration_mb, 0.25, true)" >"$RUN_DIR/calibration.txt"
	bench_psql -d sortdb -c "SELECT band_pages, queue_depths, cost_us, page_cost FROM qdtt_model" >"$RESULT-model.txt"
	pg_stop "$data"

	local r wm c
	for r in $rows; do
		for wm in $work_mems; do
			for c in $caches; do
				sort_cell "$data" "$r" "$table_mb" "$wm" "$c" "$cap_s"
			done
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

SORT_OPTS="-c shared_preload_libraries=qdtt_costing,ssd_sort -c jit=off -c max_parallel_workers_per_gather=0"

load_sort_tables() {
	local r
	bench_psql -d postgres -c "CREATE DATABASE sortdb"
	for r in $1; do
		# rows of r bytes (tuple header included), about table_mb in all;
		# 8 KB pages hold floor(8168 / (r + 4)) of them.
		local per_page=$((8168 / (r + 4)))
		local n=$(($2 * 128 * per_page))
		sort_table_load sortdb "sort_$r" "$r" "$n"
	done
}

# The plan's numbers from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of the top
# node: "plan total_ms ttfr_ms temp_kb runs passes".
plan_numbers() {
	/usr/bin/python3 -c '
import json, sys
p = json.load(sys.stdin)[0]["Plan"]
node = p.get("Custom Plan Provider") or p["Node Type"]
if node == "Sort":
    node = "Sort (" + p.get("Sort Method", "?") + ")"
ttfr = p.get("Time To First Row", p["Actual Startup Time"])
temp = p.get("Temp Written Blocks", 0) * 8
print(node.replace(" ", "_"), round(p["Actual Total Time"], 1), round(ttfr, 1), temp,
      p.get("Sorted Runs", ""), p.get("Merge Passes", ""))'
}

sort_cell() {
	local data=$1 r=$2 table_mb=$3 wm=$4 c=$5 cap_s=$6
	local tab="sort_$r" pages nrows cache_mb
	local opts variant settings out nums ms_of_plan=()
	cache_mb=$((table_mb * c / 100))
	set_memory_limit "$((cache_mb + 160))M"
	opts="-c shared_buffers=64MB -c effective_cache_size=$((cache_mb + 64))MB -c work_mem=$wm $SORT_OPTS"
	local -A done_plan=()
	for variant in builtin ssd_sort planner; do
		case $variant in
		builtin) settings="SET ssd_sort.enable = off;" ;;
		ssd_sort) settings="SET enable_sort = off;" ;;
		planner) settings="" ;;
		esac
		pg_cold_start "$data" "$RUN_DIR/ssd.log" "$opts"
		if [ -z "${pages:-}" ]; then
			pages=$(bench_psql -d sortdb -At -c "SELECT relpages FROM pg_class WHERE relname = '$tab'")
			nrows=$(bench_psql -d sortdb -At -c "SELECT reltuples::bigint FROM pg_class WHERE relname = '$tab'")
		fi
		local plan
		plan=$(bench_psql -d sortdb -At -c "$settings EXPLAIN (COSTS OFF, FORMAT JSON) SELECT * FROM $tab ORDER BY key" |
			/usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["Plan"]; print(p.get("Custom Plan Provider") or p["Node Type"])')
		if [ "$variant" = planner ] && [ -n "${done_plan[$plan]:-}" ]; then
			echo "$r,$nrows,$pages,$wm,$c,planner,${done_plan[$plan]}" >>"$RESULT.csv"
			log "$tab work_mem $wm cache $c%: planner picks $plan"
			continue
		fi
		if out=$(bench_psql -d sortdb -At -c "SET statement_timeout = '${cap_s}s'; $settings EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM $tab ORDER BY key" 2>&1); then
			nums=$(plan_numbers <<<"$out")
			read -r p total ttfr temp runs passes <<<"$nums"
			done_plan[$plan]="$p,$total,$ttfr,$temp,$runs,$passes,0"
		else
			grep -q 'statement timeout' <<<"$out" || die "$tab $variant: $out"
			done_plan[$plan]="$plan,$((cap_s * 1000)),,,,,1"
		fi
		echo "$r,$nrows,$pages,$wm,$c,$variant,${done_plan[$plan]}" >>"$RESULT.csv"
		log "$tab work_mem $wm cache $c% $variant: ${done_plan[$plan]}"
	done
}
