/*-------------------------------------------------------------------------
 *
 * qdtt_planner.c
 *	  Plan base-relation scans with the QDTT model.
 *
 * PostgreSQL prices a page with one of two scalars (seq_page_cost,
 * random_page_cost) whatever the access pattern, and divides only CPU cost
 * among parallel workers.  With a model for the relation's tablespace we
 * instead price each access pattern's heap pages at the model's cost for
 * its band and queue depth:
 *
 *	 Seq Scan				band 1, queue depth 1
 *	 Parallel Seq Scan		band 1, queue depth = participants (a gain
 *							under qdtt.stop_threshold counts as none)
 *	 Index (Only) Scan		band = heap pages, queue depth 1
 *	 Parallel Index Scan	band = heap pages, queue depth = participants
 *	 Bitmap Heap Scan		band = heap pages, queue depth =
 *							effective_io_concurrency (the prefetch distance)
 *	 Parallel Bitmap Heap	as Parallel Index Scan
 *
 * converted to PostgreSQL's units by page_cost(b, q) = seq_page_cost *
 * QDTT(b, q) / QDTT(1, 1), so CPU costs keep their meaning and a model
 * equal to the stock page costs plans exactly like stock.  CPU costs are
 * fractions of a sequential page read, which is right for the device they
 * were tuned on and far too much next to a slow disk's page;
 * qdtt.cost_unit_us fixes the unit's time instead (the fast device's
 * QDTT(1, 1), say), putting every device and the CPU on one scale.
 *
 * set_rel_pathlist_hook runs after core built and pruned the paths with its
 * own costs, so recosting the survivors would miss paths QDTT prefers (a
 * parallel index scan dropped against a parallel seq scan, say).  We
 * therefore regenerate the relation's scan paths with core's own path
 * builders, each family in a scratch copy of the RelOptInfo under page
 * costs set for that family's pattern, and move each family's survivors
 * into the relation, where add_path() compares them on their QDTT costs.
 * Core's costing functions do the arithmetic, so every feature they model
 * (correlation, index-only visibility, caching, disabled plan types) is
 * kept.  Index pages read through amcostestimate are priced at the heap's
 * band, a simplification.
 *
 * Parallel index scans get the worker count the model says is worth it:
 * the maximum beneficial queue depth minus the leader, capped by
 * max_parallel_workers_per_gather, the table's parallel_workers and the
 * queue-depth budget (below).  Parallel seq scans get one partial path per
 * worker count up to the number of CPUs (a seq scan is CPU-bound; the
 * thesis used #cores), and add_partial_path keeps the cheapest.
 *
 * Queue-depth budget (qdtt.queue_depth_budget, the thesis's future work):
 * a query planned while N client backends are running statements (this one
 * included) may assume at most budget / N outstanding reads: every queue
 * depth used for costing, and the participants of a parallel index scan,
 * are capped at that share.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/amapi.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/spccache.h"
#include "utils/timestamp.h"

#include "qdtt_costing.h"
#include "ssdkit_qdtt.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* A sequential pass finds the page cache's share only above this. */
#define SEQ_CACHED_FRACTION		0.98

/*
 * A relation the page cache holds in pieces breaks a sequential pass's
 * readahead (see apply_residency): at least this share of it cached, in
 * this many pieces or more, the pieces this large on average and the
 * uncached runs between them this short.  Measured with 1 MB pieces and
 * runs; scattered single pages (what index lookups leave) were not.
 */
#define RESTART_MIN_CACHED_FRACTION	0.05
#define RESTART_MIN_GAPS			4
#define RESTART_MIN_PIECE_BYTES		(256 * 1024)
#define RESTART_MAX_RUN_BYTES		(8 * 1024 * 1024)

List	   *qdtt_capture = NIL;
bool		qdtt_capturing = false;
MemoryContext qdtt_capture_cxt = NULL;
int			qdtt_capture_round = 0;

/* What the regeneration of one relation needs to know. */
typedef struct QdttRelPlan
{
	const QdttModel *model;
	double		unit;			/* the user's seq_page_cost */
	double		unit_us;		/* the time "unit" stands for */
	double		heap_band;		/* pages of the heap */
	double		qd_share;		/* queue-depth budget share */
	double		bitmap_qd;
	bool		bitmap_prefetch;	/* bitmap heap scans prefetch */
	bool		bitmap_prefetch_gain;	/* prefetching gains from QD */
	bool		parallel_gain;	/* parallel index/bitmap scans gain from QD */
	int			pis_workers;	/* -1: the stock heuristic */
	double		pis_qd;
	int			pfts_max_workers;
	/* where the heap's pages are (see page_cost) */
	bool		has_residency;
	bool		at_most_a_row;	/* the scan returns a row at most */
	double		sb_fraction;	/* in shared_buffers */
	double		os_fraction;	/* in the OS page cache only */
	double		device_fraction;	/* read from the device */
	double		memory_random_us;	/* a random page's memory part, us */
	double		memory_seq_us;	/* a sequential page's memory part, us */
	double		seq_device_fraction;	/* of a sequential page (see
										 * apply_residency) */
	bool		readahead_restarts; /* cached pieces break readahead */
} QdttRelPlan;

/*
 * Online CPUs, for the parallel seq scan degree: read once per backend.
 * glibc's sysconf(_SC_NPROCESSORS_ONLN) opens and parses a /sys file on
 * every call, which cost a quarter of pgbench -S's throughput when done at
 * every planning.
 */
static int
cpu_count(void)
{
	static int	ncpus = 0;

	if (ncpus == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		ncpus = (n > 0) ? (int) n : 1;
	}
	return ncpus;
}

/*
 * The share of the queue-depth budget a query planned now may assume:
 * budget / (client backends running a statement), at least 1.
 */
static double
queue_depth_share(void)
{
	/*
	 * Counting the backends copies every backend's status entry: once per
	 * transaction would be at every simple-protocol statement, 1% of
	 * pgbench -S's time.  The count is a load estimate; a tenth of a second
	 * old is as good.
	 */
	static double cached_share = 0;
	static int	cached_budget = 0;
	static TimestampTz cached_at = 0;
	TimestampTz now;
	int			n,
				i,
				active = 0;

	if (qdtt_queue_depth_budget <= 0)
		return (double) QDTT_MAX_QUEUE_DEPTH_LIMIT * 1024;
	now = GetCurrentTimestamp();
	if (cached_share > 0 && cached_budget == qdtt_queue_depth_budget &&
		now - cached_at < 100 * 1000 && now >= cached_at)
		return cached_share;
	n = pgstat_fetch_stat_numbackends();
	for (i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *l = pgstat_fetch_stat_local_beentry(i);

		if (l != NULL && l->backendStatus.st_backendType == B_BACKEND &&
			l->backendStatus.st_state == STATE_RUNNING)
			active++;
	}
	active = Max(active, 1);
	cached_share = Max(1.0, (double) (qdtt_queue_depth_budget / active));
	cached_budget = qdtt_queue_depth_budget;
	cached_at = now;
	return cached_share;
}

