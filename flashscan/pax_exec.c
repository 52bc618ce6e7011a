/*-------------------------------------------------------------------------
 *
 * pax_exec.c
 *	  Tell pax which columns an executor node reads from it, so that the
 *	  plain Seq Scan, Index Scan and Bitmap Heap Scan of a pax table read
 *	  and decode only those columns' minipages, as FlashScan does.
 *
 * The table access method API gives a scan or a row fetch no projection:
 * PostgreSQL 15 opens them with the relation alone.  After ExecutorStart
 * the plan state tree is walked from the top, working out for each node
 * which of its output columns the nodes above it read ("reads"; NULL:
 * possibly all):
 *
 * - the query's top node: all (the client gets them);
 * - a node that projects (joins, Agg, Group, WindowAgg, Result, ProjectSet,
 *   a projecting Gather) reads from its children the Vars of its target
 *   list, quals and join or hash clauses that point to them (OUTER_VAR,
 *   INNER_VAR), and the columns its grouping or ordering arrays name;
 * - a node that passes its child's tuples up unchanged (Sort, Material,
 *   Limit, Unique, Hash, Append, MergeAppend, a non-projecting Gather)
 *   reads what its parent reads plus its own key columns (Limit's WITH
 *   TIES columns, Gather Merge's merge keys);
 * - any other node: all of its children's columns.
 *
 * A scan whose target list is the relation's own columns does not project:
 * what it must produce is what its parent reads; a scan that projects
 * produces its target list.  Its quals, the original index quals it
 * rechecks and its ORDER BY expressions are read too; a whole-row Var means
 * every column; an Index-Only Scan fetches rows for their visibility only.
 * A Bitmap Heap Scan's scan descriptor exists after ExecutorStart and is
 * told at once; Seq Scan and Index Scan open theirs on their first call (or
 * in a parallel worker's DSM setup), so those nodes' ExecProcNodeReal is
 * wrapped: the wrapper opens a serial scan's descriptor itself, as that
 * first call would, and tells it before any row is read (a point query's
 * one row among them), then restores the node's own function.
 *
 * EvalPlanQual, row locks, UPDATE and DELETE fetch the rows they need by
 * TID on their own, whole.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/sysattr.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "nodes/plannodes.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "flashscan.h"
#include "pax.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;


/* A node whose scan descriptor does not exist yet. */
typedef struct PendingScan
{
	PlanState  *ps;				/* hash key */
	ExecProcNodeMtd real;		/* its ExecProcNodeReal */
	bool	   *needed;			/* in its query's memory */
	PaxFetchFilter *filter;		/* likewise, or NULL */
	MemoryContext query_cxt;
} PendingScan;

static HTAB *pending = NULL;

/* Add the columns numbered in cols[0..n) to *set. */
static Bitmapset *
add_columns(Bitmapset *set, const AttrNumber *cols, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		set = bms_add_member(set, cols[i]);
	return set;
}

/* Output column numbers of a child that node reads: its Vars of varno. */
static Bitmapset *
vars_of(Node *node, int varno, Bitmapset *set)
{
	Bitmapset  *attrs = NULL;
	int			x = -1;

	pull_varattnos(node, varno, &attrs);
	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		int			att = x + FirstLowInvalidHeapAttributeNumber;

		/* system columns (ctid, tableoid) need no column read */
		if (att >= 0)
			set = bms_add_member(set, att);
	}
	return set;
}

/*
 * The columns (attribute indexes) a scan node on rel must produce, its
 * parent reading reads of its output; NULL when that is every column.
 */
