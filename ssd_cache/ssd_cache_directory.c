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
 *	   relation-count lock; never the reverse.  A process may hold several
 *	   directory-page locks only without a partition lock, taken in
 *	   ascending lock order (batched invalidation).
 *	5. Nothing that can raise an ERROR runs while a slot is pinned: a pin
 *	   left behind would stall the admission worker for good.
 *
 * Invalidation of many blocks at once (DROP, TRUNCATE, a database move)
 * clears the entries in memory, then writes the directory pages they
 * touched in a few large writes, and only then frees their slots; so it
 * costs one durability point per 16384 blocks instead of one per block.
 *
 * After a crash the loaded contents are not read until the WAL replayed in
 * this data directory covers them (ssd_cache_file.c, "Trust"); if it never
 * does they are all discarded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

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
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_slots.h"

#define SSD_NUM_PARTITIONS	128
#define SSD_NUM_DIR_LOCKS	128

/* Lock tranche layout: partitions, directory pages, relation counts,
 * the file header, then the policy's. */
#define SSD_REL_LOCK_INDEX		(SSD_NUM_PARTITIONS + SSD_NUM_DIR_LOCKS)
#define SSD_HEADER_LOCK_INDEX	(SSD_REL_LOCK_INDEX + 1)
#define SSD_POLICY_LOCK_INDEX	(SSD_HEADER_LOCK_INDEX + 1)

/* Blocks a batched invalidation clears before making them durable. */
#define SSD_INVAL_CHUNK			16384

/* Longest single write of consecutive directory pages (256 kB). */
#define SSD_DIR_RUN_PAGES		64

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
	pg_atomic_uint64 counters[SSD_NCOUNTERS];
	pg_atomic_uint64 used;
	slock_t		free_lock;
	int32		free_head;
	double		preparation_ms;
} SsdCacheShared;

static SsdCacheShared *shared = NULL;
static SsdSlot *slots = NULL;

SsdSlot    *ssd_cache_slot_array = NULL;
uint64		ssd_cache_slot_count = 0;
static SsdCacheDirEntry *mirror = NULL;
static HTAB *lookup_hash = NULL;
static HTAB *rel_hash = NULL;
static LWLockPadded *locks = NULL;
static char *io_buf = NULL;		/* this process's O_DIRECT buffer */

#define PART_LOCK(h)	(&locks[(h) % SSD_NUM_PARTITIONS].lock)
#define DIR_LOCK(p)		(&locks[SSD_NUM_PARTITIONS + (p) % SSD_NUM_DIR_LOCKS].lock)
#define REL_LOCK		(&locks[SSD_REL_LOCK_INDEX].lock)

static void persist_entry(int32 slot, const BufferTag *tag);
static char *process_io_buffer(void);
static int32 find_valid(const BufferTag *tag, int32 want_slot, bool pin, bool *present);
static void remove_entry_locked(SsdLookupEnt *ent, uint32 hash, bool count_eviction);

int
ssd_cache_directory_lwlocks(void)
{
	return SSD_POLICY_LOCK_INDEX + SSD_POLICY_NUM_PARTITIONS;
}

/* Is the cache running (possibly in pass-through or still verifying)? */
bool
ssd_cache_enabled(void)
{
	return shared != NULL;
}

/* May slots be written (admissions, overwrites)? */
static bool
cache_writable(void)
{
	return shared != NULL && !ssd_cache_bypassed();
}

static void discard_everything(void);

/*
 * May the cache be read?  After a crash, only once WAL replay covers its
 * contents; if recovery ended without that, this call discards them.
 */
static bool
cache_readable(void)
{
	if (!cache_writable())
		return false;
	switch (ssd_cache_file_verification())
	{
		case SSD_VERIFIED:
			return true;
		case SSD_VERIFY_PENDING:
			return false;
		case SSD_VERIFY_REFUTED:
			discard_everything();
			ssd_cache_file_end_discard();
			return cache_writable();
	}
	return false;
}

/* For the views: is the cache still waiting for WAL replay? */
bool
ssd_cache_verifying(void)
{
	return cache_writable() && ssd_cache_file_verifying();
}

