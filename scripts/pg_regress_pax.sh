#!/usr/bin/env bash
# pg_regress_pax.sh: run PostgreSQL 15's own regression suite (parallel_schedule),
# isolation suite (isolation_schedule) and the amcheck, pg_visibility and
# pageinspect tests four ways and triage what pax or the SSD cache changes
# compared with heap:
#
#   heap         stock settings + shared_preload_libraries='flashscan'
#   flashscan    + default_table_access_method = pax            (FlashScan on)
#   noflashscan  + default_table_access_method = pax, flashscan.enable = off
#   ssdcache     heap tables, + ssd_cache write-back with a 4MB cache file
#                under shared_buffers = 1MB (results must be heap's exactly)
#
# In every mode the flashscan extension exists in template1 and in the test
# database (pg_regress --load-extension), so the catalogs are the same and the
# only change between modes is the default table access method / FlashScan.
# max_prepared_transactions = 10 in all modes so that prepared_xacts runs.
#
# Usage (as root; servers and pg_regress run as the "postgres" OS user):
#   make pg-regress-pax                      # or: scripts/pg_regress_pax.sh
#   TESTS="create_table toast" scripts/pg_regress_pax.sh    # subset of regress
#   ISOLATION_TESTS="eval-plan-qual" SUITES=isolation scripts/pg_regress_pax.sh
#   MODES="heap flashscan" SUITES=regress scripts/pg_regress_pax.sh
#
# Environment (all optional):
#   PAX_REGRESS_BASE   work dir               (/var/tmp/ssdkit-pg-regress-pax)
#   PAX_REGRESS_SRC    postgresql-15 source cache        ($PAX_REGRESS_BASE/src)
#   PAX_REGRESS_PORT   server port (56010-56030 are ours)               (56010)
#   MODES              subset of "heap flashscan noflashscan ssdcache"
#   SUITES             subset of "regress isolation contrib"
#   CONTRIB_TESTS      contrib tests as <module>/<test> (default: amcheck,
#                      pg_visibility and pageinspect, below)
#   PAX_HANGS          specs left out of both pax modes' isolation runs ("")
#   TESTS              regress tests to run instead of parallel_schedule; the
#                      generated schedule runs SETUP_TESTS first
#   SETUP_TESTS        setup for TESTS               ("test_setup create_index")
#   ISOLATION_TESTS    isolation specs to run instead of isolation_schedule
#   EXCLUDE_<MODE>_<SUITE>, e.g. EXCLUDE_FLASHSCAN_REGRESS="portals": tests
#                      left out of that mode's schedule (appended to the
#                      defaults below, which hold the tests found to hang)
#   HANG_SECS          a test's query active longer than this is recorded as
#                      hung and its backend terminated                    (120)
#   ISOLATION_STEP_TIMEOUT  isolationtester's PGISOLATIONTIMEOUT: a step
#                      waiting longer is cancelled, twice that ends the test (30)
#   TEST_SECS          one test running longer than this is recorded as hung
#                      and its psql / isolationtester killed             (90)
#   RUN_TIMEOUT        hard limit for one pg_regress run, seconds         (1500)
#   RETRIAGE           a run directory: skip the runs, redo its summary (after
#                      editing known_differences.txt)
#   EXTRA_CONF         lines added to every mode's postgresql.conf, e.g.
#                      "wal_level = logical" (pax then logs its own records)
#   KNOWN_DIFFS        known-differences file ("mode test reason"; isolation
#                      specs are named isolation/<spec>)
#                      (test/pg_regress_pax/known_differences.txt)
#
# Output: $PAX_REGRESS_BASE/runs/<timestamp>/ (symlink "latest"), one directory
# per mode and suite with results/, regression.diffs, server.log; diffs/ holds
# the per-test diffs of each pax mode's output against heap's output, and
# summary.txt says per test: same / differs (N lines) [known: reason] /
# crashed / crash-victim / hung / excluded / missing.  Exit status is 1 when a
# test crashed or hung, or differs from heap without an entry in the
# known-differences file ("mode test reason", mode flashscan|noflashscan|both).
set -euo pipefail
# The whole script is one compound command, read before it runs, so that
# editing this file during a run does not derail the run.
{

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/../..
PG_REGRESS=$PGXS_DIR/src/test/regress/pg_regress
PG_ISOLATION_REGRESS=$PGXS_DIR/src/test/isolation/pg_isolation_regress
BASE=${PAX_REGRESS_BASE:-/var/tmp/ssdkit-pg-regress-pax}
SRC_CACHE=${PAX_REGRESS_SRC:-$BASE/src}
PORT=${PAX_REGRESS_PORT:-56010}
MODES=${MODES:-heap flashscan noflashscan ssdcache}
SUITES=${SUITES:-regress isolation contrib}
# contrib suites that look at a table through its access method: amcheck
# (btree checks read the table to verify every index entry; check_heap is
# heap's own), pg_visibility and pageinspect, in their own REGRESS order
CONTRIB_TESTS=${CONTRIB_TESTS:-amcheck/check amcheck/check_btree amcheck/check_heap
	pg_visibility/pg_visibility pageinspect/page pageinspect/btree pageinspect/brin
	pageinspect/gin pageinspect/gist pageinspect/hash pageinspect/checksum}
TESTS=${TESTS:-}
SETUP_TESTS=${SETUP_TESTS:-test_setup create_index}
ISOLATION_TESTS=${ISOLATION_TESTS:-}
HANG_SECS=${HANG_SECS:-120}
ISOLATION_STEP_TIMEOUT=${ISOLATION_STEP_TIMEOUT:-30}
TEST_SECS=${TEST_SECS:-90}
RUN_TIMEOUT=${RUN_TIMEOUT:-1500}
KNOWN_DIFFS=${KNOWN_DIFFS:-$ROOT/test/pg_regress_pax/known_differences.txt}

# Tests that hang in a mode (found by the watchdog below, see
# test/pg_regress_pax/TRIAGE.md); left out of that mode's schedule so that
# the rest of the suite runs.  Add more with EXCLUDE_<MODE>_<SUITE>.
DEFAULT_EXCLUDE_HEAP_REGRESS=""
DEFAULT_EXCLUDE_HEAP_ISOLATION=""
DEFAULT_EXCLUDE_FLASHSCAN_REGRESS=""
# Specs that hung on pax (test/pg_regress_pax/TRIAGE.md, D2 and D3) all
# finish since the run of 20261125-212156; none is left out by default.
PAX_HANGS=${PAX_HANGS-""}
DEFAULT_EXCLUDE_FLASHSCAN_ISOLATION=$PAX_HANGS
DEFAULT_EXCLUDE_NOFLASHSCAN_REGRESS=""
DEFAULT_EXCLUDE_NOFLASHSCAN_ISOLATION=$PAX_HANGS

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 2; }
if [ "$PORT" -lt 56010 ] || [ "$PORT" -gt 56030 ]; then
	echo "PAX_REGRESS_PORT must be within 56010-56030" >&2; exit 2
