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
 *	   partition lock of the tag concerned, or while its lookup entry is
 *	   busy (evictions in a batch, write-backs), which every other change
 *	   waits for.  So an invalidation can never be overtaken by a late
 *	   validation of the same entry.
 *	3. A PENDING entry's tag stays in the admission queue until the entry
 *	   leaves PENDING; a WRITING or VALID entry's tag is in its slot.  So a
 *	   scan of the queue then the slots finds every entry of a relation.
 *	4. Lock order: partition lock, then directory-page lock, then the
 *	   relation-count lock; never the reverse.  Several directory-page locks
 *	   are taken in ascending lock order (batched invalidation, the admission
 *	   worker's batches, which may hold partition locks: no holder of a
 *	   directory-page lock waits for a partition lock).
 *	5. Nothing that can raise an ERROR runs while a slot is pinned: a pin
 *	   left behind would stall the admission worker for good.
 *
 * Invalidation of many blocks at once (DROP, TRUNCATE, a database move)
 * clears the entries in memory, then writes the directory pages they
 * touched in a few large writes, and only then frees their slots; so it
 * costs one durability point per 16384 blocks instead of one per block.
 * The admission worker evicts and admits up to 32 pages at a time, their
 * directory pages written in parallel (io_uring): one wait per batch, not
 * one per page, which is what limits admissions on a fast disk.
 *
 * After a crash the loaded contents are not read until the WAL replayed in
 * this data directory covers them (ssd_cache_file.c, "Trust"); if it never
 * does they are all discarded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <sys/stat.h>

#include "access/xlog.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "postmaster/bgwriter.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/checksum.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/md.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_disk.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_slots.h"

#define SSD_NUM_PARTITIONS	128
#define SSD_NUM_DIR_LOCKS	128

/* Lock tranche layout: partitions, directory pages, relation counts,
 * the file header, write-back arming, then the policy's. */
#define SSD_REL_LOCK_INDEX		(SSD_NUM_PARTITIONS + SSD_NUM_DIR_LOCKS)
#define SSD_HEADER_LOCK_INDEX	(SSD_REL_LOCK_INDEX + 1)
#define SSD_ARM_LOCK_INDEX		(SSD_HEADER_LOCK_INDEX + 1)
#define SSD_POLICY_LOCK_INDEX	(SSD_ARM_LOCK_INDEX + 1)

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
	bool		fresher;		/* write-back: the slot is newer than the disk */
	bool		busy;			/* being written back: not to be removed, and
								 * no write of the page may start */
} SsdLookupEnt;

typedef struct SsdRelEnt
{
	RelFileNode rnode;			/* hash key */
	int64		blocks;			/* WRITING or VALID entries */
	pg_atomic_uint64 hits;		/* reads served from the SSD */
	pg_atomic_uint64 misses;	/* reads that went to disk while some of
								 * the relation was cached */
} SsdRelEnt;

/*
 * Victims fresher than the disk that the admission worker hands to the
 * cleaner process instead of writing them back itself (PC2's background
 * cleaner): the worker must not wait for the disk while reads wait for
 * admission.  A ring of slot numbers; a request's ticket is its position,
 * and "done" is the ticket up to which the cleaner has finished.
 */
#define SSD_CLEAN_RING	1024

typedef struct SsdCleanRing
{
	slock_t		lock;
	Latch	   *cleaner;		/* NULL: no cleaner running */
	uint64		pushed;
	uint64		taken;
	int			batch;			/* the most the cleaner takes at once */
	pg_atomic_uint64 done;
	int32		slotnos[SSD_CLEAN_RING];
} SsdCleanRing;

