/*-------------------------------------------------------------------------
 *
 * ssd_cache.c
 *	  Module entry point of ssd_cache: GUCs, shared memory, and the storage
 *	  manager hook, all set up when the postmaster loads the library.
 *
 * ssd_cache must be in shared_preload_libraries: it wraps the storage
 * manager when the postmaster starts, before any backend exists.  Loaded any
 * later (LOAD, or a function call in a backend) it installs nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "ssd_cache.h"
#include "ssd_cache_hook.h"
#include "ssdkit_status.h"

PG_MODULE_MAGIC;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

/* ssd_cache.fault_injection: test-only list of enabled fault points. */
static char *fault_injection = NULL;
static List *fault_points = NIL;

/* Fault points a test may enable, and what each does. */
static const char *const known_fault_points[] = {
	"hook_layout",				/* startup: treat the dispatch tables as not
								 * matching, as on a foreign server binary */
	NULL
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(ssd_cache_status);

static bool
check_fault_injection(char **newval, void **extra, GucSource source)
{
	char	   *rawstring = pstrdup(*newval);
	List	   *elems;
	ListCell   *lc;

	if (!SplitIdentifierString(rawstring, ',', &elems))
	{
		GUC_check_errdetail("List syntax is invalid.");
		return false;
	}
	foreach(lc, elems)
	{
		const char *point = lfirst(lc);
		int			i;

		for (i = 0; known_fault_points[i] != NULL; i++)
			if (strcmp(point, known_fault_points[i]) == 0)
				break;
		if (known_fault_points[i] == NULL)
		{
			GUC_check_errdetail("Unknown fault point \"%s\".", point);
			GUC_check_errhint("Known fault points: hook_layout.");
			return false;
		}
	}
	return true;
}

static void
assign_fault_injection(const char *newval, void *extra)
{
	char	   *rawstring;
	List	   *elems = NIL;
	MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);

	/* The list must outlive the assignment; the check hook validated it. */
	list_free_deep(fault_points);
	fault_points = NIL;
	rawstring = pstrdup(newval);
	(void) SplitIdentifierString(rawstring, ',', &elems);
	{
		ListCell   *lc;

		foreach(lc, elems)
			fault_points = lappend(fault_points, pstrdup(lfirst(lc)));
	}
	list_free(elems);
	pfree(rawstring);
	MemoryContextSwitchTo(oldcxt);
}

bool
ssd_cache_fault_enabled(const char *point)
{
	ListCell   *lc;

	foreach(lc, fault_points)
		if (strcmp(lfirst(lc), point) == 0)
			return true;
	return false;
}

static void
ssd_cache_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(ssd_cache_hook_shmem_size());
}

static void
ssd_cache_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ssd_cache_hook_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	DefineCustomStringVariable("ssd_cache.fault_injection",
							   "Test only: comma-separated fault points to enable.",
							   "Never set this on a server you care about.",
							   &fault_injection,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE | GUC_LIST_INPUT,
							   check_fault_injection,
							   assign_fault_injection,
							   NULL);

	/* Unknown "ssd_cache.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("ssd_cache");

	if (!loaded_at_startup)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ssd_cache_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ssd_cache_shmem_startup;

	ssd_cache_hook_install();
}

/* ssd_cache_status(): library version, how it was loaded, io_uring support. */
Datum
ssd_cache_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
