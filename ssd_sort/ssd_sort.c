/*-------------------------------------------------------------------------
 *
 * ssd_sort.c
 *	  Module entry point of ssd_sort: GUC namespace and status.
 *
 * The planner offers the SSD Sort path from a hook installed when the library
 * is loaded; list it in shared_preload_libraries so every backend has it.
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

PG_FUNCTION_INFO_V1(ssd_sort_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	/* Unknown "ssd_sort.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("ssd_sort");
}

/* ssd_sort_status(): library version, how it was loaded, io_uring support. */
Datum
ssd_sort_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
