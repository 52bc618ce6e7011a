/*-------------------------------------------------------------------------
 *
 * qdtt_costing.c
 *	  Module entry point of qdtt_costing: GUC namespace and status.
 *
 * The planner integration installs hooks when the library is loaded; list it
 * in shared_preload_libraries (or session_preload_libraries) so every
 * backend plans with it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "ssdkit_status.h"

PG_MODULE_MAGIC;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(qdtt_costing_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	/* Unknown "qdtt_costing.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("qdtt_costing");
}

/* qdtt_costing_status(): library version, how it was loaded, io_uring support. */
Datum
qdtt_costing_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
