/*-------------------------------------------------------------------------
 *
 * ssd_cache_cleaner.c
 *	  The cleaner process: writes pages newer than the disk back to the data
 *	  files, so that nobody else waits for the disk to do it.
 *
 * Two duties, both in write-back modes only:
 *
 *	- victims (PC2's background cleaner): when the admission worker picks a
 *	  victim that is fresher than the disk, it hands it over here instead of
 *	  writing it back itself, and evicts it once this process is done.  On a
 *	  disk that takes milliseconds per random write and more per sync, a
 *	  worker that wrote victims back itself left reads waiting for admission
 *	  and refused them (with TPC-C and the cache at 25% of the database,
 *	  write-back ran behind write-through).  Victims are written back
 *	  ssd_cache.evict_batch at a time, with one sync per file segment.
 *
 *	- lazy cleaning (ssd_cache.mode = lazy_cleaning, the comparison
 *	  baseline): once more than half of the cache is fresher than the disk,
 *	  pages are written back, ssd_cache.evict_batch at a time, until less
 *	  than SSD_LC_CLEAN_TO is.
 *
 * The directory (ssd_cache_directory.c) owns the request ring and every
 * slot; this file only decides when to work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_cleaner.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_writeback.h"

/* Lazy cleaning cleans down to this share of the cache (hysteresis). */
#define SSD_LC_CLEAN_TO		(SSD_LC_DIRTY_SHARE - 0.05)

/* Leaving: victims are written back by the admission worker itself. */
static void
cleaner_detach(int code, Datum arg)
{
	ssd_cache_cleaner_attach(NULL);
}

/*
 * Pages written back together: the cost of a batch is mostly its syncs,
 * and a segment's fsync also writes out every other dirty page of the file
 * (checkpoint writes of uncached pages), which on a disk that serves reads
 * first takes seconds; more pages per sync is more pages per second.
 */
static int
cleaner_batch(void)
{
	return Min(Max(ssd_cache_evict_batch, 1), SSD_WRITE_BACK_MAX_BATCH);
}

/* Victims handed over by the admission worker, oldest first. */
static bool
write_back_victims(void)
{
	int32		slotnos[SSD_WRITE_BACK_MAX_BATCH];
	uint64		ticket;
	int			batch = cleaner_batch();
	int			n;
	instr_time	start,
				took;

	n = ssd_cache_cleaner_take(batch, slotnos, &ticket);
	if (n == 0)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	ssd_cache_cleaner_write_back(n, slotnos, ticket);
	INSTR_TIME_SET_CURRENT(took);
	INSTR_TIME_SUBTRACT(took, start);
	ssd_cache_admit_wake_worker();
	elog(DEBUG1, "ssd_cache cleaner: a batch of %d victims written back in %.1f ms",
		 n, INSTR_TIME_GET_MILLISEC(took));
	return true;
}

/*
 * Lazy cleaning: a batch of fresher pages written back if more than half
 * of the cache is fresher, or until less than SSD_LC_CLEAN_TO is once
 * started.  Returns whether there is more to do.
 */
static bool
clean_lazily(void)
{
	static bool cleaning = false;
	static MemoryContext scratch = NULL;
	double		share;
	MemoryContext cxt = CurrentMemoryContext;

	if (!ssd_cache_wb_lazy_cleaning() || ssd_cache_nslots() == 0)
	{
		cleaning = false;
		return false;
	}
	share = (double) ssd_cache_fresher_pages() / (double) ssd_cache_nslots();
	if (share > SSD_LC_DIRTY_SHARE)
		cleaning = true;
	else if (share < SSD_LC_CLEAN_TO)
		cleaning = false;
	if (!cleaning)
		return false;
	if (scratch == NULL)
		scratch = AllocSetContextCreate(TopMemoryContext, "ssd_cache lazy cleaning",
										ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	PG_TRY();
	{
		if (ssd_cache_write_back_next(cleaner_batch()) == 0)
			cleaning = false;	/* every page being written: next round */
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(scratch);
		EmitErrorReport();
		FlushErrorState();
		cleaning = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	MemoryContextReset(scratch);
	return cleaning;
}

void
ssd_cache_cleaner_main(Datum arg)
{
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	/*
	 * No cache this run (it could not start): idle, rather than leave for
	 * good, since the next crash-restart cycle may have one.
	 */
	while (!ssd_cache_enabled() && !ShutdownRequestPending)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 60000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	before_shmem_exit(cleaner_detach, (Datum) 0);
	ssd_cache_cleaner_attach(MyLatch);

	while (!ShutdownRequestPending)
	{
		bool		more;

		ResetLatch(MyLatch);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		more = write_back_victims();
		if (!more && !ssd_cache_bypassed())
			more = clean_lazily();
		CHECK_FOR_INTERRUPTS();
		if (more)
			continue;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
	}

	/* Exit code 1: restarted unless the server is shutting down. */
	proc_exit(1);
}
