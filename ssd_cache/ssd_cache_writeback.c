/*-------------------------------------------------------------------------
 *
 * ssd_cache_writeback.c
 *	  Write-back (the thesis's PC): the SSD as a persistent write-back
 *	  buffer pool under shared_buffers.  This file decides which writes the
 *	  SSD absorbs instead of the disk; ssd_cache_directory.c carries them
 *	  out and owns every slot and mark.
 *
 * The decision table (digest 000 §1.4 and §1.6), for a dirty page the
 * buffer manager writes:
 *
 *	page cached (clean or fresher)	overwritten in place and marked fresher
 *									than the disk, whoever writes it and in
 *									whatever pattern;
 *	not cached, a backend's (or WAL	random: admitted into a free slot,
 *	replay's) eviction				fresher (once the cache has filled, only
 *									if its region passes TAC's bar, as a
 *									read would); sequential (a ring writing
 *									in block order, by the same test as
 *									reads): to the disk;
 *	not cached, the checkpointer	the hybrid rule: admitted while the
 *									cache has not yet filled once (phase
 *									A), to the disk after (phase B: in
 *									place only);
 *	not cached, the bgwriter		the same rule as the checkpointer: its
 *									writes are checkpoint-like (dirty pages
 *									written without being evicted), and
 *									admitting them when full would evict
 *									pages the backends' own evictions want.
 *
 * Extended pages (table tails growing): smgrextend always goes to the disk
 * (the file must grow there; the page is usually all zeros); a later write
 * of the page follows the table above like any other.
 *
 * Writers never evict.  Admissions take a free slot or go to the disk;
 * the admission worker keeps a reserve of free slots: it evicts clean
 * victims at once and hands fresher ones to the cleaner process
 * (ssd_cache_cleaner.c, PC2's cleaner), which writes them back
 * ssd_cache.evict_batch at a time with one sync per segment; their slots
 * are freed only then.
 *
 * Lazy cleaning (ssd_cache.mode = lazy_cleaning, the thesis's LC, kept as
 * the baseline write-back is measured against) absorbs the same writes,
 * except that the checkpointer and the bgwriter never take a new slot;
 * every checkpoint writes back each page absorbed before it, so the data
 * directory never depends on the cache (no marker, no refusal to start),
 * the cleaner writes pages back once half of the cache is fresher, and the
 * cache starts empty after a restart.
 *
 * Write-back is refused, and the cache runs write-through with a WARNING
 * (and the reason in ssd_cache_stats.problem), when it could lose data:
 *	- wal_level = minimal: commits of relations created in the transaction
 *	  sync them through a path the cache cannot see (smgrdosyncall);
 *	- full_page_writes = off: nothing would repair an in-place slot write
 *	  torn by a crash;
 *	- fsync = off: no checkpoint would be recorded in the cache header.
 * Pages already fresher stay so until written back (ssd_cache_flush() or a
 * clean shutdown).
 *
 * Base backups copy the data files behind the cache too.  A running
 * pg_basebackup (BASE_BACKUP) is seen at the checkpoint it starts from:
 * write-back is suspended for its duration and every fresher page written
 * back before that checkpoint completes.  A standby's backup starts from
 * its last restartpoint, which may have been made before the backup
 * began: every restartpoint writes back what was fresher before it.  The
 * SQL-level pg_backup_start() is seen when it is called (the object access
 * hook below).  File-system snapshots cannot be seen: they need
 * ssd_cache.mode = write_through and ssd_cache_flush() first (the README
 * says so).
 *
 * Database-level commands that copy files behind smgr's back (CREATE
 * DATABASE ... STRATEGY FILE_COPY reads its template's files, ALTER
 * DATABASE ... SET TABLESPACE copies the database's) suspend write-back for
 * the database, then write back its fresher pages, so that the files are
 * complete when copied.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "common/relpath.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "commands/progress.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/backend_progress.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "storage/ipc.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "utils/hsearch.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_disk.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_writeback.h"

PG_FUNCTION_INFO_V1(ssd_cache_flush);

int			ssd_cache_mode = SSD_MODE_WRITE_THROUGH;
int			ssd_cache_evict_batch = 128;

/* Databases whose files are being copied: at most a few at once. */
#define SSD_WB_MAX_SUSPENDED	16

