# bench/experiments/qdtt-query31.sh
# QDTT: Query 3.1 over T1, T33, T200 on both tiers, cold, warm and half-cached; every forced plan vs the stock and the QDTT planner.
#
# The analogue of Ghodsnia ch. 3 (Tables 3.2/3.3, Fig. 3.8):
#   SELECT max(c1) FROM Tk WHERE c2 BETWEEN lo AND hi
# over T_k (k rows per page, c1 and c2 independent random permutations, a
# btree on c2), buffer pool 5% of the table, in three cache states:
#   cold  memory capped (shared_buffers + 128 MB), every run cold (stop,
#         drop caches, start), as in the thesis;
#   warm  no memory cap, table and index read into the OS page cache once
#         (pg_prewarm), runs back to back;
#   half  memory capped at shared_buffers + half the table (+ 96 MB for
#         the processes); before every run a cold start, then the index
#         and every other 1 MB of the table read into the OS page cache,
#         so each plan starts with the same half of the table cached;
#   repeat the half state's cap, started cold, index and table read
#         through the cap once, runs back to back: a query repeated finds
#         the pages its last run read (the state a dashboard's query is
#         in), which no per-relation residency shows.
# The residency sampler's background passes are off (qdtt.residency_interval
# = 0); each planning session first runs a pass (qdtt_sample_residency()),
# so the QDTT planner sees the state the query runs in, as a server's
# sampler would show it at most an interval late.
# Per tier: calibrate the tier's device (with and without the early stop,
# times recorded), then for each table and selectivity run each forced plan
# (IS, FTS, bitmap heap scan prefetching effective_io_concurrency = 32 pages,
# PIS and PFTS at several degrees) and the plans the stock planner and the
# QDTT planner choose.  A plan slower than the cap (3 x the seq scan, at
# least 10 s) is stopped and recorded as censored; a forced index plan that
# hit the cap is not run again at higher selectivities (it only gets slower).
# The plans of one selectivity run in rounds (one cold run of each per
# round), so the VM's drift reaches all of them alike.  A timed run is
# planned once in its session and executed after 250 ms idle, so on the
# throttle model (HDD_MODEL=throttle) every execution starts with the
# throttle's full 100 ms slice; on the head model the pause changes nothing.
#
# Options: --tiers "ssd hdd"  --states "cold warm half repeat"
#          --tables "1:60000 33:2000000 200:12000000"
#          (k:rows, about 470 MB each)  --ssd_sels "..."  --hdd_sels "..."
#          --calibration_mb 512  --ssd_reps 5 --hdd_reps 1 (cold runs per
#          plan, 3 at least for a plan under a second; the best counts)
#          --warm_reps 3 (runs per plan in the warm and repeat states;
#          the half state takes the cold runs' counts)
#          --full_calibration true (also calibrate without the early stop,
#          for the calibration table; the planner uses the early-stop model)
#          --cost_unit_us auto (qdtt.cost_unit_us for both tiers; auto = the
#          SSD tier's calibrated QDTT(1, 1), so one cost unit is a sequential
#          page on the fast device, where PostgreSQL's CPU cost settings hold;
#          0 = each tier's own QDTT(1, 1))