static bool *
scan_columns(PlanState *ps, Relation rel, Bitmapset *reads)
{
	Plan	   *plan = ps->plan;
	Index		scanrelid = ((Scan *) plan)->scanrelid;
	Bitmapset  *attrs = NULL;
	TupleDesc	desc = RelationGetDescr(rel);
	bool	   *needed = palloc0(sizeof(bool) * Max(desc->natts, 1));
	int			x = -1;

	if (IsA(plan, IndexOnlyScan))
		return needed;			/* visibility only */
	if (ps->ps_ProjInfo != NULL)
		attrs = vars_of((Node *) plan->targetlist, scanrelid, attrs);
	else if (reads == NULL)
		return NULL;
	else
		attrs = bms_union(attrs, reads);	/* output column i is attribute i */
	attrs = vars_of((Node *) plan->qual, scanrelid, attrs);
	if (IsA(plan, IndexScan))
	{
		Relation	index = ((IndexScanState *) ps)->iss_RelationDesc;

		/*
		 * The original index quals are evaluated on the row only where the
		 * index AM asks for a recheck (xs_recheck: hash, GiST, SP-GiST);
		 * btree's matches are exact, so a point query on a primary key
		 * reads its output columns alone, not the key's minipage too.
		 */
		if (index == NULL || index->rd_rel->relam != BTREE_AM_OID)
			attrs = vars_of((Node *) ((IndexScan *) plan)->indexqualorig, scanrelid, attrs);
		attrs = vars_of((Node *) ((IndexScan *) plan)->indexorderbyorig, scanrelid, attrs);
	}
	else if (IsA(plan, BitmapHeapScan))
		attrs = vars_of((Node *) ((BitmapHeapScan *) plan)->bitmapqualorig, scanrelid, attrs);

	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		if (x == InvalidAttrNumber)
			return NULL;		/* a whole-row reference */
		if (x > 0 && x <= desc->natts)
			needed[x - 1] = true;
	}
	return needed;
}

/*
 * Selection first for an Index Scan's fetches: the longest prefix of the
 * node's qual (its clauses in the planner's order) that may run early, in
 * stages of the clauses that need a column the earlier ones did not; NULL
 * where it would save nothing.  Running a clause inside the fetch, before
 * the node does, changes nothing the user can see only if the node would
 * run it on exactly those rows, in that order, with the same result:
 *
 * - an Index Scan's index is a btree, whose matches are exact: an access
 *   method that asks for a recheck (xs_recheck) has the node test its index
 *   quals before the qual, and a qual run first could fail (an error) on a
 *   row the recheck would have dropped; a Bitmap Heap Scan's fetch pauses
 *   the filter on pages the node rechecks (lossy ones among them);
 * - the clause is one a fetch may test (pax_fetch_may_test());
 * - no whole-row reference (it reads every column).
 *
 * A row the filter drops never reaches the node, which would have dropped
 * it: the filter counts it in the node's "Rows Removed by Filter".
 */
static PaxFetchFilter *
selection_first(PlanState *ps, Relation rel, const bool *needed)
{
	Index		scanrelid = ((Scan *) ps->plan)->scanrelid;
	Relation	index;
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *stage_clauses = NIL;
	List	   *stage_cols = NIL;
	bool	   *seen;
	bool		saves = false;
	PaxFetchFilter *filter;
	ListCell   *lc,
			   *lc2;
	int			att,
				s;

	if (!pax_fetch_filter_first || ps->plan->qual == NIL)
		return NULL;
	if (IsA(ps, IndexScanState))
	{
		index = ((IndexScanState *) ps)->iss_RelationDesc;
		if (index == NULL || index->rd_rel->relam != BTREE_AM_OID ||
			((IndexScan *) ps->plan)->indexorderby != NIL)
			return NULL;
	}
	else if (IsA(ps, BitmapHeapScanState))
		index = NULL;			/* lossy and recheck pages: the fetch pauses */
	else
		return NULL;
	seen = palloc0(sizeof(bool) * Max(desc->natts, 1));
	foreach(lc, ps->plan->qual)
	{
		Node	   *clause = lfirst(lc);
		Bitmapset  *attrs;
		bool	   *cols;
		bool		adds = false;
		int			x = -1;

		if (!pax_fetch_may_test(clause))
			break;
		/* (ctid and tableoid are in the slot without a read) */
		attrs = vars_of(clause, scanrelid, NULL);
		if (bms_is_member(InvalidAttrNumber, attrs))
			break;
		cols = palloc0(sizeof(bool) * Max(desc->natts, 1));
		while ((x = bms_next_member(attrs, x)) >= 0)
		{
			if (x > desc->natts)
				continue;
			cols[x - 1] = true;
			adds |= !seen[x - 1];
			seen[x - 1] = true;
		}
		if (!adds && stage_clauses != NIL)
			llast(stage_clauses) = lappend(llast(stage_clauses), clause);
		else
		{
			stage_clauses = lappend(stage_clauses, list_make1(clause));
			stage_cols = lappend(stage_cols, cols);
		}
	}
	/* a saving: a row dropped early leaves some needed column unread */
	saves = list_length(stage_clauses) > 1;
	for (att = 0; att < desc->natts && !saves && stage_clauses != NIL; att++)
		saves = needed[att] && !seen[att];
	if (!saves)
		return NULL;

	filter = palloc0(sizeof(PaxFetchFilter));
	filter->nstages = list_length(stage_clauses);
	filter->cols = palloc(sizeof(bool *) * filter->nstages);
	filter->quals = palloc(sizeof(ExprState *) * filter->nstages);
	filter->ps = ps;
	filter->counted = index ? index : rel;
	filter->econtext = CreateExprContext(ps->state);
	s = 0;
	forboth(lc, stage_clauses, lc2, stage_cols)
	{
		filter->quals[s] = ExecInitQual(lfirst(lc), ps);
		filter->cols[s] = lfirst(lc2);
		s++;
	}
	return filter;
}

