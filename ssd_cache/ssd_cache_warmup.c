/*-------------------------------------------------------------------------
 *
 * ssd_cache_warmup.c
 *	  Buffer-pool warm-up after a restart, a crash or a failover (Park's
 *	  framework, thesis chapter 4): settings, shared memory, the warm-up
 *	  process, the connection gate and the SQL view.
 *
 * The "ssd_cache warm-up" process starts with the postmaster:
 *
 *	1. It reads the state file the previous run recorded (see
 *	   ssd_cache_warmup_state.c) and plans the reads while crash recovery
 *	   runs (ssd_cache_warmup_plan.c).
 *	2. Once the server is consistent, it starts one loader per database in
 *	   turn (ssd_cache_warmup_load.c), which bring the planned pages into
 *	   shared_buffers; queries' misses on pending chunks promote them.
 *	3. Then, after every checkpoint (restartpoint on a standby) and at
 *	   shutdown, it records shared_buffers again; never while a warm-up is
 *	   still loading (the file would then describe a half-warm pool) and
 *	   never during crash recovery (the pool holds what redo touched).
 *
 * Warm-up works with or without the SSD cache file: pages the cache holds
 * are loaded from it, without disk reads.  Piggybacking needs the read
 * hook, so it is off where ssd_cache could not wrap the storage manager.
 *
 * Scenario (a), ssd_cache.warmup_hold_connections: client connections wait
 * in authentication until the warm-up ends, at most
 * ssd_cache.warmup_hold_timeout after the server started (and always less
 * than authentication_timeout, which would end them).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "common/controldata_utils.h"
#include "funcapi.h"
#include "libpq/auth.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "replication/walsender.h"
#include "storage/buf_internals.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "ssd_cache.h"
#include "ssd_cache_warmup.h"

PGDLLEXPORT void ssd_cache_warmup_main(Datum arg);

PG_FUNCTION_INFO_V1(ssd_cache_warmup_status);
PG_FUNCTION_INFO_V1(ssd_cache_warmup_devices);

bool		ssd_cache_warmup_enabled = true;
int			ssd_cache_warmup_preload = WARMUP_PRELOAD_AUTO;
bool		ssd_cache_warmup_hold = false;
int			ssd_cache_warmup_hold_timeout = 50;
double		ssd_cache_warmup_io_share = 0.5;
double		ssd_cache_warmup_pool_fraction = 0.95;
int			ssd_cache_warmup_max_request_kb = 512;

WarmupShared *warmup_shared = NULL;
WarmupChunk *warmup_chunks = NULL;
WarmupHot  *warmup_hot = NULL;
uint32	   *warmup_order = NULL;
uint32		warmup_capacity = 0;

static ClientAuthentication_hook_type prev_client_auth_hook = NULL;

static const struct config_enum_entry preload_options[] = {
	{"auto", WARMUP_PRELOAD_AUTO, false},
	{"always", WARMUP_PRELOAD_ALWAYS, false},
	{"never", WARMUP_PRELOAD_NEVER, false},
	{NULL, 0, false}
};

static const char *const phase_names[] = {
	[WARMUP_OFF] = "off",
	[WARMUP_STARTING] = "starting",
	[WARMUP_PLANNING] = "planning",
	[WARMUP_LOADING] = "loading",
	[WARMUP_DONE] = "done",
	[WARMUP_NOTHING] = "nothing to load",
};

void
ssd_cache_warmup_define_gucs(void)
{
	if (process_shared_preload_libraries_in_progress)
		DefineCustomBoolVariable("ssd_cache.warmup",
								 "Records shared_buffers at every checkpoint and reloads it after a restart.",
								 "Works with or without the SSD cache file.",
								 &ssd_cache_warmup_enabled,
								 true,
								 PGC_POSTMASTER,
								 0,
								 NULL, NULL, NULL);

	DefineCustomEnumVariable("ssd_cache.warmup_preload",
							 "Whether the warm-up reads pages from the disk: auto, always or never.",
							 "auto: where the device reads the planned chunks faster than queries "
							 "would read their pages one by one (the estimator); never: only pages "
							 "held by the SSD cache are loaded.",
							 &ssd_cache_warmup_preload,
							 WARMUP_PRELOAD_AUTO,
							 preload_options,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("ssd_cache.warmup_hold_connections",
							 "Client connections wait until the warm-up has loaded the buffer pool.",
							 "At most ssd_cache.warmup_hold_timeout after the server started.",
							 &ssd_cache_warmup_hold,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("ssd_cache.warmup_hold_timeout",
							"Longest time connections wait for the warm-up.",
							"Counted from the server's start; kept below authentication_timeout.",
							&ssd_cache_warmup_hold_timeout,
							50, 1, 600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_cache.warmup_io_share",
							 "Largest share of the disk's time the warm-up's reads may take.",
							 "The loader sleeps after each read so the queries keep the rest; "
							 "1 means no throttle. Connections held for the warm-up lift it.",
							 &ssd_cache_warmup_io_share,
							 0.5, 0.01, 1.0,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("ssd_cache.warmup_pool_fraction",
							 "The warm-up stops once it has loaded this share of shared_buffers.",
							 "It also stops when shared_buffers has no free buffer left.",
							 &ssd_cache_warmup_pool_fraction,
							 0.95, 0.01, 1.0,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("ssd_cache.warmup_max_request",
							"Largest read the warm-up issues.",
							"The planner measures each power of two from 8kB up to this and "
							"keeps the size that reads the recorded pages fastest.",
							&ssd_cache_warmup_max_request_kb,
							512, 8, 1024,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
}

Size
ssd_cache_warmup_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(WarmupShared));

	if (!ssd_cache_warmup_enabled)
		return size;
	size = add_size(size, MAXALIGN(mul_size(NBuffers, sizeof(WarmupChunk))));
	size = add_size(size, MAXALIGN(mul_size(NBuffers, sizeof(WarmupHot))));
	size = add_size(size, MAXALIGN(mul_size(NBuffers, sizeof(uint32))));
	return size;
}

void
ssd_cache_warmup_shmem_init(void)
{
	bool		found;
	char	   *p;

	p = ShmemInitStruct("ssd_cache warm-up", ssd_cache_warmup_shmem_size(), &found);
	warmup_shared = (WarmupShared *) p;
	if (ssd_cache_warmup_enabled)
	{
		warmup_capacity = NBuffers;
		p += MAXALIGN(sizeof(WarmupShared));
		warmup_chunks = (WarmupChunk *) p;
		p += MAXALIGN(mul_size(NBuffers, sizeof(WarmupChunk)));
		warmup_hot = (WarmupHot *) p;
		p += MAXALIGN(mul_size(NBuffers, sizeof(WarmupHot)));
		warmup_order = (uint32 *) p;
	}
	if (found)
		return;
	memset(warmup_shared, 0, sizeof(WarmupShared));
	SpinLockInit(&warmup_shared->mutex);
	warmup_shared->phase = ssd_cache_warmup_enabled ? WARMUP_STARTING : WARMUP_OFF;
	if (!ssd_cache_warmup_enabled)
		strlcpy(warmup_shared->reason, "ssd_cache.warmup is off", sizeof(warmup_shared->reason));
	pg_atomic_init_u64(&warmup_shared->pages_loaded, 0);
	pg_atomic_init_u64(&warmup_shared->pages_from_ssd, 0);
	pg_atomic_init_u64(&warmup_shared->cold_pages_read, 0);
	pg_atomic_init_u64(&warmup_shared->disk_requests, 0);
	pg_atomic_init_u64(&warmup_shared->chunks_loaded, 0);
	pg_atomic_init_u64(&warmup_shared->chunks_piggybacked, 0);
	pg_atomic_init_u64(&warmup_shared->chunks_skipped, 0);
}

void
warmup_set_phase(WarmupPhase phase, const char *reason)
{
	bool		ended = (phase == WARMUP_DONE || phase == WARMUP_NOTHING);
	bool		changed;
	TimestampTz now = GetCurrentTimestamp();

	/* the plan's writes are visible before the phase that publishes them */
	pg_write_barrier();
	SpinLockAcquire(&warmup_shared->mutex);
	changed = warmup_shared->phase != phase;
	warmup_shared->phase = phase;
	if (reason && changed)
		strlcpy(warmup_shared->reason, reason, sizeof(warmup_shared->reason));
	if (phase == WARMUP_LOADING && changed)
		warmup_shared->loading_at = now;
	if (ended && changed)
		warmup_shared->finished_at = now;
	SpinLockRelease(&warmup_shared->mutex);
	if (ended && changed)
		ereport(LOG,
				(errmsg("ssd_cache warm-up: %s: %llu pages loaded (%llu from the SSD cache) in %llu disk reads",
						reason ? reason : phase_names[phase],
						(unsigned long long) pg_atomic_read_u64(&warmup_shared->pages_loaded),
						(unsigned long long) pg_atomic_read_u64(&warmup_shared->pages_from_ssd),
						(unsigned long long) pg_atomic_read_u64(&warmup_shared->disk_requests))));
}

