/*-------------------------------------------------------------------------
 *
 * ssd_sort_planner.c
 *	  Offer the SSD Sort path for ordered output of one heap relation, and
 *	  turn the chosen path into a plan.
 *
 * The path is added from set_rel_pathlist_hook, so it competes with every
 * other way of getting the rows in order: a Sort over the cheapest scan
 * (built later by the upper planner or the merge join code), an index scan
 * on the key, incremental sorts.  We offer it for the query's ORDER BY when
 * the relation alone can compute every key, and for each mergejoinable
 * equivalence class that joins the relation to another, so a merge join can
 * take its input sorted this way.
 *
 * Cost = project (a seq scan emitting the pairs)
 *		+ pair sort (PostgreSQL's cost_sort on the pair width)
 *		+ fetch (heap pages read for N TIDs in key order, times the page cost
 *		  of a random read with ssd_sort.prefetch_depth reads in flight).
 *
 * The fetch's pages follow cost_index() in shape: the page reads of N rows
 * visited at random when the key is uncorrelated with the physical order
 * (fetch_page_reads()), the table's pages read once when it is fully
 * correlated, and the square of the correlation between the two.  The
 * fetch visits every selected row, so we count two levels of cache: the
 * reads that miss shared_buffers and, of those, the ones that also miss
 * the OS page cache (effective_cache_size).  A read the OS cache serves
 * still costs a system call and a copy: ssd_sort.cached_page_cost (at
 * millions of fetches that adds up to more than sorting the whole rows; see
 * bench/results/ssd-sort-grid.md).  A device read
 * costs, in order of preference: ssd_sort.fetch_page_cost when set; the
 * QDTT model of the relation's tablespace at band = relation size and queue
 * depth = prefetch depth, when qdtt_costing is loaded and calibrated; the
 * tablespace's random_page_cost otherwise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"

#include "ssd_sort.h"
#include "ssdkit_path.h"
#include "ssdkit_qdtt.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static Plan *ssd_sort_plan_path(PlannerInfo *root, RelOptInfo *rel,
								CustomPath *best_path, List *tlist,
								List *clauses, List *custom_plans);

static const CustomPathMethods ssd_sort_path_methods = {
	.CustomName = SSD_SORT_NAME,
	.PlanCustomPath = ssd_sort_plan_path,
};

/* The keys of one candidate ordering, resolved against the relation. */
typedef struct SortKeys
{
	List	   *exprs;			/* key expressions over the relation */
	List	   *sort_ops;
	List	   *collations;
	List	   *nulls_first;
} SortKeys;

/*
 * Resolve each pathkey to an expression this relation alone computes and a
 * sort operator, as prepare_sort_from_pathkeys() would.  False when some key
 * cannot be computed here.
 */
static bool
resolve_sort_keys(RelOptInfo *rel, List *pathkeys, SortKeys *keys)
{
	ListCell   *lc;

	memset(keys, 0, sizeof(SortKeys));
	foreach(lc, pathkeys)
	{
		PathKey    *pk = (PathKey *) lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		EquivalenceMember *found = NULL;
		ListCell   *lm;
		Oid			sortop;

		/* A volatile key must be computed once, where the query does. */
		if (ec->ec_has_volatile)
			return false;
		while (ec->ec_merged)
			ec = ec->ec_merged;
		foreach(lm, ec->ec_members)
		{
			EquivalenceMember *em = (EquivalenceMember *) lfirst(lm);

			if (em->em_is_const || em->em_is_child ||
				bms_is_empty(em->em_relids) ||
				!bms_is_subset(em->em_relids, rel->relids))
				continue;
			found = em;
			break;
		}
		if (found == NULL)
			return false;
		sortop = get_opfamily_member(pk->pk_opfamily, found->em_datatype,
									 found->em_datatype, pk->pk_strategy);
		if (!OidIsValid(sortop))
			return false;
		keys->exprs = lappend(keys->exprs, found->em_expr);
		keys->sort_ops = lappend_oid(keys->sort_ops, sortop);
		keys->collations = lappend_oid(keys->collations, ec->ec_collation);
		keys->nulls_first = lappend_int(keys->nulls_first, pk->pk_nulls_first);
	}
	return keys->exprs != NIL;
}

