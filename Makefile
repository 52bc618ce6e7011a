# ssdkit: top-level Makefile.  Each extension is a PGXS directory of its own;
# this file drives them and the README's two commands.
#
#   make deps      install what a fresh Debian bookworm machine lacks (root)
#   make           build every extension
#   make install   install them into the PostgreSQL 15 found by PG_CONFIG
#                  (builds and installs, nothing more)
#   make installcheck  every test against what is installed
#   make demo      deps + build + install + a scratch cluster and a tour
#                  (KEEP=1 keeps it)
#   make check     deps + build + install + every test (pg_regress,
#                  isolation, TAP)
#   make -C <extension> installcheck   that extension's pg_regress and
#                  isolation tests against the running server
#   make pg-regress-pax  PG15's regression/isolation suites on heap vs pax (root)

PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
EXTENSIONS = ssd_cache qdtt_costing ssd_sort flashscan
TEST_MODULES = test/ssdkit_test

export PG_CONFIG

.PHONY: all deps install install-test demo check installcheck clean pg-regress-pax

all:
	for d in $(EXTENSIONS); do $(MAKE) -C $$d all || exit 1; done

deps:
	scripts/deps.sh

install: all
	for d in $(EXTENSIONS); do $(MAKE) -C $$d install || exit 1; done

install-test: deps
	scripts/build.sh --test

demo: deps
	scripts/build.sh
	scripts/demo.sh

check: install-test
	scripts/check.sh

# Tests only, against what is already installed (plus the test-only module
# the ssdkit_uring test needs).
installcheck:
	$(MAKE) -C test/ssdkit_test install
	scripts/check.sh

# PostgreSQL 15's own regression and isolation suites run on heap, pax and pax
# without FlashScan; summary of the differences (scripts/pg_regress_pax.sh).
pg-regress-pax:
	scripts/pg_regress_pax.sh

clean:
	for d in $(EXTENSIONS) $(TEST_MODULES); do $(MAKE) -C $$d clean; done
	rm -rf .scratch regression.diffs regression.out isolation.diffs
