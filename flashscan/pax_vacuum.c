/*-------------------------------------------------------------------------
 *
 * pax_vacuum.c
 *	  VACUUM of pax tables.
 *
 * 1. The directory: groups of aborted writers are marked aborted, committed
 *	  groups older than the freeze limit frozen (pax_vacuum_directory()).
 * 2. Row maps: states of aborted deleters and finished lockers are cleared;
 *	  rows whose delete committed before every snapshot (oldest_xmin) are
 *	  collected, with the row numbers of aborted groups.
 * 3. Indexes: entries pointing to those rows are removed
 *	  (index_bulk_delete), then the rows are marked PAX_ROW_DEAD.  Row
 *	  numbers are never reused, so an entry left by a crash in between is
 *	  harmless and the next VACUUM removes it.
 * 4. Groups: an aborted group is dropped; a group at least half dead is
 *	  rewritten with only its surviving rows; a group with dead rows whose
 *	  row map holds nothing else any transaction needs gets a one-block
 *	  dead-row bitmap instead of the map (compact_row_map(); a map costs
 *	  16 bytes a row of the group, read by a scan of any column, however
 *	  few rows were deleted); a map left by row locks alone stays.  A run
 *	  of small neighbouring groups (single-row INSERTs make them) is merged
 *	  into one.  The new group keeps
 *	  the rows' row numbers (a sparse group, pax.h) and their row states; it
 *	  replaces the old entries in one WAL record with the metapage, whose
 *	  free list gets the old blocks (reused once no older snapshot is left).
 *	  A row state that changed while we copied aborts that rewrite.
 * 5. Directory pages lose the entries of dropped groups.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/genam.h"
#include "access/multixact.h"
#include "access/nbtxlog.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "pgstat.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "port/pg_bitutils.h"

#include "pax.h"
#include "pax_minipage.h"

static BlockNumber write_dead_bitmap(Relation rel, PaxGroupEntry *g, const uint8 *bits,
									 Size len);

/* flashscan.vacuum_rewrite_fraction */
double		pax_vacuum_rewrite_fraction = 0.1;

/*
 * A group's horizon cancels standby queries whose snapshots precede it.
 * Compared with xids 2^31 later it would seem newer than they are and
 * cancel every query: a billion xids past it (anti-wraparound VACUUMs come
 * far more often), when no standby query can still be that old, it goes.
 * (A frozen tuple's cutoff cancels heap's standby queries as old.)
 */
static bool
stale_horizon(TransactionId horizon, TransactionId oldest_xmin)
{
	return TransactionIdIsNormal(horizon) && TransactionIdIsNormal(oldest_xmin) &&
		TransactionIdPrecedes(horizon, oldest_xmin) &&
		(uint32) (oldest_xmin - horizon) > (1U << 30);
}

/*
 * VACUUM's pass over the directory: mark groups of aborted writers, freeze
 * committed groups older than freeze_limit, and report what is left: the
 * oldest unfrozen xmin (the relation's new relfrozenxid), live rows (in
 * groups every snapshot will see) and dead rows (in aborted groups).
 */
static void
pax_vacuum_directory(Relation rel, TransactionId oldest_xmin,
					 TransactionId freeze_limit, TransactionId *new_frozen_xid,
					 double *live_rows, double *dead_rows)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	BlockNumber blkno;

	*new_frozen_xid = oldest_xmin;
	*live_rows = *dead_rows = 0;
	blkno = PaxPageGetMeta(BufferGetPage(buf))->dir_first;
	UnlockReleaseBuffer(buf);

	while (blkno != InvalidBlockNumber)
	{
		Page		page;
		PaxDirPageOpaque *op;
		GenericXLogState *state = NULL;
		char	   *p;
		int			i;

		vacuum_delay_point();
		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		op = PaxDirPageGetOpaque(page);
		p = PageGetContents(page);
		for (i = 0; i < op->nentries; i++)
		{
			/* (page becomes the WAL copy once an entry changes) */
			PaxGroupEntry *g = pax_next_directory_entry(rel, blkno, BufferGetPage(buf), &p);
			uint16		flags = g->flags;

			if (flags & PAX_GROUP_DELTA)
				continue;		/* per-row xmins: see vacuum_delta() */
			if (!(flags & (PAX_GROUP_FROZEN | PAX_GROUP_ABORTED)) &&
				!TransactionIdIsCurrentTransactionId(g->xmin) &&
				!TransactionIdIsInProgress(g->xmin))
			{
				if (!TransactionIdDidCommit(g->xmin))
					flags |= PAX_GROUP_ABORTED;
				else if (TransactionIdPrecedes(g->xmin, freeze_limit))
					flags |= PAX_GROUP_FROZEN;
			}
			if (flags != g->flags || stale_horizon(g->horizon, oldest_xmin))
			{
				PaxGroupEntry *wg;

				if (state == NULL)
				{
					state = GenericXLogStart(rel);
					page = GenericXLogRegisterBuffer(state, buf, 0);
				}
				wg = (PaxGroupEntry *) ((char *) page + ((char *) g - (char *) BufferGetPage(buf)));
				wg->flags = flags;
				if (stale_horizon(wg->horizon, oldest_xmin))
					wg->horizon = InvalidTransactionId;
			}
			if (flags & PAX_GROUP_EMPTY)
				continue;
			if (flags & PAX_GROUP_ABORTED)
				*dead_rows += g->nstored;
			else
			{
				if (!(flags & PAX_GROUP_FROZEN) &&
					TransactionIdPrecedes(g->xmin, *new_frozen_xid))
					*new_frozen_xid = g->xmin;
				if (!TransactionIdPrecedes(g->xmin, oldest_xmin) && !(flags & PAX_GROUP_FROZEN) &&
					!TransactionIdDidCommit(g->xmin))
					continue;	/* still being inserted: neither live nor dead yet */
				*live_rows += g->nstored;
			}
		}
		if (state != NULL)
			GenericXLogFinish(state);
		blkno = op->next;
		UnlockReleaseBuffer(buf);
	}
}

/* Row numbers whose index entries go: sorted, disjoint ranges [start, end). */
typedef struct DeadRanges
{
	uint64	   *start;
	uint64	   *end;
	int			n;
	int			cap;
} DeadRanges;

static void
add_dead(DeadRanges *d, uint64 start, uint64 end)
{
	if (d->n > 0 && d->end[d->n - 1] == start)
	{
		d->end[d->n - 1] = end;
		return;
	}
	if (d->n == d->cap)
	{
		d->cap = Max(d->cap * 2, 64);
		d->start = d->start ? repalloc(d->start, sizeof(uint64) * d->cap) : palloc(sizeof(uint64) * d->cap);
		d->end = d->end ? repalloc(d->end, sizeof(uint64) * d->cap) : palloc(sizeof(uint64) * d->cap);
	}
	d->start[d->n] = start;
	d->end[d->n] = end;
	d->n++;
}

typedef struct DeadRange
{
	uint64		start;
	uint64		end;
} DeadRange;

static int
cmp_dead_range(const void *a, const void *b)
{
	uint64		sa = ((const DeadRange *) a)->start;
	uint64		sb = ((const DeadRange *) b)->start;

	return (sa < sb) ? -1 : (sa > sb) ? 1 : 0;
}