/* The pair: the key expressions, then the row's TID. */
static PathTarget *
pair_target(PlannerInfo *root, RelOptInfo *rel, const SortKeys *keys)
{
	PathTarget *target = create_empty_pathtarget();
	ListCell   *lc;

	foreach(lc, keys->exprs)
		add_column_to_pathtarget(target, (Expr *) lfirst(lc), 0);
	add_column_to_pathtarget(target,
							 (Expr *) makeVar(rel->relid,
											  SelfItemPointerAttributeNumber,
											  TIDOID, -1, InvalidOid, 0),
							 0);
	return set_pathtarget_cost_width(root, target);
}

/*
 * Correlation between the first key and the physical order of the rows, from
 * ANALYZE's statistics when the key is a plain column (0 when unknown).
 */
static double
first_key_correlation(PlannerInfo *root, RelOptInfo *rel, const SortKeys *keys)
{
	Node	   *expr = (Node *) linitial(keys->exprs);
	VariableStatData vardata;
	double		correlation = 0.0;

	while (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	if (!IsA(expr, Var))
		return 0.0;
	examine_variable(root, expr, rel->relid, &vardata);
	if (HeapTupleIsValid(vardata.statsTuple))
	{
		AttStatsSlot sslot;

		if (get_attstatsslot(&sslot, vardata.statsTuple,
							 STATISTIC_KIND_CORRELATION, InvalidOid,
							 ATTSTATSSLOT_NUMBERS))
		{
			if (sslot.nnumbers > 0)
				correlation = sslot.numbers[0];
			free_attstatsslot(&sslot);
		}
	}
	ReleaseVariableStats(vardata);
	return correlation;
}

/*
 * What one heap page read by the fetch costs, and where that number comes
 * from (shown by EXPLAIN).  The sequential price of the same device goes to
 * *seq_cost, for the fully correlated case.
 */
static double
fetch_page_cost(RelOptInfo *rel, double queue_depth, double *seq_cost,
				const char **source)
{
	static SsdkitQdttApi **qdtt_api = NULL;
	double		spc_random,
				spc_seq,
				cost;

	get_tablespace_page_costs(rel->reltablespace, &spc_random, &spc_seq);
	*seq_cost = spc_seq;
	if (ssd_sort_fetch_page_cost > 0)
	{
		*source = "ssd_sort.fetch_page_cost";
		return ssd_sort_fetch_page_cost;
	}

	if (qdtt_api == NULL)
		qdtt_api = (SsdkitQdttApi **) find_rendezvous_variable(SSDKIT_QDTT_RENDEZVOUS);
	if (*qdtt_api != NULL && (*qdtt_api)->version == SSDKIT_QDTT_API_VERSION &&
		(*qdtt_api)->page_cost(rel->reltablespace, Max(rel->pages, 1),
							   queue_depth, &cost))
	{
		double		seq;

		if ((*qdtt_api)->page_cost(rel->reltablespace, 1, 1, &seq))
			*seq_cost = seq;
		*source = "qdtt model";
		return cost;
	}
	*source = "random_page_cost";
	return spc_random;
}

/*
 * Page reads the fetch makes through a cache of "cache" pages, for N rows of
 * a relation of R rows on T pages, visited in an order unrelated to the
 * physical one.
 *
 * Unlike an index scan's fetches (which cost_index prices with Mackert and
 * Lohman's formula for N fetches drawn with replacement), the fetch visits
 * each selected row exactly once: with one row per page it touches every
 * page, where Mackert-Lohman would expect a third of them never to be
 * drawn.  So we count the D distinct pages holding the N rows (drawn
 * without replacement: D = T * (1 - (1 - N/R)^(R/T))), and let every visit
 * miss with the probability that its page is not cached: a first visit
 * finds a page the projecting scan left behind with probability cache / T
 * (the scan streamed the whole table through the cache), a later visit
 * finds it with probability cache / D (an LRU cache over D pages visited
 * uniformly at random holds the most recent ones).
 */
static double
fetch_page_reads(double N, double R, double T, double cache)
{
	double		D;

	T = Max(T, 1.0);
	R = Max(R, N);
	N = Min(N, R);
	D = T * (1.0 - pow(1.0 - N / Max(R, 1.0), R / T));
	D = Min(Max(D, Min(N, 1.0)), T);
	return D * (1.0 - Min(1.0, cache / T)) +
		(N - D) * (1.0 - Min(1.0, cache / Max(D, 1.0)));
}

/* Would a Sort of the whole rows fit in work_mem?  Then we have no business. */
static bool
full_sort_fits_in_memory(RelOptInfo *rel)
{
	double		row_bytes = MAXALIGN(rel->reltarget->width) +
		MAXALIGN(SizeofHeapTupleHeader);

	return rel->rows * row_bytes <= (double) work_mem * 1024.0;
}

static void
add_ssd_sort_path(PlannerInfo *root, RelOptInfo *rel, List *pathkeys)
{
	SortKeys	keys;
	CustomPath *cpath;
	Path	   *input;
	Path		sort_path;
	PathTarget *pairs;
	double		ntuples = Max(rel->rows, 1.0);
	double		heap_pages = Max(rel->pages, 1);
	double		pages_random,
				buffer_misses,
				pages_correlated,
				corr,
				random_cost,
				seq_cost,
				io_cost,
				cpu_cost;
	int			pair_width;
	double		depth = Max(ssd_sort_prefetch_depth, 1);
	const char *source;
	bool		saved_enable_sort = enable_sort;

	if (!resolve_sort_keys(rel, pathkeys, &keys))
		return;

	/* Project: a seq scan of the relation emitting the pairs. */
	pairs = pair_target(root, rel, &keys);
	input = create_seqscan_path(root, rel, NULL, 0);
	input->pathtarget = pairs;
	pair_width = pairs->width;

	/*
	 * Sort the pairs.  enable_sort steers the planner away from Sort nodes;
	 * the pair sort is part of this node, switched off by ssd_sort.enable.
	 */
	enable_sort = true;
	cost_sort(&sort_path, root, pathkeys, input->total_cost, ntuples,
			  pair_width, 0.0, work_mem, -1.0);
	enable_sort = saved_enable_sort;

	/* Fetch the rows in key order (see the header comment). */
	random_cost = fetch_page_cost(rel, depth, &seq_cost, &source);
	pages_random = fetch_page_reads(ntuples, rel->tuples, heap_pages,
									Max(effective_cache_size, NBuffers));
	buffer_misses = Max(fetch_page_reads(ntuples, rel->tuples, heap_pages,
										 NBuffers),
						pages_random);
	pages_correlated = ceil(heap_pages * Min(1.0, ntuples / Max(rel->tuples, 1.0)));
	corr = first_key_correlation(root, rel, &keys);
	io_cost = pages_random * random_cost +
		(buffer_misses - pages_random) * ssd_sort_cached_page_cost;
	io_cost += corr * corr * (pages_correlated * seq_cost - io_cost);
	cpu_cost = ntuples * (cpu_tuple_cost + rel->reltarget->cost.per_tuple) +
		rel->reltarget->cost.startup;

	cpath = ssdkit_base_custom_path(rel, &ssd_sort_path_methods);
	cpath->path.startup_cost = sort_path.startup_cost + random_cost;
	cpath->path.total_cost = sort_path.total_cost + io_cost + cpu_cost;
	cpath->path.pathkeys = pathkeys;
	cpath->flags = 0;			/* no backward scan or mark/restore */
	cpath->custom_paths = list_make1(input);
	cpath->custom_private = list_make4(keys.sort_ops, keys.collations,
									   keys.nulls_first,
									   makeInteger(pair_width));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%.0f",
													   corr * corr * pages_correlated +
													   (1 - corr * corr) * buffer_misses)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%.0f",
													   corr * corr * pages_correlated +
													   (1 - corr * corr) * pages_random)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%g", random_cost)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeString(pstrdup(source)));

	add_path(rel, &cpath->path);
}