typedef struct SsdCacheShared
{
	uint64		nslots;
	uint32		epoch;
	pg_atomic_uint64 counters[SSD_NCOUNTERS];
	pg_atomic_uint64 used;
	pg_atomic_uint64 fresher;	/* entries with fresher set */
	slock_t		free_lock;
	int32		free_head;
	double		preparation_ms;
	SsdCleanRing clean;
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
#define ARM_LOCK		(&locks[SSD_ARM_LOCK_INDEX].lock)

static void persist_entry(int32 slot, const BufferTag *tag, SsdCacheCounter occasion);
static char *process_io_buffer(void);
static int32 find_valid(const BufferTag *tag, int32 want_slot, bool pin, bool *present);
static int32 find_readable(const BufferTag *tag, bool fresher_only, bool *fresher);
static int32 take_free_slot(void);
static void free_slot(int32 slot);
static bool lock_unbusy(const BufferTag *tag, uint32 hash, SsdLookupEnt **ent);
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
	bool		fresher;

	if (!cache_writable() || !ssd_cache_file_verifying())
		return;
	buf = process_io_buffer();
	slot = find_readable(tag, false, &fresher);
	if (slot >= 0 && fresher)
	{
		/* The newest copy, by design older on the disk: nothing to check. */
		pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
		return;
	}
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

static void give_up_directory(void);
static int	compare_uint32(const void *a, const void *b);

/*
 * Write the directory pages pages[0..n-1] (distinct, n <= 32) from the
 * mirror, each under its lock, in flight together where the process can
 * (the admission worker's batches: one wait for the whole batch on an SSD
 * that serves writes in parallel).  A failure gives up on the cache.
 */
static void
write_dir_page_set(int n, const uint64 *pages, SsdCacheCounter occasion)
{
	uint32		lockno[SSD_CACHE_WRITE_BATCH];
	char	   *bufs[SSD_CACHE_WRITE_BATCH];
	int			nlocks = 0,
				i,
				j;
	bool		ok;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
	{
		uint32		l = pages[i] % SSD_NUM_DIR_LOCKS;

		for (j = 0; j < nlocks && lockno[j] != l; j++)
			;
		if (j == nlocks)
			lockno[nlocks++] = l;
		bufs[i] = (char *) &mirror[pages[i] * SSD_DIR_ENTRIES_PER_PAGE];
	}
	qsort(lockno, nlocks, sizeof(uint32), compare_uint32);
	for (i = 0; i < nlocks; i++)
		LWLockAcquire(&locks[SSD_NUM_PARTITIONS + lockno[i]].lock, LW_EXCLUSIVE);
	ok = ssd_cache_bypassed() || ssd_cache_file_write_dir_page_set(n, pages, bufs);
	for (i = nlocks; i-- > 0;)
		LWLockRelease(&locks[SSD_NUM_PARTITIONS + lockno[i]].lock);
	ssd_cache_count(SSD_DIR_WRITES, n);
	if (occasion != SSD_DIR_WRITES)
		ssd_cache_count(occasion, n);
	if (!ok)
		give_up_directory();
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
persist_entries(int n, const int32 *slotnos, const BufferTag *const *tags,
				const bool *fresher, SsdCacheCounter occasion)
{
	uint64		pages[SSD_CACHE_WRITE_BATCH];
	int			npages = 0,
				i,
				j;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	for (i = 0; i < n; i++)
	{
		uint64		dirpage = slotnos[i] / SSD_DIR_ENTRIES_PER_PAGE;
		SsdCacheDirEntry *e = &mirror[slotnos[i]];
		const BufferTag *tag = tags[i];

		LWLockAcquire(DIR_LOCK(dirpage), LW_EXCLUSIVE);
		memset(e, 0, sizeof(*e));
		if (tag)
		{
			e->spcNode = tag->rnode.spcNode;
			e->dbNode = tag->rnode.dbNode;
			e->relNode = tag->rnode.relNode;
			e->blockNum = tag->blockNum;
			e->forkNum = (uint8) tag->forkNum;
			e->flags = SSD_DIR_VALID;
			if (fresher && fresher[i])
				e->flags |= SSD_DIR_FRESHER;
			e->epoch = shared->epoch;
			ssd_cache_dir_entry_seal(e);
		}
		LWLockRelease(DIR_LOCK(dirpage));
		for (j = 0; j < npages && pages[j] != dirpage; j++)
			;
		if (j == npages)
			pages[npages++] = dirpage;
	}
	write_dir_page_set(npages, pages, occasion);
}

static void
persist_entry(int32 slot, const BufferTag *tag, SsdCacheCounter occasion)
{
	persist_entries(1, &slot, &tag, NULL, occasion);
}

/* Record one slot's entry as VALID and fresher, durably. */
static void
persist_fresher(int32 slot, const BufferTag *tag, SsdCacheCounter occasion)
{
	bool		yes = true;

	persist_entries(1, &slot, &tag, &yes, occasion);
}

/* The page a persistent directory entry names. */
static void
entry_tag(const SsdCacheDirEntry *e, BufferTag *tag)
{
	memset(tag, 0, sizeof(*tag));
	tag->rnode.spcNode = e->spcNode;
	tag->rnode.dbNode = e->dbNode;
	tag->rnode.relNode = e->relNode;
	tag->forkNum = (ForkNumber) e->forkNum;
	tag->blockNum = e->blockNum;
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

	Assert(!ent->busy);
	if (state == ENT_VALID)
		persist_entry(slot, NULL, count_eviction ? SSD_DIR_WRITES_EVICTION : SSD_DIR_WRITES);
	if (ent->fresher)
		pg_atomic_fetch_sub_u64(&shared->fresher, 1);
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
 * The slot to read tag from, pinned, or -1.  While the cache is not
 * readable yet (verifying after a crash) only fresher slots count: they are
 * the newest copy whatever the WAL says, and WAL replay itself must read
 * them.
 */
static int32
find_readable(const BufferTag *tag, bool fresher_only, bool *fresher)
{
	uint32		hash = get_hash_value(lookup_hash, tag);
	SsdLookupEnt *ent;
	int32		slot = -1;

	*fresher = false;
	LWLockAcquire(PART_LOCK(hash), LW_SHARED);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
	if (ent != NULL && ent->state == ENT_VALID && (ent->fresher || !fresher_only))
	{
		slot = ent->slot;
		*fresher = ent->fresher;
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
	bool		fresher;
	bool		damaged;

	if (!cache_writable())
		return false;

	/* Everything that can fail comes before the pin (invariant 5). */
	buf = process_io_buffer();
	slot = find_readable(tag, !cache_readable(), &fresher);
	if (slot < 0)
	{
		ssd_cache_count(SSD_MISSES, 1);
		rel_count_access(tag->rnode, false);
		return false;
	}
	slots[slot].usage = 1;

	ok = ssd_cache_file_read_slot(slot, buf);

	/*
	 * A torn slot write of a clean page: the disk copy is as new as the
	 * slot was.  A fresher page has no other copy: it is handed over as it
	 * is, and the buffer manager's verification reports it as it would a
	 * damaged data-file page (WAL replay rewrites a torn one from its
	 * full-page image without reading it; zero_damaged_pages and
	 * ignore_checksum_failure act on it as on a data file's page), after a
	 * warning that says which copy is damaged.
	 */
	damaged = ok && DataChecksumsEnabled() && !PageIsNew((Page) buf) &&
		pg_checksum_page(buf, tag->blockNum) != ((PageHeader) buf)->pd_checksum;
	if (damaged && !fresher)
	{
		errno = EIO;
		ok = false;
	}
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);

	if (damaged && fresher)
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ssd_cache: block %u of \"%s\" read from the SSD cache fails its checksum",
						tag->blockNum, relpathperm(tag->rnode, tag->forkNum)),
				 errdetail("The cache holds the only up-to-date copy of this page (write-back); the copy in the data file is older and intact.  The error that follows names the data file, but the damaged copy is the SSD cache's."),
				 errhint("Check the SSD.  The page's changes since the data file's copy are lost unless a backup and its WAL hold them.")));

	if (!ok && fresher)
	{
		bool		lost = errno == ENODATA;

		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read block %u of relation %u/%u/%u from the SSD cache: %m",
						tag->blockNum, tag->rnode.spcNode, tag->rnode.dbNode, tag->rnode.relNode),
				 lost ?
				 errdetail("The cache file reads as zeros where this page was written: it was truncated, "
						   "or a hole punched in it, while the server ran.  It held the only up-to-date copy "
						   "of this page (write-back).") :
				 errdetail("The cache holds the only up-to-date copy of this page (write-back).")));
	}
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
 * Before a write of tag goes to the disk: wait while the page is being
 * written back (its older image must not land on the disk after this
 * write's), and mark a write under way on its slot, so that a write-back
 * starting meanwhile leaves it alone.  Returns the slot (pass it to
 * ssd_cache_after_disk_write, or to ssd_cache_write_end if the disk write
 * fails), or -1 if the page has no slot.
 */
int32
ssd_cache_write_begin(const BufferTag *tag)
{
	uint32		hash;
	SsdLookupEnt *ent;
	int32		slot = -1;

	if (!shared || ssd_cache_bypassed())
		return -1;
	hash = get_hash_value(lookup_hash, tag);
	if (!lock_unbusy(tag, hash, &ent))
		return -1;
	if (ent->slot >= 0 && (ent->state == ENT_VALID || ent->state == ENT_WRITING))
	{
		slot = ent->slot;
		pg_atomic_fetch_add_u32(&slots[slot].writes, 1);
	}
	LWLockRelease(PART_LOCK(hash));
	return slot;
}

/* The write announced by ssd_cache_write_begin is over. */
void
ssd_cache_write_end(int32 slot)
{
	if (slot >= 0)
		pg_atomic_fetch_add_u32(&slots[slot].writes, 1);
}

/*
 * The disk has just been written; bring any cached copy up to date.  A
 * VALID copy is overwritten in place; an admission not yet written is
 * cancelled (its copy is older than the disk now).  A fresher copy stays
 * marked fresher: this disk write is not durable yet, and the disk may lack
 * changes older than the last checkpoint that only the slot had, which WAL
 * replay would not redo.  Only a write-back, which syncs the disk, clears
 * the mark.
 */
void
ssd_cache_after_disk_write(const BufferTag *tag, const char *buffer, int32 begun)
{
	int32		slot;
	bool		ok;
	bool		fresher;
	char	   *buf;

	if (!shared || ssd_cache_bypassed())
	{
		ssd_cache_write_end(begun);
		return;
	}
	buf = process_io_buffer();
	slot = find_readable(tag, false, &fresher);
	if (slot < 0)
	{
		ssd_cache_write_end(begun);
		/* Not readable yet (an admission in flight): forget it. */
		if (ssd_cache_has_entry(tag))
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
		ssd_cache_write_end(begun);
		give_up_header();
		return;
	}
	ok = ssd_cache_file_write_slot(slot, buf);
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
	ssd_cache_write_end(begun);
	if (ok)
	{
		ssd_cache_count(SSD_OVERWRITES, 1);
		ssd_cache_count(SSD_SSD_WRITES, 1);
	}
	else
	{
		/*
		 * The slot may be torn.  A clean one is simply forgotten; a fresher
		 * one only once this disk write is durable, since the disk may lack
		 * changes from before the last checkpoint that only the slot had.
		 */
		ssd_cache_io_error("SSD write", tag);
		if (fresher)
			ssd_cache_disk_sync(1, tag, NULL);
		ssd_cache_invalidate_block(tag);
	}
}

/*
 * Would a read of the block be served by the SSD now?  While the cache
 * verifies after a crash, that is its fresher pages only (as in
 * ssd_cache_read).  Recovery's prefetcher asks before it hints the kernel
 * to read a block: answering "no" for a fresher page cost one wasted disk
 * read per page that replay then read from the SSD (on the HDD tier, 12,066
 * disk reads during one TPC-C recovery for 2,201 cache misses).
 */
bool
ssd_cache_contains(const BufferTag *tag)
{
	int32		slot;
	bool		fresher;

	if (!cache_writable())
		return false;
	slot = find_readable(tag, !cache_readable(), &fresher);
	if (slot < 0)
		return false;
	pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
	return true;
}

/*
 * Lock tag's partition exclusively once its entry is not being written
 * back, and find the entry.  Returns false (lock released) if there is
 * none.  A write-back holds "busy" for the time of a data-file write and
 * fsync, without locks, so this sleeps; it raises no error (it runs in
 * truncation's critical section).
 */
static bool
lock_unbusy(const BufferTag *tag, uint32 hash, SsdLookupEnt **ent)
{
	for (;;)
	{
		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		*ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
		if (*ent == NULL)
		{
			LWLockRelease(PART_LOCK(hash));
			return false;
		}
		if (!(*ent)->busy)
			return true;
		LWLockRelease(PART_LOCK(hash));
		pg_usleep(100L);
	}
}

/*
 * Durably forget one block (no-op if it is not cached), fresher or not:
 * the callers replace or remove the page.
 */
void
ssd_cache_invalidate_block(const BufferTag *tag)
{
	uint32		hash;
	SsdLookupEnt *ent;

	if (!shared)
		return;
	hash = get_hash_value(lookup_hash, tag);
	if (!lock_unbusy(tag, hash, &ent))
		return;
	if (ent->state == ENT_PENDING || ent->state == ENT_WRITING)
		ent->state = ENT_CANCELLED;
	else if (ent->state == ENT_VALID)
		remove_entry_locked(ent, hash, false);
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
write_dirty_dir_pages(uint8 *dirty, uint64 npages, SsdCacheCounter occasion)
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
		if (occasion != SSD_DIR_WRITES)
			ssd_cache_count(occasion, 1);
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
	bool		keep_fresher;	/* the pages stay in the database: a page
								 * fresher than the disk is not forgotten */
} InvalBatch;

static void
inval_batch_flush(InvalBatch *b)
{
	int			i;

	if (b->dirty)
		write_dirty_dir_pages(b->dirty, (shared->nslots + SSD_DIR_ENTRIES_PER_PAGE - 1) /
							  SSD_DIR_ENTRIES_PER_PAGE, SSD_DIR_WRITES);
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
	if (!lock_unbusy(&tag, hash, &ent))
		return;
	if (ent->slot == (int32) s && !(ent->fresher && b->keep_fresher))
	{
		if (ent->state == ENT_PENDING || ent->state == ENT_WRITING)
			ent->state = ENT_CANCELLED;
		else if (ent->state == ENT_VALID)
		{
			if (ent->fresher)
				pg_atomic_fetch_sub_u64(&shared->fresher, 1);
			if (b->dirty == NULL)
				persist_entry((int32) s, NULL, SSD_DIR_WRITES);
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
invalidate_matching(TagFilter filter, const void *arg, bool keep_fresher)
{
	static InvalBatch batch;	/* 64 kB: not on the stack */
	static uint8 *dirty = NULL;
	BufferTag	queued[SSD_ADMIT_QUEUE_MAX];
	int			nqueued,
				i;
	uint64		s;

	/* Queued admissions are of clean pages (reads): always cancelled. */
	nqueued = ssd_cache_admit_queued_tags(queued);
	for (i = 0; i < nqueued; i++)
		if (filter(&queued[i], arg))
			ssd_cache_invalidate_block(&queued[i]);

	/* malloc, not palloc: no error in a critical section; NULL is fine. */
	if (dirty == NULL)
		dirty = calloc((shared->nslots / SSD_DIR_ENTRIES_PER_PAGE) / 8 + 1, 1);
	batch.n = 0;
	batch.dirty = dirty;
	batch.keep_fresher = keep_fresher;
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

/*
 * After a crash, the WAL refuted the cache: forget every clean page.  Pages
 * fresher than the disk stay: the start checked that this data directory's
 * WAL reaches them (ssd_cache_file.c), and they are its only copy.
 */
static void
discard_everything(void)
{
	if (pg_atomic_read_u64(&shared->fresher) > 0)
		ereport(WARNING,
				(errmsg("ssd_cache: keeping " UINT64_FORMAT " cached pages newer than the data files",
						pg_atomic_read_u64(&shared->fresher)),
				 errdetail("WAL replay ended before the newest WAL the cached pages depend on, "
						   "but the WAL the pages newer than the disk depend on was there at the start.")));
	invalidate_matching(everything, NULL, true);
}

/*
 * Write-back.  A slot marked fresher holds a newer image of its page than
 * the disk.  It becomes so only here (ssd_cache_absorb_write), and stops
 * being so only once its image is on the disk and synced
 * (write_back_slots); in between, a write of the page to the disk keeps the
 * mark (ssd_cache_after_disk_write says why).
 *
 * Serialization, per page:
 *	- the buffer manager never has two writes of one block in flight;
 *	- a write-back marks the entry busy while it copies the slot, writes
 *	  the data file and syncs it: a write of the page waits for that
 *	  (ssd_cache_write_begin, ssd_cache_absorb_write), and so does any
 *	  removal of the entry, so an older image can never land on the disk
 *	  after a newer one nor after a truncation;
 *	- a write of the page makes its slot's "writes" counter odd while it is
 *	  under way and bumps it again when done: a write-back that sees the
 *	  counter move between its copy and its sync leaves the mark alone.
 */

/*
 * Pages that flushes, database file copies and lazy cleaning's checkpoint
 * write back per call of write_back_slots: one fsync per segment for them.
 */
#define SSD_WB_CHUNK	256

static void
unbusy(int n, const BufferTag *tags)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		uint32		hash = get_hash_value(lookup_hash, &tags[i]);
		SsdLookupEnt *ent;

		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		ent = hash_search_with_hash_value(lookup_hash, &tags[i], hash, HASH_FIND, NULL);
		if (ent)
			ent->busy = false;
		LWLockRelease(PART_LOCK(hash));
	}
}

/* write_back_slots' work arrays, freed also when it returns early. */
static void
free_write_back_arrays(BufferTag *tags, int32 *taken, uint32 *seen, bool *gone,
					   char *pages, uint8 *dirty)
{
	pfree(tags);
	pfree(taken);
	pfree(seen);
	pfree(gone);
	pfree(pages);
	pfree(dirty);
}

/*
 * Write back the fresher pages among slots slotnos[0..n-1]: copy each,
 * write the copies to their data files, sync each segment once, then
 * clear the marks of the pages not written meanwhile, durably.  Returns how
 * many marks were cleared.  settled[i] (if not NULL) says whether the disk
 * now holds slot i's page as it was when this started, or nothing needs to
 * be written for it (clean, evicted, forgotten); false for a page being
 * written or written back by someone else right then.  Raises md.c's errors
 * (an fsync failure PANICs); the entries are released first.
 *
 * Every page of the batch stays busy until all its segments are synced, so
 * a write of one of them waits for the whole batch (lock_unbusy).  Taking
 * and releasing one segment at a time bounds that wait, but measured under
 * TPC-C on the one-head disk model it cut the cleaner's pace twentyfold
 * (3,232 to 169 write-backs a minute with the cache at 25%; likely because
 * with every segment's writes issued before the first fsync the kernel
 * writes the later segments while that sync waits).  Victims are cold
 * pages, rarely written meanwhile.
 */
static int
write_back_slots(int n, const int32 *slotnos, bool *settled, bool give_up_on_read_error)
{
	BufferTag  *tags = palloc(sizeof(BufferTag) * n);
	int32	   *taken = palloc(sizeof(int32) * n);
	uint32	   *seen = palloc(sizeof(uint32) * n);
	bool	   *gone = palloc(sizeof(bool) * n);
	char	   *pages;
	char	   *buf = process_io_buffer();
	uint8	   *dirty;
	uint64		npages = (shared->nslots + SSD_DIR_ENTRIES_PER_PAGE - 1) / SSD_DIR_ENTRIES_PER_PAGE;
	int			m = 0,
				cleared = 0,
				i;

	pages = palloc((Size) n * BLCKSZ);
	dirty = palloc0(npages / 8 + 1);

	/* 1. Take and copy each one that is fresher and not being written. */
	for (i = 0; i < n; i++)
	{
		int32		s = slotnos[i];
		BufferTag	tag = slots[s].tag; /* racy copy; checked under the lock */
		uint32		hash = get_hash_value(lookup_hash, &tag);
		SsdLookupEnt *ent;
		uint32		w;
		bool		ok;

		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		ent = hash_search_with_hash_value(lookup_hash, &tag, hash, HASH_FIND, NULL);
		w = pg_atomic_read_u32(&slots[s].writes);
		if (ent == NULL || ent->slot != s || ent->state != ENT_VALID || !ent->fresher ||
			ent->busy || (w & 1) != 0)
		{
			if (settled)
				settled[i] = !(ent != NULL && ent->slot == s && ent->state == ENT_VALID &&
							   ent->fresher);
			LWLockRelease(PART_LOCK(hash));
			continue;
		}
		if (settled)
			settled[i] = true;	/* the copy below is at least that new */
		ent->busy = true;
		pg_atomic_fetch_add_u32(&slots[s].pins, 1);
		LWLockRelease(PART_LOCK(hash));

		ok = ssd_cache_file_read_slot(s, buf);
		pg_atomic_fetch_sub_u32(&slots[s].pins, 1);
		tags[m] = tag;
		taken[m] = s;
		seen[m] = w;
		if (!ok)
		{
			int			save_errno = errno;

			unbusy(m + 1, tags);
			errno = save_errno;
			if (give_up_on_read_error)
				ssd_cache_give_up("a page newer than the disk could not be read from the SSD to write it back");
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read block %u of relation %u/%u/%u from the SSD cache to write it back: %m",
							tag.blockNum, tag.rnode.spcNode, tag.rnode.dbNode, tag.rnode.relNode)));
		}
		memcpy(pages + (Size) m * BLCKSZ, buf, BLCKSZ);
		m++;
	}
	if (m == 0)
	{
		free_write_back_arrays(tags, taken, seen, gone, pages, dirty);
		return 0;
	}

	/*
	 * 2. To the data files, durably (WAL is flushed past every slot image).
	 * A page whose relation file is gone belongs to a relation removed
	 * behind the cache (a database dropped while one of its pages was
	 * being absorbed): there is nothing to write it to, and it is forgotten
	 * below instead.
	 */
	PG_TRY();
	{
		for (i = 0; i < m; i++)
			gone[i] = !ssd_cache_disk_write(&tags[i], pages + (Size) i * BLCKSZ);
		ssd_cache_disk_sync(m, tags, gone);
	}
	PG_CATCH();
	{
		unbusy(m, tags);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* 3. Clear the marks of pages nobody wrote meanwhile. */
	for (i = 0; i < m; i++)
	{
		uint32		hash = get_hash_value(lookup_hash, &tags[i]);
		SsdLookupEnt *ent;
		int32		s = taken[i];

		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		ent = hash_search_with_hash_value(lookup_hash, &tags[i], hash, HASH_FIND, NULL);
		Assert(ent != NULL && ent->busy && ent->slot == s);
		if (gone[i])
		{
			ereport(LOG,
					(errmsg("ssd_cache: forgetting block %u of relation %u/%u/%u: its file no longer exists",
							tags[i].blockNum, tags[i].rnode.spcNode, tags[i].rnode.dbNode,
							tags[i].rnode.relNode)));
			ent->busy = false;
			remove_entry_locked(ent, hash, false);
			LWLockRelease(PART_LOCK(hash));
			continue;
		}
		if (pg_atomic_read_u32(&slots[s].writes) == seen[i])
		{
			uint64		p = (uint64) s / SSD_DIR_ENTRIES_PER_PAGE;

			ent->fresher = false;
			pg_atomic_fetch_sub_u64(&shared->fresher, 1);
			LWLockAcquire(DIR_LOCK(p), LW_EXCLUSIVE);
			mirror[s].flags &= ~SSD_DIR_FRESHER;
			ssd_cache_dir_entry_seal(&mirror[s]);
			LWLockRelease(DIR_LOCK(p));
			dirty[p / 8] |= 1 << (p % 8);
			cleared++;
		}
		ent->busy = false;
		LWLockRelease(PART_LOCK(hash));
	}
	write_dirty_dir_pages(dirty, npages, SSD_DIR_WRITES);
	free_write_back_arrays(tags, taken, seen, gone, pages, dirty);
	ssd_cache_count(SSD_WRITE_BACKS, m);
	ssd_cache_count(SSD_SSD_READS, m);
	ssd_cache_count(SSD_DISK_WRITES, m);
	return cleared;
}

/*
 * The admission worker's write-back of victims: an ERROR (a data file that
 * cannot be written) is logged and the victims stay, instead of ending the
 * worker in the middle of an admission batch.  (A failed fsync still
 * PANICs.)  Returns whether any mark was cleared.
 */
static bool
write_back_quietly(int n, const int32 *slotnos)
{
	static MemoryContext scratch = NULL;
	MemoryContext cxt = CurrentMemoryContext;
	int			cleared = 0;

	/* The batch's copies go with the context, also after an ERROR. */
	if (scratch == NULL)
		scratch = AllocSetContextCreate(TopMemoryContext, "ssd_cache write-back",
										ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	PG_TRY();
	{
		cleared = write_back_slots(n, slotnos, NULL, false);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(scratch);
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	MemoryContextReset(scratch);
	return cleared > 0;
}

/*
 * Write back every fresher page whose tag passes the filter, up to
 * max_pages (-1: all); *left (if not NULL) counts those still fresher.
 */
static int64
write_back_matching(TagFilter filter, const void *arg, int64 max_pages)
{
	int32		batch[SSD_WB_CHUNK];
	int			nb = 0;
	int64		done = 0;
	uint64		s;

	for (s = 0; s < shared->nslots && (max_pages < 0 || done + nb < max_pages); s++)
	{
		BufferTag	tag;

		/* A racy look at the mirror; write_back_slots checks under the lock. */
		if (!slots[s].in_use || !(mirror[s].flags & SSD_DIR_FRESHER))
			continue;
		tag = slots[s].tag;
		if (!filter(&tag, arg))
			continue;
		batch[nb++] = (int32) s;
		if (nb == SSD_WB_CHUNK)
		{
			done += write_back_slots(nb, batch, NULL, false);
			nb = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (nb > 0)
		done += write_back_slots(nb, batch, NULL, false);
	return done;
}

/*
 * Lazy cleaning's cleaner: write back up to max_pages fresher pages, going
 * on from where this process stopped last time (one pass over the cache at
 * most).  Returns how many marks were cleared.
 */
int64
ssd_cache_write_back_next(int64 max_pages)
{
	static uint64 cursor = 0;
	int32	   *batch;
	int			nb = 0;
	int64		done = 0;
	uint64		seen;

	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0 || max_pages <= 0)
		return 0;
	max_pages = Min(max_pages, Min((int64) shared->nslots, SSD_WRITE_BACK_MAX_BATCH));
	batch = palloc(sizeof(int32) * max_pages);
	for (seen = 0; seen < shared->nslots && nb < max_pages; seen++)
	{
		uint64		s = cursor;

		cursor = (cursor + 1) % shared->nslots;
		if (slots[s].in_use && (mirror[s].flags & SSD_DIR_FRESHER))
			batch[nb++] = (int32) s;
	}
	if (nb > 0)
		done = write_back_slots(nb, batch, NULL, false);
	pfree(batch);
	return done;
}

static bool
in_database(const BufferTag *tag, const void *arg)
{
	return tag->rnode.dbNode == *(const Oid *) arg;
}

/* Fresher pages matching the filter (a racy count, for loops below). */
static int64
count_fresher(TagFilter filter, const void *arg)
{
	uint64		s;
	int64		n = 0;

	for (s = 0; s < shared->nslots; s++)
		if (slots[s].in_use && (mirror[s].flags & SSD_DIR_FRESHER))
		{
			BufferTag	tag = slots[s].tag;

			if (filter(&tag, arg))
				n++;
		}
	return n;
}

/*
 * ssd_cache_flush(), and before files are copied behind smgr's back: write
 * back the fresher pages of a database (InvalidOid: all), passing over the
 * cache until none is left or a pass makes no progress (pages written again
 * and again while this runs; with write-back suspended for them, that ends).
 * Returns how many were written back.
 */
int64
ssd_cache_write_back(Oid dbNode, int64 max_pages)
{
	int64		total = 0;
	int			pass;
	TagFilter	filter = OidIsValid(dbNode) ? in_database : everything;

	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0)
		return 0;
	for (pass = 0; pass < 10; pass++)
	{
		int64		done = write_back_matching(filter, &dbNode,
											   max_pages < 0 ? -1 : max_pages - total);

		total += done;
		if (done == 0 || (max_pages >= 0 && total >= max_pages) ||
			count_fresher(filter, &dbNode) == 0)
			break;
	}
	return total;
}

/*
 * Wait until no absorption that may have started before now is in flight
 * (see ssd_cache_absorb_write).
 */
void
ssd_cache_wait_for_absorbs(void)
{
	if (!shared)
		return;
	LWLockAcquire(ARM_LOCK, LW_EXCLUSIVE);
	LWLockRelease(ARM_LOCK);
}

/* Pages marked fresher than the disk in one database (InvalidOid: all). */
int64
ssd_cache_fresher_pages_of(Oid dbNode)
{
	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0)
		return 0;
	return count_fresher(OidIsValid(dbNode) ? in_database : everything, &dbNode);
}

/* Pages marked fresher than the disk, cluster-wide. */
int64
ssd_cache_fresher_pages(void)
{
	return shared ? (int64) pg_atomic_read_u64(&shared->fresher) : 0;
}

/*
 * Lazy cleaning, after a checkpoint's pass (ssd_cache_write_back_fresher_now):
 * the data directory no longer depends on the cache, even if pages absorbed
 * since are fresher, so the marker a write-back period left goes, unless
 * allowed() says absorptions arm it again (PC came back meanwhile).
 * Returns whether the marker is gone.
 */
bool
ssd_cache_disarm_unless(SsdAbsorbAllowed allowed)
{
	bool		ok = true;
	int			save_errno;

	if (!shared)
		return true;
	LWLockAcquire(ARM_LOCK, LW_EXCLUSIVE);
	if (allowed(InvalidOid) == SSD_ABSORB_VOLATILE && ssd_cache_file_fresher_armed() &&
		!ssd_cache_file_disarm_fresher())
		ok = false;
	save_errno = errno;
	LWLockRelease(ARM_LOCK);
	errno = save_errno;
	if (!ok)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not remove the write-back marker: %m"),
				 errdetail("It stays, which is safe; the next checkpoint tries again.")));
	return ok && !ssd_cache_file_fresher_armed();
}

