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
 * A parallel FlashScan registers once, in its leader; its workers attach
 * that registration and take groups from it.
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

/* One group of a registration's list, as the registering scan's directory has it. */
typedef struct SharedScanEntry
{
	int			gi;				/* index in that directory */
	bool		done;			/* delivered (or read alone) */
	uint32		nrows;
	uint64		first_rownum;	/* its rows: [first_rownum, + nrows) */
	BlockNumber first_block;	/* with first_rownum, its unit's key */
	SharedScanUnit *unit;		/* the hub's unit for it, once entered */
} SharedScanEntry;

/* The blocks of one column of one group (after the list's entries). */
typedef struct SharedScanColBlocks
{
	BlockNumber first;
	uint32		nblocks;
} SharedScanColBlocks;

#define SHARED_SCAN_LIST_MAGIC	0x50415853	/* "PAXS" */

/*
 * A registration's list and where the scan is in it, read and written
 * under the hub's lock.  A serial scan keeps it in its own memory; a
 * parallel one in a DSM segment of its own that every participant
 * attaches, so that the query's participants claim groups from one
 * registration (each entry goes to one participant).  That segment is not
 * the parallel query's: it outlives the query's, which an error detaches
 * before the registration can be dropped.
 */
typedef struct SharedScanList
{
	uint32		magic;			/* SHARED_SCAN_LIST_MAGIC */
	uint64		generation;		/* unique; its slot's, once entered */
	int			pid;			/* the registrant */
	int			slot;			/* in the hub's scan table, once entered */
	bool		active;			/* entered into the hub */
	bool		refused;		/* the hub was full: its scans read alone */
	bool		gone;			/* unregistered: participants stop taking */
	RelFileNode rnode;
	bool		permanent;		/* BM_PERMANENT for its buffers */
	bool		bulk;			/* read through a ring */
	int			io_depth;		/* reads in flight for its groups */
	uint32		cols;			/* columns it reads (below SHARED_SCAN_MAX_COLS) */
	int			ncols;			/* how many */
	int			window;			/* entries wanted at once */
	int			ngroups;
	int			first;			/* first entry not delivered */
	int			next;			/* first entry not yet in the window */
	int			in_window;		/* entries in the window, not delivered */
	int			remaining;		/* entries not delivered */
	SharedScanEntry entries[FLEXIBLE_ARRAY_MEMBER];
	/* then SharedScanColBlocks[ngroups][ncols]: what the hub needs to enter it */
} SharedScanList;

/*
 * A backend's handle on a registration: the one that made it
 * (the registrant, which drops it) or a parallel participant attached to
 * it.
 */
typedef struct SharedScanReg
{
	SharedScanList *list;
	uint64		generation;		/* list->generation, kept to know it after
								 * the list is gone */
	bool		registrant;
	struct dsm_segment *seg;	/* parallel: the list's segment */
	struct ResourceOwnerData *owner;	/* dropped when an error releases it */
	struct SharedScanReg *next_reg; /* the backend's list of handles */
} SharedScanReg;

extern bool flashscan_shared_scans;
extern int	flashscan_shared_scan_window;

extern void shared_scan_init(void);
extern bool shared_scan_available(Relation rel, const char **why);
extern SharedScanReg *shared_scan_register(Relation rel, PaxDirectory *dir,
										   const int *gis, int ngroups,
										   const bool *cols, int natts, bool bulk,
										   int participants);
extern uint32 shared_scan_handle(SharedScanReg *reg);
extern bool shared_scan_refused(SharedScanReg *reg);
extern SharedScanReg *shared_scan_attach(uint32 handle, uint64 generation);
extern int	shared_scan_next(SharedScanReg *reg, bool *from_stream,
							 uint64 *first_rownum, uint32 *nrows);
extern void shared_scan_unregister(SharedScanReg *reg, uint64 generation);

/* The pusher (shared_scan_pusher.c) */
extern PGDLLEXPORT void shared_scan_pusher_main(Datum arg);

#endif							/* SHARED_SCAN_H */
