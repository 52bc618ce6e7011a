/*-------------------------------------------------------------------------
 *
 * ssd_cache_directory.c
 *	  The directory of ssd_cache: which page (BufferTag) is in which slot of
 *	  the cache file, in shared memory and, durably, on the SSD.
 *
 * Shared state, all owned by this module:
 *	- a partitioned hash (128 partitions, one LWLock each) from BufferTag to
 *	  an entry {slot, state};
 *	- the slot array {tag, pins, usage};
 *	- a mirror of the on-SSD directory, from which whole 4 kB directory pages
 *	  are written;
 *	- a small hash of cached blocks per relation, so that relation lifecycle
 *	  events on uncached relations cost one lookup;
 *	- the counters behind ssd_cache_stats.
 *
 * Entry states: PENDING (a page copy waits in the admission queue), WRITING
 * (the admission worker owns a slot and is writing it), VALID (readable),
 * CANCELLED (invalidated while PENDING or WRITING; the worker drops it).
 *
 * Invariants:
 *	1. The persistent directory never says VALID for a slot whose contents
 *	   are not that page as it is (or was last written) on disk.  A slot is
 *	   written before its entry is validated; an entry is invalidated, on the
 *	   SSD, before the slot is reused or the relation truncated or unlinked.
 *	2. Every change to a slot's persistent entry is made while holding the
 *	   partition lock of the tag concerned.  So an invalidation can never be
 *	   overtaken by a late validation of the same entry.
 *	3. A PENDING entry's tag stays in the admission queue until the entry
 *	   leaves PENDING; a WRITING or VALID entry's tag is in its slot.  So a
 *	   scan of the queue then the slots finds every entry of a relation.
 *	4. Lock order: partition lock, then directory-page lock, then the
 *	   relation-count lock; never the reverse.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/bufpage.h"
#include "storage/checksum.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/md.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "pgtime.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_policy.h"

#define SSD_NUM_PARTITIONS	128
#define SSD_NUM_DIR_LOCKS	128

/* After this many SSD errors within a minute the cache stops serving. */
#define SSD_ERRORS_TO_DEGRADE	8
#define SSD_ERROR_WINDOW_SECS	60

typedef enum SsdEntryState
{
	ENT_PENDING,
	ENT_WRITING,
	ENT_VALID,
	ENT_CANCELLED
} SsdEntryState;

typedef struct SsdLookupEnt
{
	BufferTag	tag;			/* hash key */
	int32		slot;			/* -1 while PENDING */
	uint8		state;			/* SsdEntryState */
} SsdLookupEnt;

typedef struct SsdSlot
{
	BufferTag	tag;			/* valid unless on the free list */
	pg_atomic_uint32 pins;		/* readers and writers using the slot */
	uint8		usage;			/* clock reference bit */
	bool		in_use;
	int32		free_next;
	uint32		gen;			/* bumped whenever the slot changes page */
} SsdSlot;

typedef struct SsdRelEnt
{
	RelFileNode rnode;			/* hash key */
	int64		blocks;			/* WRITING or VALID entries */
	pg_atomic_uint64 hits;		/* reads served from the SSD */
	pg_atomic_uint64 misses;	/* reads that went to disk while some of
								 * the relation was cached */
} SsdRelEnt;

typedef struct SsdCacheShared
{
	uint64		nslots;
	uint32		epoch;
	pg_atomic_uint32 degraded;
	slock_t		error_lock;
	pg_time_t	error_window_start;
	uint32		window_errors;
	pg_atomic_uint64 counters[SSD_NCOUNTERS];
	pg_atomic_uint64 used;
	pg_atomic_uint64 clock_hand;
	slock_t		free_lock;
	int32		free_head;
	double		preparation_ms;
} SsdCacheShared;

static SsdCacheShared *shared = NULL;
static SsdSlot *slots = NULL;
static SsdCacheDirEntry *mirror = NULL;
static HTAB *lookup_hash = NULL;
static HTAB *rel_hash = NULL;
static LWLockPadded *locks = NULL;
static char *io_buf = NULL;		/* this process's O_DIRECT buffer */

#define PART_LOCK(h)	(&locks[(h) % SSD_NUM_PARTITIONS].lock)
#define DIR_LOCK(p)		(&locks[SSD_NUM_PARTITIONS + (p) % SSD_NUM_DIR_LOCKS].lock)
#define REL_LOCK		(&locks[SSD_NUM_PARTITIONS + SSD_NUM_DIR_LOCKS].lock)

static void persist_entry(int32 slot, const BufferTag *tag);
static void remove_entry_locked(SsdLookupEnt *ent, uint32 hash, bool count_eviction);

int
ssd_cache_directory_lwlocks(void)
{
	return SSD_NUM_PARTITIONS + SSD_NUM_DIR_LOCKS + 1 + SSD_POLICY_NUM_PARTITIONS;
}

bool
ssd_cache_enabled(void)
{
	return shared != NULL;
}

bool
ssd_cache_degraded(void)
{
	return shared != NULL && pg_atomic_read_u32(&shared->degraded) != 0;
}

void
ssd_cache_count(SsdCacheCounter c, int64 n)
{
	if (shared)
		pg_atomic_fetch_add_u64(&shared->counters[c], n);
}

uint64
ssd_cache_nslots(void)
{
	return shared ? shared->nslots : 0;
}

uint64
ssd_cache_used_slots(void)
{
	return shared ? pg_atomic_read_u64(&shared->used) : 0;
}

