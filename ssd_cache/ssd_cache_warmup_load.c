/*-------------------------------------------------------------------------
 *
 * ssd_cache_warmup_load.c
 *	  The loader (Park's BSL): brings the planned chunks into shared_buffers,
 *	  one database at a time, while queries run; and piggybacking, where a
 *	  query's miss on a page of a pending chunk reads the whole chunk.
 *
 * Each chunk is read with one pread() of its span from the segment file,
 * which leaves every page of it in the OS page cache; then only its
 * recorded pages are read into shared_buffers through the buffer manager
 * (so pages newer on the SSD cache come from there, and checksums are
 * verified as for any read), each pinned as many times as its recorded
 * usage count, which restores its place in the clock sweep (Park's LRU
 * shifting: a preloaded page is not the first victim).  The cold pages of
 * the span never enter shared_buffers.
 *
 * Safety: a chunk's relation is found by its relfilenode and opened with
 * AccessShareLock, and the chunk is loaded only if the relation still has
 * that relfilenode once locked (DROP, TRUNCATE, CLUSTER, VACUUM FULL and
 * ALTER TABLE rewrites change or remove it and take an AccessExclusiveLock
 * first) and only below its current size (VACUUM truncation).  Reading a
 * dropped relation's page into shared_buffers after its buffers were
 * dropped would leave a stale page for whichever relation reuses the
 * relfilenode; the lock is what rules that out.
 *
 * Throttling: after each disk read (and its transaction) the loader sleeps
 * so that it keeps the device busy at most ssd_cache.warmup_io_share of the
 * time, whatever the device: a disk that seeks or an IOPS-capped volume serves the loader's
 * 512 kB read and a query's 8 kB read in about the same time, so without
 * this a loader at queue depth 1 takes the whole device from the queries
 * (MySQL's preloading did, in Park's scenario b).  Waiting connections
 * (scenario a) lift the throttle.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relfilenodemap.h"

#include "ssd_cache.h"
#include "ssdkit_qdtt.h"
#include "ssd_cache_warmup.h"

PGDLLEXPORT void ssd_cache_warmup_loader_main(Datum arg);

/* Largest chunk span: ssd_cache.warmup_max_request's maximum, 1 MB. */
#define MAX_SPAN_BYTES	(1024 * 1024)
#define WARMUP_IO_ALIGN	4096

bool		warmup_am_loader = false;

/* Ordering of chunks by (file, start block): the lookup order. */
int
warmup_chunk_compare_key(const RelFileNode *node, int fork, BlockNumber block,
						 const WarmupChunk *chunk)
{
	if (node->spcNode != chunk->node.spcNode)
		return node->spcNode < chunk->node.spcNode ? -1 : 1;
	if (node->dbNode != chunk->node.dbNode)
		return node->dbNode < chunk->node.dbNode ? -1 : 1;
	if (node->relNode != chunk->node.relNode)
		return node->relNode < chunk->node.relNode ? -1 : 1;
	if (fork != chunk->fork)
		return fork < chunk->fork ? -1 : 1;
	if (block != chunk->start)
		return block < chunk->start ? -1 : 1;
	return 0;
}

static char *
chunk_path(const WarmupChunk *c)
{
	char	   *base = GetRelationPath(c->node.dbNode, c->node.spcNode, c->node.relNode,
									   InvalidBackendId, (ForkNumber) c->fork);
	BlockNumber seg = c->start / RELSEG_SIZE;

	if (seg == 0)
		return base;
	return psprintf("%s.%u", base, seg);
}

/*
 * Ask the kernel for the chunk's whole span now, asynchronously: one large
 * read the caller's own reads of its pages then wait for.  Only the OS
 * page cache is filled; no lock is needed for that.
 */
static void
advise_chunk(const WarmupChunk *c)
{
	char	   *path = chunk_path(c);
	int			fd = open(path, O_RDONLY | PG_BINARY);

	if (fd >= 0)
	{
		(void) posix_fadvise(fd, (off_t) (c->start % RELSEG_SIZE) * BLCKSZ,
							 (off_t) c->span * BLCKSZ, POSIX_FADV_WILLNEED);
		close(fd);
	}
	pfree(path);
}

/*
 * A query missed on a page (called from the read hook, only while loading;
 * the plan is immutable then).  If the page lies in a disk chunk not yet
 * taken, promote the chunk and ask the kernel for all of it now: the
 * query's own read then waits for one large read instead of issuing a
 * small one, and the loader installs the chunk's hot pages next.
 */
