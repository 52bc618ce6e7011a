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
 * Cost = project (a seq scan emitting the pairs, at the price the planner
 *		  put on the relation's own seq scan of that degree: qdtt_costing's,
 *		  when it priced it, so a Sort over that scan and we read our input
 *		  at one price; core's where no such path is left)
 *		+ pair sort (PostgreSQL's cost_sort on the pair width)
 *		+ fetch: page reads (fetch_page_reads(), blended with one read per page
 *		  by the square of the key's correlation, as cost_index() does) at
 *		  the OS-cache price or, past the OS cache, a random read with
 *		  ssd_sort.prefetch_depth reads in flight; a visit per row
 *		  (ssd_sort.page_visit_cost) and the read of a row scattered in
 *		  memory (scattered_row_cost()), overlapping the reads in flight
 *		+ a temp correction putting the built-in Sort's cost_sort() on the
 *		  same footing (temp_price_correction()).
 *
 * Where the pages are comes from qdtt_costing's residency sampler when it
 * has counted the relation, else effective_cache_size (fetch_caches()).  A
 * device read costs, in order of preference: ssd_sort.fetch_page_cost when
 * set; the QDTT model of the relation's tablespace at band = relation size
 * and queue depth = prefetch depth x participants, when qdtt_costing is
 * loaded and calibrated; the tablespace's random_page_cost otherwise.
 *
 * A parallel path (partial, for Gather Merge) is priced for one
 * participant's share of the rows, as core prices partial paths.
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
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
#include "utils/tuplesort.h"

#include "ssd_sort.h"
#include "ssdkit_memory.h"
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

/* What the caches hold of the relation for the fetch (fetch_caches()). */
typedef struct FetchCaches
{
	bool		measured;		/* residency from qdtt_costing's sampler */
	double		sb_fraction;	/* as measured (0 when not) */
	double		os_fraction;
	double		sb_first_hit;	/* P(first visit finds its page in the pool) */
	double		sb_capacity;	/* pages the pool holds for repeat visits */
	double		any_first_hit;	/* same for the pool or the OS page cache */
	double		any_capacity;
	double		temp_room;		/* OS page cache pages temp files can keep */
	double		temp_rivals;	/* relation pages competing with them */
	SsdkitCacheSize size;		/* the caches' size and its source */
} FetchCaches;

/*
 * Does a key expression give the same value, cheaply, when the plan above
 * computes it again from the fetched row?  Not with a stable or volatile
 * function (a cursor's next fetch may see another value), a user's function
 * (costly, or says it ran), a subquery (its volatile functions are hidden
 * in its own plan, and it runs again), or a conversion through a type's
 * output function (float8out is immutable yet reads extra_float_digits).
 */
static bool
recomputes_differently(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, CoerceViaIO))
		return true;
	return expression_tree_walker(node, recomputes_differently, context);
}

static bool
computed_alike_again(Node *expr)
{
	return !contain_mutable_functions(expr) &&
		!contain_subplans(expr) &&
		!ssdkit_calls_user_functions(expr, NULL) &&
		!recomputes_differently(expr, NULL);
}

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

		/*
		 * Above us the planner computes the query's sort expressions again
		 * from each fetched row (our output is the relation's columns): a
		 * key other than a column must give the same value a second time
		 * and cost little, or the built-in Sort, which computes it once,
		 * is the right plan.  (A stable function may change between a
		 * cursor's fetches; a user's function may be costly or say it ran.)
		 */
		if (!IsA(strip_implicit_coercions((Node *) found->em_expr), Var) &&
			!computed_alike_again((Node *) found->em_expr))
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
	SsdkitQdttApi *api = ssdkit_qdtt_api(1);
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

	if (api != NULL &&
		api->page_cost(rel->reltablespace, Max(rel->pages, 1), queue_depth,
					   &cost))
	{
		double		seq;

		if (api->page_cost(rel->reltablespace, 1, 1, &seq))
			*seq_cost = seq;
		*source = "qdtt model";
		return cost;
	}
	*source = "random_page_cost";
	return spc_random;
}

