# bench/lib/common.sh: storage tiers, cgroups and servers for the benchmarks.
#
# Tiers (DESIGN.md, "Storage tiers"):
#   ssd  a directory on the machine's own disk.
#   hdd  a loop device (direct I/O), ext4, read_ahead_kb 1024, over one of
#        two disk models (HDD_MODEL, fixed when the tier is made):
#        head      (default) bench/hddsim: a FUSE file whose requests, reads
#                  and writes alike, queue for one head: HDD_ACCESS_US per
#                  random access, HDD_MBPS for sequential runs.
#        throttle  a cgroup-v1 blkio throttle of HDD_IOPS read and HDD_IOPS
#                  write IOPS (separate budgets).  cgroup v1 charges buffered
#                  writeback to the root cgroup, so while a server runs on the
#                  hdd tier the same write limit is also set on the root
#                  cgroup for the loop device (nothing else uses it).
# Every server runs inside a memory cgroup sized per experiment, because
# PostgreSQL 15 reads through the OS page cache, which would hide the tiers.
#
# Everything lives under $BENCH_DIR and in two cgroups named ssdkit_bench;
# "bench/tiers down" removes all of it.

. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

BENCH_DIR=${SSDKIT_BENCH_DIR:-/var/tmp/ssdkit-bench}
HDD_IMAGE_SIZE=${HDD_IMAGE_SIZE:-16G}
HDD_MODEL=${HDD_MODEL:-head}
HDD_IOPS=${HDD_IOPS:-200}
HDD_ACCESS_US=${HDD_ACCESS_US:-5000}
HDD_MBPS=${HDD_MBPS:-150}
HDD_RPM=${HDD_RPM:-7200}
HDD_READ_AHEAD_KB=1024
CG_NAME=${SSDKIT_CG_NAME:-ssdkit_bench}
CG_MEM=/sys/fs/cgroup/memory/$CG_NAME
CG_BLKIO=/sys/fs/cgroup/blkio/$CG_NAME
CG_ROOT_BLKIO=/sys/fs/cgroup/blkio
BENCH_PORT=${SSDKIT_BENCH_PORT:-54340}

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

bench_require_root() {
	[ "$(id -u)" -eq 0 ] || die "the storage tiers need root (loop devices, cgroups)"
	[ -d /sys/fs/cgroup/memory ] && [ -d /sys/fs/cgroup/blkio ] ||
		die "cgroup v1 memory and blkio controllers are not mounted under /sys/fs/cgroup"
}

tier_dir() {
	case $1 in
	ssd) echo "$BENCH_DIR/ssd" ;;
	hdd) echo "$BENCH_DIR/hdd" ;;
	*) die "unknown tier '$1' (ssd or hdd)" ;;
	esac
}

# The block device (maj:min) a tier's directory lives on.
tier_device() {
	case $1 in
	hdd) cat "$BENCH_DIR/loopdev" ;;
	ssd) findmnt -n -o SOURCE -T "$BENCH_DIR" ;;
	esac
}

tier_majmin() {
	local dev
	dev=$(tier_device "$1")
	lsblk -n -d -o MAJ:MIN "$dev" | tr -d ' '
}

# Is something mounted at DIR?  (mountpoint(1) stats DIR, which fails on a
# FUSE mount whose process died, and for other users than root.)
is_mounted() {
	awk -v d="$1" '$5 == d { found = 1 } END { exit !found }' /proc/self/mountinfo
}

hddsim_alive() {
	[ -f "$BENCH_DIR/hddsim.pid" ] && kill -0 "$(cat "$BENCH_DIR/hddsim.pid")" 2>/dev/null &&
		[ -f "$BENCH_DIR/hddsim/disk" ]
}

tiers_are_up() {
	[ -f "$BENCH_DIR/loopdev" ] && is_mounted "$BENCH_DIR/hdd" && [ -d "$CG_BLKIO" ] &&
		{ [ "$(hdd_model)" = throttle ] || hddsim_alive; }
}

# The model the hdd tier was made with (a tier made before models existed
# was throttled).
hdd_model() {
	cat "$BENCH_DIR/hdd_model" 2>/dev/null || echo throttle
}

# One line for a run's settings.
hdd_tier_desc() {
	local base="loop device, ext4, direct I/O, read_ahead_kb $HDD_READ_AHEAD_KB"
	if [ "$(hdd_model)" = head ]; then
		echo "$base, one head (bench/hddsim: $(cat "$BENCH_DIR/hddsim.args" 2>/dev/null), reads and writes share it)"
	else
		echo "$base, blkio $HDD_IOPS read + $HDD_IOPS write IOPS"
	fi
}

# Set (or with 0 clear) the root cgroup's write-IOPS limit on the loop device;
# nothing to do for the head model, which throttles itself.
root_write_throttle() {
	local majmin
	[ "$(hdd_model)" = throttle ] || return 0
	majmin=$(tier_majmin hdd)
	echo "$majmin $1" >"$CG_ROOT_BLKIO/blkio.throttle.write_iops_device"
}

# Run a command inside the bench cgroups (memory limit, hdd throttle).
in_cgroup() {
	bash -c 'echo $$ > '"$CG_MEM"'/cgroup.procs; echo $$ > '"$CG_BLKIO"'/cgroup.procs; exec "$@"' in_cgroup "$@"
}

