#!/usr/bin/env bash
# Run every test of ssdkit against the installed extensions:
#   1. pg_regress over sql/ (schedule: test/schedule) on a scratch cluster
#      made with initdb --data-checksums and all extensions preloaded;
#   2. pg_isolation_regress over specs/ (schedule: test/isolation_schedule),
#      with wal_level replica, then logical;
#   3. the TAP suite t/*.pl through prove;
#   4. as root, the Debian packages: built, installed, and every extension's
#      installcheck on a fresh cluster (scripts/package.sh).
# Servers run as "postgres"; test inputs are copied to a scratch directory
# that user can read, and regression.diffs is copied back on failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
root=$(ssdkit_root)
scratch=$(ssdkit_scratch "$root")/check
port=${SSDKIT_TEST_PORT:-54329}

rm -rf "$scratch" "$root/regression.diffs" "$root/regression.out" "$root/isolation.diffs"
mkdir -p "$scratch/src" "$scratch/regress" "$scratch/tap"
cp -r "$root/sql" "$root/expected" "$root/specs" "$root/t" "$root/test/schedule" \
	"$root/test/isolation_schedule" "$scratch/src/"
chown -R postgres: "$scratch" 2>/dev/null || true

status=0

# run_regress TOOL SCHEDULE OUTDIR DBNAME DIFFS: a pg_regress-style run on the
# scratch cluster; on failure its regression.diffs is copied to DIFFS.
run_regress() {
	local tool=$1 schedule=$2 outdir=$3 dbname=$4 diffs=$5
	mkdir -p "$outdir" && chown postgres: "$outdir" 2>/dev/null
	if ! as_pg "$tool" --bindir="$PGBIN" --host="$scratch/regress" --port="$port" \
		--inputdir="$scratch/src" --outputdir="$outdir" \
		--schedule="$scratch/src/$schedule" --dbname="$dbname"; then
		status=1
		cp "$outdir/regression.diffs" "$diffs" 2>/dev/null &&
			echo "$(basename "$tool") failed: see $diffs" >&2
	fi
}

data="$scratch/regress/data"
ssdkit_cluster_init "$data" "$port"
ssdkit_cluster_start "$data"
trap 'ssdkit_cluster_stop "$data"' EXIT
echo "== pg_regress (sql/) =="
run_regress "$PGXS_DIR/src/test/regress/pg_regress" schedule \
	"$scratch/regress" contrib_regression "$root/regression.diffs"
echo "== isolation (specs/) =="
run_regress "$PGXS_DIR/src/test/isolation/pg_isolation_regress" isolation_schedule \
	"$scratch/isolation" isolation_regression "$root/isolation.diffs"
# With wal_level = logical pax logs row states, delta appends and groups in
# records of its own (flashscan/pax_decode.c): the same specs once more.
ssdkit_cluster_stop "$data"
echo "wal_level = logical" | as_pg tee -a "$data/postgresql.conf" >/dev/null
ssdkit_cluster_start "$data"
echo "== isolation (specs/, wal_level = logical) =="
run_regress "$PGXS_DIR/src/test/isolation/pg_isolation_regress" isolation_schedule \
	"$scratch/isolation-logical" isolation_logical "$root/isolation.diffs"
ssdkit_cluster_stop "$data"
trap - EXIT

echo "== TAP (t/) =="
# A small HDD tier (throttled loop device, bench/tiers) for the tests that
# calibrate devices; they skip with a message where it cannot be made.  The
# blkio throttle, not the benchmarks' one-head model: the tests assert its
# properties (no gain from queue depth at any band size), which a head with
# an elevator does not have for short bands.
tiers_env=(SSDKIT_BENCH_DIR="$scratch/tiers" HDD_IMAGE_SIZE=1G SSDKIT_CG_NAME=ssdkit_check HDD_MODEL=throttle)
tiers_down() { env "${tiers_env[@]}" "$root/bench/tiers" down >/dev/null 2>&1 || true; }
if [ "$(id -u)" -eq 0 ] && env "${tiers_env[@]}" "$root/bench/tiers" up --no-fio \
	>"$scratch/tiers.log" 2>&1; then
	# The TAP tests (as postgres) move their postmaster into the cgroup.
	chown postgres: /sys/fs/cgroup/blkio/ssdkit_check/cgroup.procs
	export SSDKIT_HDD_DIR="$scratch/tiers/hdd"
	export SSDKIT_HDD_CGROUP=/sys/fs/cgroup/blkio/ssdkit_check
	trap tiers_down EXIT
else
	echo "HDD tier not available (see $scratch/tiers.log); device tests will skip"
fi
as_server_user=()
[ "$(id -u)" -eq 0 ] && as_server_user=(runuser -u postgres --)
(
	# In the scratch directory (the server user's), not via as_pg's "/".
	cd "$scratch/tap" &&
	"${as_server_user[@]}" env PATH="$PATH" TESTDIR="$scratch/tap" \
		PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		SSDKIT_ROOT="$root" SSDKIT_HDD_DIR="${SSDKIT_HDD_DIR:-}" \
		SSDKIT_HDD_CGROUP="${SSDKIT_HDD_CGROUP:-}" \
		prove ${PROVE_FLAGS:--v} -I "$PGXS_DIR/src/test/perl" -I "$scratch/src/t" \
		"$scratch"/src/t/${SSDKIT_TAP_TESTS:-*}.pl
) || {
	status=1
	echo "TAP failed: logs in $scratch/tap/tmp_check/log" >&2
}

tiers_down
trap - EXIT

echo "== packages =="
# The Debian packages (debian/): built, installed with dpkg, and every
# extension's installcheck run on a fresh cluster (scripts/package.sh).
if [ "$(id -u)" -eq 0 ]; then
	"$root/scripts/package.sh" || status=1
else
	echo "skipped: scripts/package.sh needs root (dpkg -i)"
fi
exit $status
