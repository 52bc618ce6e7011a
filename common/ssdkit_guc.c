/*-------------------------------------------------------------------------
 *
 * ssdkit_guc.c
 *	  Where a core setting's value came from, and the background workers
 *	  the extensions keep for the server's life.
 *
 * A worker registered from shared_preload_libraries holds one of
 * max_worker_processes' slots for good, and parallel query draws its
 * workers from the same slots: its defaults (max_worker_processes and
 * max_parallel_workers both 8) assume the slots are its own.  With all four
 * extensions preloaded, five workers would leave parallel queries three.
 * So while max_worker_processes is at its default, each such worker raises
 * it by one, and installing an extension takes no parallel worker away.  A
 * value the DBA set is kept as it is (the READMEs say to add the workers
 * to it).  The raise is a computed default: a value put in the
 * configuration file later takes over at the next restart as usual.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "ssdkit_guc.h"

/* Where the setting's current value came from; PGC_S_DEFAULT if unknown. */
GucSource
ssdkit_guc_source(const char *name)
{
	struct config_generic **vars = get_guc_variables();
	int			n = GetNumConfigOptions();
	int			i;

	for (i = 0; i < n; i++)
		if (pg_strcasecmp(vars[i]->name, name) == 0)
			return vars[i]->source;
	return PGC_S_DEFAULT;
}

/*
 * Register a worker that runs for the server's life (call from _PG_init
 * while shared_preload_libraries are loaded), raising a default
 * max_worker_processes by one for it.
 */
void
ssdkit_register_server_worker(BackgroundWorker *worker)
{
	Assert(process_shared_preload_libraries_in_progress);
	if (ssdkit_guc_source("max_worker_processes") <= PGC_S_DYNAMIC_DEFAULT)
	{
		char		value[16];

		snprintf(value, sizeof(value), "%d", max_worker_processes + 1);
		SetConfigOption("max_worker_processes", value, PGC_POSTMASTER, PGC_S_DYNAMIC_DEFAULT);
	}
	RegisterBackgroundWorker(worker);
}
