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
 * must serve only the data directory state it was written against: not a
 * copy, a restore, a snapshot or a rewound directory, and not while another
 * server uses it.  So:
 *	- The postmaster holds an exclusive flock() on the file while the server
 *	  runs; a second server (a same-host standby made with pg_basebackup,
 *	  whose postgresql.conf names the same file) runs without the cache.
 *	- Every start writes a new random token into both the header and the
 *	  data directory (ssd_cache.token).  A data directory copied or restored
 *	  from before that start carries another token.
 *	- The header must be intact, of this format, BLCKSZ, size and cluster
 *	  (system identifier); there is no backup_label; and pg_control's
 *	  latest checkpoint is one this cache saw happen (its redo pointer and
 *	  timeline are in the header), or else the server ran and checkpointed
 *	  without the cache, whose pages may then be older than the disk's.
 *	- After a clean shutdown (header state CLEAN) pg_control must name the
 *	  very shutdown checkpoint recorded then.
 *	- After a crash (header state RUNNING) the data directory may be the
 *	  crashed one, or a crash-consistent copy of it taken during that run
 *	  (a filesystem snapshot): the token and checkpoint match either way.
 *	  What tells them apart is the WAL.  Before any slot is written the
 *	  header records wal_bound, a WAL position no cached page depends on
 *	  anything past (the WAL flush pointer, or the replay pointer in
 *	  recovery: pages on disk and the commits behind their hint bits are
 *	  never ahead of it).  The crashed directory's WAL reaches wal_bound; an
 *	  older copy's does not.  So the contents are loaded but not served
 *	  until WAL replay has reached wal_bound on the same timeline history;
 *	  if recovery ends short of it they are discarded.  Reads meanwhile go
 *	  to the disk, which alone is complete in write-through mode.
 * Otherwise the cache starts empty: a new epoch and a zeroed directory, so
 * no old entry can ever be mistaken for a valid one, and a LOG line says
 * why.
 *
 * Write-back.  Once a slot may hold a page newer than the disk's copy
 * (SSD_DIR_FRESHER), the data directory alone is no longer complete, and
 * starting without the cache would lose committed changes.  So before the
 * first such slot is written, the data directory gets a marker file
 * (SSD_CACHE_FRESHER_FILE: a random id plus the data directory's device and
 * inode) and the header the same id; both are cleared only once no slot is
 * fresher (a clean shutdown writes every one back).  At startup a marker of
 * this very data directory means the cache must be usable and carry the
 * same id, or the server refuses to start (ssd_cache_file_refuse_if_fresher)
 * with what would be lost and what the choices are.  The marker's name
 * starts with "pgsql_tmp", so pg_basebackup leaves it out (pg_rewind skips
 * only paths with a "/pgsql_tmp" component, and copies it).  A
 * marker whose device and inode are not the data directory's belongs to a
 * directory that was moved, whose file system came back under another
 * device number (disks enumerated in another order at boot), or copied
 * with its files: the pages it expects are in the cache it ran with, and
 * nothing here can tell a move from a copy.  The server refuses to start
 * either way; ssd_cache.data_directory_moved = on says it is the same
 * directory, and the start then goes on as with its own marker (token, id
 * and WAL checked as always) and rewrites the marker.  A header with an id
 * but no marker means the data directory does not expect those pages
 * (restored, or the marker removed to accept the loss): the cache starts
 * empty.
 *
 * Failure.  No failure of the cache file takes the server down.  At
 * startup it means running without the cache (SSD_TRUST_OFF); later the
 * caller gives up on the cache and disowns the file (ssd_cache_file_disown),
 * which removes the data directory's token, so the next start cannot trust
 * the file even if the SSD refuses every write.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/timeline.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/sync.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "ssd_cache.h"
#include "ssd_cache_file.h"
#include "ssdkit_uring.h"

/* The data directory's half of the pairing (see "Trust"). */
#define SSD_CACHE_TOKEN_FILE	"ssd_cache.token"

/* The data directory's half of write-back (see "Write-back"). */
#define SSD_CACHE_FRESHER_FILE	"pgsql_tmp_ssd_cache.fresher"

/* ssd_cache.data_directory_moved: a foreign marker is this directory's. */
bool		ssd_cache_data_directory_moved = false;

/*
 * The header as it is on the SSD.  The postmaster writes it before and
 * after the server runs; while it runs, writers hold header_lock.
 */
typedef struct SsdCacheFileShared
{
	SsdCacheHeader header;
	char		path[MAXPGPATH];
	SsdCacheLayout layout;
	LWLock	   *header_lock;
	pg_atomic_uint64 wal_bound; /* header.wal_bound as it is on the SSD */
	pg_atomic_uint32 verification;	/* SsdCacheVerification */
	XLogRecPtr	verify_bound;	/* after a crash: what replay must reach */
	TimeLineID	verify_tli;
	XLogRecPtr	startup_checkpoint; /* pg_control's at startup, for a start
									 * that replays nothing */
	TimeLineID	startup_tli;
	pg_atomic_uint32 disowned;	/* never write a valid header again */
	pg_atomic_uint32 admission_io;	/* AdmissionIo */
	pg_atomic_uint64 header_writes; /* while running, for the views */
	pg_atomic_uint32 fresher_armed; /* header.fresher_id != 0 on the SSD */
	bool		resets_unlogged;	/* this start runs recovery, which resets
									 * unlogged relations behind smgr */
	XLogRecPtr	lsn_floor;		/* the last run's WAL bound: slot LSNs up to
								 * it are not taken as this run's */
} SsdCacheFileShared;

static SsdCacheFileShared *file_shared = NULL;

/*
 * Per slot, whether this server wrote it, last, with a page that is not
 * new (all zeros is a valid, empty page to PostgreSQL).  Such a slot that
 * reads back as a new page lost its contents under us: the file was
 * truncated and extended again, or a hole punched in it, while in use (a
 * sparse file reads zeros, not a short read).  Cleared before each write
 * and set after it, so a write of a new page in progress is never taken
 * for a loss.  Unknown (0) after a restart until the slot is written.  One
 * writer per slot at a time (the buffer manager writes a block from one
 * process at a time, and the directory's busy marks and pins keep write-
 * backs and reuse apart), so plain bytes with barriers suffice: a reader
 * that sees the new contents of a write sees the flag cleared before it.
 */
static uint8 *slot_written_nonnew = NULL;

/*
 * Per slot, the LSN of the page this server last wrote to it;
 * InvalidXLogRecPtr when unknown (not written since the start, or the
 * write failed).  A restartpoint writes back only the pages it needs
 * (ssd_cache_write_back_fresher_now).
 */
static XLogRecPtr *slot_page_lsn = NULL;
static int	cache_fd = -1;

/* How the admission worker writes slots. */
typedef enum AdmissionIo
{
	ADMISSION_IO_UNKNOWN,		/* nothing admitted yet */
	ADMISSION_IO_URING,
	ADMISSION_IO_SYNCHRONOUS	/* io_uring was refused */
} AdmissionIo;

/* The postmaster's descriptor holding the flock; inherited by children. */
static int	lock_fd = -1;

static int	open_locked_file(void);

/* A BLCKSZ buffer aligned for O_DIRECT, from malloc (free() it), or NULL. */
static char *
aligned_block(void)
{
	void	   *p;

	if (posix_memalign(&p, BLCKSZ, BLCKSZ) != 0)
		return NULL;
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

/* Does the entry's checksum match the rest of it? */
bool
ssd_cache_dir_entry_sealed(const SsdCacheDirEntry *e)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, e, offsetof(SsdCacheDirEntry, crc));
	FIN_CRC32C(crc);
	return EQ_CRC32C(crc, e->crc);
}

bool
ssd_cache_dir_entry_ok(const SsdCacheDirEntry *e, uint32 epoch)
{
	return (e->flags & SSD_DIR_VALID) && e->epoch == epoch && ssd_cache_dir_entry_sealed(e);
}

static void
seal_header(SsdCacheHeader *h)
{
	INIT_CRC32C(h->crc);
	COMP_CRC32C(h->crc, h, offsetof(SsdCacheHeader, crc));
	FIN_CRC32C(h->crc);
}

/*
 * Write the header block durably (the file is O_DSYNC).  Returns false with
 * errno set on failure; the caller decides what that means.
 */
