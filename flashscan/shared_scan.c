/*-------------------------------------------------------------------------
 *
 * shared_scan.c
 *	  The scan hub: registration of FlashScans, their windows, the merged
 *	  requests, and delivery of ready groups (shared_scan.h says what the
 *	  design is; the pusher that reads is shared_scan_pusher.c).
 *
 * A registration lists the groups a scan will read.  Each group is a unit
 * in the hub's table; rqn counts the registrations still to read it, iqn
 * those whose window (the next W undelivered groups of the list) holds it.
 * A unit in some window whose columns are not all pinned is wanted: that
 * is the merged request list the pusher serves.  A scan takes a unit whose
 * columns are pinned, in its window or past it (catch_up()), the one the
 * fewest registrations still read; delivering one slides the window.
 *
 * A scan reads a group alone (through the buffer manager, as without the
 * hub) when the pusher failed on it, when no pusher runs, and when for a
 * second while a scan waited the pusher finished nothing and no pinned
 * group left the last window that held it, or after ten seconds of
 * waiting whatever moved (a scan that
 * stops consuming, such as a cursor left open, holds its window's units
 * pinned; the others must not wait for it forever: the starvation bound
 * the thesis lacks).  That stall holds for every scan until the pusher
 * finishes something.
 *
 * Unregistration (end of scan, rescan, backend exit, and an error that
 * releases the resource owner the registration was made under) drops
 * every reference the registration holds.  It waits until the pusher is
 * not reading any of its units, and has unpinned those no scan holds any
 * more: a read that outlived the scan's lock on the relation could load a
 * block of a relation being dropped after DROP had cleared its buffers,
 * and a pin that outlived it would make DROP spin until the unpin.  A unit
 * being read is never delivered, so some registration that will wait for
 * the read always holds it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "access/htup_details.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "shared_scan_hub.h"
#include "ssdkit_qdtt.h"

bool		flashscan_shared_scans = false;
int			flashscan_shared_scan_window = 10;
int			shared_scan_cache_blocks = 4096;
int			shared_scan_io_depth = 0;
int			shared_scan_read_gap = 16;
static int	shared_scan_slots = 64;
static int	shared_scan_max_units = 16384;

SharedScanHub *shared_scan_hub = NULL;
HTAB	   *shared_scan_units = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool hub_requested = false;

/* This backend's registrations, for the abort and exit paths. */
static SharedScanReg *my_regs = NULL;
static bool callbacks_registered = false;

/* A scan waiting this long with no batch finished reads a group alone. */
#define SHARED_SCAN_STALL_MS	1000
/* ... and does, whatever moves meanwhile, after this many times as long */
#define SHARED_SCAN_MAX_WAITS	10

PG_FUNCTION_INFO_V1(flashscan_shared_scan_stats);
PG_FUNCTION_INFO_V1(flashscan_shared_scan_registrations);

static Size
hub_size(void)
{
	return add_size(offsetof(SharedScanHub, slots),
					mul_size(sizeof(SharedScanSlot), shared_scan_slots));
}

static void
shared_scan_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(hub_size(),
									hash_estimate_size(shared_scan_max_units,
													   sizeof(SharedScanUnit))));
	RequestNamedLWLockTranche("flashscan_shared_scans", 1);
}