fi
as_pg() { runuser -u postgres -- "$@"; }
log() { printf '== %s\n' "$*"; }

# ---------------------------------------------------------------- sources
installed_version=$(dpkg-query -W -f '${Version}' postgresql-15 2>/dev/null || true)

fetch_sources() {
	mkdir -p "$SRC_CACHE"
	local dir
	dir=$(find "$SRC_CACHE" -maxdepth 1 -type d -name 'postgresql-15-*' | sort -V | tail -1)
	if [ -n "$dir" ] && [ -f "$dir/src/test/regress/parallel_schedule" ]; then
		SRC_DIR=$dir
		log "postgresql-15 sources: $SRC_DIR (cached)"
		return
	fi
	command -v dpkg-source >/dev/null || {
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev; }
	if ! apt-get source --print-uris postgresql-15 >/dev/null 2>&1; then
		# No deb-src: add them for the suites the deb sources use.
		local list=/etc/apt/sources.list.d/ssdkit-src.list key=/usr/share/keyrings/debian-archive-keyring.gpg
		local opt=""
		[ -f "$key" ] && opt="[signed-by=$key] "
		{
			echo "# added by ssdkit scripts/pg_regress_pax.sh for apt-get source postgresql-15"
			echo "deb-src ${opt}http://deb.debian.org/debian bookworm main"
			echo "deb-src ${opt}http://deb.debian.org/debian bookworm-updates main"
			echo "deb-src ${opt}http://deb.debian.org/debian-security bookworm-security main"
		} >"$list"
		apt-get update -qq
	fi
	local got=""
	(
		cd "$SRC_CACHE"
		if [ -n "$installed_version" ] &&
			apt-get source -q "postgresql-15=$installed_version" >apt-source.log 2>&1; then
			echo "$installed_version" >version
			echo "matching installed server $installed_version" >version-note
		else
			# the newest version whose files the mirror serves (a suite may
			# list a version its pool does not hold)
			ok=""
			for v in $(apt-cache showsrc postgresql-15 | sed -n 's/^Version: //p' | sort -rV | uniq); do
				if apt-get source -q "postgresql-15=$v" >apt-source.log 2>&1; then
					ok=1; break
				fi
			done
			[ -n "$ok" ] || { cat apt-source.log >&2; exit 1; }
			ls postgresql-15_*.dsc | sed 's/^postgresql-15_//; s/\.dsc$//' | sort -V | tail -1 >version
			echo "installed server is $installed_version, its source is not served; using $(cat version) from the archive" >version-note
		fi
	)
	SRC_DIR=$(find "$SRC_CACHE" -maxdepth 1 -type d -name 'postgresql-15-*' | sort -V | tail -1)
	[ -n "$SRC_DIR" ] || { echo "apt-get source postgresql-15 failed" >&2; exit 1; }
	log "postgresql-15 sources: $SRC_DIR (downloaded)"
}
fetch_sources
SRC_VERSION=$(basename "$SRC_DIR" | sed 's/^postgresql-15-//')
log "installed server $installed_version; test suite from source $SRC_VERSION$(
	[ "${installed_version%%-*}" = "$SRC_VERSION" ] && echo ' (matches)' ||
	echo ' (the archive does not serve the installed version; outputs are compared between modes, not with expected/)')"
