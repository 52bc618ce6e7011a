/*-------------------------------------------------------------------------
 *
 * pax_handler.c
 *	  The pax table access method: PostgreSQL's table AM callbacks over the
 *	  storage (pax_metapage.c, pax_blocks.c, pax_directory.c, pax_reader.c)
 *	  and the row buffers of pax_writer.c.
 *
 * Scans decode a group's minipages into column arrays and return rows in
 * virtual slots whose values point into them (valid until the scan moves to
 * the next group, as a scan slot's contents are until the next call).
 * Visibility is decided per group (pax_group_visible()), then per row
 * (pax_visible_rows(), pax_row_visible()) for groups with a row map.
 *
 * Not supported yet: BRIN (a feature_not_supported error at CREATE INDEX):
 * its block ranges are physical block ranges of the table, and pax's TID
 * blocks are not physical blocks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "access/genam.h"
#include "access/multixact.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tsmapi.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am_d.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/defrem.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/datum.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "pax.h"

PG_FUNCTION_INFO_V1(pax_tableam_handler);

/* Row numbers a parallel participant claims at a time, at least. */
#define PAX_PARALLEL_CHUNK_ROWS		(8 * PAX_ROWNUM_RESERVE)

typedef struct PaxScanDescData
{
	TableScanDescData base;
	PaxDirectory *dir;
	int			gi;				/* current group (index into dir->groups) */
	int64		ri;				/* current row within it */
	bool		group_loaded;	/* cols hold group gi */
	bool	   *visible;		/* rows of group gi the snapshot sees */
	bool	   *alive;			/* SnapshotAny scans: rows no committed delete removed */
	uint32		vis_capacity;
	PaxColumnData *cols;
	bool	   *needed;			/* the live columns of needed_desc */
	TupleDesc	needed_desc;
	MemoryContext scan_cxt;		/* the scan's memory, decoded columns included */
	BufferAccessStrategy strategy;
	/* parallel: the claimed row-number range */
	uint64		claim_start;
	uint64		claim_end;
	/* ANALYZE */
	PaxGroupEntry **by_block;	/* groups sorted by first block */
	PaxGroupEntry *analyze_group;	/* group of the current sample block */
	PaxGroupEntry *analyze_loaded;	/* group whose columns cols hold */
	uint32		analyze_row;
	uint32		analyze_end;
	PaxDeltaRowHeader *analyze_hdrs;	/* a delta group's row headers */
	uint32		analyze_nhdrs;	/* rows the delta page holds */
	/* TABLESAMPLE and bitmap scans: rows fetched by TID */
	PaxFetch *row_fetch;
	/* TABLESAMPLE: TID blocks of PAX_ROWS_PER_TID_BLOCK row numbers */
	BlockNumber sample_nblocks;
	BlockNumber sample_block;	/* current one, or InvalidBlockNumber */
	/* bitmap scans: the current TID block's candidate offsets */
	BlockNumber bm_block;
	int			bm_ntids;
	int			bm_next;
	OffsetNumber bm_offsets[PAX_ROWS_PER_TID_BLOCK];
} PaxScanDescData;

typedef PaxScanDescData *PaxScanDesc;

typedef struct PaxParallelScanDescData
{
	ParallelTableScanDescData base;
	pg_atomic_uint64 next_rownum;	/* first row number not yet claimed */
	uint64		chunk_rows;		/* row numbers claimed at a time */
} PaxParallelScanDescData;



static const TupleTableSlotOps *
pax_slot_callbacks(Relation rel)
{
	return pax_slot_ops_get();
}

/* ------------------------------------------------------------------------
 * Sequential scans
 * ------------------------------------------------------------------------
 */

/*
 * TABLESAMPLE sees the table as TID blocks (row numbers in runs of
 * PAX_ROWS_PER_TID_BLOCK): the sampling method picks blocks and offsets in
 * them as it does for heap pages, and each picked row is fetched by TID.
 * Rows are numbered in insertion order, so a block is a run of rows inserted
 * together, as a heap page is.
 */
static void
sample_reset(PaxScanDesc scan)
{
	uint64		next_rownum;

	pax_meta_counters(scan->base.rs_rd, &next_rownum, NULL);
	scan->sample_nblocks = (BlockNumber) ((next_rownum + PAX_ROWS_PER_TID_BLOCK - 1) /
										  PAX_ROWS_PER_TID_BLOCK);
	scan->sample_block = InvalidBlockNumber;
}

static TableScanDesc
pax_scan_begin(Relation rel, Snapshot snapshot, int nkeys, ScanKey key,
			   ParallelTableScanDesc pscan, uint32 flags)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "pax scan",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PaxScanDesc scan = palloc0(sizeof(PaxScanDescData));
	TupleDesc	desc = RelationGetDescr(rel);

	if (!IsParallelWorker())
		pax_flush_relation(rel);
	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_key = key;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;
	scan->scan_cxt = cxt;
	/* bitmap scans fetch by TID through row_fetch, which reads its own */
	if (!(flags & SO_TYPE_BITMAPSCAN))
		scan->dir = pax_read_directory(rel, cxt);
	scan->needed = pax_all_columns(desc);
	scan->needed_desc = desc;
	scan->cols = palloc0(sizeof(PaxColumnData) * Max(desc->natts, 1));
	scan->gi = -1;
	scan->ri = -1;
	/* SERIALIZABLE: a sequential or sample scan reads all of it, as heap's */
	if (snapshot != NULL && IsMVCCSnapshot(snapshot) &&
		(flags & (SO_TYPE_SEQSCAN | SO_TYPE_SAMPLESCAN)))
		PredicateLockRelation(rel, snapshot);
	/* pg_stat_*_tables.seq_scan, as heap counts it: at every start and rescan */
	if (flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(rel);
	if (flags & (SO_TYPE_SAMPLESCAN | SO_TYPE_BITMAPSCAN))
		scan->row_fetch = (PaxFetch *) pax_index_fetch_begin(rel);
	if (flags & SO_TYPE_SAMPLESCAN)
		sample_reset(scan);
	if ((flags & SO_ALLOW_STRAT) &&
		RelationGetNumberOfBlocks(rel) > (BlockNumber) (NBuffers / 4))
		scan->strategy = GetAccessStrategy(BAS_BULKREAD);
	MemoryContextSwitchTo(old);
	return &scan->base;
}

/*
 * Read only these columns (by attribute index) from now on: the executor
 * node that runs the scan and the nodes above it read no others
 * (pax_exec.c).  The current group's columns stay decoded; the next group
 * reads the fewer.
 */
