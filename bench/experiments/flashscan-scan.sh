# bench/experiments/flashscan-scan.sh
# FlashScan vs heap and pax scans: selectivity x columns read on a 16-column table (time, bytes read).
#
# The analogue of the FlashScan paper's scan experiment (Figures 4/5) on the
# SSD tier: a 16-column table (ints, floats, dates, short texts) in heap and
# in pax, the query
#   SELECT count(*), sum(c2), ..., sum(c_k) FROM t WHERE c1 < X
# reading k columns (the predicate column and k-1 projected ones) at a
# given selectivity, run cold (caches dropped, server restarted) as:
#   heap      the heap table's Seq Scan
#   pax_seq   the pax table without FlashScan (flashscan.enable off)
#   flash     FlashScan without selection first
#   flash_opt FlashScan with selection first (FlashScanOpt)
# (the two FlashScan variants with enable_seqscan off, so that FlashScan
# runs even where the planner would pick the plain scan: 16 columns)
# c1 is uniform random, so matches are spread over all groups (the paper's
# unsorted case).  Bytes read come from the device's counters
# (/proc/diskstats) around each query; the needed minipage bytes from
# pax_column_sizes().  Parallel query is off (the paper's scans are serial).
#
# Options: --rows 20000000  --group_blocks 128  --sels "0.0001 0.01 0.1 1"
#          --cols "1 2 4 8 16"  --memory_mb 512