REGRESS_SRC=$SRC_DIR/src/test/regress
ISOLATION_SRC=$SRC_DIR/src/test/isolation
# the contrib tests' sql/ and expected/ in one input directory (names are unique)
CONTRIB_SRC=$BASE/contrib-$SRC_VERSION
rm -rf "$CONTRIB_SRC"
mkdir -p "$CONTRIB_SRC/sql" "$CONTRIB_SRC/expected"
for t in $CONTRIB_TESTS; do
	cp "$SRC_DIR/contrib/${t%%/*}/sql/${t#*/}.sql" "$CONTRIB_SRC/sql/" ||
		{ echo "no contrib test $t" >&2; exit 2; }
	cp "$SRC_DIR/contrib/${t%%/*}/expected/${t#*/}"*.out "$CONTRIB_SRC/expected/"
done
chmod -R a+rX "$CONTRIB_SRC"

# ---------------------------------------------------------------- C modules
# regress.so (regress.c) and refint.so / autoinc.so (contrib/spi, with
# -DREFINT_VERBOSE as its Makefile builds them for the tests) built with PGXS
# against the installed server; --dlpath points at this directory.
LIBDIR=$BASE/lib-$SRC_VERSION
build_modules() {
	if [ -f "$LIBDIR/regress.so" ] && [ -f "$LIBDIR/refint.so" ] && [ -f "$LIBDIR/autoinc.so" ] &&
		[ "$LIBDIR/regress.so" -nt "$PGBIN/postgres" ]; then
		return
	fi
	mkdir -p "$LIBDIR"
	cp "$REGRESS_SRC/regress.c" "$SRC_DIR/contrib/spi/refint.c" "$SRC_DIR/contrib/spi/autoinc.c" "$LIBDIR/"
	cat >"$LIBDIR/Makefile" <<-EOF
		MODULES = regress refint autoinc
		PG_CPPFLAGS = -DREFINT_VERBOSE
		PG_CONFIG = $PG_CONFIG
		PGXS := \$(shell \$(PG_CONFIG) --pgxs)
		include \$(PGXS)
	EOF
	make -s -C "$LIBDIR" >"$LIBDIR/build.log" 2>&1 || { cat "$LIBDIR/build.log" >&2; exit 1; }
	log "built regress.so refint.so autoinc.so in $LIBDIR"
}
build_modules
[ -x "$PG_ISOLATION_REGRESS" ] && [ -x "$PGXS_DIR/src/test/isolation/isolationtester" ] || {
	echo "pg_isolation_regress/isolationtester not installed under $PGXS_DIR (postgresql-server-dev-15?)" >&2
	exit 1; }