void
pax_scan_set_columns(TableScanDesc sscan, const bool *needed)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	TupleDesc	desc = RelationGetDescr(scan->base.rs_rd);
	int			att;

	if (scan->needed_desc == desc)
		for (att = 0; att < desc->natts; att++)
			scan->needed[att] = needed[att] && !TupleDescAttr(desc, att)->attisdropped;
	if (scan->row_fetch != NULL)
		pax_fetch_set_columns(scan->row_fetch, needed);
}

/* Selection first for a bitmap scan's row fetches (pax_exec.c). */
void
pax_scan_set_filter(TableScanDesc sscan, PaxFetchFilter *filter)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;

	if (scan->row_fetch != NULL)
		pax_fetch_set_filter(scan->row_fetch, filter);
}

static void
pax_scan_end(TableScanDesc sscan)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;

	if (scan->strategy)
		FreeAccessStrategy(scan->strategy);
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
	MemoryContextDelete(scan->scan_cxt);
}

static void
pax_scan_rescan(TableScanDesc sscan, ScanKey key, bool set_params,
				bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;

	if (set_params)
	{
		if (allow_strat)
			scan->base.rs_flags |= SO_ALLOW_STRAT;
		else
			scan->base.rs_flags &= ~SO_ALLOW_STRAT;
	}
	scan->gi = -1;
	scan->ri = -1;
	scan->group_loaded = false;
	scan->claim_start = scan->claim_end = 0;
	if (scan->base.rs_flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(scan->base.rs_rd);
	if (scan->base.rs_flags & SO_TYPE_SAMPLESCAN)
		sample_reset(scan);
}


/*
 * Move to the next (or previous) visible group and decode it with desc (the
 * caller's slot descriptor: during ALTER TABLE's rewrite that is the old
 * row type the groups were written with, not the relation's new one);
 * false at the end.
 */
static bool
advance_group(PaxScanDesc scan, ScanDirection direction, TupleDesc desc)
{
	for (;;)
	{
		PaxGroupEntry *g;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		scan->group_loaded = false;
		if (scan->base.rs_parallel)
		{
			PaxParallelScanDescData *p = (PaxParallelScanDescData *) scan->base.rs_parallel;

			/* row numbers claimed in chunks: pax_directory.c says why */
			if (!pax_claim_next_group(scan->dir, &p->next_rownum, p->chunk_rows,
									  &scan->claim_start, &scan->claim_end, &scan->gi))
				return false;
		}
		else if (ScanDirectionIsBackward(direction))
		{
			if (scan->gi < 0)
				scan->gi = scan->dir->ngroups;
			if (--scan->gi < 0)
				return false;
		}
		else
		{
			if (scan->gi >= scan->dir->ngroups)
				return false;
			if (++scan->gi >= scan->dir->ngroups)
				return false;
		}
		g = scan->dir->groups[scan->gi];
		if (!pax_group_visible_to_reader(scan->base.rs_rd, g, scan->base.rs_snapshot))
			continue;
		old = MemoryContextSwitchTo(scan->scan_cxt);
		if (scan->vis_capacity < g->nrows)
		{
			scan->vis_capacity = Max(g->nrows, 1024);
			scan->visible = palloc(sizeof(bool) * scan->vis_capacity);
			scan->alive = palloc(sizeof(bool) * scan->vis_capacity);
		}
		MemoryContextSwitchTo(old);
		if (pax_visible_rows(scan->base.rs_rd, g, scan->base.rs_snapshot, scan->visible,
							 scan->strategy, NULL) == 0)
			continue;
		if (scan->base.rs_parallel &&
			pax_claim_mask_rows(g, scan->visible, scan->claim_start, scan->claim_end) == 0)
			continue;
		/*
		 * Index builds: which rows are alive (unique checks count those).
		 * No row of a group whose insertion SnapshotSelf does not see (an
		 * aborted transaction's, before VACUUM marks it) is.
		 */
		if (scan->base.rs_snapshot->snapshot_type == SNAPSHOT_ANY)
		{
			if (pax_group_visible(g, SnapshotSelf))
				(void) pax_visible_rows(scan->base.rs_rd, g, SnapshotSelf, scan->alive,
										scan->strategy, NULL);
			else
				memset(scan->alive, 0, sizeof(bool) * g->nrows);
		}
		old = MemoryContextSwitchTo(scan->scan_cxt);

		/*
		 * The columns to read are those live in the slot's descriptor: an
		 * ALTER TABLE that drops a column and rewrites the table in one
		 * statement reads the old rows, the dropped column too (a USING
		 * expression may use it), although the relation's descriptor already
		 * calls it dropped.
		 */
		if (scan->needed_desc != desc)
		{
			scan->needed = pax_all_columns(desc);
			scan->needed_desc = desc;
		}
		pax_read_columns(scan->base.rs_rd, g, desc, scan->needed, scan->cols,
						 scan->strategy, NULL);
		MemoryContextSwitchTo(old);
		scan->group_loaded = true;
		scan->ri = ScanDirectionIsBackward(direction) ? (int64) g->nrows : -1;
		return true;
	}
}

static bool
pax_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					 TupleTableSlot *slot)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;

	for (;;)
	{
		if (scan->group_loaded)
		{
			PaxGroupEntry *g = scan->dir->groups[scan->gi];

			scan->ri += ScanDirectionIsBackward(direction) ? -1 : 1;
			if (scan->ri >= 0 && scan->ri < g->nrows && !scan->visible[scan->ri])
				continue;
			if (scan->ri >= 0 && scan->ri < g->nrows)
			{
				pax_store_row(slot, slot->tts_tupleDescriptor, scan->cols,
						  scan->needed, g, (uint32) scan->ri, sscan->rs_rd);
				pgstat_count_heap_getnext(sscan->rs_rd);
				return true;
			}
		}
		if (!advance_group(scan, direction, slot->tts_tupleDescriptor))
		{
			ExecClearTuple(slot);
			return false;
		}
	}
}

static Size
pax_parallelscan_estimate(Relation rel)
{
	return sizeof(PaxParallelScanDescData);
}

static Size
pax_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	PaxParallelScanDescData *p = (PaxParallelScanDescData *) pscan;

	if (!IsParallelWorker())
		pax_flush_relation(rel);
	p->base.phs_relid = RelationGetRelid(rel);
	p->base.phs_syncscan = false;
	pg_atomic_init_u64(&p->next_rownum, 0);
	p->chunk_rows = pax_claim_chunk_rows(pax_current_directory(rel), PAX_PARALLEL_CHUNK_ROWS);
	return sizeof(PaxParallelScanDescData);
}

static void
pax_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
	pg_atomic_write_u64(&((PaxParallelScanDescData *) pscan)->next_rownum, 0);
}

/* ------------------------------------------------------------------------
 * Row versions by TID (the row fetches themselves are pax_fetch.c's)
 * ------------------------------------------------------------------------
 */

