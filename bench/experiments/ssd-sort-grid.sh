# bench/experiments/ssd-sort-grid.sh
# SSD Sort vs the built-in Sort: row size x work_mem x cache grid (total time, time to first row, temp written, planner choice).
#
# The analogue of Ghodsnia ch. 4 (Figures 4.5/4.6, Table 4.4) on the SSD
# tier: SELECT * FROM sort_R ORDER BY key over a table of R-byte rows whose
# key is a random permutation, with the built-in Sort (ssd_sort.enable off)
# and SSD Sort (enable_sort off), an index scan on the key (the thesis's
# section 4.6 comparison), and the plan the planner picks between Sort and
# SSD Sort (index scans disabled: the target is about those two).
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
# A stopped SSD Sort or index scan run gets its time to first row from a
# separate cold run that opens a cursor and fetches one row.
#
# Every table has a btree index on the key.  --presorted row sizes also get
# a table whose physical order is the key order (the thesis's Table 4.3),
# run at --presorted_cache percent and the smallest work_mem.
#
# A run is stopped at --cap_s, and the SSD Sort and index scan runs also at
# --cap_factor times the built-in Sort's time (plus 5 s): beyond that the
# cell's winner is known, and 24 million 40-byte rows fetched one by one
# would otherwise take most of the run.  Stopped runs are marked censored.
# Row sizes in --reduced_rows run only the corners of the grid
# (--reduced_work_mems x --reduced_caches), for the same reason.
#
# States (--states, on by default; --grid 0 runs them alone): the states a
# server is usually in, default settings (shared_buffers 128MB, work_mem
# 4MB), qdtt_costing's residency sampler counting the table before each
# plan.  Three tables: "compressed" (294,117 rows, a 2,016-character text
# that compresses to about 70 bytes: 75 rows a page), "wide1k" and "wide2k"
# (1 kB and 2 kB rows, storage plain), "toast" (4 kB values stored out of
# line).  States: warm (no memory cap, table read once, best of 3 runs
# back to back), half (memory cgroup at shared_buffers + half the table +
# 160 MB, read once through the cap, best of 3), cold (memory cap at the
# table + 288 MB, stop + drop caches + start before each run, best of 2).  Workers 0
# and the default 2, and with LIMIT 100 (SSD Sort is not offered for top-N).
# Each run is a client reading every row: COPY (query) TO STDOUT into
# /dev/null, so values are detoasted and sent as a real client gets them.
# For each cell: the built-in sort, SSD Sort (enable_sort off), and the
# planner's choice, whose time is compared with the faster of the two.
#
# Options: --rows "40 256 2048 4096" (row bytes)  --table_mb 1024
#          --work_mems "1MB 8MB 64MB"  --caches "25 50 75 100" (% of the table)
#          --reduced_rows "40" --reduced_work_mems "1MB 64MB" --reduced_caches "25 100"
#          --presorted "256"  --presorted_cache 5
#          --cap_s 120  --cap_factor 2.5  --calibration_mb 1024  --prepare_only 0
#          --workers 0 (max_parallel_workers_per_gather of the grid)
#          --grid 1  --states "warm half cold"  --state_workers "0 2"