experiment_main() {
	local rows=20000000 group_blocks=128 sels="0.0001 0.01 0.1 1" cols="1 2 4 8 16" memory_mb=512
	parse_options flashscan-scan "$@"

	local pristine data dev
	pristine=$(pristine_cluster "flashscan-${rows}-g${group_blocks}" load_scan_tables "$rows" "$group_blocks")
	data=$(tier_copy "$pristine" ssd flashscan)
	dev=$(tier_device ssd)

	echo "variant,selectivity,columns,ms,device_read_mb,blocks_read,table_blocks,groups_scanned,groups_skipped,needed_mb,plan" >"$RESULT.csv"
	meta settings "SSD tier; ${rows} rows x 16 columns in heap and in pax (group_blocks ${group_blocks}); memory cgroup ${memory_mb} MB; shared_buffers 128MB; jit off; max_parallel_workers_per_gather 0; every run cold (stop, drop caches, start)"
	meta query "SELECT count(*), agg(c2), ..., agg(c_k) FROM t WHERE c1 < selectivity x 2^31 (c1 uniform random; agg = sum for numbers, max for dates and text)"

	set_memory_limit "${memory_mb}M"
	local opts="-c shared_buffers=128MB -c jit=off -c max_parallel_workers_per_gather=0 -c shared_preload_libraries=flashscan"
	pg_cold_start "$data" "$RUN_DIR/flashscan.log" "$opts"
	bench_psql -d scandb -At -F, -c "SELECT column_name, minipage_bytes, blocks FROM pax_column_sizes('scan_pax')" >"$RESULT-columns.csv"
	bench_psql -d scandb -At -c "SELECT 'heap ' || pg_size_pretty(pg_relation_size('scan_heap')) || ', pax ' || pg_size_pretty(pg_relation_size('scan_pax')) || ' in ' || (SELECT count(*) FROM pax_groups('scan_pax')) || ' groups'" >"$RESULT-sizes.txt"

	local s k variant
	for s in $sels; do
		for k in $cols; do
			for variant in heap pax_seq flash flash_opt; do
				scan_run "$data" "$dev" "$opts" "$s" "$k" "$variant"
			done
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

# Aggregate per column type, cheap enough that the scan dominates.
SCAN_AGGS=(x x "sum(c2)" "sum(c3)" "max(c4)" "max(c5)" "sum(c6)" "sum(c7)" "sum(c8)" "max(c9)"
	"max(c10)" "sum(c11)" "sum(c12)" "sum(c13)" "max(c14)" "sum(c15)" "sum(c16)")

# The table: c1 uniform random int (the predicate), then 15 columns of
# mixed types; heap and pax hold the same rows in the same order.
load_scan_tables() {
	bench_psql -d postgres -c "CREATE DATABASE scandb"
	bench_psql -d scandb -c "CREATE EXTENSION flashscan" -c "
		CREATE TABLE scan_heap (c1 int, c2 int, c3 float8, c4 date, c5 text, c6 int, c7 float8, c8 int,
								c9 date, c10 text, c11 int, c12 float8, c13 int, c14 text, c15 int, c16 float8)
		WITH (autovacuum_enabled = off);
		INSERT INTO scan_heap
		SELECT (random() * 2147483647)::int, i, i * 0.5, date '2000-01-01' + i % 9000, 'val' || (i % 100000),
			   i % 1000, i * 1.5, i % 77, date '2010-01-01' + i % 3000, md5(i::text)::varchar(12), i % 13,
			   i * 2.5, i % 500, 'x' || (i % 777), i % 100, i * 0.1
		FROM generate_series(1, $1) i;
		SET flashscan.group_blocks = $2;
		CREATE TABLE scan_pax (LIKE scan_heap) USING pax WITH (autovacuum_enabled = off);
		INSERT INTO scan_pax SELECT * FROM scan_heap;" \
		-c "VACUUM (FREEZE, ANALYZE) scan_heap" -c "VACUUM (FREEZE, ANALYZE) scan_pax"
}

# scan_query SELECTIVITY K TABLE: the query reading K columns.
scan_query() {
	local s=$1 k=$2 tab=$3 i list="count(*)"
	for ((i = 2; i <= k; i++)); do
		list+=", ${SCAN_AGGS[$i]}"
	done
	echo "SELECT $list FROM $tab WHERE c1 < $(/usr/bin/python3 -c "print(int($s * 2147483647))")"
}

scan_run() {
	local data=$1 dev=$2 opts=$3 s=$4 k=$5 variant=$6 tab=scan_pax settings="" q out d0 d1
	case $variant in
	heap) tab=scan_heap ;;
	pax_seq) settings="SET flashscan.enable = off;" ;;
	flash) settings="SET flashscan.selection_first = off; SET enable_seqscan = off;" ;;
	flash_opt) settings="SET enable_seqscan = off;" ;;
	esac
	q=$(scan_query "$s" "$k" "$tab")
	pg_cold_start "$data" "$RUN_DIR/flashscan.log" "$opts"
	d0=$(diskstats "$dev")
	out=$(bench_psql -d scandb -At -c "$settings EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $q")
	d1=$(diskstats "$dev")
	local needed
	needed=$(awk -F, -v k="$k" 'NR <= k { b += $2 } END { printf "%.1f", b / 1048576 }' "$RESULT-columns.csv")
	/usr/bin/python3 -c '
import json, sys
variant, s, k, d0, d1, needed = sys.argv[1:7]
p = json.load(sys.stdin)[0]["Plan"]
total = p["Actual Total Time"]
node = p
while node.get("Custom Plan Provider") != "FlashScan" and node.get("Plans"):
    node = node["Plans"][0]
read_mb = (int(d1.split()[2]) - int(d0.split()[2])) / 1048576
scan = node if node.get("Custom Plan Provider") == "FlashScan" else None
plan = "FlashScan" if scan else node["Node Type"]
print(",".join(str(x) for x in (
    variant, s, k, round(total, 1), round(read_mb, 1),
    scan["Blocks Read"] if scan else "", scan["Table Blocks"] if scan else "",
    scan["Groups Scanned"] if scan else "", scan["Groups Skipped"] if scan else "",
    needed, plan.replace(" ", "_"))))' "$variant" "$s" "$k" "$d0" "$d1" "$needed" <<<"$out" >>"$RESULT.csv"
	log "selectivity $s, $k columns, $variant: $(tail -1 "$RESULT.csv")"
}