# ---------------------------------------------------------------- run dir
if [ -n "${RETRIAGE:-}" ]; then
	RUN=$(cd "$RETRIAGE" && pwd -P)
	STAMP=$(basename "$RUN")
else
	STAMP=$(date +%Y%m%d-%H%M%S)
	RUN=$BASE/runs/$STAMP
	mkdir -p "$RUN"
	ln -sfn "$RUN" "$BASE/runs/latest"
fi
SOCK=$BASE/sock-$PORT
mkdir -p "$SOCK"
chown postgres: "$BASE/runs" "$RUN" "$SOCK"
chmod 755 "$BASE" "$BASE/runs"
log "run directory $RUN"

# schedule SUITE MODE OUT: write the schedule to run (subset or the full one,
# less the mode's exclusions).
exclusions() { # MODE SUITE
	local m=${1^^} s=${2^^} d e
	d=DEFAULT_EXCLUDE_${m}_${s}
	e=EXCLUDE_${m}_${s}
	echo "${!d:-} ${!e:-}" | xargs -n1 2>/dev/null | sort -u | xargs
}
make_schedule() {
	local suite=$1 mode=$2 out=$3 excl t
	excl=" $(exclusions "$mode" "$suite") "
	if [ "$suite" = regress ] && [ -n "$TESTS" ]; then
		: >"$out"
		for t in $SETUP_TESTS; do
			case " $TESTS " in *" $t "*) ;; *) echo "test: $t" >>"$out" ;; esac
		done
		for t in $TESTS; do
			[ -f "$REGRESS_SRC/sql/$t.sql" ] || { echo "no regress test $t" >&2; exit 2; }
			echo "test: $t" >>"$out"
		done
	elif [ "$suite" = isolation ] && [ -n "$ISOLATION_TESTS" ]; then
		: >"$out"
		for t in $ISOLATION_TESTS; do
			[ -f "$ISOLATION_SRC/specs/$t.spec" ] || { echo "no isolation spec $t" >&2; exit 2; }
			echo "test: $t" >>"$out"
		done
	elif [ "$suite" = contrib ]; then
		for t in $CONTRIB_TESTS; do echo "test: ${t#*/}"; done >"$out"
	elif [ "$suite" = regress ]; then
		cp "$REGRESS_SRC/parallel_schedule" "$out"
	else
		cp "$ISOLATION_SRC/isolation_schedule" "$out"
	fi
	# drop excluded tests from their lines, and lines left empty
	awk -v excl="$excl" '
		/^(test|ignore):/ {
			line = $1; n = 0
			for (i = 2; i <= NF; i++) if (index(excl, " " $i " ") == 0) { line = line " " $i; n++ }
			if (n > 0) print line
			next
		}
		{ print }' "$out" >"$out.tmp" && mv "$out.tmp" "$out"
}

# ---------------------------------------------------------------- cluster
DATA=""
cluster_stop() {
	[ -n "$DATA" ] && [ -f "$DATA/postmaster.pid" ] &&
		as_pg "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
}
trap cluster_stop EXIT
trap 'exit 130' INT TERM