/*
 * Page cost of the model in PostgreSQL units for the user's seq_page_cost
 * (units(): microseconds of the model in planner cost units).  With the relation's residency, a page read is a mix: the fraction in
 * shared_buffers at the model's hit cost, the fraction only in the OS page
 * cache at its copy cost, and the rest from the device at QDTT(band, qd).
 * How many pages a scan reads stays core's business (index scans' re-reads
 * of one page are Mackert-Lohman's, with effective_cache_size): residency
 * prices each read, it does not remove reads, so caching is not counted
 * twice.
 */
static double
units(const QdttRelPlan *p, double us)
{
	return p->unit * us / p->unit_us;
}

/* A page's device part in microseconds (band 1 is sequential). */
static double
device_us(const QdttRelPlan *p, double band, double qd)
{
	return (band <= 1 ? p->seq_device_fraction : p->device_fraction) *
		qdtt_model_cost(p->model, band, Min(qd, p->qd_share));
}

/* A page's memory part in microseconds. */
static double
memory_us(const QdttRelPlan *p, double band)
{
	return (band <= 1) ? p->memory_seq_us : p->memory_random_us;
}

static double
page_cost(const QdttRelPlan *p, double band, double qd)
{
	return units(p, device_us(p, band, qd) + memory_us(p, band));
}

/* The device's share of page_cost(band, qd) (qdtt_explain's I/O split). */
static double
device_share(const QdttRelPlan *p, double band, double qd)
{
	double		dev = device_us(p, band, qd),
				mem = memory_us(p, band);

	return (dev + mem > 0) ? dev / (dev + mem) : 1.0;
}

/*
 * The unit and queue-depth share every page_cost() of a model needs: cost
 * units of the user's seq_page_cost, one of them being QDTT(1, 1) (or
 * qdtt.cost_unit_us), and the budget's share for a query planned now.
 */
static void
init_rel_plan(QdttRelPlan *p, const QdttModel *model)
{
	p->model = model;
	p->unit = seq_page_cost;
	p->unit_us = (qdtt_cost_unit_us > 0) ? qdtt_cost_unit_us :
		QDTT_POINT(model, 0, 0);
	p->qd_share = queue_depth_share();
	p->has_residency = false;
	p->sb_fraction = p->os_fraction = 0;
	p->device_fraction = p->seq_device_fraction = 1;
	p->memory_random_us = p->memory_seq_us = 0;
	p->readahead_restarts = false;
}

/*
 * Price the relation's pages by where the residency sampler last found its
 * main fork (qdtt_residency.c), when the model has memory costs (models
 * calibrated before they existed have none) and qdtt.use_residency is on.
 * A relation the sampler has not seen (new, rewritten, or the sampler not
 * running) is priced as device reads, as without residency.  The heap's
 * residency prices the index pages too: amcostestimate reads
 * random_page_cost for both, and an index is usually at least as resident
 * as its heap.
 */
static void
apply_residency(QdttRelPlan *p, Oid relid, double pages)
{
	const QdttModel *m = p->model;
	Relation	r;
	RelFileNode node;
	double		sb,
				os,
				gaps_per_block,
				cached;

	/* a model without memory points (made before 0.2) has all of them 0 */
	if (!qdtt_use_residency || m->sb_random_us <= 0 || m->sb_seq_us <= 0 ||
		m->os_random_us <= 0 || m->os_seq_us <= 0)
		return;
	r = RelationIdGetRelation(relid);	/* the planner holds a lock */
	if (!RelationIsValid(r))
		return;
	node = r->rd_node;
	RelationClose(r);
	if (!qdtt_residency_fractions(&node, MAIN_FORKNUM, &sb, &os, &gaps_per_block))
		return;
	p->has_residency = true;
	p->sb_fraction = sb;
	p->os_fraction = os;
	p->device_fraction = Max(1.0 - sb - os, 0);
	p->memory_random_us = sb * m->sb_random_us + os * m->os_random_us;
	p->memory_seq_us = sb * m->sb_seq_us + os * m->os_seq_us;
	p->seq_device_fraction = p->device_fraction;

	/*
	 * A sequential pass over a relation the page cache holds only part of
	 * reads the missing pages into a cache that is full (else they would be
	 * cached), evicting the least recently used pages first, which are as
	 * likely as not the relation's own cached ones further on: the pass
	 * floods the cache and finds little of it (measured: a seq scan of a
	 * half-cached table ran as slowly as a cold one, and one of a table 78%
	 * cached took 9.3 s on a disk where a bitmap heap scan of a fifth of it
	 * took 25 ms: each read evicts the cached page the scan needs next).
	 * Its page-cache share is priced as device reads unless nearly all the
	 * relation is cached; its
	 * shared_buffers share stays (a large scan reads through a ring that
	 * evicts nothing).
	 */
	if (sb + os < SEQ_CACHED_FRACTION)
	{
		p->memory_seq_us = sb * m->sb_seq_us;
		p->seq_device_fraction = 1.0 - sb;
	}

	/*
	 * Where the cached pages lie in pieces between short runs of uncached
	 * ones, a sequential pass meets the device again and again, and the
	 * kernel's readahead starts small at each run (it learns nothing from
	 * page-cache hits): a lone scan waits for those reads and then does its
	 * work, one after the other.  Over a relation uncached throughout, its
	 * readahead runs ahead of it and hides much of the waiting.  Measured
	 * under a memory cap, a table with every other MB cached: a serial seq
	 * scan took 190 ms, its read time plus its CPU time (105 + 90), and two
	 * participants 135 ms; uncached, 140-185 ms against 125-185 ms.
	 */
	cached = sb + os;			/* the page cache's count */
	if (cached >= RESTART_MIN_CACHED_FRACTION && cached < SEQ_CACHED_FRACTION &&
		gaps_per_block * pages >= RESTART_MIN_GAPS &&
		cached / gaps_per_block * BLCKSZ >= RESTART_MIN_PIECE_BYTES &&
		p->device_fraction / gaps_per_block * BLCKSZ < RESTART_MAX_RUN_BYTES)
		p->readahead_restarts = true;
}

/*
 * A page of a Parallel Seq Scan with "qd" participants, as the calibration's
 * "qd" concurrent streams measured it.  Streams that interleave chunks of
 * one file gain less from one another than random reads do, and a small
 * measured gain is within the noise of a sequential point: as in the
 * early-stop rule, a gain under qdtt.stop_threshold counts as none.  A loss
 * always counts (under memory pressure, interleaved streams cut each other's
 * readahead short).
 */
