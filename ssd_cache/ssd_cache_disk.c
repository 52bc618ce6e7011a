/*-------------------------------------------------------------------------
 *
 * ssd_cache_disk.c
 *	  Writing pages the cache holds fresher than the disk back to their data
 *	  files, and making those writes durable.
 *
 * Write-back needs the disk copy durable before the slot stops being the
 * authoritative one: before its fresher flag is cleared, before the slot is
 * reused, before the data directory is declared complete at shutdown.  A
 * data-file write only reaches the OS page cache, so each batch ends with
 * one fsync per segment file it touched (the thesis's "one fsync per batch";
 * a segment is what md.c's sync handler syncs).
 *
 * Two callers, two ways:
 *	- running processes (a backend's ssd_cache_flush(), the admission
 *	  worker's eviction) go through md.c directly, never through the wrapped
 *	  dispatch table: that would route the page back into the cache.  Errors
 *	  are md.c's ERRORs; a failed fsync is data_sync_elevel(ERROR), a PANIC
 *	  by default, exactly as for the checkpointer's fsyncs.
 *	- the postmaster, writing everything back as it exits after a clean
 *	  shutdown, has no smgr and must not raise errors: plain open/pwrite/
 *	  fsync, failures reported to the caller.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/relpath.h"
#include "postmaster/bgwriter.h"
#include "storage/fd.h"
#include "storage/md.h"
#include "storage/smgr.h"
#include "storage/sync.h"

#include "ssd_cache_disk.h"

/*
 * Write one page to its data file, not yet durable (running processes).
 * Returns false, writing nothing, if the relation's file does not exist.
 * mdexists() closes the fork's files first: a descriptor kept from an
 * earlier write-back could name a file unlinked since, whose relfilenode a
 * new relation may have by now.
 */
bool
ssd_cache_disk_write(const BufferTag *tag, const char *page)
{
	SMgrRelation reln = smgropen(tag->rnode, InvalidBackendId);

	if (!mdexists(reln, tag->forkNum))
	{
		/* A missing tablespace directory is a missing mount, not a drop. */
		if (!ssd_cache_disk_relation_removed(tag))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write back block %u of relation %u/%u/%u: its directory does not exist",
							tag->blockNum, tag->rnode.spcNode, tag->rnode.dbNode, tag->rnode.relNode)));
		return false;
	}
	/* skipFsync: the caller syncs the segment itself, before relying on it. */
	mdwrite(reln, tag->forkNum, tag->blockNum, (char *) page, true);
	return true;
}

static bool
parent_dir_exists(char *path)
{
	char	   *slash = strrchr(path, '/');
	struct stat st;

	if (slash)
		*slash = '\0';
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Is a relation whose file is missing removed, rather than out of reach?
 * A file missing from its database's directory belongs to a relation
 * dropped; a database directory missing from its tablespace's belongs to a
 * database dropped (a DROP DATABASE that removed the files and crashed
 * before the cache heard of it; PostgreSQL marks such a database invalid
 * and it can only be dropped again).  A missing tablespace directory is
 * more likely a mount that is missing: not a removal.
 */
bool
ssd_cache_disk_relation_removed(const BufferTag *tag)
{
	char	   *path = relpathperm(tag->rnode, tag->forkNum);
	bool		removed;

	/* the database's directory, then the tablespace's: each call cuts path */
	removed = parent_dir_exists(path) || parent_dir_exists(path);
	pfree(path);
	return removed;
}

/*
 * Is the relation unlogged (it has an init fork)?  Crash recovery and
 * standbys reset unlogged relations by copying files behind the cache, so
 * their pages are never admitted or absorbed.
 */
bool
ssd_cache_disk_relation_unlogged(RelFileNode rnode)
{
	char	   *path = relpathperm(rnode, INIT_FORKNUM);
	struct stat st;
	bool		result = stat(path, &st) == 0;

	pfree(path);
	return result;
}

static void
segment_tag(const BufferTag *tag, FileTag *ftag)
{
	memset(ftag, 0, sizeof(FileTag));
	ftag->handler = SYNC_HANDLER_MD;
	ftag->rnode = tag->rnode;
	ftag->forknum = tag->forkNum;
	ftag->segno = tag->blockNum / RELSEG_SIZE;
}

/*
 * Make durable the data-file writes of tags[0..n-1] (but the skipped ones,
 * if skip is not NULL): one fsync per distinct segment.  A failure is
 * treated as PostgreSQL treats a failed data-file fsync.
 */
void
ssd_cache_disk_sync(int n, const BufferTag *tags, const bool *skip)
{
	FileTag		few[32];
	FileTag    *synced = n <= lengthof(few) ? few : palloc(sizeof(FileTag) * n);
	int			nsynced = 0,
				i,
				j;

	for (i = 0; i < n; i++)
	{
		FileTag		ftag;
		char		path[MAXPGPATH];
		bool		seen = false;

		if (skip && skip[i])
			continue;
		segment_tag(&tags[i], &ftag);
		for (j = 0; j < nsynced && !seen; j++)
			seen = memcmp(&ftag, &synced[j], sizeof(FileTag)) == 0;
		if (seen)
			continue;
		if (mdsyncfiletag(&ftag, path) < 0)
			ereport(data_sync_elevel(ERROR),
					(errcode_for_file_access(),
					 errmsg("could not fsync file \"%s\": %m", path)));
		synced[nsynced++] = ftag;
		if (nsynced % 10 == 0)
			AbsorbSyncRequests();	/* the checkpointer, as ProcessSyncRequests does */
	}
	if (synced != few)
		pfree(synced);
}

static bool
plain_close(SsdDiskPlainFile *file)
{
	bool		ok = true;

	if (file->fd >= 0)
	{
		ok = pg_fsync(file->fd) == 0;
		if (close(file->fd) != 0)
			ok = false;
		file->fd = -1;
	}
	return ok;
}

/*
 * The postmaster's way: write a page into its segment file with plain
 * system calls, keeping one segment open in *file between calls (pages come
 * sorted by file); a change of file, or ssd_cache_disk_plain_close, fsyncs
 * the previous one.  Returns false with errno set on failure (file->path
 * names the file); errno ENOENT means the relation's file is gone.
 */
bool
ssd_cache_disk_plain_write(SsdDiskPlainFile *file, const BufferTag *tag, const char *page)
{
	char	   *rel = relpathperm(tag->rnode, tag->forkNum);
	BlockNumber segno = tag->blockNum / RELSEG_SIZE;
	char		path[MAXPGPATH];
	off_t		offset = (off_t) (tag->blockNum % RELSEG_SIZE) * BLCKSZ;

	if (segno == 0)
		strlcpy(path, rel, sizeof(path));
	else
		snprintf(path, sizeof(path), "%s.%u", rel, segno);
	pfree(rel);

	if (file->fd < 0 || strcmp(path, file->path) != 0)
	{
		if (!plain_close(file))
			return false;
		strlcpy(file->path, path, sizeof(file->path));
		/* Never create: a missing file means the relation is gone. */
		file->fd = open(path, O_WRONLY | PG_BINARY, 0);
		if (file->fd < 0)
			return false;
	}
	if (pg_pwrite(file->fd, page, BLCKSZ, offset) != BLCKSZ)
	{
		if (errno == 0)
			errno = ENOSPC;
		return false;
	}
	return true;
}

bool
ssd_cache_disk_plain_close(SsdDiskPlainFile *file)
{
	return plain_close(file);
}
