# bench/experiments/pax-sysbench.sh
# sysbench's oltp scripts on the same tables in heap and in pax: transactions per second and table growth.
#
# The measurement of the pax issue ("fast where users actually use it"):
# sysbench's standard scripts (Debian's sysbench 1.0.20, installed when
# missing) over --tables tables of --table_size rows, made by sysbench's own
# prepare in two databases, one with default_table_access_method = pax.
# Default settings (shared_buffers 128MB, smaller than the tables, autovacuum
# on), flashscan preloaded, SSD tier, no memory cap (the tables stay in the
# OS page cache: warm).  For each script and thread count, heap then pax for
# --seconds each.  The read-only scripts run first; then
# oltp_update_non_index, whose table growth is measured (main fork sizes
# after loading, after it, and after a VACUUM); then the other writing
# scripts, in the same order for both.
#
# Options: --tables 1  --table_size 1000000  --threads "1 2"  --seconds 30
#   --reads "oltp_point_select oltp_read_only select_random_ranges select_random_points"
#   --writes "oltp_write_only oltp_read_write oltp_update_index oltp_delete oltp_insert"

experiment_main() {
	local tables=1 table_size=1000000 threads="1 2" seconds=30
	local reads="oltp_point_select oltp_read_only select_random_ranges select_random_points"
	local writes="oltp_write_only oltp_read_write oltp_update_index oltp_delete oltp_insert"
	parse_options pax-sysbench "$@"
	ensure_sysbench

	local pristine data
	pristine=$(pristine_cluster "pax-sysbench-${tables}x${table_size}" load_sysbench "$tables" "$table_size")
	data=$(tier_copy "$pristine" ssd paxsysbench)
	echo "script,threads,am,tps,qps,p95_ms" >"$RESULT.csv"
	echo "state,am,bytes" >"$RESULT-sizes.csv"
	meta settings "SSD tier; sysbench $(sysbench --version | awk '{print $2}'); ${tables} table(s) x ${table_size} rows (sysbench prepare, its k index); default settings (shared_buffers 128MB, autovacuum on), flashscan preloaded; warm (no memory cap); ${seconds} s per script, thread count and access method, heap then pax"
	set_memory_limit -1
	pg_start "$data" "$RUN_DIR/sysbench.log" "-c shared_preload_libraries=flashscan"
	sysbench_sizes loaded "$tables"
	sysbench_scripts "$reads oltp_update_non_index" "$threads" "$tables" "$table_size" "$seconds"
	sysbench_sizes after_update_non_index "$tables"
	bench_psql -d sb_heap -c VACUUM
	bench_psql -d sb_pax -c VACUUM
	sysbench_sizes after_vacuum "$tables"
	sysbench_scripts "$writes" "$threads" "$tables" "$table_size" "$seconds"
	sysbench_sizes end "$tables"
	pg_stop "$data"
	rm -rf "$data"
}

ensure_sysbench() {
	command -v sysbench >/dev/null && return
	log "installing sysbench"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null
}

sysbench_args() {
	echo "--db-driver=pgsql --pgsql-host=$BENCH_DIR --pgsql-port=$BENCH_PORT --pgsql-user=postgres --pgsql-db=sb_$1 --tables=$2 --table-size=$3"
}

load_sysbench() {
	local am
	for am in heap pax; do
		bench_psql -d postgres -c "CREATE DATABASE sb_$am"
		bench_psql -d "sb_$am" -c "CREATE EXTENSION flashscan"
	done
	bench_psql -d postgres -c "ALTER DATABASE sb_pax SET default_table_access_method = pax"
	for am in heap pax; do
		# shellcheck disable=SC2046
		sysbench oltp_read_write $(sysbench_args "$am" "$1" "$2") prepare
		bench_psql -d "sb_$am" -c "VACUUM ANALYZE"
	done
	bench_psql -d sb_pax -At -c "SELECT relname, amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname LIKE 'sbtest%'"
}

# sysbench_scripts "SCRIPTS" "THREADS" TABLES ROWS SECONDS: each script at
# each thread count, heap then pax.
sysbench_scripts() {
	local s t am
	for s in $1; do
		for t in $2; do
			for am in heap pax; do
				sysbench_run "$s" "$t" "$am" "$3" "$4" "$5"
			done
		done
	done
}

# sysbench_run SCRIPT THREADS AM TABLES ROWS SECONDS
sysbench_run() {
	local out="$RUN_DIR/$1-$2-$3.txt"
	log "$1, $2 thread(s), $3"
	# shellcheck disable=SC2046
	sysbench "$1" $(sysbench_args "$3" "$4" "$5") --threads="$2" --time="$6" --report-interval=0 \
		--percentile=95 run >"$out" 2>&1 || { tail -20 "$out" >&2; die "sysbench $1 failed on $3"; }
	echo "$1,$2,$3,$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "$out"),$(sed -n 's/.*queries: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "$out"),$(sed -n 's/.*95th percentile: *\([0-9.]*\).*/\1/p' "$out")" >>"$RESULT.csv"
}

# sysbench_sizes STATE TABLES: the main forks' bytes of the sbtest tables.
sysbench_sizes() {
	local am
	for am in heap pax; do
		echo "$1,$am,$(bench_psql -d "sb_$am" -At -c "SELECT sum(pg_relation_size(c.oid)) FROM pg_class c WHERE relname ~ '^sbtest[0-9]+$' AND relkind = 'r'")" >>"$RESULT-sizes.csv"
	done
}
