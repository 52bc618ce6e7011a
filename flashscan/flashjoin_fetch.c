/*-------------------------------------------------------------------------
 *
 * flashjoin_fetch.c
 *	  Flash Fetch, FlashJoin's fetch kernel: for each row of the join index
 *	  its child produces (join columns and the ctid of each pax relation
 *	  whose columns were deferred), read those columns by ctid and emit the
 *	  row whole.
 *
 * Two strategies (the paper's section 4.4):
 *
 * naive: tuple at a time; every relation's columns fetched for each input
 * row.  The fetch keeps the last group's decoded columns, and a block read
 * stays in shared_buffers, so this is right when the blocks the fetch needs
 * fit there.  When the groups it visits exceed twice the planner's distinct
 * estimate (the input is far less clustered than expected, so blocks would
 * be read again and again), the rest of the input goes the sorted way.
 *
 * sorted (Algorithm 1, after Jive-join): one pass per relation.  The join
 * index is sorted by the first relation's ctid, that relation's columns are
 * fetched in ctid order (each group's minipages read and decoded once) and
 * the widened rows sorted by the next relation's ctid, and so on; the last
 * relation's pass emits.  Relations go in ascending width of what they
 * fetch, so the runs that spill stay small.  tuplesort merges its runs as
 * rows are pulled, without writing one final run (the paper's
 * SortedStream).  The joins usually emit rows in the order of their
 * leftmost (probe) relation's ctid when nothing spilled: rows that come in
 * ascending order of the first relation's ctid skip its sort and are
 * fetched as they come; only the rest is sorted.
 *
 * Every ctid came from a scan under the query's snapshot, so a row the
 * fetch cannot see is an internal error, never a row skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_operator_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "flashscan.h"
#include "pax.h"

/* One relation whose deferred columns the node fetches. */
typedef struct FetchRel
{
	Relation	rel;
	char	   *alias;			/* the query's name for it, for EXPLAIN */
	int			ctid_pos;		/* its ctid in the scan tuple (0-based) */
	int			est_groups;		/* distinct groups the planner expected */
	int			natts;
	AttrNumber *attnos;			/* columns fetched ... */
	int		   *positions;		/* ... and where they go in the scan tuple */
	PaxFetch   *fetch;
	TupleTableSlot *relslot;	/* the row as pax returns it */
	PaxGroupEntry *prev_group;
	uint64		group_visits;	/* changes of group from one fetch to the next */
	uint64		scan_visits;	/* ... in this scan (a rescan starts again) */
	uint64		rows_in_order;	/* rows that skipped the sort */
} FetchRel;

typedef struct FlashFetchState
{
	CustomScanState css;
	int			planned_mode;
	bool		presorted;		/* the joins emit relation 0's rows in ctid order */
	bool		sorted;			/* running sorted (planned or fallen back) */
	bool		fell_back;		/* in this scan */
	bool		ever_fell_back;	/* in any scan (rescans), for EXPLAIN */
	int			nrels;
	FetchRel   *rels;
	PlanState  *child;
	int			nchild;			/* columns of the child's rows */
	int			stage;			/* 0: reading the child; s: draining sorts[s - 1] */
	Tuplesortstate **sorts;		/* sorts[i]: rows waiting for relation i, by its ctid */
	ItemPointerData last_in_order;	/* relation 0's ctid fetched last, in order */
	bool		have_last;
	TupleTableSlot *sort_slot;	/* rows out of a sort */
	/* EXPLAIN ANALYZE */
	int			nsorts;
	int64		sort_mem_kb;	/* the largest in-memory sort */
	int64		sort_disk_kb;	/* all sorts that spilled, summed */
} FlashFetchState;

static Node *fetch_create_state(CustomScan *cscan);
static void fetch_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *fetch_exec(CustomScanState *node);
static void fetch_end(CustomScanState *node);
static void fetch_rescan(CustomScanState *node);
static void fetch_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomScanMethods fetch_scan_methods = {
	.CustomName = "Flash Fetch",
	.CreateCustomScanState = fetch_create_state,
};

static const CustomExecMethods fetch_exec_methods = {
	.CustomName = "Flash Fetch",
	.BeginCustomScan = fetch_begin,
	.ExecCustomScan = fetch_exec,
	.EndCustomScan = fetch_end,
	.ReScanCustomScan = fetch_rescan,
	.ExplainCustomScan = fetch_explain,
};

const CustomScanMethods *
flashjoin_fetch_scan_methods(void)
{
	return &fetch_scan_methods;
}

static Node *
fetch_create_state(CustomScan *cscan)
{
	FlashFetchState *fs = palloc0(sizeof(FlashFetchState));

	NodeSetTag(fs, T_CustomScanState);
	fs->css.flags = cscan->flags;
	fs->css.methods = &fetch_exec_methods;
	return (Node *) fs;
}