static double
parallel_seq_device_us(const QdttRelPlan *p, double qd)
{
	double		serial = device_us(p, 1.0, 1.0);
	double		parallel = device_us(p, 1.0, qd);
	double		calibrated = (parallel > serial * (1.0 - qdtt_stop_threshold)) ?
		Max(parallel, serial) : parallel;

	/*
	 * Where readahead restarts at every uncached run (apply_residency),
	 * every stream reads in short windows anyway, and on a device that
	 * serves requests in parallel the streams cost one another nothing
	 * (measured under a memory cap, every other MB of a file cached: 1, 2
	 * and 3 streams read it in 101-105, 113-140 and 100-104 ms; the same
	 * file uncached, 2 streams 1.3x one).  A disk that serves one request
	 * at a time still pays for their seeks between the streams.
	 */
	if (p->readahead_restarts && p->model->max_beneficial_qd > 1)
		return Min(calibrated, serial);
	return calibrated;
}

/*
 * A page from memory costs a copy and a buffer's work, CPU that the
 * participants share, as many at once as there are CPUs (core divides only
 * its CPU costs, and would charge every cached page in full).
 */
static double
parallel_seq_memory_us(const QdttRelPlan *p, double qd)
{
	return memory_us(p, 1.0) / Min(qd, (double) cpu_count());
}

static double
parallel_seq_page_cost(const QdttRelPlan *p, double qd)
{
	return units(p, parallel_seq_device_us(p, qd) + parallel_seq_memory_us(p, qd));
}

/* The device's share of parallel_seq_page_cost(qd) (qdtt_explain's split). */
static double
parallel_seq_device_share(const QdttRelPlan *p, double qd)
{
	double		dev = parallel_seq_device_us(p, qd),
				mem = parallel_seq_memory_us(p, qd);

	return (dev + mem > 0) ? dev / (dev + mem) : 1.0;
}

static void
set_page_costs(const QdttRelPlan *p, double random_qd, double seq_qd)
{
	random_page_cost = page_cost(p, p->heap_band, random_qd);
	seq_page_cost = page_cost(p, 1.0, seq_qd);
}

/* Does core's scan-path machinery (which we regenerate) build this path? */
static bool
is_regenerated(Path *path)
{
	switch (path->pathtype)
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		default:
			return false;
	}
}

/* Paths built in a scratch RelOptInfo must point at the real one. */
static void
reparent(Path *path, RelOptInfo *rel)
{
	ListCell   *lc;

	path->parent = rel;
	if (IsA(path, BitmapHeapPath))
		reparent(((BitmapHeapPath *) path)->bitmapqual, rel);
	else if (IsA(path, BitmapAndPath))
	{
		foreach(lc, ((BitmapAndPath *) path)->bitmapquals)
			reparent((Path *) lfirst(lc), rel);
	}
	else if (IsA(path, BitmapOrPath))
	{
		foreach(lc, ((BitmapOrPath *) path)->bitmapquals)
			reparent((Path *) lfirst(lc), rel);
	}
}

/*
 * Build core's index paths (plain, index-only, bitmap, and their partial
 * forms) into a scratch copy of "rel" under the current page-cost settings.
 */
static RelOptInfo *
index_paths_in_scratch(PlannerInfo *root, RelOptInfo *rel, bool parallel)
{
	RelOptInfo *scratch = makeNode(RelOptInfo);

	memcpy(scratch, rel, sizeof(RelOptInfo));
	scratch->pathlist = NIL;
	scratch->partial_pathlist = NIL;
	scratch->consider_parallel = parallel && rel->consider_parallel;
	create_index_paths(root, scratch);
	/* get_baserel_parampathinfo() may have added entries; keep them. */
	rel->ppilist = scratch->ppilist;
	return scratch;
}

typedef struct Candidate
{
	Path	   *path;
	bool		partial;
	double		band;
	double		qd;
	Cost		memory_work;	/* charge_memory_work's addition */
} Candidate;

static List *
add_candidate(List *list, Path *path, RelOptInfo *rel, bool partial,
			  double band, double qd)
{
	Candidate  *c = palloc(sizeof(Candidate));

	reparent(path, rel);
	c->path = path;
	c->partial = partial;
	c->band = band;
	c->qd = qd;
	c->memory_work = 0;
	return lappend(list, c);
}

/*
 * The partial paths of a parallel scratch round (index_paths_in_scratch),
 * those of one node type only unless "type" is T_Invalid.
 */
static List *
add_partial_candidates(List *cands, RelOptInfo *scratch, RelOptInfo *rel,
					   const QdttRelPlan *p, NodeTag type)
{
	ListCell   *lc;

	foreach(lc, scratch->partial_pathlist)
		if (type == T_Invalid || nodeTag(lfirst(lc)) == type)
			cands = add_candidate(cands, lfirst(lc), rel, true,
								  p->heap_band, p->pis_qd);
	return cands;
}

/*
 * Does the model price a bitmap heap scan's pages as a serial scan's?  Then
 * regeneration needs no round of its own for bitmap paths.
 */
static bool
bitmap_priced_as_serial(const QdttRelPlan *p)
{
	/*
	 * With residency, paths carry charges core does not know of
	 * (charge_memory_work): a bitmap path index paths pruned in the serial
	 * round may win once they are added, so bitmap paths get a round of
	 * their own.  Not for a scan of a row at most (pgbench -S's, planned at
	 * every execution): an index scan of one row re-visits nothing, so its
	 * charges cannot lift it above a bitmap scan it beat.  A prefetching
	 * bitmap scan's pages cost random reads however dense the bitmap (see
	 * regenerate_paths), which core's prices do not say, except for a row
	 * at most: one page, which core prices as a random read anyway.
	 */
	return !p->bitmap_prefetch_gain && (!p->bitmap_prefetch || p->at_most_a_row) &&
		(!p->has_residency || p->at_most_a_row) &&
		page_cost(p, p->heap_band, p->bitmap_qd) == page_cost(p, p->heap_band, 1);
}

/*
 * Can no parallel index path of rel win?  A query of this one relation
 * alone, expected to return at most a row, whose cheapest serial candidate
 * costs less than starting parallel workers (every Gather pays
 * parallel_setup_cost): pgbench -S's and TPC-B's statements, planned at
 * every execution with the simple protocol, skip that round.
 */