static bool
write_header(int fd, SsdCacheHeader *h)
{
	char	   *block;
	bool		ok;

	if (fd < 0)
		return false;
	if (ssd_cache_fault_enabled("header_write_error"))
	{
		errno = EIO;
		return false;
	}
	block = aligned_block();
	if (block == NULL)
	{
		errno = ENOMEM;
		return false;
	}
	seal_header(h);
	memset(block, 0, BLCKSZ);
	memcpy(block, h, sizeof(SsdCacheHeader));
	ok = pg_pwrite(fd, block, BLCKSZ, 0) == BLCKSZ;
	if (!ok && errno == 0)
		errno = EIO;
	free(block);
	return ok;
}

/* The data directory's token, or 0 if it has none. */
static uint64
read_token_file(void)
{
	FILE	   *f = AllocateFile(SSD_CACHE_TOKEN_FILE, "r");
	unsigned long long token = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llx", &token) != 1)
		token = 0;
	FreeFile(f);
	return (uint64) token;
}

/* Durably replace the data directory's token; false on failure. */
static bool
write_token_file(uint64 token)
{
	const char *tmp = SSD_CACHE_TOKEN_FILE ".tmp";
	FILE	   *f = AllocateFile(tmp, "w");
	bool		ok;

	if (f == NULL)
		return false;
	ok = fprintf(f, "%016llx\n", (unsigned long long) token) > 0;
	ok = ok && fflush(f) == 0 && pg_fsync(fileno(f)) == 0;
	ok = FreeFile(f) == 0 && ok;
	return ok && durable_rename(tmp, SSD_CACHE_TOKEN_FILE, LOG) == 0;
}

/* What the data directory says about write-back (see "Write-back"). */
typedef enum MarkerState
{
	MARKER_NONE,
	MARKER_OURS,				/* this data directory expects fresher pages */
	MARKER_FOREIGN				/* copied from another data directory */
} MarkerState;

static MarkerState
read_marker(uint64 *id)
{
	FILE	   *f = AllocateFile(SSD_CACHE_FRESHER_FILE, "r");
	unsigned long long mid = 0,
				dev = 0,
				ino = 0;
	struct stat st;
	int			n;

	*id = 0;
	if (f == NULL)
		return MARKER_NONE;
	n = fscanf(f, "%llx %llu %llu", &mid, &dev, &ino);
	FreeFile(f);
	/* An unreadable marker is taken as ours: refusing is the safe side. */
	if (n != 3 || stat(".", &st) != 0)
		return MARKER_OURS;
	*id = (uint64) mid;
	if ((uint64) st.st_dev != (uint64) dev || (uint64) st.st_ino != (uint64) ino)
		return MARKER_FOREIGN;
	return MARKER_OURS;
}

/* Durably write the marker; false on failure. */
static bool
write_marker(uint64 id)
{
	const char *tmp = SSD_CACHE_FRESHER_FILE ".tmp";
	struct stat st;
	FILE	   *f;
	bool		ok;

	if (stat(".", &st) != 0)
		return false;
	f = AllocateFile(tmp, "w");
	if (f == NULL)
		return false;
	ok = fprintf(f, "%016llx %llu %llu\n", (unsigned long long) id,
				 (unsigned long long) st.st_dev, (unsigned long long) st.st_ino) > 0;
	ok = ok && fflush(f) == 0 && pg_fsync(fileno(f)) == 0;
	ok = FreeFile(f) == 0 && ok;
	return ok && durable_rename(tmp, SSD_CACHE_FRESHER_FILE, LOG) == 0;
}

/*
 * A marker written where the data directory's device or inode were others
 * (see "Write-back"): refuse, unless ssd_cache.data_directory_moved says it
 * is this directory, moved.
 */
static void
refuse_if_foreign(void)
{
	if (ssd_cache_data_directory_moved)
		return;
	ereport(FATAL,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ssd_cache: this data directory expects changes that only the SSD cache holds, but it is not where they were written"),
			 errdetail("Its device or inode changed since ssd_cache ran in write-back mode: it was moved, its "
					   "file system came back under another device number, or it is a copy made with its "
					   "files.  Committed changes whose only copy is in the cache would be lost if the server "
					   "started without it."),
			 errhint("If it is the same data directory, and no copy of it has run with this cache since, start "
					 "once with ssd_cache.data_directory_moved = on.  If it is a copy, the changes are in the "
					 "original's cache: run SELECT ssd_cache_flush() there (or stop it cleanly) and copy again.  "
					 "To start without them and accept losing those changes, remove \"%s/%s\"; then check "
					 "the database (amcheck) or restore it from a backup.",
					 DataDir, SSD_CACHE_FRESHER_FILE)));
}

/*
 * The postmaster cannot use the cache for "why".  If this data directory
 * expects the cache to hold pages newer than its files (its own marker, or
 * one copied or moved with it), starting would lose them: refuse, saying
 * what the choices are.
 */
void
ssd_cache_file_refuse_if_fresher(const char *why)
{
	uint64		id;

	switch (read_marker(&id))
	{
		case MARKER_NONE:
			return;
		case MARKER_FOREIGN:
			/* moved or copied: that is the first thing to say */
			refuse_if_foreign();
			break;
		case MARKER_OURS:
			break;
	}
	ereport(FATAL,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ssd_cache: the SSD cache holds changes that are not in the data files, and it cannot be used: %s",
					why),
			 errdetail("ssd_cache ran in write-back mode; committed changes whose only copy is in the cache "
					   "would be lost if the server started without it."),
			 errhint("Make the cache usable again (the SSD mounted, ssd_cache.path and ssd_cache.size as before, "
					 "ssd_cache in shared_preload_libraries) and start the server.  To start without it and "
					 "accept losing those changes, remove \"%s/%s\"; then check the database "
					 "(amcheck) or restore it from a backup.",
					 DataDir, SSD_CACHE_FRESHER_FILE)));
}

/* Does this start run recovery, which resets unlogged relations? */
bool
ssd_cache_file_resets_unlogged(void)
{
	return file_shared != NULL && file_shared->resets_unlogged;
}

/* Does the header say slots may be fresher than the disk? */
bool
ssd_cache_file_fresher_armed(void)
{
	return file_shared != NULL && pg_atomic_read_u32(&file_shared->fresher_armed) != 0;
}


/*
 * Was the header's latest checkpoint, recorded with timeline tli, made on
 * the history pg_control's latest checkpoint is on?  The checkpointer
 * records the timeline it sees in its sync phase (see
 * ssd_cache_file_note_checkpoint), and pg_control the checkpoint record's:
 * after the end-of-recovery checkpoint a new timeline, whose previous one
 * was replayed; for a restartpoint the replayed checkpoint record's, an
 * ancestor of the replayed timeline once replay crossed a switch; a
 * promotion during a restartpoint records the new timeline, a descendant.
 * (Recording the replayed timeline for the end-of-recovery checkpoint made
 * the start after a crash take it for a checkpoint made without the cache.)
 * The redo pointer is compared as well.  History files are read only where
 * the timelines differ.
 */
static bool
same_history(TimeLineID tli, const ControlFileData *control)
{
	XLogRecPtr	redo = control->checkPointCopy.redo;
	TimeLineID	this_tli = control->checkPointCopy.ThisTimeLineID;

	if (tli == this_tli || tli == control->checkPointCopy.PrevTimeLineID)
		return true;
	if (tli > this_tli)
		return tliOfPointInHistory(redo, readTimeLineHistory(tli)) == this_tli;
	return tliOfPointInHistory(redo, readTimeLineHistory(this_tli)) == tli;
}

/*
 * Decide whether a header read from disk describes contents this data
 * directory may use.  Returns NULL if so, else the reason (for the LOG
 * line).  *after_crash says whether the server using it did not stop
 * cleanly, so trust must wait for WAL replay.  moved: the DBA says the data
 * directory's new device and inode are the old directory's.
 */
