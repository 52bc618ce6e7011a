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
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "lib/stringinfo.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_cleaner.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"
#include "ssd_cache_hook.h"
#include "ssd_cache_lifecycle.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_temperatures.h"
#include "ssd_cache_warmup.h"
#include "ssd_cache_writeback.h"
#include "ssdkit_cache.h"
#include "ssdkit_status.h"

PG_MODULE_MAGIC;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

/* ssd_cache.path: the cache file; empty disables the cache. */
static char *cache_path = NULL;

/* ssd_cache.size: in MB (GUC_UNIT_MB), at most 16 TB. */
#define SSD_CACHE_MAX_SIZE_MB	(16 * 1024 * 1024)
static int	cache_size_mb = 1024;

/* ssd_cache.fault_injection: test-only list of enabled fault points. */
static char *fault_injection = NULL;
static List *fault_points = NIL;

/* Fault points a test may enable, and what each does. */
static const char *const known_fault_points[] = {
	"hook_layout",				/* startup: treat the dispatch tables as not
								 * matching, as on a foreign server binary */
	"slot_read_error",			/* SSD reads of page slots fail with EIO */
	"slot_write_error",			/* SSD writes of page slots fail with EIO */
	"dir_read_error",			/* reading the directory at startup fails */
	"dir_write_error",			/* directory updates fail with EIO */
	"header_write_error",		/* writes of the file's header fail with EIO */
	"server_release",			/* startup: treat the server release as one
								 * whose storage manager was not verified */
	"io_uring_unavailable",		/* admission cannot create an io_uring */
	"read_pause",				/* a disk read offered for admission sleeps
								 * 3 s before it is queued (races) */
	"cache_open_error",			/* opening the cache file in a process fails */
	"die_before_slot_write",	/* a process that wrote a cached page to disk
								 * is killed before it updates the slot */
	"warmup_record_crash",		/* the warm-up process dies halfway through
								 * writing its state file */
	"warmup_slow_load",			/* the warm-up loader sleeps 100 ms before
								 * each of its first 100 chunks */
	"die_during_exit_write_back",	/* the postmaster is killed halfway
									 * through its clean shutdown's write-back */
	NULL
};

static const struct config_enum_entry mode_options[] = {
	{"write_through", SSD_MODE_WRITE_THROUGH, false},
	{"write_back", SSD_MODE_WRITE_BACK, false},
	{"lazy_cleaning", SSD_MODE_LAZY_CLEANING, false},
	{NULL, 0, false}
};

static const struct config_enum_entry policy_options[] = {
	{"tac", SSD_POLICY_TAC, false},
	{"clock", SSD_POLICY_CLOCK, false},
	{NULL, 0, false}
};

static const struct config_enum_entry seq_detect_options[] = {
	{"window", SSD_SEQ_WINDOW, false},
	{"adjacent", SSD_SEQ_ADJACENT, false},
	{"both", SSD_SEQ_BOTH, false},
	{"none", SSD_SEQ_NONE, false},
	{NULL, 0, false}
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
			StringInfoData known;

			initStringInfo(&known);
			for (i = 0; known_fault_points[i] != NULL; i++)
				appendStringInfo(&known, "%s%s", i ? ", " : "", known_fault_points[i]);
			GUC_check_errdetail("Unknown fault point \"%s\".", point);
			GUC_check_errhint("Known fault points: %s.", known.data);
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

/*
 * PostgreSQL answers a bad value of an extension's setting in the
 * configuration file with a WARNING and the default.  For the cache size
 * that would silently give a different cache than asked for (and could
 * overwrite a cache file of another size), so check the raw value first:
 * a bad one means running without the cache, said loudly.
 */
static char *size_problem = NULL;

static void
check_startup_size(void)
{
	const char *raw = GetConfigOption("ssd_cache.size", true, false);
	const char *hint = NULL;
	int			mb;

	if (raw == NULL)
		return;
	if (!parse_int(raw, &mb, GUC_UNIT_MB, &hint) || mb < 1 || mb > SSD_CACHE_MAX_SIZE_MB)
		size_problem = psprintf("invalid value for parameter \"ssd_cache.size\": \"%s\" "
								"(it must be between 1MB and 16TB)", raw);
}

static bool
cache_configured(void)
{
	return cache_path != NULL && cache_path[0] != '\0';
}

/* Configured, and nothing known at load time stands in the way. */
static bool
cache_startable(void)
{
	return cache_configured() && size_problem == NULL && ssd_cache_hook_active();
}

static uint64
cache_nslots(void)
{
	return ((uint64) cache_size_mb << 20) / BLCKSZ;
}

/*
 * A background worker of the cache, from postmaster start (WAL redo reads
 * and evicts pages too), restarted a second after it exits with code 1.
 */
static void
register_worker(const char *function, const char *name)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "ssd_cache", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, name, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

static void
ssd_cache_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(ssd_cache_hook_shmem_size());
	RequestAddinShmemSpace(ssd_cache_fault_shmem_size());
	RequestAddinShmemSpace(ssd_cache_warmup_shmem_size());
	if (cache_startable())
	{
		RequestAddinShmemSpace(ssd_cache_writeback_shmem_size());
		RequestAddinShmemSpace(ssd_cache_directory_shmem_size(cache_nslots()));
		RequestAddinShmemSpace(ssd_cache_file_shmem_size(cache_nslots()));
		RequestAddinShmemSpace(ssd_cache_admit_shmem_size());
		RequestNamedLWLockTranche("ssd_cache", ssd_cache_directory_lwlocks());
	}
}

