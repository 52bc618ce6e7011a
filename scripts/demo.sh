#!/usr/bin/env bash
# A scratch cluster with all four extensions loaded, and a scripted tour of
# each.  Stops the cluster at the end unless KEEP=1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$(ssdkit_root)
scratch=$(ssdkit_scratch "$root")
port=${SSDKIT_DEMO_PORT:-54328}
data="$scratch/demo/data"

as_pg mkdir -p "$scratch/demo"
ssdkit_cluster_init "$data" "$port"
# ssd_cache: a 256 MB cache file next to the cluster (on this machine's
# disk, standing in for the SSD), and a small shared_buffers so that reads
# reach the storage manager.
as_pg tee -a "$data/postgresql.conf" >/dev/null <<CONF
ssd_cache.path = '$scratch/demo/ssd_cache.dat'
ssd_cache.size = 256MB
shared_buffers = 16MB
CONF
as_pg rm -f "$scratch/demo/ssd_cache.dat"
ssdkit_cluster_start "$data"
if [ "${KEEP:-0}" != 1 ]; then
	trap 'ssdkit_cluster_stop "$data"' EXIT
fi

demo_psql() {
	# The checkout may be unreadable to the server user: root reads the script.
	as_pg psql -X -h "$scratch/demo" -p "$port" -d postgres -v ON_ERROR_STOP=1 -e <"$1"
}
demo_psql "$root/scripts/demo.sql"

echo
echo "-- restarting the server: the cache's directory is loaded before anything reads a page"
as_pg pg_ctl -D "$data" -m fast -w restart -l "$data.log" >/dev/null
grep "ssd_cache: preparation phase" "$data.log" | tail -1
demo_psql "$root/scripts/demo-after-restart.sql"

if [ "${KEEP:-0}" = 1 ]; then
	echo "demo: cluster left running: psql -h $scratch/demo -p $port -U postgres postgres"
	echo "demo: stop it with: runuser -u postgres -- $PGBIN/pg_ctl -D $data stop"
else
	echo "demo: done; cluster stopped (KEEP=1 leaves it running)"
fi
