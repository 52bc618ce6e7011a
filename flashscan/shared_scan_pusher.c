/*-------------------------------------------------------------------------
 *
 * shared_scan_pusher.c
 *	  The shared scans' pusher: a background worker that reads the groups
 *	  the scan hub's windows want and pins them in shared_buffers.
 *
 * Each round takes a batch from the merged request list (shared_scan.c):
 * units wanted longest beyond SHARED_SCAN_STARVE_MS first, then by how many
 * windows want them (iqn), how many registrations will (rqn), and age.  The
 * batch's blocks that shared_buffers lacks are read with io_uring, up to
 * 1 MB a request and as many requests in flight as the device serves best
 * (flashscan.shared_scan_io_depth, or its tablespace's QDTT model), into
 * scratch memory: this only brings them into the kernel's page cache at the
 * queue depth the device serves best, where single-block reads through the
 * buffer manager would come one at a time.  Then each block is read through
 * the buffer manager (checksums verified, ssd_cache consulted, a concurrent
 * writer's newer version found in shared_buffers as always) and stays
 * pinned until no window wants it and the cache needs room, or no
 * registration will read it.
 *
 * A unit's pins belong to a resource owner of its own, so an error while
 * reading it (a checksum failure, a file gone) releases exactly its pins:
 * the unit is marked failed and its scans read it alone, where the same
 * error reaches the query that needs the block.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "tcop/tcopprot.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/smgr.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "shared_scan_hub.h"
#include "ssdkit_uring.h"

/* A unit wanted this long is read before better-shared ones. */
#define SHARED_SCAN_STARVE_MS	500
/* Units read in one round at most. */
#define PUSH_BATCH_UNITS		16
/* Blocks per io_uring read at most (1 MB; kernels split at max_sectors_kb). */
#define PREREAD_BLOCKS			128

/* The units whose blocks this process holds pinned. */
typedef struct PinRecord
{
	SharedScanUnit *unit;
	ResourceOwner owner;
} PinRecord;

/* A unit being read this round. */
typedef struct BatchEntry
{
	SharedScanUnit *unit;
	uint32		cols;			/* columns read */
	BlockNumber *blocks;		/* sorted, distinct */
	int			nblocks;
	int			inflight;		/* its reads queued or in flight */
	uint64		preread;		/* blocks its reads brought in */
	bool		ok;
} BatchEntry;

static PinRecord *pins = NULL;
static int	npins = 0;
static int	pins_cap = 0;
static SsdkitUring *ring = NULL;
/* Parent of every unit's resource owner: what the pusher's exit releases. */
static ResourceOwner units_owner = NULL;
static BufferAccessStrategy bulk_strategy = NULL;
static char *scratch = NULL;

/* Forget unit's pin record (under the hub lock); its owner, to release. */
static ResourceOwner
detach_pins(SharedScanUnit *u)
{
	SharedScanHub *hub = shared_scan_hub;
	int			i = u->pin_index;
	ResourceOwner owner;

	if (i < 0)
		return NULL;
	owner = pins[i].owner;
	pins[i] = pins[--npins];
	if (i < npins)
		pins[i].unit->pin_index = i;
	hub->pinned_total -= u->pinned;
	u->pinned = 0;
	if (u->cols_loaded != 0)
		dlist_delete(&u->loaded_node);
	u->cols_loaded = 0;
	u->pin_index = -1;
	return owner;
}

/* Release every pin owner holds (outside the hub lock). */
static void
release_owner(ResourceOwner owner)
{
	if (owner == NULL)
		return;
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_BEFORE_LOCKS, false, false);
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_LOCKS, false, false);
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_AFTER_LOCKS, false, false);
	ResourceOwnerDelete(owner);
}

/*
 * Under the hub lock: unpin units no registration will read, and, while the
 * cache lacks room for "need" more blocks, units no window holds, those
 * fewest registrations will read first.  Owners to release go to *out.
 */
