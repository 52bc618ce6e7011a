# bench/experiments/ssd-cache-tpcc.sh
# ssd_cache on the HDD tier: the TPC-C-like mix at a read-heavy setting, tac and clock at 12.5/25/50% of the database, vs no cache and all data on the SSD tier.
#
# The ssd-cache-oltp experiment with the TPC-C-like workload instead of
# select-only: bench/workloads/tpcc with the weights New-Order 8, Payment 8,
# Order-Status 40, Delivery 4, Stock-Level 40 (the standard mix is 45/43/4/4/4
# and mostly writes, which a write-through cache does not speed up).  tpmC
# counts committed New-Orders.  "--scale" is the number of warehouses.
#
# Options: as ssd-cache-oltp, with --scale 4 by default.

. "$BENCH/experiments/ssd-cache-oltp.sh"

OLTP_DB=tpcc
OLTP_DEFAULT_SCALE=4

oltp_pristine() {
	cache_pristine_tpcc "$1"
}

oltp_description() {
	echo "TPC-C-like, read-heavy weights NO 8 / P 8 / OS 40 / D 4 / SL 40, $1 warehouses,"
}

oltp_workload() {
	local seconds=$1 clients=$2 w=$3 out=$4 t="$WORKLOADS/tpcc"
	shift 4
	local before after res
	before=$(tpcc_new_orders tpcc)
	bench_pgbench -n -D warehouses="$w" --max-tries=10 \
		-f "$t/neworder.sql@8" -f "$t/payment.sql@8" -f "$t/orderstatus.sql@40" \
		-f "$t/delivery.sql@4" -f "$t/stocklevel.sql@40" \
		-c "$clients" -j 2 -T "$seconds" "$@" tpcc >"$out" 2>&1
	after=$(tpcc_new_orders tpcc)
	res=$(pgbench_result "$out")
	echo "${res%% *} $(awk -v n=$((after - before)) -v s="$seconds" 'BEGIN { printf "%.1f", n * 60 / s }') ${res#* }"
}
