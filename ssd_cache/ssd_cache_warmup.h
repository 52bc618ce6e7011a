/*-------------------------------------------------------------------------
 *
 * ssd_cache_warmup.h
 *	  Buffer-pool warm-up after a restart: the recorded state, the plan in
 *	  shared memory, and who reads and writes each (Park's BSR, I/O planner,
 *	  estimator, arranger and BSL; see ssd_cache_warmup.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_WARMUP_H
#define SSD_CACHE_WARMUP_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/relfilenode.h"
#include "storage/spin.h"

/* The state file, in the data directory (copied by base backups on purpose). */
#define WARMUP_STATE_FILE		"ssd_cache_warmup.state"
#define WARMUP_STATE_TMP		"ssd_cache_warmup.state.tmp"

/* One recorded buffer: its tag and clock-sweep usage count (the hotness). */
typedef struct WarmupPage
{
	Oid			spcNode;
	Oid			dbNode;
	Oid			relNode;
	BlockNumber block;
	uint8		fork;
	uint8		usage;			/* 1..BM_MAX_USAGE_COUNT */
	uint16		unused;
} WarmupPage;

/* What the recorder knows of the state file it last wrote or found. */
typedef struct WarmupStateInfo
{
	XLogRecPtr	redo;			/* the checkpoint it was recorded after */
	TimestampTz recorded_at;
	uint32		npages;
} WarmupStateInfo;

/* ssd_cache_warmup_state.c: the file */
extern bool warmup_record(WarmupStateInfo *info, double *elapsed_ms);
extern WarmupPage *warmup_read_state(WarmupStateInfo *info, uint32 max_pages);

/* Chunk states; a chunk moves only forward, by compare-and-swap. */
#define CHUNK_PENDING		0
#define CHUNK_PROMOTED		1	/* a query missed on one of its pages */
#define CHUNK_TAKEN			2	/* a loader is reading it */
#define CHUNK_DONE			3
#define CHUNK_SKIPPED		4	/* relation gone, device said no, pool full */

/*
 * A planned I/O: "span" blocks from "start" of one segment of one fork,
 * holding "nhot" recorded pages (hot[first_hot ..]).  Chunks never cross a
 * segment file, so that one pread() reads each.
 */
typedef struct WarmupChunk
{
	RelFileNode node;
	BlockNumber start;
	uint16		span;
	uint16		nhot;
	uint8		fork;
	bool		from_ssd;		/* every hot page was in the SSD cache */
	uint8		device;			/* index into WarmupShared.devices */
	uint8		max_usage;
	uint32		first_hot;
	uint32		usage_sum;
	pg_atomic_uint32 status;
} WarmupChunk;

typedef struct WarmupHot
{
	uint16		offset;			/* block - chunk start */
	uint8		usage;
	uint8		unused;
} WarmupHot;

/* What the planner measured and decided per tablespace (device). */
#define WARMUP_MAX_DEVICES	16

typedef struct WarmupDevice
{
	Oid			spcNode;
	int			request_blocks;	/* the chosen request size */
	double		page_ms;		/* one 8 kB read, queue depth 1 */
	double		request_ms;		/* one read of the chosen size */
	bool		measured;
	uint32		chunks;			/* disk chunks planned */
	uint32		hot_pages;
	double		density;		/* hot pages per chunk */
	double		break_even;		/* request_ms / page_ms */
	bool		preload;		/* the estimator's answer (or the GUC's) */
} WarmupDevice;

typedef enum WarmupPhase
{
	WARMUP_OFF,					/* ssd_cache.warmup = off */
	WARMUP_STARTING,
	WARMUP_PLANNING,
	WARMUP_LOADING,
	WARMUP_DONE,
	WARMUP_NOTHING				/* no usable state file */
} WarmupPhase;

#define WARMUP_PROMOTE_RING	256

typedef struct WarmupShared
{
	slock_t		mutex;			/* phase, reason, devices, ring, record info */
	WarmupPhase phase;
	char		reason[128];	/* why it ended, or why it never began */
	bool		hold;			/* connections wait (scenario a) */
	TimestampTz hold_until;		/* ... at most until then */
	TimestampTz started_at;
	TimestampTz loading_at;
	TimestampTz finished_at;

	WarmupStateInfo recorded;	/* last file written by the recorder */
	double		record_ms;
	WarmupStateInfo planned_from;	/* the file the plan came from */

	int			ndevices;
	WarmupDevice devices[WARMUP_MAX_DEVICES];

	int			queue_depth;	/* the last loader's, when unthrottled */

	/* the plan: written by the planner before phase becomes LOADING */
	uint32		nchunks;
	uint32		nhot;

	/* chunks promoted by queries' misses, for the loaders to take first */
	uint32		ring[WARMUP_PROMOTE_RING];
	uint32		ring_head;
	uint32		ring_tail;

	pg_atomic_uint64 pages_loaded;
	pg_atomic_uint64 pages_from_ssd;
	pg_atomic_uint64 cold_pages_read;
	pg_atomic_uint64 disk_requests;
	pg_atomic_uint64 chunks_loaded;
	pg_atomic_uint64 chunks_piggybacked;
	pg_atomic_uint64 chunks_skipped;
} WarmupShared;

/* The plan's arrays, after WarmupShared in the same segment. */
extern WarmupShared *warmup_shared;
extern WarmupChunk *warmup_chunks;	/* in lookup (tag) order */
extern WarmupHot *warmup_hot;
extern uint32 *warmup_order;	/* chunk indexes in loading order */
extern uint32 warmup_capacity;	/* array length: NBuffers */

/* ssd_cache_warmup_plan.c: the planner, estimator and arranger */
extern void warmup_plan(WarmupPage *pages, uint32 npages, bool physical_order);

/* ssd_cache_warmup_load.c: the loader */
extern bool warmup_am_loader;	/* this process is a loader */
extern void warmup_note_miss(const RelFileNode *node, ForkNumber fork,
							 BlockNumber block);
extern int	warmup_chunk_compare_key(const RelFileNode *node, int fork,
									 BlockNumber block, const WarmupChunk *chunk);

/* ssd_cache_warmup.c: settings, shared memory, the warm-up process */
extern bool ssd_cache_warmup_enabled;
extern int	ssd_cache_warmup_preload;
extern bool ssd_cache_warmup_hold;
extern int	ssd_cache_warmup_hold_timeout;
extern double ssd_cache_warmup_io_share;
extern double ssd_cache_warmup_pool_fraction;
extern int	ssd_cache_warmup_max_request_kb;

#define WARMUP_PRELOAD_AUTO		0
#define WARMUP_PRELOAD_ALWAYS	1
#define WARMUP_PRELOAD_NEVER	2

extern void ssd_cache_warmup_define_gucs(void);
extern Size ssd_cache_warmup_shmem_size(void);
extern void ssd_cache_warmup_shmem_init(void);
extern void ssd_cache_warmup_register(void);
extern void warmup_set_phase(WarmupPhase phase, const char *reason);

/* The read hook's fast test: is a warm-up loading now? */
static inline bool
warmup_loading(void)
{
	return warmup_shared != NULL && warmup_shared->phase == WARMUP_LOADING;
}

#endif							/* SSD_CACHE_WARMUP_H */