bool
ssd_cache_full(void)
{
	return shared != NULL && pg_atomic_read_u64(&shared->used) >= shared->nslots;
}

double
ssd_cache_preparation_ms(void)
{
	return shared ? shared->preparation_ms : 0;
}

void
ssd_cache_read_counters(int64 *out)
{
	int			i;

	for (i = 0; i < SSD_NCOUNTERS; i++)
		out[i] = shared ? (int64) pg_atomic_read_u64(&shared->counters[i]) : 0;
}

void
ssd_cache_reset_counters(void)
{
	int			i;
	HASH_SEQ_STATUS seq;
	SsdRelEnt  *re;

	if (!shared)
		return;
	for (i = 0; i < SSD_NCOUNTERS; i++)
		pg_atomic_write_u64(&shared->counters[i], 0);
	LWLockAcquire(REL_LOCK, LW_SHARED);
	hash_seq_init(&seq, rel_hash);
	while ((re = hash_seq_search(&seq)) != NULL)
	{
		pg_atomic_write_u64(&re->hits, 0);
		pg_atomic_write_u64(&re->misses, 0);
	}
	LWLockRelease(REL_LOCK);
}

static char *
process_io_buffer(void)
{
	if (io_buf == NULL)
	{
		char	   *raw = MemoryContextAlloc(TopMemoryContext, BLCKSZ * 2);

		io_buf = (char *) TYPEALIGN(BLCKSZ, raw);
	}
	return io_buf;
}

/*
 * An SSD read or write failed: log it, count it, and after repeated
 * failures (SSD_ERRORS_TO_DEGRADE within SSD_ERROR_WINDOW_SECS, whatever
 * succeeds in between) stop using the cache (pass-through).
 */
void
ssd_cache_note_error(const char *what, const BufferTag *tag)
{
	uint32		n;
	pg_time_t	now = (pg_time_t) time(NULL);

	ssd_cache_count(SSD_ERRORS, 1);
	SpinLockAcquire(&shared->error_lock);
	if (now - shared->error_window_start > SSD_ERROR_WINDOW_SECS)
	{
		shared->error_window_start = now;
		shared->window_errors = 0;
	}
	n = ++shared->window_errors;
	SpinLockRelease(&shared->error_lock);
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("ssd_cache: %s of block %u of relation %u/%u/%u failed: %m; using the disk copy",
					what, tag->blockNum, tag->rnode.spcNode, tag->rnode.dbNode,
					tag->rnode.relNode)));
	if (n >= SSD_ERRORS_TO_DEGRADE &&
		pg_atomic_exchange_u32(&shared->degraded, 1) == 0)
		ereport(WARNING,
				(errmsg("ssd_cache: %u SSD errors within %d seconds; the cache is now in pass-through mode",
						n, SSD_ERROR_WINDOW_SECS),
				 errhint("Check the SSD; the cache is used again after a restart.")));
}

static void
rel_count_add(RelFileNode rnode, int64 delta)
{
	SsdRelEnt  *re;
	bool		found;

	LWLockAcquire(REL_LOCK, LW_EXCLUSIVE);
	re = hash_search(rel_hash, &rnode, delta > 0 ? HASH_ENTER_NULL : HASH_FIND, &found);
	if (re)
	{
		if (!found)
		{
			re->blocks = 0;
			pg_atomic_init_u64(&re->hits, 0);
			pg_atomic_init_u64(&re->misses, 0);
		}
		re->blocks += delta;
		if (re->blocks <= 0)
			hash_search(rel_hash, &rnode, HASH_REMOVE, NULL);
	}
	LWLockRelease(REL_LOCK);
}

/* Count a read of a relation that has cached blocks as a hit or a miss. */
static void
rel_count_access(RelFileNode rnode, bool hit)
{
	SsdRelEnt  *re;

	LWLockAcquire(REL_LOCK, LW_SHARED);
	re = hash_search(rel_hash, &rnode, HASH_FIND, NULL);
	if (re)
		pg_atomic_fetch_add_u64(hit ? &re->hits : &re->misses, 1);
	LWLockRelease(REL_LOCK);
}

bool
ssd_cache_relation_cached(RelFileNode rnode)
{
	bool		found;

	LWLockAcquire(REL_LOCK, LW_SHARED);
	hash_search(rel_hash, &rnode, HASH_FIND, &found);
	LWLockRelease(REL_LOCK);
	return found;
}

/*
 * Durably record the entries of n slots (tags[i], or free if NULL) on the
 * SSD, one write per directory page.  The caller holds the partition locks
 * of all the tags concerned (invariant 2).  If a write fails the persistent
 * directory can no longer be trusted: stop using the cache now and make sure
 * it is not trusted at the next start.
 */
