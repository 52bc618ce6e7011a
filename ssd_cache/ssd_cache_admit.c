/*-------------------------------------------------------------------------
 *
 * ssd_cache_admit.c
 *	  Admission: a backend that read a page from disk offers a copy; a
 *	  background worker ("ssd_cache admission") writes it to the SSD.
 *
 * The reading backend only copies 8 kB into a shared queue and sets the
 * worker's latch, so admission I/O never delays a query.  When the queue is
 * full the page is simply not admitted (counted as a refusal).
 *
 * Ordering with writes: the offer is reserved before the disk read, as a
 * PENDING directory entry; a write of the same block from then on cancels
 * the entry (ssd_cache_after_disk_write), so an image older than the disk
 * is never admitted.  Reads through shared buffers could not race with a
 * write anyway (the buffer is I/O-busy), but reads that bypass them
 * (pg_prewarm's 'read' mode, any smgrread of an extension) can.  The tag
 * is published in the queue before the entry exists, so a relation-wide
 * invalidation (truncate, unlink) that scans the queue never misses it.
 *
 * The worker exits with code 1 on SIGTERM, so the postmaster starts a new
 * one a second later unless the server is shutting down.
 *
 * What is offered and what is admitted is the policy's business
 * (ssd_cache_policy.c).  Pages of unlogged relations are never admitted:
 * crash recovery resets their files behind smgr's back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_disk.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_temperatures.h"
#include "ssd_cache_writeback.h"

typedef enum SsdAdmitItemState
{
	ITEM_FREE,
	ITEM_FILLING,				/* tag published, page being copied */
	ITEM_READY,
	ITEM_ABANDONED,				/* the offer was withdrawn */
	ITEM_DONE					/* the worker handled it */
} SsdAdmitItemState;

typedef struct SsdAdmitQueue
{
	slock_t		lock;
	uint32		head;			/* oldest item */
	uint32		count;
	Latch	   *worker_latch;
	BufferTag	tags[SSD_ADMIT_QUEUE_MAX];
	uint8		state[SSD_ADMIT_QUEUE_MAX];
	char	   *pages;			/* SSD_ADMIT_QUEUE_MAX aligned pages */
} SsdAdmitQueue;

static SsdAdmitQueue *queue = NULL;

Size
ssd_cache_admit_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(SsdAdmitQueue)),
					(Size) (SSD_ADMIT_QUEUE_MAX + 1) * BLCKSZ);
}

void
ssd_cache_admit_shmem_init(void)
{
	bool		found;
	char	   *pages;

	queue = ShmemInitStruct("ssd_cache admission queue", sizeof(SsdAdmitQueue), &found);
	pages = ShmemInitStruct("ssd_cache admission pages",
							(Size) (SSD_ADMIT_QUEUE_MAX + 1) * BLCKSZ, &found);
	memset(queue, 0, sizeof(SsdAdmitQueue));
	SpinLockInit(&queue->lock);
	/* O_DIRECT writes go straight from here. */
	queue->pages = (char *) TYPEALIGN(BLCKSZ, pages);
}


uint32
ssd_cache_admit_queue_length(void)
{
	uint32		n;

	if (!queue)
		return 0;
	SpinLockAcquire(&queue->lock);
	n = queue->count;
	SpinLockRelease(&queue->lock);
	return n;
}

/*
 * Before a disk read of a page worth admitting: reserve a queue item and a
 * PENDING entry.  Returns the item (pass it to ssd_cache_offer_fill or
 * ssd_cache_offer_withdraw), or -1 if the page will not be offered.
 */
int
ssd_cache_offer_reserve(const BufferTag *tag)
{
	uint32		idx;

	if (!queue || ssd_cache_bypassed())
		return -1;

	SpinLockAcquire(&queue->lock);
	if (queue->count == SSD_ADMIT_QUEUE_MAX)
	{
		SpinLockRelease(&queue->lock);
		ssd_cache_count(SSD_REFUSALS, 1);
		return -1;
	}
	idx = (queue->head + queue->count) % SSD_ADMIT_QUEUE_MAX;
	queue->count++;
	queue->tags[idx] = *tag;
	queue->state[idx] = ITEM_FILLING;
	SpinLockRelease(&queue->lock);

	if (!ssd_cache_offer_begin(tag))
	{
		/* Already cached or queued. */
		SpinLockAcquire(&queue->lock);
		queue->state[idx] = ITEM_ABANDONED;
		SpinLockRelease(&queue->lock);
		return -1;
	}
	return (int) idx;
}

/* The disk read of a reserved offer succeeded: queue the page. */
void
ssd_cache_offer_fill(int item, const char *page)
{
	Latch	   *latch;

	if (ssd_cache_fault_enabled("read_pause"))
		pg_usleep(3000000L);	/* test only: widen the race with writers */
	memcpy(queue->pages + (Size) item * BLCKSZ, page, BLCKSZ);
	SpinLockAcquire(&queue->lock);
	queue->state[item] = ITEM_READY;
	latch = queue->worker_latch;
	SpinLockRelease(&queue->lock);
	if (latch)
		SetLatch(latch);
}

/* The disk read of a reserved offer failed: take the offer back. */
void
ssd_cache_offer_withdraw(int item, const BufferTag *tag)
{
	ssd_cache_offer_abandon(tag);
	SpinLockAcquire(&queue->lock);
	queue->state[item] = ITEM_ABANDONED;
	SpinLockRelease(&queue->lock);
}

/*
 * Tags of every queued item (for relation-wide invalidation), into out[]
 * (SSD_ADMIT_QUEUE_MAX long).  No allocation: this runs in critical
 * sections.
 */
