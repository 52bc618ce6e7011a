/*-------------------------------------------------------------------------
 *
 * flashjoin_plan.c
 *	  FlashJoin's planner side: rewrite the chosen plan's inner hash joins
 *	  over pax tables so that the joins carry only join keys and row ids,
 *	  and a fetch kernel ("Flash Fetch") above them reads the other columns
 *	  of the rows that survived (the paper's late materialization, P1).
 *
 * At UPPERREL_FINAL the finished paths are walked top-down through the
 * upper nodes (projection, sort, aggregation, limit, ...) and joins.  The
 * first inner hash join met whose subtree is made only of unparameterized
 * inner hash joins is the subtree's root.  Its leaves are pax tables read
 * by a Seq Scan or a FlashScan, or anything else ("opaque": heap tables,
 * index scans, subqueries), which is kept as it is.  A pax leaf's column
 * that the subtree's output needs and that no join clause inside the
 * subtree reads is deferred: the leaf becomes a narrow FlashScan of its
 * join columns plus ctid, every hash join above it carries only what the
 * joins above and the final output need, and one Flash Fetch at the root
 * fetches the deferred columns by ctid.  The join order, the build and
 * probe sides and the hash clauses stay PostgreSQL's.
 *
 * flashscan.flashjoin = rewrite applies this to the finished plan always
 * (the paper's method, P1).  flashscan.flashjoin = cost offers it as a path
 * of every join relation instead (P2, the paper's future work): after the
 * core has added its join paths for a pair of input relations, the
 * cheapest inner hash join of that pair is rewritten as above and added to
 * the join relation with its estimated cost: narrower hash tables (fewer
 * batches, less spilled) and less read by the scans, against the fetch
 * (distinct groups touched, Cardenas' formula, their blocks priced by the
 * QDTT model when qdtt_costing has one, and the sorts of the sorted mode).
 * add_path() then keeps it only where it is cheaper than every ordinary
 * path of the relation, and the joins above choose their order
 * with it.  A Flash Fetch path remembers the hash join it replaced, so a
 * join above it that is rewritten too unwraps it and builds one fetch over
 * the larger subtree instead of a fetch over a fetch.  off never tries.
 *
 * Paths are shared between relations, so nothing found is changed in
 * place: the nodes from the final path down to the subtree's root are
 * copied, their costs moved by the difference.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/sysattr.h"
#include "catalog/pg_type_d.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/spccache.h"

#include "flashscan.h"
#include "pax.h"
#include "ssdkit_path.h"
#include "ssdkit_qdtt.h"

int			flashjoin_mode = FLASHJOIN_COST;
int			flashjoin_fetch_mode = FLASHFETCH_AUTO;

static const struct config_enum_entry flashjoin_mode_options[] = {
	{"off", FLASHJOIN_OFF, false},
	{"rewrite", FLASHJOIN_REWRITE, false},
	{"cost", FLASHJOIN_COST, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fetch_mode_options[] = {
	{"auto", FLASHFETCH_AUTO, false},
	{"naive", FLASHFETCH_NAIVE, false},
	{"sorted", FLASHFETCH_SORTED, false},
	{NULL, 0, false}
};

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/* A pax leaf of the subtree whose deferred columns the fetch reads. */
typedef struct FjLeaf
{
	RelOptInfo *rel;
	List	   *deferred;		/* Vars the fetch reads */
	double		width;			/* bytes of those per row */
	double		distinct_groups;	/* groups the fetch touches (Cardenas) */
	bool		presorted;		/* the joins emit its rows in ctid order */
} FjLeaf;

typedef struct FjContext
{
	PlannerInfo *root;
	List	   *pax_leaves;		/* Path * of pax Seq Scans and FlashScans */
	List	   *join_vars;		/* Vars read by join clauses in the subtree */
	List	   *fetch;			/* FjLeaf * of leaves with deferred columns */
	List	   *carried;		/* Vars the subtree's root must still produce */
} FjContext;

/*
 * A Flash Fetch path and the ordinary hash join it replaces (a copy: add_path
 * frees the paths the new one dominates).
 */