#define SSD_WB_WHY_LEN		160

typedef struct SsdWritebackShared
{
	/*
	 * Whether write-back is in force, for every process at once: settings
	 * are reloaded by each process between commands, so a backend in a long
	 * statement would go on absorbing after the others switched.  The
	 * admission worker publishes it after each reload (the postmaster at
	 * start).
	 */
	pg_atomic_uint32 active;	/* SsdCacheMode in force: write-through
								 * (also when refused), write-back, lazy
								 * cleaning */
	slock_t		why_lock;
	char		why[SSD_WB_WHY_LEN];	/* why refused, or "" */
	pg_atomic_uint32 filled_once;	/* the cache has been full: checkpoint
									 * phase B */
	pg_atomic_uint64 backup;	/* bit 0: a base backup runs (write-through);
								 * the rest counts backups seen */
	pg_atomic_uint32 sql_backups;	/* sessions between pg_backup_start()
									 * and pg_backup_stop() */
	pg_atomic_uint32 nsuspended;
	slock_t		lock;
	Oid			suspended[SSD_WB_MAX_SUSPENDED];
	int			suspend_count[SSD_WB_MAX_SUSPENDED];
} SsdWritebackShared;

static SsdWritebackShared *wb = NULL;

static bool base_backup_running(void);
static int64 base_backup_phase(void);
static bool suspend_for_backup(void);
static void write_back_for_backup(bool low_level);
static void drain(void);

Size
ssd_cache_writeback_shmem_size(void)
{
	return MAXALIGN(sizeof(SsdWritebackShared));
}

void
ssd_cache_writeback_shmem_init(void)
{
	bool		found;

	wb = ShmemInitStruct("ssd_cache write-back", sizeof(SsdWritebackShared), &found);
	memset(wb, 0, sizeof(SsdWritebackShared));
	pg_atomic_init_u32(&wb->active, 0);
	SpinLockInit(&wb->why_lock);
	pg_atomic_init_u32(&wb->filled_once, 0);
	pg_atomic_init_u64(&wb->backup, 0);
	pg_atomic_init_u32(&wb->sql_backups, 0);
	ssd_cache_wb_publish_mode();
	pg_atomic_init_u32(&wb->nsuspended, 0);
	SpinLockInit(&wb->lock);
}

/*
 * Which mode does this process's configuration ask for, and allow?  If
 * ssd_cache.mode asks for write-back or lazy cleaning but it is refused,
 * *why says why (both keep pages newer than the disk on the SSD, so both
 * need what write-back needs).
 */
static SsdCacheMode
configured_mode(const char **why)
{
	*why = NULL;
	if (ssd_cache_mode == SSD_MODE_WRITE_THROUGH)
		return SSD_MODE_WRITE_THROUGH;
	if (!IsPostmasterEnvironment)
		*why = "write-back does not run in single-user mode (no checkpointer, no cleaner); running write-through";
	else if (wal_level < WAL_LEVEL_REPLICA)
		*why = "write-back needs wal_level replica or logical; running write-through";
	else if (!fullPageWrites)
		*why = "write-back needs full_page_writes = on; running write-through";
	else if (!enableFsync)
		*why = "write-back needs fsync = on; running write-through";
	else if (!pgstat_track_activities)
		*why = "write-back needs track_activities = on (it watches for base backups); running write-through";
	return *why == NULL ? (SsdCacheMode) ssd_cache_mode : SSD_MODE_WRITE_THROUGH;
}

/* The postmaster at start, the admission worker after each reload. */
void
ssd_cache_wb_publish_mode(void)
{
	const char *why;
	SsdCacheMode mode = configured_mode(&why);

	if (wb == NULL)
		return;
	SpinLockAcquire(&wb->why_lock);
	strlcpy(wb->why, why ? why : "", SSD_WB_WHY_LEN);
	SpinLockRelease(&wb->why_lock);
	pg_atomic_write_u32(&wb->active, (uint32) mode);
}

