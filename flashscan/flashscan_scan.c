/*-------------------------------------------------------------------------
 *
 * flashscan_scan.c
 *	  FlashScan: a custom scan of pax tables that reads only the minipages
 *	  of the columns a query needs, and with selection first (the paper's
 *	  FlashScanOpt) reads the predicate columns of a group, evaluates the
 *	  quals, and reads the other needed columns only when some row matched.
 *
 * Planner: set_rel_pathlist_hook adds a FlashScan path for every plain pax
 * base relation (no TABLESAMPLE, no system columns but ctid/tableoid).  Its
 * cost counts the blocks it expects to read: per group, each needed
 * column's minipage rounded up to whole blocks, the projected-only columns
 * weighted by the chance that a group holds a matching row, 1 - (1 -
 * selectivity)^(rows per group) (rows in no particular order).
 *
 * Executor, per visible group: prefetch the predicate columns' blocks (and
 * the next group's), decode them, evaluate the quals row by row into a
 * selection vector; skip the group when nothing matched; otherwise prefetch
 * and decode the remaining needed columns and return the selected rows,
 * projected.  Columns the query does not need are never read and read as
 * NULL in the scan tuple.  With flashscan.selection_first off, every needed
 * column of every group is read before the quals run (plain FlashScan).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "access/parallel.h"
#include "access/relation.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/hashjoin.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/predicate.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

#include "flashscan.h"
#include "pax.h"
#include "pax_minipage.h"
#include "shared_scan.h"
#include "ssdkit_path.h"

bool		flashscan_enable = true;
bool		flashscan_selection_first = true;
bool		flashscan_join_filter = true;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/*
 * custom_private of the plan: two integer lists of attribute numbers, then
 * two integer lists saying, per qual, whether it may run ahead of the quals
 * before it (qual_run_ahead()) and whether it may run over a whole group
 * before the group's rows are returned (flashscan_early_flags()).
 */
enum FlashScanPrivate
{
	FS_PRIV_QUAL_ATTS,			/* columns the quals read (S) */
	FS_PRIV_PROJ_ATTS			/* other columns the query needs (P) */
};

typedef struct FlashScanState
{
	CustomScanState css;
	Relation	rel;
	Snapshot	snapshot;
	PaxDirectory *dir;
	bool	   *qual_cols;		/* S */
	bool	   *proj_cols;		/* P \ S */
	bool	   *all_cols;		/* S u P */
	int			nqual_cols;
	int			nproj_cols;
	int			nsimple;		/* "column op constant" quals, run on the arrays */
	struct SimpleQual *simple;
	ExprState  *quals;			/* the other quals, on a slot of the S columns */
	ExprState  *recheck_quals;	/* the early quals, for EvalPlanQual's rows */
	List	   *lazy_quals;		/* the quals run row by row (ps.qual), for EXPLAIN */
	int		   *qual_list;		/* S as attribute indexes */
	int		   *all_list;		/* S u P as attribute indexes */
	int			nall;
	bool		selection_first;
	int			gi;				/* current group */
	int			prefetched_gi;	/* group whose first-pass blocks went out already */
	PaxGroupEntry *group;
	PaxColumnData *cols;
	bool	   *visible;		/* rows of the group the snapshot sees */
	uint32	   *selected;		/* rows of the group that passed the quals */
	uint32		nselected;
	int64		cur_selected;	/* the one returned last: -1 before the first,
								 * nselected after the last */
	MemoryContext scan_cxt;		/* decoded columns are reused here group to group */
	BufferAccessStrategy strategy;
	/* parallel: the shared claim counter and this participant's claim */
	struct FlashScanShared *shared;
	uint64		claim_start;
	uint64		claim_end;
	bool		counted;		/* counters added to the shared ones */

	/* shared scans (shared_scan.c): groups come from the hub */
	bool		hub_eligible;
	const char *hub_why;		/* why not, for EXPLAIN */
	bool		hub_done;		/* every list registered */
	bool		hub_refused;	/* the hub was full once: groups read alone */
	struct SharedScanReg *hub_reg;
	uint64		hub_gen;		/* hub_reg's generation (it may be gone) */
	int		   *chunk_gis;		/* the next list, or groups to read alone */
	int			chunk_n;
	int			chunk_pos;
	int			claim_gi;		/* parallel: last group of the last claim */
	bool		claim_from_stream;	/* parallel: the hub's entry being read was pushed */
	bool		group_pushed;	/* the group came from the stream */
	bool		hub_pushed_all; /* the hub carries every column the scan reads */
	pg_atomic_uint64 *claim_counter;	/* parallel: after the registration */
	uint64		hub_from_stream;
	uint64		hub_alone;

	/* EXPLAIN ANALYZE */
	uint64		groups_scanned;
	uint64		groups_skipped;
	uint64		groups_invisible;
	uint64		blocks_read;
	uint64		rows_examined;
	BlockNumber table_blocks;
	struct JoinFilter *join_filter;	/* probe side of a hash join, or NULL */
	bool		join_filter_planned;	/* EXPLAIN without ANALYZE: it would be */
} FlashScanState;

/*
 * FlashScan as the probe (outer) side of a hash join: once the join's hash
 * table is built, a row whose hash lands in an empty bucket cannot match,
 * and is dropped after only its key columns were read (they join the
 * predicate columns); its other columns are not read if the group has no
 * row left, and no tuple is formed for it.  The hash value is the join's
 * own (ExecHashGetHashValue() with its outer keys, on a slot shaped like
 * our output), so the bucket is the one the join would probe.
 */
typedef struct JoinFilter
{
	HashJoinState *hj;
	int			nkeys;
	int		   *key_atts;		/* attribute index of each key column */
	int		   *key_outpos;		/* its position in our output tuple */
	TupleTableSlot *outer;		/* our output's shape, the keys filled */
	ExprContext *econtext;
	HashJoinTable bloom_of;		/* the table the bloom filter was built from */
	uint64	   *bloom;			/* JOIN_FILTER_PROBES bits set per hash value */
	uint32		bloom_mask;		/* its size in bits, less one */
	double		bloom_rows;		/* the rows the table held then */
	uint64		tested;
	uint64		removed;
	bool		off;			/* it let nearly every row through: stopped */
} JoinFilter;

/*
 * A parallel FlashScan's shared state: participants claim row numbers in
 * chunks (pax_claim_next_group(), pax_directory.c says why).
 */
typedef struct FlashScanShared
{
	pg_atomic_uint64 next_rownum;	/* first row number not yet claimed */
	uint64		chunk_rows;		/* row numbers claimed at a time */
	/* shared scans: the query's registration, for the workers to attach */
	dsm_handle	hub_list;
	uint64		hub_generation;
	/* every row, where the hub refused that registration as it entered */
	pg_atomic_uint32 hub_refused;
	pg_atomic_uint64 refused_rownum;
	/* EXPLAIN ANALYZE: every participant's counters, added at its shutdown */
	pg_atomic_uint64 groups_scanned;
	pg_atomic_uint64 groups_skipped;
	pg_atomic_uint64 groups_invisible;
	pg_atomic_uint64 rows_examined;
	pg_atomic_uint64 blocks_read;
	pg_atomic_uint64 hub_from_stream;
	pg_atomic_uint64 hub_alone;
	pg_atomic_uint64 join_filter_removed;
} FlashScanShared;

/*
 * Row numbers a participant claims at a time: at least this many, and
 * about eight groups' worth (pax_claim_chunk_rows()), so that few groups
 * straddle two chunks (such a group is read by both claimants, each
 * keeping its own rows).
 */
#define FLASHSCAN_MIN_CHUNK_ROWS	8192

/*
 * A qual of the form "column op constant" (or "constant op column"): the
 * selection pass calls the operator's function on the decoded column array
 * directly, row by row over the surviving selection, instead of building a
 * slot per row for ExecQual.
 */
typedef struct SimpleQual
{
	int			att;			/* attribute index */
	bool		var_first;		/* column is the left argument */
	Datum		constval;
	Oid			collation;
	FmgrInfo	flinfo;
} SimpleQual;

static bool simple_qual(Node *clause, Index scanrelid, SimpleQual *q);
static CustomPath *create_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target,
							   int parallel_workers);
static Plan *flashscan_plan_path(PlannerInfo *root, RelOptInfo *rel,
								 CustomPath *best_path, List *tlist,
								 List *clauses, List *custom_plans);
static Node *flashscan_create_state(CustomScan *cscan);
static void flashscan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *flashscan_exec(CustomScanState *node);
static void flashscan_end(CustomScanState *node);
static void flashscan_rescan(CustomScanState *node);
static void flashscan_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size flashscan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void flashscan_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									 void *coordinate);
static void flashscan_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
									   void *coordinate);
static void flashscan_initialize_worker(CustomScanState *node, shm_toc *toc,
										void *coordinate);
static void flashscan_shutdown(CustomScanState *node);

static const CustomPathMethods flashscan_path_methods = {
	.CustomName = "FlashScan",
	.PlanCustomPath = flashscan_plan_path,
};

static const CustomScanMethods flashscan_scan_methods = {
	.CustomName = "FlashScan",
	.CreateCustomScanState = flashscan_create_state,
};

static const CustomExecMethods flashscan_exec_methods = {
	.CustomName = "FlashScan",
	.BeginCustomScan = flashscan_begin,
	.ExecCustomScan = flashscan_exec,
	.EndCustomScan = flashscan_end,
	.ReScanCustomScan = flashscan_rescan,
	.EstimateDSMCustomScan = flashscan_estimate_dsm,
	.InitializeDSMCustomScan = flashscan_initialize_dsm,
	.ReInitializeDSMCustomScan = flashscan_reinitialize_dsm,
	.InitializeWorkerCustomScan = flashscan_initialize_worker,
	.ShutdownCustomScan = flashscan_shutdown,
	.ExplainCustomScan = flashscan_explain,
};

/* ------------------------------------------------------------------------
 * Planner
 * ------------------------------------------------------------------------
 */

/* Is this base relation a plain pax table? */
bool
flashscan_is_pax_relation(RangeTblEntry *rte)
{
	Relation	r;
	bool		result;

	if (rte->rtekind != RTE_RELATION || rte->inh || rte->tablesample != NULL ||
		rte->relkind != RELKIND_RELATION)
		return false;
	r = relation_open(rte->relid, NoLock);
	result = (r->rd_tableam == pax_table_am_routine());
	relation_close(r, NoLock);
	return result;
}

/*
 * The columns the quals (clauses: restrictions and, on a parameterized
 * path, the join clauses it enforces) read (qual_atts) and the rest of the
 * query (proj_atts) reads, as attribute numbers; false when the query needs a system column we
 * cannot produce or the whole row.
 */
static bool
needed_columns(List *target_exprs, Index relid, List *clauses, List **qual_atts,
			   List **proj_atts)
{
	Bitmapset  *qa = NULL;
	Bitmapset  *pa = NULL;
	ListCell   *lc;
	int			x;

	foreach(lc, clauses)
		pull_varattnos((Node *) ((RestrictInfo *) lfirst(lc))->clause, relid, &qa);
	pull_varattnos((Node *) target_exprs, relid, &pa);

	*qual_atts = *proj_atts = NIL;
	x = -1;
	while ((x = bms_next_member(qa, x)) >= 0)
	{
		AttrNumber	att = x + FirstLowInvalidHeapAttributeNumber;

		if (att == 0)
			return false;		/* whole-row reference: nothing to save */
		if (att < 0 && att != SelfItemPointerAttributeNumber && att != TableOidAttributeNumber)
			return false;
		if (att > 0)
			*qual_atts = lappend_int(*qual_atts, att);
	}
	x = -1;
	while ((x = bms_next_member(pa, x)) >= 0)
	{
		AttrNumber	att = x + FirstLowInvalidHeapAttributeNumber;

		if (att == 0)
			return false;
		if (att < 0 && att != SelfItemPointerAttributeNumber && att != TableOidAttributeNumber)
			return false;
		if (att > 0 && !bms_is_member(x, qa))
			*proj_atts = lappend_int(*proj_atts, att);
	}
	return true;
}