/*
 * Sort and merge the ranges: a delta page contributes its aborted rows
 * before its row map's dead ones, which may lie below them.
 */
static void
sort_dead(DeadRanges *d)
{
	DeadRange  *r;
	int			i,
				n = 0;

	if (d->n < 2)
		return;
	r = palloc(sizeof(DeadRange) * d->n);
	for (i = 0; i < d->n; i++)
	{
		r[i].start = d->start[i];
		r[i].end = d->end[i];
	}
	qsort(r, d->n, sizeof(DeadRange), cmp_dead_range);
	for (i = 0; i < d->n; i++)
	{
		if (n > 0 && r[i].start <= d->end[n - 1])
		{
			d->end[n - 1] = Max(d->end[n - 1], r[i].end);
			continue;
		}
		d->start[n] = r[i].start;
		d->end[n] = r[i].end;
		n++;
	}
	d->n = n;
	pfree(r);
}

static bool
dead_callback(ItemPointer itemptr, void *state)
{
	DeadRanges *d = (DeadRanges *) state;
	uint64		r = pax_tid_to_rownum(itemptr);
	int			lo = 0,
				hi = d->n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (r < d->start[mid])
			hi = mid - 1;
		else if (r >= d->end[mid])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Remove the index entries of dead rows; update the indexes' statistics. */
static void
vacuum_indexes(Relation rel, DeadRanges *dead, double live, BufferAccessStrategy bstrategy)
{
	Relation   *irel;
	int			nindexes;
	int			i;

	vac_open_indexes(rel, RowExclusiveLock, &nindexes, &irel);
	for (i = 0; i < nindexes; i++)
	{
		IndexVacuumInfo ivinfo;
		IndexBulkDeleteResult *stats = NULL;

		memset(&ivinfo, 0, sizeof(ivinfo));
		ivinfo.index = irel[i];
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = true;
		ivinfo.message_level = DEBUG2;
		ivinfo.num_heap_tuples = live;
		ivinfo.strategy = bstrategy;
		if (dead->n > 0)
			stats = index_bulk_delete(&ivinfo, stats, dead_callback, dead);
		stats = index_vacuum_cleanup(&ivinfo, stats);
		if (stats && !stats->estimated_count)
			vac_update_relstats(irel[i], stats->num_pages, stats->num_index_tuples, 0,
								false, InvalidTransactionId, InvalidMultiXactId,
								NULL, NULL, false);
	}
	vac_close_indexes(nindexes, irel, NoLock);
}

/*
 * Row state i of a row map block, in the page image of the block's WAL
 * record, which the first change starts (*state stays NULL while the
 * block is only read).
 */
static PaxRowState *
writable_state(Relation rel, PaxGroupEntry *g, Buffer buf, GenericXLogState **state, Page *page,
			   uint32 i)
{
	if (*state == NULL)
	{
		*state = GenericXLogStart(rel);
		*page = GenericXLogRegisterBuffer(*state, buf, 0);
	}
	return pax_state_slot(rel, g, *page, BufferGetBlockNumber(buf), i);
}

/*
 * Pass 2 over one group's row map: clear states nobody needs, collect rows
 * that became dead (into dead, counted in *nnew), count rows dead for
 * everyone (*ndead, including ones marked before) and rows that some snapshot still sees as
 * deleted or deleting (*ndeleted, not dead yet).  Returns whether any state
 * must stay (those rows, running lockers): if none, a rewrite of the group
 * needs no row map.
 */
static bool
vacuum_row_map(Relation rel, PaxGroupEntry *g, TransactionId oldest_xmin,
			   DeadRanges *dead, uint32 *ndead, uint32 *nnew, uint32 *ndeleted,
			   BufferAccessStrategy bstrategy)
{
	uint32		nblocks = PaxRowMapBlocks(g->nrows);
	uint32		b;
	bool		kept = false;

	*ndead = *nnew = *ndeleted = 0;
	for (b = 0; b < nblocks; b++)
	{
		Buffer		buf;
		PaxRowState *st;
		uint32		i,
					end = Min(g->nrows, (b + 1) * PAX_ROW_STATES_PER_BLOCK);
		GenericXLogState *state = NULL;
		Page		page;

		vacuum_delay_point();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->row_map + b, RBM_NORMAL, bstrategy);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		pax_check_block_tag(rel, page, g->row_map + b, g->tag);
		for (i = b * PAX_ROW_STATES_PER_BLOCK; i < end; i++)
		{
			TransactionId xmax;
			bool		clear = false;

			/* (the page itself while unchanged, else the WAL record's copy) */
			st = pax_state_slot(rel, g, page, g->row_map + b, i);
			if (st == NULL)
				break;			/* a delta page ends before its span */
			xmax = st->xmax;
			if (!TransactionIdIsValid(xmax))
				continue;
			if (st->flags & PAX_ROW_DEAD)
			{
				(*ndead)++;
				continue;
			}
			if ((st->flags & PAX_ROW_MULTI) && !(st->flags & PAX_ROW_LOCK_ONLY))
			{
				/*
				 * An updater and the key-share lockers it passed: once none
				 * of them runs, the updater alone (the multixact may then be
				 * truncated away).
				 */
				if (MultiXactIdIsRunning(xmax, false))
				{
					(*ndeleted)++;
					kept = true;
					continue;
				}
				xmax = pax_row_updater(st);
				st = writable_state(rel, g, buf, &state, &page, i);
				st->xmax = xmax;
				st->flags &= ~PAX_ROW_MULTI;
			}
			if (!TransactionIdIsValid(xmax))
				clear = true;	/* a multixact without an updater after all */
			else if (st->flags & PAX_ROW_MULTI)
			{
				/* shared lockers: cleared once none runs */
				if (MultiXactIdIsRunning(xmax, true))
				{
					kept = true;
					continue;
				}
				clear = true;
			}
			else if (TransactionIdIsCurrentTransactionId(xmax) || TransactionIdIsInProgress(xmax))
			{
				if (!(st->flags & PAX_ROW_LOCK_ONLY))
					(*ndeleted)++;
				kept = true;
				continue;
			}
			else if ((st->flags & PAX_ROW_LOCK_ONLY) || !TransactionIdDidCommit(xmax))
				clear = true;	/* a finished locker, or an aborted deleter */
			else if (TransactionIdPrecedes(xmax, oldest_xmin))
			{
				add_dead(dead, g->first_rownum + i, g->first_rownum + i + 1);
				(*ndead)++;
				(*nnew)++;
			}
			else
			{
				(*ndeleted)++;
				kept = true;
			}
			if (clear)
			{
				st = writable_state(rel, g, buf, &state, &page, i);
				memset(st, 0, sizeof(PaxRowState));
			}
		}
		if (state != NULL)
			GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);
	}
	return kept;
}

/*
 * Pass 3b: mark the collected rows of group g dead.  *di is the first range
 * not wholly before g (ranges may run on into the next group).
 */