static bool
pax_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
							TupleTableSlot *slot)
{
	bool		found = pax_fetch_row_columns(rel, tid, snapshot, slot, NULL);

	if (found && IsMVCCSnapshot(snapshot))
		PredicateLockTID(rel, tid, snapshot, InvalidTransactionId);
	return found;
}

static bool
pax_tuple_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	uint64		next;

	if (!ItemPointerIsValid(tid))
		return false;
	pax_meta_counters(scan->rs_rd, &next, NULL);
	return pax_tid_to_rownum(tid) < next;
}

static void
pax_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	pax_rownum_to_tid(pax_latest_version(scan->rs_rd, pax_tid_to_rownum(tid)), tid);
}

static bool
pax_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot)
{
	PaxFetch *f = (PaxFetch *) pax_index_fetch_begin(rel);
	PaxDirectory *dir = pax_current_directory(rel);
	uint64		rownum = pax_tid_to_rownum(&slot->tts_tid);
	int			gi = ItemPointerIsValid(&slot->tts_tid) ? pax_find_group_index(dir, rownum) : -1;
	bool		visible = false;

	if (gi < 0)
	{
		TupleTableSlot *tmp = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);

		visible = pax_fetch_unwritten_row(f, &slot->tts_tid, snapshot, tmp);
		ExecDropSingleTupleTableSlot(tmp);
		/* written into a group since the directory was read (pax_fetch_row) */
		if (!visible && ItemPointerIsValid(&slot->tts_tid))
		{
			dir = pax_current_directory(rel);
			gi = pax_find_group_index(dir, rownum);
		}
	}
	if (gi >= 0)
		visible = pax_group_visible(dir->groups[gi], snapshot) &&
			pax_row_visible(rel, dir->groups[gi], rownum, snapshot, NULL);

	pax_index_fetch_end(&f->base);
	return visible;
}

/* ------------------------------------------------------------------------
 * Writes
 * ------------------------------------------------------------------------
 */

static void
pax_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
				 int options, struct BulkInsertStateData *bistate)
{
	/* bulk paths (CREATE TABLE AS, rewrites) pass a bulk-insert state: groups */
	if (!pax_insert_row(rel, slot, cid,
						(bistate == NULL ? PAX_INSERT_SMALL : 0) | PAX_INSERT_DECODE, NULL))
		pax_log_logical_insert(rel, &slot, 1);
	pgstat_count_heap_insert(rel, 1);
}

static void
pax_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
				 CommandId cid, int options, struct BulkInsertStateData *bistate)
{
	TupleTableSlot **undecoded = palloc(sizeof(TupleTableSlot *) * Max(nslots, 1));
	int			nundecoded = 0;
	int			i;

	/* rows the group's records do not decode get a record of their own */
	for (i = 0; i < nslots; i++)
		if (!pax_insert_row(rel, slots[i], cid, PAX_INSERT_DECODE, NULL))
			undecoded[nundecoded++] = slots[i];
	pax_log_logical_insert(rel, undecoded, nundecoded);
	pfree(undecoded);
	pgstat_count_heap_insert(rel, nslots);
}

/*
 * INSERT ... ON CONFLICT: the row goes in as any single row, written at
 * once and marked with the speculative token (pax_set_speculative_token()),
 * so that a concurrent unique check that meets it waits for the token, as
 * with heap.  When its index entries went in without a conflict the mark
 * is removed; when they met one after all, the row is deleted by this very
 * command, so that no later command and no other transaction ever sees it
 * (heap "super-deletes" it).
 */
static void
pax_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
							 int options, struct BulkInsertStateData *bistate, uint32 specToken)
{
	uint64		rownum;

	/* in the delta, for others' unique checks; decoded once confirmed, not now */
	(void) pax_insert_row(rel, slot, cid, PAX_INSERT_SHARED, NULL);
	rownum = pax_tid_to_rownum(&slot->tts_tid);
	pax_flush_row(rel, rownum);
	pax_set_speculative_token(rel, rownum, specToken);
	pgstat_count_heap_insert(rel, 1);
}

static void
pax_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							   uint32 specToken, bool succeeded)
{
	uint64		rownum = pax_tid_to_rownum(&slot->tts_tid);

	pax_flush_row(rel, rownum);
	if (succeeded)
	{
		pax_set_speculative_token(rel, rownum, 0);
		/* decoded as a plain insert once confirmed (a killed one never shows) */
		pax_flush_decoded_rows(rel, GetCurrentCommandId(false));
		pax_log_logical_insert(rel, &slot, 1);
		return;
	}
	pax_kill_speculative_row(rel, rownum);
	pgstat_count_heap_delete(rel);
}

/*
 * DELETE and UPDATE: see pax_rowstate.c.  Our own rows still in the write
 * buffer are written first, so that every row we can see has a group.
 */
static TM_Result
pax_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
				 Snapshot snapshot, Snapshot crosscheck, bool wait,
				 TM_FailureData *tmfd, bool changingPart)
{
	uint64		rownum = pax_tid_to_rownum(tid);
	TM_Result	result;
	PaxLogicalOld *old;

	pax_flush_row(rel, rownum);
	pax_flush_decoded_rows(rel, cid);
	/* the old row's identity, logged with the delete when changes are decoded */
	old = pax_logical_old(rel, tid, NULL);
	result = pax_modify_row(rel, &rownum, cid, crosscheck,
							changingPart ? PAX_MODIFY_MOVE : PAX_MODIFY_DELETE,
							LockTupleExclusive, NULL,
							wait ? LockWaitBlock : LockWaitSkip, false, tmfd, old);
	pax_free_logical_old(old);
	if (result == TM_Ok)
		pgstat_count_heap_delete(rel);
	return result;
}

/*
 * Does an UPDATE leave the row's key columns (those of unique indexes a
 * foreign key may reference) as they were?  Then it may pass FOR KEY SHARE
 * locks, and such locks may join it, as with heap's non-key updates.  The
 * new values are the UPDATE's slot, or (a locker asking) the stored new
 * version's.  Compared as heap compares them: binary equality.
 */