/* Blocks a group spends on the given columns, from their average widths. */
/* A column's average width: ANALYZE's statistics, else its type's guess. */
int32
flashscan_column_width(Oid relid, AttrNumber attnum, Oid typid, int32 typmod)
{
	int32		width = get_attavgwidth(relid, attnum);

	return width > 0 ? width : get_typavgwidth(typid, typmod);
}

double
flashscan_column_blocks(Oid relid, TupleDesc desc, List *atts, double rows_per_group)
{
	double		blocks = 0;
	ListCell   *lc;

	foreach(lc, atts)
	{
		Form_pg_attribute a = TupleDescAttr(desc, lfirst_int(lc) - 1);
		int32		width = flashscan_column_width(relid, a->attnum, a->atttypid, a->atttypmod);

		blocks += Max(1.0, ceil(rows_per_group * width / PAX_BLOCK_PAYLOAD));
	}
	return blocks;
}

/*
 * A FlashScan path of rel producing target (rel->reltarget, or a narrower
 * one: FlashJoin's join kernel reads only keys and ctid), NULL when the
 * query needs what FlashScan cannot produce (a whole row, a system column
 * other than ctid and tableoid).
 */
CustomPath *
flashscan_create_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target)
{
	return create_path(root, rel, target, 0);
}

/* A Parallel FlashScan of rel producing target, NULL when there is none. */
CustomPath *
flashscan_create_partial_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target)
{
	if (!rel->consider_parallel || !bms_is_empty(rel->lateral_relids))
		return NULL;
	return create_path(root, rel, target, -1);
}

/*
 * The path; a partial (parallel-aware) one when parallel_workers > 0, or
 * -1 for as many workers as the blocks it reads call for: then NULL when
 * that is none.
 */
/*
 * The share of rows that pass the quals run over a group before its rows
 * are returned (flashscan_early_flags()), which decide whether the group's
 * other columns are read; the quals run row by row decide nothing there.
 * All of them pass "selectivity" of the rows.
 */
static double
early_selectivity(PlannerInfo *root, RelOptInfo *rel, List *clauses, double selectivity)
{
	List	   *early = NIL;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst(lc);

		if (!rinfo->pseudoconstant &&
			flashscan_early_flag(root, (Node *) rinfo->clause) != FLASHSCAN_EARLY_NO)
			early = lappend(early, rinfo);
	}
	if (list_length(early) == list_length(clauses))
		return selectivity;
	return Max(selectivity, clauselist_selectivity(root, early, rel->relid, JOIN_INNER, NULL));
}

static CustomPath *
create_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target, int parallel_workers)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	Relation	r = relation_open(rte->relid, NoLock);
	TupleDesc	desc = RelationGetDescr(r);
	List	   *qual_atts,
			   *proj_atts;
	CustomPath *cpath;
	double		group_blocks,
				ngroups,
				rows_per_group,
				selectivity,
				p_hit,
				blocks,
				spc_random,
				spc_seq;
	QualCost	qcost;
	Cost		cpu_per_tuple,
				cpu_run;
	ParamPathInfo *param_info;
	List	   *clauses;

	/*
	 * A LATERAL reference (in the quals or in the target list, which then
	 * holds a PlaceHolderVar of the outer relation) makes the path
	 * parameterized by the outer relations, as a Seq Scan's is: the planner
	 * then turns those references into nestloop Params, rescans the node for
	 * each outer row and puts no Materialize over it.  The join clauses such
	 * a path enforces are quals of the scan too.
	 */
	param_info = get_baserel_parampathinfo(root, rel, rel->lateral_relids);
	clauses = rel->baserestrictinfo;
	if (param_info)
		clauses = list_concat_copy(clauses, param_info->ppi_clauses);
	if (!needed_columns(target->exprs, rel->relid, clauses, &qual_atts, &proj_atts))
	{
		relation_close(r, NoLock);
		return NULL;
	}
	group_blocks = pax_relation_group_blocks(r);
	ngroups = Max(1.0, ceil(rel->pages / group_blocks));
	rows_per_group = Max(1.0, rel->tuples / ngroups);
	selectivity = (rel->tuples > 0) ?
		Min(1.0, (param_info ? param_info->ppi_rows : rel->rows) / rel->tuples) : 1.0;
	p_hit = (qual_atts != NIL && flashscan_selection_first) ?
		1.0 - pow(1.0 - early_selectivity(root, rel, clauses, selectivity), rows_per_group) : 1.0;
	blocks = ngroups * (flashscan_column_blocks(rte->relid, desc, qual_atts, rows_per_group) +
						p_hit * flashscan_column_blocks(rte->relid, desc, proj_atts, rows_per_group));
	blocks = Min(blocks, (double) rel->pages);
	relation_close(r, NoLock);

	get_tablespace_page_costs(rel->reltablespace, &spc_random, &spc_seq);
	cost_qual_eval(&qcost, clauses, root);
	if (parallel_workers < 0)
	{
		/* every row is examined: workers by the table's size, as for a seq scan */
		parallel_workers = compute_parallel_worker(rel, rel->pages, -1,
												   max_parallel_workers_per_gather);
		if (parallel_workers <= 0)
			return NULL;
	}

	cpath = ssdkit_base_custom_path(rel, &flashscan_path_methods);
	cpath->path.pathtarget = target;
	cpath->path.param_info = param_info;
	if (param_info)
		cpath->path.rows = param_info->ppi_rows;
	cpu_per_tuple = cpu_tuple_cost + qcost.per_tuple;
	cpath->path.startup_cost = qcost.startup + target->cost.startup;
	/* blocks are read in whole minipages: sequential within, prefetched across */
	cpu_run = rel->tuples * cpu_per_tuple + cpath->path.rows * target->cost.per_tuple;
	/* a serial FlashScan may run in a worker too (a Gather's one copy) */
	cpath->path.parallel_safe = rel->consider_parallel;
	if (parallel_workers > 0)
	{
		/*
		 * As cost_seqscan(): the participants share the CPU (the leader
		 * less the more workers it serves), not the reads.
		 */
		double		divisor = parallel_workers;

		if (parallel_leader_participation && 1.0 - 0.3 * parallel_workers > 0)
			divisor += 1.0 - 0.3 * parallel_workers;
		cpu_run /= divisor;
		cpath->path.rows = clamp_row_est(cpath->path.rows / divisor);
		cpath->path.parallel_aware = true;
		cpath->path.parallel_safe = true;
		cpath->path.parallel_workers = parallel_workers;
	}
	cpath->path.total_cost = cpath->path.startup_cost + blocks * spc_seq + cpu_run;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION | CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	cpath->custom_paths = NIL;
	cpath->custom_private = list_make2(qual_atts, proj_atts);
	return cpath;
}

/* Is path a FlashScan? */
bool
flashscan_is_path(Path *path)
{
	return IsA(path, CustomPath) &&
		((CustomPath *) path)->methods == &flashscan_path_methods;
}

static void
add_flashscan_path(PlannerInfo *root, RelOptInfo *rel)
{
	CustomPath *cpath = flashscan_create_path(root, rel, rel->reltarget);

	if (cpath == NULL)
		return;
	add_path(rel, &cpath->path);

	/* Parallel FlashScan: the participants claim row numbers (pax_claim_next_group()) */
	if (rel->consider_parallel && cpath->path.param_info == NULL &&
		bms_is_empty(rel->lateral_relids))
	{
		CustomPath *partial = create_path(root, rel, rel->reltarget, -1);

		if (partial != NULL)
			add_partial_path(rel, &partial->path);
	}
}

/*
 * What a pax index fetch spends on one row beyond heap's: heap finds a
 * row's values on one page; pax reads each needed column's value from its
 * own minipage (a fixed-width value at its offset: a header and a value
 * block; a variable-width one in format 5 through its stride index: the
 * header, the index entry and its stride's values, half a stride walked on
 * average; in format 4 by copying its minipage and walking it from the
 * start to the row: half a group's values on average, each step about a
 * third of an operator call, measured on scattered fetches).  Random
 * fetches of three numeric columns of TPC-H's lineitem (8,400 rows a
 * group, format 4) took about 77 us a row against heap's few.
 * Without this the planner priced a pax index fetch as a heap one and
 * kept nested loops over index probes 6-20x slower than heap's plan.
 * The header block of each column (with its null bits and stride index)
 * is read once per group a fetch meets: it keeps those prefixes
 * (pax_reader.c), so probes that come back to a group read its value
 * blocks alone.  Each block visited costs a buffer visit (cpu_tuple_cost)
 * and, for the share of visits that miss shared_buffers, a page read
 * (fetch_miss_share()).
 * Also what a fetch that decodes a group's needed columns whole pays: their
 * minipages' blocks read in order, and every row of the group decoded.
 */
typedef struct PaxFetchCosts
{
	Cost		per_row;		/* one row fetched alone, beyond heap's price,
								 * in a group the fetch has met */
	Cost		qual_per_row;	/* of which the columns of the relation's
								 * restriction clauses, and a parameterized
								 * path's join filter (join_filter_costs()):
								 * read first, a row they drop costs no
								 * more (filtered_row_price()) */
	bool		quals_tested_first; /* every such clause is one a fetch may
									 * test before its node */
	Bitmapset  *qual_attrs;		/* those columns (pull_varattnos() offsets) */
	Cost	   *col_row;		/* per_row's part of each column, by attnum */
	double	   *col_visits;		/* the blocks it visits, by attnum */
	int			natts;			/* their last attnum */
	double		visits;			/* blocks a row fetched alone visits */
	double		qual_visits;	/* of which qual_per_row's */
	Cost		visit_miss;		/* the page-read part of each visit's price */
	Cost		per_group_met;	/* the first fetch in a group: its prefixes */
	double		prefix_bytes;	/* those prefixes' bytes in a fetch's cache */
	Cost		per_group;		/* a group's needed columns read and decoded whole */
	Cost		per_group_decode;	/* of which the decoding, beyond heap's per-row CPU */
	double		needed_blocks;	/* a group's blocks of the needed columns */
	double		spc_seq;		/* the tablespace's seq_page_cost */
	double		spc_random;		/* and random_page_cost */
	double		rows_per_group;
	double		ngroups;		/* the groups those rows make up */
	double		decode_after;	/* fetches in a row after which a fetch decodes the group */
} PaxFetchCosts;

/*
 * The share of a pax fetch's block visits that miss shared_buffers.  A row
 * fetched alone visits a block per needed column where heap visits one
 * page, and the planner's page price of an index path (Mackert-Lohman over
 * effective_cache_size) counts each page once, as if a page once read
 * stayed in memory for free.  It does while the needed columns' blocks fit
 * in shared_buffers; beyond that, a share of the visits read their block
 * again, from the OS page cache when warm: the same read a FlashScan's
 * in-order block costs, priced at seq_page_cost, so a missed visit is
 * priced as one of those and the planner weighs the two plans alike.
 * TPC-H Q9 with an index on l_partkey: 1.2 million probe rows visited 2
 * blocks each (4.1 s) where heap visited one (2.7 s) and the FlashScan hash
 * join ran in 1.8 s; priced at a buffer hit the probes looked cheaper than
 * that plan.  The share is the steady state of a fetch's visits, spread
 * over the needed blocks, not what shared_buffers holds now (after a
 * restart nothing, though a table that fits is read into it once): a
 * residency sample would price a table that fits as if every visit missed.
 */
static double
fetch_miss_share(double needed_blocks)
{
	if (needed_blocks <= NBuffers)
		return 0;
	return 1.0 - NBuffers / needed_blocks;
}

