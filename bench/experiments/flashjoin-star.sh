# bench/experiments/flashjoin-star.sh
# FlashJoin on star joins of 3 to 6 relations (the paper's Figure 2): heap, pax with FlashScan, FlashJoin.
#
# The FlashJoin paper's star schema (Table 2) scaled by --scale (1.0 = the
# paper's 50M-row fact table; default 0.06): a fact table r0 and dimensions
# r1..r5 of 40%, 28%, 14%, 7% and 4% of its rows, every table with eight
# int columns and three 32-byte texts.  An N-way join uses r0..r(N-1):
# r0's joins with r1..r(N-2) are PK-FK (every fact row matches), its join
# with r(N-1) keeps 10% of the fact rows.  Projectivity about 25% per
# relation (one int and one text of each, through count()).  Every run cold
# (server restarted, caches dropped), hash_mem_multiplier 1:
#   hnsm       heap tables, PostgreSQL's plan
#   hpax       pax tables, hash joins over FlashScans (flashscan.flashjoin = off)
#   flashjoin  pax, flashscan.flashjoin = rewrite
#   default    pax, default settings (flashscan.flashjoin = cost)
#
# Options: --scale 0.06  --memory_mb 256  --work_mem 16MB

experiment_main() {
	local scale=0.06 memory_mb=256 work_mem=16MB
	parse_options flashjoin-star "$@"

	local pristine data dev
	pristine=$(pristine_cluster "flashjoin-star-${scale}" load_star_tables "$scale")
	data=$(tier_copy "$pristine" ssd flashstar)
	dev=$(tier_device ssd)

	echo "ways,variant,ms,device_read_mb,result_rows,plan,temp_mb" >"$RESULT.csv"
	meta settings "SSD tier; star schema at scale ${scale} of the paper's (fact $(/usr/bin/python3 -c "print(int(50e6 * $scale))") rows), heap and pax (default groups); memory cgroup ${memory_mb} MB; shared_buffers 128MB; work_mem ${work_mem}; hash_mem_multiplier 1; jit off; max_parallel_workers_per_gather 0; every run cold"
	meta query "SELECT count(r0.a1), count(r0.t1), ..., count(rK.a1), count(rK.t1) FROM r0 JOIN r1 ON r0.f1 = r1.id ... JOIN r(N-1) ON r0.g(N-1) = r(N-1).id"

	set_memory_limit "${memory_mb}M"
	local opts="-c shared_buffers=128MB -c jit=off -c max_parallel_workers_per_gather=0 -c hash_mem_multiplier=1 -c work_mem=$work_mem -c shared_preload_libraries=flashscan"
	pg_cold_start "$data" "$RUN_DIR/star.log" "$opts"
	bench_psql -d stardb -At -c "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_relation_size(oid)), ', ' ORDER BY relname) FROM pg_class WHERE relname ~ '^r[0-5]_(heap|pax)$'" >"$RESULT-sizes.txt"
	local n v
	for n in 3 4 5 6; do
		for v in hnsm hpax flashjoin default; do
			star_run "$data" "$dev" "$opts" "$n" "$v"
		done
	done
	pg_stop "$data"
	rm -rf "$data"
}