/*
 * A checkpoint outside lazy cleaning: from its completion on, the data
 * directory depends on every page fresher than the disk, also on those
 * lazy cleaning absorbed unarmed before a switch of ssd_cache.mode.  ERROR
 * (failing the checkpoint) if the marker cannot be armed.
 */
void
ssd_cache_arm_if_fresher(void)
{
	bool		ok;

	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0 || ssd_cache_file_fresher_armed())
		return;
	LWLockAcquire(ARM_LOCK, LW_SHARED);
	ok = ssd_cache_file_arm_fresher();
	LWLockRelease(ARM_LOCK);
	if (!ok)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("ssd_cache could not record that the data directory depends on the cache: %m"),
				 errdetail("Pages newer than the disk are on the SSD."),
				 errhint("The checkpoint will be retried.")));
}

/*
 * If no page is fresher any more, clear the marker and the header's id, so
 * the data directory is complete by itself (ssd_cache_flush()).  Returns
 * whether it is.
 */
bool
ssd_cache_disarm_if_clean(void)
{
	bool		clean;

	if (!shared)
		return true;
	LWLockAcquire(ARM_LOCK, LW_EXCLUSIVE);
	clean = pg_atomic_read_u64(&shared->fresher) == 0;
	if (clean && ssd_cache_file_fresher_armed() && !ssd_cache_file_disarm_fresher())
	{
		LWLockRelease(ARM_LOCK);
		give_up_header();
		return false;
	}
	LWLockRelease(ARM_LOCK);
	return clean;
}