static void
pax_fetch_costs(RelOptInfo *rel, Relation r, double spc_random, double spc_seq,
				PaxFetchCosts *costs)
{
	TupleDesc	desc = RelationGetDescr(r);
	Bitmapset  *attrs = NULL;
	Bitmapset  *qual_attrs = NULL;
	ListCell   *lc;
	int			group_blocks,
				format;
	double		ngroups,
				rows_per_group;
	bool		strides;
	double		blocks = 0;
	double	   *col_visits;		/* blocks a row fetched alone visits, by attnum */
	Cost	   *col_cpu;		/* and the values it walks */
	double		met_visits = 0; /* the prefixes' blocks of a group met */
	Cost		visit;
	int			ncols = 0;
	int			att;

	pax_relation_meta(r, &group_blocks, &format);
	ngroups = Max(1.0, ceil(rel->pages / (double) group_blocks));
	rows_per_group = Max(1.0, rel->tuples / ngroups);
	strides = format >= 5;
	costs->per_row = 0;
	costs->qual_per_row = 0;
	costs->quals_tested_first = true;
	costs->per_group_met = 0;
	costs->prefix_bytes = 0;
	costs->col_row = palloc0(sizeof(Cost) * (desc->natts + 1));
	costs->natts = desc->natts;
	col_visits = palloc0(sizeof(double) * (desc->natts + 1));
	col_cpu = palloc0(sizeof(Cost) * (desc->natts + 1));
	foreach(lc, rel->baserestrictinfo)
	{
		Node	   *clause = (Node *) ((RestrictInfo *) lfirst(lc))->clause;

		pull_varattnos(clause, rel->relid, &qual_attrs);
		costs->quals_tested_first &= pax_fetch_may_test(clause);
	}
	attrs = bms_copy(qual_attrs);
	pull_varattnos((Node *) rel->reltarget->exprs, rel->relid, &attrs);
	for (att = 1; att <= desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att - 1);
		int32		width;

		if (a->attisdropped ||
			!(bms_is_member(att - FirstLowInvalidHeapAttributeNumber, attrs) ||
			  bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs)))
			continue;
		ncols++;
		if (a->attlen > 0)
		{
			col_visits[att] = 1;
			met_visits++;
			costs->prefix_bytes += PAX_PREFIX_ENTRY_BYTES;
			blocks += ceil(rows_per_group * a->attlen / (double) PAX_BLOCK_PAYLOAD);
		}
		else
		{
			width = flashscan_column_width(RelationGetRelid(r), a->attnum, a->atttypid,
										   a->atttypmod);
			blocks += ceil(rows_per_group * width / (double) PAX_BLOCK_PAYLOAD);
			if (strides)
			{
				col_visits[att] = 1 + ceil(PAX_STRIDE_ROWS * width / (double) PAX_BLOCK_PAYLOAD);
				col_cpu[att] = PAX_STRIDE_ROWS / 2 * cpu_operator_cost / 3;
				met_visits++;
				costs->prefix_bytes += PAX_PREFIX_ENTRY_BYTES +
					ceil(rows_per_group / PAX_STRIDE_ROWS) * sizeof(uint32);
			}
			else
			{
				col_visits[att] = ceil(rows_per_group * width / (double) PAX_BLOCK_PAYLOAD);
				col_cpu[att] = rows_per_group / 2 * cpu_operator_cost / 3;
			}
		}
	}
	costs->visit_miss = fetch_miss_share(blocks * ngroups) * spc_seq;
	visit = cpu_tuple_cost + costs->visit_miss;
	costs->per_group_met = met_visits * visit;
	costs->col_visits = col_visits;
	costs->visits = costs->qual_visits = 0;
	for (att = 1; att <= desc->natts; att++)
	{
		Cost		row = col_visits[att] * visit + col_cpu[att];

		costs->per_row += row;
		costs->col_row[att] = row;
		costs->visits += col_visits[att];
		if (bms_is_member(att - FirstLowInvalidHeapAttributeNumber, qual_attrs) ||
			bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, qual_attrs))
		{
			costs->qual_per_row += row;
			costs->qual_visits += col_visits[att];
		}
	}
	costs->qual_attrs = qual_attrs;
	costs->per_group_decode = rows_per_group * ncols * cpu_operator_cost;
	costs->needed_blocks = blocks;
	costs->spc_seq = spc_seq;
	costs->spc_random = spc_random;
	costs->per_group = blocks * spc_seq + rows_per_group * cpu_tuple_cost + costs->per_group_decode;
	costs->rows_per_group = rows_per_group;
	costs->ngroups = Max(1.0, rel->tuples / rows_per_group);
	/* as pax_fetch_row() decides */
	costs->decode_after = Max(2.0, strides ?
							  Min(rows_per_group, blocks * PAX_FETCH_DECODE_ROWS_PER_BLOCK) :
							  rows_per_group / PAX_FETCH_DECODE_DIVISOR);
}

/*
 * The share of the rows an index (or bitmap) path's index part gives that
 * its filter lets through, and what a row fetched alone costs beyond heap's
 * price when "pass" of them do: the filter's columns are
 * read first and the others only for rows that pass (pax_fetch.c's
 * selection first, which btree index scans and bitmap scans run, on the
 * clauses pax_fetch_may_test() allows: none where one of them is not).
 * The columns of the relation's restriction clauses (and a parameterized
 * path's join filter) stand for the filter's: those the index matches
 * exactly are not read at all, so this errs high.
 */
static double
filter_pass(Path *path, RelOptInfo *rel, Selectivity index_sel)
{
	double		out = path->param_info ? path->param_info->ppi_rows : rel->rows;

	return out / Max(index_sel * rel->tuples, 1.0);
}

static double
filtered(const PaxFetchCosts *costs, double all, double qual, double pass, bool selection_first)
{
	if (!selection_first || !costs->quals_tested_first)
		return all;
	pass = Min(Max(pass, 0.0), 1.0);
	return qual + pass * (all - qual);
}

static Cost
filtered_row_price(const PaxFetchCosts *costs, double pass, bool selection_first)
{
	return filtered(costs, costs->per_row, costs->qual_per_row, pass, selection_first);
}

static double expected_loops(PlannerInfo *root, Path *path);

/*
 * The part of a row's price (filtered_row_price()) for visits that miss
 * shared_buffers (fetch_miss_share()) that PostgreSQL's own price of the
 * path already holds: its page price, per row, reads a page from the
 * device for each page Mackert-Lohman says is not in memory yet (tuples
 * rows in all, over every run).  A few probes into a large table pay a
 * random_page_cost a row there already, and the visits of their other
 * columns cost no more than that page did; many probes that come back to
 * the same pages (TPC-H Q9's 1.2 million) pay nearly nothing there, and
 * their missing visits are all pax's to price.
 */
static Cost
miss_already_priced(PlannerInfo *root, IndexOptInfo *index, RelOptInfo *rel,
					const PaxFetchCosts *c, double tuples, double pass, bool selection_first)
{
	double		visits;
	Cost		page_per_row;

	if (c->visit_miss <= 0 || tuples <= 0)
		return 0;
	visits = filtered(c, c->visits, c->qual_visits, pass, selection_first);
	page_per_row = index_pages_fetched(tuples, rel->pages, index ? (double) index->pages : 0.0,
									   root) * c->spc_random / tuples;
	return Min(visits * c->visit_miss, page_per_row);
}

/*
 * The index clauses of a bitmap path's tree that every row it returns
 * satisfies: those of each index scan under BitmapAnds (a BitmapOr implies
 * none of them alone).
 */
static List *
bitmap_index_clauses(Path *bitmapqual)
{
	List	   *clauses = NIL;
	ListCell   *lc;

	if (IsA(bitmapqual, IndexPath))
		return list_copy(((IndexPath *) bitmapqual)->indexclauses);
	if (IsA(bitmapqual, BitmapAndPath))
		foreach(lc, ((BitmapAndPath *) bitmapqual)->bitmapquals)
			clauses = list_concat(clauses, bitmap_index_clauses(lfirst(lc)));
	return clauses;
}

/*
 * The fetch costs of a parameterized index or bitmap path: the join clauses
 * it enforces that its index does not (as the plan keeps them:
 * is_redundant_with_indexclauses(), which knows an equivalence class's
 * clause built from either side) are its filter too, tested on every row
 * the index gives, so their columns are read first as the restriction
 * clauses' are (a nested loop's probe of lineitem by l_partkey reads
 * l_suppkey of each of its 30 rows to test ps_suppkey = l_suppkey).
 */
static PaxFetchCosts
join_filter_costs(Path *path, List *indexclauses, RelOptInfo *rel, const PaxFetchCosts *costs)
{
	PaxFetchCosts c = *costs;
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	int			x = -1;

	if (path->param_info == NULL)
		return c;
	foreach(lc, path->param_info->ppi_clauses)
	{
		RestrictInfo *rinfo = lfirst(lc);

		if (is_redundant_with_indexclauses(rinfo, indexclauses))
			continue;
		pull_varattnos((Node *) rinfo->clause, rel->relid, &attrs);
		c.quals_tested_first &= pax_fetch_may_test((Node *) rinfo->clause);
	}
	/* a whole-row Var reads every column first: the restriction clauses' did */
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, costs->qual_attrs))
		return c;
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs))
	{
		c.qual_per_row = costs->per_row;
		c.qual_visits = costs->visits;
		return c;
	}
	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		int			att = x + FirstLowInvalidHeapAttributeNumber;

		if (att > 0 && att <= costs->natts && !bms_is_member(x, costs->qual_attrs))
		{
			c.qual_per_row += costs->col_row[att];
			c.qual_visits += costs->col_visits[att];
		}
	}
	return c;
}

/*
 * A bitmap heap path as pax runs it.  PostgreSQL prices it as heap: pages
 * by the heap formula, CPU per row.  Pax fetches each row of the bitmap
 * like an index fetch (pax_fetch_row(): alone, at pax_fetch_costs'
 * per_row beyond that), except that a group in which many rows match in a
 * row gets its needed columns decoded whole, once.  So: heap's price plus
 * per_row for each row (and per_group_met for each touched group) while a
 * touched group's expected matches stay below the fetch's decode threshold
 * (decode_after); above it, the index part plus every touched group
 * decoded.  The processes of a parallel bitmap scan share out TID
 * blocks, so each sees about 1/(workers + 1) of each group's rows.
 */
static bool
price_pax_bitmap_path(PlannerInfo *root, Path *path, RelOptInfo *rel,
					  const PaxFetchCosts *costs)
{
	BitmapHeapPath *bpath = (BitmapHeapPath *) path;
	double		procs = path->parallel_workers + 1;
	Cost		index_cost;
	Selectivity sel;
	double		ngroups,
				rows_per_group,
				touched,
				matches,
				price;

	cost_bitmap_tree_node(bpath->bitmapqual, &index_cost, &sel);
	sel = Min(Max(sel, 0.0), 1.0);
	ngroups = costs->ngroups;
	rows_per_group = costs->rows_per_group / procs;
	touched = ngroups * (1.0 - pow(1.0 - sel, rows_per_group));
	matches = (touched > 0) ? sel * rel->tuples / procs / touched : 0;
	if (matches >= costs->decode_after)
		price = index_cost + touched * costs->per_group;
	else
	{
		PaxFetchCosts path_costs = join_filter_costs(path,
													 bitmap_index_clauses(bpath->bitmapqual),
													 rel, costs);
		double		pass = filter_pass(path, rel, sel);

		price = path->total_cost +
			sel * rel->tuples / procs *
			(filtered_row_price(&path_costs, pass, pax_fetch_selection_first()) -
			 miss_already_priced(root, NULL, rel, &path_costs,
								 sel * rel->tuples * expected_loops(root, path), pass,
								 pax_fetch_selection_first())) +
			Min(touched, sel * rel->tuples / procs) * costs->per_group_met;
	}
	if (price <= path->total_cost)
		return false;
	path->total_cost = price;
	return true;
}