experiment_main() {
	local tiers="ssd hdd" tables="1:60000 33:2000000 200:12000000" states="cold warm half"
	local ssd_sels="0.001 0.01 0.1 0.5 1 2 5 10 25 50"
	local hdd_sels="0.001 0.003 0.01 0.03 0.1 1 10 50"
	local calibration_mb=512 ssd_reps=5 hdd_reps=1 warm_reps=3 cost_unit_us=auto full_calibration=true
	parse_options qdtt-query31 "$@"

	local pristine
	pristine=$(pristine_cluster "qdtt-$(echo "$tables" | tr ' :' '_x')" load_tk_tables "$tables")

	echo "tier,state,table,rows_per_page,rows,pages,selectivity_pct,variant,plan,workers,ms,censored,reused" >"$RESULT.csv"
	echo "tier,early_stop,file_mb,points_measured,points_defaulted,stopped_at_qd,max_beneficial_qd,prepare_s,measure_s" >"$RESULT-calibration.csv"
	meta settings "shared_buffers 5% of the table, jit off, effective_io_concurrency 32, max_parallel_workers_per_gather 8 (max_worker_processes 16). States ($states): cold = memory cgroup shared_buffers + 128 MB (effective_cache_size the same; the calibration runs with the largest table's settings), every run cold (stop, drop caches, start); warm = no memory cap (effective_cache_size default), table and index read into the OS page cache once with pg_prewarm, runs back to back; half = memory cgroup shared_buffers + half the table + 96 MB for the processes (effective_cache_size shared_buffers + half the table), before every run a cold start, then the index (pg_prewarm) and every other 1 MB of the table (readahead off) read into the OS page cache; repeat = the half state's cap, started cold, index then table read through the cap once, runs back to back. Each session runs a residency pass first (background passes off), plans the query, then executes it with EXPLAIN ANALYZE after 250 ms idle (on the throttle model the execution then gets a fresh 100 ms slice); each plan the best of $ssd_reps cold runs on the SSD tier, $hdd_reps on the HDD tier (3 for a plan whose runs take under a second), $warm_reps warm or repeat runs, the cold counts half-cached; the plans of a selectivity run in interleaved rounds"
	meta query "SELECT max(c1) FROM Tk WHERE c2 BETWEEN 1000001 AND 1000000 + rows * selectivity (c2 a permutation of 1..rows)"

	local tier data
	for tier in $tiers; do
		data=$(tier_copy "$pristine" "$tier" qdtt)
		# The copies hold the same bytes: one tier's sizes serve both.
		((${#TABLE_PAGES[@]})) || read_table_pages "$tier" "$data"
		[ "$tier" = hdd ] && root_write_throttle "$HDD_IOPS"
		calibrate_tier "$tier" "$data" "$calibration_mb"
		if [ "$cost_unit_us" = auto ]; then
			[ "$tier" = ssd ] || die "--cost_unit_us auto needs the ssd tier first (or pass a number)"
			cost_unit_us=$(cat "$RUN_DIR/ssd-qdtt11.txt")
			meta cost_unit "qdtt.cost_unit_us = $cost_unit_us (the SSD tier's calibrated QDTT(1, 1)) on both tiers"
		fi
		local sels=$ssd_sels
		[ "$tier" = hdd ] && sels=$hdd_sels
		local spec state
		for spec in $tables; do
			for state in $states; do
				sweep_table "$tier" "$data" "${spec%%:*}" "${spec##*:}" "$sels" "$state"
			done
		done
		[ "$tier" = hdd ] && root_write_throttle 0
		pg_stop "$data"
		rm -rf "$data"
	done
}

load_tk_tables() {
	local spec
	bench_psql -d postgres -c "CREATE DATABASE qdtt"
	bench_psql -d qdtt -c "CREATE EXTENSION pg_prewarm"
	for spec in $1; do
		tk_load qdtt "t${spec%%:*}" "${spec%%:*}" "${spec##*:}"
	done
}

# read_table_pages TIER DATA: each table's size in pages, into TABLE_PAGES[tK]
# (one server start; the sizes decide shared_buffers and the cap).
declare -gA TABLE_PAGES=()
read_table_pages() {
	local tier=$1 data=$2 spec
	pg_start "$data" "$RUN_DIR/$tier.log" "-c shared_buffers=128MB"
	for spec in $tables; do
		TABLE_PAGES[t${spec%%:*}]=$(bench_psql -d qdtt -At -c "SELECT pg_relation_size('t${spec%%:*}') / 8192")
	done
	pg_stop "$data"
}

# The forced plans, then the two planners' choices.
VARIANTS="IS FTS BHS PIS2 PIS8 PFTS1 PFTS2 stock qdtt"

QDTT_OPTS="-c shared_preload_libraries=qdtt_costing -c qdtt.residency_interval=0 -c jit=off -c max_worker_processes=16 -c max_parallel_workers=16 -c max_parallel_workers_per_gather=8 -c effective_io_concurrency=32"

# calibrate_tier TIER DATA MB: without, then with the early stop (the model
# the planner then uses is the early-stop one, as a DBA would make it).  The
# server runs as it will for the queries (the largest table's shared_buffers
# and memory cgroup): under the cap, parallel sequential streams gain nothing
# (a PFTS with one worker measured 1.4-1.7x a serial scan on t1), while the
# same calibration under a 1 GB cap showed a 30% "gain".
calibrate_tier() {
	local tier=$1 data=$2 mb=$3 pages=0 p
	for p in "${TABLE_PAGES[@]}"; do
		[ "$p" -gt "$pages" ] && pages=$p
	done
	local sb_mb
	sb_mb=$(table_shared_buffers_mb "$pages")
	set_memory_limit "$((sb_mb + 128))M"
	pg_cold_start "$data" "$RUN_DIR/$tier.log" "-c shared_buffers=${sb_mb}MB $QDTT_OPTS"
	bench_psql -d qdtt -c "CREATE EXTENSION IF NOT EXISTS qdtt_costing"
	local modes="false true"
	[ "$full_calibration" = true ] || modes=true
	for early in $modes; do
		log "$tier: qdtt_calibrate(early_stop => $early)"
		bench_psql -d qdtt -At -F, -c "
			SELECT '$tier', $early, $mb, points_measured, points_defaulted, coalesce(stopped_at_queue_depth, 0),
				   max_beneficial_queue_depth, round(prepare_seconds::numeric, 2), round(measure_seconds::numeric, 2)
			FROM qdtt_calibrate('pg_default', $mb, 0.25, $early)" >>"$RESULT-calibration.csv"
	done
	bench_psql -d qdtt -c "SELECT band_pages, queue_depths, cost_us, page_cost, measured FROM qdtt_model" >"$RUN_DIR/$tier-model.txt"
	bench_psql -d qdtt -At -c "SELECT round(cost_us::numeric, 3) FROM qdtt_calibration WHERE band_pages = 1 AND queue_depth = 1" >"$RUN_DIR/$tier-qdtt11.txt"
	cp "$RUN_DIR/$tier-model.txt" "$RESULT-$tier-model.txt"
	pg_stop "$data"
}

# variant_settings VARIANT TABLE: the statements that force each plan (the
# planner is stock for them).  A degree of parallelism is forced with the
# table's parallel_workers, set in the run's transaction and rolled back;
# the CPU cost settings only make the planner prefer the parallel form.
variant_settings() {
	local forced="SET qdtt.enable = off; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET cpu_operator_cost = 10; SET cpu_tuple_cost = 10; SET cpu_index_tuple_cost = 10;"
	case $1 in
	IS) echo "BEGIN; SET qdtt.enable = off; SET enable_bitmapscan = off; SET enable_seqscan = off; SET max_parallel_workers_per_gather = 0;" ;;
	FTS) echo "BEGIN; SET qdtt.enable = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;" ;;
	BHS) echo "BEGIN; SET qdtt.enable = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_seqscan = off; SET max_parallel_workers_per_gather = 0;" ;;
	PIS*) echo "BEGIN; ALTER TABLE $2 SET (parallel_workers = ${1#PIS}); $forced SET enable_bitmapscan = off; SET enable_seqscan = off; SET max_parallel_workers_per_gather = ${1#PIS};" ;;
	PFTS*) echo "BEGIN; ALTER TABLE $2 SET (parallel_workers = ${1#PFTS}); $forced SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = ${1#PFTS};" ;;
	stock) echo "BEGIN; SET qdtt.enable = off;" ;;
	qdtt) echo "BEGIN; SET qdtt.enable = on;" ;;
	esac
}

