/*-------------------------------------------------------------------------
 *
 * ssd_sort_exec.c
 *	  Executor of the SSD Sort custom scan: sort (key, TID) pairs, then fetch
 *	  the rows in key order with a look-ahead window of prefetched pages.
 *
 * Phases (thesis §4.3):
 *	1. project: the outer plan, a Seq Scan of the relation with the query's
 *	   quals and snapshot, emits (keys..., ctid);
 *	2. run generation and 3. merge: tuplesort over the narrow pairs within
 *	   work_mem, with every sort-key feature tuplesort offers (operators,
 *	   collations, NULLS FIRST/LAST, abbreviated keys);
 *	4. fetch: pairs stream out of the final merge into a window of the next
 *	   ssd_sort.prefetch_depth TIDs.  Each TID entering the window gets a
 *	   PrefetchBuffer() for its page (posix_fadvise, skipped for pages
 *	   already in shared_buffers, and for pages past the first few of an
 *	   ascending run, which the kernel's readahead reads), so the device
 *	   sees up to that many reads in flight while the head of the window is
 *	   read synchronously.  The row is then checked against the same
 *	   snapshot and returned from the pinned page; consecutive TIDs on one
 *	   page reuse the pin.  Keys are never re-evaluated: the order is the
 *	   pairs'.
 *
 * The snapshot is the query's, registered for the whole execution, so
 * VACUUM cannot remove a row version the scan saw and pruning does not move
 * its line pointer: every TID still names the visible version.  A row that
 * is not visible any more is an internal error, never silently skipped.
 *
 * Backward: like Sort, the node runs backward when asked (a cursor that
 * scrolls), over pairs kept for random access; a backward step reads the
 * previous pair and fetches its row, without look-ahead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/parallel.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "storage/itemptr.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "ssd_sort.h"
#include "ssdkit_qdtt.h"

/*
 * Ascending steps after which the fetch leaves the next pages to the
 * kernel's readahead (see fill_window()).
 */
#define SSD_SORT_READAHEAD_RUN 4

/*
 * What one participant counts for EXPLAIN ANALYZE.  A parallel SSD Sort
 * (under Gather Merge) runs one copy of the node per participant, each
 * sorting and fetching its share of the rows; the workers leave their
 * counters in the query's dynamic shared memory for the leader to show.
 */
typedef struct SsdSortCounters
{
	int64		pairs_sorted;
	int64		rows_fetched;
	int64		page_visits;
	int64		pages_read;
	int64		prefetches;
	int64		temp_blocks_written;
	double		sort_ms;
} SsdSortCounters;

typedef struct SsdSortShared
{
	int			nworkers;
	SsdSortCounters workers[FLEXIBLE_ARRAY_MEMBER];
} SsdSortShared;

typedef struct SsdSortState
{
	CustomScanState css;

	/* From the plan. */
	int			nkeys;
	AttrNumber *key_attnos;		/* 1..nkeys in the pair */
	Oid		   *sort_ops;
	Oid		   *collations;
	bool	   *nulls_first;
	int			pair_width;

	/* Set at start-up. */
	bool		random_access;	/* keep the sorted pairs (rescans, backward) */
	int			prefetch_depth;
	bool		prefetch_skipped;	/* relation in memory: no prefetch */
	int			window_size;	/* Max(prefetch_depth, 1) */
	Snapshot	snapshot;
	TupleTableSlot *pair_slot;

	/* Sort phase. */
	Tuplesortstate *sortstate;
	bool		sort_done;
	SsdSortTrace trace;

	/* Fetch phase: a ring of the next TIDs, oldest at window_head. */
	ItemPointerData *window;
	bool	   *window_prefetched;
	int			window_head;
	int			window_count;
	bool		pairs_exhausted;
	bool		end_returned;	/* forward, the end was returned */
	BlockNumber last_prefetched;
	BlockNumber last_entered;	/* page of the TID that entered last */
	int			ascending_run;	/* +1 steps that led to it */
	Buffer		buffer;			/* page of the last row fetched, pinned */
	BlockNumber buffer_block;
	int			outstanding;	/* prefetched pages not yet read */
	HeapTupleData tuple;		/* the row in the scan slot (it points here) */

	/* What EXPLAIN ANALYZE reports. */
	bool		started;
	instr_time	start_time;
	bool		first_row_seen;
	double		first_row_ms;
	SsdSortCounters counts;
	bool		have_sort_stats;
	TuplesortInstrumentation sort_stats;
	int			runs;
	int			merge_passes;
	bool		trace_seen;
	int			max_outstanding;

	/* Parallel: the shared counters, and the leader's copy of them. */
	SsdSortShared *shared;
	SsdSortCounters *my_stats;	/* in a worker: its slot in *shared */
	SsdSortShared *worker_stats;
} SsdSortState;