cluster_start() { # MODE DIR
	local mode=$1 dir=$2
	DATA=$dir/data
	as_pg "$PGBIN/initdb" -D "$DATA" --data-checksums -E UTF8 --locale=C -U postgres -A trust \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
	cat >>"$DATA/postgresql.conf" <<-EOF
		# ssdkit pg_regress_pax.sh, mode $mode
		port = $PORT
		listen_addresses = ''
		unix_socket_directories = '$SOCK'
		shared_preload_libraries = 'flashscan'
		max_prepared_transactions = 10
		fsync = off
		log_connections = on
		log_line_prefix = '%m [%p] %a '
		logging_collector = off
	EOF
	[ -n "${EXTRA_CONF:-}" ] && printf '%s\n' "$EXTRA_CONF" >>"$DATA/postgresql.conf"
	case $mode in
	flashscan) echo "default_table_access_method = pax" >>"$DATA/postgresql.conf" ;;
	noflashscan) printf 'default_table_access_method = pax\nflashscan.enable = off\n' >>"$DATA/postgresql.conf" ;;
	ssdcache)
		# heap tables through a write-back SSD cache far smaller than the
		# suite's data, under a pool of 128 buffers: nearly every page the
		# suite reads or writes goes through the cache file, is evicted from
		# it (written back) and read again; results must be heap's exactly.
		cat >>"$DATA/postgresql.conf" <<-EOF
			shared_preload_libraries = 'flashscan,ssd_cache'
			shared_buffers = 1MB
			fsync = on
			# ssd_cache's three workers beside flashscan's one (as in heap
			# mode): parallel queries get the workers they get there
			max_worker_processes = 11
			ssd_cache.path = '$dir/ssd_cache.dat'
			ssd_cache.size = '4MB'
			ssd_cache.mode = write_back
			ssd_cache.policy = clock
			ssd_cache.sequential_detection = none
			ssd_cache.evict_batch = 8
		EOF
		;;
	esac
	# the flashscan.so this server loads (it may be reinstalled during a run)
	local so
	so=$("$PG_CONFIG" --pkglibdir)/flashscan.so
	echo "$(date -r "$so" '+%F %T') $(md5sum <"$so" | cut -c1-12)" >"$dir/flashscan.so.build"
	as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$dir/server.log" -w -t 60 start >/dev/null ||
		{ tail -20 "$dir/server.log" >&2; exit 1; }
	# the AM must exist in every database: template1 (for CREATE DATABASE in
	# tests) here, the test database through --load-extension.
	as_pg "$PGBIN/psql" -X -q -h "$SOCK" -p "$PORT" -d template1 -v ON_ERROR_STOP=1 \
		-c "CREATE EXTENSION IF NOT EXISTS flashscan" -c "SELECT amname FROM pg_am WHERE amname = 'pax'" \
		>"$dir/template1.log" 2>&1 || { cat "$dir/template1.log" >&2; exit 1; }
}

