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
 * Throttling: after each disk read the loader sleeps so that it keeps the
 * device busy at most ssd_cache.warmup_io_share of the time, whatever the
 * device: a disk that seeks or an IOPS-capped volume serves the loader's
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
#include "storage/smgr.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relfilenodemap.h"

#include "ssd_cache.h"
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
		return;
	}
}

/* The next chunk of this database: promoted ones first, then in order. */
static int64
next_chunk(uint32 *cursor, Oid dboid, bool shared_too)
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
		if (warmup_chunks[idx].node.dbNode == dboid ||
			(shared_too && warmup_chunks[idx].node.dbNode == InvalidOid))
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

		if (c->node.dbNode != dboid &&
			!(shared_too && c->node.dbNode == InvalidOid))
			continue;
		status = pg_atomic_read_u32(&c->status);
		if ((status == CHUNK_PENDING || status == CHUNK_PROMOTED) &&
			pg_atomic_compare_exchange_u32(&c->status, &status, CHUNK_TAKEN))
			return idx;
	}
	return -1;
}

/* One pread() of the chunk's span (clipped to the relation's size). */
static void
read_span(const WarmupChunk *c, BlockNumber nblocks, char *scratch, bool throttle)
{
	BlockNumber span = Min((BlockNumber) c->span, nblocks - c->start);
	char	   *path = chunk_path(c);
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	instr_time	start,
				elapsed;
	double		ms;

	if (fd < 0)
	{
		pfree(path);
		return;					/* the buffer manager's reads will say why */
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
	ms = INSTR_TIME_GET_MILLISEC(elapsed);
	if (throttle && ssd_cache_warmup_io_share < 1.0 && ms > 0.05)
	{
		long		sleep_ms = (long) (ms * (1.0 - ssd_cache_warmup_io_share) /
									   ssd_cache_warmup_io_share);

		if (sleep_ms > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(sleep_ms, 10000L), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
}

static bool
pool_is_full(void)
{
	return !have_free_buffer() ||
		pg_atomic_read_u64(&warmup_shared->pages_loaded) >=
		(uint64) (ssd_cache_warmup_pool_fraction * NBuffers);
}

/*
 * Load one chunk in its own transaction.  Returns false when the pool is
 * full (the chunk is then left untouched).
 */
static bool
load_chunk(WarmupChunk *c, char *scratch, bool throttle)
{
	Oid			reloid;
	Relation	rel;
	BlockNumber nblocks;
	bool		full = false;

	StartTransactionCommand();
	reloid = RelidByRelfilenode(c->node.spcNode, c->node.relNode);
	rel = OidIsValid(reloid) ? try_relation_open(reloid, AccessShareLock) : NULL;
	if (rel == NULL ||
		!RelFileNodeEquals(rel->rd_node, c->node) ||
		rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT ||
		!smgrexists(RelationGetSmgr(rel), (ForkNumber) c->fork) ||
		(nblocks = RelationGetNumberOfBlocksInFork(rel, (ForkNumber) c->fork)) <= c->start)
	{
		if (rel)
			relation_close(rel, AccessShareLock);
		CommitTransactionCommand();
		pg_atomic_write_u32(&c->status, CHUNK_SKIPPED);
		pg_atomic_fetch_add_u64(&warmup_shared->chunks_skipped, 1);
		return true;
	}

	/* test only: a slow device, for the first 100 chunks */
	if (ssd_cache_fault_enabled("warmup_slow_load") &&
		pg_atomic_read_u64(&warmup_shared->chunks_loaded) < 100)
		pg_usleep(100 * 1000L);
	if (!c->from_ssd)
		read_span(c, nblocks, scratch, throttle);

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
			ReleaseBuffer(ReadBufferExtended(rel, (ForkNumber) c->fork, block,
											 RBM_NORMAL, NULL));
		pg_atomic_fetch_add_u64(&warmup_shared->pages_loaded, 1);
		if (c->from_ssd)
			pg_atomic_fetch_add_u64(&warmup_shared->pages_from_ssd, 1);
	}
	relation_close(rel, AccessShareLock);
	CommitTransactionCommand();
	pg_atomic_write_u32(&c->status, full ? CHUNK_SKIPPED : CHUNK_DONE);
	if (!full)
		pg_atomic_fetch_add_u64(&warmup_shared->chunks_loaded, 1);
	return !full;
}

/*
 * A loader, connected to one database (main_arg); bgw_extra[0] says
 * whether it also loads the shared catalogs' chunks.
 */
void
ssd_cache_warmup_loader_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	bool		shared_too = MyBgworkerEntry->bgw_extra[0] != 0;
	uint32		cursor = 0;
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

	while ((idx = next_chunk(&cursor, dboid, shared_too)) >= 0)
	{
		WarmupChunk *c = &warmup_chunks[idx];
		MemoryContext oldcxt = CurrentMemoryContext;

		bool		full = false;

		CHECK_FOR_INTERRUPTS();
		if (warmup_shared->phase != WARMUP_LOADING)
			break;

		/* a page that cannot be read (checksum, I/O) skips its chunk only */
		PG_TRY();
		{
			if (pool_is_full())
			{
				pg_atomic_write_u32(&c->status, CHUNK_SKIPPED);
				full = true;
			}
			else
				full = !load_chunk(c, scratch, !warmup_shared->hold);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(oldcxt);
			edata = CopyErrorData();
			FlushErrorState();
			AbortCurrentTransaction();
			ereport(LOG,
					(errmsg("ssd_cache warm-up: skipped a chunk of relation %u/%u/%u: %s",
							c->node.spcNode, c->node.dbNode, c->node.relNode,
							edata->message)));
			FreeErrorData(edata);
			pg_atomic_write_u32(&c->status, CHUNK_SKIPPED);
			pg_atomic_fetch_add_u64(&warmup_shared->chunks_skipped, 1);
		}
		PG_END_TRY();
		if (full)
		{
			warmup_set_phase(WARMUP_DONE, "shared_buffers is full (ssd_cache.warmup_pool_fraction)");
			break;
		}
	}
	pfree(raw);
	proc_exit(0);
}