/*
 * The sequential scans, plain and parallel, back in the path lists: a
 * path whose cost was raised may have pruned them.
 */
static void
add_seqscan_paths(PlannerInfo *root, RelOptInfo *rel)
{
	add_path(rel, create_seqscan_path(root, rel, rel->lateral_relids, 0));
	if (rel->consider_parallel && rel->lateral_relids == NULL)
	{
		int			workers = compute_parallel_worker(rel, rel->pages, -1,
													  max_parallel_workers_per_gather);

		if (workers > 0)
			add_partial_path(rel, create_seqscan_path(root, rel, NULL, workers));
	}
}

static int
compare_total_cost(const ListCell *a, const ListCell *b)
{
	Cost		ca = ((Path *) lfirst(a))->total_cost;
	Cost		cb = ((Path *) lfirst(b))->total_cost;

	return (ca > cb) - (ca < cb);
}

/*
 * Can the plan being made re-run scans through EvalPlanQual (an UPDATE,
 * DELETE or FOR UPDATE/SHARE anywhere in the statement)?  EvalPlanQual
 * initializes its own copy of the plan during execution, where
 * pax_bitmap.c's ExecutorStart hook cannot turn BitmapHeapScan's block
 * prefetching off.
 */
static bool
epq_possible(PlannerInfo *root)
{
	PlannerInfo *level;

	for (level = root; level != NULL; level = level->parent_root)
	{
		if (level->parse->commandType != CMD_SELECT || level->parse->rowMarks != NIL ||
			level->parse->hasModifyingCTE)
			return true;
	}
	return root->glob->lastRowMarkId > 0;
}

/*
 * Would BitmapHeapScan's prefetching (which takes TID blocks for physical
 * blocks) name a block in a segment file the relation does not have?  md.c
 * fails such a prefetch.  TID blocks get a margin of half again for rows
 * inserted while a cached plan lives.
 */
static bool
tid_blocks_pass_segments(Relation r)
{
	uint64		next_rownum;
	double		tid_blocks;
	double		segments;

	pax_meta_counters(r, &next_rownum, NULL);
	tid_blocks = ceil((double) next_rownum / PAX_ROWS_PER_TID_BLOCK) * 1.5;
	segments = floor((double) RelationGetNumberOfBlocks(r) / RELSEG_SIZE) + 1;
	return tid_blocks > segments * RELSEG_SIZE;
}

static void
drop_bitmap_paths(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		if (IsA(lfirst(lc), BitmapHeapPath))
			rel->pathlist = foreach_delete_current(rel->pathlist, lc);
	foreach(lc, rel->partial_pathlist)
		if (IsA(lfirst(lc), BitmapHeapPath))
			rel->partial_pathlist = foreach_delete_current(rel->partial_pathlist, lc);
}

/*
 * Reprice the bitmap heap paths of a pax relation.  They were added (and
 * compared) at the heap price, so a path they pushed out of the lists (an
 * index scan, a parallel seq scan) is gone by now: when a price rose, the
 * plain paths are generated again with bitmap paths disabled, which keeps
 * those from pruning anything a second time, and the lists are sorted again
 * (the cheapest partial path must come first for Gather).
 */
static void
price_pax_bitmap_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	r;
	PaxFetchCosts costs;
	double		spc_random,
				spc_seq;
	bool		raised = false;
	bool		any = false;
	bool		unsafe;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		any |= IsA(lfirst(lc), BitmapHeapPath);
	foreach(lc, rel->partial_pathlist)
		any |= IsA(lfirst(lc), BitmapHeapPath);
	if (!any)
		return;

	r = relation_open(rte->relid, NoLock);
	get_tablespace_page_costs(rel->reltablespace, &spc_random, &spc_seq);
	pax_fetch_costs(rel, r, spc_random, spc_seq, &costs);
	unsafe = epq_possible(root) && tid_blocks_pass_segments(r);
	relation_close(r, NoLock);
	if (unsafe)
	{
		/* no bitmap scan at all: see epq_possible() */
		drop_bitmap_paths(rel);
		raised = true;
	}
	foreach(lc, rel->pathlist)
		if (IsA(lfirst(lc), BitmapHeapPath))
			raised |= price_pax_bitmap_path(root, lfirst(lc), rel, &costs);
	foreach(lc, rel->partial_pathlist)
		if (IsA(lfirst(lc), BitmapHeapPath))
			raised |= price_pax_bitmap_path(root, lfirst(lc), rel, &costs);
	if (!raised)
		return;

	add_seqscan_paths(root, rel);
	{
		bool		save = enable_bitmapscan;

		enable_bitmapscan = false;
		PG_TRY();
		{
			create_index_paths(root, rel);
		}
		PG_FINALLY();
		{
			enable_bitmapscan = save;
		}
		PG_END_TRY();
	}
	create_tidscan_paths(root, rel);
	if (unsafe)
	{
		/* the disabled ones create_index_paths made just now */
		drop_bitmap_paths(rel);
		/* with scans disabled those may have pruned everything else */
		add_path(rel, create_seqscan_path(root, rel, rel->lateral_relids, 0));
	}
	list_sort(rel->pathlist, compare_total_cost);
	list_sort(rel->partial_pathlist, compare_total_cost);
}

/*
 * How many times a parameterized path is expected to run: the fewest rows
 * of the base relations it takes parameters from, as PostgreSQL's index
 * costing assumes (1 when it takes none).
 */
static double
expected_loops(PlannerInfo *root, Path *path)
{
	Relids		outer = PATH_REQ_OUTER(path);
	double		loops = 0;
	int			relid = -1;

	while ((relid = bms_next_member(outer, relid)) >= 0)
	{
		RelOptInfo *orel;

		if (relid >= root->simple_rel_array_size)
			continue;
		orel = root->simple_rel_array[relid];
		if (orel == NULL || IS_DUMMY_REL(orel) || orel->rows <= 0)
			continue;
		if (loops == 0 || orel->rows < loops)
			loops = orel->rows;
	}
	return Max(loops, 1.0);
}

/*
 * The correlation of an index path's order with the table's, as its access
 * method's cost estimator reports it (btree: its first column's, from
 * ANALYZE); 0 when it reports none.
 */
static double
index_correlation(PlannerInfo *root, IndexPath *ip, double loops)
{
	amcostestimate_function estimate = (amcostestimate_function) ip->indexinfo->amcostestimate;
	Cost		startup,
				total;
	Selectivity sel;
	double		correlation = 0,
				pages;

	if (estimate == NULL)
		return 0;
	estimate(root, ip, loops, &startup, &total, &sel, &correlation, &pages);
	correlation = fabs(correlation);
	return (correlation > 0) ? Min(correlation, 1.0) : 0;	/* (NaN: none) */
}

/*
 * What the fetches of one run of an index scan pay beyond heap's, in each
 * of its processes (a parallel scan's workers share out the rows, and each
 * has its own fetch): per_row for each row, and each group's prefixes
 * twice (a group met once is only remembered; the second meeting copies
 * them) for all the runs of the scan, where the fetch's prefix cache holds
 * them all; the groups not held pay them at every row.  Rows land in groups
 * as if drawn at random.
 */
static Cost
index_fetch_price(PlannerInfo *root, IndexPath *ip, RelOptInfo *rel, const PaxFetchCosts *costs)
{
	double		procs = ip->path.parallel_workers + 1;
	double		rows = ip->indexselectivity * rel->tuples / procs;
	double		loops = expected_loops(root, &ip->path);
	double		ngroups = costs->ngroups;
	double		met = ngroups * (1.0 - exp(-rows * loops / ngroups));
	double		held = (costs->prefix_bytes > 0) ?
		Min(1.0, pax_prefix_cache_bytes() / (ngroups * costs->prefix_bytes)) : 1.0;
	double		prefixes = held * Min(2 * met / loops, rows) + (1.0 - held) * rows;
	bool		selection_first = pax_fetch_selection_first() &&
		ip->indexinfo->relam == BTREE_AM_OID;
	PaxFetchCosts path_costs = join_filter_costs(&ip->path, ip->indexclauses, rel, costs);
	double		pass = filter_pass(&ip->path, rel, ip->indexselectivity);
	Cost		scattered = rows * (filtered_row_price(&path_costs, pass, selection_first) -
									miss_already_priced(root, ip->indexinfo, rel, &path_costs,
														rows * procs * loops, pass,
														selection_first)) +
		prefixes * costs->per_group_met;
	double		correlation;
	double		in_order_groups;
	Cost		in_order;

	/* (a probe's few rows: no order to speak of, nor an estimator to call again) */
	if (rows < costs->decode_after)
		return scattered;
	correlation = index_correlation(root, ip, loops);
	if (correlation == 0)
		return scattered;

	/*
	 * Rows met in the table's order, as an index on a column the table is
	 * loaded by gives them: a run in each group they touch.  A short run is
	 * fetched row by row.  A long one has its group's needed columns
	 * decoded whole, which costs no more than heap's price already says for
	 * those rows (its CPU per row, its pages in order): on TPC-H's
	 * lineitem, 2 of 16 columns of every row through its primary key ran at
	 * 0.22 us a row against heap's 0.27, and 6,001,215 rows at the same
	 * time as heap's (1.0 s, warm).  What heap's price gets wrong is the
	 * pages: it counts every block of each group in order, the fetch reads
	 * its needed minipages' (a third of a GroupAggregate's cost over
	 * lineitem by its key, which then lost to a spilling hash aggregate
	 * that ran 1.5x slower).  The workers of a parallel index scan take the
	 * index's leaf pages in turn, so each meets nearly every group of the
	 * range, with 1/procs of its rows.  PostgreSQL blends heap's page
	 * prices between scattered and in order by the correlation's square;
	 * so does this, toward the cheaper.
	 */
	in_order_groups = Min(ngroups, ceil(rows * procs / costs->rows_per_group) + 1);
	if (rows / in_order_groups < costs->decode_after)
		in_order = rows * costs->per_row + in_order_groups * costs->per_group_met;
	else
		in_order = in_order_groups * costs->per_group_met -
			Min(ip->indexselectivity, 1.0) / procs *
			Max(rel->pages - ngroups * costs->needed_blocks, 0.0) * costs->spc_seq;
	if (in_order >= scattered)
		return scattered;
	return scattered + correlation * correlation * (in_order - scattered);
}

/*
 * Index scans of a pax table (not index-only ones) pay index_fetch_price()
 * per run.  Paths the cheaper-looking index paths pruned come back: the
 * sequential scan, plain and parallel.
 */
static void
price_pax_index_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	r;
	PaxFetchCosts costs;
	double		spc_random,
				spc_seq;
	bool		raised = false;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		raised |= IsA(lfirst(lc), IndexPath) &&
			((Path *) lfirst(lc))->pathtype == T_IndexScan;
	foreach(lc, rel->partial_pathlist)
		raised |= IsA(lfirst(lc), IndexPath) &&
			((Path *) lfirst(lc))->pathtype == T_IndexScan;
	if (!raised)
		return;
	r = relation_open(rte->relid, NoLock);
	get_tablespace_page_costs(rel->reltablespace, &spc_random, &spc_seq);
	pax_fetch_costs(rel, r, spc_random, spc_seq, &costs);
	relation_close(r, NoLock);

	foreach(lc, rel->pathlist)
	{
		IndexPath  *ip = lfirst(lc);

		if (IsA(ip, IndexPath) && ip->path.pathtype == T_IndexScan)
			ip->path.total_cost += index_fetch_price(root, ip, rel, &costs);
	}
	foreach(lc, rel->partial_pathlist)
	{
		IndexPath  *ip = lfirst(lc);

		if (IsA(ip, IndexPath) && ip->path.pathtype == T_IndexScan)
			ip->path.total_cost += index_fetch_price(root, ip, rel, &costs);
	}
	add_seqscan_paths(root, rel);
	list_sort(rel->pathlist, compare_total_cost);
	list_sort(rel->partial_pathlist, compare_total_cost);
}