void
warmup_note_miss(const RelFileNode *node, ForkNumber fork, BlockNumber block)
{
	uint32		lo = 0,
				hi = warmup_shared->nchunks;
	int			back;

	/* the plan was written before the phase said loading */
	pg_read_barrier();

	/* the last chunk starting at or before the block */
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (warmup_chunk_compare_key(node, fork, block, &warmup_chunks[mid]) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}

	/* disk and SSD chunks of one file interleave: look a few back */
	for (back = 0; back < 4 && lo > 0; back++, lo--)
	{
		WarmupChunk *c = &warmup_chunks[lo - 1];
		uint32		expected = CHUNK_PENDING;

		if (!RelFileNodeEquals(c->node, *node) || c->fork != fork)
			return;
		if (c->from_ssd || block >= c->start + c->span)
			continue;
		if (!pg_atomic_compare_exchange_u32(&c->status, &expected, CHUNK_PROMOTED))
			return;
		SpinLockAcquire(&warmup_shared->mutex);
		if (warmup_shared->ring_head - warmup_shared->ring_tail < WARMUP_PROMOTE_RING)
			warmup_shared->ring[warmup_shared->ring_head++ % WARMUP_PROMOTE_RING] = lo - 1;
		SpinLockRelease(&warmup_shared->mutex);
		pg_atomic_fetch_add_u64(&warmup_shared->chunks_piggybacked, 1);
		advise_chunk(c);
		return;
	}
}

/* The next chunk of this database: promoted ones first, then in order. */
static int64
next_chunk(uint32 *cursor, Oid dboid)
{
	for (;;)
	{
		uint32		idx;
		bool		found = false;

		SpinLockAcquire(&warmup_shared->mutex);
		while (warmup_shared->ring_tail != warmup_shared->ring_head && !found)
		{
			idx = warmup_shared->ring[warmup_shared->ring_tail++ % WARMUP_PROMOTE_RING];
			found = true;
		}
		SpinLockRelease(&warmup_shared->mutex);
		if (!found)
			break;
		/* another database's promoted chunk stays promoted for its loader */
		if (warmup_chunks[idx].node.dbNode == dboid ||
			warmup_chunks[idx].node.dbNode == InvalidOid)
		{
			uint32		expected = CHUNK_PROMOTED;

			if (pg_atomic_compare_exchange_u32(&warmup_chunks[idx].status, &expected, CHUNK_TAKEN))
				return idx;
		}
	}

	while (*cursor < warmup_shared->nchunks)
	{
		uint32		idx = warmup_order[(*cursor)++];
		WarmupChunk *c = &warmup_chunks[idx];
		uint32		status;

		if (c->node.dbNode != dboid && c->node.dbNode != InvalidOid)
			continue;
		status = pg_atomic_read_u32(&c->status);
		if ((status == CHUNK_PENDING || status == CHUNK_PROMOTED) &&
			pg_atomic_compare_exchange_u32(&c->status, &status, CHUNK_TAKEN))
			return idx;
	}
	return -1;
}

/*
 * The queue depth the loader keeps when nothing throttles it (connections
 * held): from the QDTT model of the tablespace when qdtt_costing is loaded
 * and this database has a model, the smallest depth whose cost per page is
 * within 10% of the best; else 1.  The model prices random reads by queue
 * depth, which is what the loader's reads ahead are.
 */
static int
model_queue_depth(Oid spcoid)
{
	return Max(ssdkit_qdtt_queue_depth(spcoid, 1e6, 32), 1);
}

/*
 * Ask the kernel for the next chunks of this database now (queue depth
 * beyond the loader's own read); *ahead is how far the order has been
 * asked for already.  Only pages reach the OS page cache: the relation is
 * neither locked nor read into shared_buffers here.
 */
static void
prefetch_ahead(uint32 cursor, uint32 *ahead, Oid dboid, int depth)
{
	int			asked = 0;

	if (*ahead < cursor)
		*ahead = cursor;
	for (uint32 k = cursor; k < warmup_shared->nchunks && asked < depth - 1; k++)
	{
		WarmupChunk *c = &warmup_chunks[warmup_order[k]];
		uint32		status = pg_atomic_read_u32(&c->status);

		if ((c->node.dbNode != dboid && c->node.dbNode != InvalidOid) || c->from_ssd ||
			(status != CHUNK_PENDING && status != CHUNK_PROMOTED))
			continue;
		asked++;
		if (k < *ahead)
			continue;			/* asked before */
		advise_chunk(c);
		*ahead = k + 1;
	}
}

