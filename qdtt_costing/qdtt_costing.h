/*-------------------------------------------------------------------------
 *
 * qdtt_costing.h
 *	  Shared declarations of the qdtt_costing extension: the QDTT device
 *	  model (cost per page as a function of band size and queue depth), its
 *	  calibration, and the planner integration.
 *
 * Units: a model stores the amortized cost of reading one BLCKSZ page, in
 * microseconds, at each calibrated (band, queue depth) point.  The planner
 * turns those into PostgreSQL cost units by normalizing with the
 * sequential, queue-depth-1 point: page_cost(b, q) = seq_page_cost *
 * QDTT(b, q) / QDTT(1, 1), or with qdtt.cost_unit_us in place of
 * QDTT(1, 1) when that is set.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QDTT_COSTING_H
#define QDTT_COSTING_H

#include "postgres.h"

#include "common/relpath.h"
#include "nodes/pathnodes.h"
#include "storage/relfilenode.h"

/* Queue depths are powers of two up to this (the thesis's ladder goes to 32). */
#define QDTT_MAX_QUEUE_DEPTH_LIMIT	256

/* Bands of the geometric calibration ladder grow by this factor. */
#define QDTT_BAND_FACTOR	16

/* GUCs (qdtt_costing.c) */
extern bool qdtt_enable;
extern int	qdtt_max_queue_depth;
extern double qdtt_stop_threshold;
extern int	qdtt_queue_depth_budget;
extern double qdtt_cost_unit_us;
extern bool qdtt_use_residency;

/* A calibrated model of one tablespace's device. */
typedef struct QdttModel
{
	Oid			spcoid;
	int			nbands;
	int			nqds;
	double	   *bands;			/* ascending, bands[0] == 1 */
	int		   *qds;			/* ascending, qds[0] == 1 */
	double	   *cost_us;		/* nbands x nqds, row-major by band */
	int			max_beneficial_qd;	/* largest QD passing the stop rule */
	/* the memory points (qdtt_memory.c), all 0 when the model has none */
	double		sb_random_us;	/* an index scan's visit in shared_buffers */
	double		sb_seq_us;		/* a seq scan's page in shared_buffers */
	double		os_random_us;	/* an index scan's read from the OS page cache */
	double		os_seq_us;		/* a seq scan's page from the OS page cache */
	double		seq_tuple_us;	/* per tuple beyond pages: Seq Scan */
	double		bitmap_tuple_us;	/* Bitmap Heap Scan */
	double		bitmap_page_us; /* a Bitmap Heap Scan's page, in shared_buffers */
	double		index_tuple_us; /* Index Scan, its page visit apart */
} QdttModel;

/* Memory points as qdtt_calibrate() measures them, microseconds a page. */
typedef struct QdttMemoryCosts
{
	double		shared_buffers_random_us;
	double		shared_buffers_seq_us;
	double		os_cache_random_us;
	double		os_cache_seq_us;
	double		seq_tuple_us;
	double		bitmap_tuple_us;
	double		bitmap_page_us;
	double		index_tuple_us;
} QdttMemoryCosts;

#define QDTT_POINT(m, bi, qi)	((m)->cost_us[(bi) * (m)->nqds + (qi)])

/* qdtt_model.c */
extern const QdttModel *qdtt_model_for_tablespace(Oid spcoid, bool *incomplete);
extern const char *qdtt_model_moved(Oid spcoid);
extern char *qdtt_device_name(const char *path);
extern int	qdtt_model_prefetch_depth(const QdttModel *m);

/* qdtt_residency.c */
extern int	qdtt_residency_interval;
extern int	qdtt_residency_max_pages;
extern int	qdtt_residency_max_relations;
extern void qdtt_residency_init(void);
extern bool qdtt_residency_fractions(const RelFileNode *node, ForkNumber fork,
									 double *sb, double *os, double *gaps_per_block);
extern double qdtt_model_cost(const QdttModel *model, double band, double qd);
extern int	qdtt_model_beneficial_qd(const QdttModel *model, double threshold);
extern Oid	qdtt_model_table(bool missing_ok);
extern Oid	qdtt_extension_schema(void);
extern Oid	qdtt_tablespace_oid(const char *spcname);
extern void qdtt_model_init(void);

/* qdtt_memory.c */
extern void qdtt_measure_memory(const char *spcname, QdttMemoryCosts *costs);

/* qdtt_calibrate.c: nothing beyond its SQL function. */

/* qdtt_planner.c */
extern void qdtt_planner_init(void);

/* What the planner considered for one base relation (qdtt_explain). */
typedef struct QdttCandidate
{
	Index		relid;			/* range table index */
	Oid			reloid;
	const char *kind;			/* "Seq Scan", "Index Scan", ... */
	Oid			indexoid;		/* InvalidOid for non-index paths */
	int			workers;		/* planned workers (0 = serial) */
	double		band;			/* band the heap I/O was costed at */
	double		queue_depth;	/* queue depth it was costed at */
	double		pages;			/* heap pages it is expected to read */
	Cost		stock_cost;		/* total cost with PostgreSQL's costing */
	Cost		qdtt_cost;		/* total cost with the QDTT model */
	bool		has_qdtt;		/* false: QDTT left this relation alone */
	bool		has_residency;	/* the pages were priced by residency */
	double		sb_fraction;	/* heap pages in shared_buffers */
	double		os_fraction;	/* heap pages in the OS page cache only */
	Cost		io_cost_memory; /* I/O part of qdtt_cost served from memory */
	Cost		io_cost_device; /* and from the device */
	Cost		memory_work;	/* CPU work in memory core does not charge */
	const char *note;			/* why, when it did */
	Path	   *path;			/* the path object */
	int			round;			/* which set_rel_pathlist call produced it */
	Alias	   *eref;			/* its range table entry's, which the final
								 * range table's copy shares (for "chosen") */
	PlannerInfo *root;			/* the query level it was planned in */
	PlannerInfo *parent_root;	/* and that level's parent */
	bool		replan;			/* the level is a copy of its parent's
								 * query (min/max aggregates' subquery) */
} QdttCandidate;

/* Set by qdtt_explain() while it plans; the hook appends QdttCandidates. */
extern List *qdtt_capture;
extern bool qdtt_capturing;
extern MemoryContext qdtt_capture_cxt;
extern int	qdtt_capture_round;

#endif							/* QDTT_COSTING_H */