static int
collect_releases(uint32 need, ResourceOwner *out, int max)
{
	SharedScanHub *hub = shared_scan_hub;
	uint32		limit = shared_scan_cache_limit();
	int			n = 0,
				i;

	for (i = npins - 1; i >= 0 && n < max; i--)
	{
		SharedScanUnit *u = pins[i].unit;

		if (u->iqn == 0 && u->rqn == 0 && u->state != UNIT_READING)
		{
			out[n++] = detach_pins(u);
			shared_scan_remove_unit(u);
		}
	}
	while (hub->pinned_total + need > limit && n < max)
	{
		SharedScanUnit *victim = NULL;

		for (i = 0; i < npins; i++)
		{
			SharedScanUnit *u = pins[i].unit;

			if (u->iqn > 0 || u->state == UNIT_READING)
				continue;
			if (victim == NULL || u->rqn < victim->rqn)
				victim = u;
		}
		if (victim == NULL)
			break;
		out[n++] = detach_pins(victim);
		hub->evictions++;
	}
	return n;
}

/* Units wanted since before this are starving (set for each sort). */
static TimestampTz starve_before;

/* Is a wanted before b? */
static int
priority_cmp(const void *pa, const void *pb)
{
	const SharedScanUnit *a = *(SharedScanUnit *const *) pa;
	const SharedScanUnit *b = *(SharedScanUnit *const *) pb;
	TimestampTz starve = starve_before;
	bool		sa = a->wanted_since < starve,
				sb = b->wanted_since < starve;

	if (sa != sb)
		return sa ? -1 : 1;
	if (!sa)
	{
		if (a->iqn != b->iqn)
			return a->iqn > b->iqn ? -1 : 1;
		if (a->rqn != b->rqn)
			return a->rqn > b->rqn ? -1 : 1;
	}
	if (a->wanted_since != b->wanted_since)
		return a->wanted_since < b->wanted_since ? -1 : 1;
	/* then in the table's order: one scan alone is read as it would read */
	if (a->key.first_block != b->key.first_block)
		return a->key.first_block < b->key.first_block ? -1 : 1;
	return 0;
}

/* The distinct blocks of u's columns cols, sorted. */
static void
unit_blocks(SharedScanUnit *u, uint32 cols, BatchEntry *e)
{
	int			att,
				n = 0,
				total = 0;

	for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
		if (cols & ((uint32) 1 << att))
			total += u->col_blocks[att];
	e->blocks = palloc(sizeof(BlockNumber) * Max(total, 1));
	for (att = 0; att < SHARED_SCAN_MAX_COLS; att++)
	{
		uint32		k;

		if (!(cols & ((uint32) 1 << att)))
			continue;
		for (k = 0; k < u->col_blocks[att]; k++)
			e->blocks[n++] = u->col_first[att] + k;
	}
	qsort(e->blocks, n, sizeof(BlockNumber), pax_block_cmp);
	e->nblocks = 0;
	for (att = 0; att < n; att++)
		if (e->nblocks == 0 || e->blocks[e->nblocks - 1] != e->blocks[att])
			e->blocks[e->nblocks++] = e->blocks[att];
}

/*
 * Choose this round's units (under the hub lock) and mark them READING;
 * returns how many.  Owners to release go to *rel / *nrel.
 */
static int
pick_batch(BatchEntry *batch, int max, ResourceOwner *rel, int *nrel, int max_rel)
{
	SharedScanHub *hub = shared_scan_hub;
	dlist_iter	iter;
	SharedScanUnit *u;
	SharedScanUnit **cand;
	long		ncand = 0,
				i;
	int			n = 0;
	uint32		blocks = 0;

	cand = palloc(sizeof(SharedScanUnit *) * Max(hash_get_num_entries(shared_scan_units), 1));
	dlist_foreach(iter, &hub->wanted)
	{
		u = dlist_container(SharedScanUnit, wanted_node, iter.cur);
		Assert(u->iqn > 0);
		if (u->state == UNIT_IDLE && shared_scan_unit_missing(u) != 0)
			cand[ncand++] = u;
	}
	hub->pusher_blocked = false;
	starve_before = GetCurrentTimestamp() - SHARED_SCAN_STARVE_MS * 1000;
	qsort(cand, ncand, sizeof(SharedScanUnit *), priority_cmp);
	*nrel = collect_releases(0, rel, max_rel);
	for (i = 0; i < ncand && n < max; i++)
	{
		BatchEntry *e = &batch[n];
		uint32		limit = shared_scan_cache_limit();

		u = cand[i];
		e->unit = u;
		e->cols = shared_scan_unit_missing(u);
		unit_blocks(u, e->cols, e);
		if (hub->pinned_total + blocks + e->nblocks > limit)
			*nrel += collect_releases(blocks + e->nblocks, rel + *nrel, max_rel - *nrel);
		/* a unit larger than the whole cache is still read, alone */
		if (hub->pinned_total + blocks + e->nblocks > limit &&
			(n > 0 || hub->pinned_total > 0))
		{
			pfree(e->blocks);
			hub->pusher_blocked = true;
			break;
		}
		u->state = UNIT_READING;
		blocks += e->nblocks;
		n++;
	}
	pfree(cand);
	return n;
}

