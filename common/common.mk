# common/common.mk: included by every ssdkit extension's Makefile.
#
# Compiles the shared modules in common/ into the extension (each extension
# gets its own object files; the symbols are hidden, see ssdkit_uring.h) and
# links liburing.  Set SSDKIT_COMMON_OBJS before including this file to pick
# the shared modules an extension needs.

SSDKIT_COMMON := $(dir $(lastword $(MAKEFILE_LIST)))
SSDKIT_ROOT := $(abspath $(SSDKIT_COMMON)..)
# The one place for the version: VERSION at the top of the tree.
SSDKIT_VERSION := $(shell cat $(SSDKIT_ROOT)/VERSION)

# Tests live at the top level (sql/, expected/, specs/); each extension's
# Makefile names its own in REGRESS and ISOLATION, so that
# "make -C <extension> installcheck" tests that extension against the
# running server (which must preload it, see README.md).
REGRESS_OPTS += --inputdir=$(SSDKIT_ROOT)
ISOLATION_OPTS += --inputdir=$(SSDKIT_ROOT)

vpath ssdkit_%.c $(SSDKIT_COMMON)
OBJS += $(SSDKIT_COMMON_OBJS)

PG_CPPFLAGS += -I$(SSDKIT_COMMON) -DSSDKIT_VERSION=\"$(SSDKIT_VERSION)\"
SHLIB_LINK += -luring

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies (unless PostgreSQL was configured with
# --enable-depend): rebuild every object when a header of the extension or
# of common/ changes, so a changed struct or constant never mixes with stale
# objects.
$(OBJS): $(wildcard *.h) $(wildcard $(SSDKIT_COMMON)*.h) $(SSDKIT_ROOT)/VERSION