# The scan of a plan, e.g. "Parallel Index Scan" or "Seq Scan", and its workers.
plan_shape() {
	local scan workers
	scan=$(grep -o -m1 -E '(Parallel )?(Index Only Scan|Index Scan|Bitmap Heap Scan|Seq Scan)' <<<"$1")
	workers=$(grep -o -m1 -E 'Workers (Planned|Launched): [0-9]+' <<<"$1" | grep -o '[0-9]*$')
	echo "${scan:-?}|${workers:-0}"
}

# shared_buffers for a table of PAGES pages: 5% of it, at least 16 MB.
table_shared_buffers_mb() {
	local mb=$(($1 * 8 / 1024 / 20))
	echo $((mb >= 16 ? mb : 16))
}

HALF_HEADROOM_MB=96

# state_server STATE DATA OPTS TAB: the server as STATE runs a plan: for
# cold and half, a cold start before every run (half then reads its half
# of TAB); for warm and repeat, once per table (warm_up then fills the
# cache).
state_server() {
	local state=$1 data=$2 opts=$3 tab=${4:-}
	case $state in
	cold | repeat) pg_cold_start "$data" "$RUN_DIR/$tier.log" "$opts" ;;
	warm) pg_stop "$data"; pg_start "$data" "$RUN_DIR/$tier.log" "$opts" ;;
	half) pg_cold_start "$data" "$RUN_DIR/$tier.log" "$opts"; half_warm_up "$tab" "$data" ;;
	esac
}

# per_run_state STATE: does every run start from its own server start?
per_run_state() {
	[ "$1" = cold ] || [ "$1" = half ]
}

# prewarm_index TAB: read TAB's indexes through the server.
prewarm_index() {
	bench_psql -d qdtt -At -c "SELECT sum(pg_prewarm(indexrelid, 'read')) FROM pg_index WHERE indrelid = '$1'::regclass" >/dev/null
}