static void
flashscan_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						   RangeTblEntry *rte)
{
	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if ((rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		!flashscan_is_pax_relation(rte))
		return;
	price_pax_bitmap_paths(root, rel, rte);
	price_pax_index_paths(root, rel, rte);
	if (flashscan_enable && rel->reloptkind == RELOPT_BASEREL)
		add_flashscan_path(root, rel);
}

/*
 * Which "column op constant" quals may the executor run on the column
 * arrays ahead of the quals the plan puts before them (1 in the list, one
 * entry per clause of custom_exprs, in the plan's order)?
 *
 * - None when the quals have different security levels: a row-level
 *   security policy's or a security-barrier view's quals must run before a
 *   leaky qual of the query sees a row (the planner has put them first).
 * - Otherwise one that costs less than every qual it would pass.  The
 *   planner orders quals by cost (order_qual_clauses()), so that a cheap
 *   qual spares an expensive one the rows it rejects; running an
 *   expensive operator first would undo that, and a qual written to guard
 *   another ("x <> 0 AND f(x)", with f costly) would no longer guard it
 *   (SQL promises no order, but heap keeps the planner's).  Quals of equal
 *   cost stay in the order they were written, as heap runs them: "a >= b
 *   AND t LIKE 'abc\'" must not raise LIKE's error on rows the first qual
 *   rejects, nor "f(a) AND t = 'x'" skip an error f raises.
 */
static List *
qual_run_ahead(PlannerInfo *root, List *clauses, Index scanrelid)
{
	List	   *flags = NIL;
	ListCell   *lc;
	bool		one_level = true;
	Cost		cheapest_passed = -1;	/* of the quals left in place */

	foreach(lc, clauses)
		if (((RestrictInfo *) lfirst(lc))->security_level !=
			((RestrictInfo *) linitial(clauses))->security_level)
			one_level = false;
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = (RestrictInfo *) lfirst(lc);
		QualCost	cost;
		SimpleQual	q;
		bool		ahead;

		/* as extract_actual_clauses() leaves them out of custom_exprs */
		if (rinfo->pseudoconstant)
			continue;
		cost_qual_eval_node(&cost, (Node *) rinfo->clause, root);
		ahead = one_level && simple_qual((Node *) rinfo->clause, scanrelid, &q) &&
			(cheapest_passed < 0 || cost.per_tuple < cheapest_passed);
		if (!ahead && (cheapest_passed < 0 || cost.per_tuple < cheapest_passed))
			cheapest_passed = cost.per_tuple;
		flags = lappend_int(flags, ahead ? 1 : 0);
	}
	return flags;
}

static Plan *
flashscan_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	/* the quals run inside the node, before the other columns are read */
	cscan->scan.plan.qual = NIL;
	cscan->custom_exprs = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_private = lappend(list_copy(best_path->custom_private),
									qual_run_ahead(root, clauses, rel->relid));
	cscan->custom_private = lappend(cscan->custom_private,
									flashscan_early_flags(root, cscan->custom_exprs));
	cscan->methods = &flashscan_scan_methods;
	return &cscan->scan.plan;
}

/* ------------------------------------------------------------------------
 * Executor
 * ------------------------------------------------------------------------
 */

static Node *
flashscan_create_state(CustomScan *cscan)
{
	FlashScanState *fs = palloc0(sizeof(FlashScanState));

	NodeSetTag(fs, T_CustomScanState);
	fs->css.flags = cscan->flags;
	fs->css.methods = &flashscan_exec_methods;
	return (Node *) fs;
}

static void
flashscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	FlashScanState *fs = (FlashScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc	desc;
	ListCell   *lc;
	int			natts,
				i;
	MemoryContext old;

	fs->rel = node->ss.ss_currentRelation;
	desc = RelationGetDescr(fs->rel);
	natts = Max(desc->natts, 1);
	fs->snapshot = estate->es_snapshot;
	if (IsMVCCSnapshot(fs->snapshot))
		PredicateLockRelation(fs->rel, fs->snapshot);
	fs->selection_first = flashscan_selection_first;
	fs->scan_cxt = AllocSetContextCreate(estate->es_query_cxt, "FlashScan",
										 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(fs->scan_cxt);
	fs->qual_cols = palloc0(sizeof(bool) * natts);
	fs->proj_cols = palloc0(sizeof(bool) * natts);
	fs->all_cols = palloc0(sizeof(bool) * natts);
	foreach(lc, (List *) linitial(cscan->custom_private))
	{
		fs->qual_cols[lfirst_int(lc) - 1] = fs->all_cols[lfirst_int(lc) - 1] = true;
		fs->nqual_cols++;
	}
	foreach(lc, (List *) lsecond(cscan->custom_private))
	{
		fs->proj_cols[lfirst_int(lc) - 1] = fs->all_cols[lfirst_int(lc) - 1] = true;
		fs->nproj_cols++;
	}
	fs->cols = palloc0(sizeof(PaxColumnData) * natts);
	fs->selected = palloc(sizeof(uint32) * PAX_MAX_GROUP_ROWS);
	fs->visible = palloc(sizeof(bool) * PAX_MAX_GROUP_ROWS);
	MemoryContextSwitchTo(old);

	{
		List	   *residual = NIL,
				   *early = NIL,
				   *lazy = NIL;
		List	   *ahead = (List *) lthird(cscan->custom_private);
		List	   *early_ok = (List *) lfourth(cscan->custom_private);
		ParamListInfo params = estate->es_param_list_info;
		bool		params_fetched = params != NULL &&
			(params->paramFetch != NULL || params->paramCompile != NULL);
		int			i = 0;

		/*
		 * Quals safe to run early (flashscan_early_flags()) run over the group
		 * before its rows are returned: simple ones first, on the column
		 * arrays (the leading ones, and those the planner let run ahead of
		 * the others, qual_run_ahead()), then the others on a slot of the
		 * predicate columns.  From the first qual that is not safe on, they
		 * run row by row as ExecScan's qual, when the row is asked for, as
		 * on heap.
		 */
		fs->simple = palloc(sizeof(SimpleQual) * Max(list_length(cscan->custom_exprs), 1));
		foreach(lc, cscan->custom_exprs)
		{
			Node	   *qual = lfirst(lc);
			int			flag = list_nth_int(early_ok, i);

			if (lazy != NIL || flag == FLASHSCAN_EARLY_NO ||
				(flag == FLASHSCAN_EARLY_UNLESS_FETCHED && params_fetched))
				lazy = lappend(lazy, qual);
			else if ((residual != NIL && !list_nth_int(ahead, i)) ||
					 !simple_qual(qual, cscan->scan.scanrelid, &fs->simple[fs->nsimple]))
				residual = lappend(residual, qual);
			else
				fs->nsimple++;
			if (lazy == NIL)
				early = lappend(early, qual);
			i++;
		}
		fs->quals = ExecInitQual(residual, &node->ss.ps);
		/* EvalPlanQual's rows: the early quals here, the lazy ones in ExecScan */
		fs->recheck_quals = ExecInitQual(early, &node->ss.ps);
		node->ss.ps.qual = ExecInitQual(lazy, &node->ss.ps);
		fs->lazy_quals = lazy;
	}
	fs->qual_list = palloc(sizeof(int) * natts);
	fs->all_list = palloc(sizeof(int) * natts);
	{
		int			nq = 0,
					att;

		for (att = 0; att < desc->natts; att++)
		{
			if (fs->qual_cols[att])
				fs->qual_list[nq++] = att;
			if (fs->all_cols[att])
				fs->all_list[fs->nall++] = att;
		}
	}
	fs->table_blocks = RelationGetNumberOfBlocks(fs->rel);
	if (fs->table_blocks > (BlockNumber) (NBuffers / 4))
		fs->strategy = GetAccessStrategy(BAS_BULKREAD);
	/* a scroll cursor goes back in group order: shared scans go forward only */
	fs->hub_eligible = shared_scan_available(fs->rel, &fs->hub_why);
	fs->hub_pushed_all = true;
	for (i = SHARED_SCAN_MAX_COLS; i < desc->natts; i++)
		if (fs->all_cols[i])
			fs->hub_pushed_all = false;
	if (fs->hub_eligible && (eflags & EXEC_FLAG_BACKWARD))
	{
		fs->hub_eligible = false;
		fs->hub_why = "scrollable cursor";
	}
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	pax_flush_relation(fs->rel);
	fs->dir = pax_read_directory(fs->rel, fs->scan_cxt);
	fs->chunk_gis = MemoryContextAlloc(fs->scan_cxt, sizeof(int) * Max(fs->dir->ngroups, 1));
	fs->claim_gi = -1;
	fs->gi = -1;
	fs->prefetched_gi = -1;
	fs->cur_selected = -1;
	/* pg_stat_*_tables.seq_scan: FlashScan is the table's sequential scan */
	pgstat_count_heap_scan(fs->rel);
}

/* Is clause "column op constant" on our relation?  Then fill *q. */
static bool
simple_qual(Node *clause, Index scanrelid, SimpleQual *q)
{
	OpExpr	   *op;
	Node	   *l,
			   *r;
	Var		   *var;
	Const	   *con;

	if (!IsA(clause, OpExpr))
		return false;
	op = (OpExpr *) clause;
	if (list_length(op->args) != 2 || op->opresulttype != BOOLOID || op->opretset)
		return false;
	l = linitial(op->args);
	r = lsecond(op->args);
	q->var_first = IsA(l, Var);
	var = (Var *) (q->var_first ? l : r);
	con = (Const *) (q->var_first ? r : l);
	if (!IsA(var, Var) || !IsA(con, Const) || con->constisnull ||
		var->varno != scanrelid || var->varattno <= 0 || var->varlevelsup != 0)
		return false;
	if (!func_strict(op->opfuncid))
		return false;
	q->att = var->varattno - 1;
	q->constval = con->constvalue;
	q->collation = op->inputcollid;
	fmgr_info(op->opfuncid, &q->flinfo);
	return true;
}

/*
 * Does the operator of q hold for a non-null column value?  A strict
 * operator may still return NULL (a user-defined one, or array and record
 * comparisons meeting NULL elements): that is "not true", as in a WHERE
 * clause.
 */
static bool
simple_qual_true(SimpleQual *q, Datum value)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, &q->flinfo, 2, q->collation, NULL, NULL);
	fcinfo->args[0].value = q->var_first ? value : q->constval;
	fcinfo->args[1].value = q->var_first ? q->constval : value;
	fcinfo->args[0].isnull = fcinfo->args[1].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	return !fcinfo->isnull && DatumGetBool(result);
}

/*
 * Fill the scan slot with row ri of the current group: the n columns of
 * list (the slot's other columns stay NULL from the group's start).
 */
static TupleTableSlot *
store_scan_row(FlashScanState *fs, uint32 ri, const int *list, int n)
{
	TupleTableSlot *slot = fs->css.ss.ss_ScanTupleSlot;
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < n; i++)
	{
		int			att = list[i];

		slot->tts_values[att] = fs->cols[att].values[ri];
		slot->tts_isnull[att] = fs->cols[att].isnull[ri];
	}
	ExecStoreVirtualTuple(slot);
	pax_rownum_to_tid(fs->group->first_rownum + ri, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(fs->rel);
	return slot;
}

/* The directory's groups with rows, into gis; how many. */
static int
nonempty_groups(PaxDirectory *dir, int *gis)
{
	int			n = 0,
				gi;

	for (gi = 0; gi < dir->ngroups; gi++)
		if (!(dir->groups[gi]->flags & PAX_GROUP_EMPTY))
			gis[n++] = gi;
	return n;
}