static void
shared_scan_shmem_startup(void)
{
	bool		found;
	int			i;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared_scan_hub = ShmemInitStruct("flashscan shared scan hub", hub_size(), &found);
	if (!found)
	{
		memset(shared_scan_hub, 0, hub_size());
		shared_scan_hub->lock = &(GetNamedLWLockTranche("flashscan_shared_scans"))->lock;
		ConditionVariableInit(&shared_scan_hub->ready_cv);
		shared_scan_hub->nslots = shared_scan_slots;
		shared_scan_hub->next_generation = 1;
		dlist_init(&shared_scan_hub->wanted);
		dlist_init(&shared_scan_hub->loaded);
		for (i = 0; i < shared_scan_slots; i++)
			ConditionVariableInit(&shared_scan_hub->slots[i].cv);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SharedScanUnitKey);
	info.entrysize = sizeof(SharedScanUnit);
	shared_scan_units = ShmemInitHash("flashscan shared scan units",
									  shared_scan_max_units, shared_scan_max_units,
									  &info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	LWLockRelease(AddinShmemInitLock);
}

static void
register_pusher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "flashscan", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "shared_scan_pusher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "flashscan shared scan pusher", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "flashscan shared scan pusher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

void
shared_scan_init(void)
{
	DefineCustomBoolVariable("flashscan.shared_scans",
							 "Lets concurrent FlashScans of a pax table share one stream of reads.",
							 "Needs flashscan in shared_preload_libraries (the hub and its pusher).",
							 &flashscan_shared_scans, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flashscan.shared_scan_window",
							"Groups a shared scan asks for ahead of the one it reads.",
							"A larger window lets the pusher merge more scans' requests and order them for the device; each wanted group stays pinned until read.",
							&flashscan_shared_scan_window, 10, 1, SHARED_SCAN_MAX_WINDOW,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flashscan.shared_scan_cache",
							"Shared buffers the shared scans' pusher may keep pinned.",
							"At most half of shared_buffers is used, whatever the setting.",
							&shared_scan_cache_blocks, 4096, 16, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_BLOCKS, NULL, NULL, NULL);
	DefineCustomIntVariable("flashscan.shared_scan_io_depth",
							"Reads the shared scans' pusher keeps in flight.",
							"0: the queue depth the table's device serves best by its QDTT model (qdtt_costing calibrated), else 32.",
							&shared_scan_io_depth, 0, 0, 256,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flashscan.shared_scan_read_gap",
							"Blocks a pusher read runs on through that no scan needs.",
							"A group's needed columns lie apart, with other columns between; reading through a short gap costs a disk less than starting another read. 0 reads only needed blocks.",
							&shared_scan_read_gap, 16, 0, 127,
							PGC_SIGHUP, GUC_UNIT_BLOCKS, NULL, NULL, NULL);
	/* the hub is sized at server start: only a preloaded library has one */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("flashscan.shared_scan_slots",
							"Shared scans registered at once (scans beyond run alone).",
							NULL,
							&shared_scan_slots, 64, 1, 4096,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("flashscan.shared_scan_units",
							"Groups the scan hub can track at once (registrations beyond run alone).",
							NULL,
							&shared_scan_max_units, 16384, 64, 1 << 22,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);

	hub_requested = true;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shared_scan_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shared_scan_shmem_startup;
	register_pusher();
}

/*
 * Blocks the pusher may hold pinned: the setting, within half of
 * shared_buffers.  Pinned buffers cannot be evicted; the other half stays
 * for everything else the server reads (catalogs, indexes, other tables,
 * the bulk-read rings).  The cache must hold the groups between the
 * leading and the lagging scans, which drift apart as their queries cost
 * different CPU per row: in a small pool a quarter could not, and the
 * pusher read groups again for the laggards (bench/results/
 * flashscan-shared.md).  A single group larger than the limit is still
 * pinned whole (pick_batch()).
 */
uint32
shared_scan_cache_limit(void)
{
	return (uint32) Max(Min(shared_scan_cache_blocks, NBuffers / 2), 1);
}

/*
 * Reads in flight for rel's groups: the setting, or else the depth its
 * tablespace's device serves best by the QDTT model (random reads within
 * the table), or else SHARED_SCAN_DEFAULT_DEPTH.
 */
static int
io_depth_for(Relation rel, BlockNumber nblocks)
{
	Oid			spc = rel->rd_rel->reltablespace;
	int			depth;

	if (shared_scan_io_depth > 0)
		return shared_scan_io_depth;
	depth = ssdkit_qdtt_queue_depth(OidIsValid(spc) ? spc : MyDatabaseTableSpace,
									Max(nblocks, 1), 64);
	return depth > 0 ? depth : SHARED_SCAN_DEFAULT_DEPTH;
}

/* Can scans of rel share reads?  If not, *why says so (for EXPLAIN). */
bool
shared_scan_available(Relation rel, const char **why)
{
	if (!flashscan_shared_scans)
		*why = "off";
	else if (!hub_requested || shared_scan_hub == NULL)
		*why = "flashscan not in shared_preload_libraries";
	else if (RelationUsesLocalBuffers(rel))
		*why = "temporary table";
	else if (RecoveryInProgress() && !RelationNeedsWAL(rel))
		*why = "unlogged table on a standby";
	else
		return true;
	return false;
}

/* Remove u from the table: no reference, no pin, no read in flight. */
void
shared_scan_remove_unit(SharedScanUnit *u)
{
	Assert(u->iqn == 0 && u->rqn == 0 && u->pin_index < 0 && u->state != UNIT_READING);
	/* columns with no block (added by ALTER TABLE) load without a pin */
	if (u->cols_loaded != 0)
		dlist_delete(&u->loaded_node);
	hash_search(shared_scan_units, &u->key, HASH_REMOVE, NULL);
}

/* u lost a reference: remove it, or let the pusher unpin it. */
static void
unit_released(SharedScanUnit *u, bool *wake_pusher)
{
	if (u->iqn > 0 || u->rqn > 0 || u->state == UNIT_READING)
		return;
	if (u->pin_index >= 0)
		*wake_pusher = true;	/* the pusher unpins it and removes it */
	else
		shared_scan_remove_unit(u);
}

/*
 * Add list entry i to the window (under the lock).  *wake: the pusher has
 * a read to do that it may not know of (it is woken only then, not at
 * every delivery: where every group is in shared_buffers already, a wakeup
 * per group costs more than the scans' work).
 */
static void
window_add(SharedScanList *list, int i, bool *wake)
{
	SharedScanUnit *u = list->entries[i].unit;

	if (u->iqn++ == 0)
	{
		u->wanted_since = GetCurrentTimestamp();
		dlist_push_tail(&shared_scan_hub->wanted, &u->wanted_node);
	}
	if (u->state == UNIT_FAILED)
		u->state = UNIT_IDLE;	/* a failed read is tried again for a new window */
	if (u->state == UNIT_IDLE && (list->cols & ~u->cols_loaded) != 0)
		*wake = true;
	/* tell the list's scans when it is published (a parallel one's too) */
	u->waiters |= (uint64) 1 << (list->slot % 64);
	list->in_window++;
}

/* Drop entry i's references to its unit: its columns, and iqn if in the window. */
static void
entry_release(SharedScanList *list, int i, bool *wake)
{
	SharedScanUnit *u = list->entries[i].unit;
	int			att;

	for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
		if (list->cols & ((uint32) 1 << att))
			u->col_refs[att]--;
	if (i < list->next)
	{
		if (--u->iqn == 0)
		{
			dlist_delete(&u->wanted_node);
			/* pinned and in no window: room the pusher may be waiting for */
			if (u->pin_index >= 0)
			{
				shared_scan_hub->room_freed++;
				if (shared_scan_hub->pusher_blocked)
					*wake = true;
			}
		}
		list->in_window--;
	}
	u->rqn--;
	unit_released(u, wake);
}

/* Slide the window on over entries not yet delivered (others were taken
 * out of turn: see catch_up()). */
static void
window_fill(SharedScanList *list, bool *wake)
{
	while (list->in_window < list->window && list->next < list->ngroups)
	{
		if (!list->entries[list->next].done)
			window_add(list, list->next, wake);
		list->next++;
	}
}

static void
wake_pusher(void)
{
	Latch	   *latch = shared_scan_hub->pusher_latch;

	if (latch != NULL)
		SetLatch(latch);
}

/*
 * Wake the scans sleeping for a unit whose waiters were these (outside the
 * hub lock): each scan sleeps on its registration's slot, so that a group
 * published wakes the scans whose window holds it, not every scan.
 */
void
shared_scan_wake_waiters(uint64 waiters)
{
	int			i;

	if (waiters == 0)
		return;
	for (i = 0; i < shared_scan_hub->nslots; i++)
		if (waiters & ((uint64) 1 << (i % 64)))
			ConditionVariableBroadcast(&shared_scan_hub->slots[i].cv);
}

static void
shared_scan_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			/* a scan ends before its transaction; an error ends it here */
			while (my_regs != NULL)
				shared_scan_unregister(my_regs, my_regs->generation);
			break;
		default:
			break;
	}
}

