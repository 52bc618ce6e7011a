#!/usr/bin/env bash
# Install everything ssdkit needs on Debian bookworm, as root.  Idempotent:
# when every package is present at a matching version it does nothing and
# takes well under a second.
#
# PostgreSQL: the server and the headers must be the same minor release,
# because the extensions are built against the headers and loaded into the
# server.  Debian's security pocket often has a newer minor than the image, so
# when postgresql-server-dev-15 would be newer than the installed server we
# upgrade the server, client and contrib packages together with it.
set -euo pipefail

PACKAGES=(
	postgresql-15 postgresql-client-15 postgresql-contrib postgresql-server-dev-15
	liburing-dev libipc-run-perl fio
	# bench/hddsim, the benchmarks' one-head disk model
	fuse3 libfuse3-dev
	# libpq/libpq-be.h (ssd_cache's connection gate) includes gssapi.h
	libkrb5-dev
	build-essential pkg-config
	python3 python3-matplotlib python3-venv
	util-linux e2fsprogs
	# scripts/package.sh: the Debian packages (debian/) with pg_buildext
	debhelper dpkg-dev postgresql-server-dev-all
)

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${status:0:2}" = "ii" ] || missing+=("$p")
done

server_ver=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
dev_ver=$(dpkg-query -W -f='${Version}' postgresql-server-dev-15 2>/dev/null || true)

if [ ${#missing[@]} -eq 0 ] && [ "$server_ver" = "$dev_ver" ]; then
	echo "deps: all present (PostgreSQL $server_ver)"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages (${missing[*]:-none}) or server $server_ver != headers $dev_ver; run as root to install" >&2
	exit 1
fi
echo "deps: installing: ${missing[*]:-(none)}; server=$server_ver headers=$dev_ver"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Installing the four PostgreSQL packages in one transaction gives them all the
# candidate version, which keeps server and headers in step.
apt-get install -y -qq --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	"${PACKAGES[@]}" >/dev/null

server_ver=$(dpkg-query -W -f='${Version}' postgresql-15)
dev_ver=$(dpkg-query -W -f='${Version}' postgresql-server-dev-15)
if [ "$server_ver" != "$dev_ver" ]; then
	echo "deps: postgresql-15 $server_ver and postgresql-server-dev-15 $dev_ver differ after install" >&2
	exit 1
fi
echo "deps: done (PostgreSQL $server_ver)"