/*
 * The gate of every absorption: ARM_LOCK shared, the caller's permission
 * asked again under it (see ssd_cache_wait_for_absorbs), and the data
 * directory's marker in place if the data directory will depend on the
 * page (not with lazy cleaning: its checkpoints write back everything
 * absorbed before them, and WAL covers the rest).  Returns false, with
 * ARM_LOCK released, if the page must go to the disk instead.
 */
static bool
absorb_gate(const BufferTag *tag, SsdAbsorbAllowed allowed)
{
	SsdAbsorbPermission permission;

	LWLockAcquire(ARM_LOCK, LW_SHARED);
	permission = allowed(tag->rnode.dbNode);
	if (permission == SSD_ABSORB_NO)
	{
		LWLockRelease(ARM_LOCK);
		return false;
	}
	if (permission == SSD_ABSORB_VOLATILE)
	{
		if (ssd_cache_bypassed())
		{
			LWLockRelease(ARM_LOCK);
			return false;
		}
		return true;
	}
	if (!ssd_cache_file_arm_fresher())
	{
		LWLockRelease(ARM_LOCK);
		ssd_cache_io_error("write-back marker or header write", NULL);
		return false;
	}
	if (ssd_cache_bypassed())
	{
		/*
		 * The cache gave up while this arming was under way, and the process
		 * giving up saw nothing armed (ssd_cache_give_up): no page is
		 * fresher, so the marker must go again, or the next start would
		 * refuse for nothing.
		 */
		(void) ssd_cache_file_disarm_fresher();
		LWLockRelease(ARM_LOCK);
		return false;
	}
	return true;
}

/*
 * After an absorption marked its page fresher: did the cache give up
 * meanwhile?  Then the disk must take the write too, since reads no longer
 * look at the cache.  (Giving up sets its flag and then counts fresher
 * pages, PANICking if there are any; an absorption counts its page and
 * then looks at the flag.  One of the two sees the other.  With write-back
 * the marker was armed first and giving up PANICs anyway; this is for lazy
 * cleaning, which arms nothing.)
 */
static bool
gave_up_meanwhile(void)
{
	pg_memory_barrier();
	return ssd_cache_bypassed();
}

/*
 * Write-back: take a write of tag into the cache instead of the disk.  A
 * cached page is overwritten in place; otherwise, if may_admit, the page
 * goes into a free slot.  Either way it is marked fresher (durably, the
 * first time).  Returns true if the SSD now holds this image as the newest
 * copy and the disk must not be written; false if the caller must write the
 * disk (ssd_cache_write_begin / ssd_cache_after_disk_write).
 *
 * allowed(dbNode) is asked again under ARM_LOCK, which every absorption
 * holds until its slot write is done: a caller that takes ARM_LOCK
 * exclusively after making allowed() false (ssd_cache_wait_for_absorbs)
 * knows that no absorption of that database is in flight any more.
 *
 * An SSD write failure of a page already cached raises an ERROR, as a
 * failed data-file write does: the buffer stays dirty, and the write is
 * tried again later.  (Its slot stays marked fresher: its old image was the
 * newest until now, and a torn one is rewritten from WAL after a crash.)
 */
bool
ssd_cache_absorb_write(const BufferTag *tag, const char *page, bool may_admit,
					   SsdAbsorbAllowed allowed)
{
	uint32		hash;
	SsdLookupEnt *ent;
	int32		slot = -1;
	int32		fresh_slot = -1;
	bool		ok;
	bool		found;
	char	   *buf;

	if (!cache_writable())
		return false;
	buf = process_io_buffer();
	hash = get_hash_value(lookup_hash, tag);

	/* A free slot before any lock: taking one may wait for a reader. */
	if (may_admit && !ssd_cache_has_entry(tag))
		fresh_slot = take_free_slot();
	memcpy(buf, page, BLCKSZ);

	/*
	 * ARM_LOCK is taken after the partition lock (a wait for a busy entry
	 * must not hold it) and only when the page will be absorbed.
	 */
	if (lock_unbusy(tag, hash, &ent))
	{
		if (fresh_slot >= 0)
			free_slot(fresh_slot);
		if (ent->state != ENT_VALID)
		{
			/* A read's admission in flight: its image is older than this. */
			if (ent->state == ENT_PENDING || ent->state == ENT_WRITING)
				ent->state = ENT_CANCELLED;
			LWLockRelease(PART_LOCK(hash));
			return false;
		}
		if (!absorb_gate(tag, allowed))
		{
			LWLockRelease(PART_LOCK(hash));
			return false;
		}

		/* In place. */
		slot = ent->slot;
		pg_atomic_fetch_add_u32(&slots[slot].pins, 1);
		pg_atomic_fetch_add_u32(&slots[slot].writes, 1);
		if (!ent->fresher)
		{
			/*
			 * Marked before the slot is written: a crash in between leaves
			 * the old image (the disk's) marked, which is harmless, while
			 * the other order could leave a newer image unmarked and
			 * forgotten after a crash.
			 */
			ent->fresher = true;
			pg_atomic_fetch_add_u64(&shared->fresher, 1);
			persist_fresher(slot, tag, SSD_DIR_WRITES_FRESHER);
		}
		LWLockRelease(PART_LOCK(hash));

		ok = ssd_cache_file_cover_wal();
		if (!ok)
			give_up_header();	/* PANICs: the cache is armed */
		if (ssd_cache_fault_enabled("die_before_slot_write"))
			kill(MyProcPid, SIGKILL);	/* test only: a torn in-place write */
		ok = ssd_cache_file_write_slot(slot, buf);
		pg_atomic_fetch_add_u32(&slots[slot].writes, 1);
		pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
		LWLockRelease(ARM_LOCK);
		if (!ok)
		{
			int			save_errno = errno;

			ssd_cache_io_error("SSD write-back write", tag);
			errno = save_errno;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write block %u of relation %u/%u/%u to the SSD cache: %m",
							tag->blockNum, tag->rnode.spcNode, tag->rnode.dbNode,
							tag->rnode.relNode),
					 errdetail("The cache holds the newest copy of this page (write-back); the write will be retried.")));
		}
		ssd_cache_count(SSD_OVERWRITES, 1);
		ssd_cache_count(SSD_SSD_WRITES, 1);
		ssd_cache_count(SSD_ABSORBED, 1);
		return !gave_up_meanwhile();
	}

	/* Not cached (lock_unbusy released the lock): admit into a free slot. */
	if (fresh_slot < 0)
		return false;
	if (!absorb_gate(tag, allowed))
	{
		free_slot(fresh_slot);
		return false;
	}
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_ENTER_NULL, &found);
	if (ent == NULL || found)
	{
		/* Someone else's entry appeared meanwhile (a read's admission). */
		if (ent && (ent->state == ENT_PENDING || ent->state == ENT_WRITING))
			ent->state = ENT_CANCELLED;
		LWLockRelease(PART_LOCK(hash));
		LWLockRelease(ARM_LOCK);
		free_slot(fresh_slot);
		return false;
	}
	ent->slot = fresh_slot;
	ent->state = ENT_WRITING;
	ent->fresher = false;
	ent->busy = false;
	slots[fresh_slot].tag = *tag;
	slots[fresh_slot].usage = 0;
	LWLockRelease(PART_LOCK(hash));
	rel_count_add(tag->rnode, 1);

	ok = ssd_cache_file_cover_wal();
	if (!ok)
		give_up_header();		/* PANICs: the cache is armed */
	ok = ssd_cache_file_write_slot(fresh_slot, buf);	/* ARM_LOCK still held */
	if (!ok)
		ssd_cache_io_error("SSD write-back admission", tag);

	/* Validated only if nobody cancelled it meanwhile (invariant 1). */
	LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(lookup_hash, tag, hash, HASH_FIND, NULL);
	Assert(ent != NULL && ent->slot == fresh_slot);
	if (ok && ent->state == ENT_WRITING)
	{
		ent->fresher = true;
		pg_atomic_fetch_add_u64(&shared->fresher, 1);
		persist_fresher(fresh_slot, tag, SSD_DIR_WRITES_ADMISSION);
		ent->state = ENT_VALID;
	}
	else
	{
		hash_search_with_hash_value(lookup_hash, tag, hash, HASH_REMOVE, NULL);
		ok = false;
	}
	LWLockRelease(PART_LOCK(hash));
	LWLockRelease(ARM_LOCK);
	if (!ok)
	{
		rel_count_add(tag->rnode, -1);
		free_slot(fresh_slot);
		return false;
	}
	ssd_cache_note_foreign_admission();
	ssd_cache_count(SSD_ADMISSIONS, 1);
	ssd_cache_count(SSD_ABSORBED_ADMISSIONS, 1);
	ssd_cache_count(SSD_ABSORBED, 1);
	ssd_cache_count(SSD_SSD_WRITES, 1);
	return !gave_up_meanwhile();
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
	invalidate_matching(in_rel_range, &r, false);
}

