/*-------------------------------------------------------------------------
 *
 * ssd_cache_file.c
 *	  The cache file on the SSD: its header, its persistent directory and
 *	  its page slots, and the rule for when its contents may be trusted.
 *
 * Layout: block 0 holds the header; then the directory, one 32-byte entry
 * per slot, written 4 kB at a time; then the slots, BLCKSZ each.
 *
 * Durability.  The file is opened with O_DIRECT | O_DSYNC, so every write is
 * on stable storage when it returns.  That is what makes the cache safe
 * under PostgreSQL's checkpoint protocol without seeing checkpoints: a slot
 * overwritten while a checkpoint flushes the page is durable before the
 * checkpoint can complete, and an invalidation is durable before the
 * truncate or unlink that needed it.  (Registering sync requests would not
 * be enough: a backend that finds the checkpointer's queue full fsyncs the
 * segment itself, and the cache would never hear of it.)
 *
 * Trust.  The directory survives restarts and crashes, but a cache file
 * whose pages may be older than the data directory must never be used.  At
 * startup the contents are trusted only if all of these hold:
 *	- the header is intact, of this format, BLCKSZ and size, and of this
 *	  cluster (system identifier);
 *	- there is no backup_label (a restored base backup is older than the
 *	  cache);
 *	- pg_control's latest checkpoint is one this cache saw happen: its redo
 *	  pointer and timeline match one recorded in the header.  The
 *	  checkpointer records each checkpoint's redo pointer during the
 *	  checkpoint's sync phase, before the checkpoint can complete, and the
 *	  postmaster records the shutdown checkpoint at a clean shutdown.  If
 *	  the server ran without ssd_cache and completed a checkpoint, writes
 *	  the cache did not see are older than that checkpoint and WAL replay
 *	  cannot repair them, so the cache starts empty.  Changes after the last
 *	  checkpoint it saw are repaired by WAL replay, which reads through the
 *	  cache.
 * Otherwise the cache starts empty: a new epoch and a zeroed directory, so
 * no old entry can ever be mistaken for a valid one, and a LOG line says
 * why.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "ssd_cache.h"
#include "ssd_cache_file.h"
#include "ssdkit_uring.h"

/* The header as it is on the SSD; written by one process at a time (the
 * postmaster before and after the server runs, the checkpointer while it
 * runs). */
typedef struct SsdCacheFileShared
{
	SsdCacheHeader header;
	char		path[MAXPGPATH];
	SsdCacheLayout layout;
	bool		disowned;		/* the header was destroyed on purpose: never
								 * write a valid one again in this run */
} SsdCacheFileShared;

static SsdCacheFileShared *file_shared = NULL;
static int	cache_fd = -1;

static void write_header(int fd, SsdCacheHeader *h);

/* A BLCKSZ buffer aligned for O_DIRECT, from malloc (free() it). */
static char *
aligned_block(void)
{
	void	   *p;

	if (posix_memalign(&p, BLCKSZ, BLCKSZ) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	return p;
}

void
ssd_cache_layout(uint64 nslots, SsdCacheLayout *layout)
{
	uint64		dir_bytes;

	layout->nslots = nslots;
	layout->dir_offset = BLCKSZ;
	layout->dir_pages = (nslots + SSD_DIR_ENTRIES_PER_PAGE - 1) / SSD_DIR_ENTRIES_PER_PAGE;
	dir_bytes = layout->dir_pages * SSD_DIR_PAGE_SIZE;
	layout->slots_offset = TYPEALIGN(BLCKSZ, layout->dir_offset + dir_bytes);
	layout->file_size = layout->slots_offset + nslots * BLCKSZ;
}

void
ssd_cache_dir_entry_seal(SsdCacheDirEntry *e)
{
	INIT_CRC32C(e->crc);
	COMP_CRC32C(e->crc, e, offsetof(SsdCacheDirEntry, crc));
	FIN_CRC32C(e->crc);
}

bool
ssd_cache_dir_entry_ok(const SsdCacheDirEntry *e, uint32 epoch)
{
	pg_crc32c	crc;

	if (!(e->flags & SSD_DIR_VALID) || e->epoch != epoch)
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, e, offsetof(SsdCacheDirEntry, crc));
	FIN_CRC32C(crc);
	return EQ_CRC32C(crc, e->crc);
}