/*
 * While the cache is being verified after a crash, a read went to the disk:
 * if a slot holds the block, it must hold the disk's image.  A crash between
 * a disk write and the overwrite of its slot leaves the slot older.  With
 * full_page_writes redo rewrites such a page from its full-page image, but
 * without them redo finds the disk's copy up to date, leaves it clean, and
 * the slot would be served once verified.  Every such page is read by redo
 * (its last change is after the checkpoint redo starts from), so comparing
 * page LSNs here catches each one.
 */
void
ssd_cache_recheck_after_crash(const BufferTag *tag, const char *disk_page)
{
	char	   *buf;
	int32		slot;
	bool		same;

	if (!cache_writable() || !ssd_cache_file_verifying())
		return;
	buf = process_io_buffer();
	slot = find_valid(tag, -1, true, NULL);
	if (slot < 0)
		return;
	same = ssd_cache_file_read_slot(slot, buf) &&
		PageGetLSN((Page) buf) == PageGetLSN((Page) disk_page);
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
	if (!same)
		ssd_cache_invalidate_block(tag);
}

/* Has the block an entry, readable or not (extension past the end)? */
bool
ssd_cache_has_entry(const BufferTag *tag)
{
	bool		present = false;

	if (shared)
		(void) find_valid(tag, -1, false, &present);
	return present;
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
	ssd_cache_reset_error_count();
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
	/* Static, not palloc'd: this runs in critical sections too. */
	static char raw[BLCKSZ * 2];

	if (io_buf == NULL)
		io_buf = (char *) TYPEALIGN(BLCKSZ, raw);
	return io_buf;
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
 * A directory write failed: the persistent directory may now call a slot
 * valid that is not.  Stop using the cache; disowning the file makes sure
 * the next start does not trust it either.
 */
static void
give_up_header(void)
{
	char		why[256];

	snprintf(why, sizeof(why), "the cache file header could not be written: %s", strerror(errno));
	ssd_cache_give_up(why);
}

static void
give_up_directory(void)
{
	char		why[256];

	snprintf(why, sizeof(why), "the cache directory could not be updated: %s", strerror(errno));
	ssd_cache_give_up(why);
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
		ok = ssd_cache_bypassed() ||
			ssd_cache_file_write_dir_pages(dirpage, 1,
										   (char *) &mirror[dirpage * SSD_DIR_ENTRIES_PER_PAGE]);
		LWLockRelease(DIR_LOCK(dirpage));

		ssd_cache_count(SSD_DIR_WRITES, 1);
		if (!ok)
			give_up_directory();
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

	if (!cache_readable())
		return false;

	/* Everything that can fail comes before the pin (invariant 5). */
	buf = process_io_buffer();
	slot = find_valid(tag, -1, true, NULL);
	if (slot < 0)
	{
		ssd_cache_count(SSD_MISSES, 1);
		rel_count_access(tag->rnode, false);
		return false;
	}
	slots[slot].usage = 1;

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
		ssd_cache_io_error("SSD read", tag);
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
	bool		ok;
	char	   *buf;

	if (!shared || ssd_cache_bypassed())
		return;
	buf = process_io_buffer();
	slot = find_valid(tag, -1, true, &present);
	if (!present)
		return;
	if (slot < 0)
	{
		/* Not readable yet: forget it; nothing is pinned. */
		ssd_cache_invalidate_block(tag);
		return;
	}

	/*
	 * The buffer manager never writes a block while another process reads or
	 * writes the same block, so nobody else touches this slot's contents.
	 * The header must cover the WAL this image depends on before it lands.
	 */
	memcpy(buf, buffer, BLCKSZ);
	if (ssd_cache_fault_enabled("die_before_slot_write"))
		kill(MyProcPid, SIGKILL);	/* test only: the crash window of write-through */
	if (!ssd_cache_file_cover_wal())
	{
		pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
		give_up_header();
		return;
	}
	ok = ssd_cache_file_write_slot(slot, buf);
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
	if (ok)
	{
		ssd_cache_count(SSD_OVERWRITES, 1);
		ssd_cache_count(SSD_SSD_WRITES, 1);
	}
	else
	{
		ssd_cache_io_error("SSD write", tag);
		ssd_cache_invalidate_block(tag);
	}
}

/* Is the block cached (readable now)? */
bool
ssd_cache_contains(const BufferTag *tag)
{
	if (!cache_readable())
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

static int
compare_uint32(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a,
				y = *(const uint32 *) b;

	return x < y ? -1 : x > y;
}

/*
 * Write the directory pages marked in "dirty" (a bitmap over directory
 * pages), consecutive pages in one write, each page under its lock so no
 * older copy of it can overtake a newer one.
 */
static void
write_dirty_dir_pages(uint8 *dirty, uint64 npages)
{
	uint64		p = 0;

	while (p < npages)
	{
		uint64		first,
					n,
					i;
		bool		ok;
		uint32		lockno[SSD_DIR_RUN_PAGES];
		int			nlocks = 0;

		if (!(dirty[p / 8] & (1 << (p % 8))))
		{
			p++;
			continue;
		}
		first = p;
		while (p < npages && p - first < SSD_DIR_RUN_PAGES &&
			   (dirty[p / 8] & (1 << (p % 8))))
		{
			dirty[p / 8] &= ~(1 << (p % 8));
			p++;
		}
		n = p - first;

		/* A run of at most 64 pages maps to distinct locks; ascending order. */
		for (i = 0; i < n; i++)
			lockno[nlocks++] = (first + i) % SSD_NUM_DIR_LOCKS;
		qsort(lockno, nlocks, sizeof(uint32), compare_uint32);
		for (i = 0; i < nlocks; i++)
			LWLockAcquire(&locks[SSD_NUM_PARTITIONS + lockno[i]].lock, LW_EXCLUSIVE);
		ok = ssd_cache_bypassed() ||
			ssd_cache_file_write_dir_pages(first, n,
										   (char *) &mirror[first * SSD_DIR_ENTRIES_PER_PAGE]);
		for (i = nlocks; i-- > 0;)
			LWLockRelease(&locks[SSD_NUM_PARTITIONS + lockno[i]].lock);
		ssd_cache_count(SSD_DIR_WRITES, 1);
		if (!ok)
			give_up_directory();
	}
}

/*
 * A batch of invalidated slots: their entries are gone from the hash and
 * cleared in the mirror, but the slots stay in use (so nothing reuses
 * them) until the directory pages are durable.
 */
typedef struct InvalBatch
{
	int			n;
	int32		slot[SSD_INVAL_CHUNK];
	uint8	   *dirty;			/* bitmap over directory pages, or NULL */
} InvalBatch;

static void
inval_batch_flush(InvalBatch *b)
{
	int			i;

	if (b->dirty)
		write_dirty_dir_pages(b->dirty, (shared->nslots + SSD_DIR_ENTRIES_PER_PAGE - 1) /
							  SSD_DIR_ENTRIES_PER_PAGE);
	for (i = 0; i < b->n; i++)
	{
		rel_count_add(slots[b->slot[i]].tag.rnode, -1);
		free_slot(b->slot[i]);
	}
	ssd_cache_count(SSD_INVALIDATIONS, b->n);
	b->n = 0;
}

/*
 * Forget the block in slot s if its tag passes the filter, as part of a
 * batch.  An entry that is not readable yet is cancelled (the admission
 * worker drops it).
 */
static void
inval_batch_add(InvalBatch *b, uint64 s, TagFilter filter, const void *arg)
{
	BufferTag	tag = slots[s].tag; /* a racy copy; re-checked under the lock */
	uint32		hash;
	SsdLookupEnt *ent;
	bool		take = false;

	if (!filter(&tag, arg))
		return;
	hash = get_hash_value(lookup_hash, &tag);
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_FIND, NULL);
	if (ent != NULL && ent->slot == (int32) s)
	{
		if (ent->state == ENT_PENDING || ent->state == ENT_WRITING)
			ent->state = ENT_CANCELLED;
		else if (ent->state == ENT_VALID)
		{
			if (b->dirty == NULL)
				persist_entry((int32) s, NULL);
			else
			{
				uint64		p = s / SSD_DIR_ENTRIES_PER_PAGE;

				LWLockAcquire(DIR_LOCK(p), LW_EXCLUSIVE);
				memset(&mirror[s], 0, sizeof(SsdCacheDirEntry));
				LWLockRelease(DIR_LOCK(p));
				b->dirty[p / 8] |= 1 << (p % 8);
			}
			hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_REMOVE, NULL);
			take = true;
		}
	}
	LWLockRelease(PART_LOCK(hash));
	if (take)
	{
		b->slot[b->n++] = (int32) s;
		if (b->n == SSD_INVAL_CHUNK)
			inval_batch_flush(b);
	}
}