/* One pread() of the chunk's span (clipped to the relation's size); ms. */
static double
read_span(const WarmupChunk *c, BlockNumber nblocks, char *scratch)
{
	BlockNumber span = Min((BlockNumber) c->span, nblocks - c->start);
	char	   *path = chunk_path(c);
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	instr_time	start,
				elapsed;

	if (fd < 0)
	{
		pfree(path);
		return 0;				/* the buffer manager's reads will say why */
	}
	INSTR_TIME_SET_CURRENT(start);
	pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_PREFETCH);
	if (pg_pread(fd, scratch, (size_t) span * BLCKSZ,
				 (off_t) (c->start % RELSEG_SIZE) * BLCKSZ) < 0)
		elog(DEBUG1, "ssd_cache warm-up: read of \"%s\" failed: %m", path);
	pgstat_report_wait_end();
	INSTR_TIME_SET_CURRENT(elapsed);
	CloseTransientFile(fd);
	pfree(path);
	pg_atomic_fetch_add_u64(&warmup_shared->disk_requests, 1);
	pg_atomic_fetch_add_u64(&warmup_shared->cold_pages_read, span - Min(span, c->nhot));
	INSTR_TIME_SUBTRACT(elapsed, start);
	return INSTR_TIME_GET_MILLISEC(elapsed);
}

/*
 * Keep the disk busy at most ssd_cache.warmup_io_share of the time: after
 * a read of ms, sleep ms * (1 - share) / share.  Not while connections are
 * held for the warm-up (until the hold times out).  Called with no lock or
 * transaction held.
 */
static bool
throttled(void)
{
	return ssd_cache_warmup_io_share < 1.0 &&
		!(warmup_shared->hold && GetCurrentTimestamp() < warmup_shared->hold_until);
}