static Node *ssd_sort_create_state(CustomScan *cscan);
static void ssd_sort_begin(CustomScanState *css, EState *estate, int eflags);
static TupleTableSlot *ssd_sort_exec(CustomScanState *css);
static void ssd_sort_end(CustomScanState *css);
static void ssd_sort_rescan(CustomScanState *css);
static void ssd_sort_explain(CustomScanState *css, List *ancestors,
							 ExplainState *es);
static Size ssd_sort_estimate_dsm(CustomScanState *css,
								  ParallelContext *pcxt);
static void ssd_sort_initialize_dsm(CustomScanState *css,
									ParallelContext *pcxt, void *coordinate);
static void ssd_sort_reinitialize_dsm(CustomScanState *css,
									  ParallelContext *pcxt, void *coordinate);
static void ssd_sort_initialize_worker(CustomScanState *css,
									   shm_toc *toc, void *coordinate);
static void ssd_sort_shutdown(CustomScanState *css);

const CustomScanMethods ssd_sort_scan_methods = {
	.CustomName = SSD_SORT_NAME,
	.CreateCustomScanState = ssd_sort_create_state,
};

static const CustomExecMethods ssd_sort_exec_methods = {
	.CustomName = SSD_SORT_NAME,
	.BeginCustomScan = ssd_sort_begin,
	.ExecCustomScan = ssd_sort_exec,
	.EndCustomScan = ssd_sort_end,
	.ReScanCustomScan = ssd_sort_rescan,
	.ExplainCustomScan = ssd_sort_explain,
	.EstimateDSMCustomScan = ssd_sort_estimate_dsm,
	.InitializeDSMCustomScan = ssd_sort_initialize_dsm,
	.ReInitializeDSMCustomScan = ssd_sort_reinitialize_dsm,
	.InitializeWorkerCustomScan = ssd_sort_initialize_worker,
	.ShutdownCustomScan = ssd_sort_shutdown,
};

/*
 * Is the relation in memory (shared_buffers or the OS page cache) as a
 * whole, by qdtt_costing's residency sampler?  Then prefetching only adds a
 * posix_fadvise() system call per page the kernel already holds (measured:
 * a tenth of the fetch's time on a table in the page cache).  Asked when
 * the scan starts, not when it was planned: a prepared plan outlives the
 * cache state it was planned in.
 */
#define IN_MEMORY_FRACTION 0.98
static bool
relation_in_memory(Relation rel)
{
	SsdkitQdttApi *api = ssdkit_qdtt_api(SSDKIT_QDTT_API_RESIDENCY);
	double		sb,
				os;

	return api != NULL &&
		api->residency(&rel->rd_node, MAIN_FORKNUM, &sb, &os) &&
		sb + os >= IN_MEMORY_FRACTION;
}

static Node *
ssd_sort_create_state(CustomScan *cscan)
{
	SsdSortState *node = palloc0(sizeof(SsdSortState));

	NodeSetTag(node, T_CustomScanState);
	node->css.methods = &ssd_sort_exec_methods;
	return (Node *) node;
}