typedef struct FlashJoinPath
{
	CustomPath	cpath;
	Path	   *wide;
} FlashJoinPath;

static Path *rewrite_path(PlannerInfo *root, Path *path);

static const CustomPathMethods flashjoin_fetch_path_methods;

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* The hash join a Flash Fetch path replaced, or path itself. */
static Path *
unwrap_fetch(Path *path)
{
	if (IsA(path, CustomPath) &&
		((CustomPath *) path)->methods == &flashjoin_fetch_path_methods)
		return ((FlashJoinPath *) path)->wide;
	return path;
}

/*
 * Sets of Vars, by relation and attribute only: the same column pulled from
 * a join clause and from a target may differ in fields that do not matter
 * here (varnosyn).
 */
static bool
var_member(List *vars, Var *v)
{
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *w = lfirst(lc);

		if (w->varno == v->varno && w->varattno == v->varattno)
			return true;
	}
	return false;
}

static List *
vars_union(List *vars, List *more)
{
	ListCell   *lc;

	foreach(lc, more)
		if (!var_member(vars, lfirst(lc)))
			vars = lappend(vars, lfirst(lc));
	return vars;
}

/* ------------------------------------------------------------------------
 * Which subtrees qualify
 * ------------------------------------------------------------------------
 */

/* Does the target hold anything but plain Vars of this query level? */
static bool
target_has_non_vars(PathTarget *target)
{
	ListCell   *lc;

	foreach(lc, target->exprs)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varlevelsup != 0)
			return true;
	}
	return false;
}

/* A pax table read whole by a Seq Scan or a FlashScan: a leaf we may narrow. */
static bool
is_pax_leaf(PlannerInfo *root, Path *path)
{
	RelOptInfo *rel = path->parent;

	if (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION ||
		path->param_info != NULL || path->parallel_aware ||
		!bms_is_empty(rel->lateral_relids))
		return false;
	if (!(IsA(path, Path) && path->pathtype == T_SeqScan) && !flashscan_is_path(path))
		return false;
	return flashscan_is_pax_relation(planner_rt_fetch(rel->relid, root));
}

static bool
is_inner_hash_join(Path *path)
{
	HashPath   *hp = (HashPath *) path;

	return IsA(path, HashPath) && hp->jpath.jointype == JOIN_INNER &&
		path->param_info == NULL && !path->parallel_aware && path->parallel_workers == 0 &&
		!target_has_non_vars(path->pathtarget);
}

/*
 * Is the tree under path inner hash joins all the way down to its leaves?
 * Collects the pax leaves and the Vars the join clauses read.
 */
static bool
collect_subtree(FjContext *cxt, Path *path)
{
	HashPath   *hp;
	ListCell   *lc;

	path = unwrap_fetch(path);
	if (!is_inner_hash_join(path))
	{
		if (path->param_info != NULL)
			return false;
		if (is_pax_leaf(cxt->root, path))
			cxt->pax_leaves = lappend(cxt->pax_leaves, path);
		return true;			/* a leaf, pax or opaque */
	}
	hp = (HashPath *) path;
	foreach(lc, hp->jpath.joinrestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		List	   *vars = pull_var_clause((Node *) ri->clause, PVC_RECURSE_PLACEHOLDERS);

		cxt->join_vars = vars_union(cxt->join_vars, vars);
	}
	return collect_subtree(cxt, hp->jpath.outerjoinpath) &&
		collect_subtree(cxt, hp->jpath.innerjoinpath);
}

/* ------------------------------------------------------------------------
 * Costs
 * ------------------------------------------------------------------------
 */

/* Bytes a hash join's batch files spend per tuple of this width (costsize.c's). */
static double
spill_pages(double tuples, int width)
{
	return ceil(tuples * (MAXALIGN(width) + MAXALIGN(SizeofHeapTupleHeader)) / BLCKSZ);
}