static char *
header_distrust_reason(const SsdCacheHeader *h, const SsdCacheLayout *layout,
					   const ControlFileData *control, bool moved, bool *after_crash)
{
	pg_crc32c	crc;
	struct stat st;
	uint64		token;
	bool		shut_down = control->state == DB_SHUTDOWNED ||
		control->state == DB_SHUTDOWNED_IN_RECOVERY;

	*after_crash = false;
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
	if (h->data_checksum_version != control->data_checksum_version)
		return "data checksums were enabled or disabled since it was written (pg_checksums rewrites every page)";
	if (!moved && (stat(".", &st) != 0 || (uint64) st.st_dev != h->datadir_dev ||
				   (uint64) st.st_ino != h->datadir_ino))
		return "it was last used with another data directory (a copy of this one, or one moved here)";
	token = read_token_file();
	if (token == 0 || token != h->token)
		return "it was last used with another data directory, or with this one "
			"before it was copied or restored (" SSD_CACHE_TOKEN_FILE " differs)";
	if (stat(BACKUP_LABEL_FILE, &st) == 0)
		return "the data directory was restored from a base backup (backup_label exists)";
	if ((h->redo_seen[0] != control->checkPointCopy.redo &&
		 h->redo_seen[1] != control->checkPointCopy.redo) ||
		!same_history(h->timeline, control))
		return psprintf("the latest checkpoint (redo %X/%X, timeline %u) happened without ssd_cache",
						LSN_FORMAT_ARGS(control->checkPointCopy.redo),
						control->checkPointCopy.ThisTimeLineID);
	/* (ran_without_cache() below tells that reason from the others) */
	/*
	 * Shut down cleanly, but the file did not record the shutdown: a copy
	 * of it, or the file put back, from while the server ran (a standby's
	 * shutdown may make no restartpoint, so the redo pointer alone does not
	 * tell).  The shutdown is recorded before the fresher pages are written
	 * back, so a postmaster killed meanwhile leaves a clean header.
	 */
	if (shut_down && h->state != SSD_HEADER_CLEAN)
		return "the data directory was shut down cleanly, but not with this file (a copy of it, or "
			"the file put back, while the server ran; or the shutdown could not be recorded)";
	if (h->state == SSD_HEADER_CLEAN)
	{
		if (!shut_down || h->redo_seen[0] != control->checkPointCopy.redo)
			return "the data directory is not the one that was shut down cleanly with it";
		return NULL;
	}
	*after_crash = true;
	return NULL;
}

/*
 * Does an intact header name a data directory other than this one: another
 * cluster, or another directory (device and inode) of this one?
 */
static bool
header_names_other_directory(const SsdCacheHeader *h, const ControlFileData *control)
{
	pg_crc32c	crc;
	struct stat st;

	if (memcmp(h->magic, SSD_CACHE_MAGIC, sizeof(h->magic)) != 0)
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, h, offsetof(SsdCacheHeader, crc));
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, h->crc) || h->format != SSD_CACHE_FORMAT)
		return false;
	if (h->system_identifier != control->system_identifier)
		return true;
	return stat(".", &st) == 0 &&
		((uint64) st.st_dev != h->datadir_dev || (uint64) st.st_ino != h->datadir_ino);
}

/* Is the distrust reason a checkpoint the cache did not see? */
static bool
ran_without_cache(const char *why)
{
	return strstr(why, ") happened without ssd_cache") != NULL;
}

/* Take the postmaster's exclusive lock on the file; false if another has it. */
static bool
lock_cache_file(const char *path, char **reason)
{
	if (lock_fd >= 0)
		return true;			/* a crash-restart cycle of this postmaster */
	/* Not inherited by programs the server runs (COPY TO PROGRAM, archive_command). */
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | PG_BINARY, S_IRUSR | S_IWUSR);
	if (lock_fd < 0)
	{
		*reason = psprintf("the cache file \"%s\" could not be opened: %m", path);
		return false;
	}
	if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
	{
		*reason = errno == EWOULDBLOCK ?
			psprintf("the cache file \"%s\" is in use by another server", path) :
			psprintf("the cache file \"%s\" could not be locked: %m", path);
		close(lock_fd);
		lock_fd = -1;
		return false;
	}
	return true;
}

/*
 * Open or create the cache file, size it, and decide whether its directory
 * may be trusted.  Runs in the postmaster before any other process starts
 * (so before WAL redo reads a page).  Never raises an error for the cache's
 * sake: SSD_TRUST_OFF with *reason means "run without the cache".  An
 * untrustworthy file is reset (SSD_TRUST_EMPTY, with *reason), and so is
 * one start_empty asks to forget (lazy cleaning).  *epoch is the current
 * epoch.
 */
static SsdCacheTrust file_startup(const char *path, const SsdCacheLayout *layout,
								  LWLock *header_lock, bool start_empty, uint32 *epoch,
								  char **reason);
static bool wal_written_through(XLogRecPtr bound, TimeLineID tli, TimeLineID now_tli);

SsdCacheTrust
ssd_cache_file_startup(const char *path, const SsdCacheLayout *layout,
					   LWLock *header_lock, bool start_empty, uint32 *epoch, char **reason)
{
	SsdCacheTrust trust = file_startup(path, layout, header_lock, start_empty, epoch, reason);

	if (trust == SSD_TRUST_OFF)
		ssd_cache_file_refuse_if_fresher(*reason);
	return trust;
}

