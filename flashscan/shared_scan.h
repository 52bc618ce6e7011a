/*-------------------------------------------------------------------------
 *
 * shared_scan.h
 *	  Push-based shared scans: concurrent FlashScans of one pax table share
 *	  one stream of reads (Zhu's thesis, digests/004-zhu.md).
 *
 * A FlashScan registers the groups it will read and the columns it needs
 * with the scan hub (shared_scan.c); a sliding window of W groups per scan
 * says which are wanted now.  Requests for the same group merge (the union
 * of the columns).  The pusher (shared_scan_pusher.c, a background worker)
 * reads wanted groups with io_uring at the device's queue depth, pins their
 * blocks in shared_buffers and tells every scan whose window holds them; a
 * scan takes any ready group of its window, in whatever order they arrive.
 *
 * The hub's cache is a set of pinned shared buffers, so a scan reads a
 * pushed group through the buffer manager as it would read it alone:
 * checksums, concurrent writers and ssd_cache work as always, and the hub
 * decides only what is read when and what stays pinned (by the known
 * future references: scans whose window holds the group, IQN, then scans
 * that will still read it, RQN).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARED_SCAN_H
#define SHARED_SCAN_H

#include "storage/block.h"
#include "storage/relfilenode.h"
#include "utils/relcache.h"

#include "pax.h"

/* Columns a unit can carry: later columns a scan reads alone. */
#define SHARED_SCAN_MAX_COLS	32
/* Reads in flight where neither the setting nor a QDTT model says. */
#define SHARED_SCAN_DEFAULT_DEPTH	32
/* Largest window (groups wanted at once per scan). */
#define SHARED_SCAN_MAX_WINDOW	64

typedef struct SharedScanUnit SharedScanUnit;

/* A backend's registration: its group list and where it is in it. */
typedef struct SharedScanReg
{
	int			slot;			/* in the hub's scan table */
	uint64		generation;		/* of that slot, when registered */
	RelFileNode rnode;
	int			ngroups;
	int		   *gis;			/* the directory's group indexes, in list order */
	SharedScanUnit **units;		/* the hub's unit of each */
	bool	   *done;			/* delivered (or read alone) */
	uint32		cols;			/* columns it reads (below SHARED_SCAN_MAX_COLS) */
	int			first;			/* first list entry not delivered */
	int			next;			/* first list entry not yet in the window */
	int			in_window;		/* list entries in the window, not delivered */
	int			remaining;		/* list entries not delivered */
	struct ResourceOwnerData *owner;	/* unregistered when an error releases it */
	/* EXPLAIN ANALYZE */
	uint64		from_stream;	/* groups the pusher read (or had ready) */
	uint64		alone;			/* groups this scan read itself */
	struct SharedScanReg *next_reg; /* the backend's list of registrations */
} SharedScanReg;

extern bool flashscan_shared_scans;
extern int	flashscan_shared_scan_window;

extern void shared_scan_init(void);
extern bool shared_scan_available(Relation rel, const char **why);
extern SharedScanReg *shared_scan_register(Relation rel, PaxDirectory *dir,
										   const int *gis, int ngroups,
										   const bool *cols, int natts, bool bulk);
extern int	shared_scan_next(SharedScanReg *reg, bool *from_stream);
extern void shared_scan_unregister(SharedScanReg *reg, uint64 generation);

/* The pusher (shared_scan_pusher.c) */
extern PGDLLEXPORT void shared_scan_pusher_main(Datum arg);

#endif							/* SHARED_SCAN_H */