# descendants PID: every process below PID (our own pg_regress tree only)
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# watchdog PID DIR PREFIX: while the run PID lives, (1) record and terminate
# any test backend whose query has been active longer than HANG_SECS, and
# (2) when one test has had connections for longer than TEST_SECS, record it
# as hung and kill its client (psql / isolationtester) below PID, so that the
# schedule goes on with the next test.
watchdog() {
	local pid=$1 dir=$2 prefix=$3 out states="<> 'idle'" cur="" since=0 now t
	# isolation sessions legitimately sit idle in transaction while another
	# waits; isolationtester's own step timeout covers client-side waits
	[ "$prefix" = isolation ] && states="= 'active'"
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		out=$(as_pg "$PGBIN/psql" -X -At -F '|' -h "$SOCK" -p "$PORT" -d postgres -c "
			SELECT split_part(application_name, '/', 2), pid,
			       extract(epoch FROM now() - query_start)::int, state,
			       coalesce(wait_event_type, '') || ':' || coalesce(wait_event, ''),
			       regexp_replace(left(query, 300), '\s+', ' ', 'g'),
			       pg_terminate_backend(pid)
			FROM pg_stat_activity
			WHERE application_name LIKE '$prefix/%' AND state $states
			  AND now() - query_start > make_interval(secs => $HANG_SECS)" 2>/dev/null) || true
		[ -n "$out" ] && echo "$out" >>"$dir/hung.txt"
		# one test at a time in our schedules' long tail: the oldest test name seen
		t=$(as_pg "$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT" -d postgres -c "
			SELECT split_part(application_name, '/', 2) FROM pg_stat_activity
			WHERE application_name LIKE '$prefix/%' ORDER BY backend_start LIMIT 1" 2>/dev/null) || true
		now=$(date +%s)
		if [ "$t" != "$cur" ]; then
			cur=$t since=$now
		elif [ -n "$cur" ] && [ $((now - since)) -gt "$TEST_SECS" ] &&
			true; then
			# only when this test is the only one running (isolation runs one
			# test at a time; regress groups finish together)
			if [ "$(as_pg "$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT" -d postgres -c "
				SELECT count(DISTINCT split_part(application_name, '/', 2)) FROM pg_stat_activity
				WHERE application_name LIKE '$prefix/%'" 2>/dev/null)" = 1 ]; then
				as_pg "$PGBIN/psql" -X -At -F '|' -h "$SOCK" -p "$PORT" -d postgres -c "
					SELECT '$cur', pid, extract(epoch FROM now() - backend_start)::int,
					       'test ran > ${TEST_SECS}s, client killed', state || ' ' ||
					       coalesce(wait_event_type, '') || ':' || coalesce(wait_event, ''),
					       regexp_replace(left(query, 300), '\s+', ' ', 'g')
					FROM pg_stat_activity WHERE application_name LIKE '$prefix/$cur%'" \
					>>"$dir/hung.txt" 2>/dev/null || true
				for c in $(descendants "$pid"); do
					case $(ps -o comm= -p "$c" 2>/dev/null) in
					psql | isolationtester) kill "$c" 2>/dev/null || true ;;
					esac
				done
				cur="" since=$now
			fi
		fi
	done
}

run_suite() { # MODE SUITE
	local mode=$1 suite=$2 dir=$RUN/$mode/$suite tool inputdir prefix t0 rc=0
	mkdir -p "$dir"
	chown postgres: "$RUN/$mode" "$dir"
	make_schedule "$suite" "$mode" "$dir/schedule"
	if [ "$suite" = regress ]; then
		tool=$PG_REGRESS inputdir=$REGRESS_SRC prefix=pg_regress
	elif [ "$suite" = contrib ]; then
		tool=$PG_REGRESS inputdir=$CONTRIB_SRC prefix=pg_regress
	else
		tool=$PG_ISOLATION_REGRESS inputdir=$ISOLATION_SRC prefix=isolation
	fi
	log "$mode/$suite: $(grep -c . "$dir/schedule") schedule lines, excluded: $(exclusions "$mode" "$suite")"
	t0=$(date +%s)
	cluster_start "$mode" "$dir"
	timeout -k 30 "$RUN_TIMEOUT" runuser -u postgres -- env PGISOLATIONTIMEOUT="$ISOLATION_STEP_TIMEOUT" "$tool" \
		--bindir="$PGBIN" --host="$SOCK" --port="$PORT" \
		--inputdir="$inputdir" --outputdir="$dir" --dlpath="$LIBDIR" \
		--schedule="$dir/schedule" --load-extension=flashscan \
		>"$dir/pg_regress.out" 2>&1 &
	local rpid=$!
	watchdog "$rpid" "$dir" "$prefix" &
	local wpid=$!
	wait "$rpid" || rc=$?
	wait "$wpid" 2>/dev/null || true
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "TIMEOUT after ${RUN_TIMEOUT}s" >>"$dir/pg_regress.out"
		as_pg "$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT" -d postgres -c \
			"SELECT application_name, state, wait_event_type, wait_event, left(query, 300)
			 FROM pg_stat_activity WHERE application_name LIKE '$prefix/%'" \
			>"$dir/timeout-activity.txt" 2>&1 || true
	fi
	if [ "$mode" = ssdcache ]; then
		# what went through the cache: the run means little if nothing did
		as_pg "$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT" -d postgres -c "CREATE EXTENSION IF NOT EXISTS ssd_cache" -c \
			"SELECT format('mode %s, problem %s, hits %s, absorbed writes %s, write-backs %s, fresher now %s, errors %s',
			        mode, coalesce(problem, 'none'), hits, absorbed_writes, write_backs, fresher_pages, errors)
			 FROM ssd_cache_stats" >"$dir/ssd_cache_stats.txt" 2>&1 || true
		log "$mode/$suite: ssd_cache: $(tail -1 "$dir/ssd_cache_stats.txt")"
	fi
	cluster_stop
	DATA=""
	echo $(($(date +%s) - t0)) >"$dir/seconds"
	log "$mode/$suite: $(cat "$dir/seconds")s, pg_regress exit $rc: $(grep -E 'tests (passed|failed)|failed \(ignoring' "$dir/pg_regress.out" | head -2 | xargs)"
}

