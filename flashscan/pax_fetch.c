/*-------------------------------------------------------------------------
 *
 * pax_fetch.c
 *	  Fetching pax rows by TID: index scans, bitmap and sample scans, DML's
 *	  re-reads of a row, CLUSTER's copy, and FlashJoin's fetch kernel.
 *
 * A fetch keeps a copy of the table's group directory and decoded rows of
 * the needed columns: the window of rows around the last one fetched (a
 * stride's, growing while fetches go on in order), or the whole group once
 * enough fetches in a row have landed in it (a range scan, a bitmap scan,
 * a fetch in TID order); a delta page's row alone, or the page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/sysattr.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "pax.h"
#include "pax_minipage.h"
#include "ssdkit_path.h"

/* GUCs flashscan.scan_needed_columns and flashscan.fetch_selection_first (pax_exec.c) */
bool		pax_scan_needed_columns = true;
bool		pax_fetch_filter_first = true;

/* For the planner: will the fetches of index and bitmap scans filter first? */
bool
pax_fetch_selection_first(void)
{
	return pax_scan_needed_columns && pax_fetch_filter_first;
}

/*
 * May a fetch test this clause of its node's filter before the node does
 * (the node tests it again on every row the fetch returns)?  Not with a
 * volatile function (a row that passes is tested again), a SubPlan (run
 * twice it costs twice) or a function a user defined: one may be costly,
 * or say it ran (RAISE, track_functions), which a second run would make
 * visible; the built-in ones cost little and leave no trace.  The
 * executor's filter (pax_exec.c) and the planner's price of it
 * (flashscan_scan.c) go by this.
 */
bool
pax_fetch_may_test(Node *clause)
{
	return !contain_volatile_functions(clause) && !contain_subplans(clause) &&
		!ssdkit_calls_user_functions(clause, NULL);
}

/*
 * A fetch of the needed columns (NULL: every column not dropped) of rows of
 * rel, in a memory context of its own under the current one.
 */
PaxFetch *
pax_fetch_begin(Relation rel, const bool *needed)
{
	TupleDesc	desc = RelationGetDescr(rel);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "pax fetch",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PaxFetch   *f = palloc0(sizeof(PaxFetch));

	/* rows still in this backend's write buffer are served from it (pax_fetch_row) */
	f->base.rel = rel;
	f->cxt = cxt;
	f->needed = pax_all_columns(desc);
	if (needed != NULL)
		memcpy(f->needed, needed, sizeof(bool) * desc->natts);
	f->cols = palloc0(sizeof(PaxColumnData) * Max(desc->natts, 1));
	f->loaded = palloc0(sizeof(bool) * Max(desc->natts, 1));
	f->to_read = palloc0(sizeof(bool) * Max(desc->natts, 1));
	MemoryContextSwitchTo(old);
	return f;
}

/* Fetch only these columns (by attribute index) from now on. */
void
pax_fetch_set_columns(PaxFetch *f, const bool *needed)
{
	TupleDesc	desc = RelationGetDescr(f->base.rel);
	int			att;

	for (att = 0; att < desc->natts; att++)
		f->needed[att] = needed[att] && !TupleDescAttr(desc, att)->attisdropped;
	f->cur = f->last = f->window = NULL;	/* decoded with the other columns */
	f->prefetched = NULL;
}

/*
 * Selection first from now on (NULL: none): the filter's stages run on
 * each row a fetch reads alone (not on a group decoded whole, whose columns
 * are all read anyway), and a row that fails one is not returned.  The
 * caller (pax_exec.c) gives it only to a node that would evaluate the same
 * clauses on every row the fetch returns, in the same order, so the rows
 * dropped early are the rows the node would drop.
 */
void
pax_fetch_set_filter(PaxFetch *f, PaxFetchFilter *filter)
{
	f->filter = filter;
	f->filter_off = false;
	f->filter_tested = f->filter_passed = 0;
}

void
pax_fetch_end(PaxFetch *f)
{
	MemoryContextDelete(f->cxt);
}