/*
 * Invalidate every entry whose tag passes the filter: first those queued for
 * admission, then those in slots (invariant 3).  Nothing here allocates or
 * raises an error: it runs inside 15.x's truncation critical section.
 */
static void
invalidate_matching(TagFilter filter, const void *arg)
{
	static InvalBatch batch;	/* 64 kB: not on the stack */
	static uint8 *dirty = NULL;
	BufferTag	queued[SSD_ADMIT_QUEUE_MAX];
	int			nqueued,
				i;
	uint64		s;

	nqueued = ssd_cache_admit_queued_tags(queued);
	for (i = 0; i < nqueued; i++)
		if (filter(&queued[i], arg))
			ssd_cache_invalidate_block(&queued[i]);

	/* malloc, not palloc: no error in a critical section; NULL is fine. */
	if (dirty == NULL)
		dirty = calloc((shared->nslots / SSD_DIR_ENTRIES_PER_PAGE) / 8 + 1, 1);
	batch.n = 0;
	batch.dirty = dirty;
	for (s = 0; s < shared->nslots; s++)
		if (slots[s].in_use)
			inval_batch_add(&batch, s, filter, arg);
	inval_batch_flush(&batch);
}

static bool
everything(const BufferTag *tag, const void *arg)
{
	return true;
}