/*
 * Page reads the fetch makes through one level of cache, for N rows of a
 * relation of R rows on T pages, visited in an order unrelated to the
 * physical one.
 *
 * Unlike an index scan's fetches (which cost_index prices with Mackert and
 * Lohman's formula for N fetches drawn with replacement), the fetch visits
 * each selected row exactly once: with one row per page it touches every
 * page, where Mackert-Lohman would expect a third of them never to be
 * drawn.  So we count the D distinct pages holding the N rows (drawn
 * without replacement: D = T * (1 - (1 - N/R)^(R/T))), and let every visit
 * miss with the probability that its page is not cached: a first visit
 * finds its page with probability first_hit (what the cache held when the
 * pair scan ended), a later visit with probability capacity / D (an LRU
 * cache of that many pages over D pages visited uniformly at random holds
 * the most recent ones).
 */
static double
fetch_page_reads(double N, double R, double T, double first_hit,
				 double capacity)
{
	double		D;

	T = Max(T, 1.0);
	R = Max(R, N);
	N = Min(N, R);
	D = T * (1.0 - pow(1.0 - N / Max(R, 1.0), R / T));
	D = Min(Max(D, Min(N, 1.0)), T);
	return D * (1.0 - Min(1.0, first_hit)) +
		(N - D) * (1.0 - Min(1.0, capacity / Max(D, 1.0)));
}

/*
 * What the caches will hold of the relation when the fetch starts, after
 * the pair scan has streamed the whole relation through them.
 *
 * shared_buffers: a seq scan of a relation larger than a quarter of the pool
 * reads through a small ring (GetAccessStrategy(BAS_BULKREAD)), so it leaves
 * the pool as it was: the share the residency sampler counted there.  A
 * smaller relation is read into the pool whole.  Repeat visits of the fetch
 * use the whole pool.
 *
 * Any cache (shared_buffers or the OS page cache): the OS keeps what the
 * pair scan read as far as its memory allows: the caches' size,
 * ssdkit_cache_size(), effective_cache_size where the DBA set it, else
 * measured (the memory cgroup's limit or the machine's available memory).
 * The relation's resident pages fit, whatever the number says.  Where the
 * size is only effective_cache_size's default, a guess, the sampler's count
 * of the resident share is taken as the capacity when the relation is
 * resident to a fair degree; a relation nobody has read yet (cold) tells
 * nothing about capacity, and then the default is used, as when the
 * sampler is not running (qdtt_costing not loaded, or qdtt.use_residency
 * off).  In between the two blend, so that a relation getting warmer does
 * not jump in price.  A relation resident as a whole shows no limit either.
 *
 * Temp files (of the built-in Sort, and of the pair sort) go through the OS
 * page cache alone.  The relation's pages already there stay ahead of
 * them: the scan reads them again, and the kernel keeps pages used twice
 * (its active list) in preference to pages written once.  The rest of the
 * relation is read once, as each temp page is written once, and competes
 * with the temp pages as an equal.
 */
#define RESIDENT_MEASURES_CAPACITY 0.10
#define FULLY_RESIDENT 0.98

static void
fetch_caches(RelOptInfo *rel, const RelFileNode *node, FetchCaches *caches)
{
	SsdkitQdttApi *api = ssdkit_qdtt_api(SSDKIT_QDTT_API_RESIDENCY);
	double		T = Max(rel->pages, 1);
	double		sb = 0,
				os = 0;

	caches->measured = api != NULL &&
		api->residency(node, MAIN_FORKNUM, &sb, &os);
	caches->sb_fraction = sb;
	caches->os_fraction = os;

	caches->sb_capacity = NBuffers;
	if (T <= NBuffers / 4)
		caches->sb_first_hit = 1.0;
	else if (caches->measured)
		caches->sb_first_hit = sb;
	else
		caches->sb_first_hit = Min(1.0, NBuffers / T);

	ssdkit_cache_size(&caches->size);
	caches->any_capacity = caches->size.total_pages;
	if (caches->measured && !caches->size.guessed)
		caches->any_capacity = Max(caches->any_capacity, (sb + os) * T);
	else if (caches->measured)
	{
		double		weight = Min(1.0, (sb + os) / RESIDENT_MEASURES_CAPACITY);

		caches->any_capacity = weight * (sb + os) * T +
			(1.0 - weight) * caches->size.total_pages;

		/* All of it resident: no sign of a limit below the default. */
		if (sb + os >= FULLY_RESIDENT)
			caches->any_capacity = Max(T, caches->size.total_pages);
	}
	caches->any_capacity = Max(caches->any_capacity, NBuffers);
	caches->any_first_hit = Max(caches->sb_first_hit,
								Min(1.0, caches->any_capacity / T));

	caches->temp_room = Max(caches->size.os_pages - os * T, 0.0);
	caches->temp_rivals = Max(T - os * T, 0.0) / 2;
}