/* The I/O cost of a hash join's batching, as initial_cost_hashjoin() counts it. */
static void
batch_cost(Path *outer, Path *inner, double inner_rows_total, int *nbatch,
		   Cost *startup, Cost *total)
{
	size_t		space_allowed;
	int			numbuckets,
				numbatches,
				num_skew_mcvs;

	ExecChooseHashTableSize(inner_rows_total, inner->pathtarget->width, true, false, 0,
							&space_allowed, &numbuckets, &numbatches, &num_skew_mcvs);
	*nbatch = numbatches;
	*startup = *total = 0;
	if (numbatches > 1)
	{
		double		outerpages = spill_pages(outer->rows, outer->pathtarget->width);
		double		innerpages = spill_pages(inner->rows, inner->pathtarget->width);

		*startup = seq_page_cost * innerpages;
		*total = seq_page_cost * (2 * innerpages + 2 * outerpages);
	}
}

/*
 * What the fetch pays for a page of rel read at random and read in order:
 * the tablespace's QDTT model when qdtt_costing has one (a random read within
 * the relation's extent, one at a time: the fetch waits for each group's
 * first block), else its random_page_cost and seq_page_cost.
 */
static void
fetch_page_costs(RelOptInfo *rel, double *random, double *seq)
{
	SsdkitQdttApi *api = ssdkit_qdtt_api(1);
	double		r,
				s;

	get_tablespace_page_costs(rel->reltablespace, random, seq);
	if (api != NULL &&
		api->page_cost(rel->reltablespace, Max(rel->pages, 1), 1, &r) &&
		api->page_cost(rel->reltablespace, 1, 1, &s))
	{
		*random = r;
		*seq = Min(s, r);
	}
}

/*
 * The fetch of one relation's deferred columns for rows rows: distinct
 * groups touched (Cardenas), the blocks of their minipages, decoding, and
 * (sorted mode, input not in ctid order) a sort of the join index.
 */
static void
fetch_cost(PlannerInfo *root, FjLeaf *leaf, double rows, double index_width,
		   Cost *naive, Cost *sorted, double *naive_blocks)
{
	RelOptInfo *rel = leaf->rel;
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	Relation	r = relation_open(rte->relid, NoLock);
	double		group_blocks = pax_relation_group_blocks(r);
	double		ngroups = Max(1.0, ceil(rel->pages / group_blocks));
	double		rows_per_group = Max(1.0, rel->tuples / ngroups);
	List	   *atts = NIL;
	ListCell   *lc;
	double		blocks,
				distinct,
				spc_random,
				spc_seq,
				page_cost,
				ncols;

	foreach(lc, leaf->deferred)
		atts = lappend_int(atts, ((Var *) lfirst(lc))->varattno);
	blocks = flashscan_column_blocks(rte->relid, RelationGetDescr(r), atts, rows_per_group);
	relation_close(r, NoLock);
	ncols = list_length(atts);
	fetch_page_costs(rel, &spc_random, &spc_seq);

	distinct = ngroups * (1.0 - pow(1.0 - 1.0 / ngroups, rows));
	leaf->distinct_groups = distinct;

	/* in ctid order the groups come in ascending order: sequential when dense */
	page_cost = spc_seq + (spc_random - spc_seq) * (1.0 - distinct / ngroups);
	*sorted = distinct * blocks * page_cost +
		distinct * rows_per_group * ncols * cpu_operator_cost +
		rows * cpu_operator_cost;
	if (!leaf->presorted && rows > 1)
	{
		double		bytes = rows * (MAXALIGN(index_width) + MAXALIGN(SizeofHeapTupleHeader));

		*sorted += 2.0 * cpu_operator_cost * rows * log2(rows);
		if (bytes > work_mem * 1024.0)
			*sorted += 2.0 * seq_page_cost * ceil(bytes / BLCKSZ);
	}

	/*
	 * Tuple at a time: each row reads one block per column (its values),
	 * read again later unless every block the fetch needs stays in
	 * shared_buffers; a row's values are decoded alone.
	 */
	*naive_blocks = distinct * blocks;
	if (*naive_blocks <= NBuffers)
		*naive = *naive_blocks * spc_random;
	else
		*naive = Min(rows, distinct * rows_per_group) * Max(1.0, Min(ncols, blocks)) * spc_random;
	*naive += rows * ncols * cpu_operator_cost * 4;
}

