/*-------------------------------------------------------------------------
 *
 * qdtt_explain.c
 *	  qdtt_explain(query): plan a SELECT and list, for each base relation,
 *	  the scan paths the planner weighed, with PostgreSQL's stock cost and
 *	  the QDTT cost, marking the ones the final plan uses.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"

#include "qdtt_costing.h"

PG_FUNCTION_INFO_V1(qdtt_explain);

/* A scan the final plan performs. */
typedef struct PlannedScan
{
	Index		scanrelid;
	const char *kind;
	Oid			indexoid;
} PlannedScan;

static Oid
bitmap_index(Plan *plan)
{
	if (plan == NULL)
		return InvalidOid;
	if (IsA(plan, BitmapIndexScan))
		return ((BitmapIndexScan *) plan)->indexid;
	if (IsA(plan, BitmapAnd))
		return bitmap_index(linitial(((BitmapAnd *) plan)->bitmapplans));
	if (IsA(plan, BitmapOr))
		return bitmap_index(linitial(((BitmapOr *) plan)->bitmapplans));
	return InvalidOid;
}

static List *
collect_scans(Plan *plan, List *acc)
{
	PlannedScan *s = NULL;
	ListCell   *lc;

	if (plan == NULL)
		return acc;

	switch (nodeTag(plan))
	{
		case T_SeqScan:
			s = palloc0(sizeof(PlannedScan));
			s->kind = plan->parallel_aware ? "Parallel Seq Scan" : "Seq Scan";
			break;
		case T_IndexScan:
			s = palloc0(sizeof(PlannedScan));
			s->kind = plan->parallel_aware ? "Parallel Index Scan" : "Index Scan";
			s->indexoid = ((IndexScan *) plan)->indexid;
			break;
		case T_IndexOnlyScan:
			s = palloc0(sizeof(PlannedScan));
			s->kind = plan->parallel_aware ? "Parallel Index Only Scan" : "Index Only Scan";
			s->indexoid = ((IndexOnlyScan *) plan)->indexid;
			break;
		case T_BitmapHeapScan:
			s = palloc0(sizeof(PlannedScan));
			s->kind = plan->parallel_aware ? "Parallel Bitmap Heap Scan" : "Bitmap Heap Scan";
			s->indexoid = bitmap_index(plan->lefttree);
			break;
		default:
			break;
	}
	if (s != NULL)
	{
		s->scanrelid = ((Scan *) plan)->scanrelid;
		acc = lappend(acc, s);
	}

	acc = collect_scans(plan->lefttree, acc);
	acc = collect_scans(plan->righttree, acc);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			acc = collect_scans(lfirst(lc), acc);
	if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			acc = collect_scans(lfirst(lc), acc);
	if (IsA(plan, SubqueryScan))
		acc = collect_scans(((SubqueryScan *) plan)->subplan, acc);
	if (IsA(plan, CustomScan))
		foreach(lc, ((CustomScan *) plan)->custom_plans)
			acc = collect_scans(lfirst(lc), acc);
	return acc;
}

/*
 * Does the final plan scan the candidate's relation that way?  The final
 * plan numbers its relations in one flat range table for every query level
 * (subqueries, UNION branches, CTEs, SubPlans); each entry there is a copy
 * of the planning level's entry that keeps its eref pointer, which names
 * the entry the candidate was planned for.
 */
static bool
is_chosen(QdttCandidate *c, List *scans, List *rtable)
{
	ListCell   *lc;

	foreach(lc, scans)
	{
		PlannedScan *s = lfirst(lc);
		RangeTblEntry *rte = rt_fetch(s->scanrelid, rtable);

		if (rte->eref == c->eref && strcmp(s->kind, c->kind) == 0 &&
			s->indexoid == c->indexoid)
			return true;
	}
	return false;
}

/*
 * Was the candidate's relation planned again, for the query level that a
 * copy of this one stood in for?  min/max aggregates plan an index
 * subquery in a copy of the query level first (its parent_root is the
 * level), then the level itself.
 */
static bool
is_superseded(QdttCandidate *c, const ListCell *lc, List *capture)
{
	const ListCell *later;

	for_each_cell(later, capture, lnext(capture, lc))
	{
		QdttCandidate *l = lfirst(later);

		if (c->replan && l->round != c->round && l->reloid == c->reloid &&
			l->relid == c->relid && l->root == c->parent_root)
			return true;
	}
	return false;
}

