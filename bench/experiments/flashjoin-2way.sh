# bench/experiments/flashjoin-2way.sh
# FlashJoin vs hash joins over heap and over pax: 2-way join, projectivity x result cardinality x work_mem.
#
# The analogue of the FlashJoin paper's 2-way experiment (Figures 7-9) on
# the SSD tier: R (--rows) and S (--rows / 10) share the paper's schema,
# eight int columns and three 32-byte texts (128 bytes of values a row);
# s.id is S's key, and R's foreign keys r.fk100, r.fk10, r.fk1, r.fk01 and
# r.fk001 match a row of S for 100%, 10%, 1%, 0.1% and 0.01% of R's rows (the result
# cardinality; the rest hold -1).  The query projects k columns of each side
# (4%, 28%, 59% or 84% of a row) through count() so that every projected
# value is produced:
#   SELECT count(r.x), ..., count(s.x), ... FROM r JOIN s ON r.fkC = s.id
# run cold (server restarted, caches dropped) as
#   hnsm       heap tables, PostgreSQL's hash join (Seq Scans)
#   hpax       pax tables, hash join over FlashScans of the projected columns
#              (flashscan.flashjoin = off)
#   fj_naive   FlashJoin, naive fetch (flashscan.flashjoin = rewrite)
#   fj_sorted  FlashJoin, sorted fetch (rewrite)
#   fj_auto    pax with default settings (flashscan.flashjoin = cost): the
#              planner's choice
# Three sweeps: projectivity at 1% cardinality; cardinality at 28%
# projectivity (both with --work_mem, two-pass for every variant); work_mem
# at 1% and 28% (the one-pass thresholds).  hash_mem_multiplier = 1, as in
# the paper's "memory per join".  Bytes read come from /proc/diskstats.
#
# Options: --rows 6000000  --memory_mb 256  --work_mem 16MB  --group_blocks 128
#          --work_mems "4MB 16MB 32MB 64MB 128MB"

