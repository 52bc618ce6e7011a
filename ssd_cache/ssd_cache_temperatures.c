/*-------------------------------------------------------------------------
 *
 * ssd_cache_temperatures.c
 *	  TAC's region temperatures kept across restarts and crashes, in
 *	  $PGDATA/ssd_cache.temperatures.
 *
 * Why: after a restart the cache still holds the hot pages, but with every
 * temperature at zero the coldest cached page is as cold as anything, so
 * the first pages read after the start pass the admission bar and evict hot
 * pages.  Measured on the recovery benchmark this cost 5 points of hit
 * ratio after a clean restart, more after a crash.
 *
 * The admission worker saves the temperatures after every checkpoint (or
 * restartpoint) it notices and when it is told to stop; the postmaster
 * loads them when it sets up shared memory, which after a crash means the
 * last checkpoint's.  Temperatures are hints: a missing, old or damaged
 * file costs hit ratio, never correctness, so every problem here is a LOG
 * line and the cache goes on.  The file belongs to the data directory
 * (a copy of it, a base backup or a restored snapshot, heats the same
 * relations); it is written to a temporary name, fsynced and renamed
 * durably, so a crash leaves the old file or the new one.
 *
 * Format: a header (magic, format, entry count, CRC-32C of the entries)
 * followed by SsdSavedRegion entries.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "ssd_cache_policy.h"
#include "ssd_cache_temperatures.h"

#define TEMPERATURES_FILE		"ssd_cache.temperatures"
#define TEMPERATURES_TMP_FILE	"ssd_cache.temperatures.tmp"
#define TEMPERATURES_MAGIC		0x53534454	/* "SSDT" */
#define TEMPERATURES_FORMAT		1

typedef struct SsdTemperaturesHeader
{
	uint32		magic;
	uint32		format;
	uint64		count;
	pg_crc32c	crc;			/* of the entries */
	uint32		unused;
} SsdTemperaturesHeader;

/* The worker's: the redo pointer of the checkpoint last saved for. */
static XLogRecPtr saved_for_redo = InvalidXLogRecPtr;

static pg_crc32c
entries_crc(const SsdSavedRegion *r, uint64 n)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, r, n * sizeof(SsdSavedRegion));
	FIN_CRC32C(crc);
	return crc;
}

/* write(2) all of it or fail. */
bool
ssd_cache_write_all(int fd, const void *buf, Size len)
{
	const char *p = buf;

	while (len > 0)
	{
		ssize_t		w = write(fd, p, Min(len, (Size) 1 << 30));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
		{
			if (w == 0)
				errno = ENOSPC;
			return false;
		}
		p += w;
		len -= w;
	}
	return true;
}

/* read(2) all of it or fail. */
bool
ssd_cache_read_all(int fd, void *buf, Size len)
{
	char	   *p = buf;

	while (len > 0)
	{
		ssize_t		r = read(fd, p, Min(len, (Size) 1 << 30));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		len -= r;
	}
	return true;
}

/*
 * Write the current temperatures.  Called by the admission worker only (one
 * writer of the file), in its own memory context.
 */
void
ssd_cache_save_temperatures(void)
{
	SsdTemperaturesHeader hdr;
	SsdSavedRegion *r;
	uint64		n;
	int			fd;
	bool		ok;

	r = ssd_cache_copy_temperatures(&n);
	if (r == NULL)
	{
		ereport(LOG,
				(errmsg("ssd_cache: out of memory copying the cache's temperatures"),
				 errdetail("They were not saved; the previous file stays.")));
		return;
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = TEMPERATURES_MAGIC;
	hdr.format = TEMPERATURES_FORMAT;
	hdr.count = n;
	hdr.crc = entries_crc(r, n);

	fd = OpenTransientFile(TEMPERATURES_TMP_FILE, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not create \"%s\": %m", TEMPERATURES_TMP_FILE),
				 errdetail("The cache's temperatures were not saved; after a restart it admits as if cold.")));
		pfree(r);
		return;
	}
	pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_WRITE);
	ok = ssd_cache_write_all(fd, &hdr, sizeof(hdr)) &&
		ssd_cache_write_all(fd, r, n * sizeof(SsdSavedRegion));
	pgstat_report_wait_end();
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
		(void) unlink(TEMPERATURES_TMP_FILE);
		errno = save_errno;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not write \"%s\": %m", TEMPERATURES_TMP_FILE),
				 errdetail("The cache's temperatures were not saved; after a restart it admits as if cold.")));
		pfree(r);
		return;
	}
	CloseTransientFile(fd);
	pfree(r);
	/* LOG, not ERROR: the worker must not die over a hint. */
	(void) durable_rename(TEMPERATURES_TMP_FILE, TEMPERATURES_FILE, LOG);
}

