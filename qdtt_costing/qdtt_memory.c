/*-------------------------------------------------------------------------
 *
 * qdtt_memory.c
 *	  The memory points of a QDTT model: what a page costs a scan when
 *	  PostgreSQL finds it in shared_buffers, and when it reads it from the OS
 *	  page cache, for index scans' random visits and sequential scans' pages.
 *
 * On a server whose data sits in memory, pricing every page as a device
 * read makes the planner flee index and bitmap scans that read nothing from
 * the device.  What a page in memory costs is not what a pread() of a cached
 * page or a pin of a buffer costs in a tight loop: timed in such loops on
 * one machine, 0.8 us and 0.14 us, while a real index scan paid 0.35 us per
 * shared_buffers visit and 6-8 us per page read from the page cache
 * (buffer replacement, the mapping partition locks, checksum verification
 * and the executor's work per fetched tuple all come with it).  So the
 * points are measured the way queries meet them: with PostgreSQL's own
 * executor, on a probe table made for it.
 *
 * Two probes, unlogged tables whose rows are inserted in random key order,
 * each with a btree on the key, small enough to sit in a quarter of
 * shared_buffers (larger tables are scanned through a ring):
 *
 * The page probe has one row per page (fillfactor 10, rows of 1 kB, at
 * most 64 MB, at least 16 pages).  Per page, each the best of POINT_TRIALS
 * runs (interference only slows a run):
 *
 *	 shared_buffers, random		Index Scan over every row, all pages cached
 *	 shared_buffers, sequential	Seq Scan, all pages cached
 *	 OS page cache, random		Index Scan after the table's buffers were
 *								written and dropped from shared_buffers
 *	 OS page cache, sequential	Seq Scan after the same
 *
 * The tuple probe has narrow rows, about 90 a page, all cached.  A Seq
 * Scan, a Bitmap Heap Scan and an Index Scan over every row give what each
 * scan type spends per tuple beyond its pages (the index scan's visit of
 * each tuple's page is the page probe's shared_buffers point, and is taken
 * out).  The planner tops core's CPU charges up to these where core
 * charges less: its per-tuple constants price a bitmap or index fetch
 * barely above a sequential one, while on cached data a bitmap heap scan's
 * tuple costs several times a seq scan's.
 *
 * The page probe's times include the executor's work on the page's one
 * row, which core also charges as CPU cost; against a page's cost it is a
 * few percent.
 *
 * The probe lives in the calibrating transaction: an error rolls it back
 * with everything else, and it is dropped before the model is stored.
 * Dropping its buffers is safe because no other session can see it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "nodes/plannodes.h"
#include "utils/plancache.h"
#include "utils/resowner.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "qdtt_costing.h"

#define PROBE_MAX_PAGES		8192	/* 64 MB */
#define PROBE_MIN_PAGES		16
#define POINT_TRIALS		3

/* One forced scan of a probe: SELECT max(v) WHERE k BETWEEN 1 AND max_key. */
typedef struct ProbeScan
{
	SPIPlanPtr	plan;
	const char *enable;			/* the one enable_* setting left on */
	int			max_key;
} ProbeScan;

typedef struct Probe
{
	const char *qualname;		/* schema-qualified, quoted */
	Oid			relid;
	int			rows;			/* = pages in the page probe */
	ProbeScan	index_scan;
	ProbeScan	seq_scan;
	ProbeScan	bitmap_scan;
	ProbeScan	sparse_bitmap_scan; /* a tenth of the rows, from every page */
} Probe;

static void
run_sql(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "qdtt_calibrate: memory probe statement failed (%s): %s",
			 SPI_result_code_string(rc), sql);
}

/*
 * Leave only "enable" of the scan types on (restored by the caller's GUC
 * nest level): the planner would otherwise pick a bitmap or parallel scan,
 * or QDTT's own choice.
 */