static void
persist_entries(int n, const int32 *slotnos, const BufferTag *const *tags)
{
	char	   *buf = process_io_buffer();
	bool		done[SSD_CACHE_WRITE_BATCH];
	int			i,
				j;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	memset(done, 0, sizeof(done));
	for (i = 0; i < n; i++)
	{
		uint64		dirpage = slotnos[i] / SSD_DIR_ENTRIES_PER_PAGE;
		bool		ok;

		if (done[i])
			continue;
		LWLockAcquire(DIR_LOCK(dirpage), LW_EXCLUSIVE);
		for (j = i; j < n; j++)
		{
			SsdCacheDirEntry *e = &mirror[slotnos[j]];
			const BufferTag *tag = tags[j];

			if (done[j] || slotnos[j] / SSD_DIR_ENTRIES_PER_PAGE != dirpage)
				continue;
			done[j] = true;
			memset(e, 0, sizeof(*e));
			if (tag)
			{
				e->spcNode = tag->rnode.spcNode;
				e->dbNode = tag->rnode.dbNode;
				e->relNode = tag->rnode.relNode;
				e->blockNum = tag->blockNum;
				e->forkNum = (uint8) tag->forkNum;
				e->flags = SSD_DIR_VALID;
				e->epoch = shared->epoch;
				ssd_cache_dir_entry_seal(e);
			}
		}
		memcpy(buf, &mirror[dirpage * SSD_DIR_ENTRIES_PER_PAGE], SSD_DIR_PAGE_SIZE);
		ok = ssd_cache_file_write_dir_page(dirpage, buf);
		LWLockRelease(DIR_LOCK(dirpage));

		ssd_cache_count(SSD_DIR_WRITES, 1);
		if (!ok)
		{
			pg_atomic_write_u32(&shared->degraded, 1);
			ssd_cache_count(SSD_ERRORS, 1);
			ssd_cache_file_forget(errno);
		}
	}
}

static void
persist_entry(int32 slot, const BufferTag *tag)
{
	persist_entries(1, &slot, &tag);
}

/* Put a slot no entry refers to any more back on the free list. */
static void
free_slot(int32 slot)
{
	slots[slot].gen++;
	slots[slot].in_use = false;
	SpinLockAcquire(&shared->free_lock);
	slots[slot].free_next = shared->free_head;
	shared->free_head = slot;
	SpinLockRelease(&shared->free_lock);
	pg_atomic_fetch_sub_u64(&shared->used, 1);
}

/*
 * Remove an entry; caller holds its partition lock exclusively.  A VALID
 * entry is invalidated on the SSD first.
 */
static void
remove_entry_locked(SsdLookupEnt *ent, uint32 hash, bool count_eviction)
{
	BufferTag	tag = ent->tag;
	int32		slot = ent->slot;
	uint8		state = ent->state;

	if (state == ENT_VALID)
		persist_entry(slot, NULL);
	hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_REMOVE, NULL);
	if (slot >= 0)
	{
		rel_count_add(tag.rnode, -1);
		free_slot(slot);
	}
	if (state == ENT_VALID)
		ssd_cache_count(count_eviction ? SSD_EVICTIONS : SSD_INVALIDATIONS, 1);
}

/*
 * Find the readable (VALID) entry of tag; with want_slot >= 0 only if it is
 * in that slot.  Returns its slot, pinned if "pin", or -1.  *present (if
 * not NULL) says whether the tag has an entry at all, in any state.
 */
static int32
find_valid(const BufferTag *tag, int32 want_slot, bool pin, bool *present)
{
	uint32		hash = get_hash_value(lookup_hash, tag);
	SsdLookupEnt *ent;
	int32		slot = -1;

	LWLockAcquire(PART_LOCK(hash), LW_SHARED);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
	if (present)
		*present = ent != NULL;
	if (ent != NULL && ent->state == ENT_VALID &&
		(want_slot < 0 || ent->slot == want_slot))
	{
		slot = ent->slot;
		if (pin)
			pg_atomic_fetch_add_u32(&slots[slot].pins, 1);
	}
	LWLockRelease(PART_LOCK(hash));
	return slot;
}

/*
 * Read path: if the page is cached, read it from the SSD into buffer and
 * return true.  A failed or corrupt SSD read invalidates the slot and
 * returns false, so the caller reads the disk.
 */
bool
ssd_cache_read(const BufferTag *tag, char *buffer)
{
	int32		slot;
	char	   *buf;
	bool		ok;

	if (!shared || ssd_cache_degraded())
		return false;

	slot = find_valid(tag, -1, true, NULL);
	if (slot < 0)
	{
		ssd_cache_count(SSD_MISSES, 1);
		rel_count_access(tag->rnode, false);
		return false;
	}
	slots[slot].usage = 1;

	buf = process_io_buffer();
	ok = ssd_cache_file_read_slot(slot, buf);
	if (ok && DataChecksumsEnabled() && !PageIsNew((Page) buf) &&
		pg_checksum_page(buf, tag->blockNum) != ((PageHeader) buf)->pd_checksum)
	{
		/* A torn slot write; the disk copy is as new as the slot was. */
		errno = EIO;
		ok = false;
	}
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);

	if (!ok)
	{
		ssd_cache_note_error("SSD read", tag);
		ssd_cache_invalidate_block(tag);
		ssd_cache_count(SSD_MISSES, 1);
		return false;
	}
	memcpy(buffer, buf, BLCKSZ);
	ssd_cache_count(SSD_HITS, 1);
	rel_count_access(tag->rnode, true);
	ssd_cache_count(SSD_SSD_READS, 1);
	return true;
}

/*
 * Write-through: the disk has just been written; bring any cached copy up to
 * date.  A VALID copy is overwritten in place; an admission not yet written
 * is cancelled (its copy is older than the disk now).
 */