static void
mark_dead(Relation rel, PaxGroupEntry *g, DeadRanges *dead, int *di)
{
	uint64		gend = g->first_rownum + g->nrows;

	while (*di < dead->n && dead->start[*di] < gend)
	{
		uint64		r = Max(dead->start[*di], g->first_rownum);
		uint64		rend = Min(dead->end[*di], gend);

		while (r < rend)
		{
			uint32		blkidx = (uint32) ((r - g->first_rownum) / PAX_ROW_STATES_PER_BLOCK);
			BlockNumber blk = g->row_map + blkidx;
			Buffer		buf = ReadBuffer(rel, blk);
			GenericXLogState *state;
			Page		page;

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			pax_check_block_tag(rel, BufferGetPage(buf), blk, g->tag);
			state = GenericXLogStart(rel);
			page = GenericXLogRegisterBuffer(state, buf, 0);
			for (; r < rend && (r - g->first_rownum) / PAX_ROW_STATES_PER_BLOCK == blkidx; r++)
			{
				PaxRowState *st = pax_state_slot(rel, g, page, blk,
												 (uint32) (r - g->first_rownum));

				if (st == NULL)
					elog(ERROR, "pax row " UINT64_FORMAT " of \"%s\", found dead, is not on its delta page",
						 r, RelationGetRelationName(rel));
				st->flags |= PAX_ROW_DEAD;
			}
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
		}
		if (dead->end[*di] > gend)
			break;				/* the rest is the next group's */
		(*di)++;
	}
}

/* Did an earlier VACUUM mark a delta row of an aborted inserter dead? */
static bool
aborted_row_marked(Relation rel, PaxGroupEntry *g, uint64 rownum)
{
	PaxRowState st;

	if (g->row_map == InvalidBlockNumber)
		return false;
	pax_row_state(rel, g, rownum, &st);
	return (st.flags & PAX_ROW_DEAD) != 0;
}

/*
 * Pass 2 over a delta page's rows: rows of aborted inserters lose their
 * index entries (collected into dead); committed ones count as live; every
 * row's xmin holds the relation's relfrozenxid back until VACUUM rewrites
 * the page into a (frozen) group.
 */
static void
vacuum_delta(Relation rel, PaxGroupEntry *g, DeadRanges *dead, double *live,
			 double *ndead, TransactionId *frozen_xid, BufferAccessStrategy bstrategy)
{
	PaxDeltaRowHeader *hdrs = palloc(sizeof(PaxDeltaRowHeader) * g->nrows);
	uint32		n = pax_delta_read_headers(rel, g, hdrs, NULL, bstrategy, NULL);
	uint32		i;

	for (i = 0; i < n; i++)
	{
		TransactionId xmin = hdrs[i].xmin;

		if (TransactionIdIsNormal(xmin) && TransactionIdPrecedes(xmin, *frozen_xid))
			*frozen_xid = xmin;
		if (TransactionIdIsCurrentTransactionId(xmin) || TransactionIdIsInProgress(xmin))
			continue;
		if (TransactionIdDidCommit(xmin))
			*live += 1;
		else if (aborted_row_marked(rel, g, g->first_rownum + i))
		{
			/*
			 * An earlier VACUUM removed its index entries and marked it dead:
			 * the row map pass counts it among the dead rows it takes off
			 * the live ones.
			 */
			*live += 1;
		}
		else
		{
			add_dead(dead, g->first_rownum + i, g->first_rownum + i + 1);
			*ndead += 1;
		}
	}
	pfree(hdrs);
}

/*
 * Share-lock the directory page of VACUUM's entry gi if the entry is
 * still as VACUUM's copy has it, else InvalidBuffer.  While it is held,
 * the row map or bitmap the entry names stays: a delete frees a bitmap
 * (add_row_map()) under that page's exclusive lock, and the block could
 * otherwise be reused by the time we read it.
 */
static Buffer
lock_entry_if_current(Relation rel, PaxDirectory *dir, int gi)
{
	PaxGroupEntry *g = dir->groups[gi];
	Buffer		buf = pax_lock_directory_page(rel, dir->dir_blocks[gi], BUFFER_LOCK_SHARE);
	PaxGroupEntry *cur = (PaxGroupEntry *) ((char *) BufferGetPage(buf) + dir->dir_offsets[gi]);

	if (cur->first_rownum == g->first_rownum && cur->tag == g->tag &&
		cur->row_map == g->row_map && cur->flags == g->flags)
		return buf;
	UnlockReleaseBuffer(buf);
	return InvalidBuffer;
}

/* A row map block we copied states from, and its LSN then. */
typedef struct CopiedBlock
{
	BlockNumber blkno;
	XLogRecPtr	lsn;
} CopiedBlock;

/* The horizon this VACUUM has told standbys about (log_standby_conflict()). */
static Oid	conflict_rel = InvalidOid;
static TransactionId conflict_horizon = InvalidTransactionId;

/*
 * Before VACUUM removes or hides rows that a standby's snapshot older than
 * horizon may still see (a group's horizon raised, a group rewritten
 * without them), the standby resolves the conflict as it does for heap's
 * prune records: it waits up to max_standby_streaming_delay for such
 * queries, then cancels them, and hot_standby_feedback keeps it from
 * arising.  pax's generic WAL records have no redo of their own to do
 * that, so this one goes first: btree's page-reuse record, whose redo in
 * PostgreSQL 15 resolves a conflict with the snapshots of the named
 * relation's database up to the given xid and does nothing else (it names
 * no block to change).  Readers keep their own check (pax_check_horizon())
 * for what replay has not resolved yet.  Once per VACUUM of a relation and
 * horizon.
 */
static void
log_standby_conflict(Relation rel, TransactionId horizon)
{
	xl_btree_reuse_page xlrec;
	FullTransactionId next;
	TransactionId latest = horizon;

	if (!RelationNeedsWAL(rel) || !XLogStandbyInfoActive() || !TransactionIdIsNormal(horizon) ||
		(RelationGetRelid(rel) == conflict_rel && horizon == conflict_horizon))
		return;
	/* snapshots whose xmin precedes the horizon: up to the xid before it */
	TransactionIdRetreat(latest);
	next = ReadNextFullTransactionId();
	memset(&xlrec, 0, sizeof(xlrec));
	xlrec.node = rel->rd_node;
	xlrec.block = InvalidBlockNumber;
	xlrec.latestRemovedFullXid =
		FullTransactionIdFromU64(U64FromFullTransactionId(next) -
								 (uint32) (XidFromFullTransactionId(next) - latest));
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfBtreeReusePage);
	XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
	conflict_rel = RelationGetRelid(rel);
	conflict_horizon = horizon;
}

/*
 * Pass 4: replace groups [s, e) of dir, all in one directory page, by one
 * group of their surviving rows (none: the first entry is marked empty).
 * Returns false if a concurrent change made us give up.
 */