/*
 * Shared scans: the next group, in the order the hub delivers them; false
 * at the end.  A serial scan registers every group of its directory; a
 * parallel query registers once, its leader at the start
 * (hub_register_query()), and every participant takes groups from that
 * registration: the rows of the leader's group, found in its own
 * directory (which a VACUUM may have merged since), so that each row goes
 * to one participant.  Rows past the leader's directory, and all of them
 * when the hub is full, are claimed in chunks and read alone.
 */
static bool
hub_next_group(FlashScanState *fs)
{
	for (;;)
	{
		bool		from_stream;
		uint64		first_rownum;
		uint32		nrows;
		int			gi;

		/* parallel: the groups holding the rest of the rows last taken */
		if (fs->shared != NULL && fs->hub_reg != NULL &&
			fs->claim_gi + 1 < fs->dir->ngroups &&
			fs->dir->groups[fs->claim_gi + 1]->first_rownum < fs->claim_end)
		{
			fs->gi = ++fs->claim_gi;
			/* (the leader's group, unless a VACUUM merged groups since) */
			fs->group_pushed = fs->claim_from_stream &&
				fs->dir->groups[fs->gi]->first_rownum == fs->claim_start &&
				fs->dir->groups[fs->gi]->first_rownum +
				fs->dir->groups[fs->gi]->nrows == fs->claim_end;
			if (fs->claim_from_stream)
				fs->hub_from_stream++;
			else
				fs->hub_alone++;
			return true;
		}
		/* a parallel worker joins its leader's registration */
		if (fs->shared != NULL && fs->hub_reg == NULL && !fs->hub_done)
		{
			fs->hub_done = true;
			if (IsParallelWorker() && fs->shared->hub_list != DSM_HANDLE_INVALID)
				fs->hub_reg = shared_scan_attach(fs->shared->hub_list,
												 fs->shared->hub_generation);
			if (fs->hub_reg != NULL)
			{
				fs->hub_gen = fs->hub_reg->generation;
				fs->hub_done = false;
			}
		}
		if (fs->hub_reg != NULL)
		{
			gi = shared_scan_next(fs->hub_reg, &from_stream, &first_rownum, &nrows);
			if (gi >= 0 && fs->shared == NULL)
			{
				fs->gi = gi;
				fs->group_pushed = from_stream;
				if (from_stream)
					fs->hub_from_stream++;
				else
					fs->hub_alone++;
				return true;
			}
			if (gi >= 0)
			{
				fs->claim_start = first_rownum;
				fs->claim_end = first_rownum + nrows;
				fs->claim_gi = pax_first_group_ending_after(fs->dir, first_rownum) - 1;
				fs->claim_from_stream = from_stream;
				continue;
			}
			/* used up, gone, or refused: the rest is claimed from a counter */
			if (shared_scan_refused(fs->hub_reg))
			{
				fs->hub_refused = true;
				/* (before the registration can go: see below) */
				if (fs->shared != NULL)
					pg_atomic_write_u32(&fs->shared->hub_refused, 1);
			}
			shared_scan_unregister(fs->hub_reg, fs->hub_gen);
			fs->hub_reg = NULL;
			fs->hub_done = true;
			fs->claim_start = fs->claim_end = 0;
			fs->claim_gi = -1;
		}
		if (fs->shared != NULL)
		{
			/*
			 * Rows past the registered list, or every row if the hub refused
			 * the list as it was to enter: then no group was taken from it.
			 * Whoever saw the refusal said so before the registration could
			 * go, and a participant comes here only after the registration
			 * ended or could not be attached (the DSM and hub locks order
			 * the flag before that).
			 */
			if (fs->claim_counter == NULL)
			{
				pg_memory_barrier();
				fs->claim_counter = pg_atomic_read_u32(&fs->shared->hub_refused) ?
					&fs->shared->refused_rownum : &fs->shared->next_rownum;
			}
			if (!pax_claim_next_group(fs->dir, fs->claim_counter,
									  fs->shared->chunk_rows, &fs->claim_start,
									  &fs->claim_end, &fs->gi))
				return false;
			fs->group_pushed = false;
			fs->hub_alone++;
			return true;
		}
		if (fs->chunk_pos < fs->chunk_n)
		{
			fs->gi = fs->chunk_gis[fs->chunk_pos++];
			fs->group_pushed = false;
			fs->hub_alone++;
			return true;
		}
		if (fs->hub_done)
		{
			fs->gi = fs->dir->ngroups;
			return false;
		}
		fs->hub_done = true;
		fs->chunk_n = nonempty_groups(fs->dir, fs->chunk_gis);
		fs->chunk_pos = 0;
		if (fs->chunk_n == 0)
			continue;
		fs->hub_reg = shared_scan_register(fs->rel, fs->dir, fs->chunk_gis, fs->chunk_n,
										   fs->all_cols, RelationGetDescr(fs->rel)->natts,
										   fs->strategy != NULL, 1);
		if (fs->hub_reg != NULL)
		{
			fs->hub_gen = fs->hub_reg->generation;
			fs->chunk_n = 0;	/* the registration has the list now */
		}
		else
			fs->hub_refused = true;
	}
}

/*
 * A parallel query's one registration, made by its leader as the query
 * (re)starts, for its workers to attach: rows past the leader's directory
 * are left to the claim counter.  If the hub is full, every row is.
 */
static void
hub_register_query(FlashScanState *fs, int participants)
{
	FlashScanShared *sh = fs->shared;
	int			n;

	sh->hub_list = DSM_HANDLE_INVALID;
	sh->hub_generation = 0;
	pg_atomic_write_u64(&sh->next_rownum, 0);
	pg_atomic_write_u64(&sh->refused_rownum, 0);
	pg_atomic_write_u32(&sh->hub_refused, 0);
	fs->claim_counter = NULL;
	fs->hub_done = true;
	if (!fs->hub_eligible)
		return;
	n = nonempty_groups(fs->dir, fs->chunk_gis);
	if (n == 0)
		return;
	fs->hub_reg = shared_scan_register(fs->rel, fs->dir, fs->chunk_gis, n, fs->all_cols,
									   RelationGetDescr(fs->rel)->natts,
									   fs->strategy != NULL, participants);
	if (fs->hub_reg == NULL)
	{
		fs->hub_refused = true;
		return;
	}
	fs->hub_done = false;
	fs->hub_gen = fs->hub_reg->generation;
	sh->hub_list = shared_scan_handle(fs->hub_reg);
	sh->hub_generation = fs->hub_gen;
	pg_atomic_write_u64(&sh->next_rownum, pax_directory_end(fs->dir));
}

/* Leave the hub: at the end, on rescan, and when the plan shuts down. */
static void
hub_leave(FlashScanState *fs)
{
	if (fs->hub_reg != NULL)
		shared_scan_unregister(fs->hub_reg, fs->hub_gen);
	fs->hub_reg = NULL;
	fs->hub_done = false;
	fs->chunk_n = fs->chunk_pos = 0;
	fs->claim_gi = -1;
}

/*
 * Past this many rows, a join filter that let through more than
 * JOIN_FILTER_KEEP_PASS_RATE of them stops: the join hashes every row it
 * passes a second time.
 */
#define JOIN_FILTER_TRIAL_ROWS 65536
#define JOIN_FILTER_KEEP_PASS_RATE 0.9

/*
 * A bucket is empty for few keys when the table holds about as many rows
 * as it has buckets (PostgreSQL sizes it so), so each participant builds,
 * the first time it meets the built table, a bloom filter of the hash
 * values stored in it: JOIN_FILTER_BITS bits a row (at most
 * JOIN_FILTER_MAX_BYTES), JOIN_FILTER_PROBES bits a value, about 0.5%
 * false positives at full size.  One pass over the table's rows.  (Not
 * PostgreSQL's lib/bloomfilter.h: it allocates at least 1 MB a filter and
 * hashes each element's bytes again, and this one is rebuilt at every
 * rescan, often over a few rows; the join's hash value is already a hash.)
 */
#define JOIN_FILTER_BITS 16
#define JOIN_FILTER_PROBES 3
#define JOIN_FILTER_MAX_BYTES (8 * 1024 * 1024)

