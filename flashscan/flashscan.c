/*-------------------------------------------------------------------------
 *
 * flashscan.c
 *	  Module entry point of flashscan: GUC namespace and status.
 *
 * The pax table access method loads the library on first use; the FlashScan
 * planner hook needs it in shared_preload_libraries.
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

PG_FUNCTION_INFO_V1(flashscan_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	/* Unknown "flashscan.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("flashscan");
}

/* flashscan_status(): library version, how it was loaded, io_uring support. */
Datum
flashscan_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