static bool
rewrite_groups(Relation rel, PaxDirectory *dir, int s, int e, TransactionId oldest_xmin,
			   BufferAccessStrategy bstrategy)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	PaxGroupEntry *first = dir->groups[s];
	uint64		span_first = first->first_rownum;
	uint32		span = (uint32) (dir->groups[e - 1]->first_rownum + dir->groups[e - 1]->nrows - span_first);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "pax vacuum rewrite",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Datum	  **values = palloc(sizeof(Datum *) * natts);
	bool	  **isnull = palloc(sizeof(bool *) * natts);
	uint8	   *present = palloc0((span + 7) / 8);
	PaxRowState *states = palloc0(sizeof(PaxRowState) * span);
	bool		any_state = false;
	PaxColumnData *cols = palloc0(sizeof(PaxColumnData) * natts);
	bool	   *needed = palloc(sizeof(bool) * natts);
	CopiedBlock *copied = NULL;
	int			ncopied = 0;
	uint32		nstored = 0;
	TransactionId merged_xmin = InvalidTransactionId;
	PaxGroupEntry *entry = palloc0(PaxGroupEntrySize(natts));
	uint32		map_blocks = 0;
	BlockNumber map_first = InvalidBlockNumber;
	Buffer	   *mapbufs = NULL;
	Buffer		metabuf,
				dirbuf;
	bool		ok = true;
	bool		moved_only;
	bool		in_place;
	GenericXLogState *state;
	PaxMetaPageData *meta;
	Page		dirpage;
	int			att,
				gi,
				c;

	for (att = 0; att < natts; att++)
	{
		values[att] = palloc(sizeof(Datum) * span);
		isnull[att] = palloc(sizeof(bool) * span);
		needed[att] = true;
	}
	for (gi = s; gi < e; gi++)
	{
		PaxGroupEntry *g = dir->groups[gi];
		bool	   *keep = palloc(sizeof(bool) * g->nrows);
		PaxRowState *gstates = palloc0(sizeof(PaxRowState) * g->nrows);
		Buffer		guard = InvalidBuffer;
		uint32		i;

		if (g->flags & PAX_GROUP_ABORTED)
			continue;			/* nothing survives */
		if (g->row_map != InvalidBlockNumber)
		{
			guard = lock_entry_if_current(rel, dir, gi);
			if (!BufferIsValid(guard))
			{
				/* a delete or a lock changed its map: try at the next VACUUM */
				MemoryContextSwitchTo(old);
				MemoryContextDelete(cxt);
				return false;
			}
		}
		if (PaxGroupHasDeadBitmap(g))
		{
			uint8	   *bits = palloc((g->nrows + 7) / 8);

			copied = copied ? repalloc(copied, sizeof(CopiedBlock) * (ncopied + 1)) :
				palloc(sizeof(CopiedBlock));
			pax_read_dead_bitmap(rel, g, bits, bstrategy, NULL, &copied[ncopied].lsn);
			copied[ncopied++].blkno = g->row_map;
			for (i = 0; i < g->nrows; i++)
				if (bits[i / 8] & (1 << (i % 8)))
					pax_dead_row_state(&gstates[i]);
		}
		else if (g->row_map != InvalidBlockNumber)
		{
			uint32		nb = PaxRowMapBlocks(g->nrows);
			uint32		b;

			copied = copied ? repalloc(copied, sizeof(CopiedBlock) * (ncopied + nb)) :
				palloc(sizeof(CopiedBlock) * nb);
			for (b = 0; b < nb; b++)
			{
				Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->row_map + b,
													 RBM_NORMAL, bstrategy);
				uint32		n = Min(g->nrows - b * PAX_ROW_STATES_PER_BLOCK,
									(uint32) PAX_ROW_STATES_PER_BLOCK);

				LockBuffer(buf, BUFFER_LOCK_SHARE);
				pax_check_block_tag(rel, BufferGetPage(buf), g->row_map + b, g->tag);
				if (PaxGroupHasPageStates(g))
				{
					/* a sealed delta page: the rows it holds (the rest stay free) */
					for (i = 0; i < n; i++)
					{
						PaxRowState *st = pax_state_slot(rel, g, BufferGetPage(buf),
														 g->row_map, i);

						if (st == NULL)
							break;
						gstates[i] = *st;
					}
				}
				else
					memcpy(gstates + b * PAX_ROW_STATES_PER_BLOCK,
						   PageGetContents(BufferGetPage(buf)), sizeof(PaxRowState) * n);
				copied[ncopied].blkno = g->row_map + b;
				copied[ncopied].lsn = PageGetLSN(BufferGetPage(buf));
				ncopied++;
				UnlockReleaseBuffer(buf);
			}
		}
		if (BufferIsValid(guard))
		{
			UnlockReleaseBuffer(guard);
			guard = InvalidBuffer;
		}

		/*
		 * Survivors: stored rows not dead, by the states just copied (the
		 * swap below checks they did not change since).  A delta page is
		 * sealed (no rows come) and its inserters have all finished: its
		 * survivors are the committed rows.
		 */
		if (PaxGroupIsDelta(g))
		{
			PaxDeltaRowHeader *hdrs = palloc(sizeof(PaxDeltaRowHeader) * g->nrows);
			uint32		n = pax_delta_read_headers(rel, g, hdrs, NULL, bstrategy, NULL);

			for (i = 0; i < g->nrows; i++)
			{
				keep[i] = i < n && TransactionIdDidCommit(hdrs[i].xmin);
				if (keep[i] && (!TransactionIdIsValid(merged_xmin) ||
								TransactionIdFollows(hdrs[i].xmin, merged_xmin)))
					merged_xmin = hdrs[i].xmin;
			}
		}
		else if (PaxGroupIsSparse(g))
		{
			Buffer		pinned = InvalidBuffer;
			const uint8 *stored = pax_read_presence(rel, g, &pinned, NULL);

			for (i = 0; i < g->nrows; i++)
				keep[i] = (stored[i / 8] & (1 << (i % 8))) != 0;
			if (BufferIsValid(pinned))
				ReleaseBuffer(pinned);
		}
		else
			memset(keep, true, sizeof(bool) * g->nrows);
		if (!PaxGroupIsDelta(g) && (!TransactionIdIsValid(merged_xmin) ||
									TransactionIdFollows(g->xmin, merged_xmin)))
			merged_xmin = g->xmin;
		for (i = 0; i < g->nrows; i++)
			if (gstates[i].flags & PAX_ROW_DEAD)
				keep[i] = false;
		pax_read_columns(rel, g, desc, needed, cols, bstrategy, NULL);
		for (i = 0; i < g->nrows; i++)
		{
			uint32		k = (uint32) (g->first_rownum + i - span_first);

			if (!keep[i])
				continue;
			present[k / 8] |= (1 << (k % 8));
			for (att = 0; att < natts; att++)
			{
				Form_pg_attribute a = TupleDescAttr(desc, att);

				isnull[att][nstored] = cols[att].isnull[i];
				values[att][nstored] = cols[att].isnull[i] ? (Datum) 0 :
					datumCopy(cols[att].values[i], a->attbyval, a->attlen);
			}
			if (TransactionIdIsValid(gstates[i].xmax))
			{
				states[k] = gstates[i];
				any_state = true;
			}
			nstored++;
		}
	}

	/* the new entry: the one group's identity, or a frozen merge */
	entry->first_rownum = span_first;
	entry->nrows = span;
	entry->row_map = InvalidBlockNumber;
	/*
	 * Snapshots older than oldest_xmin may have seen the removed rows.  A
	 * temporary table's horizon is this backend's own, which a later
	 * snapshot's xmin (held back by other sessions) can precede although no
	 * snapshot of ours can see them: no horizon, or the next statement
	 * would fail.
	 */
	entry->horizon = RelationUsesLocalBuffers(rel) ? InvalidTransactionId : oldest_xmin;
	/* a group only moved (every stored row kept) keeps its horizon (below) */
	moved_only = e - s == 1 && !PaxGroupIsDelta(first) && nstored == first->nstored;
	if (e - s == 1 && !PaxGroupIsDelta(first))
	{
		entry->flags = first->flags & ~PAX_GROUP_DEAD_BITMAP;	/* no row map or a new one */
		entry->xmin = first->xmin;
		entry->cmin = first->cmin;
	}
	else
	{
		/*
		 * Every source committed before oldest_xmin: visible to every
		 * snapshot.  The newest xmin stays, for standby snapshots.
		 */
		entry->flags = PAX_GROUP_FROZEN;
		entry->xmin = TransactionIdIsValid(merged_xmin) ? merged_xmin : FrozenTransactionId;
		entry->cmin = 0;
	}
	if (nstored == 0)
	{
		entry->flags |= PAX_GROUP_EMPTY;
		entry->ncols = first->ncols;
		entry->nstored = 0;
		entry->nblocks = 0;
		entry->first_block = InvalidBlockNumber;
		memcpy(entry->cols, first->cols, sizeof(PaxColumnExtent) * first->ncols);
	}
	else
	{
		char	   *stream = pax_encode_group(desc, natts, nstored, values, isnull, NULL, NULL,
											  nstored < span ? present : NULL,
											  pax_write_format, entry);

		pax_write_group_blocks(rel, entry, stream, pax_write_format, desc, NULL);
		if (any_state)
		{
			map_blocks = PaxRowMapBlocks(span);
			(void) pax_allocate_run(rel, map_blocks, 0, &map_first);
			pax_write_row_map(rel, map_first, states, span, entry->tag);
			entry->row_map = map_first;
		}
	}

	/*
	 * The swap.  Lock order: row map blocks, metapage, directory page.  Any
	 * row state change since we copied (an LSN moved), or an entry change
	 * (a new row map), and we give up.
	 */
	mapbufs = palloc(sizeof(Buffer) * Max(ncopied, 1));
	for (c = 0; c < ncopied; c++)
	{
		mapbufs[c] = ReadBuffer(rel, copied[c].blkno);
		LockBuffer(mapbufs[c], BUFFER_LOCK_EXCLUSIVE);
		if (PageGetLSN(BufferGetPage(mapbufs[c])) != copied[c].lsn)
			ok = false;
	}
	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	dirbuf = pax_lock_directory_page(rel, dir->dir_blocks[s], BUFFER_LOCK_EXCLUSIVE);
	for (gi = s; gi < e && ok; gi++)
	{
		PaxGroupEntry *cur = (PaxGroupEntry *) ((char *) BufferGetPage(dirbuf) + dir->dir_offsets[gi]);
		PaxGroupEntry *g = dir->groups[gi];

		if (cur->first_rownum != g->first_rownum || cur->tag != g->tag ||
			cur->row_map != g->row_map || cur->flags != g->flags)
			ok = false;
	}

	/*
	 * The new entry replaces the first old one in place, unless it has more
	 * columns (a delta page made before ALTER TABLE ADD COLUMN): then it goes
	 * to the end of the same page, if there is room (compact_directory()
	 * makes some for the next VACUUM).
	 */
	in_place = PaxGroupEntrySize(entry->ncols) <= PaxGroupEntrySize(first->ncols);
	if (ok && !in_place)
	{
		PageHeader dp = (PageHeader) BufferGetPage(dirbuf);

		ok = dp->pd_upper - dp->pd_lower >= PaxGroupEntrySize(entry->ncols);
	}
	if (ok && !moved_only)
		log_standby_conflict(rel, entry->horizon);
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (ok)
	{
		dirpage = GenericXLogRegisterBuffer(state, dirbuf, 0);
		for (gi = s; gi < e; gi++)
		{
			PaxGroupEntry *g = dir->groups[gi];
			PaxGroupEntry *cur = (PaxGroupEntry *) ((char *) dirpage + dir->dir_offsets[gi]);

			pax_free_blocks(meta, g->first_block, g->nblocks);
			if (g->row_map != InvalidBlockNumber)
				pax_free_blocks(meta, g->row_map, pax_row_map_blocks(g));
			if (gi == s && in_place)
			{
				if (moved_only)
					entry->horizon = cur->horizon;
				memcpy(cur, entry, PaxGroupEntrySize(entry->ncols));
			}
			else
				cur->flags |= PAX_GROUP_EMPTY;
		}
		if (!in_place)
		{
			memcpy((char *) dirpage + ((PageHeader) dirpage)->pd_lower, entry,
				   PaxGroupEntrySize(entry->ncols));
			((PageHeader) dirpage)->pd_lower += PaxGroupEntrySize(entry->ncols);
			PaxDirPageGetOpaque(dirpage)->nentries++;
		}
		meta->dir_version++;
	}
	else
	{
		pax_free_blocks(meta, entry->first_block, entry->nblocks);
		pax_free_blocks(meta, map_first, map_blocks);
	}
	GenericXLogFinish(state);
	UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(metabuf);
	for (c = 0; c < ncopied; c++)
		UnlockReleaseBuffer(mapbufs[c]);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return ok;
}