IndexFetchTableData *
pax_index_fetch_begin(Relation rel)
{
	return &pax_fetch_begin(rel, NULL)->base;
}

void
pax_index_fetch_reset(IndexFetchTableData *scan)
{
}

void
pax_index_fetch_end(IndexFetchTableData *scan)
{
	pax_fetch_end((PaxFetch *) scan);
}

/* MemoryContextCallback: the fetch's memory goes (its end, or an error). */
static void
release_directory(void *arg)
{
	PaxFetch   *f = (PaxFetch *) arg;

	if (f->dir_cached && f->dir != NULL)
		pax_directory_release(f->dir);
	f->dir = NULL;
}

/*
 * The group holding a TID: in the backend's cached directory, taken again
 * when the TID is not in the copy we hold (the directory may have changed
 * since).  A directory the caller set (VACUUM FULL's, read under its lock)
 * is kept.
 */
static PaxGroupEntry *
find_group(PaxFetch *f, ItemPointer tid)
{
	uint64		rownum = pax_tid_to_rownum(tid);
	PaxGroupEntry *g = NULL;
	PaxDirectory *dir;

	if (!ItemPointerIsValid(tid))
		return NULL;
	/*
	 * The last fetch's group first: fetches in the table's order (a range,
	 * a bitmap, Flash Fetch's sorted passes) stay in it for thousands of
	 * rows, and a binary search over the directory misses the CPU cache at
	 * every step (4% of a 6-million-row in-order fetch).  f->last is of
	 * f->dir, and groups of one directory copy do not overlap.
	 */
	if (f->last != NULL && rownum - f->last->first_rownum < f->last->nrows)
		return f->last;
	if (f->dir != NULL)
	{
		g = pax_find_group(f->dir, rownum);
		if (g != NULL || !f->dir_cached)
			return g;
	}
	dir = pax_directory_acquire(f->base.rel);
	if (f->dir != NULL)
		pax_directory_release(f->dir);
	else
	{
		f->dir_release.func = release_directory;
		f->dir_release.arg = f;
		MemoryContextRegisterResetCallback(f->cxt, &f->dir_release);
	}
	if (dir != f->dir)
		f->cur = f->last = f->prefetched = f->window = NULL;	/* pointed into the old copy */
	f->dir = dir;
	f->dir_cached = true;
	return pax_find_group(f->dir, rownum);
}

/*
 * A row that is in no group yet: in this backend's write buffer, or in
 * another writer's, which only a dirty snapshot (a unique-index check)
 * must learn about: it reports the writer so that the caller waits for it
 * and looks again.
 */
bool
pax_fetch_unwritten_row(PaxFetch *f, ItemPointer tid, Snapshot snapshot,
					TupleTableSlot *slot)
{
	uint64		rownum = pax_tid_to_rownum(tid);
	CommandId	cid;
	TransactionId owner;

	if (pax_buffered_row(f->base.rel, rownum, slot, &cid))
	{
		if (snapshot->snapshot_type == SNAPSHOT_MVCC && cid >= snapshot->curcid)
			return false;
		if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
			snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		return snapshot->snapshot_type != SNAPSHOT_HISTORIC_MVCC;
	}
	if (snapshot->snapshot_type != SNAPSHOT_DIRTY)
	{
		/* a concurrent writer's row: a rw-conflict for a serializable reader */
		if (IsMVCCSnapshot(snapshot) &&
			CheckForSerializableConflictOutNeeded(f->base.rel, snapshot))
			pax_conflict_out(f->base.rel, pax_reservation_owner(f->base.rel, rownum),
							 snapshot);
		return false;
	}
	owner = pax_reservation_owner(f->base.rel, rownum);
	if (!TransactionIdIsValid(owner) || TransactionIdIsCurrentTransactionId(owner) ||
		!TransactionIdIsInProgress(owner))
		return false;
	snapshot->xmin = owner;
	snapshot->xmax = InvalidTransactionId;
	snapshot->speculativeToken = 0;
	/* the caller only waits for owner; the slot holds no values */
	ExecClearTuple(slot);
	ExecStoreAllNullTuple(slot);
	slot->tts_tid = *tid;
	return true;
}