/*
 * A registration lives as long as the resources of the scan that made it:
 * the resource owner current at registration (a portal's, for a cursor).
 * When an error releases that owner (before its locks), the registration
 * goes with it.  A subtransaction's abort alone is not the end: a cursor
 * opened outside it and fetched inside it goes on after ROLLBACK TO, as a
 * heap scan would.
 */
static void
shared_scan_resource_release(ResourceReleasePhase phase, bool isCommit,
							 bool isTopLevel, void *arg)
{
	SharedScanReg *reg,
			   *next;

	if (phase != RESOURCE_RELEASE_BEFORE_LOCKS)
		return;
	for (reg = my_regs; reg != NULL; reg = next)
	{
		next = reg->next_reg;
		if (reg->owner == CurrentResourceOwner)
			shared_scan_unregister(reg, reg->generation);
	}
}

static void
shared_scan_exit(int code, Datum arg)
{
	while (my_regs != NULL)
		shared_scan_unregister(my_regs, my_regs->generation);
}

static Size
list_size(int ngroups, int ncols)
{
	return add_size(add_size(offsetof(SharedScanList, entries),
							 mul_size(sizeof(SharedScanEntry), ngroups)),
					mul_size(mul_size(sizeof(SharedScanColBlocks), ngroups), ncols));
}

/* Entry i's blocks of the list's k-th column. */
static inline SharedScanColBlocks *
list_col_blocks(SharedScanList *list, int i, int k)
{
	SharedScanColBlocks *cb = (SharedScanColBlocks *) &list->entries[list->ngroups];

	return &cb[i * list->ncols + k];
}

static void
reg_free(SharedScanReg *reg)
{
	if (reg->seg != NULL)
		dsm_detach(reg->seg);
	else if (reg->list != NULL)
		pfree(reg->list);
	pfree(reg);
}

/* Forget reg (not yet in the hub) and free it. */
static void
reg_untrack(SharedScanReg *reg)
{
	SharedScanReg **p;

	for (p = &my_regs; *p != reg; p = &(*p)->next_reg)
		;
	*p = reg->next_reg;
	reg_free(reg);
}

/*
 * A handle on list, tracked for the abort and exit paths before the list
 * holds anything in the hub: no error can come between the hub taking a
 * reference and the backend knowing to give it back.
 */