/* ------------------------------------------------------------------------
 * Rebuilding the subtree
 * ------------------------------------------------------------------------
 */

static PathTarget *
vars_target(PlannerInfo *root, List *vars, Relids relids)
{
	PathTarget *target = create_empty_pathtarget();
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (bms_is_member(v->varno, relids))
			add_column_to_pathtarget(target, (Expr *) v, 0);
	}
	return set_pathtarget_cost_width(root, target);
}

static Var *
ctid_var(Index relid)
{
	return makeVar(relid, SelfItemPointerAttributeNumber, TIDOID, -1, InvalidOid, 0);
}

/*
 * The subtree under path with every pax leaf that has deferred columns read
 * narrow, each node producing only the Vars of above (what the nodes
 * above it need) that it can; path itself when nothing under it changes.
 */
static Path *
narrow_path(FjContext *cxt, Path *path, List *above)
{
	HashPath   *hp,
			   *np;
	Path	   *outer,
			   *inner;
	List	   *below;
	ListCell   *lc;
	Cost		old_startup,
				old_total,
				new_startup,
				new_total;
	int			old_nbatch;

	/* a fetch below is replaced by its join, rewritten with this subtree */
	path = unwrap_fetch(path);
	if (!is_inner_hash_join(path))
	{
		foreach(lc, cxt->fetch)
		{
			FjLeaf	   *leaf = lfirst(lc);
			CustomPath *cpath;

			if (leaf->rel != path->parent)
				continue;
			cpath = flashscan_create_path(cxt->root, leaf->rel,
										  vars_target(cxt->root, above, leaf->rel->relids));
			return cpath ? &cpath->path : NULL;
		}
		return path;
	}

	hp = (HashPath *) path;
	below = list_copy(above);
	foreach(lc, hp->jpath.joinrestrictinfo)
		below = vars_union(below,
						   pull_var_clause((Node *) ((RestrictInfo *) lfirst(lc))->clause,
										   PVC_RECURSE_PLACEHOLDERS));
	outer = narrow_path(cxt, hp->jpath.outerjoinpath, below);
	inner = narrow_path(cxt, hp->jpath.innerjoinpath, below);
	if (outer == NULL || inner == NULL)
		return NULL;
	if (outer == hp->jpath.outerjoinpath && inner == hp->jpath.innerjoinpath)
		return path;

	np = makeNode(HashPath);
	memcpy(np, hp, sizeof(HashPath));
	np->jpath.outerjoinpath = outer;
	np->jpath.innerjoinpath = inner;
	np->jpath.path.pathtarget = vars_target(cxt->root, above, path->parent->relids);
	np->jpath.path.parallel_safe = outer->parallel_safe && inner->parallel_safe;

	/* the children's difference, and the batching's for the narrower rows */
	batch_cost(hp->jpath.outerjoinpath, hp->jpath.innerjoinpath, hp->inner_rows_total,
			   &old_nbatch, &old_startup, &old_total);
	batch_cost(outer, inner, hp->inner_rows_total, &np->num_batches, &new_startup, &new_total);
	np->jpath.path.startup_cost += (inner->total_cost - hp->jpath.innerjoinpath->total_cost) +
		(outer->startup_cost - hp->jpath.outerjoinpath->startup_cost) +
		(new_startup - old_startup);
	np->jpath.path.total_cost += (inner->total_cost - hp->jpath.innerjoinpath->total_cost) +
		(outer->total_cost - hp->jpath.outerjoinpath->total_cost) +
		(new_total - old_total);
	return &np->jpath.path;
}

/* Do the hash joins on the left spine emit rows in the leftmost leaf's order? */
static Path *
ordered_leaf(Path *path)
{
	while (is_inner_hash_join(path))
	{
		if (((HashPath *) path)->num_batches > 1)
			return NULL;
		path = ((HashPath *) path)->jpath.outerjoinpath;
	}
	return path;
}

