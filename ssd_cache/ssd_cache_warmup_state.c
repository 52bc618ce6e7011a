/*-------------------------------------------------------------------------
 *
 * ssd_cache_warmup_state.c
 *	  The warm-up state file: what shared_buffers held at the last
 *	  checkpoint (Park's buffer-pool state recorder, BSR).
 *
 * Format (binary, native byte order, this server's BLCKSZ): a header with a
 * magic number, the format version, the cluster's system identifier, the
 * redo pointer of the checkpoint it follows, the time, the page count and a
 * CRC-32C of the header and every entry; then one WarmupPage per valid
 * buffer of a permanent relation, sorted by tag.  It is written to a
 * temporary name, fsynced and renamed durably, so a crash while recording
 * leaves the previous file whole.
 *
 * A file that is short, long, of another format or cluster, whose CRC does
 * not match or whose entries are not valid sorted tags, is ignored with a
 * LOG: it only ever says which pages to read, never what they contain, and
 * each page is read through the buffer manager under its relation's lock,
 * so the worst a bad file can do is make the warm-up read the wrong pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "portability/instr_time.h"
#include "storage/buf_internals.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "ssd_cache.h"
#include "ssd_cache_temperatures.h"
#include "ssd_cache_warmup.h"

#define WARMUP_MAGIC	0x53435755	/* "SCWU" */
#define WARMUP_VERSION	1

typedef struct WarmupFileHeader
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;
	uint32		blcksz;
	uint32		npages;
	XLogRecPtr	redo;
	TimestampTz recorded_at;
	pg_crc32c	crc;			/* of this header (crc = 0) and the entries */
	uint32		unused;
} WarmupFileHeader;

static int
page_cmp(const void *a, const void *b)
{
	const WarmupPage *x = a;
	const WarmupPage *y = b;

	if (x->spcNode != y->spcNode)
		return x->spcNode < y->spcNode ? -1 : 1;
	if (x->dbNode != y->dbNode)
		return x->dbNode < y->dbNode ? -1 : 1;
	if (x->relNode != y->relNode)
		return x->relNode < y->relNode ? -1 : 1;
	if (x->fork != y->fork)
		return x->fork < y->fork ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return 0;
}

static int
usage_desc_cmp(const void *a, const void *b)
{
	const WarmupPage *x = a;
	const WarmupPage *y = b;

	if (x->usage != y->usage)
		return x->usage > y->usage ? -1 : 1;
	return page_cmp(a, b);
}

static pg_crc32c
state_crc(WarmupFileHeader *hdr, const WarmupPage *pages)
{
	pg_crc32c	crc;
	pg_crc32c	saved = hdr->crc;

	hdr->crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, hdr, sizeof(*hdr));
	COMP_CRC32C(crc, pages, sizeof(WarmupPage) * (Size) hdr->npages);
	FIN_CRC32C(crc);
	hdr->crc = saved;
	return crc;
}

/*
 * Every valid buffer of a permanent relation, as pg_buffercache reads them:
 * each header locked for the moment it takes to copy the tag.  Unlogged
 * relations are left out: crash recovery resets them, and a clean restart
 * finds them in the OS page cache or reads them on demand.
 */
static uint32
collect_buffers(WarmupPage *pages)
{
	uint32		n = 0;

	for (int i = 0; i < NBuffers; i++)
	{
		BufferDesc *buf = GetBufferDescriptor(i);
		uint32		state;
		int			usage;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		state = LockBufHdr(buf);
		if ((state & (BM_VALID | BM_TAG_VALID | BM_PERMANENT)) ==
			(BM_VALID | BM_TAG_VALID | BM_PERMANENT))
		{
			pages[n].spcNode = buf->tag.rnode.spcNode;
			pages[n].dbNode = buf->tag.rnode.dbNode;
			pages[n].relNode = buf->tag.rnode.relNode;
			pages[n].block = buf->tag.blockNum;
			pages[n].fork = (uint8) buf->tag.forkNum;
			usage = BUF_STATE_GET_USAGECOUNT(state);
			pages[n].usage = (uint8) Max(usage, 1);
			pages[n].unused = 0;
			n++;
		}
		UnlockBufHdr(buf, state);
	}
	return n;
}

/*
 * Record shared_buffers now.  Returns false (after a LOG) if the file could
 * not be written; the previous one then stays.
 */