/*
 * Postmaster exit: after a clean shutdown, mark the cache trusted, with its
 * fresher pages, then write them back (nothing else runs any more) and
 * mark it trusted without.  Killed during the write-back (a service
 * manager's stop timeout), the file is trusted as it is at the next start:
 * every slot is as new as the disk or newer.
 */
static void
ssd_cache_postmaster_exit(int code, Datum arg)
{
	if (!ssd_cache_enabled() || ssd_cache_bypassed() || !ssd_cache_file_shut_down_cleanly())
		return;
	ssd_cache_file_note_shutdown(true);
	ssd_cache_file_note_shutdown(!ssd_cache_shutdown_write_back());
}

static void
ssd_cache_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ssd_cache_hook_shmem_init();
	ssd_cache_fault_shmem_init();
	ssd_cache_warmup_shmem_init();
	if (!cache_configured())
		ssd_cache_file_refuse_if_fresher("ssd_cache.path is not set");
	else if (!cache_startable())
	{
		ssd_cache_file_refuse_if_fresher(size_problem ? size_problem : ssd_cache_hook_problem());
		ssd_cache_set_off(size_problem ? size_problem : ssd_cache_hook_problem());
	}
	else
	{
		ssd_cache_writeback_shmem_init();
		ssd_cache_admit_shmem_init();
		ssd_cache_directory_shmem_init(cache_path, cache_nslots(),
									   ssd_cache_mode == SSD_MODE_LAZY_CLEANING);
		ssd_cache_wb_note_loaded();
		if (!IsUnderPostmaster && ssd_cache_enabled())
			ssd_cache_load_temperatures();
		/*
		 * Every shared memory initialization in the postmaster, including
		 * after a crash-restart cycle (whose shmem_exit() ran and forgot the
		 * callbacks registered before).
		 */
		if (!IsUnderPostmaster)
			on_shmem_exit(ssd_cache_postmaster_exit, (Datum) 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* What other ssdkit extensions may ask (ssdkit_cache.h). */
static SsdkitCacheApi cache_api = {
	.version = SSDKIT_CACHE_API_VERSION,
	.contains = ssd_cache_contains,
};

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

	/*
	 * Loaded after startup (LOAD, or the install-time check of CREATE
	 * EXTENSION), the library installs nothing, and it must not define
	 * postmaster-level settings, which is an error then.
	 */
	if (loaded_at_startup)
	{
		check_startup_size();
		DefineCustomStringVariable("ssd_cache.path",
								   "Path of the cache file on the SSD; empty disables the cache.",
								   "The file is created and sized at server start. It must be on a "
								   "local file system that supports O_DIRECT.",
								   &cache_path,
								   "",
								   PGC_POSTMASTER,
								   0,
								   NULL, NULL, NULL);

		DefineCustomIntVariable("ssd_cache.size",
								"Size of the SSD cache.",
								NULL,
								&cache_size_mb,
								1024,
								1,
								SSD_CACHE_MAX_SIZE_MB,
								PGC_POSTMASTER,
								GUC_UNIT_MB,
								NULL, NULL, NULL);

		DefineCustomBoolVariable("ssd_cache.data_directory_moved",
								 "Says that the data directory was moved (or its file system's device number changed) "
								 "since it ran in write-back mode.",
								 "Without it, a data directory whose pages newer than the disk are in the cache, and "
								 "whose device or inode changed, refuses to start: it may be a copy. Turn it on for "
								 "one start, then off.",
								 &ssd_cache_data_directory_moved,
								 false,
								 PGC_POSTMASTER,
								 0,
								 NULL, NULL, NULL);

		DefineCustomBoolVariable("ssd_cache.drop_damaged_entries",
								 "Starts despite damaged cache directory entries while the cache holds pages newer than the disk.",
								 "Without it such a start is refused: a damaged entry may have named the only up-to-date copy "
								 "of a page. Turn it on for one start, accepting that loss, then off.",
								 &ssd_cache_drop_damaged_entries,
								 false,
								 PGC_POSTMASTER,
								 0,
								 NULL, NULL, NULL);
	}

	DefineCustomEnumVariable("ssd_cache.mode",
							 "write_through: every write goes to the disk; write_back: the SSD absorbs writes; "
							 "lazy_cleaning: the SSD absorbs writes until the next checkpoint.",
							 "write_back keeps pages newer than the disk on the SSD (the thesis's PC): "
							 "the data directory is then complete only with the cache, until "
							 "ssd_cache_flush() or a clean shutdown writes them back. lazy_cleaning "
							 "(the thesis's LC baseline) writes them back at every checkpoint and "
							 "starts empty after a restart.",
							 &ssd_cache_mode,
							 SSD_MODE_WRITE_THROUGH,
							 mode_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("ssd_cache.evict_batch",
							"Pages the cleaner writes back together (write-back: PC2; lazy cleaning).",
							"The pages of one batch are written back to the disk with one "
							"sync per file segment; 1 writes back one at a time (PC).",
							&ssd_cache_evict_batch,
							128, 1, SSD_WRITE_BACK_MAX_BATCH,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("ssd_cache.policy",
							 "Admission and replacement policy: tac or clock.",
							 "tac admits pages by region temperature (I/O time saved); "
							 "clock admits every random read.",
							 &ssd_cache_policy,
							 SSD_POLICY_TAC,
							 policy_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("ssd_cache.sequential_detection",
							 "How reads are recognised as sequential (never admitted).",
							 "window: the region occurs 3 times among the backend's last 20 reads; "
							 "adjacent: the read follows the previous block; both: either; "
							 "none: every read counts as random.",
							 &ssd_cache_seq_detect,
							 SSD_SEQ_BOTH,
							 seq_detect_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_cache.disk_random_read_time",
							 "Time of one random 8 kB read from the disk.",
							 "TAC heats a region by this minus ssd_random_read_time for each random read. "
							 "ssd_cache_measure_devices() measures it.",
							 &ssd_cache_disk_random_ms,
							 5.0, 0.001, 10000.0,
							 PGC_SIGHUP,
							 GUC_UNIT_MS,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_cache.disk_sequential_read_time",
							 "Time of one 8 kB read from the disk within a sequential read.",
							 NULL,
							 &ssd_cache_disk_seq_ms,
							 0.04, 0.0001, 10000.0,
							 PGC_SIGHUP,
							 GUC_UNIT_MS,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_cache.ssd_random_read_time",
							 "Time of one random 8 kB read from the SSD.",
							 NULL,
							 &ssd_cache_ssd_random_ms,
							 0.03, 0.0001, 10000.0,
							 PGC_SIGHUP,
							 GUC_UNIT_MS,
							 NULL, NULL, NULL);

	ssd_cache_warmup_define_gucs();

	/* Unknown "ssd_cache.*" settings are errors, so a typo cannot go unnoticed. */
	MarkGUCPrefixReserved("ssd_cache");

	if (!loaded_at_startup)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ssd_cache_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ssd_cache_shmem_startup;

	ssd_cache_hook_install();
	ssd_cache_lifecycle_install();
	ssd_cache_wb_install_hooks();
	/* before any child is forked: every process finds it (ssdkit_cache.h) */
	*find_rendezvous_variable(SSDKIT_CACHE_RENDEZVOUS) = &cache_api;
	ssd_cache_warmup_register();
	if (cache_startable())
	{
		register_worker("ssd_cache_admit_main", "ssd_cache admission");
		register_worker("ssd_cache_cleaner_main", "ssd_cache cleaner");
	}
}

const char *
ssd_cache_configured_path(void)
{
	return cache_configured() ? cache_path : NULL;
}

/*
 * The SQL functions other than ssd_cache_status() need the shared state the
 * postmaster sets up when it preloads the library.  CREATE EXTENSION works
 * without it (so that a dump of a database that had the extension restores
 * anywhere, with a WARNING); those functions then say why they cannot run.
 */
void
ssd_cache_require_preload(void)
{
	if (!loaded_at_startup)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ssd_cache is not loaded through shared_preload_libraries"),
				 errdetail("The library was loaded after server start, so it caches nothing and has no statistics."),
				 errhint("Add ssd_cache to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* ssd_cache_status(): library version, how it was loaded, io_uring support. */
Datum
ssd_cache_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