void
ssd_cache_after_disk_write(const BufferTag *tag, const char *buffer)
{
	int32		slot;
	bool		present;
	bool		degraded;
	bool		ok;
	char	   *buf;

	if (!shared)
		return;
	degraded = ssd_cache_degraded();
	slot = find_valid(tag, -1, !degraded, &present);
	if (!present)
		return;
	if (slot < 0 || degraded)
	{
		/* Not readable (or not to be updated): forget it; nothing is pinned. */
		ssd_cache_invalidate_block(tag);
		return;
	}

	/*
	 * The buffer manager never writes a block while another process reads or
	 * writes the same block, so nobody else touches this slot's contents.
	 */
	buf = process_io_buffer();
	memcpy(buf, buffer, BLCKSZ);
	ok = ssd_cache_file_write_slot(slot, buf);
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
	if (ok)
	{
		ssd_cache_count(SSD_OVERWRITES, 1);
		ssd_cache_count(SSD_SSD_WRITES, 1);
	}
	else
	{
		ssd_cache_note_error("SSD write", tag);
		ssd_cache_invalidate_block(tag);
	}
}

/* Is the block cached (readable now)? */
bool
ssd_cache_contains(const BufferTag *tag)
{
	if (!shared || ssd_cache_degraded())
		return false;
	return find_valid(tag, -1, false, NULL) >= 0;
}

/* Durably forget one block (no-op if it is not cached). */
void
ssd_cache_invalidate_block(const BufferTag *tag)
{
	uint32		hash;
	SsdLookupEnt *ent;

	if (!shared)
		return;
	hash = get_hash_value(lookup_hash, tag);
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
	if (ent != NULL)
	{
		if (ent->state == ENT_PENDING || ent->state == ENT_WRITING)
			ent->state = ENT_CANCELLED;
		else if (ent->state == ENT_VALID)
			remove_entry_locked(ent, hash, false);
	}
	LWLockRelease(PART_LOCK(hash));
}

/* Does a cached or queued tag belong to the set being invalidated? */
typedef bool (*TagFilter) (const BufferTag *tag, const void *arg);

/*
 * Invalidate every entry whose tag passes the filter: first those queued for
 * admission, then those in slots (invariant 3).
 */
static void
invalidate_matching(TagFilter filter, const void *arg)
{
	uint64		s;
	List	   *queued = ssd_cache_admit_queued_tags();
	ListCell   *lc;

	foreach(lc, queued)
	{
		BufferTag  *tag = lfirst(lc);

		if (filter(tag, arg))
			ssd_cache_invalidate_block(tag);
	}
	list_free_deep(queued);

	for (s = 0; s < shared->nslots; s++)
	{
		BufferTag	tag;

		if (!slots[s].in_use)
			continue;
		tag = slots[s].tag;		/* a racy copy; invalidate_block re-checks */
		if (filter(&tag, arg))
			ssd_cache_invalidate_block(&tag);
	}
}

typedef struct RelRange
{
	RelFileNode rnode;
	ForkNumber	fork;			/* InvalidForkNumber: all forks */
	BlockNumber first;
} RelRange;

static bool
in_rel_range(const BufferTag *tag, const void *arg)
{
	const RelRange *r = arg;

	return RelFileNodeEquals(tag->rnode, r->rnode) &&
		(r->fork == InvalidForkNumber || tag->forkNum == r->fork) &&
		tag->blockNum >= r->first;
}

/*
 * Durably forget blocks >= first of a relation fork (truncate, unlink,
 * create).  Cheap when nothing of the relation is cached.
 */
void
ssd_cache_invalidate_from(RelFileNode rnode, ForkNumber fork, BlockNumber first)
{
	RelRange	r;

	if (!shared)
		return;
	if (!ssd_cache_relation_cached(rnode) && !ssd_cache_admit_has_relation(rnode))
		return;
	r.rnode = rnode;
	r.fork = fork;
	r.first = first;
	invalidate_matching(in_rel_range, &r);
}

static bool
in_database(const BufferTag *tag, const void *arg)
{
	return tag->rnode.dbNode == *(const Oid *) arg;
}

/* Durably forget every block of a database (DROP DATABASE, SET TABLESPACE). */
void
ssd_cache_invalidate_database(Oid dbNode)
{
	if (shared)
		invalidate_matching(in_database, &dbNode);
}

/* ssd_cache_evict(regclass): forget a relation's blocks; returns how many. */
int64
ssd_cache_evict_relation(RelFileNode rnode)
{
	int64		before = ssd_cache_used_slots();

	ssd_cache_invalidate_from(rnode, InvalidForkNumber, 0);
	return before - ssd_cache_used_slots();
}

/*
 * Evict the page in slot s if it is still there, readable and unused:
 * forget it durably (write-through: the disk has it).  Admission worker
 * only.
 */
static bool
evict_slot(uint64 s)
{
	BufferTag	tag = slots[s].tag;
	uint32		hash = get_hash_value(lookup_hash, &tag);
	SsdLookupEnt *ent;

	if (!slots[s].in_use)
		return false;
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_FIND, NULL);
	if (ent == NULL || ent->state != ENT_VALID || ent->slot != (int32) s ||
		pg_atomic_read_u32(&slots[s].pins) != 0)
	{
		LWLockRelease(PART_LOCK(hash));
		return false;
	}
	persist_entry((int32) s, NULL);
	hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_REMOVE, NULL);
	LWLockRelease(PART_LOCK(hash));
	rel_count_add(tag.rnode, -1);
	ssd_cache_count(SSD_EVICTIONS, 1);
	slots[s].usage = 0;
	slots[s].gen++;
	return true;
}

