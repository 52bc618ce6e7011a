#!/usr/bin/env bash
# Run every test of ssdkit against the installed extensions:
#   1. pg_regress over sql/ (schedule: test/schedule) on a scratch cluster
#      made with initdb --data-checksums and all extensions preloaded;
#   2. the TAP suite t/*.pl through prove.
# Servers run as "postgres"; test inputs are copied to a scratch directory
# that user can read, and regression.diffs is copied back on failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
root=$(ssdkit_root)
scratch=$(ssdkit_scratch "$root")/check
port=${SSDKIT_TEST_PORT:-54329}

rm -rf "$scratch" "$root/regression.diffs" "$root/regression.out"
mkdir -p "$scratch/src" "$scratch/regress" "$scratch/tap"
cp -r "$root/sql" "$root/expected" "$root/t" "$root/test/schedule" "$scratch/src/"
chown -R postgres: "$scratch" 2>/dev/null || true

status=0

echo "== pg_regress (sql/) =="
data="$scratch/regress/data"
ssdkit_cluster_init "$data" "$port"
ssdkit_cluster_start "$data"
trap 'ssdkit_cluster_stop "$data"' EXIT
if ! as_pg "$PGXS_DIR/src/test/regress/pg_regress" \
	--bindir="$PGBIN" --host="$scratch/regress" --port="$port" \
	--inputdir="$scratch/src" --outputdir="$scratch/regress" \
	--schedule="$scratch/src/schedule" --dbname=contrib_regression; then
	status=1
	cp "$scratch/regress/regression.diffs" "$root/" 2>/dev/null &&
		echo "pg_regress failed: see $root/regression.diffs" >&2
fi
ssdkit_cluster_stop "$data"
trap - EXIT

echo "== TAP (t/) =="
as_server_user=()
[ "$(id -u)" -eq 0 ] && as_server_user=(runuser -u postgres --)
(
	# In the scratch directory (the server user's), not via as_pg's "/".
	cd "$scratch/tap" &&
	"${as_server_user[@]}" env PATH="$PATH" TESTDIR="$scratch/tap" \
		PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		SSDKIT_ROOT="$root" \
		prove ${PROVE_FLAGS:--v} -I "$PGXS_DIR/src/test/perl" -I "$scratch/src/t" \
		"$scratch"/src/t/*.pl
) || {
	status=1
	echo "TAP failed: logs in $scratch/tap/tmp_check/log" >&2
}

exit $status
