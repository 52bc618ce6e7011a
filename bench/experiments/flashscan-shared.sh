# bench/experiments/flashscan-shared.sh
# Shared scans: batches of concurrent analytical queries over TPC-H lineitem, lone FlashScans vs shared scans vs heap with and without synchronize_seqscans.
#
# The thesis's workload (digests/004-zhu.md) scaled to this machine:
# lineitem of TPC-H at --sf in heap and in pax (default groups); each batch
# starts --clients queries at once, each
#   SELECT sum(c_j), sum(c_k) FROM lineitem WHERE c_i >= alpha
# with its columns and alpha drawn at random (seeded: every configuration
# runs the same queries), and waits for all; --batches batches.  Memory:
# shared_buffers is --caches percent of the pax table's size (the thesis's
# cache size; flashscan.shared_scan_cache takes its most, half of it),
# the memory cgroup shared_buffers + --headroom_mb (the backends and a
# little page cache: most reads reach the device; 128 MB for 8 clients).  Each configuration and cache size starts cold (caches
# dropped).  Serial queries (max_parallel_workers_per_gather 0): the
# clients share the cores.
#   heap_sync     heap, synchronize_seqscans on (PostgreSQL's default)
#   heap_nosync   heap, synchronize_seqscans off
#   pax_lone      pax, FlashScan, flashscan.shared_scans off
#   pax_shared    pax, FlashScan, flashscan.shared_scans on, window --window
# Window sweep (pax_shared only, the first cache size): --windows.
# --repeats R runs every configuration R times, the variants interleaved
# (lone, shared, lone, shared, ...), so that a slow minute of the machine
# does not fall on one variant only; ratios are of mean batch times, and the
# report gives each repeat's ratio beside the whole run's.
# Reported: batch time (the slowest query), mean query time, when 10%, 50%
# and 90% of a batch's queries had finished (its completion curve), device
# read requests and bytes (/proc/diskstats of the tier), and that every
# configuration returns the same rows per query.
#
# Options: --sf 1  --tiers "hdd ssd"  --clients 8  --batches 3  --caches "10 50 100"
#          --window 10  --windows "1 5 30"  --seed 42  --headroom_mb (64 + 8 x clients)
#          --read_gap 16 (flashscan.shared_scan_read_gap, blocks)
#          --variants "heap_sync heap_nosync pax_lone pax_shared"  --repeats 1

experiment_main() {
	local sf=1 tiers="hdd ssd" clients=8 batches=3 caches="10 50 100" window=10 windows="1 5 30" seed=42 headroom_mb="" read_gap=16 variants="heap_sync heap_nosync pax_lone pax_shared" repeats=1
	parse_options flashscan-shared "$@"
	# the backends' own memory (a few MB each) comes out of the cgroup too
	[ -n "$headroom_mb" ] || headroom_mb=$((64 + 8 * clients))

	local pristine tier data dev pax_mb cache sb first=1 w r
	pristine=$(pristine_cluster "flashscan-shared-sf$sf" load_shared_lineitem "$sf")
	shared_queries "$seed" "$((clients * batches))" >"$RUN_DIR/queries.sql"
	echo "tier,cache_pct,variant,window,repeat,batch,batch_ms,mean_query_ms,read_requests,read_mb,result_md5,done_p10_ms,done_p50_ms,done_p90_ms" >"$RESULT.csv"
	meta settings "TPC-H SF ${sf} lineitem in heap and in pax (default groups); ${clients} concurrent queries a batch, ${batches} batches, each configuration run ${repeats} time(s) interleaved; SELECT sum(c_j), sum(c_k) FROM lineitem WHERE c_i >= alpha, random columns and alpha (seed ${seed}); shared_buffers = cache% of the pax table, memory cgroup shared_buffers + ${headroom_mb} MB; flashscan.shared_scan_cache = shared_buffers / 2; flashscan.shared_scan_read_gap = ${read_gap} blocks; max_parallel_workers_per_gather 0; jit off; every configuration starts cold"

	for tier in $tiers; do
		data=$(tier_copy "$pristine" "$tier" shared)
		dev=$(tier_device "$tier")
		pax_mb=$(cat "$pristine/.pax_mb")
		first=1
		for cache in $caches; do
			sb=$((pax_mb * cache / 100))
			[ "$sb" -lt 16 ] && sb=16
			set_memory_limit "$((sb + headroom_mb))M"
			local opts="-c shared_buffers=${sb}MB -c flashscan.shared_scan_cache=$((sb / 2))MB -c flashscan.shared_scan_read_gap=$read_gap -c jit=off -c max_parallel_workers_per_gather=0 -c shared_preload_libraries=flashscan -c max_connections=100"
			for ((r = 1; r <= repeats; r++)); do
				for v in $variants; do
					shared_batches "$data" "$dev" "$opts" "$tier" "$cache" "$v" "$window" "$clients" "$batches" "$r"
				done
				if [ "$first" = 1 ]; then
					for w in $windows; do
						shared_batches "$data" "$dev" "$opts" "$tier" "$cache" pax_shared "$w" "$clients" "$batches" "$r"
					done
				fi
			done
			first=0
		done
		pg_stop "$data"
		rm -rf "$data"
	done
}