int
ssd_cache_admit_queued_tags(BufferTag *out)
{
	int			n = 0;
	int			i;

	if (!queue)
		return 0;
	SpinLockAcquire(&queue->lock);
	for (i = 0; i < (int) queue->count; i++)
	{
		uint32		idx = (queue->head + i) % SSD_ADMIT_QUEUE_MAX;

		if (queue->state[idx] == ITEM_FILLING || queue->state[idx] == ITEM_READY)
			out[n++] = queue->tags[idx];
	}
	SpinLockRelease(&queue->lock);
	return n;
}

bool
ssd_cache_admit_has_relation(RelFileNode rnode)
{
	uint32		i;
	bool		found = false;

	if (!queue)
		return false;
	SpinLockAcquire(&queue->lock);
	for (i = 0; i < queue->count && !found; i++)
	{
		uint32		idx = (queue->head + i) % SSD_ADMIT_QUEUE_MAX;

		found = (queue->state[idx] == ITEM_FILLING || queue->state[idx] == ITEM_READY) &&
			RelFileNodeEquals(queue->tags[idx].rnode, rnode);
	}
	SpinLockRelease(&queue->lock);
	return found;
}

/* Wake the worker: write-back found no free slot. */
void
ssd_cache_admit_wake_worker(void)
{
	Latch	   *latch;

	if (!queue)
		return;
	SpinLockAcquire(&queue->lock);
	latch = queue->worker_latch;
	SpinLockRelease(&queue->lock);
	if (latch)
		SetLatch(latch);
}

void
ssd_cache_admit_main(Datum arg)
{
	bool		reloaded;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&queue->lock);
	queue->worker_latch = MyLatch;
	SpinLockRelease(&queue->lock);
	if (ssd_cache_enabled())
		ssd_cache_file_prepare_batches();

	/* A restarted worker publishes its reading of the settings at once. */
	reloaded = true;
	while (!ShutdownRequestPending)
	{
		ResetLatch(MyLatch);

		for (;;)
		{
			BufferTag	tags[SSD_CACHE_WRITE_BATCH];
			char	   *pages[SSD_CACHE_WRITE_BATCH];
			uint32		items[SSD_CACHE_WRITE_BATCH];
			int			nbatch = 0,
						kept = 0,
						i;

			/*
			 * Up to a batch of ready items, wherever they are: an item still
			 * being filled (its disk read in progress) holds up no other.
			 */
			SpinLockAcquire(&queue->lock);
			for (i = 0; i < (int) queue->count && nbatch < SSD_CACHE_WRITE_BATCH; i++)
			{
				uint32		idx = (queue->head + i) % SSD_ADMIT_QUEUE_MAX;

				if (queue->state[idx] == ITEM_READY)
				{
					items[nbatch] = idx;
					tags[nbatch] = queue->tags[idx];
					pages[nbatch++] = queue->pages + (Size) idx * BLCKSZ;
				}
			}
			SpinLockRelease(&queue->lock);
			if (nbatch == 0)
				break;

			/* Unlogged relations' pages are dropped here. */
			for (i = 0; i < nbatch; i++)
			{
				if (ssd_cache_disk_relation_unlogged(tags[i].rnode))
				{
					ssd_cache_offer_abandon(&tags[i]);
					ssd_cache_count(SSD_REFUSALS, 1);
					continue;
				}
				tags[kept] = tags[i];
				pages[kept++] = pages[i];
			}
			if (kept > 0)
				(void) ssd_cache_admit_batch(kept, tags, pages);

			/*
			 * Their entries have left PENDING: the items may go (invariant
			 * 3), and the queue's head moves past every finished item.
			 */
			SpinLockAcquire(&queue->lock);
			for (i = 0; i < nbatch; i++)
				queue->state[items[i]] = ITEM_DONE;
			while (queue->count > 0 &&
				   (queue->state[queue->head] == ITEM_DONE ||
					queue->state[queue->head] == ITEM_ABANDONED))
			{
				queue->state[queue->head] = ITEM_FREE;
				queue->head = (queue->head + 1) % SSD_ADMIT_QUEUE_MAX;
				queue->count--;
			}
			SpinLockRelease(&queue->lock);
			ssd_cache_age_if_due();
			CHECK_FOR_INTERRUPTS();
		}

		/* Withdrawn offers at the head free their items too. */
		SpinLockAcquire(&queue->lock);
		while (queue->count > 0 && queue->state[queue->head] == ITEM_ABANDONED)
		{
			queue->state[queue->head] = ITEM_FREE;
			queue->head = (queue->head + 1) % SSD_ADMIT_QUEUE_MAX;
			queue->count--;
		}
		SpinLockRelease(&queue->lock);

		ssd_cache_age_if_due();
		ssd_cache_idle();
		ssd_cache_wb_worker_duties(reloaded);
		reloaded = false;
		if (ssd_cache_enabled() && !ssd_cache_bypassed())
			ssd_cache_file_register_marker();
		if (ssd_cache_enabled())
			ssd_cache_save_temperatures_if_due();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			reloaded = true;
		}
	}
	SpinLockAcquire(&queue->lock);
	queue->worker_latch = NULL;
	SpinLockRelease(&queue->lock);

	/* Told to stop (a shutdown, usually): keep today's temperatures. */
	if (ssd_cache_enabled() && ssd_cache_policy == SSD_POLICY_TAC)
		ssd_cache_save_temperatures();

	/*
	 * Exit code 1: the postmaster starts a new worker unless the server is
	 * shutting down, so a stray SIGTERM does not end admission for good.
	 */
	proc_exit(1);
}
