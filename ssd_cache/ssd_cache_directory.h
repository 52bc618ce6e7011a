/*-------------------------------------------------------------------------
 *
 * ssd_cache_directory.h
 *	  Which page is in which slot: the shared-memory directory of ssd_cache
 *	  and its persistent copy on the SSD.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_DIRECTORY_H
#define SSD_CACHE_DIRECTORY_H

#include "storage/buf_internals.h"
#include "storage/latch.h"

#include "ssd_cache_file.h"

/* Cluster-wide counters, shown by ssd_cache_stats. */
typedef enum SsdCacheCounter
{
	SSD_HITS,
	SSD_MISSES,
	SSD_ADMISSIONS,
	SSD_SEQUENTIAL,				/* disk reads classified sequential: not offered */
	SSD_REFUSALS,				/* random disk reads not admitted (policy, queue full) */
	SSD_EVICTIONS,
	SSD_INVALIDATIONS,
	SSD_OVERWRITES,				/* in-place updates of cached pages */
	SSD_SSD_READS,
	SSD_SSD_WRITES,
	SSD_DISK_READS,
	SSD_DISK_WRITES,
	SSD_DIR_WRITES,				/* all directory writes; by occasion: */
	SSD_DIR_WRITES_ADMISSION,	/* a page admitted */
	SSD_DIR_WRITES_EVICTION,	/* a page evicted to make room */
	SSD_DIR_WRITES_FRESHER,		/* a cached page first made fresher */
	SSD_ABSORBED,				/* writes taken by the SSD instead of the disk */
	SSD_ABSORBED_CHECKPOINT,	/* ... of them by the checkpointer */
	SSD_ABSORBED_ADMISSIONS,	/* ... of them into a new slot */
	SSD_WRITE_BACKS,			/* fresher pages written to the disk */
	SSD_NCOUNTERS
} SsdCacheCounter;

extern int	ssd_cache_directory_lwlocks(void);
extern Size ssd_cache_directory_shmem_size(uint64 nslots);
extern void ssd_cache_directory_shmem_init(const char *path, uint64 nslots, bool start_empty);
extern bool ssd_cache_drop_damaged_entries;
extern bool ssd_cache_enabled(void);
extern bool ssd_cache_verifying(void);
extern void ssd_cache_count(SsdCacheCounter c, int64 n);

/* Read path. */
extern bool ssd_cache_read(const BufferTag *tag, char *buffer);
extern bool ssd_cache_contains(const BufferTag *tag);
extern bool ssd_cache_has_entry(const BufferTag *tag);
extern void ssd_cache_recheck_after_crash(const BufferTag *tag, const char *disk_page);

/* Write path: keep any cached copy identical to the disk. */
extern int32 ssd_cache_write_begin(const BufferTag *tag);
extern void ssd_cache_write_end(int32 slot);
extern void ssd_cache_after_disk_write(const BufferTag *tag, const char *buffer, int32 slot);
extern void ssd_cache_invalidate_block(const BufferTag *tag);

/*
 * Write-back (ssd_cache_writeback.c decides when).  The permission asked
 * under the arming lock: no absorption; an absorption the data directory
 * depends on (PC: the marker is armed first); or one it does not (lazy
 * cleaning: every checkpoint writes back what was absorbed before it).
 */
typedef enum SsdAbsorbPermission
{
	SSD_ABSORB_NO,
	SSD_ABSORB_DURABLE,
	SSD_ABSORB_VOLATILE
} SsdAbsorbPermission;

typedef SsdAbsorbPermission (*SsdAbsorbAllowed) (Oid dbNode);

extern bool ssd_cache_absorb_write(const BufferTag *tag, const char *page, bool may_admit,
								   SsdAbsorbAllowed allowed);
extern void ssd_cache_write_back_fresher_now(XLogRecPtr below);
extern bool ssd_cache_disarm_unless(SsdAbsorbAllowed allowed);
extern void ssd_cache_arm_if_fresher(void);
extern void ssd_cache_wait_for_absorbs(void);
extern int64 ssd_cache_fresher_pages(void);
extern int64 ssd_cache_fresher_pages_of(Oid dbNode);
extern int64 ssd_cache_write_back(Oid dbNode, int64 max_pages);
extern bool ssd_cache_disarm_if_clean(void);
extern bool ssd_cache_shutdown_write_back(void);
extern uint64 ssd_cache_free_slots(void);
extern int	ssd_cache_clean_reserve(int target);
extern int	ssd_cache_evict_cleaned(void);
extern int64 ssd_cache_write_back_next(int64 max_pages);

/* The most pages one write-back batch takes (ssd_cache.evict_batch's maximum). */
#define SSD_WRITE_BACK_MAX_BATCH	512

/* The cleaner process (ssd_cache_cleaner.c): write-back requests. */
extern void ssd_cache_cleaner_attach(Latch *latch);
extern int	ssd_cache_cleaner_take(int max, int32 *slotnos, uint64 *ticket);
extern void ssd_cache_cleaner_write_back(int n, const int32 *slotnos, uint64 ticket);
extern int64 ssd_cache_cleaner_pending(void);
extern void ssd_cache_invalidate_from(RelFileNode rnode, ForkNumber fork,
									  BlockNumber first);
extern void ssd_cache_invalidate_database(Oid dbNode, bool keep_fresher);
extern int64 ssd_cache_evict_relation(RelFileNode rnode);
extern bool ssd_cache_relation_cached(RelFileNode rnode);

/* Admission (the worker's side). */
extern int	ssd_cache_admit_batch(int n, const BufferTag *tags, char *const *pages);
extern void ssd_cache_idle(void);

/* For the views. */
typedef struct SsdCacheRelCount
{
	RelFileNode rnode;
	int64		blocks;
	int64		hits;
	int64		misses;
} SsdCacheRelCount;

extern void ssd_cache_read_counters(int64 *out);
extern void ssd_cache_reset_counters(void);
extern uint64 ssd_cache_nslots(void);
extern uint64 ssd_cache_used_slots(void);
extern bool ssd_cache_full(void);
extern List *ssd_cache_relation_counts(Oid dbNode);
extern double ssd_cache_preparation_ms(void);
extern void ssd_cache_verify(int64 *checked, int64 *mismatched, int64 *fresher);

#endif							/* SSD_CACHE_DIRECTORY_H */