/*
 * Scenario (a): a client connection waits here, after authentication,
 * until the warm-up ends or the hold times out.
 */
static void
warmup_client_auth(Port *port, int status)
{
	if (prev_client_auth_hook)
		prev_client_auth_hook(port, status);
	/* a reload that turns the setting off lets new connections in */
	if (status != STATUS_OK || am_walsender || warmup_shared == NULL ||
		!warmup_shared->hold || !ssd_cache_warmup_hold)
		return;

	while (warmup_shared->phase == WARMUP_STARTING ||
		   warmup_shared->phase == WARMUP_PLANNING ||
		   warmup_shared->phase == WARMUP_LOADING)
	{
		if (GetCurrentTimestamp() >= warmup_shared->hold_until)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

void
ssd_cache_warmup_register(void)
{
	BackgroundWorker worker;

	if (!ssd_cache_warmup_enabled)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 10;
	strlcpy(worker.bgw_library_name, "ssd_cache", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "ssd_cache_warmup_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "ssd_cache warm-up", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "ssd_cache warm-up", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);

	prev_client_auth_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = warmup_client_auth;
}

/* Read the state file and plan; the phase says what came of it. */
static void
plan_warmup(void)
{
	WarmupStateInfo info;
	WarmupPage *pages;
	bool		hold = ssd_cache_warmup_hold;
	TimestampTz now = GetCurrentTimestamp();
	int			timeout_s = Min(ssd_cache_warmup_hold_timeout, AuthenticationTimeout - 2);

	SpinLockAcquire(&warmup_shared->mutex);
	warmup_shared->hold = hold;
	warmup_shared->started_at = now;
	warmup_shared->hold_until = TimestampTzPlusMilliseconds(now, timeout_s * 1000L);
	warmup_shared->phase = WARMUP_PLANNING;
	SpinLockRelease(&warmup_shared->mutex);

	pages = warmup_read_state(&info, warmup_capacity);
	if (pages == NULL)
	{
		warmup_set_phase(WARMUP_NOTHING, "no usable state file");
		return;
	}
	SpinLockAcquire(&warmup_shared->mutex);
	warmup_shared->planned_from = info;
	SpinLockRelease(&warmup_shared->mutex);
	warmup_plan(pages, info.npages, hold);
	pfree(pages);
	if (warmup_shared->nchunks == 0)
		warmup_set_phase(WARMUP_NOTHING, "the state file holds no page");
	else
		warmup_set_phase(WARMUP_LOADING, NULL);
}

/*
 * Databases with chunks to load, in the order of their hottest chunk.  A
 * loader holds a connection to its database while it runs (DROP DATABASE
 * and CREATE DATABASE ... TEMPLATE see it), so none starts for a database
 * whose chunks were all pruned.  The shared catalogs' chunks are taken by
 * whichever loader runs.
 */
static Oid *
databases_to_load(int *ndbs)
{
	Oid		   *dbs = palloc(sizeof(Oid) * Max(warmup_shared->nchunks, 1));
	int			n = 0;

	for (uint32 i = 0; i < warmup_shared->nchunks; i++)
	{
		WarmupChunk *c = &warmup_chunks[warmup_order[i]];
		Oid			db = c->node.dbNode;
		bool		seen = (db == InvalidOid ||
							pg_atomic_read_u32(&c->status) == CHUNK_SKIPPED);

		for (int k = 0; k < n && !seen; k++)
			seen = dbs[k] == db;
		if (!seen)
			dbs[n++] = db;
	}
	*ndbs = n;
	return dbs;
}

static BackgroundWorkerHandle *
start_loader(Oid db)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "ssd_cache", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "ssd_cache_warmup_loader_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "ssd_cache warm-up loader", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "ssd_cache warm-up loader", BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(db);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		return NULL;
	return handle;
}

/* The chunks no loader reached, once every loader has run. */
static void
skip_the_rest(void)
{
	for (uint32 i = 0; i < warmup_shared->nchunks; i++)
	{
		uint32		status = pg_atomic_read_u32(&warmup_chunks[i].status);

		if ((status == CHUNK_PENDING || status == CHUNK_PROMOTED) &&
			pg_atomic_compare_exchange_u32(&warmup_chunks[i].status, &status, CHUNK_SKIPPED))
			pg_atomic_fetch_add_u64(&warmup_shared->chunks_skipped, 1);
	}
}

/* Recording is meaningful: a pool queries filled, not redo or a warm-up. */
static bool
may_record(void)
{
	WarmupPhase phase = warmup_shared->phase;

	return (phase == WARMUP_DONE || phase == WARMUP_NOTHING) &&
		(!RecoveryInProgress() || HotStandbyActive());
}

static void
record_now(void)
{
	WarmupStateInfo info;
	double		ms;

	if (!warmup_record(&info, &ms))
		return;
	SpinLockAcquire(&warmup_shared->mutex);
	warmup_shared->recorded = info;
	warmup_shared->record_ms = ms;
	SpinLockRelease(&warmup_shared->mutex);
	elog(DEBUG1, "ssd_cache warm-up: recorded %u pages in %.1f ms", info.npages, ms);
}

void
ssd_cache_warmup_main(Datum arg)
{
	Oid		   *dbs = NULL;
	int			ndbs = 0;
	int			next_db = 0;
	BackgroundWorkerHandle *loader = NULL;
	XLogRecPtr	last_redo = InvalidXLogRecPtr;
	bool		rest_skipped = false;
	int			slot_waits = 0;
	pid_t		pid;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	pgstat_report_appname("ssd_cache warm-up");

	/* a predecessor that died planning left nothing usable */
	if (warmup_shared->phase == WARMUP_PLANNING)
		warmup_set_phase(WARMUP_NOTHING, "the warm-up process restarted while planning");
	if (warmup_shared->phase == WARMUP_STARTING)
		plan_warmup();
	if (warmup_shared->phase == WARMUP_LOADING)
		dbs = databases_to_load(&ndbs);
	else
		next_db = ndbs;

	/*
	 * The first checkpoint to record is the first after the one the server
	 * started from (pg_control's, read now: a CHECKPOINT right after the
	 * start may come before this process first looks).
	 */
	{
		bool		crc_ok;
		ControlFileData *control = get_controlfile(DataDir, &crc_ok);

		if (crc_ok)
			last_redo = control->checkPointCopy.redo;
		pfree(control);
	}

	for (;;)
	{
		XLogRecPtr	redo;

		/*
		 * Exit 1, so that the postmaster starts a new warm-up process after
		 * a pg_terminate_backend(); at shutdown it starts none.
		 */
		if (ShutdownRequestPending)
		{
			if (may_record())
				record_now();
			proc_exit(1);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		if (loader != NULL &&
			GetBackgroundWorkerPid(loader, &pid) == BGWH_STOPPED)
		{
			pfree(loader);
			loader = NULL;
		}
		if (warmup_shared->phase == WARMUP_LOADING)
		{
			if (loader == NULL && next_db < ndbs)
			{
				/* no free worker slot: try again for a minute, then skip */
				loader = start_loader(dbs[next_db]);
				if (loader != NULL || ++slot_waits >= 600)
				{
					if (loader == NULL)
						ereport(LOG,
								(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
								 errmsg("ssd_cache warm-up: no background worker slot for the loader of database %u", dbs[next_db]),
								 errhint("Raise max_worker_processes.")));
					next_db++;
					slot_waits = 0;
				}
			}
			if (loader == NULL && next_db >= ndbs)
				warmup_set_phase(WARMUP_DONE, "every planned chunk was read or skipped");
		}
		if (warmup_shared->phase != WARMUP_LOADING && loader == NULL && !rest_skipped)
		{
			skip_the_rest();
			rest_skipped = true;
		}

		/* at each checkpoint or restartpoint: its redo pointer moved */
		redo = GetRedoRecPtr();
		if (redo != InvalidXLogRecPtr && redo != last_redo && may_record())
		{
			if (last_redo != InvalidXLogRecPtr)
				record_now();
			last_redo = redo;
		}

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 warmup_shared->phase == WARMUP_LOADING ? 100 : 1000,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

static TimestampTz
nonzero_ts(TimestampTz t, bool *isnull)
{
	*isnull = (t == 0);
	return t;
}

/* ssd_cache_warmup_status(): one row, behind the ssd_cache_warmup view. */
Datum
ssd_cache_warmup_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[22];
	bool		nulls[22];
	WarmupShared copy;
	int			i = 0;

	ssd_cache_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, 0, sizeof(nulls));
	SpinLockAcquire(&warmup_shared->mutex);
	memcpy(&copy, warmup_shared, offsetof(WarmupShared, pages_loaded));
	SpinLockRelease(&warmup_shared->mutex);

	values[i++] = CStringGetTextDatum(phase_names[copy.phase]);
	if (copy.reason[0])
		values[i++] = CStringGetTextDatum(copy.reason);
	else
		nulls[i++] = true;
	values[i++] = BoolGetDatum(copy.hold);
	values[i] = TimestampTzGetDatum(nonzero_ts(copy.started_at, &nulls[i]));
	i++;
	values[i] = TimestampTzGetDatum(nonzero_ts(copy.loading_at, &nulls[i]));
	i++;
	values[i] = TimestampTzGetDatum(nonzero_ts(copy.finished_at, &nulls[i]));
	i++;
	values[i] = TimestampTzGetDatum(nonzero_ts(copy.planned_from.recorded_at, &nulls[i]));
	i++;
	values[i++] = Int64GetDatum(copy.planned_from.npages);
	values[i++] = Int64GetDatum(copy.nchunks);
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->pages_loaded));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->pages_from_ssd));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->disk_requests));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->cold_pages_read));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->chunks_loaded));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->chunks_piggybacked));
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&warmup_shared->chunks_skipped));
	values[i] = TimestampTzGetDatum(nonzero_ts(copy.recorded.recorded_at, &nulls[i]));
	i++;
	if (copy.recorded.recorded_at != 0)
	{
		values[i++] = LSNGetDatum(copy.recorded.redo);
		values[i++] = Int64GetDatum(copy.recorded.npages);
		values[i++] = Float8GetDatum(copy.record_ms);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
		nulls[i++] = true;
	}
	values[i++] = Int64GetDatum(NBuffers);
	values[i++] = Int32GetDatum(Max(copy.queue_depth, 1));
	Assert(i == lengthof(values));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ssd_cache_warmup_devices(): the planner's measurements and decisions. */