static void
ssd_sort_begin(CustomScanState *css, EState *estate, int eflags)
{
	SsdSortState *node = (SsdSortState *) css;
	CustomScan *cscan = (CustomScan *) css->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *ops = list_nth(priv, SSD_SORT_PRIV_SORT_OPS);
	List	   *colls = list_nth(priv, SSD_SORT_PRIV_COLLATIONS);
	List	   *nf = list_nth(priv, SSD_SORT_PRIV_NULLS_FIRST);
	int			i;

	/*
	 * Rows are stored straight from their pinned heap pages, so the scan slot
	 * must be a buffer heap slot; PostgreSQL 15 gives a custom scan a virtual
	 * one.  Swap it before anything above us compiles expressions against
	 * our output, and build the projection for the new slot type.
	 */
	css->ss.ss_ScanTupleSlot =
		ExecAllocTableSlot(&estate->es_tupleTable,
						   RelationGetDescr(css->ss.ss_currentRelation),
						   &TTSOpsBufferHeapTuple);
	css->ss.ps.scanops = &TTSOpsBufferHeapTuple;
	css->ss.ps.scanopsfixed = true;
	css->ss.ps.scanopsset = true;
	ExecAssignScanProjectionInfoWithVarno(&css->ss, cscan->scan.scanrelid);

	/* The pair scan is ours alone: no rewind, backward or mark needed. */
	outerPlanState(node) = ExecInitNode(outerPlan(cscan), estate,
										eflags & ~(EXEC_FLAG_REWIND |
												   EXEC_FLAG_BACKWARD |
												   EXEC_FLAG_MARK));

	node->nkeys = list_length(ops);
	node->key_attnos = palloc(sizeof(AttrNumber) * node->nkeys);
	node->sort_ops = palloc(sizeof(Oid) * node->nkeys);
	node->collations = palloc(sizeof(Oid) * node->nkeys);
	node->nulls_first = palloc(sizeof(bool) * node->nkeys);
	for (i = 0; i < node->nkeys; i++)
	{
		node->key_attnos[i] = i + 1;
		node->sort_ops[i] = list_nth_oid(ops, i);
		node->collations[i] = list_nth_oid(colls, i);
		node->nulls_first[i] = list_nth_int(nf, i) != 0;
	}
	node->pair_width = intVal(list_nth(priv, SSD_SORT_PRIV_PAIR_WIDTH));

	/*
	 * Keep the pairs for a rescan or a backward scan, as Sort does, unless
	 * the pair scan is a parallel one: rescanning the Gather Merge above
	 * restarts the shared scan, and this participant's old pairs would
	 * repeat rows the workers now read (a parallel path never claims
	 * backward scans).
	 */
	node->random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD)) != 0 &&
		!cscan->scan.plan.parallel_aware;
	node->prefetch_depth = ssd_sort_prefetch_depth;
	if (node->prefetch_depth > 0 &&
		relation_in_memory(css->ss.ss_currentRelation))
	{
		node->prefetch_depth = 0;
		node->prefetch_skipped = true;
	}
	node->window_size = Max(ssd_sort_prefetch_depth, 1);
	node->snapshot = estate->es_snapshot;
	node->pair_slot = ExecAllocTableSlot(&estate->es_tupleTable,
										 ExecGetResultType(outerPlanState(node)),
										 &TTSOpsMinimalTuple);
	node->window = palloc(sizeof(ItemPointerData) * node->window_size);
	node->window_prefetched = palloc0(sizeof(bool) * node->window_size);
	node->buffer = InvalidBuffer;
	node->buffer_block = InvalidBlockNumber;
	node->last_prefetched = InvalidBlockNumber;
	node->last_entered = InvalidBlockNumber;
	node->ascending_run = 0;
}

static double
elapsed_ms(instr_time since)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, since);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* Phases 1-3: read the pairs from the outer plan and sort them. */
static void
sort_pairs(SsdSortState *node)
{
	PlanState  *outer = outerPlanState(node);
	int64		temp_before = pgBufferUsage.temp_blks_written;
	instr_time	sort_start;

	INSTR_TIME_SET_CURRENT(sort_start);
	ssd_sort_trace_begin(&node->trace);
	PG_TRY();
	{
		ssd_sort_trace_resume(&node->trace);
		node->sortstate =
			tuplesort_begin_heap(ExecGetResultType(outer), node->nkeys,
								 node->key_attnos, node->sort_ops,
								 node->collations, node->nulls_first,
								 work_mem, NULL,
								 node->random_access ? TUPLESORT_RANDOMACCESS :
								 TUPLESORT_NONE);
		for (;;)
		{
			TupleTableSlot *slot;

			/* The scan below is not our sort: don't count its events. */
			ssd_sort_trace_pause(&node->trace);
			slot = ExecProcNode(outer);
			if (TupIsNull(slot))
				break;
			ssd_sort_trace_resume(&node->trace);
			tuplesort_puttupleslot(node->sortstate, slot);
			node->counts.pairs_sorted++;
		}
		ssd_sort_trace_resume(&node->trace);
		tuplesort_performsort(node->sortstate);
	}
	PG_FINALLY();
	{
		ssd_sort_trace_end(&node->trace);
	}
	PG_END_TRY();

	node->sort_done = true;
	node->counts.sort_ms += elapsed_ms(sort_start);
	node->counts.temp_blocks_written += pgBufferUsage.temp_blks_written - temp_before;
	node->runs = node->trace.runs;
	node->merge_passes = node->trace.merge_passes;
	node->trace_seen = node->trace.seen;
	tuplesort_get_stats(node->sortstate, &node->sort_stats);
	node->have_sort_stats = true;
}