static void
force_scan(const char *enable)
{
	const char *all[] = {"enable_seqscan", "enable_indexscan", "enable_bitmapscan",
	"enable_indexonlyscan"};
	int			i;

	for (i = 0; i < lengthof(all); i++)
		(void) set_config_option(all[i], strcmp(all[i], enable) == 0 ? "on" : "off",
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

/* The scan node under the aggregate of a probe's plan. */
static NodeTag
scan_of(Plan *plan)
{
	while (plan != NULL && !IsA(plan, SeqScan) && !IsA(plan, IndexScan) &&
		   !IsA(plan, IndexOnlyScan) && !IsA(plan, BitmapHeapScan))
		plan = plan->lefttree;
	return plan ? nodeTag(plan) : T_Invalid;
}

/*
 * Prepare a forced scan and plan it now, under its settings: SPI_prepare
 * only parses, and the plan cache does not replan when enable_* settings
 * change, so a plan first built at execution would get whatever settings
 * were left then.  The plan's scan is checked.
 */
static ProbeScan
prepare_scan(const Probe *probe, const char *enable, int max_key, NodeTag expected)
{
	ProbeScan	ps;
	CachedPlan *cplan;
	NodeTag		got;

	ps.enable = enable;
	ps.max_key = max_key;
	force_scan(enable);
	ps.plan = SPI_prepare(psprintf("SELECT max(v) FROM %s WHERE k BETWEEN 1 AND %d",
								   probe->qualname, max_key), 0, NULL);
	if (ps.plan == NULL)
		elog(ERROR, "qdtt_calibrate: could not plan the memory probe: %s",
			 SPI_result_code_string(SPI_result));
	cplan = SPI_plan_get_cached_plan(ps.plan);
	got = scan_of(linitial_node(PlannedStmt, cplan->stmt_list)->planTree);
	ReleaseCachedPlan(cplan, NULL);	/* an unsaved plan: not in a resource owner */
	if (got != expected)
		elog(ERROR, "qdtt_calibrate: the memory probe's scan was planned as node %d, not %d",
			 (int) got, (int) expected);
	return ps;
}

/* Write the probe's dirty buffers to the OS and drop all of them. */
static void
evict_probe(const Probe *probe)
{
	Relation	rel = table_open(probe->relid, NoLock);
	SMgrRelation smgr;

	FlushRelationBuffers(rel);
	smgr = RelationGetSmgr(rel);
	DropRelFileNodesAllBuffers(&smgr, 1);
	table_close(rel, NoLock);
}

/*
 * Did the scan just run see its rows?  Keys and values are 1..rows, so
 * max(v) over keys 1..n is n.
 */
static bool
scan_saw_its_rows(int max_key)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

	return !isnull && DatumGetInt32(d) == max_key;
}

/* Microseconds per row found of one scan of the probe, best of the trials. */
static double
time_scan(const Probe *probe, const ProbeScan *scan, bool from_os_cache)
{
	double		best = -1;
	int			trial;

	for (trial = 0; trial < POINT_TRIALS; trial++)
	{
		instr_time	start,
					elapsed;
		double		us;

		CHECK_FOR_INTERRUPTS();
		force_scan(scan->enable);	/* should the plan cache replan */
		if (from_os_cache)
			evict_probe(probe);
		INSTR_TIME_SET_CURRENT(start);
		/* not read-only: the scan must see the rows inserted above */
		if (SPI_execute_plan(scan->plan, NULL, NULL, false, 0) != SPI_OK_SELECT ||
			SPI_processed != 1 || !scan_saw_its_rows(scan->max_key))
			elog(ERROR, "qdtt_calibrate: the memory probe's scan did not see its rows");
		INSTR_TIME_SET_CURRENT(elapsed);
		INSTR_TIME_SUBTRACT(elapsed, start);
		us = INSTR_TIME_GET_DOUBLE(elapsed) * 1e6 / scan->max_key;
		if (best < 0 || us < best)
			best = us;
	}
	return best;
}

/* Create, fill and index a probe of "rows" rows of "width" pad bytes. */
static void
create_probe(Probe *probe, Oid nsp, const char *relname, const char *spcname,
			 int fillfactor, int width, int rows)
{
	probe->qualname = quote_qualified_identifier(get_namespace_name(nsp), relname);
	probe->rows = rows;
	run_sql(psprintf("CREATE UNLOGGED TABLE %s (k int4, v int4, pad text) USING heap "
					 "WITH (fillfactor = %d, autovacuum_enabled = off) TABLESPACE %s",
					 probe->qualname, fillfactor, quote_identifier(spcname)),
			SPI_OK_UTILITY);
	run_sql(psprintf("INSERT INTO %s SELECT k, k, repeat('x', %d) "
					 "FROM (SELECT k FROM generate_series(1, %d) k ORDER BY random()) s",
					 probe->qualname, width, rows), SPI_OK_INSERT);
	run_sql(psprintf("CREATE INDEX ON %s (k) TABLESPACE %s", probe->qualname,
					 quote_identifier(spcname)), SPI_OK_UTILITY);
	probe->relid = get_relname_relid(relname, nsp);
	probe->index_scan = prepare_scan(probe, "enable_indexscan", rows, T_IndexScan);
	probe->seq_scan = prepare_scan(probe, "enable_seqscan", rows, T_SeqScan);
	probe->bitmap_scan = prepare_scan(probe, "enable_bitmapscan", rows, T_BitmapHeapScan);
	probe->sparse_bitmap_scan = prepare_scan(probe, "enable_bitmapscan", rows / 10,
											 T_BitmapHeapScan);
	/* set the rows' hint bits and bring every page in */
	(void) time_scan(probe, &probe->seq_scan, false);
	(void) time_scan(probe, &probe->index_scan, false);
}

/* A name no relation of the schema has: prefix_<pid>[_<n>]. */
static char *
probe_name(Oid nsp, const char *prefix)
{
	char	   *name = psprintf("%s_%d", prefix, MyProcPid);
	int			n = 0;

	while (OidIsValid(get_relname_relid(name, nsp)))
		name = psprintf("%s_%d_%d", prefix, MyProcPid, ++n);
	return name;
}

static BlockNumber
probe_blocks(const Probe *probe)
{
	Relation	rel = table_open(probe->relid, NoLock);
	BlockNumber n = RelationGetNumberOfBlocks(rel);

	table_close(rel, NoLock);
	return n;
}

/*
 * Measure the memory points for tablespace "spcname" (the probes live
 * there, as its relations' files do).  The caller is a superuser inside
 * qdtt_calibrate().
 */
void
qdtt_measure_memory(const char *spcname, QdttMemoryCosts *costs)
{
	Oid			nsp = qdtt_extension_schema();
	int			room = Max(NBuffers / 4 - 16, 0);
	Probe		pages,
				tuples;
	double		blocks,
				seq,
				dense,
				sparse,
				index;
	int			level;

	SPI_connect();
	level = NewGUCNestLevel();
	(void) set_config_option("max_parallel_workers_per_gather", "0", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	/* the probe's statements name built-in functions unqualified */
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);

	/* the page probe: one 1 kB row a page */
	create_probe(&pages, nsp, probe_name(nsp, "qdtt_memory_probe"), spcname,
				 10, 1000, Max(Min(room, PROBE_MAX_PAGES), PROBE_MIN_PAGES));
	costs->shared_buffers_random_us = time_scan(&pages, &pages.index_scan, false);
	costs->shared_buffers_seq_us = time_scan(&pages, &pages.seq_scan, false);
	costs->os_cache_random_us = time_scan(&pages, &pages.index_scan, true);
	costs->os_cache_seq_us = time_scan(&pages, &pages.seq_scan, true);
	run_sql(psprintf("DROP TABLE %s", pages.qualname), SPI_OK_UTILITY);

	/* the tuple probe: narrow rows, all in shared_buffers */
	create_probe(&tuples, nsp, probe_name(nsp, "qdtt_tuple_probe"), spcname,
				 100, 40, Max(Min(room, PROBE_MAX_PAGES), PROBE_MIN_PAGES) * 90);
	blocks = probe_blocks(&tuples);
	seq = time_scan(&tuples, &tuples.seq_scan, false) * tuples.rows;
	dense = time_scan(&tuples, &tuples.bitmap_scan, false) * tuples.rows;
	sparse = time_scan(&tuples, &tuples.sparse_bitmap_scan, false) * (tuples.rows / 10);
	index = time_scan(&tuples, &tuples.index_scan, false);
	run_sql(psprintf("DROP TABLE %s", tuples.qualname), SPI_OK_UTILITY);

	/*
	 * Per tuple beyond the pages.  Both bitmap scans visit every page (a
	 * tenth of the keys, inserted in random order, lands on each of about
	 * 90 rows a page): their difference is the tuples', the rest the pages'.
	 */
	costs->seq_tuple_us = Max((seq - blocks * costs->shared_buffers_seq_us) / tuples.rows, 0.0);
	costs->bitmap_tuple_us = Max((dense - sparse) / (tuples.rows - tuples.rows / 10), 0.0);
	costs->bitmap_page_us = Max((sparse - costs->bitmap_tuple_us * (tuples.rows / 10)) / blocks,
								0.0);
	costs->index_tuple_us = Max(index - costs->shared_buffers_random_us, 0.0);

	AtEOXact_GUC(true, level);
	SPI_finish();
}