experiment_main() {
	local rows="40 256 2048 4096" table_mb=1024 work_mems="1MB 8MB 64MB" caches="25 50 75 100"
	local presorted="256" presorted_cache=5
	local reduced_rows="40" reduced_work_mems="1MB 64MB" reduced_caches="25 100"
	local cap_s=120 cap_factor=2.5 calibration_mb=1024 prepare_only=0
	local grid=1 states="warm half cold" state_workers="0 2" workers=0
	parse_options ssd-sort-grid "$@"
	SORT_OPTS="${SORT_OPTS/max_parallel_workers_per_gather=0/max_parallel_workers_per_gather=$workers}"

	if [ "$grid" = 0 ]; then
		state_cells "$states" "$state_workers" "$calibration_mb"
		return 0
	fi

	local pristine data tables="" r
	for r in $rows; do tables+=" $r"; done
	for r in $presorted; do tables+=" ${r}s"; done
	pristine=$(pristine_cluster "sort-$(echo $tables | tr ' ' '_')-${table_mb}mb" load_sort_tables "$tables" "$table_mb")
	[ "$prepare_only" = 1 ] && return 0
	data=$(tier_copy "$pristine" ssd ssdsort)

	echo "row_bytes,order,rows,pages,work_mem,cache_pct,variant,plan,total_ms,ttfr_ms,temp_written_kb,runs,merge_passes,censored,est_startup,est_total" >"$RESULT.csv"
	meta settings "SSD tier; table ${table_mb} MB per row size, key a random permutation; shared_buffers 64MB; memory cgroup = cache% x table + 160 MB; effective_cache_size = cache% x table + 64 MB; jit off, max_parallel_workers_per_gather $workers; every run cold; SSD Sort prefetch depth 32; qdtt model calibrated on the tier (${calibration_mb} MB file)"
	meta query "SELECT * FROM sort_R ORDER BY key (EXPLAIN ANALYZE, BUFFERS)"

	set_memory_limit 2G
	pg_cold_start "$data" "$RUN_DIR/ssd.log" "-c shared_buffers=128MB $SORT_OPTS"
	bench_psql -d sortdb -c "CREATE EXTENSION IF NOT EXISTS qdtt_costing" \
		-c "SELECT points_measured, max_beneficial_queue_depth FROM qdtt_calibrate('pg_default', $calibration_mb, 0.25, false)" >"$RUN_DIR/calibration.txt"
	bench_psql -d sortdb -c "SELECT band_pages, queue_depths, cost_us, page_cost FROM qdtt_model" >"$RESULT-model.txt"
	pg_stop "$data"

	local r wm c wms cs
	for r in $rows; do
		wms=$work_mems cs=$caches
		if [[ " $reduced_rows " == *" $r "* ]]; then
			wms=$reduced_work_mems cs=$reduced_caches
		fi
		for wm in $wms; do
			for c in $cs; do
				sort_cell "$data" "$r" "$table_mb" "$wm" "$c" "$cap_s" "$cap_factor"
			done
		done
	done
	for r in $presorted; do
		sort_cell "$data" "${r}s" "$table_mb" "${work_mems%% *}" "$presorted_cache" "$cap_s" "$cap_factor"
	done
	pg_stop "$data"
	rm -rf "$data"
}

SORT_OPTS="-c shared_preload_libraries=qdtt_costing,ssd_sort -c jit=off -c max_parallel_workers_per_gather=0"

# load_sort_tables "R... Rs..." TABLE_MB: sort_R per row size R, in random
# key order, or in key order for "Rs".
load_sort_tables() {
	local t r order
	bench_psql -d postgres -c "CREATE DATABASE sortdb"
	for t in $1; do
		r=${t%s}
		order=random
		[ "$t" != "$r" ] && order=key
		# rows of r bytes (tuple header included), about table_mb in all;
		# 8 KB pages hold floor(8168 / (r + 4)) of them.
		local per_page=$((8168 / (r + 4)))
		local n=$(($2 * 128 * per_page))
		sort_table_load sortdb "sort_$t" "$r" "$n" "$order"
	done
}

# The plan's name from EXPLAIN (FORMAT JSON) on stdin: the top node, and
# under a Gather (Merge) the node it gathers ("Gather_Merge+SSD_Sort").
PLAN_NAME_PY='
def plan_name(p, analyzed=False):
    name = p.get("Custom Plan Provider") or p["Node Type"]
    if name == "Sort" and analyzed:
        name = "Sort (" + p.get("Sort Method", "?") + ")"
    if p["Node Type"] in ("Gather", "Gather Merge") and p.get("Plans"):
        name += "+" + plan_name(p["Plans"][0], analyzed)
    return name.replace(" ", "_")
'

# The plan's numbers from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of the top
# node: "plan total_ms ttfr_ms temp_kb runs passes" (runs and passes of the
# sort under a Gather Merge: the leader's).
plan_numbers() {
	/usr/bin/python3 -c "$PLAN_NAME_PY"'
import json, sys
p = json.load(sys.stdin)[0]["Plan"]
node = plan_name(p, True)
top = p
if p["Node Type"] in ("Gather", "Gather Merge") and p.get("Plans"):
    p = p["Plans"][0]
ttfr = p.get("Time To First Row", top["Actual Startup Time"]) if p is top else top["Actual Startup Time"]
p, sort = top, p
temp = p.get("Temp Written Blocks", 0) * 8
print(node, round(p["Actual Total Time"], 1), round(ttfr, 1), temp,
      sort.get("Sorted Runs", "-"), sort.get("Merge Passes", "-"),
      p["Startup Cost"], p["Total Cost"])'
}