/*
 * Durably forget every block of a database: DROP DATABASE (fresher pages
 * too: the database goes), or a database whose files are about to be
 * copied or moved behind smgr's back (fresher pages stay; the caller has
 * written them back with write-back suspended for the database, so there
 * are none unless a write-back failed).
 */
void
ssd_cache_invalidate_database(Oid dbNode, bool keep_fresher)
{
	if (shared)
		invalidate_matching(in_database, &dbNode, keep_fresher);
}

static bool
in_relation(const BufferTag *tag, const void *arg)
{
	return RelFileNodeEquals(tag->rnode, *(const RelFileNode *) arg);
}

/*
 * ssd_cache_evict(regclass): forget a relation's blocks; returns how many.
 * Pages fresher than the disk are written back first; one that became
 * fresher again meanwhile stays.
 */
int64
ssd_cache_evict_relation(RelFileNode rnode)
{
	int64		before = ssd_cache_used_slots();

	if (!shared)
		return 0;
	(void) write_back_matching(in_relation, &rnode, -1);
	invalidate_matching(in_relation, &rnode, true);
	return before - ssd_cache_used_slots();
}

typedef enum SsdEvictResult
{
	EVICTED,
	EVICTED_TO_FREE_LIST,		/* evicted, but a reader still had it: the
								 * free list waits for it */
	EVICT_GONE,					/* no longer that page's slot */
	EVICT_IN_USE,				/* pinned, or being written back: later */
	EVICT_FRESHER				/* newer than the disk: write it back first */
} SsdEvictResult;

/*
 * Evict the pages in slots victims[0..n-1] (n <= 32; -1: none) that are
 * still there, readable, unused and no newer than the disk, forgetting them
 * durably together: their entries are marked busy (no write of the page
 * may start, so none can reach the disk while the SSD still names the
 * slot), their directory pages written in parallel, and only then are the
 * entries removed.  result[i] says what became of each; gens[i] (if not
 * NULL) the slot's generation for a fresher one.  Admission worker only.
 */
static void
evict_clean_slots(int n, const int32 *victims, SsdEvictResult *result, uint32 *gens)
{
	BufferTag	tags[SSD_CACHE_WRITE_BATCH];
	uint64		pages[SSD_CACHE_WRITE_BATCH];
	int			npages = 0,
				i,
				j;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	for (i = 0; i < n; i++)
	{
		int32		s = victims[i];
		uint32		hash;
		SsdLookupEnt *ent;
		uint64		p;

		result[i] = EVICT_GONE;
		if (s < 0 || !slots[s].in_use)
			continue;
		tags[i] = slots[s].tag;
		hash = get_hash_value(lookup_hash, &tags[i]);
		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		ent = hash_search_with_hash_value(lookup_hash, &tags[i], hash, HASH_FIND, NULL);
		if (ent == NULL || ent->state != ENT_VALID || ent->slot != s)
		{
			LWLockRelease(PART_LOCK(hash));
			continue;
		}
		if (ent->busy || pg_atomic_read_u32(&slots[s].pins) != 0)
		{
			LWLockRelease(PART_LOCK(hash));
			result[i] = EVICT_IN_USE;
			continue;
		}
		if (ent->fresher)
		{
			if (gens)
				gens[i] = slots[s].gen; /* the page it holds now */
			LWLockRelease(PART_LOCK(hash));
			result[i] = EVICT_FRESHER;
			continue;
		}
		ent->busy = true;
		LWLockRelease(PART_LOCK(hash));
		result[i] = EVICTED;

		p = (uint64) s / SSD_DIR_ENTRIES_PER_PAGE;
		LWLockAcquire(DIR_LOCK(p), LW_EXCLUSIVE);
		memset(&mirror[s], 0, sizeof(SsdCacheDirEntry));
		LWLockRelease(DIR_LOCK(p));
		for (j = 0; j < npages && pages[j] != p; j++)
			;
		if (j == npages)
			pages[npages++] = p;
	}
	write_dir_page_set(npages, pages, SSD_DIR_WRITES_EVICTION);

	for (i = 0; i < n; i++)
	{
		int32		s = victims[i];
		uint32		hash;

		if (result[i] != EVICTED)
			continue;
		hash = get_hash_value(lookup_hash, &tags[i]);
		LWLockAcquire(PART_LOCK(hash), LW_EXCLUSIVE);
		hash_search_with_hash_value(lookup_hash, &tags[i], hash, HASH_REMOVE, NULL);
		LWLockRelease(PART_LOCK(hash));
		rel_count_add(tags[i].rnode, -1);
		ssd_cache_count(SSD_EVICTIONS, 1);
		slots[s].usage = 0;
		slots[s].gen++;

		/*
		 * A reader may have found the entry while it was busy and still be
		 * reading the slot (microseconds); none can find it now.  One that
		 * takes longer leaves the slot to the free list, which waits.
		 */
		for (j = 0; j < 100 && pg_atomic_read_u32(&slots[s].pins) != 0; j++)
			pg_usleep(10);
		if (pg_atomic_read_u32(&slots[s].pins) != 0)
		{
			free_slot(s);
			result[i] = EVICTED_TO_FREE_LIST;
		}
	}
}

/* One victim; see evict_clean_slots. */
static SsdEvictResult
evict_clean_slot(uint64 s)
{
	int32		one = (int32) s;
	SsdEvictResult result;

	evict_clean_slots(1, &one, &result, NULL);
	return result;
}

/*
 * Evict slot s, writing its page back first if it is fresher than the disk
 * (the thesis's order: to the disk and synced, then the entry invalidated,
 * then the slot reused), in this process.  Admission worker only.
 */
static bool
evict_slot(uint64 s)
{
	SsdEvictResult r = evict_clean_slot(s);
	int32		one = (int32) s;

	if (r == EVICT_FRESHER && write_back_quietly(1, &one))
		r = evict_clean_slot(s);	/* unless written again meanwhile (hot) */
	return r == EVICTED;		/* (EVICTED_TO_FREE_LIST: free, not ours) */
}

/*
 * The admission worker's side of the cleaner: victims handed over, each
 * with its slot's generation (a slot freed and reused meanwhile holds
 * another page) and its ticket.
 */
typedef struct SsdAwaiting
{
	int32		slot;
	uint32		gen;
	uint64		ticket;
} SsdAwaiting;

static SsdAwaiting awaiting[SSD_CLEAN_RING];
static int	nawaiting = 0;

typedef enum SsdHandResult
{
	HANDED,
	NO_CLEANER,
	CLEANER_BUSY
} SsdHandResult;

/*
 * Hand a fresher victim (holding the page of generation gen) to the
 * cleaner, if one runs and has room.  A victim already handed over (TAC's
 * order was rebuilt meanwhile) counts as handed.
 */
static SsdHandResult
hand_to_cleaner(int32 s, uint32 gen, int max_awaiting)
{
	SsdCleanRing *ring = &shared->clean;
	Latch	   *latch;
	uint64		ticket = 0;
	int			i;

	for (i = 0; i < nawaiting; i++)
		if (awaiting[i].slot == s && awaiting[i].gen == gen)
			return HANDED;
	if (nawaiting >= Min(max_awaiting, SSD_CLEAN_RING))
		return CLEANER_BUSY;
	SpinLockAcquire(&ring->lock);
	latch = ring->cleaner;
	if (latch != NULL && ring->pushed - ring->taken < SSD_CLEAN_RING)
	{
		ring->slotnos[ring->pushed % SSD_CLEAN_RING] = s;
		ticket = ++ring->pushed;
	}
	SpinLockRelease(&ring->lock);
	if (latch == NULL)
		return NO_CLEANER;
	if (ticket == 0)
		return CLEANER_BUSY;
	awaiting[nawaiting].slot = s;
	awaiting[nawaiting].gen = gen;
	awaiting[nawaiting].ticket = ticket;
	nawaiting++;
	SetLatch(latch);
	return HANDED;
}

/* How many victims may wait for the cleaner at once. */
static int
awaiting_cap(void)
{
	int64		cap = Max(64, shared->nslots / 128);
	int			batch;

	/* Room for the batch being written back and a whole next one. */
	SpinLockAcquire(&shared->clean.lock);
	batch = shared->clean.batch;
	SpinLockRelease(&shared->clean.lock);
	cap = Max(cap, 2 * (int64) batch);
	return (int) Min(SSD_CLEAN_RING, cap);
}

/* Is a cleaner process taking victims? */
static bool
cleaner_running(void)
{
	bool		running;

	SpinLockAcquire(&shared->clean.lock);
	running = shared->clean.cleaner != NULL;
	SpinLockRelease(&shared->clean.lock);
	return running;
}

/* A victim goes back to the policy, as warm as its region is now. */
static void
return_victim(int32 s)
{
	BufferTag	tag = slots[s].tag;

	ssd_cache_victim_admitted(s, ssd_cache_region_temperature(&tag));
}

/*
 * Victim v is fresher than the disk: hand it to the cleaner (evicted by
 * collect_cleaned once written back) or, with no cleaner running, write it
 * back and evict it here.  Returns whether v is free now.
 */
static bool
evict_fresher_victim(int32 v, uint32 gen, int max_awaiting, bool *cleaner_busy)
{
	switch (hand_to_cleaner(v, gen, max_awaiting))
	{
		case HANDED:
			return false;
		case CLEANER_BUSY:
			return_victim(v);
			*cleaner_busy = true;
			return false;
		case NO_CLEANER:
			break;
	}
	return evict_slot(v);
}

/*
 * Victims the cleaner has written back are evicted and freed; one written
 * again since (fresher again: a hot page) goes back to the policy.
 * Returns how many slots were freed.
 */