Datum
ssd_cache_warmup_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WarmupDevice devices[WARMUP_MAX_DEVICES];
	int			ndevices;

	ssd_cache_require_preload();
	InitMaterializedSRF(fcinfo, 0);
	SpinLockAcquire(&warmup_shared->mutex);
	ndevices = warmup_shared->ndevices;
	memcpy(devices, warmup_shared->devices, sizeof(WarmupDevice) * ndevices);
	SpinLockRelease(&warmup_shared->mutex);

	for (int d = 0; d < ndevices; d++)
	{
		WarmupDevice *dev = &devices[d];
		Datum		values[10];
		bool		nulls[10];

		memset(nulls, 0, sizeof(nulls));
		values[0] = ObjectIdGetDatum(dev->spcNode);
		values[1] = Int32GetDatum(dev->request_blocks * (BLCKSZ / 1024));
		values[2] = BoolGetDatum(dev->measured);
		values[3] = Float8GetDatum(dev->page_ms);
		values[4] = Float8GetDatum(dev->request_ms);
		values[5] = Int64GetDatum(dev->hot_pages);
		values[6] = Int64GetDatum(dev->chunks);
		values[7] = Float8GetDatum(dev->density);
		values[8] = Float8GetDatum(dev->break_even);
		values[9] = BoolGetDatum(dev->preload);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