static SsdCacheTrust
file_startup(const char *path, const SsdCacheLayout *layout,
			 LWLock *header_lock, bool start_empty, uint32 *epoch, char **reason)
{
	bool		found;
	int			fd;
	bool		created = false;
	bool		after_crash = false;
	struct stat st;
	ControlFileData *control;
	bool		crc_ok;
	char	   *block;
	SsdCacheHeader h = {{0}};
	char	   *why = NULL;
	int			rc;
	uint64		token;
	uint64		marker_id;
	MarkerState marker;
	bool		moved;
	SsdCacheTrust trust;

	*reason = NULL;
	file_shared = ShmemInitStruct("ssd_cache file", sizeof(SsdCacheFileShared), &found);
	memset(file_shared, 0, sizeof(SsdCacheFileShared));
	slot_written_nonnew = ShmemInitStruct("ssd_cache slot contents", layout->nslots, &found);
	memset(slot_written_nonnew, 0, layout->nslots);
	slot_page_lsn = ShmemInitStruct("ssd_cache slot LSNs", sizeof(XLogRecPtr) * layout->nslots, &found);
	memset(slot_page_lsn, 0, sizeof(XLogRecPtr) * layout->nslots);
	strlcpy(file_shared->path, path, MAXPGPATH);
	file_shared->layout = *layout;
	file_shared->header_lock = header_lock;
	pg_atomic_init_u64(&file_shared->wal_bound, 0);
	pg_atomic_init_u32(&file_shared->verification, SSD_VERIFIED);
	pg_atomic_init_u32(&file_shared->disowned, 0);
	pg_atomic_init_u32(&file_shared->admission_io, ADMISSION_IO_UNKNOWN);
	pg_atomic_init_u64(&file_shared->header_writes, 0);
	pg_atomic_init_u32(&file_shared->fresher_armed, 0);

	/*
	 * After a crash and restart of the server's processes the postmaster
	 * still holds the file it locked when it started: that file is the
	 * cache, whatever the path names now (as for every child, see
	 * open_locked_file).
	 */
	if (lock_fd >= 0 ? fstat(lock_fd, &st) != 0 : stat(path, &st) != 0)
	{
		if (errno != ENOENT)
		{
			*reason = psprintf("ssd_cache.path \"%s\" cannot be examined: %m", path);
			return SSD_TRUST_OFF;
		}
		/* Before creating one: is the missing file holding changes? */
		ssd_cache_file_refuse_if_fresher(psprintf("the cache file \"%s\" does not exist", path));
		created = true;
	}
	else if (!S_ISREG(st.st_mode))
	{
		*reason = psprintf("ssd_cache.path \"%s\" is not a regular file", path);
		return SSD_TRUST_OFF;
	}
	else if ((uint64) st.st_size < layout->file_size)
	{
		/*
		 * Shorter than its layout: slots past the end would read back as
		 * zeros after the file is extended below, and an all-zero page is a
		 * valid (empty) page to PostgreSQL.  Never trust such a file.
		 */
		why = psprintf("it is shorter than a cache of this size (%lld of %llu bytes)",
					   (long long) st.st_size, (unsigned long long) layout->file_size);
	}
	if (!lock_cache_file(path, reason))
	{
		uint64		unused;

		/*
		 * Another server uses the file.  If this data directory is a copy of
		 * that server's, its token came along: drop it, so that a later start
		 * that gets the file cannot pair with it.  Not if this directory
		 * expects fresher pages from the file: the start is refused, and a
		 * refusal changes nothing (once the file can be opened and locked,
		 * say after the other server stopped or the SSD was mounted again,
		 * the token must still pair them).
		 */
		if (read_marker(&unused) == MARKER_NONE)
			(void) durable_unlink(SSD_CACHE_TOKEN_FILE, DEBUG1);
		return SSD_TRUST_OFF;
	}

	fd = open_locked_file();
	if (fd < 0)
	{
		*reason = errno == EINVAL ?
			psprintf("ssd_cache.path \"%s\" is on a file system without O_DIRECT (tmpfs, for one)", path) :
			psprintf("ssd_cache.path \"%s\" could not be opened: %m", path);
		return SSD_TRUST_OFF;
	}

	control = get_controlfile(DataDir, &crc_ok);
	if (!crc_ok)
	{
		*reason = pstrdup("pg_control has an incorrect checksum");
		close(fd);
		return SSD_TRUST_OFF;
	}
	file_shared->startup_checkpoint = control->checkPoint;
	file_shared->startup_tli = control->checkPointCopy.ThisTimeLineID;
	/* As StartupXLOG decides InRecovery: not shut down, or a signal file. */
	file_shared->resets_unlogged =
		(control->state != DB_SHUTDOWNED && control->state != DB_SHUTDOWNED_IN_RECOVERY) ||
		stat(STANDBY_SIGNAL_FILE, &st) == 0 || stat(RECOVERY_SIGNAL_FILE, &st) == 0 ||
		stat(BACKUP_LABEL_FILE, &st) == 0;

	block = aligned_block();
	if (block == NULL)
	{
		*reason = pstrdup("out of memory");
		close(fd);
		return SSD_TRUST_OFF;
	}

	/*
	 * A marker moved or copied here: refuse, or (the DBA says it moved)
	 * trust the file whatever device and inode it last saw.  If this file
	 * last ran with this very directory (its device and inode), the
	 * directory did not move: the marker came from another one.
	 */
	marker = read_marker(&marker_id);
	if (marker == MARKER_FOREIGN && !ssd_cache_data_directory_moved &&
		pg_pread(fd, block, BLCKSZ, 0) == BLCKSZ)
	{
		SsdCacheHeader own;

		memcpy(&own, block, sizeof(own));
		if (stat(".", &st) == 0 && memcmp(own.magic, SSD_CACHE_MAGIC, sizeof(own.magic)) == 0 &&
			own.datadir_dev == (uint64) st.st_dev && own.datadir_ino == (uint64) st.st_ino)
			ereport(FATAL,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("ssd_cache: this data directory has another data directory's write-back marker"),
					 errdetail("\"%s\" was written where another data directory ran in write-back mode, and "
							   "copied here: pg_rewind copies it from its source, and so does a copy of files.  "
							   "The changes it stands for are in that server's SSD cache, not in these files.",
							   SSD_CACHE_FRESHER_FILE),
					 errhint("Make this data directory again from the source, after SELECT ssd_cache_flush() there "
							 "(with ssd_cache.mode = write_through) or a clean stop of it: with pg_basebackup, or "
							 "by copying the files again, or with pg_rewind from a copy of this directory taken "
							 "before the rewind (pg_rewind cannot run on it again: its recovery needs this start).  "
							 "Removing \"%s/%s\" starts it as it is, missing those changes, and a rewound server "
							 "may then not follow its new primary: check it (amcheck) or make it again.",
							 DataDir, SSD_CACHE_FRESHER_FILE)));
	}
	if (marker == MARKER_FOREIGN)
		refuse_if_foreign();
	moved = marker == MARKER_FOREIGN;
	if (ssd_cache_data_directory_moved && !moved)
		ereport(WARNING,
				(errmsg("ssd_cache.data_directory_moved is on, but nothing here was moved"),
				 errdetail("Left on, it would let a copy of this data directory take this cache's changes."),
				 errhint("Turn ssd_cache.data_directory_moved off.")));
	if (created)
		why = "the cache file did not exist";
	else if (why != NULL)
	{
		/* Decided above (truncated file); keep the old epoch for the new one. */
		if (pg_pread(fd, block, BLCKSZ, 0) == BLCKSZ)
			memcpy(&h, block, sizeof(h));
	}
	else if (ssd_cache_fault_enabled("dir_read_error") || pg_pread(fd, block, BLCKSZ, 0) != BLCKSZ)
		why = psprintf("its header could not be read: %m");
	else
	{
		memcpy(&h, block, sizeof(h));
		why = header_distrust_reason(&h, layout, control, moved, &after_crash);
	}

	/*
	 * Page LSNs up to the last run's WAL may have been set by that run's
	 * replay under other settings (see ssd_cache_file_slot_lsn): not known
	 * to this run.  (A garbage header only makes the floor higher.)
	 */
	file_shared->lsn_floor = h.wal_bound;

	/* Write-back: does the data directory expect fresher pages? */
	switch (marker)
	{
		case MARKER_FOREIGN:
			/* refuse_if_foreign() let it through: the DBA says it is ours */
			Assert(moved);
			/* FALLTHROUGH */
		case MARKER_OURS:
			if (why != NULL && ran_without_cache(why))
				ereport(FATAL,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("ssd_cache: this data directory ran without the SSD cache while the cache held changes that are not in its data files: %s",
								why),
						 errdetail("The server was started without ssd_cache (not in shared_preload_libraries, or "
								   "another ssd_cache.path), or an older copy of the cache file was put back, and "
								   "it checkpointed since; or pg_resetwal wrote a new checkpoint: the cache's "
								   "changes can no longer be applied."),
						 errhint("If a newer copy of the cache file holds them, point ssd_cache.path at it.  "
								 "Otherwise restore the database from a backup, or, to start as it is, remove "
								 "\"%s/%s\" and check the database (amcheck): committed changes may be missing.",
								 DataDir, SSD_CACHE_FRESHER_FILE)));
			if (why != NULL)
				ssd_cache_file_refuse_if_fresher(why);
			if (h.fresher_id != 0 && h.fresher_id != marker_id)
				ssd_cache_file_refuse_if_fresher("its pages newer than the disk belong to another write-back period");

			/*
			 * After a crash, fresher pages are served to WAL replay at once,
			 * so whether this data directory's WAL reaches them is decided
			 * now, not once replay is over (as for clean pages): a copy of
			 * an earlier moment would otherwise replay over pages from its
			 * future.
			 */
			if (h.fresher_id != 0 && after_crash &&
				h.wal_bound > control->checkPointCopy.redo &&
				!wal_written_through(h.wal_bound, h.wal_bound_tli,
									 control->checkPointCopy.ThisTimeLineID))
				ssd_cache_file_refuse_if_fresher(psprintf("this data directory's WAL ends before %X/%X, which its pages "
														  "newer than the disk depend on: it is older than the cache "
														  "(restored from a snapshot or copy?)",
														  LSN_FORMAT_ARGS(h.wal_bound)));
			/* h.fresher_id == 0: no fresher page was written after the marker. */
			break;
		case MARKER_NONE:
			if (why == NULL && h.fresher_id != 0)
				why = "it holds pages newer than the data files that this data directory does not expect "
					"(restored from a backup, or " SSD_CACHE_FRESHER_FILE " was removed to accept their loss)";
			break;
	}

	/*
	 * A file whose valid header names another data directory, and says some
	 * of its slots are newer than that directory's files, holds that
	 * directory's committed changes: emptying it would lose them.  (A
	 * same-host standby made with pg_basebackup copies postgresql.conf and
	 * so ssd_cache.path; started while the owner is down after a crash, it
	 * gets the lock.)  Leave the file as it is, let go of it, and run
	 * without the cache.
	 */
	if (why != NULL && marker == MARKER_NONE && h.fresher_id != 0 &&
		header_names_other_directory(&h, control))
	{
		*reason = psprintf("the cache file \"%s\" holds changes of another data directory that are not in "
						   "that directory's files yet (%s); it is left as it is for that directory "
						   "(give this server its own ssd_cache.path; if that directory is gone for good, "
						   "removing the file lets this one use it)",
						   path, why);
		free(block);
		close(fd);
		pfree(control);
		close(lock_fd);
		lock_fd = -1;
		return SSD_TRUST_OFF;
	}

	/*
	 * Reserve the whole file, so a full disk is a clear message here; only
	 * now that the file is to be used or reset.  A refused start must leave
	 * it as it was: a file shorter than its layout, extended with zeros and
	 * found full-length by the next start, would serve zeros for the slots
	 * past its old end.
	 */
	rc = posix_fallocate(fd, 0, layout->file_size);
	if (rc != 0)
	{
		errno = rc;
		*reason = psprintf("%llu MB could not be allocated for \"%s\": %m",
						   (unsigned long long) (layout->file_size >> 20), path);
		free(block);
		close(fd);
		pfree(control);
		return SSD_TRUST_OFF;
	}

	/*
	 * Lazy cleaning is the volatile baseline: it starts empty, unless pages
	 * a write-back period made fresher are still to be written back.
	 */
	if (why == NULL && start_empty && h.fresher_id == 0)
		why = "ssd_cache.mode = lazy_cleaning keeps no page across restarts";

	if (why == NULL)
	{
		file_shared->header = h;
		trust = after_crash ? SSD_TRUST_AFTER_REPLAY : SSD_TRUST_FULL;
		if (h.fresher_id != 0)
			pg_atomic_write_u32(&file_shared->fresher_armed, 1);
	}
	else
	{
		uint64		p;
		uint32		old_epoch = created ? 0 : h.epoch;
		bool		ok = true;

		/* A zeroed directory and a new epoch: nothing old can look valid. */
		memset(block, 0, BLCKSZ);
		for (p = 0; ok && p < layout->slots_offset - layout->dir_offset; p += BLCKSZ)
			ok = pg_pwrite(fd, block, BLCKSZ, layout->dir_offset + p) == BLCKSZ;
		if (!ok)
		{
			*reason = psprintf("its directory could not be initialized: %m");
			free(block);
			close(fd);
			return SSD_TRUST_OFF;
		}
		memset(&h, 0, sizeof(h));
		memcpy(h.magic, SSD_CACHE_MAGIC, sizeof(h.magic));
		h.format = SSD_CACHE_FORMAT;
		h.blcksz = BLCKSZ;
		h.system_identifier = control->system_identifier;
		h.nslots = layout->nslots;
		h.dir_offset = layout->dir_offset;
		h.slots_offset = layout->slots_offset;
		h.epoch = old_epoch + 1;
		h.data_checksum_version = control->data_checksum_version;
		h.timeline = control->checkPointCopy.ThisTimeLineID;
		h.redo_seen[0] = control->checkPointCopy.redo;
		h.redo_seen[1] = InvalidXLogRecPtr;
		h.wal_bound = InvalidXLogRecPtr;
		file_shared->header = h;
		*reason = why;
		trust = SSD_TRUST_EMPTY;
	}
	free(block);

	if (trust == SSD_TRUST_AFTER_REPLAY)
	{
		file_shared->verify_bound = h.wal_bound;
		file_shared->verify_tli = h.wal_bound_tli;
		pg_atomic_write_u32(&file_shared->verification, SSD_VERIFY_PENDING);
	}

	/* Record the checkpoint recovery will start from as one we saw. */
	if (file_shared->header.redo_seen[0] != control->checkPointCopy.redo)
	{
		file_shared->header.redo_seen[1] = file_shared->header.redo_seen[0];
		file_shared->header.redo_seen[0] = control->checkPointCopy.redo;
	}
	pfree(control);

	/*
	 * Pair the file with this data directory for this run: a new token in
	 * both, and the header says RUNNING until a clean shutdown.  Header
	 * first: a crash between the two writes leaves them different, which
	 * only costs the cache's contents.
	 */
	do
	{
		if (!pg_strong_random(&token, sizeof(token)))
			token = (uint64) random() << 32 | (uint64) random();
	} while (token == 0);
	file_shared->header.token = token;
	file_shared->header.state = SSD_HEADER_RUNNING;
	if (stat(".", &st) == 0)
	{
		file_shared->header.datadir_dev = (uint64) st.st_dev;
		file_shared->header.datadir_ino = (uint64) st.st_ino;
	}
	if (!write_header(fd, &file_shared->header) || !write_token_file(token))
	{
		*reason = psprintf("its header or %s could not be written: %m", SSD_CACHE_TOKEN_FILE);
		close(fd);
		return SSD_TRUST_OFF;
	}
	pg_atomic_write_u64(&file_shared->wal_bound, file_shared->header.wal_bound);
	close(fd);

	/* A marker written just before a crash, with no fresher slot after it. */
	if (file_shared->header.fresher_id == 0)
		(void) durable_unlink(SSD_CACHE_FRESHER_FILE, DEBUG1);
	else if (moved)
	{
		/* Ours from now on: its device and inode are the directory's. */
		if (!write_marker(file_shared->header.fresher_id))
			ereport(FATAL,
					(errcode_for_file_access(),
					 errmsg("ssd_cache: could not rewrite \"%s\" for the moved data directory: %m",
							SSD_CACHE_FRESHER_FILE)));
		ereport(LOG,
				(errmsg("ssd_cache: the data directory was moved (ssd_cache.data_directory_moved); "
						"its pages newer than the disk are served from the cache"),
				 errhint("Turn ssd_cache.data_directory_moved off again.")));
	}

	*epoch = file_shared->header.epoch;
	return trust;
}