static bool
update_keeps_keys(PaxKeyCheck *kc)
{
	Bitmapset  *keys = RelationGetIndexAttrBitmap(kc->rel, INDEX_ATTR_BITMAP_KEY);
	TupleDesc	desc = RelationGetDescr(kc->rel);
	TupleTableSlot *old;
	TupleTableSlot *new = kc->newslot;
	bool		same = true;
	int			x = -1;

	if (keys == NULL)
		return true;
	old = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	if (new == NULL)
		new = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	if (!pax_tuple_fetch_row_version(kc->rel, &kc->otid, SnapshotAny, old) ||
		(kc->newslot == NULL &&
		 !pax_tuple_fetch_row_version(kc->rel, &kc->new_tid, SnapshotAny, new)))
		same = false;
	else
	{
		slot_getallattrs(old);
		slot_getallattrs(new);
		while (same && (x = bms_next_member(keys, x)) >= 0)
		{
			int			att = x + FirstLowInvalidHeapAttributeNumber - 1;
			Form_pg_attribute a;

			if (att < 0)
				continue;
			a = TupleDescAttr(desc, att);
			if (old->tts_isnull[att] != new->tts_isnull[att] ||
				(!old->tts_isnull[att] &&
				 !datumIsEqual(old->tts_values[att], new->tts_values[att],
							   a->attbyval, a->attlen)))
				same = false;
		}
	}
	ExecDropSingleTupleTableSlot(old);
	if (new != kc->newslot)
		ExecDropSingleTupleTableSlot(new);
	bms_free(keys);
	return same;
}

/*
 * An UPDATE deletes the old version and inserts the new one, which gets a
 * new row number: every index gets an entry for it (no HOT).  An update
 * that keeps the key columns passes FOR KEY SHARE lockers (foreign key
 * checks), and the new version carries their locks.
 */
static TM_Result
pax_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
				 CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				 bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
				 bool *update_indexes)
{
	uint64		rownum = pax_tid_to_rownum(otid);
	uint64		new_rownum;
	TM_Result	result;
	PaxKeyCheck kc;
	PaxLogicalOld *old;

	memset(&kc, 0, sizeof(kc));
	kc.keys_unchanged = update_keeps_keys;
	kc.rel = rel;
	kc.otid = *otid;
	kc.newslot = slot;
	kc.state = 0;
	kc.own_lock_mode = -1;
	*lockmode = LockTupleExclusive;
	*update_indexes = false;
	pax_flush_row(rel, rownum);
	result = pax_modify_row(rel, &rownum, cid, crosscheck, PAX_MODIFY_UPDATE,
							LockTupleNoKeyExclusive, &kc,
							wait ? LockWaitBlock : LockWaitSkip, false, tmfd, NULL);
	/*
	 * The lock READ COMMITTED's recheck takes on the newest version: as
	 * heap's, no stronger than the update needs, so that it passes the FOR
	 * KEY SHARE lockers (foreign key checks) a non-key update passes.
	 */
	if (result == TM_Updated && kc.state == 0)
		kc.state = update_keeps_keys(&kc) ? 1 : 2;
	if (kc.state == 1)
		*lockmode = LockTupleNoKeyExclusive;
	if (result != TM_Ok)
		return result;
	/*
	 * When changes are decoded, the new version's delta append carries the
	 * old row's identity and decodes as the UPDATE; a new version that goes
	 * to a group gets a record of its own.
	 */
	old = pax_logical_old(rel, otid, slot);
	if (!pax_insert_row(rel, slot, cid, PAX_INSERT_SMALL, old) && old != NULL)
		pax_log_logical_change(rel, old, slot);
	pax_free_logical_old(old);
	new_rownum = pax_tid_to_rownum(&slot->tts_tid);
	pax_link_update(rel, rownum, new_rownum);
	if (kc.state == 1 || kc.own_lock_mode >= 0)
	{
		pax_flush_row(rel, new_rownum);
		pax_carry_locks(rel, rownum, new_rownum, kc.own_lock_mode);
	}
	pgstat_count_heap_update(rel, false);
	*update_indexes = true;
	return TM_Ok;
}

/*
 * Row locks: FOR UPDATE and FOR NO KEY UPDATE (and the executor's locks
 * under EvalPlanQual) take the row exclusively; shared locks would need
 * several lockers per row and are refused.
 */
static TM_Result
pax_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd)
{
	uint64		rownum = pax_tid_to_rownum(tid);
	TM_Result	result;
	PaxKeyCheck kc;

	/* a FOR KEY SHARE lock may join a non-key update in progress */
	memset(&kc, 0, sizeof(kc));
	kc.keys_unchanged = update_keeps_keys;
	kc.rel = rel;
	kc.own_lock_mode = -1;
	pax_flush_row(rel, rownum);
	result = pax_modify_row(rel, &rownum, cid, InvalidSnapshot, PAX_MODIFY_LOCK, mode, &kc,
							wait_policy,
							(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION) != 0, tmfd, NULL);
	/* TM_Invisible too: ON CONFLICT DO UPDATE asks the slot who inserted the row */
	if (result == TM_Ok || result == TM_SelfModified || result == TM_Updated ||
		result == TM_Deleted || result == TM_Invisible)
	{
		ItemPointerData cur;

		pax_rownum_to_tid(rownum, &cur);
		*tid = cur;
		/* the slot gets the (last) version we locked, or looked at */
		if (!pax_tuple_fetch_row_version(rel, &cur, SnapshotAny, slot) && result == TM_Ok)
			elog(ERROR, "pax row " UINT64_FORMAT " of \"%s\" vanished while locked",
				 rownum, RelationGetRelationName(rel));
	}
	return result;
}

static void
pax_finish_bulk_insert(Relation rel, int options)
{
	/*
	 * Write the last, partial group now: a rewrite (ALTER TABLE, REFRESH
	 * MATERIALIZED VIEW) swaps this relation's storage into another one
	 * right after, and drops this relation before commit.
	 */
	pax_flush_relation(rel);
}

/* ------------------------------------------------------------------------
 * DDL: storage, truncation, copies
 * ------------------------------------------------------------------------
 */

static void
pax_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
							  char persistence, TransactionId *freezeXid,
							  MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* CREATE TABLE, CREATE TABLE AS, ALTER TABLE SET ACCESS METHOD, rewrites */
	pax_check_column_count(rel, RelationGetDescr(rel)->natts);
	/*
	 * TRUNCATE: rows this transaction buffered go to the old file first.  A
	 * rollback to a savepoint before the TRUNCATE brings that file back, and
	 * them with it; the new file starts its own row numbers.
	 */
	pax_flush_relation(rel);
	pax_forget_relation(RelationGetRelid(rel));
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();
	srel = RelationCreateStorage(*newrnode, persistence, true);
	pax_init_storage(rel, newrnode, srel, persistence);
	smgrclose(srel);
}

static void
pax_relation_nontransactional_truncate(Relation rel)
{
	pax_forget_relation(RelationGetRelid(rel));
	pax_truncate_in_place(rel);
}