load_shared_lineitem() {
	local sf=$1 dir="$BENCH_DIR/tpch-sf$1" py
	py=$(bench_venv)
	[ -f "$dir/lineitem.csv" ] || "$py" "$WORKLOADS/tpch/dbgen.py" "$sf" "$dir" >&2
	chmod -R a+rX "$dir"
	bench_psql -d postgres -c "CREATE DATABASE shared"
	bench_psql -d shared -c "CREATE EXTENSION flashscan" \
		-c "$(sed -n '/^CREATE TABLE lineitem/,/;/p' "$WORKLOADS/tpch/schema.sql")" \
		-c "COPY lineitem FROM '$dir/lineitem.csv' (FORMAT csv, DELIMITER '|')" \
		-c "CREATE SCHEMA pax" \
		-c "CREATE TABLE pax.lineitem (LIKE public.lineitem) USING pax" \
		-c "INSERT INTO pax.lineitem SELECT * FROM public.lineitem" \
		-c "VACUUM (FREEZE, ANALYZE)"
	# the cache sizes are shares of this ($pristine: pristine_cluster's)
	bench_psql -d shared -At -c "SELECT pg_relation_size('pax.lineitem') / 1048576" >"$pristine/.pax_mb"
}

# shared_queries SEED N: N queries, one a line, over "lineitem" (the search
# path picks heap or pax).
shared_queries() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]))
# (column, values alpha is drawn from)
preds = [("l_quantity", [str(x) for x in range(1, 51)]),
         ("l_discount", ["0.%02d" % x for x in range(0, 11)]),
         ("l_shipdate", ["date '199%d-%02d-01'" % (y, m) for y in range(2, 9) for m in (1, 4, 7, 10)]),
         ("l_partkey", [str(x * 20000) for x in range(0, 10)]),
         ("l_tax", ["0.0%d" % x for x in range(0, 9)])]
aggs = ["l_extendedprice", "l_quantity", "l_discount", "l_tax", "l_partkey", "l_suppkey",
        "l_orderkey", "l_linenumber", "l_shipdate - l_commitdate", "l_receiptdate - l_shipdate"]
for _ in range(int(sys.argv[2])):
    col, vals = rnd.choice(preds)
    j, k = rnd.sample(aggs, 2)
    print(f"SELECT sum({j}), sum({k}) FROM lineitem WHERE {col} >= {rnd.choice(vals)}")
PY
}

# shared_batches DATA DEV OPTS TIER CACHE VARIANT WINDOW CLIENTS BATCHES REPEAT
shared_batches() {
	local data=$1 dev=$2 opts=$3 tier=$4 cache=$5 v=$6 w=$7 clients=$8 batches=$9 rep=${10}
	local set="SET search_path = pax, public;" b i d0 d1 t0 t1 dir="$RUN_DIR/out-$tier-$cache-$v-$w"
	case $v in
	heap_sync) set="SET search_path = public; SET synchronize_seqscans = on;" ;;
	heap_nosync) set="SET search_path = public; SET synchronize_seqscans = off;" ;;
	pax_lone) set+=" SET flashscan.shared_scans = off;" ;;
	pax_shared) set+=" SET flashscan.shared_scans = on; SET flashscan.shared_scan_window = $w;" ;;
	esac
	mkdir -p "$dir" && chown postgres: "$dir"
	pg_cold_start "$data" "$RUN_DIR/shared.log" "$opts"
	for ((b = 0; b < batches; b++)); do
		d0=$(diskstats "$dev")
		t0=$(date +%s%N)
		for ((i = 0; i < clients; i++)); do
			local q
			q=$(sed -n "$((b * clients + i + 1))p" "$RUN_DIR/queries.sql")
			(
				local s e
				s=$(date +%s%N)
				bench_psql -d shared -At -c "$set" -c "$q" >"$dir/$b-$i.out"
				e=$(date +%s%N)
				echo $(((e - s) / 1000000)) >"$dir/$b-$i.ms"
				echo $(((e - t0) / 1000000)) >"$dir/$b-$i.done"
			) &
		done
		wait
		t1=$(date +%s%N)
		d1=$(diskstats "$dev")
		/usr/bin/python3 - "$dir" "$b" "$clients" "$d0" "$d1" "$(((t1 - t0) / 1000000))" \
			"$tier" "$cache" "$v" "$w" "$rep" <<'PY' >>"$RESULT.csv"
import hashlib, sys
d, b, n, d0, d1, batch_ms, tier, cache, v, w, rep = sys.argv[1:12]
ms = [int(open(f"{d}/{b}-{i}.ms").read()) for i in range(int(n))]
# the completion curve: when the batch's queries finished, from its start
done = sorted(int(open(f"{d}/{b}-{i}.done").read()) for i in range(int(n)))
pct = lambda p: done[min(len(done) - 1, int(p * len(done)))]
h = hashlib.md5("".join(open(f"{d}/{b}-{i}.out").read() for i in range(int(n))).encode()).hexdigest()
r0, r1 = d0.split(), d1.split()
print(",".join(str(x) for x in (tier, cache, v, w, rep, b, batch_ms, round(sum(ms) / len(ms)),
      int(r1[0]) - int(r0[0]), round((int(r1[2]) - int(r0[2])) / 1048576, 1), h,
      pct(0.1), pct(0.5), pct(0.9))))
PY
		log "$tier cache $cache% $v window $w repeat $rep batch $b: $(tail -1 "$RESULT.csv")"
	done
	[ "$v" = pax_shared ] && bench_psql -d shared -At -c "SELECT 'hub: ' || registrations || ' registrations, ' || units_read || ' units read, ' || groups_from_stream || ' groups from the stream, ' || groups_read_alone || ' alone' FROM flashscan_shared_scan_stats()" >>"$RUN_DIR/hub.txt"
	return 0
}