static inline uint32
bloom_mix(uint32 h, uint32 seed)
{
	h ^= seed;
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

static const uint32 bloom_seeds[JOIN_FILTER_PROBES] = {0x9e3779b9, 0x7f4a7c15, 0xf39cc060};

static inline void
bloom_add(JoinFilter *jf, uint32 hashvalue)
{
	int			i;

	for (i = 0; i < JOIN_FILTER_PROBES; i++)
	{
		uint32		bit = bloom_mix(hashvalue, bloom_seeds[i]) & jf->bloom_mask;

		jf->bloom[bit >> 6] |= UINT64CONST(1) << (bit & 63);
	}
}

static inline bool
bloom_may_hold(JoinFilter *jf, uint32 hashvalue)
{
	int			i;

	for (i = 0; i < JOIN_FILTER_PROBES; i++)
	{
		uint32		bit = bloom_mix(hashvalue, bloom_seeds[i]) & jf->bloom_mask;

		if (!(jf->bloom[bit >> 6] & (UINT64CONST(1) << (bit & 63))))
			return false;
	}
	return true;
}

static void
build_bloom(FlashScanState *fs, JoinFilter *jf, HashJoinTable ht)
{
	uint64		bits = 64;
	int			b;

	while (bits < (uint64) Max(ht->totalTuples, 1.0) * JOIN_FILTER_BITS &&
		   bits < (uint64) JOIN_FILTER_MAX_BYTES * 8)
		bits <<= 1;
	if (jf->bloom != NULL)
		pfree(jf->bloom);
	jf->bloom = MemoryContextAllocZero(fs->scan_cxt, bits / 8);
	jf->bloom_mask = (uint32) (bits - 1);
	for (b = 0; b < ht->nbuckets; b++)
	{
		if ((b & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (ht->parallel_state != NULL)
		{
			dsa_pointer p = dsa_pointer_atomic_read(&ht->buckets.shared[b]);

			while (DsaPointerIsValid(p))
			{
				HashJoinTuple t = (HashJoinTuple) dsa_get_address(ht->area, p);

				bloom_add(jf, t->hashvalue);
				p = t->next.shared;
			}
		}
		else
		{
			HashJoinTuple t;

			for (t = ht->buckets.unshared[b]; t != NULL; t = t->next.unshared)
				bloom_add(jf, t->hashvalue);
		}
	}
	jf->bloom_of = ht;
}

/*
 * Narrow the selection to rows whose join keys hash to a bucket of the
 * hash table that holds something, by the table's bloom filter.  Nothing is dropped until the table is
 * built (the join asks for its first outer row before it builds), nor
 * while rows of other batches are in play (their buckets are in files),
 * nor for a key in a skew bucket.
 */
static void
join_filter_rows(FlashScanState *fs)
{
	JoinFilter *jf = fs->join_filter;
	HashJoinTable ht = jf->hj->hj_HashTable;
	TupleTableSlot *slot = jf->outer;
	uint32		keep = 0,
				j;

	if (jf->off || ht == NULL || ht->nbatch != 1)
		return;
	if (ht->parallel_state != NULL ? (ht->curbatch != 0 || ht->buckets.shared == NULL) :
		ht->buckets.unshared == NULL)
		return;
	/* (reset at each rescan: one that rebuilt the table may reuse its address) */
	if (jf->bloom_of != ht || jf->bloom_rows != ht->totalTuples)
	{
		build_bloom(fs, jf, ht);
		jf->bloom_rows = ht->totalTuples;
	}
	jf->econtext->ecxt_outertuple = slot;
	for (j = 0; j < fs->nselected; j++)
	{
		uint32		r = fs->selected[j];
		uint32		hashvalue;
		int			bucketno,
					batchno,
					k;
		bool		empty;

		ExecClearTuple(slot);
		for (k = 0; k < jf->nkeys; k++)
		{
			slot->tts_values[jf->key_outpos[k]] = fs->cols[jf->key_atts[k]].values[r];
			slot->tts_isnull[jf->key_outpos[k]] = fs->cols[jf->key_atts[k]].isnull[r];
		}
		ExecStoreVirtualTuple(slot);
		ResetExprContext(jf->econtext);
		/* a null key that cannot match is dropped, as the join drops it */
		if (!ExecHashGetHashValue(ht, jf->econtext, jf->hj->hj_OuterHashKeys, true, false,
								  &hashvalue))
			empty = true;
		else if (ht->skewEnabled &&
				 ExecHashGetSkewBucket(ht, hashvalue) != INVALID_SKEW_BUCKET_NO)
			empty = false;
		else
		{
			ExecHashGetBucketAndBatch(ht, hashvalue, &bucketno, &batchno);
			empty = (ht->parallel_state != NULL ?
					 !DsaPointerIsValid(dsa_pointer_atomic_read(&ht->buckets.shared[bucketno])) :
					 ht->buckets.unshared[bucketno] == NULL) ||
				!bloom_may_hold(jf, hashvalue);
		}
		if (!empty)
			fs->selected[keep++] = r;
	}
	jf->tested += fs->nselected;
	jf->removed += fs->nselected - keep;
	fs->nselected = keep;
	if (jf->tested >= JOIN_FILTER_TRIAL_ROWS &&
		jf->removed < (1.0 - JOIN_FILTER_KEEP_PASS_RATE) * jf->tested)
		jf->off = true;
}

/*
 * Can the FlashScan under a hash join's outer side drop rows by the join's
 * hash table?  An inner, semi or right join (rows without a match in the
 * table are not output), whose hash keys are plain output columns of the
 * scan that it reads.  Fills key_atts (the table's columns, from 0) and
 * key_outpos (their places in the scan's output).
 */
static bool
join_filter_keys(PlanState *scan, HashJoinState *hj, int *key_atts, int *key_outpos)
{
	FlashScanState *fs = (FlashScanState *) scan;
	CustomScan *cscan;
	HashJoin   *plan = (HashJoin *) hj->js.ps.plan;
	TupleDesc	desc;
	ListCell   *lc;
	int			k = 0;

	if (scan == NULL || !IsA(scan, CustomScanState) ||
		((CustomScanState *) scan)->methods != &flashscan_exec_methods ||
		!flashscan_join_filter || fs->join_filter != NULL ||
		scan->qual != NULL ||	/* rows must meet the lazy quals first */
		(hj->js.jointype != JOIN_INNER && hj->js.jointype != JOIN_SEMI &&
		 hj->js.jointype != JOIN_RIGHT) ||
		plan->hashkeys == NIL || scan->ps_ResultTupleSlot == NULL)
		return false;
	cscan = (CustomScan *) scan->plan;
	desc = RelationGetDescr(fs->rel);
	foreach(lc, plan->hashkeys)
	{
		Var		   *v = lfirst(lc);
		TargetEntry *tle;
		Var		   *sv;

		if (!IsA(v, Var) || v->varno != OUTER_VAR || v->varattno <= 0 ||
			v->varattno > list_length(cscan->scan.plan.targetlist))
			return false;
		tle = list_nth(cscan->scan.plan.targetlist, v->varattno - 1);
		sv = (Var *) tle->expr;
		/* (a column the scan reads: its values are in fs->cols) */
		if (!IsA(sv, Var) || sv->varno != cscan->scan.scanrelid || sv->varattno <= 0 ||
			sv->varattno > desc->natts || sv->vartype != v->vartype ||
			!fs->all_cols[sv->varattno - 1])
			return false;
		key_atts[k] = sv->varattno - 1;
		key_outpos[k] = v->varattno - 1;
		k++;
	}
	return true;
}

/* EXPLAIN without ANALYZE: say where the join filter would be. */
void
flashscan_explain_hash_join(PlanState *scan, HashJoinState *hj)
{
	int			nkeys = list_length(((HashJoin *) hj->js.ps.plan)->hashkeys);
	int		   *atts = palloc(sizeof(int) * Max(nkeys, 1));
	int		   *outpos = palloc(sizeof(int) * Max(nkeys, 1));

	if (join_filter_keys(scan, hj, atts, outpos))
		((FlashScanState *) scan)->join_filter_planned = true;
	pfree(atts);
	pfree(outpos);
}

/*
 * Called at executor start for a hash join whose outer plan is this
 * FlashScan: filter its rows by the join's hash table where every outer
 * hash key is one of our columns, output as is, and the join drops outer
 * rows without a match (inner, semi and right joins).
 */
void
flashscan_attach_hash_join(PlanState *scan, HashJoinState *hj)
{
	FlashScanState *fs = (FlashScanState *) scan;
	HashJoin   *plan = (HashJoin *) hj->js.ps.plan;
	JoinFilter *jf;
	MemoryContext old;
	int			nkeys = list_length(plan->hashkeys);
	int			k;

	if (nkeys == 0 || fs == NULL || !IsA(scan, CustomScanState) ||
		((CustomScanState *) scan)->methods != &flashscan_exec_methods ||
		fs->dir == NULL)
		return;
	old = MemoryContextSwitchTo(fs->scan_cxt);
	jf = palloc0(sizeof(JoinFilter));
	jf->nkeys = nkeys;
	jf->key_atts = palloc(sizeof(int) * jf->nkeys);
	jf->key_outpos = palloc(sizeof(int) * jf->nkeys);
	if (!join_filter_keys(scan, hj, jf->key_atts, jf->key_outpos))
	{
		MemoryContextSwitchTo(old);
		return;
	}
	jf->hj = hj;
	jf->outer = MakeSingleTupleTableSlot(scan->ps_ResultTupleSlot->tts_tupleDescriptor,
										 &TTSOpsVirtual);
	jf->econtext = CreateExprContext(scan->state);
	/* the key columns are read first, with the predicate columns */
	for (k = 0; k < jf->nkeys; k++)
	{
		int			att = jf->key_atts[k];

		if (!fs->qual_cols[att])
		{
			fs->qual_cols[att] = true;
			fs->qual_list[fs->nqual_cols++] = att;
			if (fs->proj_cols[att])
			{
				fs->proj_cols[att] = false;
				fs->nproj_cols--;
			}
		}
	}
	fs->join_filter = jf;
	MemoryContextSwitchTo(old);
}

/*
 * The next (backward: previous) visible group with at least one selected
 * row, read; false at the end (the start).
 */
static bool
next_group(FlashScanState *fs, bool backward)
{
	ExprContext *econtext = fs->css.ss.ps.ps_ExprContext;
	TupleDesc	desc = RelationGetDescr(fs->rel);

	for (;;)
	{
		PaxGroupEntry *g;
		MemoryContext old;
		uint32		ri;
		bool		first_pass_all;
		bool		pushed;

		CHECK_FOR_INTERRUPTS();
		if (fs->hub_eligible && !backward)
		{
			if (!hub_next_group(fs))
				return false;
		}
		else if (fs->shared != NULL)
		{
			if (!pax_claim_next_group(fs->dir, &fs->shared->next_rownum, fs->shared->chunk_rows,
									  &fs->claim_start, &fs->claim_end, &fs->gi))
				return false;
		}
		else
		{
			fs->gi += backward ? -1 : 1;
			if (fs->gi < 0 || fs->gi >= fs->dir->ngroups)
			{
				/* stay just outside the groups: the other direction starts there */
				fs->gi = (fs->gi < 0) ? -1 : fs->dir->ngroups;
				return false;
			}
		}
		g = fs->dir->groups[fs->gi];
		/* rows deleted (or removed by VACUUM) drop out before any column is read */
		if (!pax_group_visible_to_reader(fs->rel, g, fs->snapshot) ||
			pax_visible_rows(fs->rel, g, fs->snapshot, fs->visible, fs->strategy,
							 &fs->blocks_read) == 0 ||
			(fs->shared != NULL &&
			 pax_claim_mask_rows(g, fs->visible, fs->claim_start, fs->claim_end) == 0))
		{
			fs->groups_invisible++;
			continue;
		}
		fs->groups_scanned++;
		fs->group = g;
		old = MemoryContextSwitchTo(fs->scan_cxt);

		/*
		 * The next group's first reads go out while this one is decoded.  A
		 * group the hub delivered from its stream had every block of the
		 * columns it carries brought into shared_buffers just now: asking
		 * about each would only cost a lookup (hub_pushed_all: the hub
		 * carries all the columns the scan reads).
		 */
		first_pass_all = !fs->selection_first || fs->nqual_cols == 0;
		pushed = fs->hub_eligible && !backward && fs->group_pushed && fs->hub_pushed_all;
		if (fs->prefetched_gi != fs->gi && !pushed)
			pax_prefetch_columns(fs->rel, g, first_pass_all ? fs->all_cols : fs->qual_cols,
								 desc->natts);
		/* with shared scans the pusher reads ahead, in its own order */
		if (!backward && !fs->hub_eligible && fs->gi + 1 < fs->dir->ngroups &&
			(fs->shared == NULL || fs->dir->groups[fs->gi + 1]->first_rownum < fs->claim_end))
		{
			pax_prefetch_columns(fs->rel, fs->dir->groups[fs->gi + 1],
								 first_pass_all ? fs->all_cols : fs->qual_cols, desc->natts);
			fs->prefetched_gi = fs->gi + 1;
		}
		pax_read_columns(fs->rel, g, desc, first_pass_all ? fs->all_cols : fs->qual_cols,
						 fs->cols, fs->strategy, &fs->blocks_read);
		MemoryContextSwitchTo(old);

		/*
		 * The selection vector: every row, narrowed by each simple qual on
		 * its column's array, then by the other quals on a slot.
		 */
		fs->nselected = 0;
		for (ri = 0; ri < g->nrows; ri++)
			if (fs->visible[ri])
				fs->selected[fs->nselected++] = ri;
		fs->rows_examined += fs->nselected;

		/*
		 * pg_stat_*_tables.seq_tup_read counts the rows a sequential scan
		 * returns before its quals, every visible row: so for FlashScan.
		 */
		if (pgstat_should_count_relation(fs->rel))
			fs->rel->pgstat_info->t_counts.t_tuples_returned += fs->nselected;
		{
			TupleTableSlot *scanslot = fs->css.ss.ss_ScanTupleSlot;
			int			qi;

			/* columns not read stay NULL for the whole group */
			ExecClearTuple(scanslot);
			memset(scanslot->tts_isnull, true, sizeof(bool) * desc->natts);
			for (qi = 0; qi < fs->nsimple && fs->nselected > 0; qi++)
			{
				SimpleQual *q = &fs->simple[qi];
				Datum	   *vals = fs->cols[q->att].values;
				bool	   *nulls = fs->cols[q->att].isnull;
				uint32		keep = 0,
							j;

				for (j = 0; j < fs->nselected; j++)
				{
					uint32		r = fs->selected[j];

					if (nulls[r])
						continue;
					if (simple_qual_true(q, vals[r]))
						fs->selected[keep++] = r;
				}
				fs->nselected = keep;
			}
			if (fs->quals != NULL && fs->nselected > 0)
			{
				uint32		keep = 0,
							j;

				for (j = 0; j < fs->nselected; j++)
				{
					uint32		r = fs->selected[j];

					econtext->ecxt_scantuple = store_scan_row(fs, r, fs->qual_list, fs->nqual_cols);
					ResetExprContext(econtext);
					if (ExecQual(fs->quals, econtext))
						fs->selected[keep++] = r;
				}
				fs->nselected = keep;
			}
			if (fs->join_filter != NULL && fs->nselected > 0)
				join_filter_rows(fs);
		}
		if (fs->nselected == 0)
		{
			fs->groups_skipped++;
			continue;
		}
		if (!first_pass_all && fs->nproj_cols > 0)
		{
			old = MemoryContextSwitchTo(fs->scan_cxt);
			if (!pushed)
				pax_prefetch_columns(fs->rel, g, fs->proj_cols, desc->natts);
			pax_read_columns(fs->rel, g, desc, fs->proj_cols, fs->cols, fs->strategy,
							 &fs->blocks_read);
			MemoryContextSwitchTo(old);
		}
		fs->cur_selected = backward ? (int64) fs->nselected : -1;
		return true;
	}
}

/*
 * ExecScan's access method: the next row that passed the quals, in the scan
 * slot.  Backward too (FETCH BACKWARD, cursors): a cursor whose plan cannot
 * go back refuses it, where one over a Seq Scan allows it.
 */
static TupleTableSlot *
flashscan_next(ScanState *ss)
{
	FlashScanState *fs = (FlashScanState *) ss;
	bool		backward = ScanDirectionIsBackward(ss->ps.state->es_direction);

	for (;;)
	{
		if (fs->group != NULL)
		{
			int64		i = fs->cur_selected + (backward ? -1 : 1);

			if (i >= 0 && i < fs->nselected)
			{
				fs->cur_selected = i;
				return store_scan_row(fs, fs->selected[i], fs->all_list, fs->nall);
			}
		}
		if (!next_group(fs, backward))
		{
			fs->group = NULL;
			return ExecClearTuple(ss->ss_ScanTupleSlot);
		}
	}
}

/*
 * ExecScan's recheck: EvalPlanQual hands us the new version of a row a
 * concurrent transaction updated; it must pass all our quals again.
 */
static bool
flashscan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	FlashScanState *fs = (FlashScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	econtext->ecxt_scantuple = slot;
	return ExecQual(fs->recheck_quals, econtext);
}

/* Through ExecScan, so that EvalPlanQual and projection work as for any scan. */
static TupleTableSlot *
flashscan_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, flashscan_next, flashscan_recheck);
}

static void
flashscan_end(CustomScanState *node)
{
	FlashScanState *fs = (FlashScanState *) node;

	hub_leave(fs);
	if (fs->strategy)
		FreeAccessStrategy(fs->strategy);
	MemoryContextDelete(fs->scan_cxt);
}

static void
flashscan_rescan(CustomScanState *node)
{
	FlashScanState *fs = (FlashScanState *) node;

	fs->gi = -1;
	fs->prefetched_gi = -1;
	fs->group = NULL;
	fs->nselected = 0;
	fs->cur_selected = -1;
	fs->claim_start = fs->claim_end = 0;
	fs->claim_gi = -1;
	/* the join above rescans us whenever it rescans: its table may be rebuilt */
	if (fs->join_filter != NULL)
		fs->join_filter->bloom_of = NULL;

	/*
	 * A parallel scan's shared state, its registration included, is
	 * remade by flashscan_reinitialize_dsm(), which may have run already
	 * (a Gather with a rescan parameter rescans its child after that).
	 */
	if (fs->shared == NULL)
		hub_leave(fs);
	pgstat_count_heap_scan(fs->rel);
}

/* ------------------------------------------------------------------------
 * Parallel FlashScan
 * ------------------------------------------------------------------------
 */

static Size
flashscan_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(FlashScanShared);
}