/* After a crash, the WAL refuted the cache: forget every page. */
static void
discard_everything(void)
{
	invalidate_matching(everything, NULL);
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

/*
 * A slot from the free list, or -1.  A reader that looked the slot up just
 * before it was invalidated may still be reading it, which takes
 * microseconds; a slot still pinned after that is put back for later
 * rather than waited for (a wait here would hold up shutdown).
 */
static int32
take_free_slot(void)
{
	int32		slot;
	int			waits;

	SpinLockAcquire(&shared->free_lock);
	slot = shared->free_head;
	if (slot >= 0)
		shared->free_head = slots[slot].free_next;
	SpinLockRelease(&shared->free_lock);
	if (slot < 0)
		return -1;

	for (waits = 0; pg_atomic_read_u32(&slots[slot].pins) != 0; waits++)
	{
		if (waits == 1000)
		{
			SpinLockAcquire(&shared->free_lock);
			slots[slot].free_next = shared->free_head;
			shared->free_head = slot;
			SpinLockRelease(&shared->free_lock);
			return -1;
		}
		pg_usleep(10);
	}
	slots[slot].in_use = true;
	slots[slot].usage = 0;
	pg_atomic_fetch_add_u64(&shared->used, 1);
	return slot;
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
	int			tries;

	if (slot >= 0 || pg_atomic_read_u64(&shared->used) < shared->nslots)
		return slot;
	for (tries = 0; tries < 64; tries++)
	{
		slot = ssd_cache_next_victim(t_new);
		if (slot < 0)
			return -1;
		if (evict_slot(slot))
			return slot;
	}
	return -1;
}

/* The admission worker, idle: see ssd_cache_refresh_admission_bar. */
void
ssd_cache_idle(void)
{
	if (cache_writable())
	{
		(void) cache_readable();	/* settles verification after a crash */
		ssd_cache_refresh_admission_bar(ssd_cache_full());
	}
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
	if (!cache_writable())
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

	/*
	 * 2. All slot writes in flight together, once the header covers the WAL
	 * these images may depend on.
	 */
	if (!ssd_cache_file_cover_wal())
	{
		give_up_header();
		memset(ok, 0, sizeof(ok));
	}
	else
	{
		ssd_cache_file_write_slots(n, slotno, pages, ok, &failed_errno);
		for (i = 0; i < n; i++)
			if (slotno[i] >= 0 && !ok[i])
			{
				errno = failed_errno;
				ssd_cache_io_error("SSD admission write", &tags[i]);
			}
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
			ssd_cache_victim_admitted(slotno[i], temp[i]);
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
	if (!cache_readable())
		return;
	for (s = 0; s < shared->nslots; s++)
	{
		BufferTag	tag;
		SMgrRelation reln;
		char	   *buf = process_io_buffer();
		const char *problem = NULL;

		CHECK_FOR_INTERRUPTS();
		if (!slots[s].in_use)
			continue;
		tag = slots[s].tag;		/* a racy copy; find_valid re-checks */
		if (find_valid(&tag, (int32) s, false, NULL) < 0)
			continue;

		/* The disk first: md.c may raise errors, which a pin must not see. */
		reln = smgropen(tag.rnode, InvalidBackendId);
		if (!mdexists(reln, tag.forkNum))
			problem = "the relation file does not exist";
		else if (tag.blockNum >= mdnblocks(reln, tag.forkNum))
			problem = "the block is beyond the end of the relation";
		else
			mdread(reln, tag.forkNum, tag.blockNum, disk);

		if (find_valid(&tag, (int32) s, true, NULL) < 0)
			continue;
		if (!ssd_cache_file_read_slot(s, buf))
			problem = "the slot could not be read";
		else if (problem == NULL && memcmp(buf, disk, BLCKSZ) != 0)
			problem = "the cached page differs from the disk";
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
	char	   *reason;
	SsdCacheTrust trust;
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
	ssd_cache_policy_shmem_init(nslots, &locks[SSD_POLICY_LOCK_INDEX]);

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

	ssd_cache_layout(nslots, &layout);
	trust = ssd_cache_file_startup(path, &layout, &locks[SSD_HEADER_LOCK_INDEX].lock,
								   &epoch, &reason);
	if (trust == SSD_TRUST_OFF)
	{
		/* Every process forked from here on sees no cache. */
		shared = NULL;
		ssd_cache_set_off(reason);
		return;
	}
	shared->epoch = epoch;
	ssd_cache_slot_array = slots;
	ssd_cache_slot_count = nslots;

	/* Load the persistent directory into the mirror. */
	memset(mirror, 0, TYPEALIGN(SSD_DIR_ENTRIES_PER_PAGE, nslots) * sizeof(SsdCacheDirEntry));
	trusted = trust == SSD_TRUST_FULL || trust == SSD_TRUST_AFTER_REPLAY;
	if (trusted && !ssd_cache_file_read_dir(0, layout.dir_pages, mirror_bytes))
	{
		/* Nothing is served from an unreadable directory. */
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not read the cache directory from \"%s\": %m", path)));
		memset(mirror, 0, TYPEALIGN(SSD_DIR_ENTRIES_PER_PAGE, nslots) * sizeof(SsdCacheDirEntry));
		ssd_cache_give_up("the cache directory could not be read at startup");
		trusted = false;
	}

	shared->free_head = -1;
	for (s = 0; s < nslots; s++)
	{
		pg_atomic_init_u32(&slots[s].pins, 0);
		slots[s].usage = 0;
		slots[s].gen = 0;
		slots[s].in_use = false;
	}
	for (s = nslots; s-- > 0;)
	{
		SsdCacheDirEntry *e = &mirror[s];

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
				continue;
			}

			/*
			 * Two slots claim one page (a crash between an invalidation and
			 * its durable write, then a new admission): trust neither.
			 */
			memset(&mirror[ent->slot], 0, sizeof(SsdCacheDirEntry));
			slots[ent->slot].in_use = false;
			hash_search(lookup_hash, &tag, HASH_REMOVE, NULL);
			dropped += 2;
		}
		memset(e, 0, sizeof(*e));
	}
	for (s = nslots; s-- > 0;)
	{
		if (slots[s].in_use)
		{
			pg_atomic_fetch_add_u64(&shared->used, 1);
			rel_count_add(slots[s].tag.rnode, 1);
			loaded++;
			continue;
		}
		slots[s].free_next = shared->free_head;
		shared->free_head = (int32) s;
	}

	ssd_cache_file_close();

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	shared->preparation_ms = INSTR_TIME_GET_MILLISEC(duration);
	if (trust == SSD_TRUST_EMPTY)
		ereport(LOG,
				(errmsg("ssd_cache: starting with an empty cache in \"%s\" because %s",
						path, reason)));
	ereport(LOG,
			(errmsg("ssd_cache: preparation phase loaded " UINT64_FORMAT " of " UINT64_FORMAT
					" cached pages in %.1f ms%s%s",
					loaded, nslots, shared->preparation_ms,
					dropped ? " (dropped duplicate entries)" : "",
					trust == SSD_TRUST_AFTER_REPLAY ?
					"; after a crash they are served once WAL replay covers them" : "")));
}
