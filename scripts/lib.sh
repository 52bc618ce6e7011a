# scripts/lib.sh: shared by demo.sh, check.sh and the bench harness.
#
# PostgreSQL refuses to run as root, so servers run as the "postgres" user.
# Their files go to a scratch directory that user can write: .scratch/ in the
# checkout when "postgres" can reach it, otherwise a directory under
# /var/tmp named after the checkout (a clone under /root, mode 700, is not
# reachable by "postgres").

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(cd "$(dirname "$("$PG_CONFIG" --pgxs)")/../.." && pwd)
SSDKIT_EXTENSIONS="ssd_cache qdtt_costing ssd_sort flashscan"
export PATH="$PGBIN:$PATH"

ssdkit_root() {
	cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}

# Run a command as the server user, keeping PATH.  From "/": the caller's
# directory may be one the server user cannot enter (all paths given to
# these commands are absolute).
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		(cd / && runuser -u postgres -- env PATH="$PATH" "$@")
	else
		"$@"
	fi
}

# Print a scratch directory the server user owns, creating it.
ssdkit_scratch() {
	local root=$1 dir
	dir="$root/.scratch"
	mkdir -p "$dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir"
		if ! runuser -u postgres -- test -w "$dir" 2>/dev/null; then
			dir="/var/tmp/ssdkit-$(printf '%s' "$root" | md5sum | cut -c1-12)"
			mkdir -p "$dir"
			chown postgres: "$dir"
		fi
	fi
	echo "$dir"
}

# Configuration every scratch cluster gets: all four extensions preloaded,
# Unix socket only, in the data directory's parent.
ssdkit_cluster_conf() {
	local sockdir=$1 port=$2
	cat <<CONF
shared_preload_libraries = '$(echo $SSDKIT_EXTENSIONS | tr ' ' ',')'
listen_addresses = ''
unix_socket_directories = '$sockdir'
port = $port
max_connections = 40
shared_buffers = 128MB
# the extensions' own background workers (up to five) beside parallel query's 8
max_worker_processes = 13
log_line_prefix = '%m [%p] %b '
log_min_messages = info
CONF
}

# ssdkit_cluster_init DATADIR PORT: initdb with checksums and the shared conf.
ssdkit_cluster_init() {
	local data=$1 port=$2
	as_pg rm -rf "$data"
	as_pg initdb -D "$data" --data-checksums -A trust -U postgres \
		--locale=C.UTF-8 --encoding=UTF8 >/dev/null
	ssdkit_cluster_conf "$(dirname "$data")" "$port" |
		as_pg tee -a "$data/postgresql.conf" >/dev/null
}

ssdkit_cluster_start() {
	local data=$1
	as_pg pg_ctl -D "$data" -l "$data.log" -w -t 60 start >/dev/null ||
		{ cat "$data.log" >&2; return 1; }
}

ssdkit_cluster_stop() {
	local data=$1
	[ -f "$data/postmaster.pid" ] && as_pg pg_ctl -D "$data" -m fast -w stop >/dev/null
	return 0
}