static void
seal_header(SsdCacheHeader *h)
{
	INIT_CRC32C(h->crc);
	COMP_CRC32C(h->crc, h, offsetof(SsdCacheHeader, crc));
	FIN_CRC32C(h->crc);
}

/* Write the header block; FATAL on failure (only at startup/shutdown or in
 * the checkpointer, where a cache that cannot record state must stop). */
static void
write_header(int fd, SsdCacheHeader *h)
{
	char	   *block = aligned_block();

	seal_header(h);
	memset(block, 0, BLCKSZ);
	memcpy(block, h, sizeof(SsdCacheHeader));
	if (pg_pwrite(fd, block, BLCKSZ, 0) != BLCKSZ)
		ereport(PANIC,
				(errcode_for_file_access(),
				 errmsg("could not write the ssd_cache header of \"%s\": %m",
						file_shared->path)));
	free(block);
}

/*
 * Decide whether a header read from disk describes contents this server may
 * use.  Returns NULL if so, else the reason (for the LOG line).
 */
static char *
header_distrust_reason(const SsdCacheHeader *h, const SsdCacheLayout *layout,
					   const ControlFileData *control)
{
	pg_crc32c	crc;
	struct stat st;

	if (memcmp(h->magic, SSD_CACHE_MAGIC, sizeof(h->magic)) != 0)
		return "the file has no ssd_cache header";
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, h, offsetof(SsdCacheHeader, crc));
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h->crc))
		return "its header is corrupted (checksum mismatch)";
	if (h->format != SSD_CACHE_FORMAT)
		return psprintf("it has format %u, this ssd_cache uses %u", h->format, SSD_CACHE_FORMAT);
	if (h->blcksz != BLCKSZ)
		return psprintf("it was made with BLCKSZ %u", h->blcksz);
	if (h->system_identifier != control->system_identifier)
		return psprintf("it belongs to another cluster (system identifier " UINT64_FORMAT ")",
						h->system_identifier);
	if (h->nslots != layout->nslots)
		return psprintf("its size changed (" UINT64_FORMAT " slots, now " UINT64_FORMAT ")",
						h->nslots, layout->nslots);
	if (stat(BACKUP_LABEL_FILE, &st) == 0)
		return "the data directory was restored from a base backup (backup_label exists)";
	if (h->timeline != control->checkPointCopy.ThisTimeLineID ||
		(h->redo_seen[0] != control->checkPointCopy.redo &&
		 h->redo_seen[1] != control->checkPointCopy.redo))
		return psprintf("the latest checkpoint (redo %X/%X, timeline %u) happened without ssd_cache",
						LSN_FORMAT_ARGS(control->checkPointCopy.redo),
						control->checkPointCopy.ThisTimeLineID);
	return NULL;
}

/*
 * Open or create the cache file, size it, and decide whether its directory
 * may be trusted.  Runs in the postmaster before any other process starts
 * (so before WAL redo reads a page).  Bad configuration is FATAL; an
 * untrustworthy file is reset and reported through *why_empty.  Returns
 * whether the directory may be loaded; *epoch is the current epoch.
 */