/* Tell the node's scan descriptor; false if it has none yet. */
static bool
tell_scan(PlanState *ps, const bool *needed, PaxFetchFilter *filter)
{
	switch (nodeTag(ps))
	{
		case T_SeqScanState:
		case T_BitmapHeapScanState:
			{
				TableScanDesc d = ((ScanState *) ps)->ss_currentScanDesc;

				if (d == NULL)
					return false;
				pax_scan_set_columns(d, needed);
				pax_scan_set_filter(d, filter);
				return true;
			}
		case T_IndexScanState:
		case T_IndexOnlyScanState:
			{
				IndexScanDesc d = IsA(ps, IndexScanState) ?
					((IndexScanState *) ps)->iss_ScanDesc :
					((IndexOnlyScanState *) ps)->ioss_ScanDesc;

				if (d == NULL || d->xs_heapfetch == NULL)
					return false;
				pax_fetch_set_columns((PaxFetch *) d->xs_heapfetch, needed);
				pax_fetch_set_filter((PaxFetch *) d->xs_heapfetch, filter);
				return true;
			}
		default:
			return true;
	}
}

/*
 * An index scan's descriptor as IndexNext / IndexOnlyNext open it; its keys
 * are passed now if they are known (runtime keys not computed yet:
 * ExecReScan passes them).
 */
static IndexScanDesc
begin_index_scan(ScanState *ss, Relation index, ScanKey keys, int nkeys,
				 ScanKey orderbys, int norderbys, bool keys_ready, bool want_itup)
{
	IndexScanDesc d = index_beginscan(ss->ss_currentRelation, index,
									  ss->ps.state->es_snapshot, nkeys, norderbys);

	d->xs_want_itup = want_itup;
	if (keys_ready)
		index_rescan(d, keys, nkeys, orderbys, norderbys);
	return d;
}

/*
 * Open a serial Seq Scan's, Index Scan's or Index-Only Scan's descriptor
 * as its node's first call would (SeqNext, IndexNext, IndexOnlyNext of
 * PostgreSQL 15), so that it is told its columns before it reads a row: a
 * point query returns its one row from that first call, and would
 * otherwise read every column of it.  A parallel-aware node's descriptor
 * comes from its DSM setup, before its first call; one left without
 * (serial execution of a parallel plan) opens its own on that call.
 */
static void
open_scan(PlanState *ps)
{
	EState	   *estate = ps->state;

	if (ps->plan->parallel_aware)
		return;
	switch (nodeTag(ps))
	{
		case T_SeqScanState:
			{
				ScanState  *ss = (ScanState *) ps;

				if (ss->ss_currentScanDesc == NULL)
					ss->ss_currentScanDesc = table_beginscan(ss->ss_currentRelation,
															 estate->es_snapshot, 0, NULL);
				break;
			}
		case T_IndexScanState:
			{
				IndexScanState *is = (IndexScanState *) ps;

				if (is->iss_ScanDesc == NULL)
					is->iss_ScanDesc =
						begin_index_scan(&is->ss, is->iss_RelationDesc,
										 is->iss_ScanKeys, is->iss_NumScanKeys,
										 is->iss_OrderByKeys, is->iss_NumOrderByKeys,
										 is->iss_NumRuntimeKeys == 0 || is->iss_RuntimeKeysReady,
										 false);
				break;
			}
		case T_IndexOnlyScanState:
			{
				IndexOnlyScanState *ios = (IndexOnlyScanState *) ps;

				if (ios->ioss_ScanDesc == NULL)
				{
					ios->ioss_ScanDesc =
						begin_index_scan(&ios->ss, ios->ioss_RelationDesc,
										 ios->ioss_ScanKeys, ios->ioss_NumScanKeys,
										 ios->ioss_OrderByKeys, ios->ioss_NumOrderByKeys,
										 ios->ioss_NumRuntimeKeys == 0 || ios->ioss_RuntimeKeysReady,
										 true);
					ios->ioss_VMBuffer = InvalidBuffer;
				}
				break;
			}
		default:
			break;
	}
}