for mode in $MODES; do
	case $mode in heap | flashscan | noflashscan | ssdcache) ;; *) echo "unknown mode $mode" >&2; exit 2 ;; esac
	for suite in $SUITES; do
		case $suite in regress | isolation | contrib) ;; *) echo "unknown suite $suite" >&2; exit 2 ;; esac
		[ -n "${RETRIAGE:-}" ] || run_suite "$mode" "$suite"
	done
done

# ---------------------------------------------------------------- triage
# crashed_tests DIR: tests whose backend died of a signal (PID mapped to the
# test through log_connections' application_name).
crashed_tests() {
	local log=$1/server.log
	[ -f "$log" ] || return 0
	awk '
		/connection authorized:/ {
			if (match($0, /\[[0-9]+\]/)) pid = substr($0, RSTART + 1, RLENGTH - 2)
			if (match($0, /application_name=[^ ]+/)) {
				app = substr($0, RSTART + 17, RLENGTH - 17); split(app, p, "/"); test[pid] = p[2]
			}
		}
		/terminated by signal|was terminated by exception/ {
			if (match($0, /PID [0-9]+/)) { pid = substr($0, RSTART + 4, RLENGTH - 4); print (pid in test ? test[pid] : "?pid" pid) }
		}' "$log" | sort -u
}