static int32
take_free_slot(void)
{
	int32		slot;

	SpinLockAcquire(&shared->free_lock);
	slot = shared->free_head;
	if (slot >= 0)
		shared->free_head = slots[slot].free_next;
	SpinLockRelease(&shared->free_lock);
	if (slot < 0)
		return -1;

	/*
	 * A reader that looked the slot up just before it was invalidated may
	 * still be reading it; that takes microseconds.  Only the admission
	 * worker allocates, so waiting blocks no one else.
	 */
	while (pg_atomic_read_u32(&slots[slot].pins) != 0)
		pg_usleep(10);
	slots[slot].in_use = true;
	slots[slot].usage = 0;
	pg_atomic_fetch_add_u64(&shared->used, 1);
	return slot;
}

/* clock: the first unused, unreferenced page the hand meets. */
static int32
clock_victim(void)
{
	uint64		tries;

	for (tries = 0; tries < 2 * shared->nslots; tries++)
	{
		uint64		s = pg_atomic_fetch_add_u64(&shared->clock_hand, 1) % shared->nslots;

		if (!slots[s].in_use)
			continue;
		if (slots[s].usage)
		{
			slots[s].usage = 0;
			continue;
		}
		if (evict_slot(s))
			return (int32) s;
	}
	return -1;
}

/*
 * TAC's victim heap: a min-heap of cached slots keyed by their region's
 * temperature when last looked at.  It lives in the admission worker only
 * (the one process that admits and evicts); entries of slots that changed
 * page since (gen) are dropped when they surface.
 */
typedef struct HeapItem
{
	double		key;
	int32		slot;
	uint32		gen;
} HeapItem;

static HeapItem *heap = NULL;
static int64 heap_len = 0;
static bool heap_built = false;

static void
heap_sift_down(int64 i)
{
	for (;;)
	{
		int64		l = 2 * i + 1,
					m = i;
		HeapItem	tmp;

		if (l < heap_len && heap[l].key < heap[m].key)
			m = l;
		if (l + 1 < heap_len && heap[l + 1].key < heap[m].key)
			m = l + 1;
		if (m == i)
			return;
		tmp = heap[i];
		heap[i] = heap[m];
		heap[m] = tmp;
		i = m;
	}
}

static void heap_build(void);

static void
heap_push(double key, int32 slot)
{
	int64		i;

	if (heap == NULL)
		heap = MemoryContextAllocHuge(TopMemoryContext, sizeof(HeapItem) * (shared->nslots + 1));
	if (heap_len > (int64) shared->nslots)
	{
		/*
		 * Full of entries of slots that changed page since: rebuild from
		 * the live slots (this slot is among them), or new pages would
		 * never become victims.
		 */
		heap_build();
		return;
	}
	i = heap_len++;
	heap[i].key = key;
	heap[i].slot = slot;
	heap[i].gen = slots[slot].gen;
	while (i > 0 && heap[(i - 1) / 2].key > heap[i].key)
	{
		HeapItem	tmp = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static void
heap_pop(void)
{
	heap[0] = heap[--heap_len];
	heap_sift_down(0);
}

/* Drop entries of slots that changed page or were freed. */
static void
heap_drop_stale_top(void)
{
	while (heap_len > 0 &&
		   (!slots[heap[0].slot].in_use || slots[heap[0].slot].gen != heap[0].gen))
		heap_pop();
}

/* After a restart or a switch from clock: every cached slot, current keys. */
static void
heap_build(void)
{
	uint64		s;

	if (heap == NULL)
		heap = MemoryContextAllocHuge(TopMemoryContext, sizeof(HeapItem) * (shared->nslots + 1));
	heap_len = 0;
	for (s = 0; s < shared->nslots; s++)
		if (slots[s].in_use)
			heap_push(ssd_cache_region_temperature(&slots[s].tag), (int32) s);
	heap_built = true;
}

/* Refresh up to 5 stale keys at the top of the heap (the paper's rule). */
static void
heap_refresh_top(void)
{
	int			step;

	if (!heap_built)
		heap_build();
	for (step = 0; step < SSD_TAC_REFRESH_STEPS; step++)
	{
		double		current;

		heap_drop_stale_top();
		if (heap_len == 0)
			return;
		current = ssd_cache_region_temperature(&slots[heap[0].slot].tag);
		if (current == heap[0].key)
			break;
		heap[0].key = current;
		heap_sift_down(0);
	}
	heap_drop_stale_top();
}

/*
 * The admission worker, idle with a full cache: publish the bar from the
 * current coldest page, so that a bar set before temperatures changed
 * cannot keep refusing pages that would now pass.
 */
void
ssd_cache_refresh_admission_bar(void)
{
	if (!shared || ssd_cache_policy != SSD_POLICY_TAC || !ssd_cache_full())
		return;
	heap_refresh_top();
	if (heap_len > 0)
		ssd_cache_publish_threshold(heap[0].key * SSD_TAC_MARGIN);
}

/*
 * TAC: the coldest cached page after refreshing up to 5 stale keys, if the
 * newcomer is at least 1% warmer; evicted.  Otherwise -1, and the bar is
 * published for the backends.
 */
static int32
tac_victim(double t_new)
{
	heap_refresh_top();
	while (heap_len > 0)
	{
		HeapItem	top = heap[0];

		ssd_cache_publish_threshold(top.key * SSD_TAC_MARGIN);
		if (t_new < top.key * SSD_TAC_MARGIN)
			return -1;
		heap_pop();
		if (evict_slot(top.slot))
			return top.slot;
		heap_drop_stale_top();
	}
	return -1;
}

/*
 * Find a slot for an admission of a page whose region has temperature
 * t_new: a free one, else the policy's victim, forgotten durably first.
 * Returns -1 if the policy refuses or nothing can be evicted.
 */
static int32
allocate_slot(double t_new)
{
	int32		slot = take_free_slot();

	if (slot >= 0)
		return slot;
	if (ssd_cache_policy == SSD_POLICY_CLOCK)
	{
		heap_built = false;		/* rebuilt if TAC comes back */
		return clock_victim();
	}
	return tac_victim(t_new);
}

/*
 * Offer a page just read from disk for admission: create a PENDING entry
 * unless the tag already has one.  The caller then queues the page copy.
 */
bool
ssd_cache_offer_begin(const BufferTag *tag)
{
	uint32		hash;
	bool		found;
	SsdLookupEnt *ent;

	hash = get_hash_value(lookup_hash, tag);
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_ENTER_NULL, &found);
	if (ent == NULL || found)
	{
		LWLockRelease(PART_LOCK(hash));
		return false;
	}
	ent->slot = -1;
	ent->state = ENT_PENDING;
	LWLockRelease(PART_LOCK(hash));
	return true;
}

/* The queue could not take the page after all: drop the PENDING entry. */
void
ssd_cache_offer_abandon(const BufferTag *tag)
{
	uint32		hash = get_hash_value(lookup_hash, tag);
	SsdLookupEnt *ent;

	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
	if (ent && (ent->state == ENT_PENDING || ent->state == ENT_CANCELLED) && ent->slot < 0)
		hash_search_with_hash_value(lookup_hash, tag, hash, HASH_REMOVE, NULL);
	LWLockRelease(PART_LOCK(hash));
}

static int
compare_uint32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a,
				y = *(const uint32 *) b;

	return x < y ? -1 : x > y;
}

