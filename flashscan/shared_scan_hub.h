/*-------------------------------------------------------------------------
 *
 * shared_scan_hub.h
 *	  The scan hub's shared memory, for its two users: the scans
 *	  (shared_scan.c, which owns it) and the pusher (shared_scan_pusher.c).
 *
 * Every field is read and written under the hub's lock.  A unit is removed
 * from the table only by whoever drops its last reference while the pusher
 * has no pin record for it and is not reading it, so the pusher may keep
 * pointers to units it is reading or holds pins for.  A unit being read is
 * never delivered: some registration that has not delivered it holds it,
 * and that registration's end waits for the read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARED_SCAN_HUB_H
#define SHARED_SCAN_HUB_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "lib/ilist.h"
#include "utils/timestamp.h"

#include "shared_scan.h"

/* A group of one relation, as the scan that registered it read the directory. */
typedef struct SharedScanUnitKey
{
	RelFileNode rnode;
	BlockNumber first_block;
	uint64		first_rownum;
} SharedScanUnitKey;

typedef enum SharedScanUnitState
{
	UNIT_IDLE,					/* not being read */
	UNIT_READING,				/* the pusher is reading it */
	UNIT_FAILED					/* the pusher's read failed: scans read alone
								 * until a new window wants it */
} SharedScanUnitState;

/*
 * A group: wanted (in the merged request list) while some window holds it
 * and a column some registration reads is not pinned.
 */
struct SharedScanUnit
{
	SharedScanUnitKey key;		/* hash key: first */
	SharedScanUnitState state;
	bool		permanent;		/* BM_PERMANENT for its buffers */
	bool		bulk;			/* its table is larger than a quarter of
								 * shared_buffers: read through a ring */
	int			io_depth;		/* reads in flight its device serves best */
	int			iqn;			/* windows holding it, not yet delivered */
	int			rqn;			/* registrations still to deliver it (>= iqn) */
	uint32		cols_known;		/* columns whose blocks are below */
	uint32		cols_loaded;	/* columns pinned by the pusher */
	uint16		col_refs[SHARED_SCAN_MAX_COLS]; /* registrations reading each */
	BlockNumber col_first[SHARED_SCAN_MAX_COLS];
	uint32		col_blocks[SHARED_SCAN_MAX_COLS];
	uint32		pinned;			/* blocks the pusher holds pinned */
	int			pin_index;		/* the pusher's record of them, or -1 (then
								 * pinned is 0) */
	TimestampTz wanted_since;	/* when a window first wanted it */
	dlist_node	wanted_node;	/* in the hub's wanted list while iqn > 0 */
	dlist_node	loaded_node;	/* in the hub's loaded list while
								 * cols_loaded != 0 */
	uint64		waiters;		/* bit (slot % 64) of each registration
								 * sleeping until it is published */
};

/* Columns some registration reads that are not pinned. */
static inline uint32
shared_scan_unit_missing(const SharedScanUnit *u)
{
	uint32		m = 0;
	int			att;

	for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
		if (u->col_refs[att] > 0)
			m |= (uint32) 1 << att;
	return m & u->cols_known & ~u->cols_loaded;
}

/* A registration, as others see it (pg_stat view). */
typedef struct SharedScanSlot
{
	bool		in_use;
	uint64		generation;
	int			pid;
	RelFileNode rnode;
	int			ngroups;
	int			io_depth;		/* reads in flight for its groups */
	int			delivered;
	int			from_stream;
	int			alone;
	ConditionVariable cv;		/* its scans sleep here for a unit */
} SharedScanSlot;

typedef struct SharedScanHub
{
	LWLock	   *lock;
	ConditionVariable ready_cv; /* the pusher finished a read or unpinned:
								 * for ends of scans that wait for it */
	int			pusher_pid;		/* 0: no pusher running */
	Latch	   *pusher_latch;
	uint64		completions;	/* units the pusher finished */
	bool		pusher_blocked; /* its last pick stopped for want of room */
	uint64		room_freed;		/* pinned units that left their last window */
	bool		stalled;		/* a scan waited a second for nothing ... */
	uint64		stalled_at;		/* ... while completions stood here */
	uint64		next_generation;
	uint32		pinned_total;	/* blocks pinned by the pusher */
	dlist_head	wanted;			/* units some window holds (iqn > 0): the
								 * pusher looks for its next reads here, not
								 * in the whole table */
	dlist_head	loaded;			/* units with loaded columns (pinned, or
								 * with no block): what scans may take past
								 * their windows */
	int			nslots;
	/* statistics since startup */
	uint64		registrations;
	uint64		refused;		/* hub full: the scan ran alone */
	uint64		units_read;		/* units (or their missing columns) read */
	uint64		blocks_read;	/* blocks the pusher pinned */
	uint64		blocks_preread;	/* of which read ahead with io_uring (not in
								 * shared_buffers then) */
	uint64		deliveries;		/* groups handed to scans from the stream */
	uint64		deliveries_alone;	/* groups scans read themselves */
	uint64		evictions;		/* units unpinned while still referenced */
	SharedScanSlot slots[FLEXIBLE_ARRAY_MEMBER];
} SharedScanHub;

extern SharedScanHub *shared_scan_hub;
extern struct HTAB *shared_scan_units;
extern int	shared_scan_cache_blocks;
extern int	shared_scan_read_gap;

extern uint32 shared_scan_cache_limit(void);
extern void shared_scan_wake_waiters(uint64 waiters);
extern void shared_scan_remove_unit(SharedScanUnit *u);

#endif							/* SHARED_SCAN_HUB_H */