/*
 * Is write-back in force (as published for every process)?  If
 * ssd_cache.mode asks for it but it is refused, *why_not (if not NULL) gets
 * why, palloc'd; otherwise NULL.
 */
bool
ssd_cache_write_back_active(char **why_not)
{
	if (why_not)
	{
		*why_not = NULL;
		if (wb != NULL)
		{
			SpinLockAcquire(&wb->why_lock);
			if (wb->why[0] != '\0')
				*why_not = pstrdup(wb->why);
			SpinLockRelease(&wb->why_lock);
		}
	}
	return wb != NULL && pg_atomic_read_u32(&wb->active) != SSD_MODE_WRITE_THROUGH;
}

/* Is the write-back in force lazy cleaning (as published)? */
bool
ssd_cache_wb_lazy_cleaning(void)
{
	return wb != NULL && pg_atomic_read_u32(&wb->active) == SSD_MODE_LAZY_CLEANING;
}

static bool
suspended(Oid dbNode)
{
	bool		found = false;
	int			i;

	if (pg_atomic_read_u32(&wb->nsuspended) == 0)
		return false;
	SpinLockAcquire(&wb->lock);
	for (i = 0; i < SSD_WB_MAX_SUSPENDED && !found; i++)
		found = wb->suspend_count[i] > 0 && wb->suspended[i] == dbNode;
	SpinLockRelease(&wb->lock);
	return found;
}

/*
 * Is the relation unlogged (it has an init fork)?  Crash recovery resets
 * unlogged relations by copying files behind the cache, so their pages are
 * never absorbed.  Memoized per process: a relfilenode keeps its
 * persistence for its life (ALTER TABLE ... SET LOGGED rewrites into a new
 * one), and the memo is dropped when it grows large.
 */
static bool
relation_unlogged(RelFileNode rnode)
{
	static HTAB *memo = NULL;
	struct
	{
		RelFileNode key;
		bool		unlogged;
	}		   *ent;
	bool		found;

	if (memo != NULL && hash_get_num_entries(memo) > 4096)
	{
		hash_destroy(memo);
		memo = NULL;
	}
	if (memo == NULL)
	{
		HASHCTL		info;

		memset(&info, 0, sizeof(info));
		info.keysize = sizeof(RelFileNode);
		info.entrysize = sizeof(*ent);
		memo = hash_create("ssd_cache relation persistence", 256, &info,
						   HASH_ELEM | HASH_BLOBS);
	}
	ent = hash_search(memo, &rnode, HASH_ENTER, &found);
	if (!found)
		ent->unlogged = ssd_cache_disk_relation_unlogged(rnode);
	return ent->unlogged;
}

/* Asked again by the directory under its arming lock (see there). */
static SsdAbsorbPermission
absorb_allowed(Oid dbNode)
{
	uint32		mode = pg_atomic_read_u32(&wb->active);

	if (mode == SSD_MODE_WRITE_THROUGH || (pg_atomic_read_u64(&wb->backup) & 1) != 0 ||
		suspended(dbNode))
		return SSD_ABSORB_NO;
	return mode == SSD_MODE_LAZY_CLEANING ? SSD_ABSORB_VOLATILE : SSD_ABSORB_DURABLE;
}

/* Lazy cleaning may drop the marker (ssd_cache_disarm_unless). */
static SsdAbsorbPermission
lazy_cleaning_permission(Oid dbNode)
{
	return ssd_cache_wb_lazy_cleaning() ? SSD_ABSORB_VOLATILE : SSD_ABSORB_DURABLE;
}

/*
 * The write path (smgrwrite, not skipFsync, a main fork of a permanent
 * relation): should the SSD take this write instead of the disk?  True if
 * it did; the disk must then not be written.
 */