/*
 * Temp page accesses (each written once and read once per merge pass) of
 * an external sort of "tuples" rows of "width" bytes, as cost_sort() counts
 * them; 0 when the sort fits in work_mem.
 */
static double
sort_temp_pages(double tuples, int width)
{
	double		input_bytes = tuples * (MAXALIGN(width) +
										MAXALIGN(SizeofHeapTupleHeader));

	if (input_bytes <= (double) work_mem * 1024.0)
		return 0.0;
	return ceil(input_bytes / BLCKSZ);
}

static double
sort_temp_page_accesses(double tuples, int width)
{
	double		input_bytes = tuples * (MAXALIGN(width) +
										MAXALIGN(SizeofHeapTupleHeader));
	double		mem_bytes = (double) work_mem * 1024.0;
	double		npages,
				nruns,
				mergeorder,
				log_runs;

	if (input_bytes <= mem_bytes)
		return 0.0;
	npages = ceil(input_bytes / BLCKSZ);
	nruns = input_bytes / mem_bytes;
	mergeorder = tuplesort_merge_order((int64) work_mem * 1024);
	log_runs = (nruns > mergeorder) ? ceil(log(nruns) / log(mergeorder)) : 1.0;
	return 2.0 * npages * log_runs;
}

/*
 * The built-in Sort and the pair sort, on equal footing.
 *
 * cost_sort() prices every temp page access as a device read
 * (3/4 seq_page_cost + 1/4 random_page_cost).  A temp file goes through the
 * OS page cache: where memory holds it, writing and reading it back costs
 * what a cached page costs, the price we charge the fetch for the same
 * thing (ssd_sort.cached_page_cost); only the rest reaches the device.  A
 * page written in one pass is read back in the next, after the rest of that
 * pass's S temp pages and, on average, half the relation's pages the scan
 * feeding the sort reads into the OS cache (the rivals, fetch_caches()): a
 * cache with room for C pages keeps it with probability C / (S + rivals).
 *
 * The planner compares our path with core's Sort, priced by cost_sort() on
 * the whole rows; our own path is priced by cost_sort() on the pairs.  The
 * correction returned here, added to our path, makes the difference between
 * the two the difference in the same terms: (pair temp accesses - full temp
 * accesses) x the temp page price we believe, plus the fetch.  A cached
 * page is never priced above core's own temp page price.
 */
static double
temp_price_correction(RelOptInfo *rel, double tuples, int pair_width,
					  double rivals, double room)
{
	double		core_price = seq_page_cost * 0.75 + random_page_cost * 0.25;
	double		our_price;
	double		correction;

	double		temp_pages = sort_temp_pages(tuples, rel->reltarget->width);
	double		kept;

	if (temp_pages <= 0)
		return 0.0;
	kept = Min(1.0, room / (temp_pages + rivals));
	our_price = kept * Min(ssd_sort_cached_page_cost, core_price) +
		(1.0 - kept) * core_price;
	correction = (sort_temp_page_accesses(tuples, pair_width) -
				  sort_temp_page_accesses(tuples, rel->reltarget->width)) *
		(our_price - core_price);

	/*
	 * Only ever a surcharge: where the settings price temp pages below a
	 * cached page (seq_page_cost and random_page_cost set for data in
	 * memory), core's Sort is taken at its word.
	 */
	return Max(correction, 0.0);
}