static int
cmp_leaf_width(const ListCell *a, const ListCell *b)
{
	FjLeaf	   *la = lfirst(a);
	FjLeaf	   *lb = lfirst(b);

	if (la->presorted != lb->presorted)
		return la->presorted ? -1 : 1;
	if (la->width != lb->width)
		return la->width < lb->width ? -1 : 1;
	return (int) la->rel->relid - (int) lb->rel->relid;
}

/*
 * The subtree under root_path rewritten as FlashJoin, or NULL when it does
 * not qualify or (flashscan.flashjoin = cost) costs more.
 */
static Path *
try_flashjoin(PlannerInfo *root, Path *root_path)
{
	FjContext	cxt;
	List	   *required;
	List	   *above;
	ListCell   *lc;
	Path	   *narrow,
			   *first;
	CustomPath *fetch;
	List	   *rels = NIL;
	Cost		naive_total = 0,
				sorted_total = 0;
	double		naive_blocks = 0,
				index_width;
	int			mode;

	memset(&cxt, 0, sizeof(cxt));
	cxt.root = root;
	if (!collect_subtree(&cxt, root_path) || cxt.pax_leaves == NIL)
		return NULL;

	/* deferred: output columns of pax leaves that no join clause reads */
	required = pull_var_clause((Node *) root_path->pathtarget->exprs, 0);
	foreach(lc, cxt.pax_leaves)
	{
		Path	   *leafpath = lfirst(lc);
		FjLeaf	   *leaf = palloc0(sizeof(FjLeaf));
		ListCell   *lc2;

		List	   *qual_vars = NIL;

		/*
		 * The scan reads its own quals' columns anyway (selection first):
		 * carrying them costs their width in the joins, fetching them again
		 * a second read.
		 */
		leaf->rel = leafpath->parent;
		foreach(lc2, leaf->rel->baserestrictinfo)
			qual_vars = vars_union(qual_vars,
								   pull_var_clause((Node *) ((RestrictInfo *) lfirst(lc2))->clause,
												   PVC_RECURSE_PLACEHOLDERS));
		foreach(lc2, required)
		{
			Var		   *v = lfirst(lc2);

			if (v->varno == leaf->rel->relid && v->varattno > 0 &&
				!var_member(cxt.join_vars, v) && !var_member(qual_vars, v))
			{
				leaf->deferred = lappend(leaf->deferred, v);
				leaf->width += flashscan_column_width(planner_rt_fetch(v->varno, root)->relid,
													  v->varattno, v->vartype, v->vartypmod);
			}
		}
		if (leaf->deferred != NIL)
			cxt.fetch = lappend(cxt.fetch, leaf);
	}
	if (cxt.fetch == NIL)
		return NULL;

	above = NIL;
	foreach(lc, required)
	{
		Var		   *v = lfirst(lc);
		bool		deferred = false;
		ListCell   *lc2;

		foreach(lc2, cxt.fetch)
			if (var_member(((FjLeaf *) lfirst(lc2))->deferred, v))
				deferred = true;
		if (!deferred)
			above = vars_union(above, list_make1(v));
	}
	foreach(lc, cxt.fetch)
		above = vars_union(above, list_make1(ctid_var(((FjLeaf *) lfirst(lc))->rel->relid)));

	narrow = narrow_path(&cxt, root_path, above);
	if (narrow == NULL || narrow == root_path)
		return NULL;

	/* cost the fetch; the leaf the joins keep in ctid order goes first */
	first = ordered_leaf(narrow);
	index_width = narrow->pathtarget->width;
	foreach(lc, cxt.fetch)
	{
		FjLeaf	   *leaf = lfirst(lc);
		Cost		naive,
					sorted;
		double		blocks;

		leaf->presorted = (first != NULL && first->parent == leaf->rel);
		fetch_cost(root, leaf, root_path->rows, index_width, &naive, &sorted, &blocks);
		naive_total += naive;
		sorted_total += sorted;
		naive_blocks += blocks;
		index_width += leaf->width;
	}
	list_sort(cxt.fetch, cmp_leaf_width);
	/* naive only when the blocks it needs stay in shared_buffers (the paper's rule) */
	if (flashjoin_fetch_mode == FLASHFETCH_NAIVE)
		mode = FLASHFETCH_NAIVE;
	else if (flashjoin_fetch_mode == FLASHFETCH_SORTED)
		mode = FLASHFETCH_SORTED;
	else
		mode = (naive_blocks <= NBuffers && naive_total < sorted_total) ?
			FLASHFETCH_NAIVE : FLASHFETCH_SORTED;

	fetch = ssdkit_base_custom_path(root_path->parent, &flashjoin_fetch_path_methods);
	fetch = repalloc(fetch, sizeof(FlashJoinPath));
	((FlashJoinPath *) fetch)->wide = palloc(sizeof(HashPath));
	memcpy(((FlashJoinPath *) fetch)->wide, root_path, sizeof(HashPath));
	fetch->path.pathtarget = root_path->pathtarget;
	fetch->path.rows = root_path->rows;
	fetch->path.startup_cost = narrow->startup_cost;
	fetch->path.total_cost = narrow->total_cost + cpu_tuple_cost * root_path->rows +
		(mode == FLASHFETCH_NAIVE ? naive_total : sorted_total);
	if (mode == FLASHFETCH_SORTED)
		fetch->path.startup_cost = fetch->path.total_cost - cpu_tuple_cost * root_path->rows;
	fetch->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	fetch->custom_paths = list_make1(narrow);
	foreach(lc, cxt.fetch)
	{
		FjLeaf	   *leaf = lfirst(lc);
		List	   *r = list_make2_int(leaf->rel->relid,
									   (int) Min(leaf->distinct_groups, (double) PG_INT32_MAX));
		ListCell   *lc2;

		foreach(lc2, leaf->deferred)
			r = lappend_int(r, ((Var *) lfirst(lc2))->varattno);
		rels = lappend(rels, r);
	}
	fetch->custom_private = list_make3(makeInteger(mode), rels,
									   makeInteger(((FjLeaf *) linitial(cxt.fetch))->presorted));

	if (flashjoin_mode == FLASHJOIN_COST && fetch->path.total_cost >= root_path->total_cost)
		return NULL;
	return &fetch->path;
}