bool
ssd_cache_wb_absorb(const BufferTag *tag, const char *page)
{
	bool		may_admit;
	bool		absorbed;

	/*
	 * fsync = off is refused when published, but this process may have
	 * reloaded it first: then the checkpointer may skip the sync phase where
	 * lazy cleaning writes back.
	 */
	if (!ssd_cache_write_back_active(NULL) || !enableFsync ||
		absorb_allowed(tag->rnode.dbNode) == SSD_ABSORB_NO ||
		relation_unlogged(tag->rnode))
		return false;
	switch (MyBackendType)
	{
		case B_CHECKPOINTER:
		case B_BG_WRITER:
			/* Lazy cleaning: to the disk, or in place (written back below). */
			may_admit = pg_atomic_read_u32(&wb->filled_once) == 0 &&
				!ssd_cache_wb_lazy_cleaning();
			break;
		default:
			/*
			 * Random: admitted, but once the cache has filled only if its
			 * region is as warm as TAC's bar for reads.  Admitting every
			 * dirty eviction (the thesis's PC, which replaces by clock)
			 * evicted hot read pages for pages written once: with TPC-C
			 * and the cache at 25% of the database, write-back ran at
			 * 0.66x write-through.
			 */
			may_admit = !ssd_cache_write_sequential(tag) &&
				ssd_cache_should_offer(ssd_cache_region_temperature(tag), false,
									   pg_atomic_read_u32(&wb->filled_once) != 0);
			break;
	}
	absorbed = ssd_cache_absorb_write(tag, page, may_admit, absorb_allowed);
	if (absorbed && MyBackendType == B_CHECKPOINTER)
		ssd_cache_count(SSD_ABSORBED_CHECKPOINT, 1);
	if (may_admit && ssd_cache_free_slots() == 0)
		ssd_cache_admit_wake_worker();
	return absorbed;
}

/* How many free slots the admission worker keeps in write-back mode. */
static int
reserve_target(void)
{
	uint64		nslots = ssd_cache_nslots();
	uint64		target = Max((uint64) 2 * ssd_cache_evict_batch, Max(nslots / 256, 8));

	/* Two batches, but never a large share of a small cache. */
	return (int) Min(target, Max(nslots / 16, 1));
}

/* For the views: why write-back is suspended right now, or NULL. */
const char *
ssd_cache_wb_suspension(void)
{
	if (wb == NULL || pg_atomic_read_u32(&wb->active) == SSD_MODE_WRITE_THROUGH)
		return NULL;
	if ((pg_atomic_read_u64(&wb->backup) & 1) != 0)
		return "a base backup is running: writes go to the disk until it ends";
	if (pg_atomic_read_u32(&wb->nsuspended) != 0)
		return "a database's files are being copied: its writes go to the disk";
	return NULL;
}

/*
 * After the directory was loaded at start: a cache that is full already is
 * past checkpoint phase A (a crash or restart must not send the next
 * checkpoints' writes of uncached pages to the SSD again).
 */
void
ssd_cache_wb_note_loaded(void)
{
	if (wb && ssd_cache_enabled() && ssd_cache_free_slots() < (uint64) reserve_target())
		pg_atomic_write_u32(&wb->filled_once, 1);
}

/*
 * Write-back is not in force (write-through asked for, or refused), yet
 * pages are fresher: write them back a batch per round, so that the data
 * directory becomes complete by itself; when none is left, the marker goes.
 */