/*
 * Top the window up from the sorted pairs, prefetching the page of each TID
 * that enters it.
 */
static void
fill_window(SsdSortState *node)
{
	Relation	rel = node->css.ss.ss_currentRelation;
	AttrNumber	tid_attno = node->nkeys + 1;

	while (node->window_count < node->window_size && !node->pairs_exhausted)
	{
		int			slot_index;
		bool		isnull;
		ItemPointer tid;
		BlockNumber block;
		bool		sequential;

		if (!tuplesort_gettupleslot(node->sortstate, true, false,
									node->pair_slot, NULL))
		{
			node->pairs_exhausted = true;
			break;
		}
		tid = (ItemPointer) DatumGetPointer(slot_getattr(node->pair_slot, tid_attno,
											   &isnull));
		Assert(!isnull);
		slot_index = (node->window_head + node->window_count) % node->window_size;
		node->window[slot_index] = *tid;
		node->window_prefetched[slot_index] = false;
		node->window_count++;

		block = ItemPointerGetBlockNumber(tid);
		if (node->last_entered != InvalidBlockNumber &&
			block == node->last_entered + 1)
			node->ascending_run++;
		else if (block != node->last_entered)
			node->ascending_run = 0;
		node->last_entered = block;

		/*
		 * Pages of a long ascending run (a key correlated with the physical
		 * order) are left to the kernel's readahead.  posix_fadvise() of one
		 * page turns into a read of that page alone, and the page cache hit
		 * it leaves does not move the readahead window on: the fetch would
		 * read the table in 8 kB requests one or two pages ahead, where
		 * readahead reads it in large ones.  The first pages of a run are
		 * still prefetched: readahead starts only once the kernel has seen
		 * reads in sequence, and a short run (a key partly correlated) may
		 * end before it does.
		 */
		sequential = node->ascending_run >= SSD_SORT_READAHEAD_RUN;
		if (node->prefetch_depth > 0 && !sequential &&
			block != node->last_prefetched && block != node->buffer_block)
		{
			PrefetchBufferResult r = PrefetchBuffer(rel, MAIN_FORKNUM, block);

			node->last_prefetched = block;
			if (r.initiated_io)
			{
				node->window_prefetched[slot_index] = true;
				node->counts.prefetches++;
				node->outstanding++;
				node->max_outstanding = Max(node->max_outstanding,
											node->outstanding);
			}
		}
	}
}