static bool
parallel_cannot_pay(PlannerInfo *root, RelOptInfo *rel, List *cands)
{
	Cost		cheapest = -1;
	ListCell   *lc;

	/* a partition's partial paths share one Gather with its siblings' */
	if (root->parent_root != NULL || rel->rows > 1 ||
		rel->reloptkind != RELOPT_BASEREL ||
		bms_membership(root->all_baserels) != BMS_SINGLETON)
		return false;
	foreach(lc, cands)
	{
		Path	   *path = ((Candidate *) lfirst(lc))->path;

		if (cheapest < 0 || path->total_cost < cheapest)
			cheapest = path->total_cost;
	}
	return cheapest >= 0 && cheapest < parallel_setup_cost;
}

/*
 * Participants' share of a parallel path's per-tuple work, as core divides
 * CPU costs (costsize.c's get_parallel_divisor, which is static).
 */
static double
parallel_divisor(Path *path)
{
	double		divisor = path->parallel_workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - (0.3 * path->parallel_workers);

		if (leader > 0)
			divisor += leader;
	}
	return Max(divisor, 1.0);
}

/*
 * The memory part of a parallel index path's heap page reads: the path
 * costed again (on copies) with only the memory part of the page prices it
 * was built with (regenerate_paths' parallel round), less the path costed
 * with page reads free.  Core divides only CPU costs among a parallel index
 * scan's participants and charges every page read in full, which is right
 * for the device's share (the queue depth prices it) but not for heap
 * pages served from memory: a buffer copy and its pin are CPU work, spread
 * over the participants like the tuples'.  The index's own pages are left
 * out: a participant reads the next leaf page while it holds the shared
 * scan (nbtree releases it only once the page is read), so those reads are
 * serial.
 */
static Cost
parallel_index_memory_io(PlannerInfo *root, const QdttRelPlan *p, IndexPath *ip)
{
	IndexPath  *with = makeNode(IndexPath);
	IndexPath  *without = makeNode(IndexPath);
	double		saved_random = random_page_cost;
	double		saved_seq = seq_page_cost;
	Cost		io;

	memcpy(with, ip, sizeof(IndexPath));
	memcpy(without, ip, sizeof(IndexPath));
	random_page_cost = units(p, memory_us(p, p->heap_band));
	seq_page_cost = (p->parallel_gain || p->bitmap_prefetch) ?
		random_page_cost : units(p, memory_us(p, 1.0));
	/* not as a partial path: that would pick the worker count again */
	cost_index(with, root, 1.0, false);
	random_page_cost = seq_page_cost = 0;
	cost_index(without, root, 1.0, false);
	random_page_cost = saved_random;
	seq_page_cost = saved_seq;
	io = (with->path.total_cost - without->path.total_cost) -
		(with->indextotalcost - without->indextotalcost);
	pfree(with);
	pfree(without);
	return Max(io, 0);
}

/*
 * What core does not charge for work in memory, added to a candidate of a
 * relation priced by residency (apply_residency):
 *
 * An index scan visits a heap buffer for every tuple it fetches; core
 * charges only the pages it reads (index_pages_fetched: re-visits of a page
 * are cache hits, free).  On a device that is right, a hit being nothing
 * next to a read.  In memory it is not: every visit is a buffer lookup,
 * pin and lock (measured: a 20% index scan of a cached 46k-page table
 * visited 600k tuples in 730 ms, a seq scan of all 3M took 170 ms).  Each
 * re-visit is charged as a visit of the relation's memory-resident pages.
 *
 * Per tuple, each scan type costs what the calibration's tuple probe
 * measured (qdtt_memory.c); where core's CPU constants charge less (the
 * probe's query: cpu_tuple_cost and two operators, plus the index tuple
 * and its operator for index and bitmap fetches), the difference is added.
 * A bitmap heap scan also pays per page for more than the buffer visit its
 * page price covers (iterating the bitmap, pruning, collecting the page's
 * visible tuples: measured 1.3 us a page against a 0.4 us visit), which
 * core prices as a plain page read: a sparse bitmap over a cached table
 * then looks far cheaper than the seq scan that beats it.
 *
 * Parameterized paths (core prices their repeated loops itself) are left
 * alone, so on cached data a nested loop's inner index scans are priced
 * as core prices them; a parallel path's work is shared by its
 * participants.
 */
static Cost
charge_memory_work(PlannerInfo *root, RelOptInfo *rel, const QdttRelPlan *p,
				   Path *path)
{
	const QdttModel *m = p->model;
	double		core_seq = cpu_tuple_cost + 2 * cpu_operator_cost;
	double		core_fetch = core_seq + cpu_index_tuple_cost + cpu_operator_cost;
	double		extra = 0;

	/*
	 * A re-visit finds the page in shared_buffers as often as a first
	 * visit does: in a pool that holds only part of the relation, visits in
	 * random order evict each other's pages.  Re-visits of pages the
	 * device served are not charged (core's Mackert-Lohman count of reads
	 * already covers them).
	 */
	double		revisit_us = p->memory_random_us;

	/*
	 * Pages read from the device bring their CPU work with them, but a scan
	 * that prefetches or rides readahead does that work while its next
	 * reads are in flight: only the share served from memory adds it.
	 */
	double		memory_share = 1.0 - p->device_fraction;
	Cost		serial = 0;		/* work the participants cannot share */
	Cost		shared_back = 0;	/* page reads from memory they share */

	if (!p->has_residency || path->param_info != NULL || memory_share <= 0)
		return 0;
	if (path->pathtype == T_SeqScan)
		extra = rel->tuples * Max(units(p, m->seq_tuple_us) - core_seq, 0);
	else if (IsA(path, IndexPath))
	{
		IndexPath  *ip = (IndexPath *) path;
		double		tuples = clamp_row_est(ip->indexselectivity * rel->tuples);
		double		pages = index_pages_fetched(tuples, rel->pages,
												ip->indexinfo->pages, root);
		double		revisits = Max(tuples - pages, 0);

		/*
		 * Tuples in index order that sit together in the heap reuse the
		 * pinned buffer (the fetch keeps it while the block stays the same):
		 * only the uncorrelated share re-visits, as core interpolates its
		 * I/O by the correlation squared.
		 */
		if (revisits > 0)
		{
			amcostestimate_function estimate =
				(amcostestimate_function) ip->indexinfo->amcostestimate;
			Cost		startup,
						total;
			Selectivity selec;
			double		correlation = 0,
						index_pages;

			estimate(root, ip, 1.0, &startup, &total, &selec, &correlation, &index_pages);
			revisits *= 1.0 - correlation * correlation;
		}
		extra = revisits * units(p, revisit_us) +
			tuples * Max(units(p, m->index_tuple_us) - core_fetch, 0);
		if (path->pathtype == T_IndexOnlyScan)
			extra *= 1.0 - rel->allvisfrac;

		/*
		 * A parallel index scan's participants share its pages from memory
		 * as they share its tuples (no more of them than CPUs): core
		 * charged those reads in full, so the part the others take off
		 * the slowest participant's time is handed back.  Measured warm,
		 * 2 CPUs: 2 workers and the leader ran 1.5-1.8x faster than a
		 * serial index scan once started (about 5 ms), where core's full
		 * page charge had them lose to a serial bitmap heap scan.
		 */
		if (path->parallel_workers > 0)
		{
			double		share = Min(parallel_divisor(path), (double) cpu_count());

			shared_back = parallel_index_memory_io(root, p, ip) * (1.0 - 1.0 / share);
		}
	}
	else if (IsA(path, BitmapHeapPath))
	{
		Cost		ignored;
		double		tuples,
					pages;

		/* the pages and tuples it visits, lossy pages' rechecks included */
		pages = compute_bitmap_pages(root, rel, ((BitmapHeapPath *) path)->bitmapqual,
									 1.0, &ignored, &tuples);
		extra = tuples * Max(units(p, m->bitmap_tuple_us) - core_fetch, 0);

		/*
		 * The page work is not shared: a parallel bitmap heap scan's
		 * participants take pages one at a time from a shared iterator
		 * under a lock (measured on 2 CPUs, cached: one worker and the
		 * leader 1.1x a serial scan, where a parallel seq scan gained 1.6x).
		 */
		serial = pages * units(p, Max(m->bitmap_page_us - m->sb_random_us, 0));
	}
	/* work in memory is CPU work: no more participants than CPUs share it */
	if (path->parallel_workers > 0)
		extra /= Min(parallel_divisor(path), (double) cpu_count());
	extra = (extra + serial) * memory_share - shared_back;
	path->total_cost += extra;
	return extra;
}