static void
drain(void)
{
	static bool announced = false;
	static MemoryContext scratch = NULL;
	MemoryContext cxt = CurrentMemoryContext;

	if (ssd_cache_fresher_pages() == 0)
	{
		if (ssd_cache_file_fresher_armed() && ssd_cache_disarm_if_clean())
		{
			if (announced)
				ereport(LOG,
						(errmsg("ssd_cache: every page newer than the disk was written back; "
								"the data directory is complete by itself")));
			announced = false;
		}
		return;
	}
	if (!announced)
		ereport(LOG,
				(errmsg("ssd_cache: write-back is not in force: writing back " INT64_FORMAT
						" pages newer than the disk", ssd_cache_fresher_pages())));
	announced = true;

	/* An ERROR (a data file that cannot be written) repeats every round. */
	if (scratch == NULL)
		scratch = AllocSetContextCreate(TopMemoryContext, "ssd_cache drain",
										ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	PG_TRY();
	{
		(void) ssd_cache_write_back(InvalidOid, 256);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(scratch);
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	MemoryContextReset(scratch);
}

/*
 * The admission worker, each round: while write-back is in force, keep the
 * reserve of free slots; say once per change why write-back is refused.
 */
void
ssd_cache_wb_worker_duties(bool reloaded)
{
	static const char *last_refusal = NULL;
	const char *why;
	uint64		backup;

	if (wb == NULL || !ssd_cache_enabled())
		return;
	if (reloaded)
		ssd_cache_wb_publish_mode();
	(void) ssd_cache_evict_cleaned();
	(void) configured_mode(&why);
	if (why != last_refusal && why != NULL)
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ssd_cache: %s", why),
				 errhint("Set ssd_cache.mode = write_through, or change the setting named.")));
	last_refusal = why;

	/*
	 * A base backup suspended write-back (ssd_cache_wb_at_checkpoint).  The
	 * compare-and-swap fails if another backup was seen meanwhile.
	 */
	backup = pg_atomic_read_u64(&wb->backup);
	if ((backup & 1) != 0 && !base_backup_running() &&
		pg_atomic_compare_exchange_u64(&wb->backup, &backup, backup & ~UINT64CONST(1)))
		ereport(LOG, (errmsg("ssd_cache: the base backup ended: write-back resumes")));

	/*
	 * pg_basebackup of a standby whose restartpoint was skipped (nothing new
	 * to restart from) is not seen at a checkpoint; its copy is complete
	 * all the same (every restartpoint wrote back what came before it, see
	 * ssd_cache_wb_at_checkpoint), and write-back stops while it runs as
	 * for any other backup.
	 */
	if ((backup & 1) == 0 && RecoveryInProgress() &&
		(ssd_cache_fresher_pages() > 0 || ssd_cache_write_back_active(NULL)) &&
		base_backup_phase() > PROGRESS_BASEBACKUP_PHASE_WAIT_CHECKPOINT &&
		suspend_for_backup())
		ereport(LOG,
				(errmsg("ssd_cache: a base backup is running: write-back is suspended until it ends")));
	if ((pg_atomic_read_u64(&wb->backup) & 1) != 0 && ssd_cache_fresher_pages() > 0)
		drain();				/* a backup runs: write back, 256 a round */

	if (pg_atomic_read_u32(&wb->active) == SSD_MODE_WRITE_THROUGH)
	{
		drain();
		return;
	}
	if (ssd_cache_free_slots() < (uint64) reserve_target())
	{
		pg_atomic_write_u32(&wb->filled_once, 1);
		(void) ssd_cache_clean_reserve(reserve_target());
	}
}

/*
 * Is a base backup running?  pg_basebackup's (the replication protocol's
 * BASE_BACKUP): its walsender reports progress from before it asks for the
 * backup's checkpoint until it is done.  A low-level one: a session between
 * pg_backup_start() and pg_backup_stop() (ssd_cache_wb_fmgr_hook).
 */
static bool
base_backup_running(void)
{
	return pg_atomic_read_u32(&wb->sql_backups) > 0 || base_backup_phase() > 0;
}

/*
 * The furthest phase a pg_basebackup has reached (PROGRESS_BASEBACKUP_PHASE_*),
 * 0 when none runs.
 */
static int64
base_backup_phase(void)
{
	int			i,
				n;
	int64		phase = 0;

	pgstat_clear_backend_activity_snapshot();
	n = pgstat_fetch_stat_numbackends();
	for (i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *local = pgstat_fetch_stat_local_beentry(i);

		if (local != NULL &&
			local->backendStatus.st_progress_command == PROGRESS_COMMAND_BASEBACKUP)
			phase = Max(phase, Max(local->backendStatus.st_progress_param[PROGRESS_BASEBACKUP_PHASE], 1));
	}
	pgstat_clear_backend_activity_snapshot();
	return phase;
}