/*
 * qdtt_explain(query text) RETURNS SETOF (relation regclass, scan text,
 *		index regclass, workers int, band_pages float8, queue_depth float8,
 *		heap_pages float8, stock_cost float8, qdtt_cost float8,
 *		chosen bool, note text, shared_buffers_fraction float8,
 *		os_cache_fraction float8, io_cost_memory float8,
 *		io_cost_device float8, memory_work_cost float8)
 */
/*
 * An error parsing or analyzing the query text reports its position inside
 * that text (psql: QUERY: with the caret in it), not in the statement that
 * called qdtt_explain(); other errors name the query in a CONTEXT line.
 */
static void
query_error_callback(void *arg)
{
	const char *query = (const char *) arg;
	int			position = geterrposition();

	if (position > 0)
	{
		errposition(0);
		internalerrposition(position);
		internalerrquery(query);
	}
	else
		errcontext("query planned by qdtt_explain(): %s", query);
}

Datum
qdtt_explain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List	   *raw;
	List	   *queries;
	Query	   *query;
	PlannedStmt *stmt = NULL;
	List	   *scans = NIL;
	ListCell   *lc;
	ListCell   *sp;
	ErrorContextCallback errcallback;

	InitMaterializedSRF(fcinfo, 0);

	/* Errors in the query point into it, as for SQL run by SPI. */
	errcallback.callback = query_error_callback;
	errcallback.arg = sql;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	raw = pg_parse_query(sql);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("qdtt_explain() takes exactly one statement, got %d", list_length(raw))));
	queries = pg_analyze_and_rewrite_fixedparams(linitial_node(RawStmt, raw), sql,
												 NULL, 0, NULL);
	error_context_stack = errcallback.previous;
	/* a rule may rewrite the statement into none (DO INSTEAD NOTHING) or several */
	query = list_length(queries) == 1 ? linitial_node(Query, queries) : NULL;
	if (query == NULL || query->commandType != CMD_SELECT ||
		query->utilityStmt != NULL || query->rowMarks != NIL ||
		query->hasModifyingCTE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("qdtt_explain() only plans plain SELECT statements"),
				 errhint("Use EXPLAIN for other statements.")));

	qdtt_capture = NIL;
	qdtt_capture_cxt = CurrentMemoryContext;
	qdtt_capturing = true;
	PG_TRY();
	{
		stmt = pg_plan_query(query, sql, CURSOR_OPT_PARALLEL_OK, NULL);
	}
	PG_FINALLY();
	{
		qdtt_capturing = false;
	}
	PG_END_TRY();

	/*
	 * The caller must be allowed to run the query, as EXPLAIN checks when it
	 * starts the plan: the candidates carry row estimates drawn from
	 * statistics a role without SELECT may not see.
	 */
	(void) ExecCheckRTPerms(stmt->rtable, true);

	scans = collect_scans(stmt->planTree, NIL);
	foreach(sp, stmt->subplans)
		scans = collect_scans(lfirst(sp), scans);

	foreach(lc, qdtt_capture)
	{
		QdttCandidate *c = lfirst(lc);
		Datum		values[16];
		bool		nulls[16] = {0};
		bool		chosen = is_chosen(c, scans, stmt->rtable);

		/*
		 * A relation planned again for its query level is listed once, as
		 * that level planned it, unless the plan uses the first planning.
		 */
		if (!chosen && is_superseded(c, lc, qdtt_capture))
			continue;

		values[0] = ObjectIdGetDatum(c->reloid);
		values[1] = CStringGetTextDatum(c->kind);
		values[2] = ObjectIdGetDatum(c->indexoid);
		nulls[2] = !OidIsValid(c->indexoid);
		values[3] = Int32GetDatum(c->workers);
		values[4] = Float8GetDatum(c->band);
		values[5] = Float8GetDatum(c->queue_depth);
		nulls[4] = nulls[5] = !c->has_qdtt;
		values[6] = Float8GetDatum(c->pages);
		values[7] = Float8GetDatum(c->stock_cost);
		values[8] = Float8GetDatum(c->qdtt_cost);
		nulls[8] = !c->has_qdtt;
		values[9] = BoolGetDatum(chosen);
		values[10] = c->note ? CStringGetTextDatum(c->note) : (Datum) 0;
		nulls[10] = (c->note == NULL);
		values[11] = Float8GetDatum(c->sb_fraction);
		values[12] = Float8GetDatum(c->os_fraction);
		nulls[11] = nulls[12] = !c->has_residency;
		values[13] = Float8GetDatum(c->io_cost_memory);
		values[14] = Float8GetDatum(c->io_cost_device);
		values[15] = Float8GetDatum(c->memory_work);
		nulls[13] = nulls[14] = nulls[15] = !c->has_qdtt;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	qdtt_capture = NIL;
	return (Datum) 0;
}