static TupleTableSlot *exec_until_told(PlanState *ps);

/* The node's descriptor was told: its own ExecProcNodeReal from now on. */
static void
stop_waiting(PlanState *ps, ExecProcNodeMtd real)
{
	ps->ExecProcNodeReal = real;
	if (ps->ExecProcNode == exec_until_told)
		ps->ExecProcNode = real;
	hash_search(pending, &ps, HASH_REMOVE, NULL);
}

/* ExecProcNodeReal of a node until its scan descriptor is told. */
static TupleTableSlot *
exec_until_told(PlanState *ps)
{
	PendingScan *p = hash_search(pending, &ps, HASH_FIND, NULL);
	ExecProcNodeMtd real;
	TupleTableSlot *slot;

	if (p == NULL)
		elog(ERROR, "pax: executor node %p lost its column set", (void *) ps);
	real = p->real;
	open_scan(ps);
	if (tell_scan(ps, p->needed, p->filter))
	{
		stop_waiting(ps, real);
		return real(ps);
	}
	slot = real(ps);
	if (tell_scan(ps, p->needed, p->filter))
		stop_waiting(ps, real);
	return slot;
}

/* The query's memory goes: forget its nodes that never ran. */
static void
forget_query(void *arg)
{
	MemoryContext cxt = (MemoryContext) arg;
	HASH_SEQ_STATUS seq;
	PendingScan *p;

	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (p->query_cxt == cxt)
			hash_search(pending, &p->ps, HASH_REMOVE, NULL);
}