/*
 * Write back every fresher page matching dbNode (InvalidOid: all), after
 * the caller made new absorptions of them impossible; ERROR if some cannot
 * be.  until_write_back: ssd_cache_flush() after a switch to write-through,
 * which stops (and says so) if write-back is switched on again meanwhile,
 * rather than chase new absorptions for 30 s.
 */
static int64
write_back_all(Oid dbNode, bool until_write_back)
{
	int			tries;
	int64		written = 0;

	/* Absorptions that passed the check before it changed finish first. */
	ssd_cache_wait_for_absorbs();

	/*
	 * A page can only still be fresher if a write-through write of it is
	 * under way (the write-back leaves it for later): a few passes.
	 */
	for (tries = 0; ssd_cache_fresher_pages_of(dbNode) > 0; tries++)
	{
		if (tries == 3000)		/* 30 s: a busy HDD syncing evictions */
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("ssd_cache could not write back the pages that only the cache holds"),
					 errdetail(INT64_FORMAT " pages are still newer on the SSD than on the disk.",
							   ssd_cache_fresher_pages_of(dbNode)),
					 errhint("Retry.")));
		written += ssd_cache_write_back(dbNode, -1);
		if (until_write_back && ssd_cache_write_back_active(NULL))
			break;
		if (ssd_cache_fresher_pages_of(dbNode) > 0)
			pg_usleep(10000L);
		CHECK_FOR_INTERRUPTS();
	}
	return written;
}

/*
 * The checkpointer, in the sync phase of each checkpoint (after it wrote
 * the dirty buffers, before the checkpoint can complete): if a base backup
 * is starting, this checkpoint is its starting point, and the files it
 * copies must hold every change made before it.  So write-back stops until
 * the backup is over (ssd_cache_wb_worker_duties), and every fresher page
 * is written back now.  An ERROR fails the checkpoint, and with it the
 * backup, rather than let it copy incomplete files.
 */
void
ssd_cache_wb_at_checkpoint(void)
{
	if (wb == NULL || !ssd_cache_enabled() ||
		(ssd_cache_fresher_pages() == 0 && !ssd_cache_write_back_active(NULL)))
		return;

	/*
	 * Lazy cleaning: every page absorbed before this checkpoint's redo point
	 * reaches the disk before the checkpoint completes, so after a crash the
	 * disk and WAL are complete without the cache (which starts empty), and
	 * so is any backup taken from this checkpoint.
	 */
	if (ssd_cache_wb_lazy_cleaning())
	{
		ssd_cache_write_back_fresher_now(InvalidXLogRecPtr);
		(void) ssd_cache_disarm_unless(lazy_cleaning_permission);
	}
	else if (RecoveryInProgress() && !XLogInsertAllowed())
	{
		/*
		 * A restartpoint (the end-of-recovery checkpoint, which may write
		 * WAL, is not one: a crash's recovery keeps its fresher pages).
		 * pg_basebackup of a standby starts from the last
		 * restartpoint completed, and makes none when no checkpoint record
		 * was replayed since: it cannot be seen here in time.  So every
		 * restartpoint leaves the data files holding every change made
		 * before its redo point, as a standby without the cache does:
		 * whatever a backup starts from, the rest is in the WAL it copies.
		 * Only pages last changed before the redo point need writing back:
		 * a later change logged a full-page image, which replay restores
		 * (pg_basebackup of a standby refuses WAL made without full-page
		 * writes).  The rest stay fresher.  That holds while replay sets
		 * page LSNs as the primary did: with data checksums off and
		 * wal_log_hints on here (often set for pg_rewind after a failover)
		 * but perhaps off on the primary, replaying a visibility record
		 * raises the heap page's LSN, where the primary logged no image of
		 * it: then every fresher page is written back.
		 */
		ssd_cache_write_back_fresher_now(DataChecksumsEnabled() || !wal_log_hints ?
										 GetRedoRecPtr() : InvalidXLogRecPtr);
		ssd_cache_arm_if_fresher();
	}
	else
		ssd_cache_arm_if_fresher();
	if (!base_backup_running())
		return;
	write_back_for_backup(false);
}

