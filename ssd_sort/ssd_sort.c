/*-------------------------------------------------------------------------
 *
 * ssd_sort.c
 *	  Module entry point of ssd_sort: GUCs, hooks and status.
 *
 * The planner offers the SSD Sort path from a hook installed when the library
 * is loaded; list it in shared_preload_libraries so every backend has it.
 * Files: ssd_sort_planner.c (path, cost, plan), ssd_sort_exec.c (the custom
 * scan node and its EXPLAIN output), ssd_sort_trace.c (run and merge-pass
 * counts of the pair sort).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "ssd_sort.h"
#include "ssdkit_status.h"

PG_MODULE_MAGIC;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

bool		ssd_sort_enable = true;
int			ssd_sort_prefetch_depth = 32;
double		ssd_sort_fetch_page_cost = 0;
double		ssd_sort_cached_page_cost = 1.0;
double		ssd_sort_page_visit_cost = 0.18;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(ssd_sort_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	DefineCustomBoolVariable("ssd_sort.enable",
							 "Lets the planner choose SSD Sort for ordered output of a heap table.",
							 "SSD Sort sorts (key, TID) pairs and then fetches the rows in order with look-ahead prefetch.",
							 &ssd_sort_enable, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("ssd_sort.prefetch_depth",
							"Number of upcoming TIDs whose pages SSD Sort prefetches while fetching rows (0 = no prefetch).",
							"The device sees up to this many reads in flight; the planner costs the fetch at this queue depth.",
							&ssd_sort_prefetch_depth, 32, 0, SSD_SORT_MAX_PREFETCH_DEPTH,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("ssd_sort.fetch_page_cost",
							 "Planner cost of one heap page read by SSD Sort's fetch (0 = automatic).",
							 "Automatic: the qdtt_costing model of the table's tablespace at the prefetch depth when it is calibrated, else the tablespace's random_page_cost.",
							 &ssd_sort_fetch_page_cost, 0, 0, 1000000,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("ssd_sort.cached_page_cost",
							 "Planner cost of one heap page SSD Sort's fetch reads from the OS page cache (it missed shared_buffers).",
							 "A read() and a copy of the page; by default priced like seq_page_cost.",
							 &ssd_sort_cached_page_cost, 1.0, 0, 1000000,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_sort.page_visit_cost",
							 "Planner cost of each visit SSD Sort's fetch makes to a heap page, cached or not.",
							 "A buffer lookup, pin, share lock and visibility check per change of page in key order; measured: a visit takes as long as about 30 comparisons as cost_sort prices them (2 x cpu_operator_cost each).",
							 &ssd_sort_page_visit_cost, 0.18, 0, 1000000,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	/* Unknown "ssd_sort.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("ssd_sort");

	ssd_sort_trace_init();
	ssd_sort_exec_init();
	ssd_sort_planner_init();
}

/* ssd_sort_status(): library version, how it was loaded, io_uring support. */
Datum
ssd_sort_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