/* Wait for the node's scan descriptor: wrap its ExecProcNodeReal. */
static void
tell_later(PlanState *ps, bool *needed, PaxFetchFilter *filter, EState *estate)
{
	PendingScan *p;
	bool		found;

	if (pending == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PlanState *);
		ctl.entrysize = sizeof(PendingScan);
		pending = hash_create("pax pending scans", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	p = hash_search(pending, &ps, HASH_ENTER, &found);
	if (!found)
	{
		MemoryContextCallback *cb;

		p->real = ps->ExecProcNodeReal;
		p->needed = needed;
		p->filter = filter;
		p->query_cxt = estate->es_query_cxt;
		ps->ExecProcNodeReal = exec_until_told;
		cb = MemoryContextAlloc(estate->es_query_cxt, sizeof(*cb));
		cb->func = forget_query;
		cb->arg = estate->es_query_cxt;
		MemoryContextRegisterResetCallback(estate->es_query_cxt, cb);
	}
}

static void walk_node(PlanState *ps, Bitmapset *reads, EState *estate);

/*
 * A member of a "reads" set that is no column: a node that reads none of
 * its child's columns (a semi or anti join's inner side under EXISTS, a
 * count(*)) passes a set of it alone, which is not NULL, the set that
 * means every column.
 */
#define NO_COLUMN	(MaxTupleAttributeNumber + 1)	/* past any target list, small */

/* What a projecting node reads of its child varno (OUTER_VAR or INNER_VAR). */
static Bitmapset *
projected_reads(PlanState *ps, int varno)
{
	Plan	   *plan = ps->plan;
	Bitmapset  *set = NULL;

	set = vars_of((Node *) plan->targetlist, varno, set);
	set = vars_of((Node *) plan->qual, varno, set);
	switch (nodeTag(plan))
	{
		case T_NestLoop:
			{
				ListCell   *lc;

				set = vars_of((Node *) ((Join *) plan)->joinqual, varno, set);
				foreach(lc, ((NestLoop *) plan)->nestParams)
					set = vars_of((Node *) ((NestLoopParam *) lfirst(lc))->paramval, varno, set);
				break;
			}
		case T_MergeJoin:
			set = vars_of((Node *) ((Join *) plan)->joinqual, varno, set);
			set = vars_of((Node *) ((MergeJoin *) plan)->mergeclauses, varno, set);
			break;
		case T_HashJoin:
			set = vars_of((Node *) ((Join *) plan)->joinqual, varno, set);
			set = vars_of((Node *) ((HashJoin *) plan)->hashclauses, varno, set);
			set = vars_of((Node *) ((HashJoin *) plan)->hashkeys, varno, set);
			break;
		case T_Agg:
			set = add_columns(set, ((Agg *) plan)->grpColIdx, ((Agg *) plan)->numCols);
			break;
		case T_Group:
			set = add_columns(set, ((Group *) plan)->grpColIdx, ((Group *) plan)->numCols);
			break;
		case T_WindowAgg:
			set = add_columns(set, ((WindowAgg *) plan)->partColIdx,
							  ((WindowAgg *) plan)->partNumCols);
			set = add_columns(set, ((WindowAgg *) plan)->ordColIdx,
							  ((WindowAgg *) plan)->ordNumCols);
			set = vars_of(((WindowAgg *) plan)->startOffset, varno, set);
			set = vars_of(((WindowAgg *) plan)->endOffset, varno, set);
			set = vars_of((Node *) ((WindowAgg *) plan)->runConditionOrig, varno, set);
			break;
		case T_Result:
			set = vars_of(((Result *) plan)->resconstantqual, varno, set);
			break;
		default:
			break;
	}
	return bms_add_member(set, NO_COLUMN);
}

/*
 * Walk ps and its children; reads: the output columns of ps the nodes
 * above read (NULL: possibly all).
 */
static void
walk_node(PlanState *ps, Bitmapset *reads, EState *estate)
{
	Plan	   *plan;
	ListCell   *lc;

	if (ps == NULL)
		return;
	check_stack_depth();
	plan = ps->plan;

	/* subqueries' plans produce what their expressions use: all */
	foreach(lc, ps->initPlan)
		walk_node(((SubPlanState *) lfirst(lc))->planstate, NULL, estate);
	foreach(lc, ps->subPlan)
		walk_node(((SubPlanState *) lfirst(lc))->planstate, NULL, estate);

	switch (nodeTag(ps))
	{
		case T_SeqScanState:
		case T_IndexScanState:
		case T_IndexOnlyScanState:
		case T_BitmapHeapScanState:
			{
				Relation	rel = ((ScanState *) ps)->ss_currentRelation;
				bool	   *needed;

				if (IsA(ps, BitmapHeapScanState))
					walk_node(outerPlanState(ps), NULL, estate);
				if (rel == NULL || rel->rd_tableam != pax_table_am_routine())
					return;
				needed = pax_scan_needed_columns ? scan_columns(ps, rel, reads) : NULL;
				if (needed != NULL)
				{
					PaxFetchFilter *filter = selection_first(ps, rel, needed);

					if (!tell_scan(ps, needed, filter))
						tell_later(ps, needed, filter, estate);
				}
				return;
			}

		/* projecting nodes */
		case T_HashJoinState:
			flashscan_attach_hash_join(outerPlanState(ps), (HashJoinState *) ps);
			/* FALLTHROUGH */
		case T_NestLoopState:
		case T_MergeJoinState:
			walk_node(outerPlanState(ps), projected_reads(ps, OUTER_VAR), estate);
			walk_node(innerPlanState(ps), projected_reads(ps, INNER_VAR), estate);
			return;
		case T_AggState:
			if (((Agg *) plan)->groupingSets != NIL || ((Agg *) plan)->chain != NIL)
				break;
			walk_node(outerPlanState(ps), projected_reads(ps, OUTER_VAR), estate);
			return;
		case T_GroupState:
		case T_WindowAggState:
		case T_ResultState:
		case T_ProjectSetState:
			walk_node(outerPlanState(ps), projected_reads(ps, OUTER_VAR), estate);
			return;
		case T_GatherState:
		case T_GatherMergeState:
			/* Gather Merge merges on its child's columns */
			if (ps->ps_ProjInfo != NULL)
				reads = projected_reads(ps, OUTER_VAR);
			if (reads != NULL && IsA(plan, GatherMerge))
				reads = add_columns(bms_copy(reads), ((GatherMerge *) plan)->sortColIdx,
									((GatherMerge *) plan)->numCols);
			walk_node(outerPlanState(ps), reads, estate);
			return;

		/* nodes that pass their child's tuples up */
		case T_SortState:
			walk_node(outerPlanState(ps),
					  reads ? add_columns(bms_copy(reads), ((Sort *) plan)->sortColIdx,
										  ((Sort *) plan)->numCols) : NULL, estate);
			return;
		case T_IncrementalSortState:
			walk_node(outerPlanState(ps),
					  reads ? add_columns(bms_copy(reads), ((IncrementalSort *) plan)->sort.sortColIdx,
										  ((IncrementalSort *) plan)->sort.numCols) : NULL, estate);
			return;
		case T_UniqueState:
			walk_node(outerPlanState(ps),
					  reads ? add_columns(bms_copy(reads), ((Unique *) plan)->uniqColIdx,
										  ((Unique *) plan)->numCols) : NULL, estate);
			return;
		case T_MaterialState:
			walk_node(outerPlanState(ps), reads, estate);
			return;
		case T_LimitState:
			/* WITH TIES compares its child's rows on the ORDER BY columns */
			if (reads != NULL && ((Limit *) plan)->limitOption == LIMIT_OPTION_WITH_TIES)
				reads = add_columns(bms_copy(reads), ((Limit *) plan)->uniqColIdx,
									((Limit *) plan)->uniqNumCols);
			walk_node(outerPlanState(ps), reads, estate);
			return;
		case T_HashState:
			walk_node(outerPlanState(ps),
					  reads ? vars_of((Node *) ((Hash *) plan)->hashkeys, OUTER_VAR,
									  bms_copy(reads)) : NULL, estate);
			return;
		case T_AppendState:
			{
				AppendState *as = (AppendState *) ps;
				int			i;

				for (i = 0; i < as->as_nplans; i++)
					walk_node(as->appendplans[i], reads, estate);
				return;
			}
		case T_MergeAppendState:
			{
				MergeAppendState *ms = (MergeAppendState *) ps;
				Bitmapset  *r = reads ? add_columns(bms_copy(reads),
													((MergeAppend *) plan)->sortColIdx,
													((MergeAppend *) plan)->numCols) : NULL;
				int			i;

				for (i = 0; i < ms->ms_nplans; i++)
					walk_node(ms->mergeplans[i], r, estate);
				return;
			}
		default:
			break;
	}

	/* any other node: its children may read every column */
	walk_node(outerPlanState(ps), NULL, estate);
	walk_node(innerPlanState(ps), NULL, estate);
	if (IsA(ps, CustomScanState))
		foreach(lc, ((CustomScanState *) ps)->custom_ps)
			walk_node(lfirst(lc), NULL, estate);
	else if (IsA(ps, SubqueryScanState))
		walk_node(((SubqueryScanState *) ps)->subplan, NULL, estate);
	else if (IsA(ps, ModifyTableState))
	{
		/* its child is outerPlanState */
	}
	else if (IsA(ps, BitmapAndState) || IsA(ps, BitmapOrState))
	{
		/* index scans only: nothing of a table */
	}
}

/* EXPLAIN without ANALYZE: mark the scans a join filter would serve. */
static bool
explain_join_filters(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, HashJoinState))
		flashscan_explain_hash_join(outerPlanState(ps), (HashJoinState *) ps);
	return planstate_tree_walker(ps, explain_join_filters, context);
}

static void
pax_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (flashscan_join_filter && (eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		queryDesc->planstate != NULL)
		(void) explain_join_filters(queryDesc->planstate, NULL);
	if ((pax_scan_needed_columns || flashscan_join_filter) && !(eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		queryDesc->planstate != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);

		walk_node(queryDesc->planstate, NULL, queryDesc->estate);
		MemoryContextSwitchTo(old);
	}
}

void
pax_exec_init(void)
{
	DefineCustomBoolVariable("flashscan.scan_needed_columns",
							 "Plain scans and index fetches of pax tables read only the columns the plan uses.",
							 "Off: they read every column of every row they return.",
							 &pax_scan_needed_columns, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flashscan.fetch_selection_first",
							 "Index and bitmap scans of a pax table test their filter's columns first and read the other columns only for rows that pass.",
							 "Off: every column the node uses is read for every visible row the index returns.",
							 &pax_fetch_filter_first, true, PGC_USERSET, 0, NULL, NULL, NULL);
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = pax_executor_start;
}