load_star_tables() {
	local scale=$1 n0 i frac ni
	n0=$(/usr/bin/python3 -c "print(int(50e6 * $scale))")
	bench_psql -d postgres -c "CREATE DATABASE stardb"
	bench_psql -d stardb -c "CREATE EXTENSION flashscan"
	local fracs=(x 0.4 0.28 0.14 0.07 0.04)
	for i in 1 2 3 4 5; do
		ni=$(/usr/bin/python3 -c "print(int($n0 * ${fracs[$i]}))")
		bench_psql -d stardb -c "
			CREATE TABLE r${i}_heap (id int, a1 int, a2 int, a3 int, a4 int, a5 int, a6 int, a7 int,
									 t1 text, t2 text, t3 text) WITH (autovacuum_enabled = off);
			INSERT INTO r${i}_heap SELECT g, g % 1000, g % 77, g * 3, g % 10, g % 5000, g % 3, g % 999,
				   md5(g::text), md5((g + $i)::text), md5((g + 2 * $i)::text)
			FROM generate_series(0, $ni - 1) g;
			CREATE TABLE r${i}_pax (LIKE r${i}_heap) USING pax WITH (autovacuum_enabled = off);
			INSERT INTO r${i}_pax SELECT * FROM r${i}_heap;"
	done
	# f_i: a key of r_i (PK-FK); g_i: a key of r_i for 10% of the rows, else -1
	bench_psql -d stardb -c "
		CREATE TABLE r0_heap (f1 int, f2 int, f3 int, f4 int, f5 int, g2 int, g3 int, g4 int, g5 int,
							  a1 int, t1 text, t2 text) WITH (autovacuum_enabled = off);
		INSERT INTO r0_heap
		SELECT (random() * ($n0 * 0.4 - 1))::int, (random() * ($n0 * 0.28 - 1))::int,
			   (random() * ($n0 * 0.14 - 1))::int, (random() * ($n0 * 0.07 - 1))::int,
			   (random() * ($n0 * 0.04 - 1))::int,
			   CASE WHEN random() < 0.1 THEN (random() * ($n0 * 0.28 - 1))::int ELSE -1 END,
			   CASE WHEN random() < 0.1 THEN (random() * ($n0 * 0.14 - 1))::int ELSE -1 END,
			   CASE WHEN random() < 0.1 THEN (random() * ($n0 * 0.07 - 1))::int ELSE -1 END,
			   CASE WHEN random() < 0.1 THEN (random() * ($n0 * 0.04 - 1))::int ELSE -1 END,
			   g % 1000, md5(g::text), md5((g + 1)::text)
		FROM generate_series(1, $n0) g;
		CREATE TABLE r0_pax (LIKE r0_heap) USING pax WITH (autovacuum_enabled = off);
		INSERT INTO r0_pax SELECT * FROM r0_heap;"
	bench_psql -d stardb -c "VACUUM (FREEZE, ANALYZE)"
}

star_query() {
	local n=$1 s=$2 list="count(r0.a1), count(r0.t1)" from="r0$s r0" i
	for ((i = 1; i < n; i++)); do
		list+=", count(r$i.a1), count(r$i.t1)"
		if [ "$i" -eq $((n - 1)) ]; then
			from+=" JOIN r$i$s r$i ON r0.g$i = r$i.id"
		else
			from+=" JOIN r$i$s r$i ON r0.f$i = r$i.id"
		fi
	done
	echo "SELECT $list FROM $from"
}

star_run() {
	local data=$1 dev=$2 opts=$3 n=$4 variant=$5 s=_pax settings="" out d0 d1
	case $variant in
	hnsm) s=_heap ;;
	hpax) settings="SET flashscan.flashjoin = off;" ;;
	flashjoin) settings="SET flashscan.flashjoin = rewrite;" ;;
	default) ;;
	esac
	pg_cold_start "$data" "$RUN_DIR/star.log" "$opts"
	d0=$(diskstats "$dev")
	out=$(bench_psql -d stardb -At -c "$settings EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $(star_query "$n" "$s")")
	d1=$(diskstats "$dev")
	/usr/bin/python3 -c '
import json, sys
n, variant, d0, d1 = sys.argv[1:5]
plan = json.load(sys.stdin)[0]["Plan"]
def walk(x):
    yield x
    for k in x.get("Plans", []):
        yield from walk(k)
nodes = list(walk(plan))
fetch = any(x.get("Custom Plan Provider") == "Flash Fetch" for x in nodes)
joins = [x for x in nodes if x["Node Type"] in ("Hash Join", "Merge Join", "Nested Loop")]
rows = joins[0]["Actual Rows"] if joins else ""
temp = (plan.get("Temp Read Blocks", 0) + plan.get("Temp Written Blocks", 0)) * 8192 / 1048576
read_mb = (int(d1.split()[2]) - int(d0.split()[2])) / 1048576
print(",".join(str(x) for x in (n, variant, round(plan["Actual Total Time"], 1), round(read_mb, 1), rows,
                                "flashjoin" if fetch else "ordinary", round(temp, 1))))' \
		"$n" "$variant" "$d0" "$d1" <<<"$out" >>"$RESULT.csv"
	log "$n-way $variant: $(tail -1 "$RESULT.csv")"
}
