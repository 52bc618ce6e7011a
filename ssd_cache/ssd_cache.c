/*-------------------------------------------------------------------------
 *
 * ssd_cache.c
 *	  Module entry point of ssd_cache: load-time checks and GUC namespace.
 *
 * ssd_cache must be in shared_preload_libraries: it wraps the storage manager
 * when the postmaster starts, before any backend exists.
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

PG_FUNCTION_INFO_V1(ssd_cache_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	/* Unknown "ssd_cache.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("ssd_cache");
}

/* ssd_cache_status(): library version, how it was loaded, io_uring support. */
Datum
ssd_cache_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