static void
pax_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	SMgrRelation dstrel = smgropen(*newrnode, rel->rd_backend);

	pax_flush_relation(rel);
	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	if (smgrexists(RelationGetSmgr(rel), INIT_FORKNUM))
	{
		smgrcreate(dstrel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, INIT_FORKNUM,
							rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

/*
 * VACUUM FULL and CLUSTER copy every row some snapshot may still see into
 * new groups, as heap copies its tuples with their xmin and xmax: a row
 * keeps its inserter (rows every snapshot sees share frozen groups) and its
 * deleter or lockers, so the copy is MVCC-safe as heap's is.  Rows get new
 * row numbers in the new order (indexes are rebuilt after); a copied
 * version an UPDATE replaced keeps its deleter but no link to the new
 * version: the rewrite ran under an exclusive lock, so no writer waits to
 * follow it, and a later one meets a deleted row (the same serialization
 * failure).  Dropped: rows of aborted inserters, rows whose delete
 * committed before every snapshot (OldestXmin), finished lockers' states.
 */
static void
copy_row(PaxFetch *f, PaxCopyWriter *w, ItemPointer tid, TransactionId OldestXmin,
		 TupleTableSlot *slot, double *num_tuples, double *tups_vacuumed,
		 double *tups_recently_dead)
{
	Relation	rel = f->base.rel;
	uint64		rownum = pax_tid_to_rownum(tid);
	PaxGroupEntry *g = pax_find_group(f->dir, rownum);
	TransactionId xmin;
	CommandId	cmin;
	bool		frozen;
	PaxRowState st;
	bool		has_state = false;

	CHECK_FOR_INTERRUPTS();
	if (g == NULL)
		return;
	if (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY))
	{
		(*tups_vacuumed)++;
		return;
	}
	/* stored at all?  (sparse groups, delta pages) */
	if (!pax_fetch_row(f, tid, SnapshotAny, slot, NULL))
		return;
	xmin = g->xmin;
	cmin = g->cmin;
	if (PaxGroupIsDelta(g))
	{
		PaxDeltaRowHeader hdr;

		if (!pax_delta_row_header(rel, g, rownum, &hdr))
			return;
		xmin = hdr.xmin;
		cmin = hdr.cmin;
		frozen = false;
	}
	else
		frozen = (g->flags & PAX_GROUP_FROZEN) != 0;
	if (!frozen)
	{
		if (TransactionIdIsInProgress(xmin))
			 /* a prepared transaction's row: keep its inserter */ ;
		else if (!TransactionIdDidCommit(xmin))
		{
			(*tups_vacuumed)++;
			return;
		}
		else if (TransactionIdPrecedes(xmin, OldestXmin))
			frozen = true;
	}

	pax_row_state(rel, g, rownum, &st);
	if (st.flags & PAX_ROW_DEAD)
	{
		(*tups_vacuumed)++;
		return;
	}
	if ((st.flags & PAX_ROW_MULTI) && !(st.flags & PAX_ROW_LOCK_ONLY) &&
		!MultiXactIdIsRunning(st.xmax, false))
	{
		/* the updater and the lockers it passed have all finished: the updater alone */
		st.xmax = pax_row_updater(&st);
		st.flags &= ~PAX_ROW_MULTI;
	}
	if ((st.flags & PAX_ROW_MULTI) && !(st.flags & PAX_ROW_LOCK_ONLY))
	{
		/* a prepared transaction among them: the state as it is */
		has_state = true;
		(*tups_recently_dead)++;
		st.flags &= ~PAX_ROW_UPDATED;
	}
	else if (TransactionIdIsValid(st.xmax))
	{
		if (st.flags & PAX_ROW_MULTI)
			has_state = MultiXactIdIsRunning(st.xmax, true);
		else if (st.flags & PAX_ROW_LOCK_ONLY)
			has_state = TransactionIdIsInProgress(st.xmax);
		else if (TransactionIdIsInProgress(st.xmax))
			has_state = true;
		else if (TransactionIdDidCommit(st.xmax))
		{
			if (TransactionIdPrecedes(st.xmax, OldestXmin))
			{
				(*tups_vacuumed)++;
				return;
			}
			has_state = true;
			(*tups_recently_dead)++;
		}
		st.flags &= ~PAX_ROW_UPDATED;
	}
	slot_getallattrs(slot);
	(void) pax_copy_writer_add(w, xmin, cmin, frozen, slot->tts_values, slot->tts_isnull,
							   has_state ? &st : NULL);
	(*num_tuples)++;
}

static void
pax_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							  Relation OldIndex, bool use_sort,
							  TransactionId OldestXmin,
							  TransactionId *xid_cutoff,
							  MultiXactId *multi_cutoff,
							  double *num_tuples, double *tups_vacuumed,
							  double *tups_recently_dead)
{
	PaxFetch *f = (PaxFetch *) pax_index_fetch_begin(OldTable);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(OldTable), &TTSOpsVirtual);
	PaxCopyWriter *w;
	PaxDirectory *dir;

	*num_tuples = *tups_vacuumed = *tups_recently_dead = 0;
	pax_flush_relation(OldTable);
	pax_set_relation_group_blocks(NewTable, pax_relation_group_blocks(OldTable));
	/* as VACUUM's rewrites: a temporary table's horizon is only ours */
	w = pax_copy_writer_begin(NewTable,
							  RelationUsesLocalBuffers(OldTable) ? InvalidTransactionId : OldestXmin);
	dir = pax_read_directory(OldTable, f->cxt);
	f->dir = dir;

	if (OldIndex != NULL)
	{
		/* CLUSTER: the index's order, every entry (SnapshotAny) */
		IndexScanDesc iscan = index_beginscan(OldTable, OldIndex, SnapshotAny, 0, 0);

		index_rescan(iscan, NULL, 0, NULL, 0);
		while (index_getnext_tid(iscan, ForwardScanDirection) != NULL)
			copy_row(f, w, &iscan->xs_heaptid, OldestXmin, slot,
					 num_tuples, tups_vacuumed, tups_recently_dead);
		index_endscan(iscan);
	}
	else
	{
		int			gi;

		for (gi = 0; gi < dir->ngroups; gi++)
		{
			PaxGroupEntry *g = dir->groups[gi];
			uint32		i;

			for (i = 0; i < g->nrows; i++)
			{
				ItemPointerData tid;

				pax_rownum_to_tid(g->first_rownum + i, &tid);
				copy_row(f, w, &tid, OldestXmin, slot,
						 num_tuples, tups_vacuumed, tups_recently_dead);
			}
		}
	}
	pax_copy_writer_end(w);
	ExecDropSingleTupleTableSlot(slot);
	pax_index_fetch_end(&f->base);
}

/* ------------------------------------------------------------------------
 * VACUUM and ANALYZE
 * ------------------------------------------------------------------------
 */