/* A relation segment the batch's reads go to, open until they all ended. */
typedef struct PrereadFile
{
	RelFileNode rnode;
	BlockNumber seg;
	int			fd;
} PrereadFile;

/*
 * A batch's read-ahead: where it has got to in the batch's blocks, and the
 * files its reads in flight use.
 */
typedef struct Preread
{
	BatchEntry *batch;
	int			n;
	int			unit;			/* the unit whose blocks are queued next */
	int			k;				/* and its next block */
	int			depth;			/* reads in flight at most */
	PrereadFile files[2 * PUSH_BATCH_UNITS];
	int			nfiles;
} Preread;

/*
 * The open file of rnode's segment seg among p's files (opened and added if
 * need be; a group spans at most two segments: -1 when no more can be or
 * the open fails).  Plain open(2) (io_uring needs the descriptor to stay
 * open while the buffer manager's own files come and go), each counted
 * with AcquireExternalFD() so fd.c keeps max_files_per_process in view;
 * without one to spare the blocks are left to the buffer manager.
 */
static int
preread_file(Preread *p, RelFileNode rnode, BlockNumber seg)
{
	char	   *path;
	char	   *segpath;
	int			i,
				fd;

	for (i = 0; i < p->nfiles; i++)
		if (RelFileNodeEquals(p->files[i].rnode, rnode) && p->files[i].seg == seg)
			return p->files[i].fd;
	if (p->nfiles >= lengthof(p->files))
		return -1;
	if (!AcquireExternalFD())
		return -1;
	path = relpathperm(rnode, MAIN_FORKNUM);
	segpath = seg == 0 ? pstrdup(path) : psprintf("%s.%u", path, seg);
	fd = open(segpath, O_RDONLY | PG_BINARY, 0);
	pfree(segpath);
	pfree(path);
	if (fd < 0)
		ReleaseExternalFD();
	else
	{
		p->files[p->nfiles].rnode = rnode;
		p->files[p->nfiles].seg = seg;
		p->files[p->nfiles].fd = fd;
		p->nfiles++;
	}
	return fd;
}

/*
 * Bring the batch's blocks that neither shared_buffers nor ssd_cache holds
 * into the kernel's page cache with io_uring, up to PREREAD_BLOCKS a read
 * and the units' io_depth reads in flight.  The bytes land in one scratch
 * area and are dropped (so reads may overwrite each other there): the
 * buffer manager reads the blocks next, from the page cache.  A failure
 * here is no error: that read will say what is wrong.
 *
 * The reads run ahead of the pinning: unit i is pinned once its own reads
 * ended, while the later units' reads keep the device busy, so the device
 * never idles while the pusher copies blocks into shared_buffers, and the
 * first unit is published after its own reads, not the whole batch's.
 */
static void
preread_begin(Preread *p, BatchEntry *batch, int n)
{
	int			bi;

	p->batch = batch;
	p->n = ring == NULL ? 0 : n;
	p->unit = 0;
	p->k = 0;
	p->nfiles = 0;
	/* the deepest queue any of the batch's devices serves best */
	p->depth = 1;
	for (bi = 0; bi < n; bi++)
		p->depth = Max(p->depth, batch[bi].unit->io_depth);
	if (ring != NULL)
		p->depth = Min(p->depth, ring->depth);
}