/*
 * A fetch from a relation most of whose groups hold a fetched row reads
 * them in order (a sorted pass, or rows the joins emit in ctid order):
 * prefetch a group ahead.  Sparse fetches are left to the rows' own reads.
 */
static void
set_read_ahead(FlashFetchState *fs)
{
	int			i;

	for (i = 0; i < fs->nrels; i++)
	{
		FetchRel   *fr = &fs->rels[i];
		int			ngroups = pax_current_directory(fr->rel)->ngroups;

		fr->fetch->read_ahead = (double) fr->est_groups * 2 >= ngroups;
	}
}

static void
fetch_begin(CustomScanState *node, EState *estate, int eflags)
{
	FlashFetchState *fs = (FlashFetchState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	List	   *relids = lsecond(priv);
	TupleDesc	scandesc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	int			i;

	fs->planned_mode = intVal(linitial(priv));
	fs->presorted = intVal(list_nth(priv, 7)) != 0;
	fs->sorted = (fs->planned_mode == FLASHFETCH_SORTED);
	fs->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(fs->child);
	fs->nchild = list_length(((Plan *) linitial(cscan->custom_plans))->targetlist);
	fs->nrels = list_length(relids);
	fs->rels = palloc0(sizeof(FetchRel) * fs->nrels);
	fs->sorts = palloc0(sizeof(Tuplesortstate *) * fs->nrels);
	fs->sort_slot = ExecAllocTableSlot(&estate->es_tupleTable, scandesc, &TTSOpsMinimalTuple);

	for (i = 0; i < fs->nrels; i++)
	{
		FetchRel   *fr = &fs->rels[i];
		List	   *atts = list_nth(list_nth(priv, 4), i);
		List	   *pos = list_nth(list_nth(priv, 5), i);
		TupleDesc	desc;
		bool	   *needed;
		int			j;

		fr->rel = table_open(list_nth_oid(relids, i), AccessShareLock);
		fr->alias = strVal(list_nth(list_nth(priv, 6), i));
		desc = RelationGetDescr(fr->rel);
		fr->ctid_pos = list_nth_int(lthird(priv), i);
		fr->est_groups = list_nth_int(lfourth(priv), i);
		fr->natts = list_length(atts);
		fr->attnos = palloc(sizeof(AttrNumber) * fr->natts);
		fr->positions = palloc(sizeof(int) * fr->natts);
		needed = palloc0(sizeof(bool) * Max(desc->natts, 1));
		for (j = 0; j < fr->natts; j++)
		{
			fr->attnos[j] = list_nth_int(atts, j);
			fr->positions[j] = list_nth_int(pos, j);
			if (fr->attnos[j] < 1 || fr->attnos[j] > desc->natts ||
				TupleDescAttr(desc, fr->attnos[j] - 1)->attisdropped)
				elog(ERROR, "Flash Fetch: column %d of \"%s\" does not exist",
					 fr->attnos[j], RelationGetRelationName(fr->rel));
			needed[fr->attnos[j] - 1] = true;
		}
		fr->fetch = pax_fetch_begin(fr->rel, needed);
		fr->relslot = ExecAllocTableSlot(&estate->es_tupleTable, desc,
										 table_slot_callbacks(fr->rel));
	}
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		set_read_ahead(fs);
}

/* Fetch relation fr's columns of the row in values/isnull. */
static void
fetch_relation(FlashFetchState *fs, FetchRel *fr, Datum *values, bool *isnull)
{
	ItemPointer tid;
	int			j;

	if (isnull[fr->ctid_pos])
		elog(ERROR, "Flash Fetch: the join index holds no row id of \"%s\"",
			 RelationGetRelationName(fr->rel));
	tid = (ItemPointer) DatumGetPointer(values[fr->ctid_pos]);
	if (!pax_fetch_row(fr->fetch, tid, fs->css.ss.ps.state->es_snapshot, fr->relslot, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("Flash Fetch: row (%u,%u) of \"%s\" is not visible to the query's snapshot",
						ItemPointerGetBlockNumberNoCheck(tid),
						ItemPointerGetOffsetNumberNoCheck(tid),
						RelationGetRelationName(fr->rel)),
				 errdetail("The join read the row under the same snapshot.")));
	for (j = 0; j < fr->natts; j++)
	{
		values[fr->positions[j]] = fr->relslot->tts_values[fr->attnos[j] - 1];
		isnull[fr->positions[j]] = fr->relslot->tts_isnull[fr->attnos[j] - 1];
	}
	if (fr->fetch->last != fr->prev_group)
	{
		fr->group_visits++;
		fr->scan_visits++;
		fr->prev_group = fr->fetch->last;
	}
}

/* The scan slot holding the child's row, the fetched columns NULL. */
static TupleTableSlot *
load_child_row(FlashFetchState *fs, TupleTableSlot *child)
{
	TupleTableSlot *slot = fs->css.ss.ss_ScanTupleSlot;
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	slot_getallattrs(child);
	memcpy(slot->tts_values, child->tts_values, sizeof(Datum) * fs->nchild);
	memcpy(slot->tts_isnull, child->tts_isnull, sizeof(bool) * fs->nchild);
	memset(slot->tts_isnull + fs->nchild, true, sizeof(bool) * (natts - fs->nchild));
	return slot;
}

static void
sort_put(FlashFetchState *fs, int r, TupleTableSlot *slot)
{
	if (fs->sorts[r] == NULL)
	{
		AttrNumber	key = fs->rels[r].ctid_pos + 1;
		Oid			op = TIDLessOperator;
		Oid			coll = InvalidOid;
		bool		nulls_first = false;

		fs->sorts[r] = tuplesort_begin_heap(slot->tts_tupleDescriptor, 1, &key, &op, &coll,
											&nulls_first, work_mem, NULL, TUPLESORT_NONE);
		fs->nsorts++;
	}
	tuplesort_puttupleslot(fs->sorts[r], slot);
}

static void
sort_end(FlashFetchState *fs, int r)
{
	TuplesortInstrumentation stats;

	if (fs->sorts[r] == NULL)
		return;
	tuplesort_get_stats(fs->sorts[r], &stats);
	if (stats.spaceType == SORT_SPACE_TYPE_DISK)
		fs->sort_disk_kb += stats.spaceUsed;
	else
		fs->sort_mem_kb = Max(fs->sort_mem_kb, stats.spaceUsed);
	tuplesort_end(fs->sorts[r]);
	fs->sorts[r] = NULL;
}

/* Naive: too many group changes for the estimate means blocks read again. */
static void
check_fallback(FlashFetchState *fs)
{
	int			i;

	if (fs->planned_mode != FLASHFETCH_AUTO && fs->planned_mode != FLASHFETCH_NAIVE)
		return;
	if (flashjoin_fetch_mode == FLASHFETCH_NAIVE)
		return;					/* forced */
	for (i = 0; i < fs->nrels; i++)
		if (fs->rels[i].scan_visits > 2 * (uint64) fs->rels[i].est_groups + 64)
		{
			fs->sorted = true;
			fs->fell_back = fs->ever_fell_back = true;
			return;
		}
}

/*
 * The next output row: the scan slot, filled, or NULL at the end.  Rows
 * come from the child (stage 0) or out of the sort of relation stage - 1.
 */
static TupleTableSlot *
fetch_next(ScanState *ss)
{
	FlashFetchState *fs = (FlashFetchState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	int			i;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();

		if (fs->stage == 0)
		{
			TupleTableSlot *child = ExecProcNode(fs->child);
			ItemPointer tid;

			if (TupIsNull(child))
			{
				fs->stage = 1;
				if (fs->sorts[0] != NULL)
					tuplesort_performsort(fs->sorts[0]);
				continue;
			}
			load_child_row(fs, child);
			if (!fs->sorted)
			{
				for (i = 0; i < fs->nrels; i++)
					fetch_relation(fs, &fs->rels[i], slot->tts_values, slot->tts_isnull);
				check_fallback(fs);
				return ExecStoreVirtualTuple(slot);
			}
			ExecStoreVirtualTuple(slot);
			/*
			 * In relation 0's ctid order: fetched as it comes.  Only when the
			 * joins were planned in one batch: the rows of a join's first
			 * batch come in order too, and fetching them as they come would
			 * read every group once for them and again for the sorted rest.
			 */
			tid = slot->tts_isnull[fs->rels[0].ctid_pos] ? NULL :
				(ItemPointer) DatumGetPointer(slot->tts_values[fs->rels[0].ctid_pos]);
			if (tid == NULL || !fs->presorted ||
				(fs->have_last && ItemPointerCompare(tid, &fs->last_in_order) < 0))
			{
				sort_put(fs, 0, slot);
				continue;
			}
			fs->last_in_order = *tid;
			fs->have_last = true;
			fs->rels[0].rows_in_order++;
			fetch_relation(fs, &fs->rels[0], slot->tts_values, slot->tts_isnull);
			if (fs->nrels == 1)
				return slot;
			sort_put(fs, 1, slot);
			continue;
		}

		if (fs->stage > fs->nrels)
			return NULL;

		/* draining the rows waiting for relation r, in its ctid order */
		{
			int			r = fs->stage - 1;

			if (fs->sorts[r] == NULL ||
				!tuplesort_gettupleslot(fs->sorts[r], true, false, fs->sort_slot, NULL))
			{
				sort_end(fs, r);
				fs->stage++;
				if (fs->stage <= fs->nrels && fs->sorts[fs->stage - 1] != NULL)
					tuplesort_performsort(fs->sorts[fs->stage - 1]);
				continue;
			}
			ExecClearTuple(slot);
			slot_getallattrs(fs->sort_slot);
			memcpy(slot->tts_values, fs->sort_slot->tts_values,
				   sizeof(Datum) * slot->tts_tupleDescriptor->natts);
			memcpy(slot->tts_isnull, fs->sort_slot->tts_isnull,
				   sizeof(bool) * slot->tts_tupleDescriptor->natts);
			fetch_relation(fs, &fs->rels[r], slot->tts_values, slot->tts_isnull);
			ExecStoreVirtualTuple(slot);
			if (r == fs->nrels - 1)
				return slot;
			sort_put(fs, r + 1, slot);
		}
	}
}

static bool
fetch_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
fetch_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, fetch_next, fetch_recheck);
}