static void
pax_relation_vacuum(Relation rel, VacuumParams *params,
					BufferAccessStrategy bstrategy)
{
	TransactionId oldest_xmin,
				freeze_limit,
				new_frozen_xid;
	MultiXactId oldest_mxact,
				multi_cutoff;
	double		live,
				dead;
	uint64		rewritten;
	BlockNumber truncated = 0;

	/*
	 * heap's warning for VACUUM (PARALLEL n) of a temporary table with two or
	 * more indexes to vacuum (pax vacuums indexes in this process anyway).
	 */
	if (params->nworkers > 0 && RelationUsesLocalBuffers(rel) &&
		params->index_cleanup != VACOPTVALUE_DISABLED &&
		list_length(RelationGetIndexList(rel)) > 1)
		ereport(WARNING,
				(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
						RelationGetRelationName(rel))));

	vacuum_set_xid_limits(rel, params->freeze_min_age, params->freeze_table_age,
						  params->multixact_freeze_min_age,
						  params->multixact_freeze_table_age,
						  &oldest_xmin, &oldest_mxact, &freeze_limit, &multi_cutoff);
	if (params->options & VACOPT_FREEZE)
		freeze_limit = oldest_xmin;
	pax_vacuum_relation(rel, oldest_xmin, freeze_limit, bstrategy, &new_frozen_xid,
						&live, &dead, &rewritten);
	/* VACUUM (TRUNCATE) and the vacuum_truncate reloption, as for heap */
	if (params->truncate != VACOPTVALUE_DISABLED)
		truncated = pax_truncate_free_tail(rel);
	ereport(params->options & VACOPT_VERBOSE ? INFO : DEBUG2,
			(errmsg("pax table \"%s\": %.0f live rows, %.0f dead or deleted, " UINT64_FORMAT " groups rewritten or merged, %u pages truncated",
					RelationGetRelationName(rel), live, dead, rewritten, truncated)));

	/*
	 * The multixacts of shared row locks that VACUUM left in place have a
	 * running member, so none is older than oldest_mxact.
	 */
	vac_update_relstats(rel, RelationGetNumberOfBlocks(rel), live, 0,
						rel->rd_rel->relhasindex, new_frozen_xid,
						oldest_mxact, NULL, NULL, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 (PgStat_Counter) live, (PgStat_Counter) dead);
}

static int
cmp_group_block(const void *a, const void *b)
{
	BlockNumber ba = (*(PaxGroupEntry *const *) a)->first_block;
	BlockNumber bb = (*(PaxGroupEntry *const *) b)->first_block;

	return (ba < bb) ? -1 : (ba > bb) ? 1 : 0;
}

/*
 * ANALYZE samples physical blocks; a group block stands for its share of
 * the group's rows (row i belongs to block i * nblocks / nrows), so every
 * row is equally likely to be sampled.  Directory and metapage blocks hold
 * none.
 */
static bool
pax_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							BufferAccessStrategy bstrategy)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	PaxDirectory *dir = scan->dir;
	PaxGroupEntry *g;
	int			gi;

	if (scan->by_block == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(scan->scan_cxt);

		scan->by_block = palloc(sizeof(PaxGroupEntry *) * Max(dir->ngroups, 1));
		memcpy(scan->by_block, dir->groups, sizeof(PaxGroupEntry *) * dir->ngroups);
		qsort(scan->by_block, dir->ngroups, sizeof(PaxGroupEntry *), cmp_group_block);
		MemoryContextSwitchTo(old);
	}
	gi = pax_search_groups(scan->by_block, dir->ngroups, blockno, true);
	scan->analyze_group = NULL;
	if (gi < 0)
		return false;
	g = scan->by_block[gi];
	if (scan->analyze_loaded != g)
	{
		MemoryContext old = MemoryContextSwitchTo(scan->scan_cxt);

		pax_read_columns(sscan->rs_rd, g, RelationGetDescr(sscan->rs_rd),
						 scan->needed, scan->cols, bstrategy, NULL);
		if (scan->vis_capacity < g->nrows)
		{
			scan->vis_capacity = Max(g->nrows, 1024);
			scan->visible = palloc(sizeof(bool) * scan->vis_capacity);
			scan->alive = palloc(sizeof(bool) * scan->vis_capacity);
		}
		/* rows a committed (or our own) delete removed count as dead, as in heap */
		(void) pax_visible_rows(sscan->rs_rd, g, SnapshotSelf, scan->visible, bstrategy, NULL);
		/* rows VACUUM removed (not stored, or dead for everyone) are no rows at all */
		(void) pax_visible_rows(sscan->rs_rd, g, SnapshotAny, scan->alive, bstrategy, NULL);
		if (PaxGroupIsDelta(g))
		{
			if (scan->analyze_hdrs == NULL)
				scan->analyze_hdrs = palloc(sizeof(PaxDeltaRowHeader) * PAX_DELTA_SPAN);
			scan->analyze_nhdrs = pax_delta_read_headers(sscan->rs_rd, g, scan->analyze_hdrs, NULL,
														 bstrategy, NULL);
		}
		MemoryContextSwitchTo(old);
		scan->analyze_loaded = g;
	}
	scan->analyze_group = g;
	scan->analyze_row = (uint32) (((uint64) g->nrows * (blockno - g->first_block) +
								   g->nblocks - 1) / g->nblocks);
	scan->analyze_end = (uint32) (((uint64) g->nrows * (blockno - g->first_block + 1) +
								   g->nblocks - 1) / g->nblocks);
	return true;
}

static bool
pax_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
							double *liverows, double *deadrows,
							TupleTableSlot *slot)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	PaxGroupEntry *g = scan->analyze_group;

	while (g != NULL && scan->analyze_row < scan->analyze_end)
	{
		uint32		ri = scan->analyze_row++;
		TransactionId xmin = g->xmin;
		bool		frozen = (g->flags & PAX_GROUP_FROZEN) != 0;

		if (g->flags & PAX_GROUP_ABORTED)
		{
			*deadrows += 1;
			continue;
		}
		if (PaxGroupIsDelta(g))
		{
			/* per-row inserters; row numbers not used yet are no rows at all */
			if (ri >= scan->analyze_nhdrs)
				continue;
			xmin = scan->analyze_hdrs[ri].xmin;
		}
		if (!frozen && !TransactionIdIsCurrentTransactionId(xmin))
		{
			if (TransactionIdIsInProgress(xmin))
				continue;		/* another transaction's insert: not counted, as heap does */
			if (!TransactionIdDidCommit(xmin))
			{
				*deadrows += 1;
				continue;
			}
		}
		if (!scan->alive[ri])
			continue;			/* removed, as heap's unused line pointers */
		if (!scan->visible[ri])
		{
			*deadrows += 1;
			continue;
		}
		pax_store_row(slot, RelationGetDescr(sscan->rs_rd), scan->cols, scan->needed,
				  g, ri, sscan->rs_rd);
		*liverows += 1;
		return true;
	}
	ExecClearTuple(slot);
	return false;
}

