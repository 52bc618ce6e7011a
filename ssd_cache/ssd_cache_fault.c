/*-------------------------------------------------------------------------
 *
 * ssd_cache_fault.c
 *	  What ssd_cache does when the cache itself is in trouble: an SSD that
 *	  fails reads or writes, a header or directory that cannot be written, a
 *	  cache file that cannot be used at startup.
 *
 * The rule.  While the disk holds every page (write-through, or write-back
 * with no slot fresher than the disk), no trouble
 * with the cache is worth an error in a query, let alone an outage: the
 * server runs without the cache and says so loudly (a WARNING in the log,
 * the mode and problem columns of ssd_cache_stats).
 *	- At startup (ssd_cache_set_off): the cache is off for this run.
 *	- While running (ssd_cache_give_up): pass-through.  Nothing is read from
 *	  or written to the SSD any more, and the file is disowned, so that no
 *	  later start trusts contents that stopped following the disk.
 *	- Isolated SSD errors (ssd_cache_io_error): the read falls back to the
 *	  disk and the slot is forgotten; SSD_ERRORS_TO_GIVE_UP errors within
 *	  SSD_ERROR_WINDOW_SECS mean the SSD is failing: give up.
 *
 * Everything here may run inside a critical section (15.x truncates
 * relations in one): no palloc, no ERROR.
 *
 * Shared state owned here: whether the cache gave up, the problem text the
 * views show, and the error count and window.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "pgtime.h"
#include "port/atomics.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"

#define SSD_PROBLEM_LEN		512

typedef struct SsdCacheFaultShared
{
	pg_atomic_uint32 gave_up;
	pg_atomic_uint64 errors;
	slock_t		lock;			/* protects the fields below */
	pg_time_t	window_start;
	uint32		window_errors;
	char		problem[SSD_PROBLEM_LEN];
} SsdCacheFaultShared;

static SsdCacheFaultShared *fault = NULL;

Size
ssd_cache_fault_shmem_size(void)
{
	return MAXALIGN(sizeof(SsdCacheFaultShared));
}

void
ssd_cache_fault_shmem_init(void)
{
	bool		found;

	fault = ShmemInitStruct("ssd_cache faults", sizeof(SsdCacheFaultShared), &found);
	pg_atomic_init_u32(&fault->gave_up, 0);
	pg_atomic_init_u64(&fault->errors, 0);
	SpinLockInit(&fault->lock);
	fault->window_start = 0;
	fault->window_errors = 0;
	fault->problem[0] = '\0';
}

static void
set_problem(const char *text)
{
	SpinLockAcquire(&fault->lock);
	strlcpy(fault->problem, text, SSD_PROBLEM_LEN);
	SpinLockRelease(&fault->lock);
}

/* Startup (postmaster): the cache cannot be used in this run. */
void
ssd_cache_set_off(const char *reason)
{
	if (fault)
		set_problem(reason);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("ssd_cache is off: %s", reason),
			 errdetail("The server runs without the SSD cache; no data is lost, reads and writes go to the disk."),
			 errhint("Fix the cause and restart the server to use the cache again; "
					 "ssd_cache_stats shows the problem.")));
}

/* How many cached pages are newer than the disk (the directory says). */
static int64 (*fresher_count) (void) = NULL;

void
ssd_cache_fault_watch_fresher(int64 (*count) (void))
{
	fresher_count = count;
}

/* Write-back, or lazy cleaning's pages: PANIC rather than lose them. */
static void
panic_if_fresher(const char *why)
{
	if (ssd_cache_file_fresher_armed() || (fresher_count && fresher_count() > 0))
		ereport(PANIC,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("ssd_cache: %s, and the cache holds changes that are not in the data files", why)));
}

/*
 * Stop using the cache for the rest of this run and disown its file.  The
 * first caller reports; later ones find it done.
 */
void
ssd_cache_give_up(const char *why)
{
	/*
	 * Write-back: the cache may hold the only copy of committed changes.
	 * Running on without it would serve stale pages, so do what PostgreSQL
	 * does when a data file cannot be made durable: PANIC.  The restart
	 * either finds the cache usable (WAL replay repairs what a failed write
	 * left) or refuses to start, saying what would be lost.  Lazy cleaning
	 * arms nothing, but its fresher pages are the newest copies as well: the
	 * restart then starts it empty and WAL replay redoes them.
	 */
	bool		first;

	if (fault == NULL)
		return;

	/*
	 * Checked before giving up: once gave_up is set, other processes read
	 * the disk, whose copy of a fresher page is older, and one of them
	 * could change it and commit (its full-page image of the old page
	 * would be replayed over the newer one) before this PANIC stops them.
	 */
	panic_if_fresher(why);
	first = pg_atomic_exchange_u32(&fault->gave_up, 1) == 0;

	/*
	 * And after, so that a process arming write-back at the same moment
	 * either is seen here or sees the cache bypassed afterwards
	 * (ssd_cache_absorb_write) and marks nothing.
	 */
	panic_if_fresher(why);
	if (!first)
		return;
	set_problem(why);
	ssd_cache_file_disown();
	ereport(WARNING,
			(errcode(ERRCODE_IO_ERROR),
			 errmsg("ssd_cache is now in pass-through mode: %s", why),
			 errdetail("Reads and writes go to the disk only; the cache will start empty after a restart."),
			 errhint("Check the SSD holding ssd_cache.path; restart the server to use the cache again.")));
}

/*
 * An SSD read or write failed (errno says how): log it, count it, and
 * after repeated failures give up on the cache.
 */
void
ssd_cache_io_error(const char *what, const BufferTag *tag)
{
	int			save_errno = errno;
	pg_time_t	now = (pg_time_t) time(NULL);
	uint32		n;

	if (fault == NULL)
		return;
	pg_atomic_fetch_add_u64(&fault->errors, 1);
	SpinLockAcquire(&fault->lock);
	if (now - fault->window_start > SSD_ERROR_WINDOW_SECS)
	{
		fault->window_start = now;
		fault->window_errors = 0;
	}
	n = ++fault->window_errors;
	SpinLockRelease(&fault->lock);
	errno = save_errno;
	if (tag)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: %s of block %u of relation %u/%u/%u failed: %m; using the disk copy",
						what, tag->blockNum, tag->rnode.spcNode, tag->rnode.dbNode,
						tag->rnode.relNode)));
	else
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: %s failed: %m", what)));
	if (n >= SSD_ERRORS_TO_GIVE_UP)
	{
		char		why[128];

		snprintf(why, sizeof(why), "%u SSD errors within %d seconds", n, SSD_ERROR_WINDOW_SECS);
		ssd_cache_give_up(why);
	}
}

bool
ssd_cache_bypassed(void)
{
	return fault != NULL && pg_atomic_read_u32(&fault->gave_up) != 0;
}

/* Copy the current problem into buf; false if there is none. */
bool
ssd_cache_problem(char *buf, Size len)
{
	if (fault == NULL)
		return false;
	SpinLockAcquire(&fault->lock);
	strlcpy(buf, fault->problem, len);
	SpinLockRelease(&fault->lock);
	return buf[0] != '\0';
}

int64
ssd_cache_error_count(void)
{
	return fault ? (int64) pg_atomic_read_u64(&fault->errors) : 0;
}

void
ssd_cache_reset_error_count(void)
{
	if (fault)
		pg_atomic_write_u64(&fault->errors, 0);
}