/* Write the header from a running server; false (errno set) on failure. */
static bool
write_header_locked(void)
{
	Assert(LWLockHeldByMeInMode(file_shared->header_lock, LW_EXCLUSIVE));
	if (pg_atomic_read_u32(&file_shared->disowned))
		return true;			/* nothing may make the file valid again */
	pg_atomic_fetch_add_u64(&file_shared->header_writes, 1);
	return write_header(ssd_cache_file_fd(), &file_shared->header);
}

/*
 * Before the first slot fresher than the disk is written: the marker in the
 * data directory, then the same id in the header, both durable (see
 * "Write-back").  The caller (ssd_cache_directory.c) serializes this with
 * ssd_cache_file_disarm_fresher.  False (errno set) if either write failed;
 * then no slot may become fresher.
 */
bool
ssd_cache_file_arm_fresher(void)
{
	bool		ok = true;
	uint64		id;

	if (pg_atomic_read_u32(&file_shared->fresher_armed))
		return true;
	LWLockAcquire(file_shared->header_lock, LW_EXCLUSIVE);
	if (file_shared->header.fresher_id == 0)
	{
		do
		{
			if (!pg_strong_random(&id, sizeof(id)))
				id = (uint64) random() << 32 | (uint64) random();
		} while (id == 0);
		ok = write_marker(id);
		if (ok)
		{
			file_shared->header.fresher_id = id;
			ok = write_header_locked();
			if (!ok)
				file_shared->header.fresher_id = 0;
		}
	}
	if (ok)
		pg_atomic_write_u32(&file_shared->fresher_armed, 1);
	LWLockRelease(file_shared->header_lock);
	return ok;
}

/*
 * No slot is fresher than the disk any more (all written back): clear the
 * header's id, then remove the marker.  A crash in between leaves a marker
 * the next start removes (the header has no id).  False on failure; the
 * marker then stays, which is the safe side.
 */
bool
ssd_cache_file_disarm_fresher(void)
{
	bool		ok = true;

	LWLockAcquire(file_shared->header_lock, LW_EXCLUSIVE);
	if (file_shared->header.fresher_id != 0)
	{
		file_shared->header.fresher_id = 0;
		ok = write_header_locked();
		if (ok)
			ok = durable_unlink(SSD_CACHE_FRESHER_FILE, LOG) == 0 || errno == ENOENT;
	}
	if (ok)
		pg_atomic_write_u32(&file_shared->fresher_armed, 0);
	LWLockRelease(file_shared->header_lock);
	return ok;
}

/* Header writes since the server started (checkpoints, wal_bound). */
int64
ssd_cache_file_header_writes(void)
{
	return file_shared ? (int64) pg_atomic_read_u64(&file_shared->header_writes) : 0;
}

/*
 * Called by the checkpointer during a checkpoint's sync phase, before the
 * checkpoint can complete: remember its redo pointer as one the cache saw.
 * Returns false if the header could not be written; the caller gives up on
 * the cache (the next start would not trust it anyway: it never heard of
 * this checkpoint).
 */
bool
ssd_cache_file_note_checkpoint(XLogRecPtr redo)
{
	SsdCacheHeader *h = &file_shared->header;
	bool		ok = true;

	if (redo == InvalidXLogRecPtr)
		return true;
	LWLockAcquire(file_shared->header_lock, LW_EXCLUSIVE);
	if (redo != h->redo_seen[0])
	{
		h->redo_seen[1] = h->redo_seen[0];
		h->redo_seen[0] = redo;
		/*
		 * The timeline this process can see: the insertion timeline once
		 * recovery is over, else the replayed one (which the insertion
		 * timeline may not be asked for).  pg_control may record another
		 * for the same checkpoint; see same_history().
		 */
		if (!RecoveryInProgress())
			h->timeline = GetWALInsertionTimeLine();
		else
			(void) GetXLogReplayRecPtr(&h->timeline);
		ok = write_header_locked();
	}
	LWLockRelease(file_shared->header_lock);
	return ok;
}