/*
 * A Parallel Seq Scan over a relation whose readahead restarts at every
 * uncached run (apply_residency): while one participant waits for a read,
 * the others do their work, so the path takes the longer of its device
 * reads and its other costs, not their sum.  The shorter is handed back
 * (as a negative memory_work in qdtt_explain).  A serial scan keeps the
 * sum, which is what it measured; so does a parallel scan elsewhere, where
 * a lone scan's readahead overlaps as much (measured uncached: 1 and 2
 * participants within each other's noise).
 */
static Cost
overlap_device_waits(RelOptInfo *rel, const QdttRelPlan *p, Path *path,
					 double qd)
{
	Cost		device,
				rest,
				back;

	/* one participant (the leader not taking part) waits, then works */
	if (path->parallel_workers + (parallel_leader_participation ? 1 : 0) < 2)
		return 0;
	device = rel->pages * units(p, parallel_seq_device_us(p, qd));
	rest = path->total_cost - path->startup_cost - device;
	back = Min(device, Max(rest, 0));

	path->total_cost -= back;
	return back;
}

/* Heap pages a path is expected to read (for qdtt_explain). */
static double
heap_pages_of(PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	if (path->pathtype == T_SeqScan)
		return rel->pages;
	if (IsA(path, IndexPath))
	{
		IndexPath  *ip = (IndexPath *) path;
		double		tuples = clamp_row_est(ip->indexselectivity * rel->tuples);

		return index_pages_fetched(tuples, rel->pages, ip->indexinfo->pages, root);
	}
	if (IsA(path, BitmapHeapPath))
	{
		Cost		c;
		double		t;

		return compute_bitmap_pages(root, rel, ((BitmapHeapPath *) path)->bitmapqual,
									1.0, &c, &t);
	}
	return 0;
}

static Oid
first_index_of(Path *path)
{
	if (IsA(path, IndexPath))
		return ((IndexPath *) path)->indexinfo->indexoid;
	if (IsA(path, BitmapHeapPath))
		return first_index_of(((BitmapHeapPath *) path)->bitmapqual);
	if (IsA(path, BitmapAndPath))
		return first_index_of(linitial(((BitmapAndPath *) path)->bitmapquals));
	if (IsA(path, BitmapOrPath))
		return first_index_of(linitial(((BitmapOrPath *) path)->bitmapquals));
	return InvalidOid;
}

static const char *
kind_of(Path *path)
{
	bool		par = path->parallel_aware;

	switch (path->pathtype)
	{
		case T_SeqScan:
			return par ? "Parallel Seq Scan" : "Seq Scan";
		case T_IndexScan:
			return par ? "Parallel Index Scan" : "Index Scan";
		case T_IndexOnlyScan:
			return par ? "Parallel Index Only Scan" : "Index Only Scan";
		case T_BitmapHeapScan:
			return par ? "Parallel Bitmap Heap Scan" : "Bitmap Heap Scan";
		case T_TidScan:
			return "Tid Scan";
		default:
			return "other";
	}
}

/* Deep enough copy of a bitmap tree to recost it without touching it. */
static Path *copy_bitmap_tree(Path *path);

static List *
copy_bitmap_list(List *quals)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, quals)
		result = lappend(result, copy_bitmap_tree(lfirst(lc)));
	return result;
}

static Path *
copy_bitmap_tree(Path *path)
{
	if (IsA(path, IndexPath))
	{
		IndexPath  *c = makeNode(IndexPath);

		memcpy(c, path, sizeof(IndexPath));
		return (Path *) c;
	}
	else if (IsA(path, BitmapAndPath))
	{
		BitmapAndPath *c = makeNode(BitmapAndPath);

		memcpy(c, path, sizeof(BitmapAndPath));
		c->bitmapquals = copy_bitmap_list(c->bitmapquals);
		return (Path *) c;
	}
	else
	{
		BitmapOrPath *c = makeNode(BitmapOrPath);

		memcpy(c, path, sizeof(BitmapOrPath));
		c->bitmapquals = copy_bitmap_list(c->bitmapquals);
		return (Path *) c;
	}
}

static void
recost_bitmap_tree(PlannerInfo *root, Path *path)
{
	ListCell   *lc;

	if (IsA(path, IndexPath))
		cost_index((IndexPath *) path, root, 1.0, false);
	else if (IsA(path, BitmapAndPath))
	{
		foreach(lc, ((BitmapAndPath *) path)->bitmapquals)
			recost_bitmap_tree(root, lfirst(lc));
		cost_bitmap_and_node((BitmapAndPath *) path, root);
	}
	else
	{
		foreach(lc, ((BitmapOrPath *) path)->bitmapquals)
			recost_bitmap_tree(root, lfirst(lc));
		cost_bitmap_or_node((BitmapOrPath *) path, root);
	}
}

/*
 * What stock PostgreSQL would charge for this (unparameterized) path: core's
 * costing on a copy, with the page costs and worker settings restored.
 */