/* Queue the batch's next reads while fewer than p->depth are in flight. */
static void
preread_queue(Preread *p)
{
	while (p->unit < p->n && ring->inflight + ring->queued < p->depth)
	{
		BatchEntry *e = &p->batch[p->unit];
		SharedScanUnit *u = e->unit;
		BlockNumber start,
					seg;
		int			len = 1;	/* blocks the read spans */
		int			nread = 1;	/* of the unit's blocks */
		int			fd;

		if (p->k >= e->nblocks)
		{
			p->unit++;
			p->k = 0;
			continue;
		}
		start = e->blocks[p->k];
		seg = start / RELSEG_SIZE;
		if (pax_block_read_elsewhere(u->key.rnode, start))
		{
			p->k++;
			continue;
		}

		/*
		 * One read runs on over the next blocks the unit needs, and through
		 * gaps of up to shared_scan_read_gap blocks it does not (the other
		 * columns of a group): a disk head passes a short gap faster than it
		 * starts another read.
		 */
		for (;;)
		{
			int			next = p->k + nread;
			BlockNumber b;

			if (next >= e->nblocks)
				break;
			b = e->blocks[next];
			if (b - start + 1 > PREREAD_BLOCKS || b / RELSEG_SIZE != seg ||
				b - (start + len) > (BlockNumber) shared_scan_read_gap ||
				pax_block_read_elsewhere(u->key.rnode, b))
				break;
			len = b - start + 1;
			nread++;
		}
		p->k += nread;
		fd = preread_file(p, u->key.rnode, seg);
		if (fd < 0)
			continue;			/* the buffer manager will say what is wrong */
		if (ssdkit_uring_queue_read(ring, fd, scratch, (Size) len * BLCKSZ,
									(off_t) (start % RELSEG_SIZE) * BLCKSZ, p->unit))
		{
			e->inflight++;
			e->preread += len;
		}
	}
	if (ring != NULL && ring->queued > 0)
		(void) ssdkit_uring_submit(ring);
}

/* Reap the reads that ended (waiting for one if wait). */
static void
preread_reap(Preread *p, bool wait)
{
	SsdkitUringCompletion c[16];
	int			got,
				i;

	got = ssdkit_uring_reap(ring, c, lengthof(c), wait);
	for (i = 0; i < got; i++)
		p->batch[c[i].tag].inflight--;
}

/* Wait until unit i's reads ended, the later units' reads queued meanwhile. */
static void
preread_wait_unit(Preread *p, int i)
{
	if (i >= p->n)
		return;
	for (;;)
	{
		preread_queue(p);
		if ((p->unit > i && p->batch[i].inflight == 0) || ring->inflight == 0)
			break;
		preread_reap(p, true);
	}
	/* what ended meanwhile makes room for more before the pinning */
	if (ring->inflight > 0)
	{
		preread_reap(p, false);
		preread_queue(p);
	}
}

/*
 * Wait for every read in flight (all were queued: the round waited for each
 * unit's), close the files.
 */
static void
preread_end(Preread *p)
{
	while (ring != NULL && ring->inflight > 0)
		preread_reap(p, true);
	while (p->nfiles > 0)
	{
		close(p->files[--p->nfiles].fd);
		ReleaseExternalFD();
	}
}

/*
 * Pin e's blocks under its unit's resource owner; false (the error
 * reported, the unit's pins released) if a read failed.
 */
static bool
pin_unit(BatchEntry *e, ResourceOwner owner)
{
	ResourceOwner save = CurrentResourceOwner;
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool ok = true;

	if (e->nblocks == 0)
		return true;			/* columns with no block (added by ALTER TABLE) */
	CurrentResourceOwner = owner;
	PG_TRY();
	{
		int			k;

		for (k = 0; k < e->nblocks; k++)
		{
			CHECK_FOR_INTERRUPTS();
			(void) ReadBufferWithoutRelcache(e->unit->key.rnode, MAIN_FORKNUM,
											 e->blocks[k], RBM_NORMAL,
											 e->unit->bulk ? bulk_strategy : NULL,
											 e->unit->permanent);
		}
	}
	PG_CATCH();
	{
		/* as the bgwriter recovers: no transaction to abort */
		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(cxt);
		LWLockReleaseAll();		/* a victim's content lock, when flushing it failed */
		ConditionVariableCancelSleep();
		AbortBufferIO();
		UnlockBuffers();
		EmitErrorReport();
		FlushErrorState();
		RESUME_INTERRUPTS();
		ok = false;
	}
	PG_END_TRY();
	CurrentResourceOwner = save;
	return ok;
}