bool
warmup_record(WarmupStateInfo *info, double *elapsed_ms)
{
	WarmupFileHeader hdr;
	WarmupPage *pages;
	instr_time	start,
				duration;
	int			fd;
	bool		ok;

	INSTR_TIME_SET_CURRENT(start);
	pages = MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(WarmupPage) * (Size) NBuffers);
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = WARMUP_MAGIC;
	hdr.version = WARMUP_VERSION;
	hdr.system_identifier = GetSystemIdentifier();
	hdr.blcksz = BLCKSZ;
	hdr.redo = GetRedoRecPtr();
	hdr.recorded_at = GetCurrentTimestamp();
	hdr.npages = collect_buffers(pages);
	if (hdr.npages > 1)
		qsort(pages, hdr.npages, sizeof(WarmupPage), page_cmp);
	hdr.crc = state_crc(&hdr, pages);

	fd = OpenTransientFile(WARMUP_STATE_TMP, O_CREAT | O_TRUNC | O_WRONLY | PG_BINARY);
	if (fd < 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache warm-up: could not create \"%s\": %m", WARMUP_STATE_TMP)));
		pfree(pages);
		return false;
	}
	ok = ssd_cache_write_all(fd, &hdr, sizeof(hdr)) &&
		ssd_cache_write_all(fd, pages, sizeof(WarmupPage) * (Size) hdr.npages);
	if (ok && ssd_cache_fault_enabled("warmup_record_crash"))
	{
		/* test only: die with half a file written and nothing renamed */
		ereport(LOG, (errmsg("ssd_cache warm-up: fault warmup_record_crash")));
		_exit(2);
	}
	if (ok)
	{
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_SYNC);
		ok = pg_fsync(fd) == 0;
		pgstat_report_wait_end();
	}
	if (!ok)
	{
		int			save_errno = errno;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache warm-up: could not write \"%s\": %m", WARMUP_STATE_TMP)));
		unlink(WARMUP_STATE_TMP);
		pfree(pages);
		return false;
	}
	CloseTransientFile(fd);
	pfree(pages);
	if (durable_rename(WARMUP_STATE_TMP, WARMUP_STATE_FILE, LOG) != 0)
		return false;

	info->redo = hdr.redo;
	info->recorded_at = hdr.recorded_at;
	info->npages = hdr.npages;
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	*elapsed_ms = INSTR_TIME_GET_MILLISEC(duration);
	return true;
}

static void *
ignore_file(int fd, void *pages, const char *why)
{
	ereport(LOG,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ssd_cache warm-up: ignoring \"%s\": %s", WARMUP_STATE_FILE, why),
			 errdetail("The buffer pool is not preloaded after this start; the next checkpoint records a new state.")));
	if (pages)
		pfree(pages);
	if (fd >= 0)
		CloseTransientFile(fd);
	return NULL;
}

/*
 * The recorded pages, or NULL (with a LOG unless there is no file).  At
 * most max_pages are returned, the hottest, in tag order.
 */
WarmupPage *
warmup_read_state(WarmupStateInfo *info, uint32 max_pages)
{
	WarmupFileHeader hdr;
	WarmupPage *pages = NULL;
	struct stat st;
	int			fd;

	fd = OpenTransientFile(WARMUP_STATE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("ssd_cache warm-up: could not open \"%s\": %m", WARMUP_STATE_FILE)));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size < (off_t) sizeof(hdr) ||
		!ssd_cache_read_all(fd, &hdr, sizeof(hdr)))
		return ignore_file(fd, NULL, "it is shorter than its header");
	if (hdr.magic != WARMUP_MAGIC)
		return ignore_file(fd, NULL, "it is not a warm-up state file");
	if (hdr.version != WARMUP_VERSION)
		return ignore_file(fd, NULL, psprintf("it has format %u, this release reads %u",
											  hdr.version, WARMUP_VERSION));
	if (hdr.system_identifier != GetSystemIdentifier())
		return ignore_file(fd, NULL, "it was recorded by another cluster");
	if (hdr.blcksz != BLCKSZ)
		return ignore_file(fd, NULL, "it was recorded with another block size");
	if ((uint64) st.st_size != sizeof(hdr) + sizeof(WarmupPage) * (uint64) hdr.npages)
		return ignore_file(fd, NULL, "its size does not match its page count");
	pages = MemoryContextAllocHuge(CurrentMemoryContext,
								   sizeof(WarmupPage) * Max((Size) hdr.npages, 1));
	if (!ssd_cache_read_all(fd, pages, sizeof(WarmupPage) * (Size) hdr.npages))
		return ignore_file(fd, pages, "it could not be read whole");
	if (state_crc(&hdr, pages) != hdr.crc)
		return ignore_file(fd, pages, "its checksum does not match");
	for (uint32 i = 0; i < hdr.npages; i++)
		if (pages[i].fork > MAX_FORKNUM || pages[i].usage < 1 ||
			pages[i].usage > BM_MAX_USAGE_COUNT || pages[i].block == InvalidBlockNumber ||
			(i > 0 && page_cmp(&pages[i - 1], &pages[i]) >= 0))
			return ignore_file(fd, pages, psprintf("entry %u is invalid or out of order", i));
	CloseTransientFile(fd);

	/* shared_buffers is smaller than when recorded: keep the hottest */
	if (hdr.npages > max_pages)
	{
		qsort(pages, hdr.npages, sizeof(WarmupPage), usage_desc_cmp);
		hdr.npages = max_pages;
		qsort(pages, hdr.npages, sizeof(WarmupPage), page_cmp);
	}
	info->redo = hdr.redo;
	info->recorded_at = hdr.recorded_at;
	info->npages = hdr.npages;
	return pages;
}