static int
collect_cleaned(void)
{
	uint64		done = pg_atomic_read_u64(&shared->clean.done);
	SsdAwaiting ready[SSD_CACHE_WRITE_BATCH];
	int32		victims[SSD_CACHE_WRITE_BATCH];
	SsdEvictResult result[SSD_CACHE_WRITE_BATCH];
	int			i = 0,
				kept = 0,
				freed = 0;

	while (i < nawaiting)
	{
		int			n = 0,
					j;

		/* The next batch of victims the cleaner is done with. */
		for (; i < nawaiting && n < SSD_CACHE_WRITE_BATCH; i++)
		{
			SsdAwaiting a = awaiting[i];

			if (!slots[a.slot].in_use || slots[a.slot].gen != a.gen)
				continue;		/* invalidated meanwhile */
			if (a.ticket > done)
				awaiting[kept++] = a;
			else
			{
				ready[n] = a;
				victims[n++] = a.slot;
			}
		}
		evict_clean_slots(n, victims, result, NULL);
		for (j = 0; j < n; j++)
			switch (result[j])
			{
				case EVICTED:
					free_slot(victims[j]);
					freed++;
					break;
				case EVICTED_TO_FREE_LIST:
					freed++;
					break;
				case EVICT_FRESHER:
					return_victim(victims[j]);	/* written again: hot */
					break;
				case EVICT_IN_USE:
					awaiting[kept++] = ready[j];	/* pinned for a moment */
					break;
				case EVICT_GONE:
					break;
			}
	}
	nawaiting = kept;
	return freed;
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

/* Slots free now (write-back's writers take them without waiting). */
uint64
ssd_cache_free_slots(void)
{
	return shared ? shared->nslots - Min(shared->nslots, pg_atomic_read_u64(&shared->used)) : 0;
}

/*
 * The admission worker, in write-back mode: keep at least "target" slots
 * free, so that a writer never has to wait for an eviction (PC2's cleaner).
 * Clean victims are evicted at once; fresher ones are handed to the
 * cleaner process, which writes them back ssd_cache.evict_batch at a time
 * with one sync per data-file segment, and are evicted when that is done.
 * At most awaiting_cap() victims wait for the cleaner.  Returns how many
 * slots were freed.
 */
int
ssd_cache_clean_reserve(int target)
{
	int			freed,
				tries = 0;
	bool		cleaner_busy = false;

	if (!cache_writable())
		return 0;
	freed = collect_cleaned();
	while ((int64) ssd_cache_free_slots() < target && !cleaner_busy && tries < 4 * target + 64)
	{
		int32		victims[SSD_CACHE_WRITE_BATCH];
		SsdEvictResult result[SSD_CACHE_WRITE_BATCH];
		uint32		gens[SSD_CACHE_WRITE_BATCH];
		int			want = (int) Min(SSD_CACHE_WRITE_BATCH, target - (int64) ssd_cache_free_slots()),
					n = 0,
					i;

		while (n < want)
		{
			int32		v = ssd_cache_next_victim(get_float8_infinity());

			if (v < 0)
				break;
			victims[n++] = v;
		}
		if (n == 0)
			break;
		tries += n;
		evict_clean_slots(n, victims, result, gens);
		for (i = 0; i < n; i++)
		{
			if (result[i] == EVICT_FRESHER)
			{
				if (cleaner_busy)
				{
					return_victim(victims[i]);
					continue;
				}
				if (!evict_fresher_victim(victims[i], gens[i], awaiting_cap(), &cleaner_busy))
					continue;
			}
			else if (result[i] == EVICTED_TO_FREE_LIST)
			{
				freed++;
				continue;
			}
			else if (result[i] == EVICT_IN_USE)
			{
				return_victim(victims[i]);	/* pinned for a moment */
				continue;
			}
			else if (result[i] != EVICTED)
				continue;
			free_slot(victims[i]);
			freed++;
		}
		CHECK_FOR_INTERRUPTS();
	}
	return freed;
}

/*
 * The admission worker, every round and in every mode: evict the victims
 * the cleaner has written back (after a switch to write-through too, or
 * they would stay out of TAC's order).
 */
int
ssd_cache_evict_cleaned(void)
{
	if (!cache_writable() || nawaiting == 0)
		return 0;
	return collect_cleaned();
}

/* The cleaner process: from now on, wake this latch for write-backs. */
void
ssd_cache_cleaner_attach(Latch *latch)
{
	if (!shared)
		return;
	SpinLockAcquire(&shared->clean.lock);
	shared->clean.cleaner = latch;
	SpinLockRelease(&shared->clean.lock);
}

/*
 * The cleaner: up to max requests, oldest first; *ticket is the ticket of
 * the last one, to pass to ssd_cache_cleaner_write_back.
 */
int
ssd_cache_cleaner_take(int max, int32 *slotnos, uint64 *ticket)
{
	SsdCleanRing *ring = &shared->clean;
	int			n = 0;

	SpinLockAcquire(&ring->lock);
	ring->batch = max;
	while (n < max && ring->taken < ring->pushed)
		slotnos[n++] = ring->slotnos[ring->taken++ % SSD_CLEAN_RING];
	*ticket = ring->taken;
	SpinLockRelease(&ring->lock);
	return n;
}

/*
 * The cleaner: write back the victims taken (an ERROR is logged, and the
 * worker finds them still fresher and tries other victims), then say so.
 */
void
ssd_cache_cleaner_write_back(int n, const int32 *slotnos, uint64 ticket)
{
	if (n > 0)
		(void) write_back_quietly(n, slotnos);
	pg_atomic_write_u64(&shared->clean.done, ticket);
}

/* Requests not yet taken by the cleaner (for the views). */
int64
ssd_cache_cleaner_pending(void)
{
	int64		n;

	if (!shared)
		return 0;
	SpinLockAcquire(&shared->clean.lock);
	n = (int64) (shared->clean.pushed - shared->clean.taken);
	SpinLockRelease(&shared->clean.lock);
	return n;
}

/*
 * Lazy cleaning's checkpoint rule: write back every page fresher than the
 * disk now (pages absorbed while this runs stay on the SSD: their changes
 * are after the checkpoint's redo point, which WAL covers).  A page being
 * written right then is tried again.  ERROR if some cannot be written back
 * to the disk, which fails the checkpoint; a slot that cannot be read gives
 * up on the cache (a PANIC: the restart starts lazy cleaning empty and WAL
 * replay redoes the page).
 */
void
ssd_cache_write_back_fresher_now(XLogRecPtr below)
{
	int32	   *todo;
	int64		ntodo = 0,
				space,
				i;
	int			tries;
	uint64		s;

	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0)
		return;
	space = (int64) pg_atomic_read_u64(&shared->fresher) + 64;
	todo = palloc(sizeof(int32) * space);

	/*
	 * Every absorption of a page dirtied before the checkpoint started has
	 * finished (the checkpointer waited for each buffer's write before this
	 * sync phase), so its mark is in the mirror.
	 */
	for (s = 0; s < shared->nslots; s++)
		if (slots[s].in_use && (mirror[s].flags & SSD_DIR_FRESHER))
		{
			XLogRecPtr	lsn;

			pg_read_barrier();	/* the LSN of the page the mark is for */
			lsn = ssd_cache_file_slot_lsn(s);

			/*
			 * A page changed since the redo point (its LSN known and not
			 * below it) can stay: replay from there restores it whole from
			 * the full-page image its first change since then logged, as for
			 * a torn page, whatever the disk holds.
			 */
			if (!XLogRecPtrIsInvalid(below) && !XLogRecPtrIsInvalid(lsn) && lsn > below)
				continue;
			if (ntodo == space)
			{
				space *= 2;
				todo = repalloc(todo, sizeof(int32) * space);
			}
			todo[ntodo++] = (int32) s;
		}

	for (tries = 0; ntodo > 0; tries++)
	{
		int64		left = 0;

		if (tries == 3000)		/* 30 s of pages written again and again */
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("ssd_cache could not write back the pages absorbed before this checkpoint"),
					 errdetail(INT64_FORMAT " pages were being written each time they were tried.", ntodo),
					 errhint("The checkpoint will be retried.")));
		for (i = 0; i < ntodo; i += SSD_WB_CHUNK)
		{
			bool		settled[SSD_WB_CHUNK];
			int			n = (int) Min(SSD_WB_CHUNK, ntodo - i),
						j;

			(void) write_back_slots(n, todo + i, settled, true);
			if (MyBackendType == B_CHECKPOINTER)
				AbsorbSyncRequests();	/* as ProcessSyncRequests does between fsyncs */
			for (j = 0; j < n; j++)
				if (!settled[j])
					todo[left++] = todo[i + j];
			CHECK_FOR_INTERRUPTS();
		}
		ntodo = left;
		if (ntodo > 0)
			pg_usleep(10000L);
	}
	pfree(todo);
}

static int
compare_tag_slot(const void *a, const void *b)
{
	const SsdCacheDirEntry *x = &mirror[*(const int32 *) a];
	const SsdCacheDirEntry *y = &mirror[*(const int32 *) b];

	if (x->spcNode != y->spcNode)
		return x->spcNode < y->spcNode ? -1 : 1;
	if (x->dbNode != y->dbNode)
		return x->dbNode < y->dbNode ? -1 : 1;
	if (x->relNode != y->relNode)
		return x->relNode < y->relNode ? -1 : 1;
	if (x->forkNum != y->forkNum)
		return x->forkNum < y->forkNum ? -1 : 1;
	if (x->blockNum != y->blockNum)
		return x->blockNum < y->blockNum ? -1 : 1;
	return 0;
}

/*
 * The postmaster, exiting after a clean shutdown, when no other process is
 * left: write every fresher page back to its data file (in file order),
 * sync each file, then clear the marks on the SSD, so that the data
 * directory is complete by itself (file-level backups, pg_upgrade,
 * pg_checksums, moving it).  Plain system calls, no locks, no errors.
 * Returns false if anything failed (logged): then every mark stays, and
 * the next start serves those pages from the cache as before.
 */