known_reason() { # MODE TEST
	[ -f "$KNOWN_DIFFS" ] || return 1
	awk -v m="$1" -v t="$2" '
		/^[[:space:]]*(#|$)/ { next }
		($1 == m || ($1 == "both" && m ~ /flashscan$/)) && $2 == t { $1 = ""; $2 = ""; sub(/^ +/, ""); print; found = 1; exit }
		END { exit !found }' "$KNOWN_DIFFS"
}

SUMMARY=$RUN/summary.txt
status=0
{
	echo "# pg_regress_pax summary, run $STAMP"
	echo "# server $installed_version, suite sources $SRC_VERSION ($(cat "$SRC_CACHE/version-note" 2>/dev/null || echo cached))"
	echo "# each pax mode's results/<test>.out compared with heap's (not with expected/)"
	for mode in $MODES; do
		for suite in $SUITES; do
			d=$RUN/$mode/$suite
			echo "# $mode/$suite: $(cat "$d/seconds")s; flashscan.so of $(cat "$d/flashscan.so.build" 2>/dev/null || echo '?'); pg_regress vs expected/: $(grep -E 'tests (passed|failed)|failed \(ignoring' "$d/pg_regress.out" | head -2 | xargs)"
			if grep -q '^TIMEOUT' "$d/pg_regress.out"; then echo "# $mode/$suite: pg_regress TIMED OUT, see $d/timeout-activity.txt"; fi
		done
	done
} >"$SUMMARY"

declare -A COUNT
if [[ " $MODES " == *" heap "* ]]; then
	for suite in $SUITES; do
		H=$RUN/heap/$suite
		# every test of heap's schedule, in order
		mapfile -t tests < <(awk '/^(test|ignore):/ { for (i = 2; i <= NF; i++) print $i }' "$H/schedule" | awk '!seen[$0]++')
		hcrash=" $(crashed_tests "$H" | xargs) "
		[ "$hcrash" != "  " ] && { echo "heap/$suite: CRASH in heap itself: $hcrash" >>"$SUMMARY"; status=1; }
		for mode in $MODES; do
			[ "$mode" = heap ] && continue
			M=$RUN/$mode/$suite
			mkdir -p "$RUN/diffs/$suite/$mode"
			crashed=" $(crashed_tests "$M" | xargs) "
			hung=" $({ cut -d'|' -f1 "$M/hung.txt" 2>/dev/null || true; } | sort -u | xargs) "
			excl=" $(exclusions "$mode" "$suite") "
			for t in "${tests[@]}"; do
				h=$H/results/$t.out m=$M/results/$t.out st="" fail=0
				if [[ "$hung" == *" $t "* ]]; then
					st="HUNG (watchdog, see hung.txt: $(grep "^$t|" "$M/hung.txt" | head -1 | cut -d'|' -f3-6))"
					k=hung; fail=1
				elif [[ "$excl" == *" $t "* ]]; then
					st="excluded (hangs; see TRIAGE.md)"; k=excluded
				elif [[ "$crashed" == *" $t "* ]]; then
					st="CRASHED (server log: terminated by signal)"; k=crashed; fail=1
				elif [ "$suite" = isolation ] && [ -f "$m" ] && grep -Eq 'timed out after|canceling step' "$m" &&
					! grep -Eq 'timed out after|canceling step' "$h" 2>/dev/null; then
					st="HUNG (isolationtester step waited > ${ISOLATION_STEP_TIMEOUT}s: $(grep -Em1 'timed out after|canceling step' "$m"))"
					k=hung; fail=1
				elif [ -f "$m" ] && grep -q 'server closed the connection unexpectedly' "$m" &&
					! grep -q 'server closed the connection unexpectedly' "$h" 2>/dev/null; then
					if grep -q 'terminating connection because of crash of another server process' "$m"; then
						st="crash-victim (another test crashed the server: $crashed)"; k=crash_victim
					else
						st="CRASHED (server closed the connection unexpectedly)"; k=crashed
					fi
					fail=1
				elif [ ! -f "$m" ]; then
					st="MISSING (no output; run timed out?)"; k=missing; fail=1
				elif [ ! -f "$h" ]; then
					st="no heap output to compare with"; k=missing
				elif diff -q "$h" "$m" >/dev/null; then
					st=same; k=same
				else
					diff -u "$h" "$m" >"$RUN/diffs/$suite/$mode/$t.diff" || true
					n=$(grep -c '^[-+][^-+]' "$RUN/diffs/$suite/$mode/$t.diff" || true)
					kt=$t
					[ "$suite" = regress ] || kt=$suite/$t
					if reason=$(known_reason "$mode" "$kt"); then
						st="differs ($n lines) known: $reason"; k=known
					else
						st="DIFFERS ($n lines) not in known_differences.txt"; k=defect; fail=1
					fi
				fi
				COUNT[$mode/$suite/$k]=$((${COUNT[$mode/$suite/$k]:-0} + 1))
				[ "$fail" -eq 1 ] && status=1
				printf '%-11s %-9s %-40s %s\n' "$mode" "$suite" "$t" "$st" >>"$SUMMARY"
			done
		done
	done
	{
		echo
		echo "# counts: same / differs-known / differs-not-known / crashed / crash-victim / hung / excluded / missing"
		for mode in $MODES; do
			[ "$mode" = heap ] && continue
			for suite in $SUITES; do
				c() { echo "${COUNT[$mode/$suite/$1]:-0}"; }
				echo "# $mode/$suite: $(c same) / $(c known) / $(c defect) / $(c crashed) / $(c crash_victim) / $(c hung) / $(c excluded) / $(c missing)"
			done
		done
		echo "# exit status $status"
	} >>"$SUMMARY"
else
	echo "# heap mode not run: nothing to compare with" >>"$SUMMARY"
fi
chown -R postgres: "$RUN" 2>/dev/null || true
cat "$SUMMARY"
echo "summary: $SUMMARY"
exit $status
}