/*
 * Point group gi's entry at newmap instead of its row map or bitmap of
 * old_blocks blocks (to_bitmap: newmap is a dead-row bitmap made from a
 * map), in one record with the metapage, whose free list gets the old
 * blocks; if ok is false or the entry changed since VACUUM's copy, newmap
 * goes to the free list instead.  Lock order as in rewrite_groups().
 */
static bool
switch_row_map(Relation rel, PaxDirectory *dir, int gi, bool ok, BlockNumber newmap,
			   uint32 old_blocks, bool to_bitmap)
{
	PaxGroupEntry *g = dir->groups[gi];
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	Buffer		dirbuf = pax_lock_directory_page(rel, dir->dir_blocks[gi], BUFFER_LOCK_EXCLUSIVE);
	PaxGroupEntry *cur = (PaxGroupEntry *) ((char *) BufferGetPage(dirbuf) + dir->dir_offsets[gi]);
	GenericXLogState *state;
	PaxMetaPageData *meta;

	if (cur->first_rownum != g->first_rownum || cur->tag != g->tag ||
		cur->row_map != g->row_map || cur->flags != g->flags)
		ok = false;
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (ok)
	{
		cur = (PaxGroupEntry *) ((char *) GenericXLogRegisterBuffer(state, dirbuf, 0) +
								 dir->dir_offsets[gi]);
		cur->row_map = newmap;
		if (to_bitmap)
			cur->flags |= PAX_GROUP_DEAD_BITMAP;
		pax_free_blocks(meta, g->row_map, old_blocks);
		meta->dir_version++;
	}
	else
		pax_free_blocks(meta, newmap, 1);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(metabuf);
	return ok;
}