static void
reset_state(FlashFetchState *fs)
{
	int			i;

	for (i = 0; i < fs->nrels; i++)
		sort_end(fs, i);
	fs->stage = 0;
	fs->have_last = false;
	/* a rescan (new parameters) judges the naive fetch afresh */
	fs->fell_back = false;
	fs->sorted = (fs->planned_mode == FLASHFETCH_SORTED);
	for (i = 0; i < fs->nrels; i++)
	{
		fs->rels[i].scan_visits = 0;
		fs->rels[i].prev_group = NULL;
	}
}

static void
fetch_end(CustomScanState *node)
{
	FlashFetchState *fs = (FlashFetchState *) node;
	int			i;

	reset_state(fs);
	for (i = 0; i < fs->nrels; i++)
	{
		pax_fetch_end(fs->rels[i].fetch);
		table_close(fs->rels[i].rel, NoLock);
	}
	ExecEndNode(fs->child);
}

static void
fetch_rescan(CustomScanState *node)
{
	FlashFetchState *fs = (FlashFetchState *) node;

	reset_state(fs);
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(fs->child, node->ss.ps.chgParam);
	if (fs->child->chgParam == NULL)
		ExecReScan(fs->child);
	ExecScanReScan(&node->ss);
}

static void
fetch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	FlashFetchState *fs = (FlashFetchState *) node;
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < fs->nrels; i++)
	{
		FetchRel   *fr = &fs->rels[i];
		TupleDesc	desc = RelationGetDescr(fr->rel);
		int			j;

		appendStringInfo(&buf, "%s%s(", i > 0 ? ", " : "", quote_identifier(fr->alias));
		for (j = 0; j < fr->natts; j++)
			appendStringInfo(&buf, "%s%s", j > 0 ? ", " : "",
							 quote_identifier(NameStr(TupleDescAttr(desc, fr->attnos[j] - 1)->attname)));
		appendStringInfoChar(&buf, ')');
	}
	ExplainPropertyText("Fetched Columns", buf.data, es);
	ExplainPropertyText("Fetch Mode",
						fs->planned_mode == FLASHFETCH_SORTED ? "sorted" : "naive", es);
	if (es->analyze)
	{
		if (fs->ever_fell_back)
			ExplainPropertyText("Fetch Fallback", "sorted (groups visited beyond the estimate)", es);
		resetStringInfo(&buf);
		for (i = 0; i < fs->nrels; i++)
		{
			FetchRel   *fr = &fs->rels[i];

			appendStringInfo(&buf, "%s%s: rows=" UINT64_FORMAT " groups=" UINT64_FORMAT
							 " decoded=" UINT64_FORMAT " blocks=" UINT64_FORMAT,
							 i > 0 ? "; " : "",
							 quote_identifier(fr->alias), fr->fetch->rows_fetched,
							 fr->group_visits, fr->fetch->groups_decoded,
							 fr->fetch->blocks_read);
			if (fs->sorted && i == 0)
				appendStringInfo(&buf, " in_order=" UINT64_FORMAT, fr->rows_in_order);
		}
		ExplainPropertyText("Fetched", buf.data, es);
		if (fs->nsorts > 0)
		{
			ExplainPropertyInteger("Sorts", NULL, fs->nsorts, es);
			ExplainPropertyInteger("Sort Memory", "kB", fs->sort_mem_kb, es);
			ExplainPropertyInteger("Sort Disk", "kB", fs->sort_disk_kb, es);
		}
	}
}