/* Release owners (outside the hub lock) and tell waiting scans. */
static void
release_owners(ResourceOwner *owners, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		release_owner(owners[i]);
	if (n > 0)
		ConditionVariableBroadcast(&shared_scan_hub->ready_cv);
}

/*
 * Publish one read unit (under the hub lock): ready with its columns, or
 * failed; unpinned and removed at once if no scan wants it any more.
 * Returns the owner to release, if any.
 */
static ResourceOwner
publish_unit(BatchEntry *e, uint64 *waiters)
{
	SharedScanHub *hub = shared_scan_hub;
	SharedScanUnit *u = e->unit;

	*waiters = u->waiters;
	u->waiters = 0;
	u->state = e->ok ? UNIT_IDLE : UNIT_FAILED;
	if (e->ok)
	{
		if (u->cols_loaded == 0 && e->cols != 0)
			dlist_push_tail(&hub->loaded, &u->loaded_node);
		u->cols_loaded |= e->cols;
		u->pinned += e->nblocks;
		hub->pinned_total += e->nblocks;
		hub->blocks_read += e->nblocks;
		hub->blocks_preread += e->preread;
		hub->units_read++;
	}
	hub->completions++;
	/* every scan that wanted it went away (or read it alone) meanwhile */
	if (u->iqn == 0 && u->rqn == 0)
	{
		ResourceOwner owner = detach_pins(u);

		shared_scan_remove_unit(u);
		return owner;
	}
	return NULL;
}

/*
 * One round: pick, read ahead, then pin and publish unit by unit (a scan
 * waiting for one group, or for its last read to end, waits for that unit,
 * not for the batch).  False if nothing was wanted.
 */