/* ------------------------------------------------------------------------
 * Walking the final paths
 * ------------------------------------------------------------------------
 */

/* A copy of an upper or join path with one child replaced. */
static Path *
copy_with_child(Path *path, Path **childp, Path *newchild, Size size)
{
	Path	   *copy = palloc(size);
	Path	   *oldchild = *childp;

	memcpy(copy, path, size);
	*(Path **) ((char *) copy + ((char *) childp - (char *) path)) = newchild;
	/* a Flash Fetch below is not parallel safe: no Gather may be put above */
	copy->parallel_safe = copy->parallel_safe && newchild->parallel_safe;
	copy->startup_cost += newchild->startup_cost - oldchild->startup_cost;
	copy->total_cost += newchild->total_cost - oldchild->total_cost;
	return copy;
}

#define REWRITE_CHILD(type, field) \
	do { \
		type	   *p = (type *) path; \
		Path	   *c = rewrite_path(root, p->field); \
		if (c != p->field) \
			return copy_with_child(path, &p->field, c, sizeof(type)); \
		return path; \
	} while (0)

static Path *
rewrite_join(PlannerInfo *root, Path *path, Size size)
{
	JoinPath   *jp = (JoinPath *) path;
	Path	   *outer = rewrite_path(root, jp->outerjoinpath);
	Path	   *inner = jp->innerjoinpath;

	/* a parameterized inner side is rescanned per outer row: left alone */
	if (inner->param_info == NULL)
		inner = rewrite_path(root, inner);
	if (outer != jp->outerjoinpath)
		path = copy_with_child(path, &((JoinPath *) path)->outerjoinpath, outer, size);
	if (inner != jp->innerjoinpath)
		path = copy_with_child(path, &((JoinPath *) path)->innerjoinpath, inner, size);
	return path;
}