bool
ssd_cache_file_startup(const char *path, const SsdCacheLayout *layout,
					   uint32 *epoch, char **why_empty)
{
	bool		found;
	int			fd;
	bool		created = false;
	struct stat st;
	ControlFileData *control;
	bool		crc_ok;
	char	   *block;
	SsdCacheHeader h = {{0}};
	char	   *reason = NULL;
	int			rc;

	file_shared = ShmemInitStruct("ssd_cache file", sizeof(SsdCacheFileShared), &found);
	file_shared->disowned = false;
	strlcpy(file_shared->path, path, MAXPGPATH);
	file_shared->layout = *layout;

	if (stat(path, &st) != 0)
	{
		if (errno != ENOENT)
			ereport(FATAL,
					(errcode_for_file_access(),
					 errmsg("could not stat ssd_cache.path \"%s\": %m", path)));
		created = true;
	}
	else if (S_ISREG(st.st_mode) && (uint64) st.st_size < layout->file_size)
	{
		/*
		 * Shorter than its layout: slots past the end would read back as
		 * zeros after the file is extended below, and an all-zero page is a
		 * valid (empty) page to PostgreSQL.  Never trust such a file.
		 */
		reason = psprintf("it is shorter than a cache of this size (%lld of %llu bytes)",
						  (long long) st.st_size, (unsigned long long) layout->file_size);
	}
	fd = open(path, O_RDWR | O_CREAT | O_DIRECT | O_DSYNC | PG_BINARY, S_IRUSR | S_IWUSR);
	if (fd < 0)
	{
		int			save_errno = errno;

		errno = save_errno;
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not open ssd_cache.path \"%s\": %m", path),
				 save_errno == EINVAL ?
				 errdetail("The file system does not support O_DIRECT (tmpfs, for one, does not).") : 0,
				 errhint("Set ssd_cache.path to a file on a local SSD file system the server can write, "
						 "or remove ssd_cache from shared_preload_libraries.")));
	}

	/* Reserve the whole file now, so a full disk is a clear error here. */
	rc = posix_fallocate(fd, 0, layout->file_size);
	if (rc != 0)
	{
		errno = rc;
		ereport(FATAL,
				(errcode(rc == ENOSPC ? ERRCODE_DISK_FULL : ERRCODE_IO_ERROR),
				 errmsg("could not allocate %llu MB for ssd_cache.path \"%s\": %m",
						(unsigned long long) (layout->file_size >> 20), path),
				 errhint("Free space on that file system or lower ssd_cache.size.")));
	}

	control = get_controlfile(DataDir, &crc_ok);
	if (!crc_ok)
		ereport(FATAL,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ssd_cache: pg_control has an incorrect checksum")));

	block = aligned_block();
	if (created)
		reason = "the cache file did not exist";
	else if (reason != NULL)
	{
		/* Decided above (truncated file); keep the old epoch for the new one. */
		if (pg_pread(fd, block, BLCKSZ, 0) == BLCKSZ)
			memcpy(&h, block, sizeof(h));
	}
	else if (pg_pread(fd, block, BLCKSZ, 0) != BLCKSZ)
		reason = psprintf("its header could not be read: %m");
	else
	{
		memcpy(&h, block, sizeof(h));
		reason = header_distrust_reason(&h, layout, control);
	}

	if (reason == NULL)
	{
		file_shared->header = h;
		*why_empty = NULL;
	}
	else
	{
		uint64		p;
		uint32		old_epoch = created ? 0 : h.epoch;

		/* A zeroed directory and a new epoch: nothing old can look valid. */
		memset(block, 0, BLCKSZ);
		for (p = 0; p < layout->slots_offset - layout->dir_offset; p += BLCKSZ)
			if (pg_pwrite(fd, block, BLCKSZ, layout->dir_offset + p) != BLCKSZ)
				ereport(FATAL,
						(errcode_for_file_access(),
						 errmsg("could not initialize the ssd_cache directory in \"%s\": %m", path)));
		memset(&h, 0, sizeof(h));
		memcpy(h.magic, SSD_CACHE_MAGIC, sizeof(h.magic));
		h.format = SSD_CACHE_FORMAT;
		h.blcksz = BLCKSZ;
		h.system_identifier = control->system_identifier;
		h.nslots = layout->nslots;
		h.dir_offset = layout->dir_offset;
		h.slots_offset = layout->slots_offset;
		h.epoch = old_epoch + 1;
		h.timeline = control->checkPointCopy.ThisTimeLineID;
		h.redo_seen[0] = control->checkPointCopy.redo;
		h.redo_seen[1] = InvalidXLogRecPtr;
		file_shared->header = h;
		*why_empty = reason;
	}
	/* Record the checkpoint recovery will start from as one we saw. */
	if (file_shared->header.redo_seen[0] != control->checkPointCopy.redo)
	{
		file_shared->header.redo_seen[1] = file_shared->header.redo_seen[0];
		file_shared->header.redo_seen[0] = control->checkPointCopy.redo;
	}
	write_header(fd, &file_shared->header);
	free(block);
	pfree(control);
	close(fd);

	*epoch = file_shared->header.epoch;
	return reason == NULL;
}