/* Would a Sort of the whole rows fit in work_mem?  Then we have no business. */
static bool
full_sort_fits_in_memory(RelOptInfo *rel)
{
	double		row_bytes = MAXALIGN(rel->reltarget->width) +
		MAXALIGN(SizeofHeapTupleHeader);

	return rel->rows * row_bytes <= (double) work_mem * 1024.0;
}

/*
 * The share of a relation's rows each participant of a parallel plan
 * handles is 1 / divisor: the workers, plus the leader's part, which shrinks
 * as it spends more time gathering (costsize.c's get_parallel_divisor()).
 */
static double
parallel_divisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation && workers > 0)
	{
		double		leader = 1.0 - 0.3 * workers;

		if (leader > 0)
			divisor += leader;
	}
	return Max(divisor, 1.0);
}

/*
 * What it costs the node above to read a fetched row where it lies: in a
 * buffer page, one of thousands visited in random order, so each cache line
 * of the row is a miss in the CPU's caches; the built-in Sort hands out its
 * rows from merge buffers read in sequence.  Measured with a client reading
 * every row (COPY TO), on top of the fetch itself: 0.15 us a row plus 0.6 us
 * a kB, or 1/17 of a cost unit plus 1/4300 a byte at cost_sort's 2.6 us a
 * unit.  Rows fetched in physical order (correlated keys) do not pay it.
 */
static double
scattered_row_cost(int width)
{
	return 0.058 + width / 4300.0;
}

/*
 * The relation's own Seq Scan path of the given degree (0: serial; -1: the
 * first partial one, of any degree), as the planner priced it before us;
 * NULL when there is none.  Where qdtt_costing
 * (loaded before us, as the README orders them) priced it by where the pages
 * are, the built-in Sort above it pays that price: the pair scan, which
 * reads the same pages in the same way, must pay it too, or a warm table's
 * Sort would read its input at memory prices and SSD Sort at the device's.
 */
static Path *
own_seqscan_path(RelOptInfo *rel, int workers)
{
	List	   *paths = workers != 0 ? rel->partial_pathlist : rel->pathlist;
	ListCell   *lc;

	foreach(lc, paths)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (path->pathtype == T_SeqScan && IsA(path, Path) &&
			path->param_info == NULL &&
			(workers < 0 || path->parallel_workers == workers))
			return path;
	}
	return NULL;
}

/* One ordering to offer, resolved once for its serial and parallel paths. */
typedef struct Ordering
{
	List	   *pathkeys;
	SortKeys	keys;
	PathTarget *pairs;			/* the pair: keys, then ctid */
	double		corr2;			/* first key's correlation, squared */
} Ordering;

/*
 * Offer an SSD Sort path producing the relation in the ordering.  With
 * workers = 0 a serial path; otherwise a partial path for Gather Merge: each
 * participant sorts the pairs of its share of a Parallel Seq Scan and
 * fetches its own rows in key order, and Gather Merge merges the
 * participants' ordered streams.  The costs of a partial path are one
 * participant's, as core's are.
 */