/*
 * Checkpoint markers.  The checkpointer reaches the MD sync handler (where
 * ssd_cache records each checkpoint) only for files it has to fsync, so a
 * checkpoint with nothing to sync (an idle server's, a restartpoint of an
 * idle standby) would go unrecorded, and the next start would take it for
 * one that happened without the cache.  So a sync request for a file that
 * does not exist (relfilenode 0: no relation has it) is kept pending at all
 * times: the wrapped sync handler recognizes it, records the checkpoint,
 * syncs nothing, and registers the other of two markers for the next
 * checkpoint (the same one would be removed as done right after).  The
 * admission worker registers one after startup, when nothing is pending.
 * With fsync = off the checkpointer calls no sync handler at all: then no
 * checkpoint is recorded and a crash always starts the cache empty.
 */
static void
marker_tag(FileTag *tag, uint32 which)
{
	memset(tag, 0, sizeof(FileTag));
	tag->handler = SYNC_HANDLER_MD;
	tag->forknum = MAIN_FORKNUM;
	tag->segno = 0xFFFFFFFF - which;
}

/* Make sure a marker is pending (the admission worker, every loop). */
void
ssd_cache_file_register_marker(void)
{
	FileTag		tag;

	marker_tag(&tag, 0);
	(void) RegisterSyncRequest(&tag, SYNC_REQUEST, false);
}

/*
 * Is ftag a marker?  If so (the checkpointer's sync phase), register the
 * other one, for the next checkpoint.
 */
bool
ssd_cache_file_is_marker(const FileTag *ftag)
{
	FileTag		tag;
	uint32		which;

	for (which = 0; which < 2; which++)
	{
		marker_tag(&tag, which);
		if (memcmp(&tag, ftag, sizeof(FileTag)) == 0)
		{
			marker_tag(&tag, 1 - which);
			(void) RegisterSyncRequest(&tag, SYNC_REQUEST, false);
			return true;
		}
	}
	return false;
}

/* Does pg_control say the server was shut down cleanly (postmaster exit)? */
bool
ssd_cache_file_shut_down_cleanly(void)
{
	ControlFileData *control;
	bool		crc_ok;
	bool		clean;

	control = get_controlfile(DataDir, &crc_ok);
	clean = crc_ok && (control->state == DB_SHUTDOWNED ||
					   control->state == DB_SHUTDOWNED_IN_RECOVERY);
	pfree(control);
	return clean;
}

/*
 * Called in the postmaster as it exits: after a clean shutdown, record the
 * shutdown checkpoint and the CLEAN state, so the next start trusts the
 * cache at once.  fresher_left: some page is still fresher than the disk
 * (its write-back failed), so the header keeps its write-back id.
 */
void
ssd_cache_file_note_shutdown(bool fresher_left)
{
	ControlFileData *control;
	bool		crc_ok;
	SsdCacheHeader *h = &file_shared->header;
	int			fd;

	if (pg_atomic_read_u32(&file_shared->disowned))
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
	h->state = SSD_HEADER_CLEAN;
	if (!fresher_left)
		h->fresher_id = 0;
	fd = open_locked_file();
	if (!write_header(fd, h))
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("ssd_cache: could not record the clean shutdown in \"%s\": %m",
						file_shared->path),
				 errdetail("The next start will not trust the file: it starts empty, or is refused while it holds pages newer than the data files.")));
	else if (h->fresher_id == 0)
		(void) durable_unlink(SSD_CACHE_FRESHER_FILE, DEBUG1);
	if (fd >= 0)
		close(fd);
}

/*
 * Before a slot is written: make sure the header's wal_bound covers the WAL
 * the page may depend on (see "Trust").  One header write covers every slot
 * write that comes while the WAL does not move.  Returns false if the
 * header could not be written: the slot must not be written.
 */
bool
ssd_cache_file_cover_wal(void)
{
	TimeLineID	tli;
	XLogRecPtr	ptr;
	bool		ok = true;

	ptr = RecoveryInProgress() ? GetXLogReplayRecPtr(&tli) : GetFlushRecPtr(&tli);
	if (ptr <= pg_atomic_read_u64(&file_shared->wal_bound))
		return true;
	LWLockAcquire(file_shared->header_lock, LW_EXCLUSIVE);
	if (ptr > file_shared->header.wal_bound)
	{
		/* Cover the newest position: later writers need no header write. */
		ptr = RecoveryInProgress() ? GetXLogReplayRecPtr(&tli) : GetFlushRecPtr(&tli);
		file_shared->header.wal_bound = ptr;
		file_shared->header.wal_bound_tli = tli;
		ok = write_header_locked();
		if (ok)
			pg_atomic_write_u64(&file_shared->wal_bound, ptr);
	}
	LWLockRelease(file_shared->header_lock);
	return ok;
}

/* Is "ptr" of timeline "tli" part of the history of timeline "current"? */
static bool
in_history(XLogRecPtr ptr, TimeLineID tli, TimeLineID current)
{
	List	   *history;
	bool		result;

	if (tli == current)
		return true;
	history = readTimeLineHistory(current);
	result = tliOfPointInHistory(ptr, history) == tli;
	list_free_deep(history);
	return result;
}

/*
 * Were the WAL bytes up to "bound" written to this data directory's pg_wal?
 * True if the WAL page holding bound - 1 is there with its own address in
 * its header.  wal_bound is the WAL flush pointer, and the WAL writer
 * flushes whole pages: the flush pointer may fall inside a record whose
 * end never reached the disk before a crash, so replay of the very
 * directory that crashed can end short of wal_bound.  No cached page
 * depends on such a record (a page's LSN and the commits behind its hint
 * bits are ends of flushed records).  A copy of an earlier moment (a
 * snapshot) never has that page: its WAL stops earlier, and a recycled
 * segment carries another address.
 */
static bool
wal_page_in_file(const char *fname, XLogRecPtr last)
{
	char		path[MAXPGPATH];
	XLogPageHeaderData hdr;
	off_t		offset;
	int			fd;
	bool		ok;

	/* Plain system calls: the postmaster asks too. */
	snprintf(path, sizeof(path), XLOGDIR "/%s", fname);
	fd = open(path, O_RDONLY | PG_BINARY, 0);
	if (fd < 0)
		return false;
	offset = XLogSegmentOffset(last, wal_segment_size);
	offset -= offset % XLOG_BLCKSZ;
	ok = pg_pread(fd, &hdr, sizeof(hdr), offset) == sizeof(hdr);
	close(fd);
	return ok && hdr.xlp_magic == XLOG_PAGE_MAGIC &&
		hdr.xlp_pageaddr == last - (last % XLOG_BLCKSZ);
}

/*
 * The segment holding bound - 1 is looked for on its timeline, as the
 * ".partial" file a promotion with archiving leaves of it, and on the
 * current timeline "now_tli", whose first segment starts with a copy of the
 * old one up to the switch.
 */
static bool
wal_written_through(XLogRecPtr bound, TimeLineID tli, TimeLineID now_tli)
{
	XLogRecPtr	last = bound - 1;
	XLogSegNo	segno;
	char		fname[MAXFNAMELEN + 16];

	if (bound == InvalidXLogRecPtr)
		return true;
	XLByteToSeg(last, segno, wal_segment_size);
	XLogFileName(fname, tli, segno, wal_segment_size);
	if (wal_page_in_file(fname, last))
		return true;
	strlcat(fname, ".partial", sizeof(fname));
	if (wal_page_in_file(fname, last))
		return true;
	if (now_tli == tli)
		return false;
	XLogFileName(fname, now_tli, segno, wal_segment_size);
	return wal_page_in_file(fname, last);
}

/*
 * After a crash: may the loaded contents be served yet?  They may once the
 * WAL replayed in this data directory has reached the header's wal_bound on
 * the same timeline history.  If recovery is over (or went down another
 * timeline) without that, they never may: SSD_VERIFY_REFUTED, once, to the
 * caller that must then discard them and call ssd_cache_file_end_discard.
 */
