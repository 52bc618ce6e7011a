/*-------------------------------------------------------------------------
 *
 * pax_bitmap.c
 *	  Bitmap heap scans over pax tables: no block prefetching.
 *
 * PostgreSQL 15's BitmapHeapScan prefetches the blocks its bitmap names
 * (PrefetchBuffer on the table's main fork) ahead of the table AM.  Pax's
 * TID blocks are runs of row numbers, not physical blocks: prefetching them
 * would read unrelated blocks, and past the first 1 GB segment of a
 * compressed table (about 38 million rows with small rows) md.c fails the
 * prefetch with "previous segment is only N blocks".  The node has no
 * switch for this, so an ExecutorStart hook sets its prefetch_maximum to
 * zero for pax relations before the first row is asked for (the node starts
 * its prefetch iterator on its first call, and only if that is above zero).
 * Pax's row fetches read the groups they need themselves.
 *
 * The callbacks that return the rows are in pax_handler.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"

#include "pax.h"

static ExecutorStart_hook_type prev_executor_start = NULL;

static bool
no_prefetch_walker(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, BitmapHeapScanState))
	{
		BitmapHeapScanState *bs = (BitmapHeapScanState *) ps;
		Relation	rel = bs->ss.ss_currentRelation;

		if (rel != NULL && rel->rd_tableam == pax_table_am_routine())
			bs->prefetch_maximum = 0;
	}
	return planstate_tree_walker(ps, no_prefetch_walker, context);
}

static void
pax_executor_start(QueryDesc *queryDesc, int eflags)
{
	/*
	 * Parallel workers read pax tables from their files, not from this
	 * backend's write buffers: a plan that may run in workers needs the
	 * rows this transaction buffered written first (pax_writer.c).
	 */
	if (queryDesc->plannedstmt->parallelModeNeeded)
		pax_flush_all_buffers();
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (queryDesc->planstate != NULL)
		(void) no_prefetch_walker(queryDesc->planstate, NULL);
}

void
pax_bitmap_init(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = pax_executor_start;
}