static SharedScanReg *
reg_track(SharedScanList *list, dsm_segment *seg, bool registrant)
{
	SharedScanReg *reg;

	if (!callbacks_registered)
	{
		RegisterXactCallback(shared_scan_xact_callback, NULL);
		RegisterResourceReleaseCallback(shared_scan_resource_release, NULL);
		before_shmem_exit(shared_scan_exit, 0);
		callbacks_registered = true;
	}
	reg = MemoryContextAllocZero(TopMemoryContext, sizeof(SharedScanReg));
	reg->list = list;
	reg->generation = list->generation;
	reg->registrant = registrant;
	reg->seg = seg;
	reg->owner = CurrentResourceOwner;
	reg->next_reg = my_regs;
	my_regs = reg;
	return reg;
}

/*
 * Enter an inactive list into the hub (under the lock): a slot, a unit for
 * each group, references to the columns it reads, its window.  False if
 * the hub is full: then the list is refused, and its scans read alone.
 */
static bool
list_activate(SharedScanList *list, bool *wake)
{
	SharedScanHub *hub = shared_scan_hub;
	int			slot,
				i;

	Assert(!list->active && !list->refused && !list->gone);
	for (slot = 0; slot < hub->nslots; slot++)
		if (!hub->slots[slot].in_use)
			break;
	for (i = 0; slot < hub->nslots && i < list->ngroups; i++)
	{
		SharedScanEntry *e = &list->entries[i];
		SharedScanUnitKey key;
		SharedScanUnit *u;
		bool		found;
		int			att,
					k = 0;

		memset(&key, 0, sizeof(key));
		key.rnode = list->rnode;
		key.first_block = e->first_block;
		key.first_rownum = e->first_rownum;
		u = hash_search(shared_scan_units, &key, HASH_ENTER_NULL, &found);
		if (u == NULL)
			break;
		if (!found)
		{
			u->state = UNIT_IDLE;
			u->permanent = list->permanent;
			u->bulk = list->bulk;
			u->io_depth = 0;
			u->iqn = u->rqn = 0;
			u->cols_known = u->cols_loaded = 0;
			memset(u->col_refs, 0, sizeof(u->col_refs));
			u->pinned = 0;
			u->pin_index = -1;
			u->waiters = 0;
		}
		for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
		{
			uint32		bit = (uint32) 1 << att;

			if (!(list->cols & bit))
				continue;
			if (!(u->cols_known & bit))
			{
				u->col_first[att] = list_col_blocks(list, i, k)->first;
				u->col_blocks[att] = list_col_blocks(list, i, k)->nblocks;
				u->cols_known |= bit;
			}
			u->col_refs[att]++;
			k++;
		}
		u->rqn++;
		u->io_depth = Max(u->io_depth, list->io_depth);
		e->unit = u;
	}
	if (slot >= hub->nslots || i < list->ngroups)
	{
		/* full: take back what was entered */
		while (--i >= 0)
			entry_release(list, i, wake);
		list->refused = true;
		hub->refused++;
		return false;
	}
	list->slot = slot;
	list->active = true;
	hub->slots[slot].in_use = true;
	hub->slots[slot].generation = list->generation;
	hub->slots[slot].pid = list->pid;
	hub->slots[slot].rnode = list->rnode;
	hub->slots[slot].ngroups = list->ngroups;
	hub->slots[slot].io_depth = list->io_depth;
	hub->slots[slot].delivered = 0;
	hub->slots[slot].from_stream = 0;
	hub->slots[slot].alone = 0;
	hub->registrations++;
	window_fill(list, wake);
	return true;
}

/*
 * Register a scan of rel that will read groups gis[0..ngroups) of dir,
 * columns cols[0..natts); NULL if the hub is full (the scan reads alone).
 * bulk: the scan reads through a ring of buffers (a large table), and so
 * should the pusher.
 *
 * participants > 1: a parallel scan's leader registers for its processes,
 * which attach the registration (shared_scan_handle(), shared_scan_attach())
 * and share its window, that many times the setting.  Its list goes to a
 * DSM segment of its own, and enters the hub when a participant first asks
 * for a group: a parallel scan set up but not yet run (one of a Parallel
 * Append's many, say) holds no slot and no window.  NULL only when no
 * segment can be had.
 */