/*
 * Admission worker: write a batch of queued pages (O_DIRECT-aligned, in the
 * queue) into slots and validate them.  The slot writes are in flight
 * together; the validation holds the batch's partition locks (in ascending
 * order; no other process holds two) while one write per directory page
 * records the batch.  Returns how many pages were admitted.
 */
int
ssd_cache_admit_batch(int n, const BufferTag *tags, char *const *pages)
{
	int32		slotno[SSD_CACHE_WRITE_BATCH];
	uint32		hash[SSD_CACHE_WRITE_BATCH];
	double		temp[SSD_CACHE_WRITE_BATCH];
	bool		ok[SSD_CACHE_WRITE_BATCH];
	uint32		lockno[SSD_CACHE_WRITE_BATCH];
	int32		persist_slots[SSD_CACHE_WRITE_BATCH];
	const BufferTag *persist_tags[SSD_CACHE_WRITE_BATCH];
	SsdLookupEnt *ents[SSD_CACHE_WRITE_BATCH];
	int			i,
				nlocks = 0,
				npersist = 0,
				admitted = 0,
				failed_errno;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	if (ssd_cache_degraded())
	{
		for (i = 0; i < n; i++)
			ssd_cache_offer_abandon(&tags[i]);
		return 0;
	}

	/* 1. A slot for each page (or a refusal); PENDING -> WRITING. */
	for (i = 0; i < n; i++)
	{
		SsdLookupEnt *ent;

		hash[i] = get_hash_value(lookup_hash, &tags[i]);
		temp[i] = ssd_cache_region_temperature(&tags[i]);
		slotno[i] = allocate_slot(temp[i]);

		LWLockAcquire(PART_LOCK(hash[i]), LW_EXCLUSIVE);
		ent = hash_search_with_hash_value(lookup_hash, &tags[i], hash[i], HASH_FIND, NULL);
		if (ent == NULL || ent->state != ENT_PENDING || slotno[i] < 0)
		{
			if (ent)
				hash_search_with_hash_value(lookup_hash, &tags[i], hash[i], HASH_REMOVE, NULL);
			LWLockRelease(PART_LOCK(hash[i]));
			if (slotno[i] >= 0)
				free_slot(slotno[i]);
			slotno[i] = -1;
			ssd_cache_count(SSD_REFUSALS, 1);
			continue;
		}
		ent->state = ENT_WRITING;
		ent->slot = slotno[i];
		slots[slotno[i]].tag = tags[i];
		slots[slotno[i]].usage = 0;
		LWLockRelease(PART_LOCK(hash[i]));
		rel_count_add(tags[i].rnode, 1);
		lockno[nlocks++] = hash[i] % SSD_NUM_PARTITIONS;
	}
	if (nlocks == 0)
		return 0;

	/* 2. All slot writes in flight together. */
	ssd_cache_file_write_slots(n, slotno, pages, ok, &failed_errno);
	for (i = 0; i < n; i++)
		if (slotno[i] >= 0 && !ok[i])
		{
			errno = failed_errno;
			ssd_cache_note_error("SSD admission write", &tags[i]);
		}

	/* 3. WRITING -> VALID, durably, unless cancelled meanwhile. */
	qsort(lockno, nlocks, sizeof(uint32), compare_uint32);
	for (i = 0; i < nlocks; i++)
		if (i == 0 || lockno[i] != lockno[i - 1])
			LWLockAcquire(&locks[lockno[i]].lock, LW_EXCLUSIVE);
	for (i = 0; i < n; i++)
	{
		if (slotno[i] < 0)
			continue;
		ents[i] = hash_search_with_hash_value(lookup_hash, &tags[i], hash[i], HASH_FIND, NULL);
		Assert(ents[i] != NULL && ents[i]->slot == slotno[i]);
		if (ok[i] && ents[i]->state == ENT_WRITING)
		{
			persist_slots[npersist] = slotno[i];
			persist_tags[npersist++] = &tags[i];
		}
		else
			ok[i] = false;
	}
	if (npersist > 0)
		persist_entries(npersist, persist_slots, persist_tags);
	for (i = 0; i < n; i++)
	{
		if (slotno[i] < 0)
			continue;
		if (ok[i])
			ents[i]->state = ENT_VALID;
		else
			hash_search_with_hash_value(lookup_hash, &tags[i], hash[i], HASH_REMOVE, NULL);
	}
	for (i = nlocks; i-- > 0;)
		if (i == 0 || lockno[i] != lockno[i - 1])
			LWLockRelease(&locks[lockno[i]].lock);

	for (i = 0; i < n; i++)
	{
		if (slotno[i] < 0)
			continue;
		if (ok[i])
		{
			if (ssd_cache_policy == SSD_POLICY_TAC && heap_built)
				heap_push(temp[i], slotno[i]);
			admitted++;
		}
		else
		{
			rel_count_add(tags[i].rnode, -1);
			free_slot(slotno[i]);
			ssd_cache_count(SSD_REFUSALS, 1);
		}
	}
	ssd_cache_count(SSD_ADMISSIONS, admitted);
	ssd_cache_count(SSD_SSD_WRITES, admitted);
	return admitted;
}