/* TABLESAMPLE (see sample_reset()): the next TID block to sample. */
static bool
pax_scan_sample_next_block(TableScanDesc sscan, SampleScanState *scanstate)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber blk;

	if (scan->sample_nblocks == 0)
		blk = InvalidBlockNumber;
	else if (tsm->NextSampleBlock)
		blk = tsm->NextSampleBlock(scanstate, scan->sample_nblocks);
	else if (!BlockNumberIsValid(scan->sample_block))
		blk = 0;				/* methods without block sampling: every block */
	else if (scan->sample_block + 1 < scan->sample_nblocks)
		blk = scan->sample_block + 1;
	else
		blk = InvalidBlockNumber;
	scan->sample_block = blk;
	return BlockNumberIsValid(blk);
}

/* TABLESAMPLE: the next sampled row of the current block that the snapshot sees. */
static bool
pax_scan_sample_next_tuple(TableScanDesc sscan, SampleScanState *scanstate,
						   TupleTableSlot *slot)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;

	for (;;)
	{
		OffsetNumber off;
		ItemPointerData tid;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, scan->sample_block, PAX_ROWS_PER_TID_BLOCK);
		if (!OffsetNumberIsValid(off))
		{
			ExecClearTuple(slot);
			return false;
		}
		ItemPointerSet(&tid, scan->sample_block, off);
		if (pax_fetch_row(scan->row_fetch, &tid, sscan->rs_snapshot, slot, NULL))
		{
			pgstat_count_heap_getnext(sscan->rs_rd);
			return true;
		}
	}
}

/* ------------------------------------------------------------------------
 * Bitmap scans
 *
 * A TID bitmap names rows by TID block (PAX_ROWS_PER_TID_BLOCK row numbers
 * of one insertion run, as TABLESAMPLE sees the table): exact pages list
 * offsets, lossy ones stand for every row number of the block.  Each
 * candidate is fetched by TID, so a bitmap scan sees, locks (SSI) and
 * counts rows as an index scan does; the executor rechecks the quals of
 * lossy pages.  No update chain is followed: an updated row's new version
 * has a TID of its own, in the bitmap if it matches (heap's HOT chains have
 * no pax counterpart).  BitmapHeapScan's own prefetching takes TID blocks
 * for physical ones; pax_bitmap.c turns it off for pax relations.
 * ------------------------------------------------------------------------
 */

static bool
pax_scan_bitmap_next_block(TableScanDesc sscan, TBMIterateResult *tbmres)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;
	int			i;

	scan->bm_block = tbmres->blockno;
	scan->bm_next = 0;
	if (tbmres->ntuples >= 0)
	{
		scan->bm_ntids = 0;
		for (i = 0; i < tbmres->ntuples; i++)
			if (tbmres->offsets[i] >= FirstOffsetNumber &&
				tbmres->offsets[i] <= PAX_ROWS_PER_TID_BLOCK)
				scan->bm_offsets[scan->bm_ntids++] = tbmres->offsets[i];
	}
	else
	{
		for (i = 0; i < PAX_ROWS_PER_TID_BLOCK; i++)
			scan->bm_offsets[i] = (OffsetNumber) (i + FirstOffsetNumber);
		scan->bm_ntids = PAX_ROWS_PER_TID_BLOCK;
	}
	return scan->bm_ntids > 0;
}

static bool
pax_scan_bitmap_next_tuple(TableScanDesc sscan, TBMIterateResult *tbmres,
						   TupleTableSlot *slot)
{
	PaxScanDesc scan = (PaxScanDesc) sscan;

	while (scan->bm_next < scan->bm_ntids)
	{
		ItemPointerData tid;

		CHECK_FOR_INTERRUPTS();
		ItemPointerSet(&tid, scan->bm_block, scan->bm_offsets[scan->bm_next++]);
		/* the node tests these rows' bitmap quals again before its filter */
		scan->row_fetch->filter_paused = tbmres->recheck;
		if (pax_fetch_row(scan->row_fetch, &tid, sscan->rs_snapshot, slot, NULL))
		{
			/* SERIALIZABLE: the row read, as heap's bitmap scan locks it */
			if (IsMVCCSnapshot(sscan->rs_snapshot))
				PredicateLockTID(sscan->rs_rd, &tid, sscan->rs_snapshot,
								 InvalidTransactionId);
			pgstat_count_heap_fetch(sscan->rs_rd);
			return true;
		}
		/* dropped by the fetch's filter: read as the node's qual would have */
		if (scan->row_fetch->filtered && IsMVCCSnapshot(sscan->rs_snapshot))
			PredicateLockTID(sscan->rs_rd, &tid, sscan->rs_snapshot, InvalidTransactionId);
	}
	ExecClearTuple(slot);
	return false;
}

/* ------------------------------------------------------------------------
 * Index builds
 * ------------------------------------------------------------------------
 */

static double
pax_index_build_range_scan(Relation table_rel, Relation index_rel,
						   IndexInfo *index_info, bool allow_sync,
						   bool anyvisible, bool progress,
						   BlockNumber start_blockno, BlockNumber numblocks,
						   IndexBuildCallback callback, void *callback_state,
						   TableScanDesc scan)
{
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *predicate;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	double		reltuples = 0;
	Snapshot	snapshot = NULL;
	uint64		min_rownum = 0,
				max_rownum = PG_UINT64_MAX;

	if (index_rel->rd_rel->relam == BRIN_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index access method \"%s\" is not supported on pax table \"%s\"",
						get_am_name(index_rel->rd_rel->relam),
						RelationGetRelationName(table_rel)),
				 errdetail("BRIN summarizes ranges of physical table blocks; pax rows have logical TIDs, not block positions."),
				 errhint("Use a btree, hash, GiST, SP-GiST or GIN index; pax's own group statistics skip groups as a BRIN index would.")));
	/* a TID block range selects row numbers (logical TIDs) */
	if (numblocks != InvalidBlockNumber)
	{
		min_rownum = (uint64) start_blockno * PAX_ROWS_PER_TID_BLOCK;
		max_rownum = (uint64) (start_blockno + numblocks) * PAX_ROWS_PER_TID_BLOCK;
	}

	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	/*
	 * A plain build indexes every row whose writer is not known to have
	 * aborted (an index entry for an invisible row is harmless: fetches check
	 * visibility; a missing one for a visible row is not).  A concurrent
	 * build, and amcheck's heapallindexed check, ask for the rows of an MVCC
	 * snapshot instead.
	 */
	if (scan == NULL)
	{
		if (index_info->ii_Concurrent)
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, allow_sync);
		}
		else
			scan = table_beginscan_strat(table_rel, SnapshotAny, 0, NULL, true, allow_sync);
	}

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		uint64		rownum = pax_tid_to_rownum(&slot->tts_tid);

		CHECK_FOR_INTERRUPTS();
		if (rownum < min_rownum || rownum >= max_rownum)
			continue;
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		/* a row a committed delete removed is indexed, but not checked for uniqueness */
		callback(index_rel, &slot->tts_tid, values, isnull,
				 scan->rs_snapshot->snapshot_type != SNAPSHOT_ANY ||
				 ((PaxScanDesc) scan)->alive[((PaxScanDesc) scan)->ri],
				 callback_state);
		reltuples += 1;
	}
	table_endscan(scan);
	if (snapshot != NULL)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