/* Read the row version *tid names into the scan slot. */
static void
fetch_row(SsdSortState *node, ItemPointer tid, TupleTableSlot *slot)
{
	Relation	rel = node->css.ss.ss_currentRelation;
	BlockNumber block = ItemPointerGetBlockNumber(tid);
	OffsetNumber offnum = ItemPointerGetOffsetNumber(tid);
	HeapTuple	tuple = &node->tuple;
	Page		page;
	ItemId		lp;
	bool		visible = false;

	if (node->buffer == InvalidBuffer || node->buffer_block != block)
	{
		int64		reads_before = pgBufferUsage.shared_blks_read +
			pgBufferUsage.local_blks_read;

		node->buffer = ReleaseAndReadBuffer(node->buffer, rel, block);
		node->buffer_block = block;
		node->counts.page_visits++;
		node->counts.pages_read += pgBufferUsage.shared_blks_read +
			pgBufferUsage.local_blks_read - reads_before;
	}

	LockBuffer(node->buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(node->buffer);
	TestForOldSnapshot(node->snapshot, rel, page);
	if (offnum >= FirstOffsetNumber && offnum <= PageGetMaxOffsetNumber(page))
	{
		lp = PageGetItemId(page, offnum);
		if (ItemIdIsNormal(lp))
		{
			tuple->t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tuple->t_len = ItemIdGetLength(lp);
			tuple->t_tableOid = RelationGetRelid(rel);
			tuple->t_self = *tid;
			visible = HeapTupleSatisfiesVisibility(tuple, node->snapshot,
												   node->buffer);
		}
	}
	LockBuffer(node->buffer, BUFFER_LOCK_UNLOCK);

	if (!visible)
		elog(ERROR, "SSD Sort: row (%u,%u) of relation \"%s\" is not visible to the snapshot that sorted it",
			 block, offnum, RelationGetRelationName(rel));

	ExecStoreBufferHeapTuple(tuple, slot, node->buffer);
}

/*
 * A worker keeps its counters in shared memory up to date as it goes: the
 * leader copies them when it shuts the node down, which may be before the
 * worker finishes (a merge join or a LIMIT above stops reading early).
 */
static void
publish_stats(SsdSortState *node)
{
	if (node->my_stats != NULL)
		*node->my_stats = node->counts;
}

/*
 * Before a backward step: give the window's look-ahead back to the sorted
 * pairs, so that their position is again the row returned last.
 *
 * tuplesort reads like a cursor: a forward read returns the pair after the
 * last one returned, a backward read the one before it, and a forward read
 * that found the end leaves the position past the last pair.  The window
 * read window_count pairs ahead of the last row returned, and one step past
 * the end if it found the end before the node returned it.
 */
static void
drop_window(SsdSortState *node)
{
	int			steps = node->window_count;

	if (node->pairs_exhausted && !node->end_returned)
		steps++;
	while (steps-- > 0)
		(void) tuplesort_gettupleslot(node->sortstate, false, false,
									  node->pair_slot, NULL);
	node->window_head = 0;
	node->window_count = 0;
	node->outstanding = 0;
	node->pairs_exhausted = false;
	node->last_entered = InvalidBlockNumber;
	node->ascending_run = 0;
}

/* A backward step: the row before the last one returned. */
static TupleTableSlot *
previous_row(SsdSortState *node, TupleTableSlot *slot)
{
	bool		isnull;
	ItemPointerData tid;

	if (node->sortstate == NULL)
		elog(ERROR, "SSD Sort: backward scan without the pairs kept");
	drop_window(node);
	node->end_returned = false;
	if (!tuplesort_gettupleslot(node->sortstate, false, false,
								node->pair_slot, NULL))
		return ExecClearTuple(slot);
	tid = *(ItemPointer) DatumGetPointer(slot_getattr(node->pair_slot,
													  node->nkeys + 1,
													  &isnull));
	Assert(!isnull);
	fetch_row(node, &tid, slot);
	node->counts.rows_fetched++;
	return slot;
}

/* Phase 4: the next row in key order, or an empty slot at the end. */
static TupleTableSlot *
next_row(ScanState *ss)
{
	SsdSortState *node = (SsdSortState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	ItemPointerData tid;

	CHECK_FOR_INTERRUPTS();

	if (ScanDirectionIsBackward(ss->ps.state->es_direction))
		return previous_row(node, slot);

	fill_window(node);
	if (node->window_count == 0)
	{
		node->end_returned = true;
		if (node->buffer != InvalidBuffer)
		{
			ReleaseBuffer(node->buffer);
			node->buffer = InvalidBuffer;
			node->buffer_block = InvalidBlockNumber;
		}
		/* Nothing will read the pairs again: give their temp space back. */
		if (!node->random_access && node->sortstate != NULL)
		{
			tuplesort_end(node->sortstate);
			node->sortstate = NULL;
		}
		return ExecClearTuple(slot);
	}

	tid = node->window[node->window_head];
	if (node->window_prefetched[node->window_head])
		node->outstanding--;
	node->window_head = (node->window_head + 1) % node->window_size;
	node->window_count--;

	/* Issue the read for the TID that takes the freed place first. */
	fill_window(node);
	fetch_row(node, &tid, slot);
	node->counts.rows_fetched++;
	publish_stats(node);

	if (!node->first_row_seen)
	{
		node->first_row_seen = true;
		node->first_row_ms = elapsed_ms(node->start_time);
	}
	return slot;
}

/* No EvalPlanQual here (the planner does not offer us under row locks). */
static bool
recheck_row(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
ssd_sort_exec(CustomScanState *css)
{
	SsdSortState *node = (SsdSortState *) css;

	if (!node->started)
	{
		node->started = true;
		INSTR_TIME_SET_CURRENT(node->start_time);
	}
	if (!node->sort_done)
	{
		sort_pairs(node);
		publish_stats(node);
	}
	return ExecScan(&css->ss, next_row, recheck_row);
}

static void
reset_fetch(SsdSortState *node)
{
	if (node->buffer != InvalidBuffer)
		ReleaseBuffer(node->buffer);
	node->buffer = InvalidBuffer;
	node->buffer_block = InvalidBlockNumber;
	node->last_prefetched = InvalidBlockNumber;
	node->last_entered = InvalidBlockNumber;
	node->ascending_run = 0;
	node->window_head = 0;
	node->window_count = 0;
	node->outstanding = 0;
	node->pairs_exhausted = false;
	node->end_returned = false;
}

/*
 * Like the built-in Sort: with unchanged parameters and the pairs kept
 * (EXEC_FLAG_REWIND), read them again; otherwise sort afresh.
 */
static void
ssd_sort_rescan(CustomScanState *css)
{
	SsdSortState *node = (SsdSortState *) css;
	PlanState  *outer = outerPlanState(node);

	reset_fetch(node);
	ExecClearTuple(css->ss.ss_ScanTupleSlot);
	if (!node->sort_done)
		return;

	if (outer->chgParam == NULL && node->random_access &&
		node->sortstate != NULL)
		tuplesort_rescan(node->sortstate);
	else
	{
		if (node->sortstate != NULL)
			tuplesort_end(node->sortstate);
		node->sortstate = NULL;
		node->sort_done = false;

		/* With changed parameters ExecProcNode rescans the outer plan. */
		if (outer->chgParam == NULL)
			ExecReScan(outer);
	}
}

static void
ssd_sort_end(CustomScanState *css)
{
	SsdSortState *node = (SsdSortState *) css;

	reset_fetch(node);
	if (node->sortstate != NULL)
		tuplesort_end(node->sortstate);
	node->sortstate = NULL;
	ExecEndNode(outerPlanState(node));
}

/* ------------------------------------------------------------------------
 * Parallel SSD Sort: only the EXPLAIN counters are shared.  The rows are
 * divided by the Parallel Seq Scan below (the pair scan); each participant
 * sorts and fetches its own, and Gather Merge above merges them.
 * ------------------------------------------------------------------------
 */
static Size
shared_size(int nworkers)
{
	return add_size(offsetof(SsdSortShared, workers),
					mul_size(nworkers, sizeof(SsdSortCounters)));
}

static Size
ssd_sort_estimate_dsm(CustomScanState *css, ParallelContext *pcxt)
{
	return shared_size(pcxt->nworkers);
}

static void
ssd_sort_initialize_dsm(CustomScanState *css, ParallelContext *pcxt,
						void *coordinate)
{
	SsdSortState *node = (SsdSortState *) css;

	node->shared = (SsdSortShared *) coordinate;
	memset(node->shared, 0, shared_size(pcxt->nworkers));
	node->shared->nworkers = pcxt->nworkers;
}

static void
ssd_sort_reinitialize_dsm(CustomScanState *css, ParallelContext *pcxt,
						  void *coordinate)
{
	ssd_sort_initialize_dsm(css, pcxt, coordinate);
}

static void
ssd_sort_initialize_worker(CustomScanState *css, shm_toc *toc,
						   void *coordinate)
{
	SsdSortState *node = (SsdSortState *) css;

	node->shared = (SsdSortShared *) coordinate;
	if (ParallelWorkerNumber >= 0 &&
		ParallelWorkerNumber < node->shared->nworkers)
		node->my_stats = &node->shared->workers[ParallelWorkerNumber];
}

/*
 * The leader keeps a copy of the workers' counters: the shared memory is
 * gone when EXPLAIN runs.  Its Gather Merge has seen every worker finish by
 * now, unless it stopped reading early; then the counters are those of the
 * moment it stopped.
 */
static void
ssd_sort_shutdown(CustomScanState *css)
{
	SsdSortState *node = (SsdSortState *) css;
	Size		size;

	if (node->shared == NULL || IsParallelWorker())
		return;
	size = shared_size(node->shared->nworkers);
	if (node->worker_stats == NULL)
		node->worker_stats = palloc(size);
	memcpy(node->worker_stats, node->shared, size);
	node->shared = NULL;		/* freed with the Gather Merge's segment */
}

static void
explain_workers(SsdSortState *node, ExplainState *es)
{
	int			i;

	if (node->worker_stats == NULL)
		return;
	for (i = 0; i < node->worker_stats->nworkers; i++)
	{
		SsdSortCounters *w = &node->worker_stats->workers[i];

		if (w->pairs_sorted == 0 && w->rows_fetched == 0)
			continue;			/* never started */
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str,
							 "Worker %d:  Pairs Sorted: " INT64_FORMAT
							 "  Temp Written: " INT64_FORMAT "kB"
							 "  Rows Fetched: " INT64_FORMAT
							 "  Heap Page Visits: " INT64_FORMAT
							 "  Heap Pages Read: " INT64_FORMAT
							 "  Prefetches Issued: " INT64_FORMAT,
							 i, w->pairs_sorted,
							 w->temp_blocks_written * (BLCKSZ / 1024),
							 w->rows_fetched, w->page_visits,
							 w->pages_read, w->prefetches);
			if (es->timing)
				appendStringInfo(es->str, "  Sort Time: %.3f ms", w->sort_ms);
			appendStringInfoChar(es->str, '\n');
		}
		else
		{
			ExplainOpenGroup("Worker", NULL, true, es);
			ExplainPropertyInteger("Worker Number", NULL, i, es);
			ExplainPropertyInteger("Pairs Sorted", NULL, w->pairs_sorted, es);
			ExplainPropertyInteger("Temp Written", "kB",
								   w->temp_blocks_written * (BLCKSZ / 1024), es);
			ExplainPropertyInteger("Rows Fetched", NULL, w->rows_fetched, es);
			ExplainPropertyInteger("Heap Page Visits", NULL, w->page_visits, es);
			ExplainPropertyInteger("Heap Pages Read", NULL, w->pages_read, es);
			ExplainPropertyInteger("Prefetches Issued", NULL, w->prefetches, es);
			if (es->timing)
				ExplainPropertyFloat("Sort Time", "ms", w->sort_ms, 3, es);
			ExplainCloseGroup("Worker", NULL, true, es);
		}
	}
}

/* "c1 DESC NULLS LAST, name COLLATE "C"", as EXPLAIN shows a Sort's keys. */
static void
show_sort_keys(SsdSortState *node, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->css.ss.ps.plan;
	List	   *context;
	List	   *result = NIL;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	ListCell   *lc;
	int			i = 0;

	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan,
									   ancestors);
	foreach(lc, cscan->custom_exprs)
	{
		Node	   *expr = (Node *) lfirst(lc);
		Oid			type = exprType(expr);
		TypeCacheEntry *typentry = lookup_type_cache(type, TYPECACHE_LT_OPR |
													 TYPECACHE_GT_OPR);
		StringInfoData buf;
		bool		reverse = false;

		/* A collation-only relabel is shown as COLLATE, as Sort does. */
		if (IsA(expr, RelabelType) &&
			exprType((Node *) ((RelabelType *) expr)->arg) == type)
			expr = (Node *) ((RelabelType *) expr)->arg;
		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression(expr, context,
														useprefix, true));
		if (OidIsValid(node->collations[i]) &&
			node->collations[i] != get_typcollation(type))
			appendStringInfo(&buf, " COLLATE %s",
							 generate_collation_name(node->collations[i]));
		if (node->sort_ops[i] == typentry->gt_opr)
		{
			appendStringInfoString(&buf, " DESC");
			reverse = true;
		}
		else if (node->sort_ops[i] != typentry->lt_opr)
			appendStringInfo(&buf, " USING %s",
							 get_opname(node->sort_ops[i]));
		if (node->nulls_first[i] && !reverse)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!node->nulls_first[i] && reverse)
			appendStringInfoString(&buf, " NULLS LAST");
		result = lappend(result, buf.data);
		i++;
	}
	ExplainPropertyList("Sort Key", result, es);
}

