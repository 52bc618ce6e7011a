# common/common.mk: included by every ssdkit extension's Makefile.
#
# Compiles the shared modules in common/ into the extension (each extension
# gets its own object files; the symbols are hidden, see ssdkit_uring.h) and
# links liburing.  Set SSDKIT_COMMON_OBJS before including this file to pick
# the shared modules an extension needs.

SSDKIT_COMMON := $(dir $(lastword $(MAKEFILE_LIST)))
SSDKIT_VERSION := 0.1

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
$(OBJS): $(wildcard *.h) $(wildcard $(SSDKIT_COMMON)*.h)