# first_row_ms SETTINGS TABLE CAP_MS: milliseconds from opening a cursor on
# the query to its first row (empty if that too exceeds the cap).
first_row_ms() {
	bench_psql -d sortdb -At -c "SET statement_timeout = '${3}ms'; $1
		DO \$\$
		DECLARE
			t0 timestamptz := clock_timestamp();
			c refcursor;
			r record;
		BEGIN
			OPEN c NO SCROLL FOR SELECT * FROM $2 ORDER BY key;
			FETCH c INTO r;
			RAISE NOTICE 'first_row_ms %', round(extract(epoch FROM clock_timestamp() - t0) * 1000, 1);
		END
		\$\$" 2>&1 | sed -n 's/.*first_row_ms //p'
}

sort_cell() {
	local data=$1 t=$2 table_mb=$3 wm=$4 c=$5 cap_s=$6 cap_factor=$7 cap_ms
	local tab="sort_$t" r=${2%s} order=random pages nrows cache_mb
	[ "$t" != "$r" ] && order=key
	local opts variant settings out nums ms_of_plan=()
	cache_mb=$((table_mb * c / 100))
	set_memory_limit "$((cache_mb + 160))M"
	opts="-c shared_buffers=64MB -c effective_cache_size=$((cache_mb + 64))MB -c work_mem=$wm $SORT_OPTS"
	local -A done_plan=()
	local builtin_ms=
	local noindex="SET enable_indexscan = off; SET enable_bitmapscan = off;"
	for variant in builtin ssd_sort index planner; do
		case $variant in
		builtin) settings="SET ssd_sort.enable = off; $noindex" ;;
		ssd_sort) settings="SET enable_sort = off; $noindex" ;;
		index) settings="SET ssd_sort.enable = off; SET enable_sort = off; SET enable_seqscan = off; SET enable_bitmapscan = off;" ;;
		planner) settings="$noindex" ;;
		esac
		pg_cold_start "$data" "$RUN_DIR/ssd.log" "$opts"
		if [ -z "${pages:-}" ]; then
			pages=$(bench_psql -d sortdb -At -c "SELECT relpages FROM pg_class WHERE relname = '$tab'")
			nrows=$(bench_psql -d sortdb -At -c "SELECT reltuples::bigint FROM pg_class WHERE relname = '$tab'")
		fi
		local plan
		plan=$(bench_psql -d sortdb -At -c "$settings EXPLAIN (COSTS OFF, FORMAT JSON) SELECT * FROM $tab ORDER BY key" |
			/usr/bin/python3 -c "$PLAN_NAME_PY"'
import json, sys
print(plan_name(json.load(sys.stdin)[0]["Plan"]))')
		if [ "$variant" = planner ] && [ -n "${done_plan[$plan]:-}" ]; then
			echo "$r,$order,$nrows,$pages,$wm,$c,planner,${done_plan[$plan]}" >>"$RESULT.csv"
			log "$tab work_mem $wm cache $c%: planner picks $plan"
			continue
		fi
		cap_ms=$((cap_s * 1000))
		if [ "$variant" != builtin ] && [ -n "${builtin_ms:-}" ]; then
			cap_ms=$(/usr/bin/python3 -c "print(min($cap_ms, int($cap_factor * $builtin_ms) + 5000))")
		fi
		if out=$(bench_psql -d sortdb -At -c "SET statement_timeout = '${cap_ms}ms'; $settings EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM $tab ORDER BY key" 2>&1); then
			nums=$(plan_numbers <<<"$out")
			read -r p total ttfr temp runs passes est_s est_t <<<"$nums"
			[ "$runs" = - ] && runs=
			[ "$passes" = - ] && passes=
			done_plan[$plan]="$p,$total,$ttfr,$temp,$runs,$passes,0,$est_s,$est_t"
			[ "$variant" = builtin ] && builtin_ms=$total
		else
			grep -q 'statement timeout' <<<"$out" || die "$tab $variant: $out"
			read -r est_s est_t < <(bench_psql -d sortdb -At -c "$settings EXPLAIN (FORMAT JSON) SELECT * FROM $tab ORDER BY key" |
				/usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["Plan"]; print(p["Startup Cost"], p["Total Cost"])')
			# The run was stopped; its time to first row still counts: a
			# cold run that fetches one row through a cursor.
			pg_cold_start "$data" "$RUN_DIR/ssd.log" "$opts"
			ttfr=$(first_row_ms "$settings" "$tab" "$cap_ms")
			done_plan[$plan]="$plan,$cap_ms,$ttfr,,,,1,$est_s,$est_t"
			[ "$variant" = builtin ] && builtin_ms=$cap_ms
		fi
		echo "$r,$order,$nrows,$pages,$wm,$c,$variant,${done_plan[$plan]}" >>"$RESULT.csv"
		log "$tab work_mem $wm cache $c% $variant: ${done_plan[$plan]}"
	done
}

# ---------------------------------------------------------------------------
# States: warm, half-cached and cold, compressed / wide / TOASTed rows,
# serial and parallel, with and without LIMIT.
# ---------------------------------------------------------------------------

STATE_OPTS="-c shared_preload_libraries=qdtt_costing,ssd_sort -c qdtt.residency_interval=0 -c jit=off"

load_state_tables() {
	bench_psql -d postgres -c "CREATE DATABASE sortdb"
	bench_psql -d sortdb -c "CREATE EXTENSION pg_prewarm" \
		-c "CREATE TABLE compressed (i int, key int, pad text)" \
		-c "INSERT INTO compressed SELECT g, (hashint4(g) & 1073741823), repeat(md5(g::text), 63) FROM generate_series(1, 294117) g" \
		-c "CREATE TABLE wide1k (i int, key int, pad text)" \
		-c "ALTER TABLE wide1k ALTER pad SET STORAGE PLAIN" \
		-c "INSERT INTO wide1k SELECT g, (hashint4(g) & 1073741823), repeat(md5(g::text), 30) FROM generate_series(1, 150000) g" \
		-c "CREATE TABLE wide2k (i int, key int, pad text)" \
		-c "ALTER TABLE wide2k ALTER pad SET STORAGE PLAIN" \
		-c "INSERT INTO wide2k SELECT g, (hashint4(g) & 1073741823), repeat(md5(g::text), 62) FROM generate_series(1, 100000) g" \
		-c "CREATE TABLE toast (i int, key int, pad text)" \
		-c "ALTER TABLE toast ALTER pad SET STORAGE EXTERNAL" \
		-c "INSERT INTO toast SELECT g, (hashint4(g) & 1073741823), repeat(md5(g::text), 125) FROM generate_series(1, 40000) g" \
		-c "VACUUM (FREEZE, ANALYZE) compressed, wide1k, wide2k, toast"
}

# Read the table and its TOAST table into the caches, as a client would.
state_warm_up() {
	bench_psql -d sortdb -At -c "SELECT pg_prewarm('$1', 'read')" \
		-c "SELECT pg_prewarm(reltoastrelid, 'read') FROM pg_class WHERE relname = '$1' AND reltoastrelid <> 0" >/dev/null
}

# state_plan SETTINGS QUERY: the plan's sort nodes, top down (after a
# residency pass, as every run's planning has).
state_plan() {
	bench_psql -d sortdb -At -c "SELECT qdtt_sample_residency()" -c "$1" -c "EXPLAIN (COSTS OFF, FORMAT JSON) $2" | tail -n +2 |
		/usr/bin/python3 -c '
import json, sys
p = json.load(sys.stdin)[0]["Plan"]
names = []
while p:
    n = p.get("Custom Plan Provider") or p["Node Type"]
    if n in ("Sort", "SSD Sort", "Gather Merge", "Gather", "Incremental Sort"):
        names.append(n)
    kids = p.get("Plans") or []
    p = kids[0] if kids else None
print("+".join(names).replace(" ", "_") or "none")'
}

# state_ms SETTINGS QUERY: milliseconds of one client run of the query.
state_ms() {
	bench_psql -d sortdb -c "SELECT qdtt_sample_residency()" -c "$1" -c "\\o /dev/null" -c "\\timing on" -c "COPY ($2) TO STDOUT" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

state_cells() {
	local states=$1 workers_list=$2 calibration_mb=$3
	local pristine data tab state w lim variant settings q reps best out plan ms
	pristine=$(pristine_cluster "sort-states-2" load_state_tables)
	data=$(tier_copy "$pristine" ssd sortstates)
	echo "table,rows,heap_mb,total_mb,state,workers,limit,variant,plan,best_ms,runs_ms" >"$RESULT.csv"
	meta settings "SSD tier; default settings (shared_buffers 128MB, work_mem 4MB, max_parallel_workers_per_gather as listed), jit off; qdtt model calibrated on the tier (${calibration_mb} MB file), residency pass before each plan; client runs COPY (SELECT i, key, pad FROM t ORDER BY key [LIMIT 100]) TO STDOUT into /dev/null; warm: no memory cap, best of 3; half: memory cgroup = 128 MB + half the table + 160 MB, best of 3; cold: memory cgroup = table + 288 MB, cold start before each run, best of 2"
	meta query "SELECT i, key, pad FROM t ORDER BY key [LIMIT 100]"

	set_memory_limit -1
	pg_cold_start "$data" "$RUN_DIR/ssd.log" "$STATE_OPTS"
	bench_psql -d sortdb -c "CREATE EXTENSION IF NOT EXISTS qdtt_costing" \
		-c "SELECT points_measured FROM qdtt_calibrate('pg_default', $calibration_mb, 0.25, false)" >"$RUN_DIR/calibration.txt"
	bench_psql -d sortdb -c "SELECT band_pages, queue_depths, cost_us, page_cost FROM qdtt_model" >"$RESULT-model.txt"

	for tab in compressed wide1k wide2k toast; do
		local nrows heap_mb total_mb
		nrows=$(bench_psql -d sortdb -At -c "SELECT reltuples::bigint FROM pg_class WHERE relname = '$tab'")
		heap_mb=$(bench_psql -d sortdb -At -c "SELECT pg_relation_size('$tab') / 1048576")
		total_mb=$(bench_psql -d sortdb -At -c "SELECT pg_total_relation_size('$tab') / 1048576")
		for state in $states; do
			case $state in
			warm) set_memory_limit -1; reps=3 ;;
			half) set_memory_limit "$((128 + total_mb / 2 + 160))M"; reps=3 ;;
			cold) set_memory_limit "$((total_mb + 288))M"; reps=2 ;;
			esac
			pg_cold_start "$data" "$RUN_DIR/ssd.log" "$STATE_OPTS"
			[ "$state" = cold ] || state_warm_up "$tab"
			for w in $workers_list; do
				for lim in "" " LIMIT 100"; do
					[ -n "$lim" ] && [ "$w" = 0 ] && continue
					q="SELECT i, key, pad FROM $tab ORDER BY key$lim"
					local -A measured=()
					for variant in builtin ssd_sort planner; do
						case $variant in
						builtin) settings="SET max_parallel_workers_per_gather = $w; SET ssd_sort.enable = off;" ;;
						ssd_sort) settings="SET max_parallel_workers_per_gather = $w; SET enable_sort = off;" ;;
						planner) settings="SET max_parallel_workers_per_gather = $w;" ;;
						esac
						plan=$(state_plan "$settings" "$q")
						if [ "$variant" = planner ] && [ -n "${measured[$plan]:-}" ]; then
							echo "$tab,$nrows,$heap_mb,$total_mb,$state,$w,${lim:+100},planner,$plan,${measured[$plan]}" >>"$RESULT.csv"
							log "$tab $state workers $w${lim}: planner picks $plan"
							continue
						fi
						local runs="" i
						for ((i = 0; i < reps; i++)); do
							[ "$state" = cold ] && pg_cold_start "$data" "$RUN_DIR/ssd.log" "$STATE_OPTS"
							ms=$(state_ms "$settings" "$q")
							[ -n "$ms" ] || die "$tab $state $variant: no timing"
							runs+="${runs:+;}$ms"
						done
						best=$(/usr/bin/python3 -c "print(min(float(x) for x in '$runs'.split(';')))")
						[ -n "${measured[$plan]:-}" ] || measured[$plan]="$best,$runs"
						echo "$tab,$nrows,$heap_mb,$total_mb,$state,$w,${lim:+100},$variant,$plan,$best,$runs" >>"$RESULT.csv"
						log "$tab $state workers $w${lim}: $variant $plan $best ms ($runs)"
					done
					unset measured
				done
			done
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}