/*
 * Fetches in row order over most of the table's groups (Flash Fetch's
 * sorted passes): on the first fetch in a group, its needed minipages and
 * the next group's are asked for, so that the device has the next group in
 * flight while this one is decoded.
 */
static void
prefetch_ahead(PaxFetch *f, PaxGroupEntry *g)
{
	int			natts = RelationGetDescr(f->base.rel)->natts;
	int			gi = pax_find_group_index(f->dir, g->first_rownum);

	(void) pax_prefetch_columns(f->base.rel, g, f->needed, natts);
	if (gi >= 0 && gi + 1 < f->dir->ngroups && !PaxGroupIsDelta(f->dir->groups[gi + 1]))
		(void) pax_prefetch_columns(f->base.rel, f->dir->groups[gi + 1], f->needed, natts);
	f->prefetched = g;
}

/*
 * Place the window of stored rows of group g over stored row k
 * (pax_stored_index()), holding no column yet (load_window() reads them):
 * a stride's rows (what reading row k alone would walk anyway), twice the
 * last window's when the fetch continues right after it (an index range, a
 * bitmap page of neighbours), up to PAX_MINIPAGE_MAX_READ_ROWS.  A range of
 * 100 rows thus reads each needed minipage's blocks about once instead of
 * once a row.
 */
static void
place_window(PaxFetch *f, PaxGroupEntry *g, uint32 k, int natts)
{
	uint32		size = PAX_STRIDE_ROWS;
	uint32		first = k - k % PAX_STRIDE_ROWS;

	if (f->window == g && k == f->window_first + f->window_rows)
	{
		size = Min(f->window_size * 2, PAX_MINIPAGE_MAX_READ_ROWS);
		first = k;
	}
	f->cur = NULL;				/* cols are rewritten */
	f->window = g;
	f->window_first = first;
	f->window_rows = Min(size, g->nstored - first);
	f->window_size = size;
	memset(f->loaded, 0, sizeof(bool) * natts);
	/* a point query reads one window: it needs no cache */
	if (f->prefixes == NULL && f->windows_read++ > 0)
		f->prefixes = pax_prefix_cache_create();	/* in f->cxt: our caller is there */
}

/*
 * Decode the window's rows of the wanted columns it does not hold yet into
 * f->cols.  A column is marked held only once read: after an error half
 * way it is read again.
 */
static void
load_window(PaxFetch *f, PaxGroupEntry *g, TupleDesc desc, const bool *wanted)
{
	bool		any = false;
	int			att;

	for (att = 0; att < desc->natts; att++)
	{
		f->to_read[att] = wanted[att] && !f->loaded[att];
		any |= f->to_read[att];
	}
	if (!any)
		return;
	pax_read_row_run(f->base.rel, g, desc, f->to_read, f->window_first, f->window_rows,
					 f->cols, f->prefixes);
	for (att = 0; att < desc->natts; att++)
		f->loaded[att] |= f->to_read[att];
}

/*
 * Past this many rows, a filter that let through more than
 * FILTER_KEEP_PASS_RATE of them is stopped: each row it passes has its
 * clauses evaluated twice (here and by the node), and reading its columns
 * in stages costs a little more than in one go.
 */
#define FILTER_TRIAL_ROWS 1024
#define FILTER_KEEP_PASS_RATE 0.9

/*
 * Run the filter's stages on the window's stored row k (row ri of g): each
 * stage's columns read, then its clauses evaluated on the slot holding the
 * columns read so far, in the filter's own ExprContext (an index scan's
 * one call may drop many rows: its per-tuple memory is reset for each).  A
 * row dropped counts as the node's own "Rows Removed by Filter".
 */
