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
ssdkit_cluster_start "$data"
if [ "${KEEP:-0}" != 1 ]; then
	trap 'ssdkit_cluster_stop "$data"' EXIT
fi

# The checkout may be unreadable to the server user: root reads the script.
as_pg psql -X -h "$scratch/demo" -p "$port" -d postgres -v ON_ERROR_STOP=1 -e \
	<"$root/scripts/demo.sql"

if [ "${KEEP:-0}" = 1 ]; then
	echo "demo: cluster left running: psql -h $scratch/demo -p $port -U postgres postgres"
	echo "demo: stop it with: runuser -u postgres -- $PGBIN/pg_ctl -D $data stop"
else
	echo "demo: done; cluster stopped (KEEP=1 leaves it running)"
fi