/*
 * A base backup is starting: stop write-back (saying so the first time) and
 * write every fresher page back, or ERROR.  low_level: pg_backup_start().
 */
static void
write_back_for_backup(bool low_level)
{
	if (suspend_for_backup())
		ereport(LOG,
				(low_level ?
				 errmsg("ssd_cache: a base backup is starting (pg_backup_start): write-back is suspended "
						"until it ends, and " INT64_FORMAT " pages newer than the disk are written back",
						ssd_cache_fresher_pages()) :
				 errmsg("ssd_cache: a base backup is starting: write-back is suspended until it ends, "
						"and " INT64_FORMAT " pages newer than the disk are written back",
						ssd_cache_fresher_pages())));
	write_back_all(InvalidOid, false);
}

/*
 * Write-back stops for a base backup, and the backups seen are counted:
 * the worker's reset of the flag then fails if another began meanwhile.
 * True if it was not stopped yet.
 */
static bool
suspend_for_backup(void)
{
	uint64		backup = pg_atomic_read_u64(&wb->backup);

	while (!pg_atomic_compare_exchange_u64(&wb->backup, &backup, (backup | 1) + 2))
		;
	return (backup & 1) == 0;
}

/*
 * Low-level backups.  pg_backup_start() has the backup's checkpoint made and
 * returns; the caller then copies the data files itself, behind the cache,
 * so they must already hold every change made before that checkpoint.  On
 * a primary the checkpoint would be seen (ssd_cache_wb_at_checkpoint), but
 * not a session's backup among the backends; on a standby the backup starts
 * from the last restartpoint, which may be long past.  So the session
 * itself, before pg_backup_start() runs, stops write-back and writes every
 * fresher page back (an ERROR fails the statement rather than let the copy
 * miss them), and write-back resumes once no session is in a backup
 * (get_backup_status() at the end of each of its transactions) or the
 * session is gone (the backup is then aborted).
 *
 * A built-in function is called without fmgr's hooks; what every caller
 * (a query, a view, an inlined SQL function, a PL/pgSQL expression) goes
 * through is the executor's set-up of the call, which asks the object
 * access hook (OAT_FUNCTION_EXECUTE) right after the permission check.
 */
static object_access_hook_type prev_object_access_hook = NULL;
static bool session_backup = false;	/* this session counts in sql_backups */

static void
end_session_backup(int code, Datum arg)
{
	if (session_backup)
	{
		session_backup = false;
		pg_atomic_fetch_sub_u32(&wb->sql_backups, 1);
	}
}

/* At the end of each transaction: is this session's backup over? */
static void
backup_xact_callback(XactEvent event, void *arg)
{
	if (session_backup && get_backup_status() != SESSION_BACKUP_RUNNING &&
		(event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		 event == XACT_EVENT_PREPARE))
		end_session_backup(0, (Datum) 0);
}

static void
begin_session_backup(void)
{
	static bool callbacks = false;

	if (!callbacks)
	{
		before_shmem_exit(end_session_backup, (Datum) 0);
		RegisterXactCallback(backup_xact_callback, NULL);
		callbacks = true;
	}
	if (!session_backup)
	{
		session_backup = true;
		pg_atomic_fetch_add_u32(&wb->sql_backups, 1);
	}
	if (!ssd_cache_enabled() ||
		(ssd_cache_fresher_pages() == 0 && !ssd_cache_write_back_active(NULL)))
		return;
	write_back_for_backup(true);

	/*
	 * Nothing can become fresher until write-back resumes: the data
	 * directory is complete by itself, so its marker goes, and a copy made
	 * with cp, rsync or tar does not take it along.
	 */
	(void) ssd_cache_disarm_if_clean();
}

static void
wb_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_FUNCTION_EXECUTE && objectId == F_PG_BACKUP_START && wb != NULL)
		begin_session_backup();
}