SsdCacheVerification
ssd_cache_file_verification(void)
{
	uint32		state = pg_atomic_read_u32(&file_shared->verification);
	TimeLineID	tli;
	XLogRecPtr	end;
	bool		recovering;

	if (state != SSD_VERIFY_PENDING)
		return state == SSD_VERIFIED ? SSD_VERIFIED : SSD_VERIFY_PENDING;

	/*
	 * No bound: no slot was written since the file was made (a start that
	 * failed right after creating it), so no page depends on any WAL.
	 */
	if (file_shared->verify_bound == InvalidXLogRecPtr)
	{
		pg_atomic_write_u32(&file_shared->verification, SSD_VERIFIED);
		return SSD_VERIFIED;
	}

	recovering = RecoveryInProgress();
	end = GetXLogReplayRecPtr(&tli);
	if (end == InvalidXLogRecPtr)
	{
		/* Nothing was replayed: the WAL ends with the startup checkpoint. */
		end = file_shared->startup_checkpoint;
		tli = file_shared->startup_tli;
	}
	if (end >= file_shared->verify_bound)
	{
		if (in_history(file_shared->verify_bound, file_shared->verify_tli, tli))
		{
			pg_atomic_write_u32(&file_shared->verification, SSD_VERIFIED);
			ereport(LOG,
					(errmsg("ssd_cache: WAL replay reached %X/%X, the newest WAL the cache depends on; serving the cache",
							LSN_FORMAT_ARGS(file_shared->verify_bound))));
			return SSD_VERIFIED;
		}
	}
	else if (recovering)
		return SSD_VERIFY_PENDING;
	else if (in_history(end, tli, tli) &&
			 wal_written_through(file_shared->verify_bound, file_shared->verify_tli, tli))
	{
		pg_atomic_write_u32(&file_shared->verification, SSD_VERIFIED);
		ereport(LOG,
				(errmsg("ssd_cache: WAL replay ended at %X/%X, in the last WAL page written before the crash (%X/%X); serving the cache",
						LSN_FORMAT_ARGS(end), LSN_FORMAT_ARGS(file_shared->verify_bound))));
		return SSD_VERIFIED;
	}

	/* Decided against: exactly one caller gets to discard. */
	if (pg_atomic_compare_exchange_u32(&file_shared->verification, &state,
									   SSD_VERIFY_REFUTED))
	{
		ereport(WARNING,
				(errmsg("ssd_cache: emptying the cache: the WAL of this data directory ends at %X/%X on timeline %u, "
						"before %X/%X on timeline %u, the newest WAL the cached pages depend on",
						LSN_FORMAT_ARGS(end), tli,
						LSN_FORMAT_ARGS(file_shared->verify_bound), file_shared->verify_tli),
				 errdetail("The data directory was restored, copied or rewound while the cache file was kept.")));
		return SSD_VERIFY_REFUTED;
	}
	return SSD_VERIFY_PENDING;
}

/*
 * The caller discarded every cached page after SSD_VERIFY_REFUTED.  The
 * header's wal_bound stays where the refuted contents put it: lowering it
 * could let a slot written meanwhile (against the old bound, without a
 * header write) depend on WAL past the new one.  Until this data
 * directory's WAL passes the old bound, a crash empties the cache again,
 * which costs warmth, never correctness.
 */
void
ssd_cache_file_end_discard(void)
{
	pg_atomic_write_u32(&file_shared->verification, SSD_VERIFIED);
}

/* Is verification after a crash still under way?  (Decides nothing.) */
bool
ssd_cache_file_verifying(void)
{
	return pg_atomic_read_u32(&file_shared->verification) != SSD_VERIFIED;
}

/*
 * Give up on the file for good: no later start may trust it.  Remove the
 * data directory's token (the data directory is on healthy storage, so this
 * works even when the SSD refuses every write) and destroy the header too,
 * if the SSD lets us.  Never raises an error: this runs inside critical
 * sections (15.x truncates relations in one).
 */
void
ssd_cache_file_disown(void)
{
	char	   *block;
	int			fd;
	bool		header_gone = false;
	bool		token_gone;

	if (file_shared == NULL || pg_atomic_exchange_u32(&file_shared->disowned, 1) != 0)
		return;
	token_gone = unlink(SSD_CACHE_TOKEN_FILE) == 0 || errno == ENOENT;
	if (token_gone)
		token_gone = fsync_fname_ext(".", true, false, LOG) == 0;
	fd = ssd_cache_file_fd();
	block = aligned_block();
	if (fd >= 0 && block != NULL && !ssd_cache_fault_enabled("header_write_error"))
	{
		memset(block, 0, BLCKSZ);
		header_gone = pg_pwrite(fd, block, BLCKSZ, 0) == BLCKSZ;
	}
	if (block)
		free(block);
	if (!token_gone && !header_gone)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("ssd_cache could neither remove %s nor destroy the header of \"%s\": %m",
						SSD_CACHE_TOKEN_FILE, file_shared->path),
				 errhint("Delete the cache file before the next start of the server.")));
}

/*
 * Open the file the postmaster locked, for direct and durable I/O.  Not by
 * its path: a file moved or copied over the path while the server runs
 * (cp and mv, rsync) would give processes started since another file, with
 * other contents, than the others and the lock have.  The postmaster's
 * locked descriptor is inherited by every child, and opening it again
 * through /proc gives a descriptor of that very file with flags of our own.
 * Without /proc (or where it may not be read), the path is opened and must
 * still name that file.
 */
static int
open_locked_file(void)
{
	char		proc_path[64];
	struct stat locked,
				opened;
	int			fd;

	if (lock_fd < 0)
	{
		errno = EBADF;			/* the cache let go of the file */
		return -1;
	}
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", lock_fd);
	/* O_CLOEXEC: not to programs the server runs (COPY TO PROGRAM, archiving) */
	fd = BasicOpenFile(proc_path, O_RDWR | O_DIRECT | O_DSYNC | O_CLOEXEC | PG_BINARY);
	if (fd >= 0 || errno == EINVAL)
		return fd;				/* (EINVAL: no O_DIRECT there, the caller says so) */
	fd = BasicOpenFile(file_shared->path, O_RDWR | O_DIRECT | O_DSYNC | O_CLOEXEC | PG_BINARY);
	if (fd < 0)
		return -1;
	if (fstat(lock_fd, &locked) != 0 || fstat(fd, &opened) != 0 ||
		locked.st_dev != opened.st_dev || locked.st_ino != opened.st_ino)
	{
		close(fd);
		errno = ESTALE;			/* the path names another file now */
		return -1;
	}
	return fd;
}

/*
 * This process's descriptor of the cache file, opened on first use; -1
 * with errno set if it cannot be opened (the caller treats that as an SSD
 * error: never an ERROR, which could strand a pinned slot).
 */
int
ssd_cache_file_fd(void)
{
	if (cache_fd < 0)
	{
		if (ssd_cache_fault_enabled("cache_open_error"))
		{
			errno = EIO;
			return -1;
		}
		cache_fd = open_locked_file();
		if (cache_fd < 0)
			return -1;
		ReserveExternalFD();
	}
	return cache_fd;
}

/*
 * Close this process's descriptor.  The postmaster does so after reading
 * the directory, so that every child opens its own (and a failure to open
 * is each process's own, as the fault point cache_open_error tests).
 */
void
ssd_cache_file_close(void)
{
	if (cache_fd >= 0)
	{
		close(cache_fd);
		ReleaseExternalFD();
		cache_fd = -1;
	}
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
	if (fd < 0)
		return false;
	pgstat_report_wait_start(wait_event);
	n = is_write ? pg_pwrite(fd, buf, len, offset) : pg_pread(fd, buf, len, offset);
	pgstat_report_wait_end();
	if (n == (ssize_t) len)
		return true;
	if (n >= 0)
		errno = EIO;			/* short transfer: the file was truncated */
	return false;
}

/* Shared memory of this file: the header's copy and the slots' contents. */
Size
ssd_cache_file_shmem_size(uint64 nslots)
{
	Size		size = CACHELINEALIGN(sizeof(SsdCacheFileShared));

	size = add_size(size, CACHELINEALIGN(nslots));
	return add_size(size, CACHELINEALIGN(mul_size(nslots, sizeof(XLogRecPtr))));
}

/*
 * The LSN of the page last written to slot; InvalidXLogRecPtr: unknown.  A
 * restartpoint leaves a fresher page in the cache when its LSN is past the
 * redo point, trusting that the change that set it logged a full-page
 * image.  An LSN from an earlier run may have been set by that run's replay
 * without one (data checksums off, wal_log_hints on there): only LSNs past
 * the last run's WAL bound count.
 */
XLogRecPtr
ssd_cache_file_slot_lsn(uint64 slot)
{
	return slot_page_lsn[slot];
}

/* Before a slot is written with page: its old contents are no promise. */
static void
slot_write_starts(uint64 slot)
{
	slot_written_nonnew[slot] = 0;
	slot_page_lsn[slot] = InvalidXLogRecPtr;
	pg_memory_barrier();
}

/* After the write of page to slot returned. */
static void
slot_write_ended(uint64 slot, const char *page, bool ok)
{
	pg_memory_barrier();
	slot_written_nonnew[slot] = ok && !PageIsNew((Page) page);
	slot_page_lsn[slot] = ok && !PageIsNew((Page) page) &&
		PageGetLSN((Page) page) > file_shared->lsn_floor ? PageGetLSN((Page) page) : InvalidXLogRecPtr;
}

