/*-------------------------------------------------------------------------
 *
 * ssdkit_qdtt.h
 *	  How other ssdkit extensions price I/O with qdtt_costing's model.
 *
 * qdtt_costing publishes a small table of functions through a rendezvous
 * variable (the mechanism PostgreSQL offers loadable modules to find each
 * other, see find_rendezvous_variable()).  A module that wants QDTT page
 * costs looks the variable up at planning time; when qdtt_costing is not
 * loaded, or the tablespace has no usable model, it falls back to its own
 * documented defaults.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_QDTT_H
#define SSDKIT_QDTT_H

#include "postgres.h"

#include "common/relpath.h"
#include "fmgr.h"
#include "storage/relfilenode.h"

#define SSDKIT_QDTT_RENDEZVOUS	"ssdkit_qdtt_api"
#define SSDKIT_QDTT_API_VERSION 2

/*
 * Members are only ever appended; a caller checks the version that brought
 * each member it uses: page_cost since 1, residency since 2.
 */
#define SSDKIT_QDTT_API_RESIDENCY 2

typedef struct SsdkitQdttApi
{
	int			version;		/* SSDKIT_QDTT_API_VERSION */

	/*
	 * Cost, in PostgreSQL planner units (seq_page_cost scale), of reading one
	 * page at random within "band" pages of the tablespace with "queue_depth"
	 * reads in flight, as the QDTT planner itself would charge it (queue
	 * depth bounded by qdtt.queue_depth_budget).  Returns false when
	 * qdtt.enable is off, the current database has no complete model for the
	 * tablespace, or the tablespace sets its own page costs.
	 */
	bool		(*page_cost) (Oid spcoid, double band, double queue_depth,
							  double *cost);

	/*
	 * Where a read of a block of this fork would be served from now, as
	 * measured by qdtt_costing's residency sampler: *sb the fraction of its
	 * blocks in shared_buffers, *os the fraction in the OS page cache only.
	 * Returns false when qdtt.use_residency is off, or the sampler has no
	 * recent count of the fork (not sampled yet, stopped, empty fork).
	 */
	bool		(*residency) (const RelFileNode *node, ForkNumber fork,
							  double *sb, double *os);
} SsdkitQdttApi;

/*
 * The API qdtt_costing published, if it is loaded and offers the members of
 * at least min_version; else NULL.  The rendezvous variable's address stays
 * the same for the life of the backend, so it is looked up once.
 */
static inline SsdkitQdttApi *
ssdkit_qdtt_api(int min_version)
{
	static SsdkitQdttApi **api = NULL;

	if (api == NULL)
		api = (SsdkitQdttApi **) find_rendezvous_variable(SSDKIT_QDTT_RENDEZVOUS);
	if (*api == NULL || (*api)->version < min_version)
		return NULL;
	return *api;
}

/*
 * The queue depth the device under a tablespace serves best, from its QDTT
 * model: the smallest depth whose cost per page (random reads within "band"
 * pages) is within 10% of the best of depths 1, 2, 4, ... up to max_depth;
 * 0 when qdtt_costing is not loaded or this database has no model for the
 * tablespace.
 */
static inline int
ssdkit_qdtt_queue_depth(Oid spcoid, double band, int max_depth)
{
	static const int depths[] = {1, 2, 4, 8, 16, 32, 64};
	SsdkitQdttApi *api = ssdkit_qdtt_api(1);
	double		costs[lengthof(depths)];
	double		best = -1;
	int			i;

	if (api == NULL)
		return 0;
	for (i = 0; i < (int) lengthof(depths) && depths[i] <= max_depth; i++)
	{
		if (!api->page_cost(spcoid, band, depths[i], &costs[i]))
			return 0;
		if (best < 0 || costs[i] < best)
			best = costs[i];
	}
	for (i = 0; i < (int) lengthof(depths) && depths[i] <= max_depth; i++)
		if (costs[i] <= best * 1.1)
			return depths[i];
	return 0;
}

#endif							/* SSDKIT_QDTT_H */