static void
flashscan_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	FlashScanState *fs = (FlashScanState *) node;

	fs->shared = (FlashScanShared *) coordinate;
	pg_atomic_init_u64(&fs->shared->next_rownum, 0);
	pg_atomic_init_u64(&fs->shared->refused_rownum, 0);
	pg_atomic_init_u32(&fs->shared->hub_refused, 0);
	fs->shared->chunk_rows = pax_claim_chunk_rows(fs->dir, FLASHSCAN_MIN_CHUNK_ROWS);
	pg_atomic_init_u64(&fs->shared->groups_scanned, 0);
	pg_atomic_init_u64(&fs->shared->groups_skipped, 0);
	pg_atomic_init_u64(&fs->shared->groups_invisible, 0);
	pg_atomic_init_u64(&fs->shared->rows_examined, 0);
	pg_atomic_init_u64(&fs->shared->blocks_read, 0);
	pg_atomic_init_u64(&fs->shared->hub_from_stream, 0);
	pg_atomic_init_u64(&fs->shared->hub_alone, 0);
	pg_atomic_init_u64(&fs->shared->join_filter_removed, 0);
	fs->claim_start = fs->claim_end = 0;
	fs->gi = -1;
	hub_leave(fs);
	hub_register_query(fs, pcxt->nworkers + 1);
}

static void
flashscan_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	FlashScanState *fs = (FlashScanState *) node;

	fs->shared = (FlashScanShared *) coordinate;
	fs->claim_start = fs->claim_end = 0;
	fs->gi = -1;
	hub_leave(fs);
	hub_register_query(fs, pcxt->nworkers + 1);
}

/*
 * Parallel: each participant adds its counters to the shared ones as it
 * shuts down; the leader then shows the totals.  Its shutdown comes before
 * the Gather's (ExecShutdownNode goes to children first), which is after
 * the workers finished when the plan returned its last row; when a LIMIT
 * stopped it early, the totals may miss a worker's share, and the workers
 * still running find the query's registration gone and take nothing more.
 */
static void
flashscan_shutdown(CustomScanState *node)
{
	FlashScanState *fs = (FlashScanState *) node;
	FlashScanShared *sh = fs->shared;

	if (sh == NULL || fs->counted)
		return;
	fs->counted = true;
	pg_atomic_fetch_add_u64(&sh->groups_scanned, fs->groups_scanned);
	pg_atomic_fetch_add_u64(&sh->groups_skipped, fs->groups_skipped);
	pg_atomic_fetch_add_u64(&sh->groups_invisible, fs->groups_invisible);
	pg_atomic_fetch_add_u64(&sh->rows_examined, fs->rows_examined);
	pg_atomic_fetch_add_u64(&sh->blocks_read, fs->blocks_read);
	pg_atomic_fetch_add_u64(&sh->hub_from_stream, fs->hub_from_stream);
	pg_atomic_fetch_add_u64(&sh->hub_alone, fs->hub_alone);
	if (fs->join_filter != NULL)
		pg_atomic_fetch_add_u64(&sh->join_filter_removed, fs->join_filter->removed);
	hub_leave(fs);
	if (!IsParallelWorker())
	{
		fs->groups_scanned = pg_atomic_read_u64(&sh->groups_scanned);
		fs->groups_skipped = pg_atomic_read_u64(&sh->groups_skipped);
		fs->groups_invisible = pg_atomic_read_u64(&sh->groups_invisible);
		fs->rows_examined = pg_atomic_read_u64(&sh->rows_examined);
		fs->blocks_read = pg_atomic_read_u64(&sh->blocks_read);
		fs->hub_from_stream = pg_atomic_read_u64(&sh->hub_from_stream);
		fs->hub_alone = pg_atomic_read_u64(&sh->hub_alone);
		if (fs->join_filter != NULL)
			fs->join_filter->removed = pg_atomic_read_u64(&sh->join_filter_removed);
	}
	/* the DSM goes away with the Gather */
	fs->shared = NULL;
}

static void
flashscan_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	FlashScanState *fs = (FlashScanState *) node;

	fs->shared = (FlashScanShared *) coordinate;
	fs->claim_counter = NULL;
	fs->claim_start = fs->claim_end = 0;
	fs->claim_gi = -1;
}

static char *
column_list(FlashScanState *fs, const bool *cols)
{
	TupleDesc	desc = RelationGetDescr(fs->rel);
	StringInfoData buf;
	int			att;

	initStringInfo(&buf);
	for (att = 0; att < desc->natts; att++)
		if (cols[att])
			appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "",
							 quote_identifier(NameStr(TupleDescAttr(desc, att)->attname)));
	return buf.len > 0 ? buf.data : "(none)";
}

static void
flashscan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	FlashScanState *fs = (FlashScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc	desc = RelationGetDescr(fs->rel);
	int			live = 0,
				att;

	for (att = 0; att < desc->natts; att++)
		live += TupleDescAttr(desc, att)->attisdropped ? 0 : 1;
	if (cscan->custom_exprs != NIL)
	{
		List	   *context = set_deparse_context_plan(es->deparse_cxt,
													   node->ss.ps.plan, ancestors);

		ExplainPropertyText("Filter",
							deparse_expression((Node *) make_ands_explicit(cscan->custom_exprs),
											   context, false, false),
							es);
		/* the part that may fail or have effects: run as each row is asked for */
		if (fs->lazy_quals != NIL)
			ExplainPropertyText("Row-by-Row Filter",
								deparse_expression((Node *) make_ands_explicit(fs->lazy_quals),
												   context, false, false),
								es);
	}
	ExplainPropertyText("Predicate Columns", column_list(fs, fs->qual_cols), es);
	ExplainPropertyText("Projected Columns", column_list(fs, fs->proj_cols), es);
	ExplainPropertyInteger("Columns Read", NULL, fs->nqual_cols + fs->nproj_cols, es);
	ExplainPropertyInteger("Columns In Table", NULL, live, es);
	ExplainPropertyBool("Selection First", fs->selection_first && fs->nqual_cols > 0, es);
	if (fs->join_filter != NULL || fs->join_filter_planned)
		ExplainPropertyText("Join Filter", "hash table of the join above", es);
	if (flashscan_shared_scans)
		ExplainPropertyText("Shared Scan", fs->hub_eligible ?
							(fs->hub_refused ? "on, hub full: groups read alone" : "on") :
							fs->hub_why, es);
	if (!es->analyze)
		return;
	if (fs->hub_eligible)
	{
		ExplainPropertyInteger("Groups From Shared Stream", NULL, fs->hub_from_stream, es);
		ExplainPropertyInteger("Groups Read Alone", NULL, fs->hub_alone, es);
	}
	ExplainPropertyInteger("Groups Scanned", NULL, fs->groups_scanned, es);
	ExplainPropertyInteger("Groups Skipped", NULL, fs->groups_skipped, es);
	ExplainPropertyInteger("Groups Not Visible", NULL, fs->groups_invisible, es);
	ExplainPropertyInteger("Rows Examined", NULL, fs->rows_examined, es);
	if (fs->join_filter != NULL)
		ExplainPropertyInteger("Rows Removed by Join Filter", NULL, fs->join_filter->removed, es);
	if (fs->lazy_quals != NIL && node->ss.ps.instrument != NULL)
		ExplainPropertyInteger("Rows Removed by Row-by-Row Filter", NULL,
							   (int64) node->ss.ps.instrument->nfiltered1, es);
	ExplainPropertyInteger("Blocks Read", NULL, fs->blocks_read, es);
	ExplainPropertyInteger("Table Blocks", NULL, fs->table_blocks, es);
}

void
flashscan_scan_init(void)
{
	DefineCustomBoolVariable("flashscan.enable",
							 "Offers FlashScan paths for pax tables.",
							 "Off: pax tables are read by their access method's sequential scan, every column.",
							 &flashscan_enable, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flashscan.selection_first",
							 "FlashScan reads the predicate columns first and skips groups without a match.",
							 "Off: every needed column of every group is read before the quals run.",
							 &flashscan_selection_first, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("flashscan.join_filter",
							 "A FlashScan on the probe side of a hash join drops rows whose keys hash to an empty bucket, before reading their other columns.",
							 "Off: every row goes to the join.",
							 &flashscan_join_filter, true, PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&flashscan_scan_methods);
	shared_scan_init();
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = flashscan_set_rel_pathlist;
}