void
ssd_cache_wb_install_hooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = wb_object_access;
}

/*
 * Before a database's files are copied behind smgr's back: writes of its
 * pages go to the disk from now on (write-through), and its fresher pages
 * are written back; an ERROR if some cannot be, since the copy would miss
 * them.  Pair a successful call with ssd_cache_wb_resume_database, also on
 * error; a failing call resumes itself.
 */
void
ssd_cache_wb_suspend_database(Oid dbNode)
{
	int			i,
				free_i = -1;

	if (wb == NULL)
		return;
	SpinLockAcquire(&wb->lock);
	for (i = 0; i < SSD_WB_MAX_SUSPENDED; i++)
	{
		if (wb->suspend_count[i] > 0 && wb->suspended[i] == dbNode)
			break;
		if (wb->suspend_count[i] == 0 && free_i < 0)
			free_i = i;
	}
	if (i == SSD_WB_MAX_SUSPENDED)
		i = free_i;
	if (i >= 0)
	{
		wb->suspended[i] = dbNode;
		wb->suspend_count[i]++;
		pg_atomic_fetch_add_u32(&wb->nsuspended, 1);
	}
	SpinLockRelease(&wb->lock);
	if (i < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many databases are being copied at once for ssd_cache"),
				 errhint("Retry the command when the others have finished.")));

	PG_TRY();
	{
		write_back_all(dbNode, false);
	}
	PG_CATCH();
	{
		ssd_cache_wb_resume_database(dbNode);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

void
ssd_cache_wb_resume_database(Oid dbNode)
{
	int			i;

	if (wb == NULL)
		return;
	SpinLockAcquire(&wb->lock);
	for (i = 0; i < SSD_WB_MAX_SUSPENDED; i++)
		if (wb->suspend_count[i] > 0 && wb->suspended[i] == dbNode)
		{
			wb->suspend_count[i]--;
			pg_atomic_fetch_sub_u32(&wb->nsuspended, 1);
			break;
		}
	SpinLockRelease(&wb->lock);
}

/*
 * ssd_cache_flush(): write every page fresher than the disk back to it,
 * then, if none is left, clear the data directory's write-back marker, so
 * that the data directory is complete by itself.  Returns how many pages
 * were written back.  With ssd_cache.mode = write_back new fresher pages
 * keep coming; set write_through first when the data directory must stay
 * complete (file-level backups; see the README).
 */
Datum
ssd_cache_flush(PG_FUNCTION_ARGS)
{
	int64		written;

	const char *why;
	int			waits;

	ssd_cache_require_preload();

	if (!ssd_cache_enabled())
		PG_RETURN_INT64(0);

	/*
	 * Just switched to write-through (ALTER SYSTEM, pg_reload_conf()): wait
	 * until every process writes through (the admission worker publishes
	 * the mode after the reload), then for absorptions already under way.
	 */
	for (waits = 0; configured_mode(&why) == SSD_MODE_WRITE_THROUGH &&
		 ssd_cache_write_back_active(NULL) && waits < 500; waits++)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
	/*
	 * Written through from now on: a page still fresher after a pass is one
	 * whose write-through write is under way, clean once it ends; pass
	 * again until none is left (write_back_all()).  Still in write-back:
	 * one pass, and say what was written again meanwhile.
	 */
	if (!ssd_cache_write_back_active(NULL))
		written = write_back_all(InvalidOid, true);
	else
	{
		ssd_cache_wait_for_absorbs();
		written = ssd_cache_write_back(InvalidOid, -1);
	}
	if (!ssd_cache_disarm_if_clean())
		ereport(NOTICE,
				(errmsg("ssd_cache: " INT64_FORMAT " pages are still newer than the disk",
						ssd_cache_fresher_pages()),
				 errdetail("They were written again while the cache was being flushed."),
				 errhint("Set ssd_cache.mode = write_through and reload the configuration first "
						 "to keep the data directory complete.")));
	PG_RETURN_INT64(written);
}
