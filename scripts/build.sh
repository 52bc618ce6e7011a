#!/usr/bin/env bash
# Build and install every extension (and, with --test, the test-only module).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$(ssdkit_root)
jobs=$(nproc)
dirs="$SSDKIT_EXTENSIONS"
[ "${1:-}" = "--test" ] && dirs="$dirs test/ssdkit_test"
for d in $dirs; do
	make -s -C "$root/$d" PG_CONFIG="$PG_CONFIG" -j"$jobs"
	make -s -C "$root/$d" PG_CONFIG="$PG_CONFIG" install >/dev/null
done
echo "build: installed $dirs into $("$PG_CONFIG" --pkglibdir)"