/*
 * Compare every cached page with its disk copy.  In write-through mode they
 * must be identical whenever no write is in flight, so on a quiet server a
 * mismatch means the cache would serve a wrong page.  Mismatches are logged
 * (the first few) and counted.
 */
void
ssd_cache_verify(int64 *checked, int64 *mismatched)
{
	uint64		s;
	char	   *disk = palloc(BLCKSZ);

	*checked = *mismatched = 0;
	if (!shared)
		return;
	for (s = 0; s < shared->nslots; s++)
	{
		BufferTag	tag;
		SMgrRelation reln;
		char	   *buf;
		const char *problem = NULL;

		CHECK_FOR_INTERRUPTS();
		if (!slots[s].in_use)
			continue;
		tag = slots[s].tag;		/* a racy copy; find_valid re-checks */
		if (find_valid(&tag, (int32) s, true, NULL) < 0)
			continue;

		buf = process_io_buffer();
		reln = smgropen(tag.rnode, InvalidBackendId);
		if (!ssd_cache_file_read_slot(s, buf))
			problem = "the slot could not be read";
		else if (!mdexists(reln, tag.forkNum))
			problem = "the relation file does not exist";
		else if (tag.blockNum >= mdnblocks(reln, tag.forkNum))
			problem = "the block is beyond the end of the relation";
		else
		{
			mdread(reln, tag.forkNum, tag.blockNum, disk);
			if (memcmp(buf, disk, BLCKSZ) != 0)
				problem = "the cached page differs from the disk";
		}
		pg_atomic_fetch_sub_u32(&slots[s].pins, 1);

		(*checked)++;
		if (problem)
		{
			(*mismatched)++;
			if (*mismatched <= 10)
				ereport(WARNING,
						(errmsg("ssd_cache_verify: slot " UINT64_FORMAT ", block %u of relation %u/%u/%u: %s",
								s, tag.blockNum, tag.rnode.spcNode, tag.rnode.dbNode,
								tag.rnode.relNode, problem)));
		}
	}
	pfree(disk);
}

/* Blocks cached per relation of a database, for ssd_cache_relations. */
List *
ssd_cache_relation_counts(Oid dbNode)
{
	List	   *result = NIL;
	HASH_SEQ_STATUS seq;
	SsdRelEnt  *re;

	if (!shared)
		return NIL;
	LWLockAcquire(REL_LOCK, LW_SHARED);
	hash_seq_init(&seq, rel_hash);
	while ((re = hash_seq_search(&seq)) != NULL)
	{
		if (re->rnode.dbNode == dbNode)
		{
			SsdCacheRelCount *rc = palloc(sizeof(SsdCacheRelCount));

			rc->rnode = re->rnode;
			rc->blocks = re->blocks;
			rc->hits = (int64) pg_atomic_read_u64(&re->hits);
			rc->misses = (int64) pg_atomic_read_u64(&re->misses);
			result = lappend(result, rc);
		}
	}
	LWLockRelease(REL_LOCK);
	return result;
}

Size
ssd_cache_directory_shmem_size(uint64 nslots)
{
	Size		size = MAXALIGN(sizeof(SsdCacheShared));

	size = add_size(size, mul_size(nslots, sizeof(SsdSlot)));
	size = add_size(size, mul_size(TYPEALIGN(SSD_DIR_ENTRIES_PER_PAGE, nslots), sizeof(SsdCacheDirEntry)));
	size = add_size(size, SSD_DIR_PAGE_SIZE);
	size = add_size(size, hash_estimate_size(nslots + SSD_ADMIT_QUEUE_MAX, sizeof(SsdLookupEnt)));
	size = add_size(size, hash_estimate_size(Max(nslots / 16, 1024), sizeof(SsdRelEnt)));
	size = add_size(size, ssd_cache_policy_shmem_size(nslots));
	return size;
}