/*
 * Called by the checkpointer during a checkpoint's sync phase, before the
 * checkpoint can complete: remember its redo pointer as one the cache saw.
 */
void
ssd_cache_file_note_checkpoint(XLogRecPtr redo)
{
	SsdCacheHeader *h = &file_shared->header;

	if (file_shared->disowned || redo == InvalidXLogRecPtr || redo == h->redo_seen[0])
		return;
	h->redo_seen[1] = h->redo_seen[0];
	h->redo_seen[0] = redo;
	/* Restartpoints happen on the replay timeline, checkpoints on ours. */
	if (RecoveryInProgress())
		(void) GetXLogReplayRecPtr(&h->timeline);
	else
		h->timeline = GetWALInsertionTimeLine();
	write_header(ssd_cache_file_fd(), h);
}

/*
 * Called in the postmaster as it exits: after a clean shutdown, record the
 * shutdown checkpoint so the next start trusts the cache.
 */
void
ssd_cache_file_note_shutdown(void)
{
	ControlFileData *control;
	bool		crc_ok;
	SsdCacheHeader *h = &file_shared->header;

	if (file_shared->disowned)
		return;
	control = get_controlfile(DataDir, &crc_ok);
	if (!crc_ok || (control->state != DB_SHUTDOWNED &&
					control->state != DB_SHUTDOWNED_IN_RECOVERY))
		return;
	h->timeline = control->checkPointCopy.ThisTimeLineID;
	if (h->redo_seen[0] != control->checkPointCopy.redo)
	{
		h->redo_seen[1] = h->redo_seen[0];
		h->redo_seen[0] = control->checkPointCopy.redo;
	}
	write_header(ssd_cache_file_fd(), h);
}

/* This process's descriptor of the cache file, opened on first use. */
int
ssd_cache_file_fd(void)
{
	if (cache_fd < 0)
	{
		cache_fd = BasicOpenFile(file_shared->path, O_RDWR | O_DIRECT | O_DSYNC | PG_BINARY);
		if (cache_fd < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open ssd_cache file \"%s\": %m", file_shared->path)));
		ReserveExternalFD();
	}
	return cache_fd;
}

/*
 * Slot and directory I/O.  These return false with errno set instead of
 * raising errors: an SSD failure must fall back to the disk, not fail the
 * query.
 */
static bool
cache_io(bool is_write, char *buf, Size len, uint64 offset, uint32 wait_event,
		 const char *fault)
{
	ssize_t		n;
	int			fd;

	if (ssd_cache_fault_enabled(fault))
	{
		errno = EIO;
		return false;
	}
	fd = ssd_cache_file_fd();
	pgstat_report_wait_start(wait_event);
	n = is_write ? pg_pwrite(fd, buf, len, offset) : pg_pread(fd, buf, len, offset);
	pgstat_report_wait_end();
	if (n == (ssize_t) len)
		return true;
	if (n >= 0)
		errno = EIO;			/* short transfer: the file was truncated */
	return false;
}

bool
ssd_cache_file_read_slot(uint64 slot, char *aligned_buf)
{
	return cache_io(false, aligned_buf, BLCKSZ,
					file_shared->layout.slots_offset + slot * BLCKSZ,
					WAIT_EVENT_DATA_FILE_READ, "slot_read_error");
}