/*
 * Pass 4, for a group that is not rewritten: replace its row map, in which
 * vacuum_row_map() left only free states and rows dead for everyone, by a
 * dead-row bitmap of one block (pax.h).  The states are read again and the
 * swap checks, under the map blocks' locks, that none changed since (a new
 * delete or lock), as rewrite_groups() does.  Returns whether it swapped.
 */
static bool
compact_row_map(Relation rel, PaxDirectory *dir, int gi, BufferAccessStrategy bstrategy)
{
	PaxGroupEntry *g = dir->groups[gi];
	uint32		nb = PaxRowMapBlocks(g->nrows);
	Size		len = (g->nrows + 7) / 8;
	uint8	   *bits = palloc0(len);
	XLogRecPtr *lsns = palloc(sizeof(XLogRecPtr) * nb);
	Buffer	   *mapbufs = palloc(sizeof(Buffer) * nb);
	BlockNumber bitmap;
	bool		ok = true;
	uint32		b,
				i;

	Assert(g->row_map != InvalidBlockNumber && !PaxGroupHasDeadBitmap(g) &&
		   !PaxGroupHasPageStates(g));
	for (b = 0; b < nb && ok; b++)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->row_map + b,
											 RBM_NORMAL, bstrategy);
		const PaxRowState *st;
		uint32		end = Min(g->nrows, (b + 1) * PAX_ROW_STATES_PER_BLOCK);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		pax_check_block_tag(rel, BufferGetPage(buf), g->row_map + b, g->tag);
		lsns[b] = PageGetLSN(BufferGetPage(buf));
		st = (const PaxRowState *) PageGetContents(BufferGetPage(buf));
		for (i = b * PAX_ROW_STATES_PER_BLOCK; i < end; i++, st++)
		{
			if (st->flags & PAX_ROW_DEAD)
				bits[i / 8] |= (1 << (i % 8));
			else if (TransactionIdIsValid(st->xmax) || st->flags != 0)
				ok = false;		/* a state someone still needs */
		}
		UnlockReleaseBuffer(buf);
	}
	if (!ok)
		return false;

	bitmap = write_dead_bitmap(rel, g, bits, len);

	/* the swap; lock order as in rewrite_groups() */
	for (b = 0; b < nb; b++)
	{
		mapbufs[b] = ReadBuffer(rel, g->row_map + b);
		LockBuffer(mapbufs[b], BUFFER_LOCK_EXCLUSIVE);
		if (PageGetLSN(BufferGetPage(mapbufs[b])) != lsns[b])
			ok = false;
	}
	ok = switch_row_map(rel, dir, gi, ok, bitmap, nb, true);
	for (b = 0; b < nb; b++)
		UnlockReleaseBuffer(mapbufs[b]);
	return ok;
}

/*
 * A new block holding dead-row bitmap bits (len bytes) of group g, tagged
 * and stamped like a map, so a reader can tell it from a reused block.
 */
static BlockNumber
write_dead_bitmap(Relation rel, PaxGroupEntry *g, const uint8 *bits, Size len)
{
	Buffer		buf;
	BlockNumber blkno;
	char	   *payload = palloc0(PAX_BLOCK_PAYLOAD);
	PaxMapStamp stamp;

	(void) pax_allocate_blocks(rel, 1, &buf, pax_write_format);
	blkno = BufferGetBlockNumber(buf);
	memcpy(payload, bits, len);
	stamp.map_first = blkno;
	stamp.index = PAX_MAP_STAMP_BITMAP;
	memcpy(payload + PAX_MAP_STAMP_OFFSET, &stamp, sizeof(stamp));
	pax_write_blocks(rel, &buf, 1, payload, PAX_BLOCK_PAYLOAD, PAX_BLOCK_PAYLOAD, g->tag);
	pfree(payload);
	return blkno;
}

/*
 * Move group gi's dead-row bitmap into the lowest reusable block: it
 * never changes (a delete makes a map from it and drops it), so a copy
 * and a switch of the entry do, as compact_row_map() switches a map.
 * False if the entry changed meanwhile.
 */
static bool
move_dead_bitmap(Relation rel, PaxDirectory *dir, int gi, BufferAccessStrategy bstrategy)
{
	PaxGroupEntry *g = dir->groups[gi];
	Size		len = (g->nrows + 7) / 8;
	uint8	   *bits = palloc(len);
	BlockNumber bitmap;
	Buffer		guard;

	guard = lock_entry_if_current(rel, dir, gi);
	if (!BufferIsValid(guard))
		return false;
	pax_read_dead_bitmap(rel, g, bits, bstrategy, NULL, NULL);
	UnlockReleaseBuffer(guard);
	bitmap = write_dead_bitmap(rel, g, bits, len);
	pfree(bits);
	return switch_row_map(rel, dir, gi, true, bitmap, 1, false);
}

/* Pass 5: drop the entries of empty groups from the directory pages. */
static void
compact_directory(Relation rel)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	BlockNumber blkno = PaxPageGetMeta(BufferGetPage(metabuf))->dir_first;
	bool		changed = false;

	/* under the metapage lock no entry is appended or given a row map */
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_EXCLUSIVE);
		Page		page = BufferGetPage(buf);
		PaxDirPageOpaque *op = PaxDirPageGetOpaque(page);
		char	   *p = PageGetContents(page);
		int			i,
					nempty = 0;

		for (i = 0; i < op->nentries; i++)
			nempty += (pax_next_directory_entry(rel, blkno, page, &p)->flags &
					   PAX_GROUP_EMPTY) != 0;
		if (nempty > 0)
		{
			GenericXLogState *state = GenericXLogStart(rel);
			Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);
			char	   *src = PageGetContents(wpage);
			char	   *dst = src;
			int			n = PaxDirPageGetOpaque(wpage)->nentries,
						kept = 0;

			for (i = 0; i < n; i++)
			{
				char	   *entry = src;
				PaxGroupEntry *g = pax_next_directory_entry(rel, blkno, wpage, &src);

				if (!(g->flags & PAX_GROUP_EMPTY))
				{
					memmove(dst, entry, src - entry);
					dst += src - entry;
					kept++;
				}
			}
			memset(dst, 0, src - dst);
			((PageHeader) wpage)->pd_lower = dst - (char *) wpage;
			PaxDirPageGetOpaque(wpage)->nentries = kept;
			GenericXLogFinish(state);
			changed = true;
		}
		blkno = op->next;
		UnlockReleaseBuffer(buf);
	}
	if (changed)
	{
		GenericXLogState *state = GenericXLogStart(rel);
		PaxMetaPageData *meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

		meta->dir_version++;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
}

/* Bytes of a group's minipages (at most, for a delta page). */
static Size
group_bytes(PaxGroupEntry *g)
{
	Size		n = 0;
	int			c;

	if (PaxGroupIsDelta(g))
		return (Size) g->nblocks * PAX_BLOCK_PAYLOAD;

	for (c = 0; c < g->ncols; c++)
		n += g->cols[c].nbytes;
	return n;
}

/*
 * May group g's rows move into a new group?  Committed before every
 * snapshot.  A delta page qualifies when all its inserters have finished,
 * the committed ones before every snapshot; it is sealed then.
 */