static Path *
rewrite_path(PlannerInfo *root, Path *path)
{
	check_stack_depth();

	switch (nodeTag(path))
	{
		case T_HashPath:
			if (is_inner_hash_join(path))
			{
				Path	   *fj = try_flashjoin(root, path);

				if (fj != NULL)
					return fj;
			}
			return rewrite_join(root, path, sizeof(HashPath));
		case T_NestPath:
			return rewrite_join(root, path, sizeof(NestPath));
		case T_MergePath:
			return rewrite_join(root, path, sizeof(MergePath));
		case T_ProjectionPath:
			REWRITE_CHILD(ProjectionPath, subpath);
		case T_ProjectSetPath:
			REWRITE_CHILD(ProjectSetPath, subpath);
		case T_SortPath:
			REWRITE_CHILD(SortPath, subpath);
		case T_IncrementalSortPath:
			REWRITE_CHILD(IncrementalSortPath, spath.subpath);
		case T_GroupPath:
			REWRITE_CHILD(GroupPath, subpath);
		case T_UpperUniquePath:
			REWRITE_CHILD(UpperUniquePath, subpath);
		case T_AggPath:
			REWRITE_CHILD(AggPath, subpath);
		case T_WindowAggPath:
			REWRITE_CHILD(WindowAggPath, subpath);
		case T_LimitPath:
			REWRITE_CHILD(LimitPath, subpath);
		case T_MaterialPath:
			REWRITE_CHILD(MaterialPath, subpath);
		default:
			return path;
	}
}

/*
 * Plain SELECTs only, at every query level up to the top: row locks and
 * UPDATE/DELETE re-check rows through EvalPlanQual, which needs every
 * relation's row, not a join index (a fetch in a sub-select of an UPDATE
 * is re-run by such a re-check too).
 */
static bool
query_qualifies(PlannerInfo *root)
{
	if (!flashscan_enable)
		return false;
	for (; root != NULL; root = root->parent_root)
		if (root->parse->commandType != CMD_SELECT || root->rowMarks != NIL ||
			root->parse->hasForUpdate)
			return false;
	return true;
}

/* P1: the finished plan's inner hash joins rewritten (flashjoin = rewrite). */
static void
flashjoin_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
					  RelOptInfo *output_rel, void *extra)
{
	ListCell   *lc;

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	if (stage != UPPERREL_FINAL || flashjoin_mode != FLASHJOIN_REWRITE || !query_qualifies(root))
		return;

	foreach(lc, output_rel->pathlist)
		lfirst(lc) = rewrite_path(root, (Path *) lfirst(lc));
}

/*
 * P2: a FlashJoin path for the join relation (flashjoin = cost), made from
 * the cheapest inner hash join the core just added for this pair of inputs.
 * Each pair is offered once per join order, so no path is tried twice.
 */
static void
flashjoin_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					 RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	HashPath   *best = NULL;
	Path	   *fetch;
	ListCell   *lc;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (flashjoin_mode != FLASHJOIN_COST || !query_qualifies(root))
		return;

	foreach(lc, joinrel->pathlist)
	{
		HashPath   *hp = lfirst(lc);

		if (!is_inner_hash_join(&hp->jpath.path) ||
			hp->jpath.outerjoinpath->parent != outerrel ||
			hp->jpath.innerjoinpath->parent != innerrel)
			continue;
		if (best == NULL || hp->jpath.path.total_cost < best->jpath.path.total_cost)
			best = hp;
	}
	if (best == NULL)
		return;
	fetch = try_flashjoin(root, &best->jpath.path);
	if (fetch != NULL)
		add_path(joinrel, fetch);
}

/* ------------------------------------------------------------------------
 * The fetch kernel's plan
 * ------------------------------------------------------------------------
 */

/* Position (0-based) of Var varno.varattno in a plan's target list, or -1. */
static int
tlist_position(List *tlist, Index varno, AttrNumber varattno)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *te = lfirst(lc);
		Var		   *v = (Var *) te->expr;

		if (IsA(v, Var) && v->varno == varno && v->varattno == varattno && v->varlevelsup == 0)
			return te->resno - 1;
	}
	return -1;
}