bool
ssd_cache_shutdown_write_back(void)
{
	int32	   *order;
	int64		n = 0,
				i;
	uint64		s;
	uint64		npages;
	uint8	   *dirty;
	SsdDiskPlainFile file;
	char	   *buf = process_io_buffer();
	bool		ok = true;

	if (!shared || pg_atomic_read_u64(&shared->fresher) == 0)
		return true;
	npages = (shared->nslots + SSD_DIR_ENTRIES_PER_PAGE - 1) / SSD_DIR_ENTRIES_PER_PAGE;
	order = malloc(sizeof(int32) * shared->nslots);
	dirty = calloc(npages / 8 + 1, 1);
	if (order == NULL || dirty == NULL)
	{
		free(order);
		free(dirty);
		ereport(LOG, (errmsg("ssd_cache: out of memory writing back the pages newer than the disk")));
		return false;
	}
	for (s = 0; s < shared->nslots; s++)
		if (ssd_cache_dir_entry_ok(&mirror[s], shared->epoch) &&
			(mirror[s].flags & SSD_DIR_FRESHER))
			order[n++] = (int32) s;
	qsort(order, n, sizeof(int32), compare_tag_slot);

	file.fd = -1;
	for (i = 0; i < n && ok; i++)
	{
		SsdCacheDirEntry *e = &mirror[order[i]];
		BufferTag	tag;

		if (i == n / 2 && i > 0 && ssd_cache_fault_enabled("die_during_exit_write_back"))
		{
			/* test only: a service manager's stop timeout */
			ereport(LOG, (errmsg("ssd_cache: fault injection: killed halfway through the shutdown write-back")));
			kill(MyProcPid, SIGKILL);
		}
		entry_tag(e, &tag);
		if (!ssd_cache_file_read_slot(order[i], buf))
		{
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("ssd_cache: could not read slot %d to write it back: %m", order[i])));
			ok = false;
		}
		else if (ssd_cache_disk_plain_write(&file, &tag, buf))
			continue;
		else if (errno == ENOENT && ssd_cache_disk_relation_removed(&tag))
		{
			/* The relation is gone (removed behind the cache): forget the page. */
			memset(e, 0, sizeof(*e));
			order[i] = -1 - order[i];
		}
		else
		{
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("ssd_cache: could not write back block %u to \"%s\": %m",
							tag.blockNum, file.path)));
			ok = false;
		}
	}
	if (!ssd_cache_disk_plain_close(&file) && ok)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not fsync \"%s\": %m", file.path)));
		ok = false;
	}

	/* Only once every file is synced: clear the marks, durably. */
	for (i = 0; i < n && ok; i++)
	{
		int32		slot = order[i] >= 0 ? order[i] : -1 - order[i];
		uint64		p = (uint64) slot / SSD_DIR_ENTRIES_PER_PAGE;

		if (order[i] >= 0)
		{
			mirror[slot].flags &= ~SSD_DIR_FRESHER;
			ssd_cache_dir_entry_seal(&mirror[slot]);
		}
		dirty[p / 8] |= 1 << (p % 8);
	}
	for (s = 0; s < npages && ok; s++)
		if (dirty[s / 8] & (1 << (s % 8)))
			ok = ssd_cache_file_write_dir_pages(s, 1,
												(char *) &mirror[s * SSD_DIR_ENTRIES_PER_PAGE]);
	free(order);
	free(dirty);
	if (!ok)
	{
		ereport(LOG,
				(errmsg("ssd_cache: the pages newer than the disk stay in the cache; "
						"the data directory is not complete without it")));
		return false;
	}
	pg_atomic_write_u64(&shared->fresher, 0);
	ereport(LOG,
			(errmsg("ssd_cache: wrote back " INT64_FORMAT " pages newer than the disk at shutdown", n)));
	return true;
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
	ent->fresher = false;
	ent->busy = false;
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

	/*
	 * 1. A slot for each page: a free one, else the policy's victim for a
	 * page that warm (none: refused).  The victims are forgotten together,
	 * durably, before their slots are reused.  A fresher victim goes to the
	 * cleaner (back to the policy when the cleaner has enough) and the page
	 * tries the next victim, a few times: reads never wait for the disk
	 * here (unless no cleaner runs: then it is written back here).
	 */
	{
		int32		victims[SSD_CACHE_WRITE_BATCH] = {0};
		SsdEvictResult result[SSD_CACHE_WRITE_BATCH];
		uint32		gens[SSD_CACHE_WRITE_BATCH];
		bool		retry[SSD_CACHE_WRITE_BATCH];
		bool		no_cleaner = !cleaner_running();
		bool		cleaner_busy = false;
		int			round;

		if (nawaiting > 0)
			(void) collect_cleaned();
		for (i = 0; i < n; i++)
		{
			temp[i] = ssd_cache_region_temperature(&tags[i]);
			slotno[i] = -1;
			retry[i] = true;
		}
		for (round = 0; round < 4; round++)
		{
			bool		any = false;

			for (i = 0; i < n; i++)
			{
				victims[i] = -1;
				if (slotno[i] >= 0 || !retry[i])
					continue;
				slotno[i] = take_free_slot();
				if (slotno[i] < 0 && pg_atomic_read_u64(&shared->used) >= shared->nslots)
					victims[i] = ssd_cache_next_victim(temp[i]);
				retry[i] = false;
				any |= victims[i] >= 0;
			}
			if (!any)
				break;
			evict_clean_slots(n, victims, result, gens);
			for (i = 0; i < n; i++)
			{
				if (victims[i] < 0)
					continue;
				switch (result[i])
				{
					case EVICTED:
						slotno[i] = victims[i];
						break;
					case EVICTED_TO_FREE_LIST:
						retry[i] = true;	/* a slot is free: take one */
						break;
					case EVICT_IN_USE:
						return_victim(victims[i]);
						break;
					case EVICT_GONE:
						retry[i] = true;
						break;
					case EVICT_FRESHER:
						if (no_cleaner)
						{
							if (evict_slot(victims[i]))
								slotno[i] = victims[i];
						}
						else if (cleaner_busy)
							return_victim(victims[i]);	/* the next pop would be it */
						else if (evict_fresher_victim(victims[i], gens[i], awaiting_cap(),
													  &cleaner_busy))
							slotno[i] = victims[i];
						else
							retry[i] = !cleaner_busy;	/* handed over: the next one */
						break;
				}
			}
		}
	}

	/* PENDING -> WRITING, or a refusal. */
	for (i = 0; i < n; i++)
	{
		SsdLookupEnt *ent;

		hash[i] = get_hash_value(lookup_hash, &tags[i]);

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
		persist_entries(npersist, persist_slots, persist_tags, NULL, SSD_DIR_WRITES_ADMISSION);
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

typedef enum SsdVerifyResult
{
	VERIFY_GONE,				/* not cached any more */
	VERIFY_WRITTEN,				/* a write of the page overlapped the check */
	VERIFY_PENDING,				/* fresher slot older than the disk, but
								 * shared_buffers holds the newest copy */
	VERIFY_CHECKED
} SsdVerifyResult;

/*
 * The page LSN of the block's buffer in shared_buffers if that buffer is
 * dirty, else InvalidXLogRecPtr.  (A standby replays again from its last
 * restartpoint after every restart: redo may write a replayed page that is
 * older than the disk's copy into the block's fresher slot, then bring the
 * buffer past the disk's again.  Until that dirty buffer is written, its
 * slot is older than the disk, and the buffer is the page.  A clean buffer
 * newer than the slot would mean a write that bypassed the slot: that is
 * a mismatch.)
 */
static XLogRecPtr
dirty_buffer_lsn(const BufferTag *tag)
{
	uint32		hash = BufTableHashCode((BufferTag *) tag);
	LWLock	   *lock = BufMappingPartitionLock(hash);
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	int			id;

	LWLockAcquire(lock, LW_SHARED);
	id = BufTableLookup((BufferTag *) tag, hash);
	LWLockRelease(lock);
	if (id >= 0 && ReadRecentBuffer(tag->rnode, tag->forkNum, tag->blockNum, id + 1))
	{
		LockBuffer(id + 1, BUFFER_LOCK_SHARE);
		if (pg_atomic_read_u32(&GetBufferDescriptor(id)->state) & BM_DIRTY)
			lsn = PageGetLSN(BufferGetPage(id + 1));
		UnlockReleaseBuffer(id + 1);
	}
	return lsn;
}

/*
 * Compare slot s with its disk copy; *problem says what is wrong, if
 * anything.  The disk first: md.c may raise errors, which a pin must not
 * see.  A write of the page between the two reads (the slot's "writes"
 * counter odd, or moved) makes them incomparable.  A fresher slot older
 * than the disk is no problem if the buffer pool holds a dirty copy at least
 * as new as the disk's (dirty_buffer_lsn()).
 */
static SsdVerifyResult
verify_slot(uint64 s, char *disk, bool *fresher, const char **problem)
{
	char	   *buf = process_io_buffer();
	BufferTag	tag = slots[s].tag; /* a racy copy; find_valid re-checks */
	uint32		writes = pg_atomic_read_u32(&slots[s].writes);
	SMgrRelation reln;
	int32		slot;
	bool		older = false;	/* a fresher slot older than the disk */

	*problem = NULL;
	if (find_valid(&tag, (int32) s, false, NULL) < 0)
		return VERIFY_GONE;
	reln = smgropen(tag.rnode, InvalidBackendId);
	if (!mdexists(reln, tag.forkNum))
		*problem = "the relation file does not exist";
	else if (tag.blockNum >= mdnblocks(reln, tag.forkNum))
		*problem = "the block is beyond the end of the relation";
	else
		mdread(reln, tag.forkNum, tag.blockNum, disk);

	slot = find_readable(&tag, false, fresher);
	if (slot != (int32) s)
	{
		if (slot >= 0)
			pg_atomic_fetch_sub_u32(&slots[slot].pins, 1);
		return VERIFY_GONE;
	}
	if (!ssd_cache_file_read_slot(s, buf))
		*problem = "the slot could not be read";
	else if (*fresher)
	{
		if (*problem == NULL && PageGetLSN((Page) buf) < PageGetLSN((Page) disk))
		{
			*problem = "the page marked fresher than the disk is older than the disk's";
			older = true;
		}
	}
	else if (*problem == NULL && memcmp(buf, disk, BLCKSZ) != 0)
		*problem = "the cached page differs from the disk";
	pg_atomic_fetch_sub_u32(&slots[s].pins, 1);
	if ((writes & 1) != 0 || pg_atomic_read_u32(&slots[s].writes) != writes)
		return VERIFY_WRITTEN;
	if (older && dirty_buffer_lsn(&tag) >= PageGetLSN((Page) disk))
	{
		*problem = NULL;
		return VERIFY_PENDING;
	}
	return VERIFY_CHECKED;
}

/*
 * Compare every cached page with its disk copy.  A clean one must be
 * identical, so a mismatch means the cache would serve a wrong page; a
 * page that differs while a write of it overlapped the comparison is
 * compared again (up to 100 times, a millisecond apart; one written at
 * every try is passed over, with a NOTICE).  A fresher one must be at
 * least as new as the disk's (page LSN), the thesis's ordering SSD >= disk.
 * Mismatches are logged (the first few) and counted.
 */
void
ssd_cache_verify(int64 *checked, int64 *mismatched, int64 *fresher_out)
{
	uint64		s;
	char	   *disk = palloc(BLCKSZ);
	int64		passed_over = 0,
				pending = 0;

	*checked = *mismatched = *fresher_out = 0;
	if (!cache_readable())
		return;
	for (s = 0; s < shared->nslots; s++)
	{
		const char *problem = NULL;
		bool		fresher = false;
		SsdVerifyResult result = VERIFY_GONE;
		int			tries;

		CHECK_FOR_INTERRUPTS();
		if (!slots[s].in_use)
			continue;
		for (tries = 0; tries < 100; tries++)
		{
			result = verify_slot(s, disk, &fresher, &problem);
			if (result == VERIFY_WRITTEN && problem == NULL)
				result = VERIFY_CHECKED;	/* equal, write or not */
			if (result != VERIFY_WRITTEN)
				break;
			pg_usleep(1000L);
		}
		if (result == VERIFY_WRITTEN)
			passed_over++;
		if (result == VERIFY_PENDING)
		{
			(*checked)++;
			(*fresher_out)++;
			pending++;
			continue;
		}
		if (result != VERIFY_CHECKED)
			continue;
		(*checked)++;
		if (fresher)
			(*fresher_out)++;
		if (problem)
		{
			BufferTag	tag = slots[s].tag;

			(*mismatched)++;
			if (*mismatched <= 10)
				ereport(WARNING,
						(errmsg("ssd_cache_verify: slot " UINT64_FORMAT ", block %u of relation %u/%u/%u: %s",
								s, tag.blockNum, tag.rnode.spcNode, tag.rnode.dbNode,
								tag.rnode.relNode, problem)));
		}
	}
	pfree(disk);
	if (passed_over > 0)
		ereport(NOTICE,
				(errmsg("ssd_cache_verify passed over " INT64_FORMAT " pages that were being written at every try",
						passed_over)));
	if (pending > 0)
		ereport(NOTICE,
				(errmsg_plural("ssd_cache_verify: " INT64_FORMAT " page marked fresher than the disk is older than the disk's, "
							   "but shared_buffers holds a newer unwritten copy of it",
							   "ssd_cache_verify: " INT64_FORMAT " pages marked fresher than the disk are older than the disk's, "
							   "but shared_buffers holds a newer unwritten copy of each",
							   pending, pending),
				 errdetail("WAL replay (on a standby, from its last restartpoint) wrote older versions of them; "
						   "the buffers are written when evicted or at the next restartpoint or checkpoint.")));
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

/* ssd_cache.drop_damaged_entries: start despite them (see the startup). */
bool		ssd_cache_drop_damaged_entries = false;

/*
 * Was this entry damaged on the SSD?  Every entry is written either sealed
 * (its checksum over the rest) or all zeros (never used, or invalidated).
 */
static bool
dir_entry_damaged(const SsdCacheDirEntry *e)
{
	static const SsdCacheDirEntry zero;

	return memcmp(e, &zero, sizeof(zero)) != 0 && !ssd_cache_dir_entry_sealed(e);
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

/* Has the relation an init fork (unlogged)?  Memoized in *cache. */
static bool
relation_is_unlogged(const RelFileNode *rnode, HTAB **cache)
{
	struct
	{
		RelFileNode key;
		bool		unlogged;
	}		   *ent;
	bool		found;

	if (*cache == NULL)
	{
		HASHCTL		info;

		memset(&info, 0, sizeof(info));
		info.keysize = sizeof(RelFileNode);
		info.entrysize = sizeof(*ent);
		*cache = hash_create("ssd_cache unlogged relations", 256, &info,
							 HASH_ELEM | HASH_BLOBS);
	}
	ent = hash_search(*cache, rnode, HASH_ENTER, &found);
	if (!found)
		ent->unlogged = ssd_cache_disk_relation_unlogged(*rnode);
	return ent->unlogged;
}

/* Of two slots holding one page, is slot a's image newer than b's? */
static bool
newer_slot(int32 a, int32 b, const char *path)
{
	char	   *buf = process_io_buffer();
	XLogRecPtr	lsn_a,
				lsn_b;

	if (!ssd_cache_file_read_slot(a, buf))
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not read slot %d of \"%s\": %m", a, path)));
	lsn_a = PageGetLSN((Page) buf);
	if (!ssd_cache_file_read_slot(b, buf))
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not read slot %d of \"%s\": %m", b, path)));
	lsn_b = PageGetLSN((Page) buf);
	return lsn_a > lsn_b;
}

