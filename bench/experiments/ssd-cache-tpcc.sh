# bench/experiments/ssd-cache-tpcc.sh
# ssd_cache on the HDD tier: the TPC-C-like mix, write-through TAC, write-back PC, PC2 and LC at 12.5/25/50% of the database, vs no cache and all data on the SSD tier.
#
# The ssd-cache-oltp experiment with the TPC-C-like workload instead of
# select-only: bench/workloads/tpcc.  --mix standard (the default) is the
# specification's mix, New-Order 45, Payment 43, Order-Status 4, Delivery 4,
# Stock-Level 4: mostly writes, which only a write-back cache speeds up;
# --mix readheavy is NO 8 / P 8 / OS 40 / D 4 / SL 40.  tpmC counts committed
# New-Orders.  "--scale" is the number of warehouses.  Policies: tac
# (write-through), tac+wb (write-back, PC), tac+wb128 (write-back evicting 128
# pages at a time, PC2), tac+lc (lazy cleaning, LC: the thesis's baseline).
#
# Options: as ssd-cache-oltp, with --scale 4, --mix standard and
# --policies "tac tac+wb tac+wb128 tac+lc" by default.

. "$BENCH/experiments/ssd-cache-oltp.sh"

OLTP_DB=tpcc
OLTP_DEFAULT_SCALE=4
OLTP_DEFAULT_MIX=standard
OLTP_DEFAULT_POLICIES="tac tac+wb tac+wb128 tac+lc"

oltp_pristine() {
	cache_pristine_tpcc "$1"
}

tpcc_weights() {
	case $OLTP_MIX in
	standard) echo "45 43 4 4 4" ;;
	readheavy) echo "8 8 40 4 40" ;;
	*) die "ssd-cache-tpcc: --mix is standard or readheavy, not '$OLTP_MIX'" ;;
	esac
}

oltp_description() {
	local no p os d sl
	read -r no p os d sl <<<"$(tpcc_weights)"
	echo "TPC-C-like, $OLTP_MIX mix NO $no / P $p / OS $os / D $d / SL $sl, $1 warehouses,"
}

oltp_workload() {
	local seconds=$1 clients=$2 w=$3 out=$4 t="$WORKLOADS/tpcc"
	shift 4
	local before after res no p os d sl
	read -r no p os d sl <<<"$(tpcc_weights)"
	before=$(tpcc_new_orders tpcc)
	bench_pgbench -n -D warehouses="$w" --max-tries=10 \
		-f "$t/neworder.sql@$no" -f "$t/payment.sql@$p" -f "$t/orderstatus.sql@$os" \
		-f "$t/delivery.sql@$d" -f "$t/stocklevel.sql@$sl" \
		-c "$clients" -j 2 -T "$seconds" "$@" tpcc >"$out" 2>&1
	after=$(tpcc_new_orders tpcc)
	res=$(pgbench_result "$out")
	echo "${res%% *} $(awk -v n=$((after - before)) -v s="$seconds" 'BEGIN { printf "%.1f", n * 60 / s }') ${res#* }"
}