static void
throttle(double ms)
{
	long		sleep_ms;

	if (!throttled() || ms < 0.05)
		return;
	sleep_ms = (long) (ms * (1.0 - ssd_cache_warmup_io_share) / ssd_cache_warmup_io_share);
	if (sleep_ms <= 0)
		return;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 Min(sleep_ms, 10000L), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

static bool
pool_is_full(void)
{
	return !have_free_buffer() ||
		pg_atomic_read_u64(&warmup_shared->pages_loaded) >=
		(uint64) (ssd_cache_warmup_pool_fraction * NBuffers);
}

static void
skip_chunk(WarmupChunk *c)
{
	pg_atomic_write_u32(&c->status, CHUNK_SKIPPED);
	pg_atomic_fetch_add_u64(&warmup_shared->chunks_skipped, 1);
}

/*
 * The chunk's relation, locked, if it still has the chunk's relfilenode;
 * else NULL.  The lock is taken only if it is free at once: a loader must
 * never queue behind DDL (and make everything after the DDL queue behind
 * it); such a relation is about to change anyway.
 */
static Relation
open_chunk_relation(const WarmupChunk *c)
{
	Oid			reloid = RelidByRelfilenode(c->node.spcNode, c->node.relNode);
	Relation	rel;

	if (!OidIsValid(reloid) || !ConditionalLockRelationOid(reloid, AccessShareLock))
		return NULL;
	rel = try_relation_open(reloid, NoLock);
	if (rel == NULL)
		return NULL;			/* the lock goes with the transaction */
	if (!RelFileNodeEquals(rel->rd_node, c->node) ||
		rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT ||
		!smgrexists(RelationGetSmgr(rel), (ForkNumber) c->fork))
	{
		relation_close(rel, NoLock);
		return NULL;
	}
	return rel;
}

/*
 * Load one chunk in its own transaction; *read_ms is the disk read's time.
 * Returns false when the pool is full (the chunk is then skipped).
 */
static bool
load_chunk(WarmupChunk *c, char *scratch, double *read_ms)
{
	Relation	rel;
	BlockNumber nblocks = 0;
	bool		full = false;
	ReadBufferMode mode;

	/* the free space and visibility maps are read as their owners read them */
	mode = c->fork == MAIN_FORKNUM ? RBM_NORMAL : RBM_ZERO_ON_ERROR;
	*read_ms = 0;
	StartTransactionCommand();
	rel = open_chunk_relation(c);
	if (rel != NULL)
		nblocks = RelationGetNumberOfBlocksInFork(rel, (ForkNumber) c->fork);
	if (rel == NULL || nblocks <= c->start)
	{
		if (rel)
			relation_close(rel, NoLock);
		CommitTransactionCommand();
		skip_chunk(c);
		return true;
	}

	/* test only: a slow device, for the first 100 chunks */
	if (ssd_cache_fault_enabled("warmup_slow_load") &&
		pg_atomic_read_u64(&warmup_shared->chunks_loaded) < 100)
		pg_usleep(100 * 1000L);
	if (!c->from_ssd)
		*read_ms = read_span(c, nblocks, scratch);

	for (int h = 0; h < c->nhot; h++)
	{
		WarmupHot  *hot = &warmup_hot[c->first_hot + h];
		BlockNumber block = c->start + hot->offset;

		if (block >= nblocks)
			break;
		if (pool_is_full())
		{
			full = true;
			break;
		}
		/* each pin of an unpinned buffer raises its usage count by one */
		for (int pin = 0; pin < Max(hot->usage, 1); pin++)
			ReleaseBuffer(ReadBufferExtended(rel, (ForkNumber) c->fork, block, mode, NULL));
		pg_atomic_fetch_add_u64(&warmup_shared->pages_loaded, 1);
		if (c->from_ssd)
			pg_atomic_fetch_add_u64(&warmup_shared->pages_from_ssd, 1);
	}
	relation_close(rel, NoLock);
	CommitTransactionCommand();
	if (full)
		skip_chunk(c);
	else
	{
		pg_atomic_write_u32(&c->status, CHUNK_DONE);
		pg_atomic_fetch_add_u64(&warmup_shared->chunks_loaded, 1);
	}
	return !full;
}

/* The tablespace with the most recorded disk pages of this database. */
static Oid
busiest_tablespace(Oid dboid)
{
	Oid			best = MyDatabaseTableSpace;
	uint64		best_pages = 0;

	for (int d = 0; d < warmup_shared->ndevices; d++)
	{
		uint64		pages = 0;

		for (uint32 i = 0; i < warmup_shared->nchunks; i++)
			if (warmup_chunks[i].device == d && warmup_chunks[i].node.dbNode == dboid &&
				!warmup_chunks[i].from_ssd)
				pages += warmup_chunks[i].nhot;
		if (pages > best_pages)
		{
			best_pages = pages;
			best = warmup_shared->devices[d].spcNode;
		}
	}
	return best;
}

/*
 * A loader, connected to one database (main_arg).  Every loader may take
 * the shared catalogs' chunks too (the compare-and-swap gives each to one).
 */
void
ssd_cache_warmup_loader_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	uint32		cursor = 0;
	uint32		ahead = 0;
	int			depth;
	char	   *raw;
	char	   *scratch;
	int64		idx;

	warmup_am_loader = true;
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("ssd_cache warm-up loader");

	raw = palloc(MAX_SPAN_BYTES + WARMUP_IO_ALIGN);
	scratch = (char *) TYPEALIGN(WARMUP_IO_ALIGN, raw);

	/* the model lives in the database: ask once, for the busiest tablespace */
	StartTransactionCommand();
	depth = model_queue_depth(busiest_tablespace(dboid));
	CommitTransactionCommand();
	SpinLockAcquire(&warmup_shared->mutex);
	warmup_shared->queue_depth = depth;
	SpinLockRelease(&warmup_shared->mutex);

	while ((idx = next_chunk(&cursor, dboid)) >= 0)
	{
		WarmupChunk *c = &warmup_chunks[idx];
		MemoryContext oldcxt = CurrentMemoryContext;
		bool		full = false;
		double		read_ms = 0;

		CHECK_FOR_INTERRUPTS();
		if (warmup_shared->phase != WARMUP_LOADING)
			break;
		if (depth > 1 && !throttled())
			prefetch_ahead(cursor, &ahead, dboid, depth);

		/* a page that cannot be read (checksum, I/O) skips its chunk only */
		PG_TRY();
		{
			if (pool_is_full())
			{
				skip_chunk(c);
				full = true;
			}
			else
				full = !load_chunk(c, scratch, &read_ms);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(oldcxt);
			edata = CopyErrorData();
			FlushErrorState();
			AbortCurrentTransaction();
			ereport(LOG,
					(errcode(edata->sqlerrcode),
					 errmsg("ssd_cache warm-up: skipped a chunk of relation %u/%u/%u: %s",
							c->node.spcNode, c->node.dbNode, c->node.relNode,
							edata->message)));
			FreeErrorData(edata);
			skip_chunk(c);
		}
		PG_END_TRY();
		if (full)
		{
			warmup_set_phase(WARMUP_DONE, "shared_buffers is full (ssd_cache.warmup_pool_fraction)");
			break;
		}
		throttle(read_ms);
	}
	pfree(raw);
	proc_exit(0);
}