/*
 * Orderings of this relation a merge join could use: one single-key ordering
 * per mergejoinable equivalence class joining it to another relation.
 */
static List *
merge_orderings(PlannerInfo *root, RelOptInfo *rel)
{
	List	   *result = NIL;
	int			i = -1;

	if (!rel->has_eclass_joins)
		return NIL;
	while ((i = bms_next_member(rel->eclass_indexes, i)) >= 0)
	{
		EquivalenceClass *ec = list_nth(root->eq_classes, i);
		PathKey    *pk;

		if (ec->ec_has_const || ec->ec_has_volatile || ec->ec_broken ||
			list_length(ec->ec_members) < 2 ||
			bms_is_subset(ec->ec_relids, rel->relids) ||
			ec->ec_opfamilies == NIL)
			continue;
		if (!eclass_useful_for_merging(root, ec, rel))
			continue;
		pk = make_canonical_pathkey(root, ec, linitial_oid(ec->ec_opfamilies),
									BTLessStrategyNumber, false);
		result = lappend(result, list_make1(pk));
	}
	return result;
}

static bool
relation_is_eligible(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	relation;
	bool		heap;

	if (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION ||
		rte->inh || rte->tablesample != NULL ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		IS_DUMMY_REL(rel) || !bms_is_empty(rel->lateral_relids))
		return false;

	/*
	 * Row locks and data-modifying commands re-check rows by EvalPlanQual,
	 * which expects the scan node itself to apply the quals; ours are in the
	 * pair scan.  Pseudoconstant quals would put a gating Result between us
	 * and that scan.
	 */
	if (root->parse->commandType != CMD_SELECT || root->rowMarks != NIL ||
		root->hasPseudoConstantQuals)
		return false;

	/* Top-N sorts stay in memory; nothing to gain. */
	if (root->limit_tuples >= 0)
		return false;

	/* TIDs must name heap tuples. */
	relation = table_open(rte->relid, NoLock);
	heap = relation->rd_rel->relam == HEAP_TABLE_AM_OID;
	table_close(relation, NoLock);
	return heap;
}