bool
ssd_cache_file_write_slot(uint64 slot, const char *aligned_buf)
{
	return cache_io(true, unconstify(char *, aligned_buf), BLCKSZ,
					file_shared->layout.slots_offset + slot * BLCKSZ,
					WAIT_EVENT_DATA_FILE_WRITE, "slot_write_error");
}

bool
ssd_cache_file_read_dir(uint64 first_page, uint64 npages, char *aligned_buf)
{
	return cache_io(false, aligned_buf, npages * SSD_DIR_PAGE_SIZE,
					file_shared->layout.dir_offset + first_page * SSD_DIR_PAGE_SIZE,
					WAIT_EVENT_DATA_FILE_READ, "dir_read_error");
}

bool
ssd_cache_file_write_dir_page(uint64 dirpage, const char *aligned_buf)
{
	return cache_io(true, unconstify(char *, aligned_buf), SSD_DIR_PAGE_SIZE,
					file_shared->layout.dir_offset + dirpage * SSD_DIR_PAGE_SIZE,
					WAIT_EVENT_DATA_FILE_WRITE, "dir_write_error");
}

/*
 * A directory write failed, so the persistent directory may still call a
 * slot valid that no longer is.  Make sure the next start does not trust
 * it: overwrite the header.  If even that fails, nothing guarantees that a
 * stale page will not be served after a restart, so stop the server.
 */
void
ssd_cache_file_forget(int failed_errno)
{
	char	   *block = aligned_block();
	bool		ok;

	/* From now on nothing may write a valid header (checkpoints, shutdown). */
	file_shared->disowned = true;
	pg_memory_barrier();
	memset(block, 0, BLCKSZ);
	ok = pg_pwrite(ssd_cache_file_fd(), block, BLCKSZ, 0) == BLCKSZ;
	free(block);
	errno = failed_errno;
	if (!ok)
		ereport(PANIC,
				(errcode_for_file_access(),
				 errmsg("ssd_cache could neither update its directory nor disable the cache file \"%s\": %m",
						file_shared->path),
				 errhint("Remove the cache file or ssd_cache from shared_preload_libraries before restarting.")));
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("ssd_cache could not update its directory in \"%s\": %m", file_shared->path),
			 errdetail("The cache is in pass-through mode and will start empty after a restart.")));
}

/*
 * Write several slots at once, all in flight together (the admission
 * worker's batches).  ok[i] says whether slot i was written; failures leave
 * errno in failed_errno.
 */
void
ssd_cache_file_write_slots(int n, const int32 *slots, char *const *bufs, bool *ok,
						   int *failed_errno)
{
	static SsdkitUring *ring = NULL;
	SsdkitUringCompletion done[SSD_CACHE_WRITE_BATCH];
	int			i,
				pending = 0;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	*failed_errno = 0;
	if (ssd_cache_fault_enabled("slot_write_error"))
	{
		for (i = 0; i < n; i++)
			ok[i] = false;
		*failed_errno = EIO;
		return;
	}
	if (ring == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		ring = ssdkit_uring_create(SSD_CACHE_WRITE_BATCH);
		MemoryContextSwitchTo(old);
	}
	for (i = 0; i < n; i++)
	{
		ok[i] = false;
		if (slots[i] < 0)
			continue;
		if (!ssdkit_uring_queue_write(ring, ssd_cache_file_fd(), bufs[i], BLCKSZ,
									  file_shared->layout.slots_offset + (uint64) slots[i] * BLCKSZ,
									  (uint64) i))
			elog(ERROR, "ssd_cache: io_uring refused a write with room for it");
		pending++;
	}
	ssdkit_uring_submit(ring);
	while (pending > 0)
	{
		int			got = ssdkit_uring_reap(ring, done, SSD_CACHE_WRITE_BATCH, true);

		for (i = 0; i < got; i++)
		{
			int			k = (int) done[i].tag;

			ok[k] = done[i].res == BLCKSZ;
			if (!ok[k])
				*failed_errno = done[i].res < 0 ? -done[i].res : EIO;
		}
		pending -= got;
	}
}