SharedScanReg *
shared_scan_register(Relation rel, PaxDirectory *dir, const int *gis, int ngroups,
					 const bool *cols, int natts, bool bulk, int participants)
{
	SharedScanHub *hub = shared_scan_hub;
	SharedScanList *list;
	SharedScanReg *reg;
	dsm_segment *seg = NULL;
	uint32		mycols = 0;
	int			ncols = 0,
				depth,
				i,
				att;
	bool		wake = false;
	bool		ok;

	if (ngroups == 0)
		return NULL;
	for (att = 0; att < Min(natts, SHARED_SCAN_MAX_COLS); att++)
		if (cols[att])
		{
			mycols |= (uint32) 1 << att;
			ncols++;
		}
	depth = io_depth_for(rel, RelationGetNumberOfBlocks(rel));

	if (participants > 1)
	{
		seg = dsm_create(list_size(ngroups, ncols), DSM_CREATE_NULL_IF_MAXSEGMENTS);
		if (seg == NULL)
		{
			LWLockAcquire(hub->lock, LW_EXCLUSIVE);
			hub->refused++;
			LWLockRelease(hub->lock);
			return NULL;
		}
		list = dsm_segment_address(seg);
	}
	else
		list = MemoryContextAlloc(TopMemoryContext, list_size(ngroups, ncols));
	memset(list, 0, list_size(ngroups, ncols));
	list->magic = SHARED_SCAN_LIST_MAGIC;
	list->pid = MyProcPid;
	list->rnode = rel->rd_node;
	list->permanent = RelationNeedsWAL(rel) ||
		rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	list->bulk = bulk;
	list->io_depth = depth;
	list->ngroups = ngroups;
	list->remaining = ngroups;
	list->cols = mycols;
	list->ncols = ncols;
	list->window = flashscan_shared_scan_window * Max(participants, 1);
	for (i = 0; i < ngroups; i++)
	{
		PaxGroupEntry *g = dir->groups[gis[i]];
		int			k = 0;

		list->entries[i].gi = gis[i];
		list->entries[i].first_block = g->first_block;
		list->entries[i].first_rownum = g->first_rownum;
		list->entries[i].nrows = g->nrows;
		for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
			if (mycols & ((uint32) 1 << att))
			{
				SharedScanColBlocks *cb = list_col_blocks(list, i, k++);

				pax_column_blocks(g, att, &cb->first, &cb->nblocks);
			}
	}
	LWLockAcquire(hub->lock, LW_EXCLUSIVE);
	list->generation = hub->next_generation++;
	LWLockRelease(hub->lock);
	reg = reg_track(list, seg, true);
	if (seg != NULL)
		dsm_pin_mapping(seg);	/* until unregistered, whatever goes first */
	if (participants > 1)
		return reg;

	LWLockAcquire(hub->lock, LW_EXCLUSIVE);
	ok = list_activate(list, &wake);
	LWLockRelease(hub->lock);
	if (wake)
		wake_pusher();
	if (!ok)
	{
		reg_untrack(reg);
		return NULL;
	}
	return reg;
}

/* What a parallel participant passes shared_scan_attach() (0: none). */
uint32
shared_scan_handle(SharedScanReg *reg)
{
	return reg->seg != NULL ? dsm_segment_handle(reg->seg) : DSM_HANDLE_INVALID;
}

/* Was the registration refused (the hub full when it was to enter)? */
bool
shared_scan_refused(SharedScanReg *reg)
{
	bool		refused;

	LWLockAcquire(shared_scan_hub->lock, LW_SHARED);
	refused = reg->list->refused;
	LWLockRelease(shared_scan_hub->lock);
	return refused;
}

/*
 * A parallel participant's handle on the registration (handle, generation)
 * its leader made; NULL if it is gone or used up (every group was taken,
 * or the query ends), and then the participant has nothing more to take
 * from it.
 */
SharedScanReg *
shared_scan_attach(uint32 handle, uint64 generation)
{
	dsm_segment *seg;
	SharedScanList *list;
	bool		alive;

	if (handle == DSM_HANDLE_INVALID)
		return NULL;
	seg = dsm_attach((dsm_handle) handle);
	if (seg == NULL)
		return NULL;
	dsm_pin_mapping(seg);
	list = dsm_segment_address(seg);
	/* the handle may name a newer segment of someone else's */
	alive = dsm_segment_map_length(seg) >= offsetof(SharedScanList, entries) &&
		list->magic == SHARED_SCAN_LIST_MAGIC && list->generation == generation &&
		dsm_segment_map_length(seg) >= list_size(list->ngroups, list->ncols);
	if (alive)
	{
		LWLockAcquire(shared_scan_hub->lock, LW_SHARED);
		/* (a refused list is attached: its next says so, and the
		 * participant then reads every row alone) */
		alive = !list->gone && list->remaining > 0;
		LWLockRelease(shared_scan_hub->lock);
	}
	if (!alive)
	{
		dsm_detach(seg);
		return NULL;
	}
	return reg_track(list, seg, false);
}

/* Deliver list entry i (under the lock); slide the window. */
static void
deliver(SharedScanList *list, int i, bool from_stream, bool *wake)
{
	SharedScanSlot *slot = &shared_scan_hub->slots[list->slot];

	entry_release(list, i, wake);
	/* a unit left a window: room for a read the cache held up */
	if (shared_scan_hub->pusher_blocked)
		*wake = true;
	list->entries[i].done = true;
	/* used up: the slot is free for another scan (the registrant may be
	 * a parallel leader that never comes to let go before the query ends) */
	if (--list->remaining == 0 && slot->generation == list->generation)
		slot->in_use = false;
	while (list->first < list->ngroups && list->entries[list->first].done)
		list->first++;
	slot->delivered++;
	if (from_stream)
	{
		slot->from_stream++;
		shared_scan_hub->deliveries++;
	}
	else
	{
		slot->alone++;
		shared_scan_hub->deliveries_alone++;
	}
	window_fill(list, wake);
}