# warm_up TAB: read the index, then the table, through the server (and
# its memory cap).
warm_up() {
	prewarm_index "$1"
	bench_psql -d qdtt -At -c "SELECT pg_prewarm('$1', 'read')" >/dev/null
}

# half_warm_up TAB DATA: read the index (pg_prewarm), then the first 1 MB
# of every 2 MB of the table, into the OS page cache, leaving
# shared_buffers empty: half the table cached, spread evenly over it, so a
# range of c2 (a random permutation) finds half its pages cached, as the
# residency sampler counts the table.  The table's reads are made with
# readahead off (POSIX_FADV_RANDOM: the SSD tier's device reads 8 MB ahead,
# which cached 96% of the table when pg_prewarm read the halves), in the
# bench cgroups, so the cap and the HDD throttle apply.
half_warm_up() {
	local tab=$1 data=$2 file
	prewarm_index "$tab"
	file=$data/$(bench_psql -d qdtt -At -c "SELECT pg_relation_filepath('$tab')")
	in_cgroup python3 -c '
import glob, os, sys
base = sys.argv[1]
segments = [base] + sorted(glob.glob(base + ".[0-9]*"), key=lambda p: int(p.rsplit(".", 1)[1]))
for path in segments:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    for off in range(0, os.fstat(fd).st_size, 2 << 20):
        os.pread(fd, 1 << 20, off)
    os.close(fd)
' "$file"
}