/*
 * A slot read fails (errno ENODATA) when it returns a new page where this
 * server wrote another: see slot_written_nonnew.
 */
bool
ssd_cache_file_read_slot(uint64 slot, char *aligned_buf)
{
	if (!cache_io(false, aligned_buf, BLCKSZ,
				  file_shared->layout.slots_offset + slot * BLCKSZ,
				  WAIT_EVENT_DATA_FILE_READ, "slot_read_error"))
		return false;
	pg_memory_barrier();
	if (slot_written_nonnew[slot] && PageIsNew((Page) aligned_buf))
	{
		errno = ENODATA;
		return false;
	}
	return true;
}

bool
ssd_cache_file_write_slot(uint64 slot, const char *aligned_buf)
{
	bool		ok;

	slot_write_starts(slot);
	ok = cache_io(true, unconstify(char *, aligned_buf), BLCKSZ,
				  file_shared->layout.slots_offset + slot * BLCKSZ,
				  WAIT_EVENT_DATA_FILE_WRITE, "slot_write_error");
	slot_write_ended(slot, aligned_buf, ok);
	return ok;
}

bool
ssd_cache_file_read_dir(uint64 first_page, uint64 npages, char *aligned_buf)
{
	return cache_io(false, aligned_buf, npages * SSD_DIR_PAGE_SIZE,
					file_shared->layout.dir_offset + first_page * SSD_DIR_PAGE_SIZE,
					WAIT_EVENT_DATA_FILE_READ, "dir_read_error");
}

/* Write npages consecutive directory pages in one durable write. */
bool
ssd_cache_file_write_dir_pages(uint64 first_page, uint64 npages, const char *aligned_buf)
{
	return cache_io(true, unconstify(char *, aligned_buf), npages * SSD_DIR_PAGE_SIZE,
					file_shared->layout.dir_offset + first_page * SSD_DIR_PAGE_SIZE,
					WAIT_EVENT_DATA_FILE_WRITE, "dir_write_error");
}

/* How admissions write: "io_uring", "synchronous", or NULL before any. */
const char *
ssd_cache_file_admission_io(void)
{
	if (file_shared == NULL)
		return NULL;
	switch ((AdmissionIo) pg_atomic_read_u32(&file_shared->admission_io))
	{
		case ADMISSION_IO_URING:
			return "io_uring";
		case ADMISSION_IO_SYNCHRONOUS:
			return "synchronous";
		case ADMISSION_IO_UNKNOWN:
			break;
	}
	return NULL;
}

/* The admission worker's ring, or NULL when io_uring is unavailable. */
static SsdkitUring *ring = NULL;
static bool ring_refused = false;

static SsdkitUring *
admission_ring(void)
{
	MemoryContext old = CurrentMemoryContext;

	if (ring != NULL || ring_refused)
		return ring;
	PG_TRY();
	{
		if (ssd_cache_fault_enabled("io_uring_unavailable"))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("io_uring is unavailable (fault injection)")));
		MemoryContextSwitchTo(TopMemoryContext);
		ring = ssdkit_uring_create(SSD_CACHE_WRITE_BATCH);
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(old);
		edata = CopyErrorData();
		FlushErrorState();
		ring_refused = true;
		ereport(WARNING,
				(errmsg("ssd_cache: admission writes pages one at a time: %s", edata->message),
				 errhint("Allow io_uring (kernel.io_uring_disabled, the container's seccomp profile) "
						 "for faster admission.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	pg_atomic_write_u32(&file_shared->admission_io,
						ring ? ADMISSION_IO_URING : ADMISSION_IO_SYNCHRONOUS);
	return ring;
}

/*
 * The admission worker, at start (before it takes any lock): its io_uring
 * for batches of writes, or the reason it writes one at a time.
 */
void
ssd_cache_file_prepare_batches(void)
{
	(void) admission_ring();
}

/*
 * Write n blocks of len bytes at offsets (a negative offset: none), all in
 * flight together in the admission worker (its batches; every write is
 * O_DSYNC, so the device completes them in parallel and each is durable
 * when reaped), one after the other elsewhere or where io_uring is
 * refused.  ok[i] says whether block i was written; failures leave errno in
 * failed_errno.
 */
static void
write_blocks(int n, const int64 *offsets, char *const *bufs, Size len, bool *ok,
			 int *failed_errno, const char *fault)
{
	SsdkitUringCompletion done[SSD_CACHE_WRITE_BATCH];
	int			i,
				pending = 0,
				nwrites = 0;
	int			fd;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	*failed_errno = 0;
	for (i = 0; i < n; i++)
	{
		ok[i] = false;
		nwrites += offsets[i] >= 0;
	}
	if (ssd_cache_fault_enabled(fault))
	{
		*failed_errno = EIO;
		return;
	}
	fd = ssd_cache_file_fd();
	if (fd < 0)
	{
		*failed_errno = errno;
		return;
	}
	if (nwrites > 1 && ring != NULL)
	{
		MemoryContext old = CurrentMemoryContext;
		volatile bool written = false;
		int			holdoff = InterruptHoldoffCount;	/* callers may hold LWLocks */

		/*
		 * The ring's own errors (a submission the kernel refuses) must not
		 * strand the batch: write the blocks one at a time instead.
		 */
		PG_TRY();
		{
			for (i = 0; i < n; i++)
			{
				if (offsets[i] < 0)
					continue;
				if (!ssdkit_uring_queue_write(ring, fd, bufs[i], len, (uint64) offsets[i], (uint64) i))
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

					ok[k] = done[i].res == (int) len;
					if (!ok[k])
						*failed_errno = done[i].res < 0 ? -done[i].res : EIO;
				}
				pending -= got;
			}
			written = true;
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(old);
			InterruptHoldoffCount = holdoff;
			EmitErrorReport();
			FlushErrorState();
		}
		PG_END_TRY();
		if (written)
			return;

		/*
		 * The ring failed mid-batch: drop it (its memory context waits for
		 * what is in flight), so no completion of this batch can be taken for
		 * one of the next, and write synchronously from now on.
		 */
		ssdkit_uring_destroy(ring);
		ring = NULL;
		ring_refused = true;
		pg_atomic_write_u32(&file_shared->admission_io, ADMISSION_IO_SYNCHRONOUS);
	}
	for (i = 0; i < n; i++)
		if (offsets[i] >= 0)
		{
			ok[i] = cache_io(true, bufs[i], len, (uint64) offsets[i],
							 WAIT_EVENT_DATA_FILE_WRITE, fault);
			if (!ok[i])
				*failed_errno = errno;
		}
}

/* Write several slots at once (slots[i] < 0: none); see write_blocks. */
void
ssd_cache_file_write_slots(int n, const int32 *slots, char *const *bufs, bool *ok,
						   int *failed_errno)
{
	int64		offsets[SSD_CACHE_WRITE_BATCH] = {0};
	int			i;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	for (i = 0; i < n; i++)
	{
		offsets[i] = slots[i] < 0 ? -1 :
			(int64) (file_shared->layout.slots_offset + (uint64) slots[i] * BLCKSZ);
		if (slots[i] >= 0)
			slot_write_starts(slots[i]);
	}
	write_blocks(n, offsets, bufs, BLCKSZ, ok, failed_errno, "slot_write_error");
	for (i = 0; i < n; i++)
		if (slots[i] >= 0)
			slot_write_ended(slots[i], bufs[i], ok[i]);
}

/*
 * Write n single directory pages (not necessarily adjacent) at once; see
 * write_blocks.  False (errno set) if one failed.
 */
bool
ssd_cache_file_write_dir_page_set(int n, const uint64 *pages, char *const *bufs)
{
	int64		offsets[SSD_CACHE_WRITE_BATCH] = {0};
	bool		ok[SSD_CACHE_WRITE_BATCH];
	int			failed_errno,
				i;

	Assert(n <= SSD_CACHE_WRITE_BATCH);
	for (i = 0; i < n; i++)
		offsets[i] = (int64) (file_shared->layout.dir_offset + pages[i] * SSD_DIR_PAGE_SIZE);
	write_blocks(n, offsets, bufs, SSD_DIR_PAGE_SIZE, ok, &failed_errno, "dir_write_error");
	for (i = 0; i < n; i++)
		if (!ok[i])
		{
			errno = failed_errno;
			return false;
		}
	return true;
}