/*
 * The preparation phase: in the postmaster, before any process reads a
 * page, open the cache file and rebuild the shared directory from the
 * persistent one (or start empty when it cannot be trusted).
 */
void
ssd_cache_directory_shmem_init(const char *path, uint64 nslots, bool start_empty)
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
				dropped = 0,
				corrupted = 0,
				dropped_unlogged = 0,
				dropped_volatile = 0;
	uint8	   *dirty;
	HTAB	   *unlogged = NULL;
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
	ssd_cache_fault_watch_fresher(ssd_cache_fresher_pages);
	SpinLockInit(&shared->free_lock);
	SpinLockInit(&shared->clean.lock);
	pg_atomic_init_u64(&shared->clean.done, 0);
	for (s = 0; s < SSD_NCOUNTERS; s++)
		pg_atomic_init_u64(&shared->counters[s], 0);
	pg_atomic_init_u64(&shared->used, 0);
	pg_atomic_init_u64(&shared->fresher, 0);

	ssd_cache_layout(nslots, &layout);
	trust = ssd_cache_file_startup(path, &layout, &locks[SSD_HEADER_LOCK_INDEX].lock,
								   start_empty, &epoch, &reason);
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

	dirty = palloc0(layout.dir_pages / 8 + 1);
	shared->free_head = -1;
	for (s = 0; s < nslots; s++)
	{
		pg_atomic_init_u32(&slots[s].pins, 0);
		pg_atomic_init_u32(&slots[s].writes, 0);
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
			bool		fresher = (e->flags & SSD_DIR_FRESHER) != 0;
			int32		other;

			entry_tag(e, &tag);

			/*
			 * Recovery (after a crash, or on a standby) resets unlogged
			 * relations by copying their init forks behind smgr's back: any
			 * page of theirs cached is older than that.  (None should be:
			 * they are neither admitted nor absorbed.)
			 */
			if (ssd_cache_file_resets_unlogged() && relation_is_unlogged(&tag.rnode, &unlogged))
			{
				dirty[(s / SSD_DIR_ENTRIES_PER_PAGE) / 8] |= 1 << ((s / SSD_DIR_ENTRIES_PER_PAGE) % 8);
				memset(e, 0, sizeof(*e));
				dropped_unlogged++;
				continue;
			}

			ent = hash_search(lookup_hash, &tag, HASH_ENTER, &found);
			if (!found)
			{
				ent->slot = (int32) s;
				ent->state = ENT_VALID;
				ent->fresher = fresher;
				ent->busy = false;
				if (ent->fresher)
					pg_atomic_fetch_add_u64(&shared->fresher, 1);
				slots[s].tag = tag;
				slots[s].in_use = true;
				continue;
			}

			/*
			 * Two slots claim one page: a crash between an invalidation
			 * (made in memory first, durable in a batch) and its durable
			 * write, after a new admission of the page.  Clean ones are
			 * both dropped; of fresher ones the newest (page LSN) is the
			 * page, the other one is older.
			 */
			other = ent->slot;
			dirty[(other / SSD_DIR_ENTRIES_PER_PAGE) / 8] |= 1 << ((other / SSD_DIR_ENTRIES_PER_PAGE) % 8);
			dirty[(s / SSD_DIR_ENTRIES_PER_PAGE) / 8] |= 1 << ((s / SSD_DIR_ENTRIES_PER_PAGE) % 8);
			dropped += 1;
			if (ent->fresher || fresher)
			{
				bool		take = !ent->fresher ||
				(fresher && newer_slot((int32) s, other, path));

				if (!take)
				{
					memset(e, 0, sizeof(*e));
					continue;
				}
				memset(&mirror[other], 0, sizeof(SsdCacheDirEntry));
				slots[other].in_use = false;
				if (ent->fresher)
					pg_atomic_fetch_sub_u64(&shared->fresher, 1);
				ent->slot = (int32) s;
				ent->fresher = fresher;
				if (fresher)
					pg_atomic_fetch_add_u64(&shared->fresher, 1);
				slots[s].tag = tag;
				slots[s].in_use = true;
				continue;
			}
			memset(&mirror[other], 0, sizeof(SsdCacheDirEntry));
			slots[other].in_use = false;
			hash_search(lookup_hash, &tag, HASH_REMOVE, NULL);
			dropped += 1;
		}
		else if (trusted && dir_entry_damaged(e))
		{
			/* written sealed or all zeros: this one was damaged on the SSD */
			corrupted++;
			dirty[(s / SSD_DIR_ENTRIES_PER_PAGE) / 8] |= 1 << ((s / SSD_DIR_ENTRIES_PER_PAGE) % 8);
		}
		memset(e, 0, sizeof(*e));
	}

	/*
	 * Which page a damaged entry named, and whether it was newer than the
	 * disk's, is unknown: while the data directory depends on the cache,
	 * dropping it could lose a committed change silently.
	 */
	if (corrupted > 0)
	{
		if (ssd_cache_file_fresher_armed() && !ssd_cache_drop_damaged_entries)
			ereport(FATAL,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_plural("ssd_cache: %lld entry of the cache directory in \"%s\" is damaged, and the cache holds changes that are not in the data files",
								   "ssd_cache: %lld entries of the cache directory in \"%s\" are damaged, and the cache holds changes that are not in the data files",
								   corrupted, (long long) corrupted, path),
					 errdetail("Which page a damaged entry named is unknown (its checksum does not match); if it was newer than its disk copy, "
							   "committed changes in it would be lost."),
					 errhint("Check the SSD.  To start and lose only what the damaged entries named (the cache's other pages newer "
							 "than the disk are kept), start once with ssd_cache.drop_damaged_entries = on; then check the "
							 "database (amcheck) or restore it from a backup.")));
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_plural("ssd_cache: dropped %lld damaged entry of the cache directory in \"%s\"",
							   "ssd_cache: dropped %lld damaged entries of the cache directory in \"%s\"",
							   corrupted, (long long) corrupted, path),
				 ssd_cache_file_fresher_armed() ?
				 errdetail("ssd_cache.drop_damaged_entries is on: a change whose only copy such an entry named is lost.") :
				 errdetail("The data directory did not depend on the cache; the disk's copies are read instead."),
				 errhint("Check the SSD.")));
	}

	/*
	 * A page fresher than the disk that the data directory does not depend
	 * on (no marker: lazy cleaning absorbed it after the last checkpoint,
	 * so WAL replay redoes it from the disk's copy) goes, after duplicates
	 * were resolved above: an older duplicate of it is gone too.
	 */
	if (pg_atomic_read_u64(&shared->fresher) > 0 && !ssd_cache_file_fresher_armed())
	{
		for (s = 0; s < nslots; s++)
		{
			if (!slots[s].in_use || !(mirror[s].flags & SSD_DIR_FRESHER))
				continue;
			hash_search(lookup_hash, &slots[s].tag, HASH_REMOVE, NULL);
			memset(&mirror[s], 0, sizeof(SsdCacheDirEntry));
			slots[s].in_use = false;
			dirty[(s / SSD_DIR_ENTRIES_PER_PAGE) / 8] |= 1 << ((s / SSD_DIR_ENTRIES_PER_PAGE) % 8);
			dropped_volatile++;
		}
		pg_atomic_write_u64(&shared->fresher, 0);
	}

	/* What was dropped above must not come back after another restart. */
	for (s = 0; s < layout.dir_pages; s++)
		if ((dirty[s / 8] & (1 << (s % 8))) &&
			!ssd_cache_file_write_dir_pages(s, 1, (char *) &mirror[s * SSD_DIR_ENTRIES_PER_PAGE]))
		{
			give_up_directory();
			break;
		}
	pfree(dirty);
	if (unlogged)
		hash_destroy(unlogged);

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
					" cached pages in %.1f ms%s%s%s%s",
					loaded, nslots, shared->preparation_ms,
					dropped ? " (dropped duplicate entries)" : "",
					dropped_volatile ? " (dropped pages lazy cleaning had not written back, which WAL replay redoes)" : "",
					dropped_unlogged ? " (dropped pages of unlogged relations, which recovery resets)" : "",
					trust == SSD_TRUST_AFTER_REPLAY ?
					"; after a crash they are served once WAL replay covers them" : "")));
}