static bool
push_round(MemoryContext round_cxt)
{
	SharedScanHub *hub = shared_scan_hub;
	int			max = PUSH_BATCH_UNITS;
	BatchEntry *batch;
	ResourceOwner *rel;
	int			relcap,
				nrel,
				n,
				i;
	Preread		pre;
	MemoryContext old = MemoryContextSwitchTo(round_cxt);

	batch = palloc0(sizeof(BatchEntry) * max);
	/* owners released at once: every pin record, at most once each, + 1 */
	relcap = npins + max + 1;	/* npins grows by at most max this round */
	rel = palloc(sizeof(ResourceOwner) * relcap);
	LWLockAcquire(hub->lock, LW_EXCLUSIVE);
	n = pick_batch(batch, max, rel, &nrel, relcap);
	LWLockRelease(hub->lock);
	release_owners(rel, nrel);

	preread_begin(&pre, batch, n);
	for (i = 0; i < n; i++)
	{
		BatchEntry *e = &batch[i];
		ResourceOwner owner = NULL;
		uint64		waiters;

		if (e->unit->pin_index >= 0)
			owner = pins[e->unit->pin_index].owner;
		else if (e->nblocks > 0)
		{
			/*
			 * Recorded before any pin is taken: if the pusher is terminated
			 * while pinning, its exit finds and releases this owner too.
			 */
			owner = ResourceOwnerCreate(units_owner, "flashscan shared scan unit");
			if (npins == pins_cap)
			{
				pins_cap = Max(pins_cap * 2, 64);
				pins = pins == NULL ?
					MemoryContextAlloc(TopMemoryContext, sizeof(PinRecord) * pins_cap) :
					repalloc(pins, sizeof(PinRecord) * pins_cap);
			}
			LWLockAcquire(hub->lock, LW_EXCLUSIVE);
			pins[npins].unit = e->unit;
			pins[npins].owner = owner;
			e->unit->pin_index = npins++;
			LWLockRelease(hub->lock);
		}
		preread_wait_unit(&pre, i);
		e->ok = pin_unit(e, owner);

		nrel = 0;
		LWLockAcquire(hub->lock, LW_EXCLUSIVE);
		if (!e->ok && e->unit->pin_index >= 0)
			rel[nrel++] = detach_pins(e->unit);	/* every pin of the unit goes */
		if ((rel[nrel] = publish_unit(e, &waiters)) != NULL)
			nrel++;
		/* and what scans let go of meanwhile */
		nrel += collect_releases(0, rel + nrel, relcap - nrel);
		LWLockRelease(hub->lock);
		shared_scan_wake_waiters(waiters);
		ConditionVariableBroadcast(&hub->ready_cv);
		release_owners(rel, nrel);
	}

	/*
	 * The pusher has no relation cache and hears of no DROP: close the files
	 * it read, so that it never keeps a dropped relation's segments (and their
	 * disk space) open.
	 */
	if (n > 0)
	{
		preread_end(&pre);
		smgrcloseall();
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(round_cxt);
	return n > 0;
}

/*
 * Exit (shutdown, error, postmaster's death): unpin everything (every unit
 * owner is a child of units_owner, whether recorded or being filled), fail
 * the units being read so no scan waits for them, and say no pusher runs.
 */
static void
pusher_exit(int code, Datum arg)
{
	SharedScanHub *hub = shared_scan_hub;
	HASH_SEQ_STATUS status;
	SharedScanUnit *u;

	AbortBufferIO();
	UnlockBuffers();
	LWLockReleaseAll();
	if (units_owner != NULL)
	{
		ResourceOwnerRelease(units_owner, RESOURCE_RELEASE_BEFORE_LOCKS, false, true);
		ResourceOwnerRelease(units_owner, RESOURCE_RELEASE_LOCKS, false, true);
		ResourceOwnerRelease(units_owner, RESOURCE_RELEASE_AFTER_LOCKS, false, true);
	}
	LWLockAcquire(hub->lock, LW_EXCLUSIVE);
	while (npins > 0)
	{
		u = pins[npins - 1].unit;
		(void) detach_pins(u);
		if (u->iqn == 0 && u->rqn == 0 && u->state != UNIT_READING)
			shared_scan_remove_unit(u);
	}
	hash_seq_init(&status, shared_scan_units);
	while ((u = hash_seq_search(&status)) != NULL)
		if (u->state == UNIT_READING)
			u->state = UNIT_FAILED;
	hub->pusher_pid = 0;
	hub->pusher_latch = NULL;
	LWLockRelease(hub->lock);
	ConditionVariableBroadcast(&hub->ready_cv);
	shared_scan_wake_waiters(~(uint64) 0);	/* scans read alone now */
}

void
shared_scan_pusher_main(Datum arg)
{
	SharedScanHub *hub = shared_scan_hub;
	MemoryContext round_cxt;
	HASH_SEQ_STATUS status;
	SharedScanUnit *u;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "flashscan shared scan pusher");
	units_owner = ResourceOwnerCreate(NULL, "flashscan shared scan units");
	round_cxt = AllocSetContextCreate(TopMemoryContext, "flashscan pusher round",
									  ALLOCSET_DEFAULT_SIZES);

	/*
	 * A lone scan of a table larger than a quarter of shared_buffers reads
	 * through a 256 kB ring, so that it does not push everyone else's pages
	 * out.  The pusher keeps up to shared_scan_cache pinned, which no ring
	 * that small could hold (a ring skips pinned buffers and takes new ones),
	 * so it reads such tables through PostgreSQL's largest ring, 16 MB: what
	 * it leaves in shared_buffers stays within the cache plus the ring.
	 */
	bulk_strategy = GetAccessStrategy(BAS_BULKWRITE);

	/* a pusher that died by an error left its reads failed already */
	LWLockAcquire(hub->lock, LW_EXCLUSIVE);
	hash_seq_init(&status, shared_scan_units);
	while ((u = hash_seq_search(&status)) != NULL)
		if (u->state == UNIT_READING)
			u->state = UNIT_FAILED;
	hub->pusher_pid = MyProcPid;
	hub->pusher_latch = MyLatch;
	LWLockRelease(hub->lock);
	shared_scan_wake_waiters(~(uint64) 0);
	before_shmem_exit(pusher_exit, 0);

	PG_TRY();
	{
		ring = ssdkit_uring_create(256);	/* the setting's maximum: it may be raised */
		scratch = ssdkit_uring_alloc_buffer(ring, PREREAD_BLOCKS * BLCKSZ);
	}
	PG_CATCH();
	{
		/* without io_uring the buffer manager reads block by block */
		EmitErrorReport();
		FlushErrorState();
		ring = NULL;
	}
	PG_END_TRY();

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (push_round(round_cxt))
			continue;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