static Cost
stock_cost_of(PlannerInfo *root, RelOptInfo *rel, Path *path)
{
	if (IsA(path, IndexPath))
	{
		IndexPath  *c = makeNode(IndexPath);
		int			saved_rel_workers = rel->rel_parallel_workers;

		memcpy(c, path, sizeof(IndexPath));

		/*
		 * A partial path is costed for the degree core takes from rel, and
		 * left as it was where core's own heuristic gives no worker: the
		 * same degree as the path's, then.
		 */
		if (path->parallel_aware)
			rel->rel_parallel_workers = path->parallel_workers;
		cost_index(c, root, 1.0, path->parallel_aware);
		rel->rel_parallel_workers = saved_rel_workers;
		return c->path.total_cost;
	}
	if (IsA(path, BitmapHeapPath))
	{
		BitmapHeapPath *c = makeNode(BitmapHeapPath);

		memcpy(c, path, sizeof(BitmapHeapPath));
		c->bitmapqual = copy_bitmap_tree(c->bitmapqual);
		recost_bitmap_tree(root, c->bitmapqual);
		cost_bitmap_heap_scan(&c->path, root, rel, NULL, c->bitmapqual, 1.0);
		return c->path.total_cost;
	}
	if (path->pathtype == T_SeqScan)
	{
		Path	   *c = makeNode(Path);

		memcpy(c, path, sizeof(Path));
		cost_seqscan(c, root, rel, NULL);
		return c->total_cost;
	}
	return path->total_cost;
}

/*
 * A qdtt_explain() row for a path, with what every row has; appended to
 * qdtt_capture (the caller is in qdtt_capture_cxt) and returned for the
 * costs.
 */
static QdttCandidate *
capture_path(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte, Path *path)
{
	QdttCandidate *q = palloc0(sizeof(QdttCandidate));

	q->relid = rel->relid;
	q->reloid = rte->relid;
	q->kind = kind_of(path);
	q->indexoid = first_index_of(path);
	q->workers = path->parallel_workers;
	q->pages = heap_pages_of(root, rel, path);
	q->path = path;
	q->round = qdtt_capture_round;
	q->eref = rte->eref;
	q->root = root;
	q->parent_root = root->parent_root;
	/* min/max aggregates plan a copy of the query level (same range table) */
	q->replan = root->parent_root != NULL && root->parent_root->parse != NULL &&
		equal(root->parse->rtable, root->parent_root->parse->rtable);
	qdtt_capture = lappend(qdtt_capture, q);
	return q;
}

static void
capture_candidates(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
				   const QdttRelPlan *p, List *cands, double saved_random,
				   double saved_seq, int saved_rel_workers)
{
	MemoryContext old = MemoryContextSwitchTo(qdtt_capture_cxt);
	ListCell   *lc;

	random_page_cost = saved_random;
	seq_page_cost = saved_seq;
	rel->rel_parallel_workers = saved_rel_workers;
	foreach(lc, cands)
	{
		Candidate  *c = lfirst(lc);
		QdttCandidate *q;
		double		io,
					share;

		if (c->path->param_info != NULL || c->path->pathtype == T_TidScan ||
			c->path->pathtype == T_TidRangeScan)
			continue;
		q = capture_path(root, rel, rte, c->path);
		q->band = c->band;
		q->queue_depth = c->qd;
		q->qdtt_cost = c->path->total_cost;
		q->stock_cost = stock_cost_of(root, rel, c->path);
		q->has_qdtt = true;
		q->has_residency = p->has_residency;
		q->sb_fraction = p->sb_fraction;
		q->os_fraction = p->os_fraction;

		/*
		 * The I/O part of the QDTT cost is what is left without page costs
		 * and the memory work; it splits between memory and device as one
		 * page's cost does at the path's band and queue depth.
		 */
		q->memory_work = c->memory_work;
		random_page_cost = 0;
		seq_page_cost = 0;
		io = Max(q->qdtt_cost - c->memory_work - stock_cost_of(root, rel, c->path), 0);
		random_page_cost = saved_random;
		seq_page_cost = saved_seq;
		share = (c->partial && c->path->pathtype == T_SeqScan) ?
			parallel_seq_device_share(p, c->qd) : device_share(p, c->band, c->qd);
		q->io_cost_device = io * share;
		q->io_cost_memory = io - q->io_cost_device;
	}
	MemoryContextSwitchTo(old);
}

/*
 * Rebuild the scan paths of "rel" with QDTT costs (see the file header).
 */