static void
add_ssd_sort_path(PlannerInfo *root, RelOptInfo *rel, const Ordering *order,
				  const FetchCaches *caches, int workers)
{
	CustomPath *cpath;
	Path	   *input;
	Path	   *own;
	Path		sort_path;
	double		divisor = workers > 0 ? parallel_divisor(workers) : 1.0;
	double		ntuples = Max(clamp_row_est(rel->rows / divisor), 1.0);
	double		heap_pages = Max(rel->pages, 1);
	double		corr2 = order->corr2;
	double		device_reads,
				buffer_misses,
				pages_correlated,
				visits,
				random_cost,
				seq_cost,
				io_cost,
				cpu_cost;
	int			pair_width = order->pairs->width;
	double		depth = Max(ssd_sort_prefetch_depth, 1);
	const char *source;
	bool		saved_enable_sort = enable_sort;

	/* Project: a (parallel) seq scan of the relation emitting the pairs. */
	input = create_seqscan_path(root, rel, NULL, workers);
	input->pathtarget = order->pairs;
	own = own_seqscan_path(rel, workers);
	if (own != NULL)
	{
		input->startup_cost = own->startup_cost;
		input->total_cost = own->total_cost;
	}

	/*
	 * Sort the pairs.  enable_sort steers the planner away from Sort nodes;
	 * the pair sort is part of this node, switched off by ssd_sort.enable.
	 */
	enable_sort = true;
	cost_sort(&sort_path, root, order->pathkeys, input->total_cost, ntuples,
			  pair_width, 0.0, work_mem, -1.0);
	enable_sort = saved_enable_sort;

	/*
	 * Fetch the rows in key order (see the header comment).  Parallel
	 * participants prefetch at the same time, so the device sees all their
	 * reads in flight.
	 */
	random_cost = fetch_page_cost(rel, depth * divisor, &seq_cost, &source);
	device_reads = fetch_page_reads(ntuples, rel->tuples / divisor,
									heap_pages / divisor,
									caches->any_first_hit,
									caches->any_capacity / divisor);
	buffer_misses = Max(fetch_page_reads(ntuples, rel->tuples / divisor,
										 heap_pages / divisor,
										 caches->sb_first_hit,
										 caches->sb_capacity / divisor),
						device_reads);
	pages_correlated = ceil(heap_pages * Min(1.0, ntuples / Max(rel->tuples, 1.0)));
	io_cost = device_reads * random_cost +
		(buffer_misses - device_reads) * ssd_sort_cached_page_cost;
	io_cost += corr2 * (pages_correlated * seq_cost - io_cost);

	/*
	 * Every change of page in the TID order is a visit: a buffer lookup, a
	 * pin, a share lock and a visibility check, paid whether the page was
	 * cached or not.  In key order uncorrelated with the physical one, each
	 * row is a visit of its own, however many rows share a page: many
	 * narrow (or compressed) rows a page make the fetch cost far more than
	 * the pages it reads.
	 */
	visits = ntuples + corr2 * (pages_correlated - ntuples);
	cpu_cost = visits * ssd_sort_page_visit_cost +
		ntuples * scattered_row_cost(rel->reltarget->width) * (1.0 - corr2);

	/*
	 * With reads in flight, the work on rows whose pages are already in
	 * memory overlaps the device's service of the prefetched ones: only the
	 * share of visits served from memory adds to the time.
	 */
	if (ssd_sort_prefetch_depth > 0)
		cpu_cost *= 1.0 - Min(1.0, (1.0 - corr2) * device_reads / Max(visits, 1.0));
	cpu_cost += ntuples * (cpu_tuple_cost + rel->reltarget->cost.per_tuple) +
		rel->reltarget->cost.startup;

	cpath = ssdkit_base_custom_path(rel, &ssd_sort_path_methods);
	/* the first row waits for its page when a fetch is expected to read one */
	cpath->path.startup_cost = sort_path.startup_cost +
		random_cost * Min(1.0, device_reads / Max(ntuples, 1.0));
	cpath->path.total_cost = sort_path.total_cost + io_cost + cpu_cost +
		temp_price_correction(rel, ntuples, pair_width,
							  caches->temp_rivals / divisor,
							  caches->temp_room / divisor);
	cpath->path.startup_cost = Min(cpath->path.startup_cost, cpath->path.total_cost);
	cpath->path.pathkeys = order->pathkeys;
	/*
	 * A serial SSD Sort runs backward as Sort does, so a cursor over it
	 * scrolls without a Materialize; no mark/restore (a merge join's inner
	 * side gets a Materialize, whose restores cost no heap fetches).
	 */
	cpath->flags = workers > 0 ? 0 : CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	cpath->custom_paths = list_make1(input);
	if (workers > 0)
	{
		/* Parallel aware for its shared EXPLAIN counters; see exec. */
		cpath->path.parallel_aware = true;
		cpath->path.parallel_safe = true;
		cpath->path.parallel_workers = workers;
		cpath->path.rows = ntuples;
	}
	cpath->custom_private = list_make4(order->keys.sort_ops,
									   order->keys.collations,
									   order->keys.nulls_first,
									   makeInteger(pair_width));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%.0f",
													   corr2 * pages_correlated +
													   (1 - corr2) * buffer_misses)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%.0f",
													   corr2 * pages_correlated +
													   (1 - corr2) * device_reads)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%g", random_cost)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeString(pstrdup(source)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeFloat(psprintf("%.0f", visits)));
	cpath->custom_private = lappend(cpath->custom_private,
									makeString(caches->measured ?
											   psprintf("residency sampler (shared_buffers %.0f%%, OS page cache %.0f%%)",
														100 * caches->sb_fraction,
														100 * caches->os_fraction) :
											   pstrdup("effective_cache_size")));
	cpath->custom_private = lappend(cpath->custom_private,
									makeString(psprintf("%.0f MB (%s)",
														caches->size.total_pages * BLCKSZ / (1024.0 * 1024.0),
														caches->size.source)));

	if (workers > 0)
		add_partial_path(rel, &cpath->path);
	else
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
relation_is_eligible(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
					 RelFileNode *node)
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

	/*
	 * Top-N sorts stay in memory; nothing to gain.  A limit known only at
	 * run time (LIMIT $1 in a generic plan) gets the bounded Sort too.
	 */
	if (root->limit_tuples >= 0 ||
		(root->parse->limitCount != NULL && !IsA(root->parse->limitCount, Const)))
		return false;

	/* TIDs must name heap tuples. */
	relation = table_open(rte->relid, NoLock);
	heap = relation->rd_rel->relam == HEAP_TABLE_AM_OID;
	*node = relation->rd_node;
	table_close(relation, NoLock);
	return heap;
}