/*
 * The preparation phase: in the postmaster, before any process reads a
 * page, open the cache file and rebuild the shared directory from the
 * persistent one (or start empty when it cannot be trusted).
 */
void
ssd_cache_directory_shmem_init(const char *path, uint64 nslots)
{
	HASHCTL		info;
	bool		found;
	SsdCacheLayout layout;
	uint32		epoch;
	char	   *why_empty;
	bool		trusted;
	instr_time	start,
				duration;
	uint64		s,
				loaded = 0,
				dropped = 0;
	char	   *raw;
	char	   *mirror_bytes;

	INSTR_TIME_SET_CURRENT(start);

	shared = ShmemInitStruct("ssd_cache directory", sizeof(SsdCacheShared), &found);
	slots = ShmemInitStruct("ssd_cache slots", mul_size(nslots, sizeof(SsdSlot)), &found);
	raw = ShmemInitStruct("ssd_cache directory mirror",
						  mul_size(TYPEALIGN(SSD_DIR_ENTRIES_PER_PAGE, nslots), sizeof(SsdCacheDirEntry)) + SSD_DIR_PAGE_SIZE,
						  &found);
	mirror_bytes = (char *) TYPEALIGN(SSD_DIR_PAGE_SIZE, raw);
	mirror = (SsdCacheDirEntry *) mirror_bytes;
	locks = GetNamedLWLockTranche("ssd_cache");
	ssd_cache_policy_shmem_init(nslots, &locks[SSD_NUM_PARTITIONS + SSD_NUM_DIR_LOCKS + 1]);

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(BufferTag);
	info.entrysize = sizeof(SsdLookupEnt);
	info.num_partitions = SSD_NUM_PARTITIONS;
	lookup_hash = ShmemInitHash("ssd_cache lookup", nslots + SSD_ADMIT_QUEUE_MAX,
								nslots + SSD_ADMIT_QUEUE_MAX, &info,
								HASH_ELEM | HASH_BLOBS | HASH_PARTITION);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(RelFileNode);
	info.entrysize = sizeof(SsdRelEnt);
	rel_hash = ShmemInitHash("ssd_cache relations", Max(nslots / 16, 1024),
							 Max(nslots / 16, 1024), &info, HASH_ELEM | HASH_BLOBS);

	memset(shared, 0, sizeof(SsdCacheShared));
	shared->nslots = nslots;
	SpinLockInit(&shared->free_lock);
	for (s = 0; s < SSD_NCOUNTERS; s++)
		pg_atomic_init_u64(&shared->counters[s], 0);
	pg_atomic_init_u64(&shared->used, 0);
	pg_atomic_init_u64(&shared->clock_hand, 0);
	pg_atomic_init_u32(&shared->degraded, 0);
	SpinLockInit(&shared->error_lock);

	ssd_cache_layout(nslots, &layout);
	trusted = ssd_cache_file_startup(path, &layout, &epoch, &why_empty);
	shared->epoch = epoch;

	/* Load the persistent directory into the mirror. */
	memset(mirror, 0, TYPEALIGN(SSD_DIR_ENTRIES_PER_PAGE, nslots) * sizeof(SsdCacheDirEntry));
	if (trusted && !ssd_cache_file_read_dir(0, layout.dir_pages, mirror_bytes))
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not read the ssd_cache directory from \"%s\": %m", path),
				 errhint("Remove the cache file to start with an empty cache.")));

	shared->free_head = -1;
	for (s = nslots; s-- > 0;)
	{
		SsdCacheDirEntry *e = &mirror[s];

		pg_atomic_init_u32(&slots[s].pins, 0);
		slots[s].usage = 0;
		slots[s].gen = 0;
		if (trusted && ssd_cache_dir_entry_ok(e, epoch))
		{
			BufferTag	tag;
			SsdLookupEnt *ent;

			memset(&tag, 0, sizeof(tag));
			tag.rnode.spcNode = e->spcNode;
			tag.rnode.dbNode = e->dbNode;
			tag.rnode.relNode = e->relNode;
			tag.forkNum = (ForkNumber) e->forkNum;
			tag.blockNum = e->blockNum;
			ent = hash_search(lookup_hash, &tag, HASH_ENTER, &found);
			if (!found)
			{
				ent->slot = (int32) s;
				ent->state = ENT_VALID;
				slots[s].tag = tag;
				slots[s].in_use = true;
				pg_atomic_fetch_add_u64(&shared->used, 1);
				rel_count_add(tag.rnode, 1);
				loaded++;
				continue;
			}
			/* Two slots claim one page: trust neither. */
			dropped++;
		}
		memset(e, 0, sizeof(*e));
		slots[s].in_use = false;
		slots[s].free_next = shared->free_head;
		shared->free_head = (int32) s;
	}

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	shared->preparation_ms = INSTR_TIME_GET_MILLISEC(duration);
	if (why_empty)
		ereport(LOG,
				(errmsg("ssd_cache: starting with an empty cache in \"%s\" because %s",
						path, why_empty)));
	ereport(LOG,
			(errmsg("ssd_cache: preparation phase loaded " UINT64_FORMAT " of " UINT64_FORMAT
					" cached pages in %.1f ms" "%s",
					loaded, nslots, shared->preparation_ms,
					dropped ? " (dropped duplicate entries)" : "")));
}