static void
regenerate_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
				 QdttRelPlan *p)
{
	double		saved_random = random_page_cost;
	double		saved_seq = seq_page_cost;
	bool		saved_enable_indexscan = enable_indexscan;
	bool		saved_enable_indexonlyscan = enable_indexonlyscan;
	bool		saved_enable_bitmapscan = enable_bitmapscan;
	int			saved_rel_workers = rel->rel_parallel_workers;
	List	   *kept = NIL;
	List	   *kept_partial = NIL;
	List	   *cands = NIL;
	ListCell   *lc;

	/* Paths other extensions added stay; core's scan paths are rebuilt. */
	foreach(lc, rel->pathlist)
		if (!is_regenerated((Path *) lfirst(lc)))
			kept = lappend(kept, lfirst(lc));
	foreach(lc, rel->partial_pathlist)
		if (!is_regenerated((Path *) lfirst(lc)))
			kept_partial = lappend(kept_partial, lfirst(lc));
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;

	PG_TRY();
	{
		RelOptInfo *scratch;
		RelOptInfo *serial;
		Relids		required_outer = rel->lateral_relids;

		/* Serial: Seq Scan, Index Scan, Index Only Scan, TID scans at QD 1. */
		set_page_costs(p, 1, 1);
		cands = add_candidate(cands, create_seqscan_path(root, rel, required_outer, 0),
							  rel, false, 1, 1);
		serial = index_paths_in_scratch(root, rel, false);
		foreach(lc, serial->pathlist)
			if (IsA(lfirst(lc), IndexPath))
				cands = add_candidate(cands, lfirst(lc), rel, false, p->heap_band, 1);
		create_tidscan_paths(root, rel);	/* straight into rel */

		/*
		 * Bitmap heap scans prefetch effective_io_concurrency pages ahead.
		 * Core prices their pages between random_page_cost and, as the
		 * fraction of the table read grows, seq_page_cost: the readahead a
		 * dense serial scan gets.  But prefetching asks for every page with
		 * its own posix_fadvise, which readahead never merges, so every page
		 * costs a random read at that queue depth, however dense the bitmap
		 * (measured: 16-19 us a page at every density on the SSD tier,
		 * against 3-5 us for a seq scan; on a disk that gains nothing from
		 * the queue, 5 ms a page: a bitmap of 1% of T200's rows, which
		 * visits every page, ran past 10 s where a seq scan took 2.1 s).
		 * Plain index paths are disabled here so that, priced at this
		 * queue depth they do not have, they cannot crowd out bitmap paths.
		 */
		if (bitmap_priced_as_serial(p))
		{
			/*
			 * Bitmap pages cost what serial ones do (no prefetch or a row
			 * at most, and no gain from the queue): the bitmap paths of the
			 * serial round are the ones a round of their own would build,
			 * at the same costs (those index paths pruned there lose to the
			 * same paths here).
			 */
			scratch = serial;
		}
		else
		{
			set_page_costs(p, p->bitmap_qd, 1);
			if (p->bitmap_prefetch)
				seq_page_cost = random_page_cost;
			enable_indexscan = false;
			enable_indexonlyscan = false;
			scratch = index_paths_in_scratch(root, rel, false);
			enable_indexscan = saved_enable_indexscan;
			enable_indexonlyscan = saved_enable_indexonlyscan;
		}
		foreach(lc, scratch->pathlist)
			if (IsA(lfirst(lc), BitmapHeapPath))
				cands = add_candidate(cands, lfirst(lc), rel, false,
									  p->heap_band, p->bitmap_qd);

		/* Parallel index and bitmap scans: QD = participants. */
		if (rel->consider_parallel && required_outer == NULL && p->pis_workers != 0 &&
			!parallel_cannot_pay(root, rel, cands))
		{
			if (p->pis_workers > 0)
				rel->rel_parallel_workers = p->pis_workers;
			set_page_costs(p, p->pis_qd, p->pis_qd);
			/*
			 * Participants read heap pages one request each (see above), as
			 * a prefetching bitmap scan does.
			 */
			if (p->parallel_gain || p->bitmap_prefetch)
				seq_page_cost = random_page_cost;
			if (!p->has_residency || p->at_most_a_row || p->device_fraction >= 1)
			{
				scratch = index_paths_in_scratch(root, rel, true);
				cands = add_partial_candidates(cands, scratch, rel, p, T_Invalid);
			}
			else
			{
				/*
				 * With pages in memory, charge_memory_work charges a
				 * parallel bitmap heap scan its unshared page work and
				 * hands a parallel index scan back its shared page reads,
				 * after the scratch rounds: in one round the one would
				 * prune the other before either charge is known (the way
				 * the serial round keeps bitmap paths apart).
				 */
				enable_bitmapscan = false;
				scratch = index_paths_in_scratch(root, rel, true);
				enable_bitmapscan = saved_enable_bitmapscan;
				cands = add_partial_candidates(cands, scratch, rel, p, T_IndexPath);
				enable_indexscan = false;
				enable_indexonlyscan = false;
				scratch = index_paths_in_scratch(root, rel, true);
				enable_indexscan = saved_enable_indexscan;
				enable_indexonlyscan = saved_enable_indexonlyscan;
				cands = add_partial_candidates(cands, scratch, rel, p, T_BitmapHeapPath);
			}
			rel->rel_parallel_workers = saved_rel_workers;
		}

		/* Parallel seq scans: one partial path per worker count. */
		if (rel->consider_parallel && required_outer == NULL)
		{
			int			w;

			for (w = 1; w <= p->pfts_max_workers; w++)
			{
				double		qd = w + (parallel_leader_participation ? 1 : 0);

				set_page_costs(p, 1, 1);
				seq_page_cost = parallel_seq_page_cost(p, qd);
				cands = add_candidate(cands, create_seqscan_path(root, rel, NULL, w),
									  rel, true, 1, Min(qd, p->qd_share));
			}
		}

		foreach(lc, cands)
		{
			Candidate  *c = lfirst(lc);

			c->memory_work = charge_memory_work(root, rel, p, c->path);
			if (c->partial && c->path->pathtype == T_SeqScan && p->readahead_restarts)
				c->memory_work -= overlap_device_waits(rel, p, c->path, c->qd);
		}

		if (qdtt_capturing)
			capture_candidates(root, rel, rte, p, cands, saved_random,
							   saved_seq, saved_rel_workers);
	}
	PG_FINALLY();
	{
		random_page_cost = saved_random;
		seq_page_cost = saved_seq;
		enable_indexscan = saved_enable_indexscan;
		enable_indexonlyscan = saved_enable_indexonlyscan;
		enable_bitmapscan = saved_enable_bitmapscan;
		rel->rel_parallel_workers = saved_rel_workers;
	}
	PG_END_TRY();

	foreach(lc, cands)
	{
		Candidate  *c = lfirst(lc);

		if (c->partial)
			add_partial_path(rel, c->path);
		else
			add_path(rel, c->path);
	}
	foreach(lc, kept)
		add_path(rel, lfirst(lc));
	foreach(lc, kept_partial)
		add_partial_path(rel, lfirst(lc));
}

/*
 * Stock's worker count for this relation, or 0 when stock would not scan it
 * in parallel at all (too small, parallel_workers = 0, no workers allowed).
 */
static int
stock_workers(RelOptInfo *rel, double heap_pages, double index_pages)
{
	return compute_parallel_worker(rel, heap_pages, index_pages,
								   max_parallel_workers_per_gather);
}

/*
 * Does the tablespace set seq_page_cost or random_page_cost itself?  Then
 * get_tablespace_page_costs() ignores the settings we plan through.  Ask it
 * with the settings at values no one would choose.
 */
static bool
tablespace_sets_page_costs(Oid spcoid)
{
	double		saved_random = random_page_cost;
	double		saved_seq = seq_page_cost;
	double		r,
				s;

	random_page_cost = -1;
	seq_page_cost = -1;
	get_tablespace_page_costs(spcoid, &r, &s);
	random_page_cost = saved_random;
	seq_page_cost = saved_seq;
	return r != -1 || s != -1;
}

/* qdtt_explain() on a relation QDTT leaves alone: list core's paths. */
static void
capture_stock_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte,
					const char *why)
{
	MemoryContext old = MemoryContextSwitchTo(qdtt_capture_cxt);
	List	   *all = list_concat_copy(rel->pathlist, rel->partial_pathlist);
	ListCell   *lc;

	foreach(lc, all)
	{
		Path	   *path = lfirst(lc);
		QdttCandidate *q;

		if (path->param_info != NULL || !is_regenerated(path) ||
			path->pathtype == T_TidScan || path->pathtype == T_TidRangeScan)
			continue;
		q = capture_path(root, rel, rte, path);
		q->stock_cost = path->total_cost;
		q->note = why;
	}
	MemoryContextSwitchTo(old);
}