static void
ssd_sort_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
						  RangeTblEntry *rte)
{
	ListCell   *lc;
	RelFileNode node;
	FetchCaches caches;
	List	   *orderings = NIL;
	int			workers = 0;

	if (prev_set_rel_pathlist_hook)
		(*prev_set_rel_pathlist_hook) (root, rel, rti, rte);

	if (!ssd_sort_enable || !relation_is_eligible(root, rel, rte, &node) ||
		full_sort_fits_in_memory(rel))
		return;

	if (root->query_pathkeys != NIL)
		orderings = list_make1(root->query_pathkeys);
	foreach(lc, merge_orderings(root, rel))
	{
		List	   *pathkeys = (List *) lfirst(lc);

		if (!pathkeys_contained_in(pathkeys, root->query_pathkeys))
			orderings = lappend(orderings, pathkeys);
	}
	if (orderings == NIL)
		return;

	/*
	 * As many workers as the relation's parallel seq scan has (qdtt_costing
	 * may have chosen fewer than core would), else as core would give one.
	 */
	fetch_caches(rel, &node, &caches);
	if (rel->consider_parallel && max_parallel_workers_per_gather > 0)
	{
		Path	   *partial = own_seqscan_path(rel, -1);

		workers = partial != NULL ? partial->parallel_workers :
			compute_parallel_worker(rel, rel->pages, -1,
									max_parallel_workers_per_gather);
	}
	foreach(lc, orderings)
	{
		Ordering	order;
		double		corr;

		order.pathkeys = (List *) lfirst(lc);
		if (!resolve_sort_keys(rel, order.pathkeys, &order.keys))
			continue;
		order.pairs = pair_target(root, rel, &order.keys);
		corr = first_key_correlation(root, rel, &order.keys);
		order.corr2 = corr * corr;

		add_ssd_sort_path(root, rel, &order, &caches, 0);

		/* Workers compute the keys: each must be safe to run there. */
		if (workers > 0 && is_parallel_safe(root, (Node *) order.keys.exprs))
			add_ssd_sort_path(root, rel, &order, &caches, workers);
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
