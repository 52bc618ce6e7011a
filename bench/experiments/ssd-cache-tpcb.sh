# bench/experiments/ssd-cache-tpcb.sh
# ssd_cache on the HDD tier: pgbench's TPC-B-like script, write-through TAC, write-back PC, PC2 and LC at 12.5/25/50% of the database, vs no cache and all data on the SSD tier.
#
# The ssd-cache-oltp experiment with pgbench's built-in TPC-B-like script
# (uniform updates of pgbench_accounts, hot tellers and branches, history
# appends) instead of skewed select-only: the second write-heavy
# comparison beside TPC-C.  Every run starts from an empty cache, filled
# before the warm-up by one read of the tables and indexes the script uses,
# small and hot first, pgbench_accounts' heap last (--prefill yes: the
# uniform account updates alone would fill it at the HDD's random-read pace
# in hours); the summary says how full it was when the measurement began.
# Policies as in ssd-cache-tpcc.
#
# Options: as ssd-cache-oltp, with --scale 100 and
# --policies "tac tac+wb tac+wb128 tac+lc" and --prefill yes by default.

. "$BENCH/experiments/ssd-cache-oltp.sh"

OLTP_DB=bench
OLTP_DEFAULT_SCALE=100
OLTP_DEFAULT_POLICIES="tac tac+wb tac+wb128 tac+lc"
OLTP_DEFAULT_PREFILL=yes
OLTP_PREFILL_RELATIONS="pgbench_branches pgbench_tellers pgbench_branches_pkey pgbench_tellers_pkey pgbench_accounts_pkey pgbench_accounts"

oltp_description() {
	echo "pgbench TPC-B-like (built-in script), scale $1,"
}

oltp_workload() {
	local seconds=$1 clients=$2 scale=$3 out=$4 res
	shift 4
	bench_pgbench -n -c "$clients" -j 2 -T "$seconds" "$@" bench >"$out" 2>&1
	res=$(pgbench_result "$out")
	echo "${res%% *} - ${res#* }"
}
