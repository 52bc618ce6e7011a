#!/usr/bin/env bash
# Build the Debian packages (debian/: source package ssdkit, binary package
# postgresql-15-ssdkit), install them with dpkg, and run every extension's
# installcheck (pg_regress and isolation, debian/tests/installcheck) against
# a fresh cluster made with initdb --data-checksums that preloads the
# installed libraries.  As root, after "make deps"; exits non-zero on any
# failure.  Part of scripts/check.sh ("== packages ==").
#
#   scripts/package.sh
#
# The build runs (niced) in a copy of the tree, so the checkout stays clean:
# the tracked files plus the untracked ones git does not ignore, or, outside
# git, the tree without build products.  Everything goes to
# <scratch>/package/ (.scratch/package in the checkout, or lib.sh's
# /var/tmp fallback): build/ holds the .deb, .dsc, .changes and the tree
# built, build.log, lintian.log (when lintian is installed: any error
# fails), test/ the cluster and the test logs.  The package stays installed.
#
# SSDKIT_PKG_TEST_PORT: the test server's port (default 56050; its socket is
# in the scratch directory).  SSDKIT_PKG_JOBS: build jobs (default nproc).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=$(ssdkit_root)
port=${SSDKIT_PKG_TEST_PORT:-56050}
jobs=${SSDKIT_PKG_JOBS:-$(nproc)}
extensions=$SSDKIT_EXTENSIONS

fail() { echo "package.sh: $*" >&2; exit 1; }
# step NAME: print the step and how long the previous one took.
step_start=$SECONDS
step() {
	echo "-- $1 ($((SECONDS - step_start)) s so far)"
}

[ "$(id -u)" -eq 0 ] || fail "run as root (dpkg -i, and the server runs as postgres)"
for tool in dpkg-buildpackage dh pg_buildext; do
	command -v "$tool" >/dev/null || fail "$tool missing: run make deps"
done

# One place for the version: VERSION; debian/changelog must agree.
version=$(cat "$root/VERSION")
deb_version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
upstream=${deb_version#*:}
upstream=${upstream%-*}
[ "$upstream" = "$version" ] ||
	fail "debian/changelog has $deb_version, VERSION has $version: add a debian/changelog entry (dch -v $version)"

scratch=$(ssdkit_scratch "$root")/package
build=$scratch/build
src=$build/ssdkit-$version
rm -rf "$scratch"
mkdir -p "$src"

step "copy the tree to $src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$root" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do if [ -e "$root/$f" ]; then printf '%s\0' "$f"; fi; done |
		tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$root" --exclude=.git --exclude=.scratch --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude=results --exclude=output_iso --exclude=tmp_check \
		--exclude='regression.*' --exclude=isolation.diffs --exclude=bench/.venv \
		--exclude=bench/work --exclude=__pycache__ -cf - . | tar -C "$src" -xf -
fi

step "dpkg-buildpackage -us -uc -j$jobs (log: $build/build.log)"
if ! (cd "$src" && nice -n 10 dpkg-buildpackage -us -uc -j"$jobs") >"$build/build.log" 2>&1; then
	tail -n 40 "$build/build.log" >&2
	fail "the package build failed: see $build/build.log"
fi
arch=$(dpkg --print-architecture)
changes=$build/ssdkit_${deb_version#*:}_${arch}.changes
[ -f "$changes" ] || fail "no $changes after the build"
debs=()
for v in $(cd "$src" && pg_buildext supported-versions); do
	deb=$build/postgresql-${v}-ssdkit_${deb_version#*:}_${arch}.deb
	[ -f "$deb" ] || fail "no $deb after the build"
	debs+=("$deb")
done
ls -l "$build"/*.deb "$build"/*.dsc
for deb in "${debs[@]}"; do
	dpkg-deb -f "$deb" Package Version Depends
done

if command -v lintian >/dev/null; then
	step "lintian (log: $build/lintian.log)"
	# bogus-mail-host: the maintainer address is the placeholder
	# ssdkit@localhost (the project has no public one).
	if ! lintian --fail-on error --suppress-tags bogus-mail-host,bogus-mail-host-in-debian-changelog \
		"$changes" >"$build/lintian.log" 2>&1; then
		cat "$build/lintian.log" >&2
		fail "lintian found errors"
	fi
	cat "$build/lintian.log"
	echo "lintian: $(grep -c '^E:' "$build/lintian.log") errors, $(grep -c '^W:' "$build/lintian.log") warnings"
else
	echo "-- lintian not installed: skipped"
fi

step "dpkg -i ${debs[*]##*/}"
export DEBIAN_FRONTEND=noninteractive
if ! dpkg -i "${debs[@]}" >"$build/dpkg.log" 2>&1; then
	# Dependencies dpkg could not satisfy on its own.
	apt-get install -y -qq -f >>"$build/dpkg.log" 2>&1 || true
fi
for deb in "${debs[@]}"; do
	pkg=$(dpkg-deb -f "$deb" Package)
	state=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$pkg" 2>/dev/null || true)
	if [ "$state" != "ii  ${deb_version#*:}" ]; then
		cat "$build/dpkg.log" >&2
		fail "$pkg is not installed at ${deb_version#*:} ($state)"
	fi
	# Every extension's library, control file and install script.
	v=${pkg#postgresql-}
	v=${v%%-*}
	files=$(dpkg -L "$pkg")
	for e in $extensions; do
		default=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$src/$e/$e.control")
		for f in "/usr/lib/postgresql/$v/lib/$e.so" \
			"/usr/share/postgresql/$v/extension/$e.control" \
			"/usr/share/postgresql/$v/extension/$e--$default.sql"; do
			grep -qxF "$f" <<<"$files" || fail "$pkg does not install $f"
		done
	done
	echo "$pkg: installed; it has each extension's library, control file and install script"
done

step "installcheck against a fresh cluster (debian/tests/installcheck, port $port)"
mkdir -p "$scratch/test"
status=0
AUTOPKGTEST_TMP=$scratch/test SSDKIT_PKG_TEST_PORT=$port "$src/debian/tests/installcheck" || status=1
echo "-- packages: done in $((SECONDS - step_start)) s"
[ $status -eq 0 ] || fail "installcheck failed: logs in $scratch/test"