sweep_table() {
	local tier=$1 data=$2 k=$3 rows=$4 sels=$5 state=$6
	local tab="t$k" pages sb_mb sel lo hi variant cap_ms reps=$ssd_reps
	[ "$tier" = hdd ] && reps=$hdd_reps
	per_run_state "$state" || reps=$warm_reps
	local -A censored_from=()

	pages=${TABLE_PAGES[$tab]}
	sb_mb=$(table_shared_buffers_mb "$pages")
	# effective_cache_size tells both planners how much the index scans'
	# re-reads will hit: the memory cgroup, not the 4 GB default.
	# The half state's cap leaves the processes (a backend and up to eight
	# workers) HALF_HEADROOM_MB besides the cache.
	local cache_mb
	case $state in
	cold) cache_mb=$((sb_mb + 128)) ;;
	half | repeat) cache_mb=$((sb_mb + pages * 8 / 1024 / 2)) ;;
	warm) cache_mb="" ;;
	esac
	case $state in
	cold) set_memory_limit "${cache_mb}M" ;;
	half | repeat) set_memory_limit "$((cache_mb + HALF_HEADROOM_MB))M" ;;
	warm) set_memory_limit -1 ;;
	esac
	local opts="-c shared_buffers=${sb_mb}MB ${cache_mb:+-c effective_cache_size=${cache_mb}MB} -c qdtt.cost_unit_us=$cost_unit_us $QDTT_OPTS"

	# The cap: 3 x a seq scan in the state, at least 10 s.
	state_server "$state" "$data" "$opts" "$tab"
	per_run_state "$state" || warm_up "$tab"
	local t0 t1
	t0=$(date +%s%N)
	bench_psql -d qdtt -At -c "$(variant_settings FTS "$tab") SELECT max(c1) FROM $tab; ROLLBACK" >/dev/null
	t1=$(date +%s%N)
	cap_ms=$(( (t1 - t0) / 1000000 * 3 ))
	[ "$cap_ms" -ge 10000 ] || cap_ms=10000
	log "$tier $state $tab: $pages pages, shared_buffers ${sb_mb}MB, cache ${cache_mb:-unlimited} MB, cap ${cap_ms} ms"

	for sel in $sels; do
		# c2 is a permutation of 1..rows: a range of rows * sel% values.
		local width
		width=$(awk -v r="$rows" -v s="$sel" 'BEGIN { w = int(r * s / 100 + 0.5); print (w < 1) ? 1 : w }')
		lo=$(( 1 + (rows - width) / 3 ))
		hi=$(( lo + width - 1 ))
		local query="SELECT max(c1) FROM $tab WHERE c2 BETWEEN $lo AND $hi"

		# The plan each variant gets.  Variants that get the same plan share
		# one measurement (plan_id); the stock and QDTT choices are usually
		# one of the forced plans.
		local -A plan_id=() id_of_text=() shape_of=()
		local plan_settings=() id_shape=() best=() cens=() done_=() nplans=0 settings explain id
		# the half state plans in the state its runs start from
		if [ "$state" = half ]; then
			state_server half "$data" "$opts" "$tab"
			log "$tier half $tab $sel%: $(bench_psql -d qdtt -At -c "SELECT qdtt_sample_residency()" \
				-c "SELECT round(100.0 * os_cache_blocks / blocks) FROM qdtt_residency WHERE relation = '$tab'::regclass AND fork = 'main'" | tail -1)% of the table in the page cache"
		fi
		for variant in $VARIANTS; do
			settings=$(variant_settings "$variant" "$tab")
			explain=$(bench_psql -d qdtt -At -c "SELECT qdtt_sample_residency()" -c "$settings EXPLAIN (COSTS OFF) $query; ROLLBACK" | tail -n +2)
			shape_of[$variant]=$(plan_shape "$explain")
			[ -n "${censored_from[$variant]:-}" ] && continue
			if [ -z "${id_of_text[$explain]:-}" ]; then
				id_of_text[$explain]=$nplans
				plan_settings[nplans]=$settings
				id_shape[nplans]=${shape_of[$variant]}
				best[nplans]=""
				cens[nplans]=0
				done_[nplans]=0
				nplans=$((nplans + 1))
			fi
			plan_id[$variant]=${id_of_text[$explain]}
		done

		# Rounds of one cold run of every plan, so that the machine's
		# drift over minutes (a slow spell of the VM's disk) reaches every
		# plan alike instead of whichever ran during it; a plan's time is
		# its best run, as interference only slows a run.  A plan gets
		# $reps runs, and 3 if its best is under a second (on the HDD tier
		# a few of the throttle's 100 ms slices).  The session plans the
		# query first (catalog, statistics and index metapage reads) and
		# idles 250 ms: the HDD throttle then starts a fresh slice with the
		# execution, so how many reads planning took from the current slice
		# no longer decides whether a plan of N random reads waits
		# ceil(N / 20) - 1 slices or one more.  A run stopped at the cap
		# ends the plan's runs (it is censored if it has no completed run).
		local rep active out one
		for ((rep = 0; ; rep++)); do
			active=0
			for ((id = 0; id < nplans; id++)); do
				((done_[id])) && continue
				if ((rep >= reps)) && ! { ((rep < 3)) && awk -v m="${best[id]}" 'BEGIN { exit !(m < 1000) }'; }; then
					done_[id]=1
					continue
				fi
				active=1
				per_run_state "$state" && state_server "$state" "$data" "$opts" "$tab"
				if out=$(bench_psql -d qdtt -At -c "SET statement_timeout = $cap_ms; SELECT qdtt_sample_residency(); ${plan_settings[id]} EXPLAIN (COSTS OFF) $query; SELECT pg_sleep(0.25); EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $query; ROLLBACK" 2>&1); then
					one=$(grep -o 'Execution Time: [0-9.]*' <<<"$out" | grep -o '[0-9.]*$')
					# a planner choice that moved with the cache (repeat state)
					[ "$(plan_shape "$out")" = "${id_shape[id]}" ] ||
						log "$tier $state $tab $sel%: planned ${id_shape[id]}, ran $(plan_shape "$out") (${plan_settings[id]})"
					if [ -z "${best[id]}" ] || awk -v a="$one" -v b="${best[id]}" 'BEGIN { exit !(a < b) }'; then
						best[id]=$one
					fi
				else
					grep -q 'statement timeout' <<<"$out" || die "$tier $tab $sel% (${plan_settings[id]}): $out"
					if [ -z "${best[id]}" ]; then
						best[id]=$cap_ms
						cens[id]=1
					fi
					done_[id]=1
				fi
			done
			((active)) || break
		done

		local -A reported=()
		for variant in $VARIANTS; do
			local shape=${shape_of[$variant]} ms=$cap_ms c=1 reused=0
			if [ -z "${censored_from[$variant]:-}" ]; then
				id=${plan_id[$variant]}
				ms=${best[id]}
				c=${cens[id]}
				[ -n "${reported[$id]:-}" ] && reused=1
				reported[$id]=1
				# A forced index plan stopped at the cap only gets slower.
				if ((c)) && [[ $variant == IS || $variant == BHS || $variant == PIS* ]]; then
					censored_from[$variant]=1
				fi
			fi
			echo "$tier,$state,$tab,$k,$rows,$pages,$sel,$variant,${shape%|*},${shape#*|},$ms,$c,$reused" >>"$RESULT.csv"
			log "$tier $state $tab $sel% $variant: ${shape%|*} (${shape#*|} workers) $ms ms$( ((c)) && echo ' (censored)')"
		done
	done
	pg_stop "$data"
}