/*
 * The admission worker's periodic call: save once per checkpoint or
 * restartpoint (the redo pointer moved).  The first call only notes where
 * the server starts from: the file on disk is what was just loaded.
 */
void
ssd_cache_save_temperatures_if_due(void)
{
	XLogRecPtr	redo = GetRedoRecPtr();

	if (XLogRecPtrIsInvalid(saved_for_redo))
	{
		saved_for_redo = redo;
		return;
	}
	if (redo == saved_for_redo || ssd_cache_policy != SSD_POLICY_TAC)
		return;
	saved_for_redo = redo;
	ssd_cache_save_temperatures();
}

/* Entries read at a time: the postmaster never holds more than 2 MB of them. */
#define LOAD_CHUNK	65536

/*
 * In the postmaster, when shared memory is set up: load the file if it is
 * there and whole.  Two passes in chunks, the checksum first, so that a
 * file of any size costs bounded memory and nothing of a damaged one gets
 * in.
 */
void
ssd_cache_load_temperatures(void)
{
	SsdTemperaturesHeader hdr;
	SsdSavedRegion *chunk;
	struct stat st;
	int			fd;
	int			pass;
	bool		ok = true;
	pg_crc32c	crc;
	uint64		restored = 0;

	fd = OpenTransientFile(TEMPERATURES_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("ssd_cache: could not open \"%s\": %m", TEMPERATURES_FILE),
					 errdetail("The cache starts with every temperature at zero.")));
		return;
	}
	if (fstat(fd, &st) != 0 ||
		!ssd_cache_read_all(fd, &hdr, sizeof(hdr)) ||
		hdr.magic != TEMPERATURES_MAGIC || hdr.format != TEMPERATURES_FORMAT ||
		hdr.count > (uint64) st.st_size / sizeof(SsdSavedRegion) ||
		(uint64) st.st_size != sizeof(hdr) + hdr.count * sizeof(SsdSavedRegion))
	{
		CloseTransientFile(fd);
		ereport(LOG,
				(errmsg("ssd_cache: ignoring \"%s\": not a temperature file of this ssd_cache build or truncated",
						TEMPERATURES_FILE),
				 errdetail("The cache starts with every temperature at zero.")));
		return;
	}
	chunk = palloc(LOAD_CHUNK * sizeof(SsdSavedRegion));
	for (pass = 0; pass < 2 && ok; pass++)
	{
		uint64		done = 0;

		if (lseek(fd, sizeof(hdr), SEEK_SET) < 0)
			ok = false;
		INIT_CRC32C(crc);
		while (ok && done < hdr.count)
		{
			uint64		n = Min(hdr.count - done, (uint64) LOAD_CHUNK);

			if (!ssd_cache_read_all(fd, chunk, n * sizeof(SsdSavedRegion)))
			{
				ok = false;
				break;
			}
			if (pass == 0)
				COMP_CRC32C(crc, chunk, n * sizeof(SsdSavedRegion));
			else
				restored += ssd_cache_restore_temperatures(chunk, n);
			done += n;
		}
		if (pass == 0)
		{
			FIN_CRC32C(crc);
			ok = ok && crc == hdr.crc;
		}
	}
	CloseTransientFile(fd);
	pfree(chunk);
	if (!ok)
	{
		ereport(LOG,
				(errmsg("ssd_cache: ignoring \"%s\": checksum mismatch", TEMPERATURES_FILE),
				 errdetail("The cache starts with every temperature at zero.")));
		return;
	}
	ereport(LOG,
			(errmsg("ssd_cache: restored the temperatures of %llu regions",
					(unsigned long long) restored),
			 restored < hdr.count ?
			 errdetail("%llu more did not fit the table of a cache this size.",
					   (unsigned long long) (hdr.count - restored)) : 0));
}