experiment_main() {
	local rows=6000000 memory_mb=256 work_mem=16MB work_mems="4MB 16MB 32MB 64MB 128MB" group_blocks=128
	parse_options flashjoin-2way "$@"

	local pristine data dev
	pristine=$(pristine_cluster "flashjoin-2way-${rows}-g${group_blocks}" load_join_tables "$rows" "$group_blocks")
	data=$(tier_copy "$pristine" ssd flashjoin)
	dev=$(tier_device ssd)

	echo "sweep,variant,projectivity,cardinality,work_mem,ms,device_read_mb,result_rows,plan,batches,fetch_mode" >"$RESULT.csv"
	meta settings "SSD tier; R ${rows} rows, S $((rows / 10)) rows, 8 int + 3 text(32) columns, in heap and in pax (groups of ${group_blocks} blocks); memory cgroup ${memory_mb} MB; shared_buffers 128MB; hash_mem_multiplier 1; jit off; max_parallel_workers_per_gather 0; every run cold (stop, drop caches, start)"
	meta query "SELECT count(r.c...), count(s.c...) FROM r JOIN s ON r.fk<cardinality> = s.id"

	set_memory_limit "${memory_mb}M"
	local opts="-c shared_buffers=128MB -c jit=off -c max_parallel_workers_per_gather=0 -c hash_mem_multiplier=1 -c shared_preload_libraries=flashscan"
	pg_cold_start "$data" "$RUN_DIR/flashjoin.log" "$opts"
	bench_psql -d joindb -At -c "SELECT 'heap r ' || pg_size_pretty(pg_relation_size('r_heap')) || ', s ' || pg_size_pretty(pg_relation_size('s_heap')) || '; pax r ' || pg_size_pretty(pg_relation_size('r_pax')) || ', s ' || pg_size_pretty(pg_relation_size('s_pax'))" >"$RESULT-sizes.txt"

	local p c w v
	for p in 1 2 3 4; do
		for v in hnsm hpax fj_naive fj_sorted fj_auto; do
			join_run "$data" "$dev" "$opts" projectivity "$v" "$p" 1 "$work_mem"
		done
	done
	# naive fetches at 10% and 100% re-read groups for most rows (hours
	# here): the fallback of fj_auto covers them
	for c in 100 10 01 001; do
		for v in hnsm hpax fj_naive fj_sorted fj_auto; do
			[ "$v" = fj_naive ] && { [ "$c" = 100 ] || [ "$c" = 10 ]; } && continue
			join_run "$data" "$dev" "$opts" cardinality "$v" 2 "$c" "$work_mem"
		done
	done
	for w in $work_mems; do
		for v in hnsm hpax fj_sorted fj_auto; do
			join_run "$data" "$dev" "$opts" work_mem "$v" 2 1 "$w"
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

# R and S: the same schema; pax copies hold the same rows in the same order.
load_join_tables() {
	local n=$1 ns=$(($1 / 10))
	bench_psql -d postgres -c "CREATE DATABASE joindb"
	bench_psql -d joindb -c "CREATE EXTENSION flashscan" -c "
		CREATE TABLE s_heap (id int, a1 int, a2 int, a3 int, a4 int, a5 int, a6 int, a7 int,
							 t1 text, t2 text, t3 text) WITH (autovacuum_enabled = off);
		INSERT INTO s_heap
		SELECT i, i % 1000, i % 77, i * 3, i % 10, i % 5000, i % 3, i % 999,
			   md5(i::text), md5((i + 1)::text), md5((i + 2)::text)
		FROM generate_series(0, $ns - 1) i;
		CREATE TABLE r_heap (fk100 int, fk10 int, fk1 int, fk01 int, fk001 int, a1 int, a2 int, a3 int,
							 t1 text, t2 text, t3 text) WITH (autovacuum_enabled = off);
		INSERT INTO r_heap
		SELECT k, CASE WHEN u < 0.1 THEN k ELSE -1 END, CASE WHEN u < 0.01 THEN k ELSE -1 END,
			   CASE WHEN u < 0.001 THEN k ELSE -1 END, CASE WHEN u < 0.0001 THEN k ELSE -1 END,
			   i % 1000, i % 77, i * 3,
			   md5(i::text), md5((i + 7)::text), md5((i + 9)::text)
		FROM (SELECT i, (random() * ($ns - 1))::int AS k, random() AS u
			  FROM generate_series(1, $n) i) x;
		SET flashscan.group_blocks = $2;
		CREATE TABLE s_pax (LIKE s_heap) USING pax WITH (autovacuum_enabled = off);
		INSERT INTO s_pax SELECT * FROM s_heap;
		CREATE TABLE r_pax (LIKE r_heap) USING pax WITH (autovacuum_enabled = off);
		INSERT INTO r_pax SELECT * FROM r_heap;" \
		-c "VACUUM (FREEZE, ANALYZE) s_heap, r_heap, s_pax, r_pax"
}

# The columns each side projects at projectivity level 1..4 (of 11 columns,
# 128 bytes of values): 4, 36, 76 and 108 bytes.
JOIN_COLS=(x "a1" "a1, t1" "a1, a2, a3, t1, t2" "a1, a2, a3, t1, t2, t3")
JOIN_PCT=(x 3 28 59 84)

join_query() {
	local p=$1 c=$2 rt=$3 st=$4 list="" col
	for col in ${JOIN_COLS[$p]//,/ }; do
		list+="count(r.$col), count(s.$col), "
	done
	echo "SELECT ${list%, } FROM $rt r JOIN $st s ON r.fk$c = s.id"
}

join_run() {
	local data=$1 dev=$2 opts=$3 sweep=$4 variant=$5 p=$6 c=$7 w=$8 rt=r_pax st=s_pax q out d0 d1
	local settings="SET work_mem = '$w';"
	case $variant in
	hnsm) rt=r_heap st=s_heap ;;
	hpax) settings+=" SET flashscan.flashjoin = off;" ;;
	fj_naive) settings+=" SET flashscan.flashjoin = rewrite; SET flashscan.flashjoin_fetch = naive;" ;;
	fj_sorted) settings+=" SET flashscan.flashjoin = rewrite; SET flashscan.flashjoin_fetch = sorted;" ;;
	fj_auto) ;;
	esac
	q=$(join_query "$p" "$c" "$rt" "$st")
	pg_cold_start "$data" "$RUN_DIR/flashjoin.log" "$opts"
	d0=$(diskstats "$dev")
	out=$(bench_psql -d joindb -At -c "$settings EXPLAIN (ANALYZE, FORMAT JSON) $q")
	d1=$(diskstats "$dev")
	/usr/bin/python3 -c '
import json, sys
sweep, variant, p, c, w, d0, d1 = sys.argv[1:8]
plan = json.load(sys.stdin)[0]["Plan"]
def walk(n):
    yield n
    for k in n.get("Plans", []):
        yield from walk(k)
nodes = list(walk(plan))
fetch = [n for n in nodes if n.get("Custom Plan Provider") == "Flash Fetch"]
hashes = [n for n in nodes if n["Node Type"] == "Hash"]
join = [n for n in nodes if n["Node Type"] == "Hash Join"]
rows = join[0]["Actual Rows"] if join else ""
read_mb = (int(d1.split()[2]) - int(d0.split()[2])) / 1048576
print(",".join(str(x) for x in (
    sweep, variant, p, {"01": "0.1", "001": "0.01"}.get(c, c), w, round(plan["Actual Total Time"], 1), round(read_mb, 1), rows,
    "flashjoin" if fetch else "hashjoin", hashes[0].get("Hash Batches", "") if hashes else "",
    fetch[0].get("Fetch Mode", "") if fetch else "")))' \
		"$sweep" "$variant" "${JOIN_PCT[$p]}" "$c" "$w" "$d0" "$d1" <<<"$out" >>"$RESULT.csv"
	log "$sweep: projectivity ${JOIN_PCT[$p]}%, cardinality $c, work_mem $w, $variant: $(tail -1 "$RESULT.csv")"
}
