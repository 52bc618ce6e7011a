/*-------------------------------------------------------------------------
 *
 * qdtt_costing.c
 *	  Module entry point of qdtt_costing: GUCs, hooks and status.
 *
 * The planner integration is a set_rel_pathlist_hook, installed when the
 * library is loaded; list it in shared_preload_libraries (or
 * session_preload_libraries) so that every backend plans with it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "qdtt_costing.h"
#include "ssdkit_status.h"

PG_MODULE_MAGIC;

bool		qdtt_enable = true;
int			qdtt_max_queue_depth = 32;
double		qdtt_stop_threshold = 0.20;
int			qdtt_queue_depth_budget = 64;
double		qdtt_cost_unit_us = 0;
bool		qdtt_use_residency = true;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(qdtt_costing_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	DefineCustomBoolVariable("qdtt.enable",
							 "Costs base-relation scans with the calibrated QDTT model of their tablespace.",
							 "Without a model for the tablespace the planner is unchanged.",
							 &qdtt_enable, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("qdtt.max_queue_depth",
							"Largest queue depth qdtt_calibrate() measures.",
							"The ladder is 1, 2, 4, ... up to this value.",
							&qdtt_max_queue_depth, 32, 1, QDTT_MAX_QUEUE_DEPTH_LIMIT,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("qdtt.stop_threshold",
							 "Smallest improvement from doubling the queue depth that counts as a gain.",
							 "qdtt_calibrate() stops early below it, and the maximum beneficial queue depth is the last depth that reached it.",
							 &qdtt_stop_threshold, 0.20, 0.01, 0.99,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("qdtt.queue_depth_budget",
							"Outstanding reads all running queries together may be planned to keep in flight (0 = no limit).",
							"A query planned while N client backends run statements assumes at most budget / N.",
							&qdtt_queue_depth_budget, 64, 0, 65536,
							PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomRealVariable("qdtt.cost_unit_us",
							 "Time one unit of planner cost stands for, in microseconds (0 = each tablespace's sequential page time).",
							 "PostgreSQL's CPU cost settings are fractions of a sequential page read.  With 0 a sequential page on every "
							 "device costs seq_page_cost, as in stock PostgreSQL; a fixed time puts devices of different speeds, and CPU "
							 "costs on slow devices, on one scale.",
							 &qdtt_cost_unit_us, 0, 0, 1000000,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("qdtt.use_residency",
							 "Prices a relation's pages by where the residency sampler found them: shared_buffers, the OS page cache or the device.",
							 "Off prices every page as a device read at the model's cost (plans for a cold server).",
							 &qdtt_use_residency, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("qdtt.residency_interval",
							"Seconds between two passes of the residency sampler (0 = no sampling).",
							"A pass counts every relation fork's blocks in shared_buffers and in the OS page cache.",
							&qdtt_residency_interval, 10, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("qdtt.residency_max_pages",
							"OS pages one residency pass examines for the page cache count, at most.",
							"A pass past it keeps the older counts of the relations it did not reach; the next pass goes on from there.",
							&qdtt_residency_max_pages, 33554432, 1, PG_INT32_MAX,
							PGC_SUSET, 0, NULL, NULL, NULL);
	/* sizes shared memory: only when loaded at server start */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("qdtt.residency_max_relations",
								"Relation forks the residency sampler tracks, at most (shared memory).",
								NULL,
								&qdtt_residency_max_relations, 10000, 100, 10000000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);

	/* Unknown settings in our namespaces are errors, so typos show. */
	MarkGUCPrefixReserved("qdtt");
	MarkGUCPrefixReserved("qdtt_costing");

	qdtt_model_init();
	qdtt_planner_init();
	qdtt_residency_init();
}

/* qdtt_costing_status(): library version, how it was loaded, io_uring support. */
Datum
qdtt_costing_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