static void
qdtt_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					  RangeTblEntry *rte)
{
	const QdttModel *model;
	QdttRelPlan p;
	int			beneficial;
	int			max_index_pages = 0;
	bool		incomplete;
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		(*prev_set_rel_pathlist_hook) (root, rel, rti, rte);
	qdtt_capture_round++;

	if ((rel->reloptkind != RELOPT_BASEREL &&
		 rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		rel->rtekind != RTE_RELATION || rte->inh || rte->tablesample != NULL ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		rel->pathlist == NIL || IS_DUMMY_REL(rel))
		return;
	if (!qdtt_enable)
	{
		if (qdtt_capturing)
			capture_stock_paths(root, rel, rte, "qdtt.enable is off");
		return;
	}

	model = qdtt_model_for_tablespace(rel->reltablespace, &incomplete);
	if (model == NULL)
	{
		if (qdtt_capturing)
			capture_stock_paths(root, rel, rte, incomplete ?
								"the tablespace's model is incomplete" :
								qdtt_model_moved(rel->reltablespace) != NULL ?
								"the tablespace's model was measured on another device" :
								"no model for the tablespace");
		return;
	}

	/*
	 * Per-tablespace seq_page_cost/random_page_cost override the settings
	 * our regeneration works through; such a tablespace keeps stock costing.
	 */
	if (tablespace_sets_page_costs(rel->reltablespace))
	{
		if (qdtt_capturing)
			capture_stock_paths(root, rel, rte,
								"the tablespace sets its own page costs");
		return;
	}

	init_rel_plan(&p, model);
	apply_residency(&p, rte->relid, rel->pages);
	/* one clause: the index's estimate is the relation's */
	p.at_most_a_row = rel->rows <= 1 && list_length(rel->baserestrictinfo) == 1;
	p.heap_band = Max(rel->pages, 1);
	p.bitmap_prefetch = get_tablespace_io_concurrency(rel->reltablespace) > 0;
	p.bitmap_qd = Min(Max(get_tablespace_io_concurrency(rel->reltablespace), 1),
					  p.qd_share);
	p.bitmap_prefetch_gain = p.bitmap_qd > 1 &&
		page_cost(&p, p.heap_band, p.bitmap_qd) < page_cost(&p, p.heap_band, 1);

	/* Parallel index scans: workers = beneficial QD - leader, bounded. */
	foreach(lc, rel->indexlist)
		max_index_pages = Max(max_index_pages, ((IndexOptInfo *) lfirst(lc))->pages);
	beneficial = Min(model->max_beneficial_qd, (int) p.qd_share);
	if (beneficial <= 1)
		p.pis_workers = -1;		/* no queue-depth gain: stock's degree */
	else if (stock_workers(rel, -1, max_index_pages) == 0 &&
			 rel->rel_parallel_workers == -1)
		p.pis_workers = 0;		/* too small for a parallel scan */
	else
	{
		p.pis_workers = beneficial - (parallel_leader_participation ? 1 : 0);
		p.pis_workers = Min(p.pis_workers, max_parallel_workers_per_gather);
		if (rel->rel_parallel_workers >= 0)
			p.pis_workers = Min(p.pis_workers, rel->rel_parallel_workers);
	}
	p.pis_qd = (p.pis_workers > 0) ?
		p.pis_workers + (parallel_leader_participation ? 1 : 0) :
		1 + (parallel_leader_participation ? 1 : 0) +
		Max(stock_workers(rel, -1, max_index_pages), 0);
	p.pis_qd = Min(p.pis_qd, p.qd_share);

	/*
	 * Where memory serves half the pages or more, or most of the time, a
	 * parallel index or bitmap scan's participants spend CPU, not queue
	 * depth: more of them than CPUs only share the same CPUs (measured: 6
	 * workers on 2 CPUs ran a cached parallel bitmap heap scan 2x slower
	 * than a serial one, and 7 workers a half-cached one 4x slower, while
	 * core divided its CPU cost by 6 and the device gained from 8 reads in
	 * flight).
	 */
	if (p.has_residency && p.pis_workers != 0 &&
		(device_share(&p, p.heap_band, p.pis_qd) < 0.5 || p.device_fraction <= 0.5))
	{
		int			leader = parallel_leader_participation ? 1 : 0;
		int			degree = (p.pis_workers > 0) ? p.pis_workers :
			stock_workers(rel, -1, max_index_pages);

		p.pis_workers = Min(degree, Max(cpu_count() - leader, 1));
		if (p.pis_workers > 0)
			p.pis_qd = Min(p.pis_workers + leader, p.qd_share);
	}
	p.parallel_gain = p.pis_qd > 1 &&
		page_cost(&p, p.heap_band, p.pis_qd) < page_cost(&p, p.heap_band, 1);

	/*
	 * Parallel seq scans: up to stock's degree, and no more workers than
	 * CPUs.  The leader on top of them keeps the CPUs busy while a
	 * participant waits for a read (measured: on 2 CPUs, 2 workers scanned
	 * a CPU-bound table 5-25% faster than 1).
	 */
	p.pfts_max_workers = stock_workers(rel, rel->pages, -1);
	if (beneficial > 1)
		p.pfts_max_workers = Min(p.pfts_max_workers, cpu_count());

	regenerate_paths(root, rel, rte, &p);
}

/*
 * Page costs for other ssdkit extensions (common/ssdkit_qdtt.h): the price
 * this planner would charge a random read within "band" pages at
 * "queue_depth", or false where it would leave the relation to stock
 * costing.
 */
static bool
qdtt_api_page_cost(Oid spcoid, double band, double queue_depth, double *cost)
{
	const QdttModel *model;
	QdttRelPlan p;

	if (!qdtt_enable)
		return false;
	model = qdtt_model_for_tablespace(spcoid, NULL);
	if (model == NULL || tablespace_sets_page_costs(spcoid))
		return false;
	init_rel_plan(&p, model);
	*cost = page_cost(&p, Max(band, 1.0), Max(queue_depth, 1.0));
	return true;
}

/* Residency counts for other ssdkit extensions: the sampler's, as we use them. */
static bool
qdtt_api_residency(const RelFileNode *node, ForkNumber fork,
				   double *sb, double *os)
{
	if (!qdtt_use_residency)
		return false;
	return qdtt_residency_fractions(node, fork, sb, os, NULL);
}

static SsdkitQdttApi qdtt_api = {
	.version = SSDKIT_QDTT_API_VERSION,
	.page_cost = qdtt_api_page_cost,
	.residency = qdtt_api_residency
};

void
qdtt_planner_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = qdtt_set_rel_pathlist;

	*find_rendezvous_variable(SSDKIT_QDTT_RENDEZVOUS) = &qdtt_api;
}