/*
 * CREATE INDEX CONCURRENTLY's second pass: index the rows the reference
 * snapshot sees that the first pass missed.  state->tuplesort holds the
 * index's TIDs in order; a pax scan returns rows in row number (TID)
 * order, so one merge walk finds the missing ones, as heap's does.
 */
static void
pax_index_validate_scan(Relation table_rel, Relation index_rel,
						IndexInfo *index_info, Snapshot snapshot,
						ValidateIndexState *state)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	ExprState  *predicate;
	TableScanDesc scan;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	ItemPointerData indexcursor;
	bool		index_done = false;

	ItemPointerSetInvalid(&indexcursor);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);
	scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, false);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		ItemPointer tid = &slot->tts_tid;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;
		while (!index_done &&
			   (!ItemPointerIsValid(&indexcursor) || ItemPointerCompare(&indexcursor, tid) < 0))
		{
			Datum		encoded;
			bool		encoded_null;

			if (tuplesort_getdatum(state->tuplesort, true, &encoded, &encoded_null, NULL))
				itemptr_decode(&indexcursor, DatumGetInt64(encoded));
			else
				index_done = true;
		}
		if (ItemPointerIsValid(&indexcursor) && ItemPointerEquals(&indexcursor, tid))
			continue;
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		index_insert(index_rel, values, isnull, tid, table_rel,
					 index_info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, index_info);
		state->tups_inserted += 1;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
}

/* ------------------------------------------------------------------------
 * Sizes
 * ------------------------------------------------------------------------
 */

static bool
pax_relation_needs_toast_table(Relation rel)
{
	/* values are stored whole inside a group (a row must fit in one) */
	return false;
}

static Oid
pax_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

static void
pax_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
						   double *tuples, double *allvisfrac)
{
	BlockNumber curpages = RelationGetNumberOfBlocks(rel);
	BlockNumber relpages = (BlockNumber) rel->rd_rel->relpages;
	double		reltuples = rel->rd_rel->reltuples;
	double		min_tuples = 0;

	/*
	 * heap's rule for a table never vacuumed or analyzed: assume at least
	 * 10 pages of rows of the columns' widths, so that a table just created
	 * is not planned as tiny (a sequential scan where data loaded later
	 * wants an index, and under SERIALIZABLE a predicate lock on the whole
	 * table where an index scan locks rows).
	 */
	if (curpages < 10 && relpages == 0 && !rel->rd_rel->relhassubclass)
	{
		int32		width = get_rel_data_width(rel, attr_widths);

		curpages = 10;
		min_tuples = rint(10.0 * PAX_BLOCK_PAYLOAD / Max(width, 1));
	}
	*pages = curpages;
	*allvisfrac = 0;
	if (curpages == 0)
	{
		*tuples = 0;
		return;
	}
	if (reltuples >= 0 && relpages > 0)
	{
		*tuples = rint(reltuples / relpages * curpages);
		return;
	}
	/* never vacuumed or analyzed: count the rows the directory holds */
	{
		MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "pax estimate",
												  ALLOCSET_SMALL_SIZES);
		PaxDirectory *dir = pax_read_directory(rel, cxt);
		double		n = 0;
		int			i;

		for (i = 0; i < dir->ngroups; i++)
		{
			PaxGroupEntry *g = dir->groups[i];

			if (!(g->flags & PAX_GROUP_ABORTED))
				n += PaxGroupIsDelta(g) ? pax_delta_nrows(rel, g) : g->nstored;
		}
		MemoryContextDelete(cxt);
		*tuples = Max(n, min_tuples);
	}
}

static const TableAmRoutine pax_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = pax_slot_callbacks,

	.scan_begin = pax_scan_begin,
	.scan_end = pax_scan_end,
	.scan_rescan = pax_scan_rescan,
	.scan_getnextslot = pax_scan_getnextslot,

	.parallelscan_estimate = pax_parallelscan_estimate,
	.parallelscan_initialize = pax_parallelscan_initialize,
	.parallelscan_reinitialize = pax_parallelscan_reinitialize,

	.index_fetch_begin = pax_index_fetch_begin,
	.index_fetch_reset = pax_index_fetch_reset,
	.index_fetch_end = pax_index_fetch_end,
	.index_fetch_tuple = pax_index_fetch_tuple,

	.tuple_insert = pax_tuple_insert,
	.tuple_insert_speculative = pax_tuple_insert_speculative,
	.tuple_complete_speculative = pax_tuple_complete_speculative,
	.multi_insert = pax_multi_insert,
	.tuple_delete = pax_tuple_delete,
	.tuple_update = pax_tuple_update,
	.tuple_lock = pax_tuple_lock,
	.finish_bulk_insert = pax_finish_bulk_insert,

	.tuple_fetch_row_version = pax_tuple_fetch_row_version,
	.tuple_get_latest_tid = pax_tuple_get_latest_tid,
	.tuple_tid_valid = pax_tuple_tid_valid,
	.tuple_satisfies_snapshot = pax_tuple_satisfies_snapshot,
	.index_delete_tuples = pax_index_delete_tuples,

	.relation_set_new_filenode = pax_relation_set_new_filenode,
	.relation_nontransactional_truncate = pax_relation_nontransactional_truncate,
	.relation_copy_data = pax_relation_copy_data,
	.relation_copy_for_cluster = pax_relation_copy_for_cluster,
	.relation_vacuum = pax_relation_vacuum,
	.scan_analyze_next_block = pax_scan_analyze_next_block,
	.scan_analyze_next_tuple = pax_scan_analyze_next_tuple,
	.index_build_range_scan = pax_index_build_range_scan,
	.index_validate_scan = pax_index_validate_scan,

	.relation_size = table_block_relation_size,
	.relation_needs_toast_table = pax_relation_needs_toast_table,
	.relation_toast_am = pax_relation_toast_am,
	.relation_fetch_toast_slice = NULL,

	.relation_estimate_size = pax_relation_estimate_size,

	.scan_bitmap_next_block = pax_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = pax_scan_bitmap_next_tuple,
	.scan_sample_next_block = pax_scan_sample_next_block,
	.scan_sample_next_tuple = pax_scan_sample_next_tuple,
};

const TableAmRoutine *
pax_table_am_routine(void)
{
	return &pax_methods;
}

Datum
pax_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&pax_methods);
}