/*
 * custom_scan_tlist: the child's output, then each fetched column; the
 * executor fills the scan tuple from both.  custom_private records, per
 * relation in fetch order, its OID (range table indexes are offset by
 * setrefs when the query is a subquery, and custom_private is not), the
 * position of its ctid, the distinct groups expected, its attribute
 * numbers and their positions in the scan tuple, and its alias for EXPLAIN;
 * then whether the first relation's rows are expected in ctid order.
 */
static Plan *
flashjoin_fetch_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *child = linitial(custom_plans);
	List	   *scan_tlist = NIL;
	List	   *relids = NIL,
			   *ctid_pos = NIL,
			   *groups = NIL,
			   *attnos = NIL,
			   *positions = NIL,
			   *names = NIL;
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *te = lfirst(lc);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(te->expr), list_length(scan_tlist) + 1,
											 NULL, false));
	}
	foreach(lc, (List *) lsecond(best_path->custom_private))
	{
		List	   *r = lfirst(lc);
		Index		varno = linitial_int(r);
		RangeTblEntry *rte = planner_rt_fetch(varno, root);
		Relation	rel_ = relation_open(rte->relid, NoLock);
		List	   *atts = NIL,
				   *pos = NIL;
		ListCell   *lc2;
		int			p = tlist_position(child->targetlist, varno, SelfItemPointerAttributeNumber);

		if (p < 0)
			elog(ERROR, "Flash Fetch: ctid of relation %u missing from the join's output", varno);
		for_each_from(lc2, r, 2)
		{
			AttrNumber	att = lfirst_int(lc2);
			Form_pg_attribute a = TupleDescAttr(RelationGetDescr(rel_), att - 1);

			atts = lappend_int(atts, att);
			pos = lappend_int(pos, list_length(scan_tlist));
			scan_tlist = lappend(scan_tlist,
								 makeTargetEntry((Expr *) makeVar(varno, att, a->atttypid,
																  a->atttypmod,
																  a->attcollation, 0),
												 list_length(scan_tlist) + 1, NULL, false));
		}
		relids = lappend_oid(relids, rte->relid);
		names = lappend(names, makeString(pstrdup(rte->eref->aliasname)));
		ctid_pos = lappend_int(ctid_pos, p);
		groups = lappend_int(groups, lsecond_int(r));
		attnos = lappend(attnos, atts);
		positions = lappend(positions, pos);
		relation_close(rel_, NoLock);
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->custom_plans = custom_plans;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->flags = best_path->flags;
	cscan->custom_private = list_make5(linitial(best_path->custom_private), relids, ctid_pos,
									   groups, attnos);
	cscan->custom_private = lappend(cscan->custom_private, positions);
	cscan->custom_private = lappend(cscan->custom_private, names);
	cscan->custom_private = lappend(cscan->custom_private,
									lthird(best_path->custom_private));
	cscan->methods = flashjoin_fetch_scan_methods();
	return &cscan->scan.plan;
}

static const CustomPathMethods flashjoin_fetch_path_methods = {
	.CustomName = "Flash Fetch",
	.PlanCustomPath = flashjoin_fetch_plan,
};

void
flashjoin_plan_init(void)
{
	DefineCustomEnumVariable("flashscan.flashjoin",
							 "How FlashJoin rewrites inner hash joins over pax tables.",
							 "off: never; rewrite: always where the finished plan qualifies (the paper's method); "
							 "cost: as a path of each join relation, kept where it is estimated cheaper.",
							 &flashjoin_mode, FLASHJOIN_COST, flashjoin_mode_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("flashscan.flashjoin_fetch",
							 "How Flash Fetch reads the deferred columns.",
							 "auto: tuple at a time when the blocks it needs fit in shared_buffers and that is cheaper, "
							 "else sorted by row id, one relation at a time; naive or sorted force one.",
							 &flashjoin_fetch_mode, FLASHFETCH_AUTO, fetch_mode_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(flashjoin_fetch_scan_methods());
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = flashjoin_upper_paths;
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = flashjoin_join_paths;
}
