/*-------------------------------------------------------------------------
 *
 * ssd_sort.h
 *	  Shared declarations of the ssd_sort extension: an external sort of
 *	  (sort key, TID) pairs followed by a look-ahead fetch of the rows, as a
 *	  CustomScan ("SSD Sort") over one heap relation.
 *
 * The plan has two parts.  The CustomScan scans its relation (scanrelid), so
 * its output rows are the relation's own tuples, fetched by TID.  Its outer
 * plan (lefttree) is an ordinary Seq Scan of the same relation whose target
 * list is the pair: the sort key expressions followed by ctid, with the
 * query's restriction clauses as its quals.  Both run with the query's
 * snapshot, so every TID the scan produced names a row version the fetch can
 * see.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_SORT_H
#define SSD_SORT_H

#include "postgres.h"

#include "nodes/extensible.h"

#define SSD_SORT_NAME	"SSD Sort"

/* Upper bound of ssd_sort.prefetch_depth. */
#define SSD_SORT_MAX_PREFETCH_DEPTH 1024

/* GUCs (ssd_sort.c) */
extern bool ssd_sort_enable;
extern int	ssd_sort_prefetch_depth;
extern double ssd_sort_fetch_page_cost;
extern double ssd_sort_cached_page_cost;
extern double ssd_sort_page_visit_cost;

/*
 * What the planner hands the executor, kept in CustomScan.custom_private as
 * a list in this order (custom_exprs holds the key expressions, for EXPLAIN).
 */
enum SsdSortPrivateIndex
{
	SSD_SORT_PRIV_SORT_OPS,		/* OID list: sort operator per key */
	SSD_SORT_PRIV_COLLATIONS,	/* OID list: collation per key */
	SSD_SORT_PRIV_NULLS_FIRST,	/* integer list: NULLS FIRST per key */
	SSD_SORT_PRIV_PAIR_WIDTH,	/* Integer: estimated pair width, bytes */
	SSD_SORT_PRIV_HEAP_READS,	/* Float: estimated shared_buffers misses */
	SSD_SORT_PRIV_DEVICE_READS, /* Float: estimated of those, OS cache misses */
	SSD_SORT_PRIV_FETCH_PAGE_COST,	/* Float: cost charged per fetched page */
	SSD_SORT_PRIV_COST_SOURCE,	/* String: where that cost came from */
	SSD_SORT_PRIV_PAGE_VISITS,	/* Float: estimated page visits */
	SSD_SORT_PRIV_CACHE_SOURCE,	/* String: where the cache shares came from */
	SSD_SORT_PRIV_CACHE_SIZE	/* String: the caches' size and its source */
};

/* ssd_sort_planner.c */
extern void ssd_sort_planner_init(void);

/* ssd_sort_exec.c */
extern const CustomScanMethods ssd_sort_scan_methods;
extern void ssd_sort_exec_init(void);

/*
 * ssd_sort_trace.c: the runs and merge passes of one tuplesort, counted from
 * its trace_sort events (tuplesort.c keeps them private).  The caller owns
 * the struct; traces nest.
 */
typedef struct SsdSortTrace
{
	bool		seen;			/* the sort's trace was captured at all */
	int			runs;			/* sorted runs written to tape */
	int			merge_passes;	/* merge passes, the final merge included */

	/* private */
	bool		active;			/* counting now (inside our tuplesort calls) */
	bool		saved_trace_sort;
	struct SsdSortTrace *outer;
} SsdSortTrace;

extern void ssd_sort_trace_begin(SsdSortTrace *trace);
extern void ssd_sort_trace_end(SsdSortTrace *trace);
extern void ssd_sort_trace_resume(SsdSortTrace *trace);
extern void ssd_sort_trace_pause(SsdSortTrace *trace);
extern void ssd_sort_trace_init(void);

#endif							/* SSD_SORT_H */