set_memory_limit() {
	# Raising the limit must come first if the new one is below usage.
	echo "$1" >"$CG_MEM/memory.limit_in_bytes"
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo 0 >"$CG_MEM/memory.force_empty" 2>/dev/null || true
}

# pg_start DATADIR LOGFILE ["server options"]: start a server in the bench cgroups.
pg_start() {
	local data=$1 logfile=$2 opts=${3:-}
	if [ -f "$BENCH_DIR/loopdev" ] && [ "$(hdd_model)" = head ] && ! hddsim_alive; then
		die "hddsim is not running: the HDD tier is gone (see $BENCH_DIR/hddsim.log; 'bench/tiers down' and up)"
	fi
	in_cgroup runuser -u postgres -- "$PGBIN/pg_ctl" -D "$data" -l "$logfile" -o "$opts" -w -t 600 start >/dev/null ||
		{ tail -20 "$logfile" >&2; die "server on $data did not start"; }
}

pg_stop() {
	local data=$1
	[ -f "$data/postmaster.pid" ] || return 0
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$data" -m fast -w -t 900 stop >/dev/null
}

# Cold start: stop, flush and drop every cache, start.
pg_cold_start() {
	local data=$1 logfile=$2 opts=${3:-}
	pg_stop "$data"
	drop_caches
	pg_start "$data" "$logfile" "$opts"
}

bench_psql() {
	runuser -u postgres -- "$PGBIN/psql" -X -q -h "$BENCH_DIR" -p "$BENCH_PORT" -v ON_ERROR_STOP=1 "$@"
}

# Server configuration shared by the experiments; extra lines come on stdin.
bench_conf() {
	cat <<CONF
listen_addresses = ''
unix_socket_directories = '$BENCH_DIR'
port = $BENCH_PORT
max_connections = 100
log_checkpoints = on
log_line_prefix = '%m [%p] '
CONF
	cat
}

# "reads writes read_bytes write_bytes" of a block device, from /proc/diskstats.
diskstats() {
	local name
	name=$(basename "$(readlink -f "$1")")
	awk -v d="$name" '$3 == d { printf "%.0f %.0f %.0f %.0f\n", $4, $8, $6 * 512, $10 * 512 }' /proc/diskstats
}

# Stop any bench server whose data directory is under BENCH_DIR.
stop_bench_servers() {
	local pidfile data
	for pidfile in "$BENCH_DIR"/*/*/postmaster.pid "$BENCH_DIR"/*/postmaster.pid; do
		[ -f "$pidfile" ] || continue
		data=$(dirname "$pidfile")
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	done
}

# parse_options EXPERIMENT "$@": each "--name value" sets the caller's local
# variable "name" (dashes become underscores); an option with no such local
# variable, or without a value, is an error.  Callers declare their options
# with their defaults as locals, then call this.
parse_options() {
	local experiment=$1 opt var
	shift
	while [ $# -gt 0 ]; do
		opt=$1
		case $opt in
		--*) ;;
		*) die "$experiment: unexpected argument '$opt'" ;;
		esac
		var=${opt#--}
		var=${var//-/_}
		[[ $var =~ ^[a-z_]+$ ]] && declare -p "$var" >/dev/null 2>&1 ||
			die "$experiment: unknown option $opt"
		[ $# -ge 2 ] || die "$experiment: option $opt needs a value"
		printf -v "$var" '%s' "$2"
		shift 2
	done
}

# tier_copy PRISTINE TIER NAME: a fresh copy of a pristine cluster on a
# tier (so every tier starts from the same bytes); prints its directory.
tier_copy() {
	local data
	data="$(tier_dir "$2")/$3"
	log "$2: copying the pristine cluster"
	rm -rf "$data"
	cp -a "$1" "$data"
	rm -f "$data/.loaded"
	sync
	echo "$data"
}

# pristine_cluster NAME LOADER [ARGS...]: a cluster under the SSD tier that
# the function LOADER fills once (called with ARGS while the server runs
# without a memory limit), checkpointed and stopped; later calls reuse it.
# Experiments copy it to a tier for each run.  Prints its directory.
pristine_cluster() {
	local name=$1 loader=$2 pristine="$BENCH_DIR/ssd/pristine-$1"
	shift 2
	if [ ! -f "$pristine/.loaded" ]; then
		log "loading $name (once)"
		rm -rf "$pristine"
		runuser -u postgres -- "$PGBIN/initdb" -D "$pristine" --data-checksums -A trust -U postgres \
			--locale=C.UTF-8 >/dev/null
		bench_conf </dev/null | runuser -u postgres -- tee -a "$pristine/postgresql.conf" >/dev/null
		set_memory_limit -1
		pg_start "$pristine" "$RUN_DIR/load.log" \
			"-c shared_buffers=1GB -c max_wal_size=2GB -c checkpoint_timeout=1h"
		"$loader" "$@" >&2
		bench_psql -d postgres -c CHECKPOINT
		pg_stop "$pristine"
		touch "$pristine/.loaded"
	fi
	echo "$pristine"
}