static void
ssd_sort_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						  RangeTblEntry *rte)
{
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		(*prev_set_rel_pathlist_hook) (root, rel, rti, rte);

	if (!ssd_sort_enable || !relation_is_eligible(root, rel, rte) ||
		full_sort_fits_in_memory(rel))
		return;

	if (root->query_pathkeys != NIL)
		add_ssd_sort_path(root, rel, root->query_pathkeys);
	foreach(lc, merge_orderings(root, rel))
	{
		List	   *pathkeys = (List *) lfirst(lc);

		if (!pathkeys_contained_in(pathkeys, root->query_pathkeys))
			add_ssd_sort_path(root, rel, pathkeys);
	}
}

/*
 * The plan: a CustomScan over the relation with the pair scan as its outer
 * plan.  The restriction clauses are the pair scan's quals; the CustomScan
 * evaluates none (a fetched row passed them when its TID was emitted).
 */
static Plan *
ssd_sort_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *pair_scan = (Plan *) linitial(custom_plans);
	PathTarget *pairs = ((Path *) linitial(best_path->custom_paths))->pathtarget;

	Assert(IsA(pair_scan, SeqScan));

	/*
	 * The pair scan's output is exactly the pair, in this order (CP_EXACT_TLIST
	 * gives that already; say it, rather than rely on it).  EXPLAIN deparses
	 * the keys from custom_exprs: the pair without its trailing ctid.
	 */
	pair_scan->targetlist = make_tlist_from_pathtarget(pairs);
	cscan->custom_exprs = list_truncate(copyObject(pairs->exprs),
										list_length(pairs->exprs) - 1);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.lefttree = pair_scan;
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_private = best_path->custom_private;
	cscan->custom_scan_tlist = NIL;
	cscan->methods = &ssd_sort_scan_methods;
	return &cscan->scan.plan;
}

void
ssd_sort_planner_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = ssd_sort_set_rel_pathlist;
}