/*
 * list's entry, past its window, for unit u (-1 if none is undelivered
 * there).  Entries are in the directory's order, which is row order, and
 * no two non-empty groups of one directory share a first row.
 */
static int
entry_past_window(SharedScanList *list, SharedScanUnit *u)
{
	int			lo = list->next,
				hi = list->ngroups - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		uint64		r = list->entries[mid].first_rownum;

		if (r == u->key.first_rownum)
			return (list->entries[mid].unit == u && !list->entries[mid].done) ? mid : -1;
		if (r < u->key.first_rownum)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * A group past list's window that is pinned now with every column it reads
 * and that fewer registrations than below_rqn still read (under the lock;
 * -1 if none).  Scans drift apart (their columns and selectivities
 * differ), and the cache holds only so many groups: a scan reads what the
 * others' windows brought in as it passes, rather than only its own
 * window, or the group it will want is unpinned before it comes and read
 * again for it.  Of all the ready groups, in its window or past it, a scan
 * takes the one the fewest registrations still read, whose pins are freed
 * soonest (cooperative scans' relevance rule; measured on eight scans of a
 * table 40 times the cache: the pusher read each group 4.4 times a batch
 * with the window alone).
 */
static int
catch_up(SharedScanList *list, int below_rqn)
{
	dlist_iter	iter;
	int			best = -1;
	int			best_rqn = below_rqn;

	dlist_foreach(iter, &shared_scan_hub->loaded)
	{
		SharedScanUnit *u = dlist_container(SharedScanUnit, loaded_node, iter.cur);
		int			i;

		if (u->state == UNIT_READING || u->rqn >= best_rqn ||
			!RelFileNodeEquals(u->key.rnode, list->rnode) ||
			(list->cols & ~u->cols_loaded) != 0)
			continue;
		i = entry_past_window(list, u);
		if (i >= 0)
		{
			best = i;
			best_rqn = u->rqn;
		}
	}
	return best;
}

/*
 * The next group to read: an index into the registering scan's directory,
 * or -1 when every group was delivered (or the registration is gone).
 * *first_rownum and *nrows give its rows, for a participant whose
 * directory may differ; *from_stream says whether the pusher read it
 * (else the scan reads it alone).
 */
int
shared_scan_next(SharedScanReg *reg, bool *from_stream, uint64 *first_rownum,
				 uint32 *nrows)
{
	SharedScanHub *hub = shared_scan_hub;
	SharedScanList *list = reg->list;
	bool		sleeping = false;
	TimestampTz wait_start = 0;
	int			result = -1;

	for (;;)
	{
		int			i,
					first_open = -1,
					pick = -1,
					failed = -1;
		int			ready_rqn = INT_MAX;
		bool		wake = false;
		uint64		progress;

		CHECK_FOR_INTERRUPTS();
		LWLockAcquire(hub->lock, LW_EXCLUSIVE);
		if (!list->active && !list->refused && !list->gone)
			(void) list_activate(list, &wake);	/* a parallel scan's first ask */
		if (list->remaining == 0 || list->gone || list->refused)
		{
			LWLockRelease(hub->lock);
			if (wake)
				wake_pusher();
			break;
		}

		/*
		 * A stall seen by any scan holds for all until the pusher finishes
		 * something: a new scan does not wait its own second first.
		 */
		if (hub->stalled && hub->completions != hub->stalled_at)
			hub->stalled = false;	/* the pusher moves again */
		for (i = list->first; i < list->next; i++)
		{
			SharedScanUnit *u;

			if (list->entries[i].done)
				continue;
			u = list->entries[i].unit;

			/*
			 * A unit being read is never handed out, not even to be read
			 * alone: while the pusher reads it, some registration must
			 * still hold it, so that its unregistration waits for the read
			 * (see the file header).
			 */
			if (u->state == UNIT_READING)
				continue;
			if (first_open < 0)
				first_open = i;
			if ((list->cols & ~u->cols_loaded) == 0)
			{
				/* the ready group the fewest others still read: its pins go first */
				if (u->rqn < ready_rqn)
				{
					pick = i;
					ready_rqn = u->rqn;
				}
			}
			else if (u->state == UNIT_FAILED && failed < 0)
				failed = i;
		}
		*from_stream = (pick >= 0 && list->cols != 0);
		if (list->cols != 0 && (i = catch_up(list, ready_rqn)) >= 0)
		{
			pick = i;
			*from_stream = true;
		}
		if (pick < 0 && failed >= 0)
		{
			pick = failed;
			*from_stream = false;
		}
		if (pick < 0 && (hub->stalled || hub->pusher_pid == 0))
		{
			pick = first_open;
			*from_stream = false;
		}
		if (pick >= 0)
		{
			int			slot = list->slot;

			deliver(list, pick, *from_stream, &wake);
			result = list->entries[pick].gi;
			*first_rownum = list->entries[pick].first_rownum;
			*nrows = list->entries[pick].nrows;
			LWLockRelease(hub->lock);
			if (wake)
				wake_pusher();

			/*
			 * A parallel scan's other participants may sleep on the slot for
			 * what this delivery changed: its window slid onto a group ready
			 * already, or the list is used up.
			 */
			if (reg->seg != NULL)
				ConditionVariableBroadcast(&hub->slots[slot].cv);
			break;
		}
		/* the pusher wakes us when it publishes one of these */
		for (i = list->first; i < list->next; i++)
			if (!list->entries[i].done)
				list->entries[i].unit->waiters |= (uint64) 1 << (list->slot % 64);
		progress = hub->completions + hub->room_freed;
		LWLockRelease(hub->lock);
		if (wake)
			wake_pusher();

		if (!sleeping)
		{
			ConditionVariablePrepareToSleep(&hub->slots[list->slot].cv);
			sleeping = true;
			wait_start = GetCurrentTimestamp();
			continue;			/* check again now that a wakeup cannot be missed */
		}
		if (ConditionVariableTimedSleep(&hub->slots[list->slot].cv, SHARED_SCAN_STALL_MS,
										PG_WAIT_EXTENSION))
		{
			/*
			 * Timed out: did the pusher finish a read, or a pinned group
			 * leave its last window (room the pusher may wait for)?  Windows
			 * larger than the cache fill it with groups other scans have yet
			 * to take: that is progress, only slower.  Still, no scan waits
			 * more than SHARED_SCAN_MAX_WAITS stall times for one group.
			 */
			LWLockAcquire(hub->lock, LW_EXCLUSIVE);
			if (hub->completions + hub->room_freed == progress)
			{
				hub->stalled = true;
				hub->stalled_at = hub->completions;
			}
			LWLockRelease(hub->lock);
		}
		if (TimestampDifferenceExceeds(wait_start, GetCurrentTimestamp(),
									   SHARED_SCAN_STALL_MS * SHARED_SCAN_MAX_WAITS))
		{
			LWLockAcquire(hub->lock, LW_EXCLUSIVE);
			hub->stalled = true;
			hub->stalled_at = hub->completions;
			LWLockRelease(hub->lock);
			wait_start = GetCurrentTimestamp();
		}
	}
	if (sleeping)
		ConditionVariableCancelSleep();
	return result;
}

/* Is the pusher reading one of list's undelivered units? (under the lock) */
static bool
reading_now(SharedScanList *list)
{
	int			i;

	if (shared_scan_hub->pusher_pid == 0)
		return false;			/* its exit marked them failed */
	for (i = list->first; i < list->next; i++)
		if (!list->entries[i].done && list->entries[i].unit->state == UNIT_READING)
			return true;
	return false;
}

/* Sleep until the pusher publishes something; the hub lock is held on entry and exit. */
static void
wait_for_pusher(bool *sleeping)
{
	LWLockRelease(shared_scan_hub->lock);
	if (!*sleeping)
		ConditionVariablePrepareToSleep(&shared_scan_hub->ready_cv);
	else
		(void) ConditionVariableTimedSleep(&shared_scan_hub->ready_cv, 100, PG_WAIT_EXTENSION);
	*sleeping = true;
	LWLockAcquire(shared_scan_hub->lock, LW_EXCLUSIVE);
}

/*
 * Must list's end wait for the pusher (under the lock)?  While it reads one
 * of list's units, and while it still pins one that no scan holds any more:
 * once the scan's transaction ends, DROP or TRUNCATE of the table must
 * meet no pinned block (InvalidateBuffer would spin until the unpin).
 * Every entry counts, not only the window's: a group past the window may
 * have been taken out of turn (catch_up()) or released just now.  A unit
 * the list delivered may have been removed and its entry reused since
 * (entries stay in shared memory): one of another relation is skipped, one
 * of the same relation waited for, which is harmless.  A list that never
 * entered the hub has no units.
 */
static bool
must_wait(SharedScanList *list)
{
	int			i;

	if (shared_scan_hub->pusher_pid == 0)
		return false;			/* its exit unpinned and failed them */
	for (i = 0; list->active && i < list->ngroups; i++)
	{
		SharedScanUnit *u = list->entries[i].unit;

		if (!RelFileNodeEquals(u->key.rnode, list->rnode))
			continue;
		if (u->state == UNIT_READING && !list->entries[i].done)
			return true;
		if (u->iqn == 0 && u->rqn == 0 && u->pin_index >= 0)
			return true;
	}
	return false;
}

/*
 * Let go of the registration (reg, generation); nothing if this backend
 * let go of it already (an error released its resource owner).  The
 * registrant drops every reference it holds; a parallel participant only
 * detaches.
 */
void
shared_scan_unregister(SharedScanReg *reg, uint64 generation)
{
	SharedScanHub *hub = shared_scan_hub;
	SharedScanList *list;
	SharedScanReg **p;
	bool		wake = false;
	bool		sleeping = false;
	int			i;

	for (p = &my_regs; *p != NULL; p = &(*p)->next_reg)
		if (*p == reg && reg->generation == generation)
			break;
	if (*p == NULL)
		return;
	list = reg->list;

	if (reg->registrant)
	{
		LWLockAcquire(hub->lock, LW_EXCLUSIVE);
		list->gone = true;		/* participants take no more */
		/* wait out the pusher's reads of our units (see the file header) */
		while (reading_now(list))
			wait_for_pusher(&sleeping);
		/*
		 * (marked done, so that a retry after an error here releases none
		 * twice; a list never entered holds nothing)
		 */
		for (i = list->first; list->active && i < list->ngroups; i++)
			if (!list->entries[i].done)
			{
				entry_release(list, i, &wake);
				list->entries[i].done = true;
			}
		list->first = list->ngroups;
		list->remaining = 0;
		if (list->active && hub->slots[list->slot].generation == list->generation)
			hub->slots[list->slot].in_use = false;
		/* and its unpinning of those no scan holds now */
		while (must_wait(list))
		{
			wake_pusher();
			wait_for_pusher(&sleeping);
		}
		LWLockRelease(hub->lock);
		if (sleeping)
			ConditionVariableCancelSleep();
		if (wake)
			wake_pusher();
		/* participants waiting for a group see it gone */
		if (reg->seg != NULL && list->active)
			ConditionVariableBroadcast(&hub->slots[list->slot].cv);
	}
	for (p = &my_regs; *p != reg; p = &(*p)->next_reg)
		;
	*p = reg->next_reg;
	reg_free(reg);
}

/* flashscan_shared_scan_stats(): the hub's counters and cache. */
Datum
flashscan_shared_scan_stats(PG_FUNCTION_ARGS)
{
	SharedScanHub *hub = shared_scan_hub;
	TupleDesc	tupdesc;
	Datum		values[15];
	bool		nulls[15];
	HASH_SEQ_STATUS status;
	dlist_iter	iter;
	SharedScanUnit *u;
	int64		units = 0,
				wanted = 0,
				ready = 0,
				registered = 0;
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (hub == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("flashscan shared scans are not available"),
				 errdetail("The scan hub is set up at server start."),
				 errhint("Add flashscan to shared_preload_libraries and restart the server.")));
	memset(nulls, 0, sizeof(nulls));
	LWLockAcquire(hub->lock, LW_SHARED);
	hash_seq_init(&status, shared_scan_units);
	while ((u = hash_seq_search(&status)) != NULL)
	{
		units++;
		ready += (u->pinned > 0);
	}
	dlist_foreach(iter, &hub->wanted)
	{
		u = dlist_container(SharedScanUnit, wanted_node, iter.cur);
		wanted += (u->state == UNIT_IDLE && shared_scan_unit_missing(u) != 0);
	}
	for (i = 0; i < hub->nslots; i++)
		registered += hub->slots[i].in_use;
	values[0] = Int32GetDatum(hub->pusher_pid);
	nulls[0] = (hub->pusher_pid == 0);
	values[1] = Int64GetDatum(registered);
	values[2] = Int64GetDatum(units);
	values[3] = Int64GetDatum(wanted);
	values[4] = Int64GetDatum(ready);
	values[5] = Int64GetDatum(hub->pinned_total);
	values[6] = Int64GetDatum(shared_scan_cache_limit());
	values[7] = Int64GetDatum(hub->registrations);
	values[8] = Int64GetDatum(hub->refused);
	values[9] = Int64GetDatum(hub->units_read);
	values[10] = Int64GetDatum(hub->blocks_read);
	values[11] = Int64GetDatum(hub->blocks_preread);
	values[12] = Int64GetDatum(hub->evictions);
	values[13] = Int64GetDatum(hub->deliveries);
	values[14] = Int64GetDatum(hub->deliveries_alone);
	LWLockRelease(hub->lock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* flashscan_shared_scan_registrations(): one row per registered scan. */
Datum
flashscan_shared_scan_registrations(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SharedScanHub *hub = shared_scan_hub;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (hub == NULL)
		return (Datum) 0;
	LWLockAcquire(hub->lock, LW_SHARED);
	for (i = 0; i < hub->nslots; i++)
	{
		SharedScanSlot *s = &hub->slots[i];
		Datum		values[8];
		bool		nulls[8];

		if (!s->in_use)
			continue;
		memset(nulls, 0, sizeof(nulls));
		values[0] = Int32GetDatum(s->pid);
		values[1] = ObjectIdGetDatum(s->rnode.dbNode);
		values[2] = ObjectIdGetDatum(s->rnode.relNode);
		values[3] = Int32GetDatum(s->ngroups);
		values[4] = Int32GetDatum(s->delivered);
		values[5] = Int32GetDatum(s->from_stream);
		values[6] = Int32GetDatum(s->alone);
		values[7] = Int32GetDatum(s->io_depth);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(hub->lock);
	return (Datum) 0;
}