static bool
passes_filter(PaxFetch *f, PaxGroupEntry *g, uint32 k, uint32 ri, TupleTableSlot *slot,
			  MemoryContext caller_cxt)
{
	PaxFetchFilter *filter = f->filter;
	ExprContext *econtext = filter->econtext;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	bool		pass = true;
	int			s;

	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	for (s = 0; s < filter->nstages && pass; s++)
	{
		load_window(f, g, desc, filter->cols[s]);
		pax_store_row_at(slot, desc, f->cols, f->loaded, k - f->window_first, g, ri,
						 f->base.rel);
		MemoryContextSwitchTo(caller_cxt);
		pass = ExecQual(filter->quals[s], econtext);
		MemoryContextSwitchTo(f->cxt);
	}
	f->filter_tested++;
	if (pass)
		f->filter_passed++;
	else
	{
		InstrCountFiltered1(filter->ps, 1);
		pgstat_count_heap_fetch(filter->counted);
	}
	if (f->filter_tested == FILTER_TRIAL_ROWS &&
		f->filter_passed > FILTER_KEEP_PASS_RATE * f->filter_tested)
		f->filter_off = true;
	return pass;
}

bool
pax_fetch_row(PaxFetch *f, ItemPointer tid, Snapshot snapshot,
		  TupleTableSlot *slot, bool *all_dead)
{
	PaxGroupEntry *g = find_group(f, tid);
	MemoryContext old;
	uint32		ri;

	if (all_dead)
		*all_dead = false;
	f->filtered = false;
	if (g == NULL)
	{
		if (!ItemPointerIsValid(tid))
			return false;
		if (pax_fetch_unwritten_row(f, tid, snapshot, slot))
			return true;

		/*
		 * Between our directory read and the reservation's, the writer may
		 * have put the row's group in the directory and then given up (or
		 * reused) its reservation: it publishes the group first, so a
		 * directory read now has it.
		 */
		g = find_group(f, tid);
		if (g == NULL)
			return false;
	}
	if (!pax_group_visible_to_reader(f->base.rel, g, snapshot))
	{
		if (all_dead)
			*all_dead = (g->flags & PAX_GROUP_ABORTED) != 0;
		return false;
	}
	if (!pax_row_visible(f->base.rel, g, pax_tid_to_rownum(tid), snapshot, all_dead))
		return false;
	/*
	 * A fetch reads its row's window (read_window()) until fetches in a row
	 * have landed in the same group often enough (a range or bitmap-ordered
	 * scan, a sorted fetch) that decoding the group's needed columns once is
	 * cheaper: a window costs a few partial minipage reads per column (a
	 * variable-width value walks its stride, in format 4 its whole
	 * minipage), so a few fetches (an index probe's handful of adjacent
	 * rows) cost less than a decode of the whole group.  A delta page may
	 * have gained rows since it was decoded: it is decoded again for a row
	 * beyond those, and for any row when the
	 * snapshot is not MVCC (a row it sees may be one whose insertion was
	 * not finished then).  Under an MVCC snapshot a visible row's values
	 * cannot change: an update writes a new row.
	 */
	ri = (uint32) (pax_tid_to_rownum(tid) - g->first_rownum);
	f->run = (g == f->last) ? f->run + 1 : 1;
	if (g != f->last && !PaxGroupIsDelta(g))
		f->decode_after = f->dir->format >= 5 ?
			Min(g->nstored, pax_needed_blocks(g, f->needed, RelationGetDescr(f->base.rel)->natts) *
				PAX_FETCH_DECODE_ROWS_PER_BLOCK) :
			g->nstored / PAX_FETCH_DECODE_DIVISOR;
	if (f->read_ahead && !PaxGroupIsDelta(g) && g != f->prefetched)
		prefetch_ahead(f, g);
	old = MemoryContextSwitchTo(f->cxt);
	if (!PaxGroupIsDelta(g) && f->cur != g && f->run < Max(2, f->decode_after))
	{
		uint32		k = pax_stored_index(f->base.rel, g, ri);

		if (f->window != g || k < f->window_first || k >= f->window_first + f->window_rows)
			place_window(f, g, k, slot->tts_tupleDescriptor->natts);
		if (f->filter != NULL && !f->filter_off && !f->filter_paused &&
			!passes_filter(f, g, k, ri, slot, old))
		{
			MemoryContextSwitchTo(old);
			ExecClearTuple(slot);
			f->last = g;
			f->filtered = true;
			return false;
		}
		load_window(f, g, slot->tts_tupleDescriptor, f->needed);
		pax_store_row_at(slot, slot->tts_tupleDescriptor, f->cols, f->needed,
						 k - f->window_first, g, ri, f->base.rel);
	}
	else if (PaxGroupIsDelta(g) && f->cur != g && f->run < PAX_FETCH_DELTA_DECODE_RUN)
	{
		ExecClearTuple(slot);
		pax_delta_read_row(f->base.rel, g, slot->tts_tupleDescriptor, f->needed, ri, f->cols,
						   slot->tts_values, slot->tts_isnull);
		pax_store_virtual_row(slot, g, ri, f->base.rel);
		f->cur = f->window = NULL;
	}
	else
	{
		if (f->cur != g ||
			(PaxGroupIsDelta(g) && (ri >= f->cur_rows || !IsMVCCSnapshot(snapshot))))
		{
			/*
			 * The needed minipages' blocks asked for first: read one by one
			 * in order, they would set off the kernel's readahead, which
			 * pulls in the columns that follow them in the group too.
			 */
			if (!PaxGroupIsDelta(g) && g != f->prefetched)
				(void) pax_prefetch_columns(f->base.rel, g, f->needed,
											RelationGetDescr(f->base.rel)->natts);
			f->cur = f->window = NULL;	/* cols are rewritten */
			f->cur_rows = pax_read_columns(f->base.rel, g, slot->tts_tupleDescriptor,
										   f->needed, f->cols, NULL, &f->blocks_read);
			f->cur = g;
			f->groups_decoded++;
		}
		pax_store_row(slot, slot->tts_tupleDescriptor, f->cols, f->needed, g, ri, f->base.rel);
	}
	MemoryContextSwitchTo(old);
	f->last = g;
	f->rows_fetched++;
	return true;
}