static void
ssd_sort_explain(CustomScanState *css, List *ancestors, ExplainState *es)
{
	SsdSortState *node = (SsdSortState *) css;
	List	   *priv = ((CustomScan *) css->ss.ps.plan)->custom_private;

	show_sort_keys(node, ancestors, es);
	ExplainPropertyInteger("Pair Width", "bytes", node->pair_width, es);
	ExplainPropertyInteger("Prefetch Depth", NULL, node->prefetch_depth, es);
	if (node->prefetch_skipped)
		ExplainPropertyText("Prefetch", "off, relation in memory", es);
	if (es->verbose)
	{
		ExplainPropertyFloat("Estimated Heap Reads", NULL,
							 floatVal(list_nth(priv, SSD_SORT_PRIV_HEAP_READS)),
							 0, es);
		ExplainPropertyFloat("Estimated Device Reads", NULL,
							 floatVal(list_nth(priv, SSD_SORT_PRIV_DEVICE_READS)),
							 0, es);
		ExplainPropertyFloat("Fetch Page Cost", NULL,
							 floatVal(list_nth(priv, SSD_SORT_PRIV_FETCH_PAGE_COST)),
							 4, es);
		ExplainPropertyText("Fetch Page Cost Source",
							strVal(list_nth(priv, SSD_SORT_PRIV_COST_SOURCE)), es);
		ExplainPropertyFloat("Estimated Page Visits", NULL,
							 floatVal(list_nth(priv, SSD_SORT_PRIV_PAGE_VISITS)),
							 0, es);
		ExplainPropertyText("Cache Estimate Source",
							strVal(list_nth(priv, SSD_SORT_PRIV_CACHE_SOURCE)), es);
		ExplainPropertyText("Cache Size",
							strVal(list_nth(priv, SSD_SORT_PRIV_CACHE_SIZE)), es);
	}

	if (!es->analyze)
		return;
	if (node->have_sort_stats)
	{
		ExplainPropertyText("Sort Method",
							tuplesort_method_name(node->sort_stats.sortMethod), es);
		ExplainPropertyInteger("Sort Space Used", "kB",
							   node->sort_stats.spaceUsed, es);
		ExplainPropertyText("Sort Space Type",
							tuplesort_space_type_name(node->sort_stats.spaceType), es);
		ExplainPropertyInteger("Pairs Sorted", NULL, node->counts.pairs_sorted, es);
		if (node->trace_seen)
		{
			ExplainPropertyInteger("Sorted Runs", NULL, node->runs, es);
			ExplainPropertyInteger("Merge Passes", NULL, node->merge_passes, es);
		}
		ExplainPropertyInteger("Temp Written", "kB",
							   node->counts.temp_blocks_written * (BLCKSZ / 1024), es);
		ExplainPropertyInteger("Rows Fetched", NULL, node->counts.rows_fetched, es);
		ExplainPropertyInteger("Heap Page Visits", NULL, node->counts.page_visits, es);
		ExplainPropertyInteger("Heap Pages Read", NULL, node->counts.pages_read, es);
		ExplainPropertyInteger("Prefetches Issued", NULL, node->counts.prefetches, es);
		ExplainPropertyInteger("Prefetch Depth Reached", NULL,
							   node->max_outstanding, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Sort Time", "ms", node->counts.sort_ms, 3, es);
			if (node->first_row_seen)
				ExplainPropertyFloat("Time To First Row", "ms",
									 node->first_row_ms, 3, es);
		}
	}
	if (es->format == EXPLAIN_FORMAT_TEXT)
		explain_workers(node, es);
	else if (node->worker_stats != NULL)
	{
		ExplainOpenGroup("SSD Sort Workers", "SSD Sort Workers", false, es);
		explain_workers(node, es);
		ExplainCloseGroup("SSD Sort Workers", "SSD Sort Workers", false, es);
	}
}

void
ssd_sort_exec_init(void)
{
	RegisterCustomScanMethods(&ssd_sort_scan_methods);
}