static bool
movable(Relation rel, PaxGroupEntry *g, int natts, TransactionId oldest_xmin)
{
	if (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY))
		return false;
	if (PaxGroupIsDelta(g))
		return g->ncols <= natts && pax_delta_seal(rel, g, oldest_xmin);
	if (g->ncols != natts)
		return false;
	if (g->flags & PAX_GROUP_FROZEN)
		return true;
	return TransactionIdPrecedes(g->xmin, oldest_xmin) && TransactionIdDidCommit(g->xmin);
}

/*
 * Give group gi of dir the horizon oldest_xmin (see pax.h: rows removed for
 * snapshots older than it), with a new directory version in the same WAL
 * record, so that no reader keeps using a cached copy without it.
 */
static void
raise_horizon(Relation rel, PaxDirectory *dir, int gi, TransactionId oldest_xmin)
{
	PaxGroupEntry *g = dir->groups[gi];
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	Buffer		dirbuf = pax_lock_directory_page(rel, dir->dir_blocks[gi], BUFFER_LOCK_EXCLUSIVE);
	PaxGroupEntry *e = (PaxGroupEntry *) ((char *) BufferGetPage(dirbuf) + dir->dir_offsets[gi]);

	if (e->first_rownum == g->first_rownum && e->tag == g->tag &&
		(!TransactionIdIsValid(e->horizon) || TransactionIdPrecedes(e->horizon, oldest_xmin)))
	{
		GenericXLogState *state;
		PaxMetaPageData *meta;

		log_standby_conflict(rel, oldest_xmin);
		state = GenericXLogStart(rel);
		meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

		e = (PaxGroupEntry *) ((char *) GenericXLogRegisterBuffer(state, dirbuf, 0) +
							   dir->dir_offsets[gi]);
		e->horizon = oldest_xmin;
		meta->dir_version++;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Should a group that needs no rewrite for its own sake move, so that the
 * end of the file empties and can be truncated?  Yes when it lies in the
 * upper half of the file and free space below the half holds it: each
 * VACUUM moves such groups down, the truncation after it cuts what they
 * left, and a group below the half never moves for this.
 */
static bool
relocatable(Relation rel, PaxGroupEntry *g, BlockNumber half)
{
	if (PaxGroupIsDelta(g) || g->nblocks == 0 || half == 0 || g->first_block < half)
		return false;
	return pax_reusable_space_below(rel, half, g->nblocks);
}

/*
 * Is a group with `removable` dead rows worth rewriting without them?  At
 * flashscan.vacuum_rewrite_fraction of its stored rows: below, a dead-row
 * bitmap hides them from scans at a block's cost, but they still take
 * their space and every scan reads their values.
 */
static bool
worth_rewriting(PaxGroupEntry *g, uint32 removable)
{
	return removable > 0 && removable >= pax_vacuum_rewrite_fraction * g->nstored;
}

/* The highest block a group uses, its row map's included. */
static BlockNumber
group_top_block(PaxGroupEntry *g)
{
	BlockNumber top = g->nblocks > 0 ? g->first_block + g->nblocks - 1 : 0;

	if (g->row_map != InvalidBlockNumber && pax_row_map_blocks(g) > 0)
		top = Max(top, g->row_map + pax_row_map_blocks(g) - 1);
	return top;
}

static int
cmp_top_block_desc(const void *a, const void *b, void *arg)
{
	PaxDirectory *dir = (PaxDirectory *) arg;
	BlockNumber ta = group_top_block(dir->groups[*(const int *) a]);
	BlockNumber tb = group_top_block(dir->groups[*(const int *) b]);

	return (ta > tb) ? -1 : (ta < tb) ? 1 : 0;
}

/*
 * After the rewrites: groups at the end of the file move into reusable
 * space below them, highest first, until one cannot (a delta page, a
 * group some snapshot may not see yet, no room below): the truncation
 * after VACUUM then cuts what they left.  Directory pages do not count
 * here; the truncation moves them (pax_relocate_directory()).  Returns the
 * groups moved.
 */
static uint64
relocate_tail(Relation rel, int natts, TransactionId oldest_xmin,
			  BufferAccessStrategy bstrategy)
{
	PaxDirectory *dir;
	int		   *order;
	int			n = 0;
	int			i;
	uint64		moved = 0;

	if (RelationGetNumberOfBlocks(rel) <= PAX_METAPAGE_BLKNO + 1)
		return 0;
	if (pax_recover_free_space(rel))
		pax_settle_free_space(rel);
	dir = pax_read_directory(rel, CurrentMemoryContext);
	order = palloc(sizeof(int) * Max(dir->ngroups, 1));
	for (i = 0; i < dir->ngroups; i++)
		if (!(dir->groups[i]->flags & (PAX_GROUP_EMPTY | PAX_GROUP_ABORTED)))
			order[n++] = i;
	qsort_arg(order, n, sizeof(int), cmp_top_block_desc, dir);
	for (i = 0; i < n; i++)
	{
		PaxGroupEntry *g = dir->groups[order[i]];

		CHECK_FOR_INTERRUPTS();
		if (PaxGroupIsDelta(g) || g->nblocks == 0)
			break;
		if (g->row_map != InvalidBlockNumber && g->row_map > g->first_block &&
			PaxGroupHasDeadBitmap(g))
		{
			/* the group's bitmap is what lies highest: it moves alone */
			if (!pax_reusable_space_below(rel, g->row_map, 1) ||
				!move_dead_bitmap(rel, dir, order[i], bstrategy))
				break;
		}
		else if (!pax_reusable_space_below(rel, Max(g->first_block, g->row_map == InvalidBlockNumber ? 0 : g->row_map),
										   g->nblocks) ||
				 !movable(rel, g, natts, oldest_xmin) ||
				 !rewrite_groups(rel, dir, order[i], order[i] + 1, oldest_xmin, bstrategy))
			break;
		moved++;
		pax_settle_free_space(rel);
	}
	pfree(order);
	return moved;
}

/*
 * VACUUM of a pax table (see the file header).  Returns live and dead rows
 * and the new relfrozenxid.
 */
void
pax_vacuum_relation(Relation rel, TransactionId oldest_xmin, TransactionId freeze_limit,
					BufferAccessStrategy bstrategy, TransactionId *new_frozen_xid,
					double *live, double *dead, uint64 *groups_rewritten)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "pax vacuum",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PaxDirectory *dir;
	DeadRanges	deadr;
	uint32	   *removable;
	bool	   *map_settled;
	uint32	   *newly_dead;
	int			maps_compacted = 0;
	int			natts = RelationGetDescr(rel)->natts;
	int			group_blocks = pax_relation_group_blocks(rel);
	int			gi,
				di = 0;
	double		deleted = 0;
	BlockNumber half;

	memset(&deadr, 0, sizeof(deadr));
	*groups_rewritten = 0;
	conflict_rel = InvalidOid;	/* a new VACUUM tells standbys again */

	/* 1 */
	pax_vacuum_directory(rel, oldest_xmin, freeze_limit, new_frozen_xid, live, dead);

	/* 2 */
	dir = pax_read_directory(rel, cxt);
	removable = palloc0(sizeof(uint32) * Max(dir->ngroups, 1));
	map_settled = palloc0(sizeof(bool) * Max(dir->ngroups, 1));
	newly_dead = palloc0(sizeof(uint32) * Max(dir->ngroups, 1));
	for (gi = 0; gi < dir->ngroups; gi++)
	{
		PaxGroupEntry *g = dir->groups[gi];

		if (g->flags & PAX_GROUP_ABORTED)
		{
			add_dead(&deadr, g->first_rownum, g->first_rownum + g->nrows);
			continue;
		}
		if (PaxGroupIsDelta(g))
			vacuum_delta(rel, g, &deadr, live, dead, new_frozen_xid, bstrategy);
		/* rows a sparse group already left out are not counted again */
		if (PaxGroupHasDeadBitmap(g))
		{
			uint8	   *bits = palloc((g->nrows + 7) / 8);
			uint32		ndead;

			/*
			 * Removed rows, as a sparse group's left-out ones (not dead
			 * tuples for autovacuum): stored still, so not live either;
			 * they count towards the half-dead rewrite below.
			 */
			Buffer		guard = lock_entry_if_current(rel, dir, gi);

			/* (a delete that made a map of it meanwhile: counted next time) */
			if (!BufferIsValid(guard))
			{
				pfree(bits);
				continue;
			}
			pax_read_dead_bitmap(rel, g, bits, bstrategy, NULL, NULL);
			UnlockReleaseBuffer(guard);
			ndead = (uint32) pg_popcount((const char *) bits, (g->nrows + 7) / 8);
			pfree(bits);
			removable[gi] += ndead;
			*live -= ndead;
		}
		else if (g->row_map != InvalidBlockNumber)
		{
			uint32		ndead,
						nnew,
						ndeleted;

			/*
			 * Rows dead for everyone leave the indexes now (or did before):
			 * removed, as heap's VACUUM reports them; the dead rows left
			 * are those some snapshot still sees.
			 */
			map_settled[gi] = !vacuum_row_map(rel, g, oldest_xmin, &deadr, &ndead, &nnew,
											  &ndeleted, bstrategy);
			removable[gi] += ndead;
			newly_dead[gi] = nnew;
			*live -= ndead + ndeleted;
			deleted += ndeleted;
		}
	}

	/*
	 * 3: a hot standby's snapshot older than oldest_xmin may still see the
	 * rows about to lose their index entries and be marked dead: the
	 * groups that hold them get oldest_xmin as their horizon first, so
	 * that such a query is cancelled (a recovery conflict, as heap's prune
	 * records raise) instead of missing them.
	 */
	if (!RelationUsesLocalBuffers(rel))
		for (gi = 0; gi < dir->ngroups; gi++)
			if (newly_dead[gi] > 0)
				raise_horizon(rel, dir, gi, oldest_xmin);
	sort_dead(&deadr);
	vacuum_indexes(rel, &deadr, *live, bstrategy);
	for (gi = 0; gi < dir->ngroups; gi++)
		if (!(dir->groups[gi]->flags & PAX_GROUP_ABORTED) &&
			dir->groups[gi]->row_map != InvalidBlockNumber &&
			!PaxGroupHasDeadBitmap(dir->groups[gi]))
			mark_dead(rel, dir->groups[gi], &deadr, &di);

	/* 4: runs of groups to rewrite, each within one directory page */
	half = RelationGetNumberOfBlocks(rel) / 2;
	for (gi = 0; gi < dir->ngroups;)
	{
		PaxGroupEntry *g = dir->groups[gi];
		int			e = gi + 1;

		/*
		 * A map that only says which rows are dead becomes a bitmap, unless
		 * standbys may still run a library that reads format 4 only.
		 */
		bool		settled = map_settled[gi] && removable[gi] > 0 && !PaxGroupIsDelta(g) &&
			PaxRowMapBlocks(g->nrows) > 1;
		bool		compactable = settled && g->nrows <= PAX_DEAD_BITMAP_ROWS &&
			pax_write_format >= 5;

		CHECK_FOR_INTERRUPTS();
		if (g->flags & PAX_GROUP_ABORTED)
		{
			/* its index entries are gone: the group goes */
			if (rewrite_groups(rel, dir, gi, gi + 1, oldest_xmin, bstrategy))
				(*groups_rewritten)++;
			gi++;
			continue;
		}
		if (!movable(rel, g, natts, oldest_xmin))
		{
			if (compactable && compact_row_map(rel, dir, gi, bstrategy))
				maps_compacted++;
			gi++;
			continue;
		}
		/*
		 * Small neighbours join while the result surely fits a group: its
		 * minipages take at most the sum of theirs (fewer headers and
		 * bitmaps), plus a presence bitmap and per-minipage alignment.
		 */
		if (g->nblocks * 4 <= (uint32) group_blocks)
		{
			Size		bytes = group_bytes(g);

			while (e < dir->ngroups &&
				   dir->groups[e]->nblocks * 4 <= (uint32) group_blocks &&
				   dir->dir_blocks[e] == dir->dir_blocks[gi] &&
				   dir->groups[e]->first_rownum + dir->groups[e]->nrows - g->first_rownum <=
				   PAX_MAX_GROUP_ROWS &&
				   movable(rel, dir->groups[e], natts, oldest_xmin))
			{
				Size		span = dir->groups[e]->first_rownum + dir->groups[e]->nrows -
					g->first_rownum;
				/* (and a stride index each, which format 4 groups lack) */
				Size		total = bytes + group_bytes(dir->groups[e]) + span / 8 + 1 +
					(Size) (natts + 1) * (MAXIMUM_ALIGNOF + PAX_BLOCK_PAYLOAD / 4) +
					(Size) natts * (span / PAX_STRIDE_ROWS + 1) * sizeof(uint32);

				if (total > (Size) group_blocks * PAX_BLOCK_PAYLOAD)
					break;
				bytes += group_bytes(dir->groups[e]);
				e++;
			}
		}
		/* (a settled map too large for a bitmap: a rewrite drops it) */
		if (e - gi > 1 || worth_rewriting(g, removable[gi]) ||
			(settled && !compactable && g->nrows > PAX_DEAD_BITMAP_ROWS) ||
			PaxGroupIsDelta(g) || relocatable(rel, g, half))
		{
			if (rewrite_groups(rel, dir, gi, e, oldest_xmin, bstrategy))
			{
				(*groups_rewritten) += e - gi;
				pax_settle_free_space(rel);
			}
		}
		else if (compactable && compact_row_map(rel, dir, gi, bstrategy))
			maps_compacted++;
		gi = e;
	}

	/* 4, the end of the file: what lies above free space moves down */
	*groups_rewritten += relocate_tail(rel, natts, oldest_xmin, bstrategy);

	/* 5 */
	if (*groups_rewritten > 0 || maps_compacted > 0)
	{
		if (*groups_rewritten > 0)
			compact_directory(rel);

		/*
		 * The blocks freed are stamped with the next transaction id and
		 * reused once every snapshot is newer: take one, so that on a quiet
		 * server the next VACUUM can reuse them (heap's truncation takes
		 * one too, to log its lock).
		 */
		(void) GetCurrentTransactionId();
	}

	*dead += deleted;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