bool
pax_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid,
					  Snapshot snapshot, TupleTableSlot *slot,
					  bool *call_again, bool *all_dead)
{
	bool		found;

	*call_again = false;
	found = pax_fetch_row((PaxFetch *) scan, tid, snapshot, slot, all_dead);

	/*
	 * SERIALIZABLE: the row read, as heap locks the tuple it returns (the
	 * index AM locks the index pages it read, which covers rows not found);
	 * a row the filter dropped was read as the node's qual would have.
	 */
	if ((found || ((PaxFetch *) scan)->filtered) && IsMVCCSnapshot(snapshot))
		PredicateLockTID(scan->rel, tid, snapshot, InvalidTransactionId);
	return found;
}

/*
 * One row version: every column, or (attrs not NULL) only those in attrs
 * (attribute numbers offset by FirstLowInvalidHeapAttributeNumber, as
 * RelationGetIndexAttrBitmap() gives them), the others NULL.
 */
bool
pax_fetch_row_columns(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
					  const Bitmapset *attrs)
{
	PaxFetch *f = (PaxFetch *) pax_index_fetch_begin(rel);
	bool		found;

	if (attrs != NULL)
	{
		TupleDesc	desc = RelationGetDescr(rel);
		int			att;

		for (att = 0; att < desc->natts; att++)
			f->needed[att] = !TupleDescAttr(desc, att)->attisdropped &&
				bms_is_member(att + 1 - FirstLowInvalidHeapAttributeNumber, attrs);
	}

	/* one row, often one per updated or locked row: the cached directory serves */
	found = pax_fetch_row(f, tid, snapshot, slot, NULL);

	/* the slot's values point into the fetch's memory: keep a copy */
	if (found)
		ExecMaterializeSlot(slot);
	pax_index_fetch_end(&f->base);
	return found;
}

