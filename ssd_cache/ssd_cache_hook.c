/*-------------------------------------------------------------------------
 *
 * ssd_cache_hook.c
 *	  Wrap PostgreSQL 15's storage-manager (smgrsw[]) and sync-handler
 *	  (syncsw[]) dispatch tables at postmaster start.
 *
 * Stock PostgreSQL 15 has no hook below the buffer manager, but smgr.c and
 * sync.c dispatch through two static const tables of function pointers.  In
 * Debian's PIE executable both live in the RELRO segment: filled in by the
 * dynamic loader, then made read-only.  When the postmaster loads us through
 * shared_preload_libraries, before any child process exists, we find each
 * table by its exact contents (the addresses of the md.c and SLRU functions,
 * which the executable exports), make its page writable for the moment it
 * takes to store our wrappers, and protect it again.  Every process forked
 * afterwards inherits the wrapped tables.
 *
 * Fail safe: unless the server is a release whose storage-manager
 * signatures were verified (below) and each table is found exactly once
 * with exactly the PostgreSQL 15 layout, nothing is hooked and the server
 * runs without the cache, with a WARNING saying why.  There is no
 * half-hooked mode.
 *
 * Releases.  15.11 changed mdtruncate() (and f_smgr's smgr_truncate) to
 * take the relation's old size as well.  The wrappers for both signatures
 * are built, and the one matching the running server is chosen at load
 * time from server_version_num, for the releases whose layout was checked:
 * 15.0-15.10 (three arguments; the official binaries of each call
 * mdnblocks() inside mdtruncate) and 15.12-15.20 (four; the 15.18 source,
 * the 15.20 headers, the binaries of the others).  15.11 and releases
 * after 15.20 were not checked: the cache stays off there.  The other md.c
 * signatures are the same in every 15.x release.
 *
 * Audit of calls that bypass the tables (objdump -d of Debian's postgres
 * 15.20, every direct call or jump to an md* function, checked against
 * smgr.c, md.c and sync.c of REL_15_STABLE):
 *
 *	smgrinit -> mdinit		  Only creates md.c's private memory context.
 *							  Nothing to do.
 *	smgropen -> mdopen		  Only resets md.c's per-fork segment counts; no
 *							  I/O.  Nothing to do.
 *	smgrimmedsync -> mdimmedsync
 *							  fsyncs a relation's files after bulk writes made
 *							  with skipFsync (index builds, heap rewrites,
 *							  RelationCopyStorage, *buildempty).  Those writes
 *							  come through smgr_write/smgr_extend with
 *							  skipFsync = true; such writes must bypass the
 *							  cache: go to md and invalidate any cached copy
 *							  first, so that the immediate sync covers them.
 *	smgrdosyncall -> mdimmedsync
 *							  Commit-time sync of relations created in the
 *							  transaction under wal_level = minimal
 *							  (smgrDoPendingSyncs).  Their buffers are first
 *							  written through smgr_write, so a cache that
 *							  absorbed those writes would leave them outside
 *							  the sync: write-back therefore requires
 *							  wal_level >= replica, where this path is unused.
 *	md.c internal calls		  (mdimmedsync -> mdnblocks, mdtruncate ->
 *							  mdnblocks, mdunlink -> mdunlinkfork, segment
 *							  helpers) stay inside md.c and carry no pages.
 *
 * Everything else (smgr create/exists/unlink/extend/prefetch/read/write/
 * writeback/nblocks/truncate, including 15.20's smgrtruncate2, and every
 * sync.c call of a handler) goes through the tables.  Work that bypasses smgr
 * entirely (DROP DATABASE and ALTER DATABASE SET TABLESPACE removing or
 * copying directories, CREATE DATABASE STRATEGY FILE_COPY, resetting unlogged
 * relations, base backups) never reaches these wrappers and is handled by the
 * cache's utility and lifecycle code.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access/clog.h"
#include "access/commit_ts.h"
#include "access/multixact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "commands/dbcommands_xlog.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "port/atomics.h"
#include "storage/md.h"
#include "storage/shmem.h"
#include "storage/sync.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"
#include "ssd_cache_hook.h"
#include "ssd_cache_policy.h"
#include "ssd_cache_warmup.h"
#include "ssd_cache_writeback.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "ssd_cache_hook.c mirrors the PostgreSQL 15 layouts of f_smgr and SyncOps"
#endif

/*
 * Mirrors of smgr.c's f_smgr and sync.c's SyncOps for PostgreSQL 15.  The
 * expected tables below are built from md.h's prototypes, so a signature
 * change breaks the compile rather than the server.
 */
typedef struct SsdSmgrOps
{
	void		(*smgr_init) (void);
	void		(*smgr_shutdown) (void);
	void		(*smgr_open) (SMgrRelation reln);
	void		(*smgr_close) (SMgrRelation reln, ForkNumber forknum);
	void		(*smgr_create) (SMgrRelation reln, ForkNumber forknum, bool isRedo);
	bool		(*smgr_exists) (SMgrRelation reln, ForkNumber forknum);
	void		(*smgr_unlink) (RelFileNodeBackend rnode, ForkNumber forknum, bool isRedo);
	void		(*smgr_extend) (SMgrRelation reln, ForkNumber forknum,
								BlockNumber blocknum, char *buffer, bool skipFsync);
	bool		(*smgr_prefetch) (SMgrRelation reln, ForkNumber forknum,
								  BlockNumber blocknum);
	void		(*smgr_read) (SMgrRelation reln, ForkNumber forknum,
							  BlockNumber blocknum, char *buffer);
	void		(*smgr_write) (SMgrRelation reln, ForkNumber forknum,
							   BlockNumber blocknum, char *buffer, bool skipFsync);
	void		(*smgr_writeback) (SMgrRelation reln, ForkNumber forknum,
								   BlockNumber blocknum, BlockNumber nblocks);
	BlockNumber (*smgr_nblocks) (SMgrRelation reln, ForkNumber forknum);
	void		(*smgr_truncate) (void);	/* signature depends on the release */
	void		(*smgr_immedsync) (SMgrRelation reln, ForkNumber forknum);
} SsdSmgrOps;

typedef struct SsdSyncOps
{
	int			(*sync_syncfiletag) (const FileTag *ftag, char *path);
	int			(*sync_unlinkfiletag) (const FileTag *ftag, char *path);
	bool		(*sync_filetagmatches) (const FileTag *ftag, const FileTag *candidate);
} SsdSyncOps;

/* smgrsw[] of PostgreSQL 15: one entry, md.c. */
static const SsdSmgrOps expected_smgrsw[] = {
	{
		.smgr_init = mdinit,
		.smgr_shutdown = NULL,
		.smgr_open = mdopen,
		.smgr_close = mdclose,
		.smgr_create = mdcreate,
		.smgr_exists = mdexists,
		.smgr_unlink = mdunlink,
		.smgr_extend = mdextend,
		.smgr_prefetch = mdprefetch,
		.smgr_read = mdread,
		.smgr_write = mdwrite,
		.smgr_writeback = mdwriteback,
		.smgr_nblocks = mdnblocks,
		.smgr_truncate = (void (*) (void)) mdtruncate,
		.smgr_immedsync = mdimmedsync,
	}
};

/* syncsw[] of PostgreSQL 15, indexed by SyncRequestHandler. */
static const SsdSyncOps expected_syncsw[] = {
	[SYNC_HANDLER_MD] = {
		.sync_syncfiletag = mdsyncfiletag,
		.sync_unlinkfiletag = mdunlinkfiletag,
		.sync_filetagmatches = mdfiletagmatches
	},
	[SYNC_HANDLER_CLOG] = {.sync_syncfiletag = clogsyncfiletag},
	[SYNC_HANDLER_COMMIT_TS] = {.sync_syncfiletag = committssyncfiletag},
	[SYNC_HANDLER_MULTIXACT_OFFSET] = {.sync_syncfiletag = multixactoffsetssyncfiletag},
	[SYNC_HANDLER_MULTIXACT_MEMBER] = {.sync_syncfiletag = multixactmemberssyncfiletag},
};

StaticAssertDecl(lengthof(expected_syncsw) == SYNC_HANDLER_NONE,
				 "syncsw[] mirror does not cover every PostgreSQL 15 sync handler");

/* Names shown by ssd_cache_hook_status(), by SsdCacheHookSlot. */
static const struct
{
	const char *slot;
	const char *wraps;
}			hook_slot_names[SSD_CACHE_HOOK_NSLOTS] = {
	[HOOK_SMGR_CREATE] = {"smgr_create", "mdcreate"},
	[HOOK_SMGR_UNLINK] = {"smgr_unlink", "mdunlink"},
	[HOOK_SMGR_EXTEND] = {"smgr_extend", "mdextend"},
	[HOOK_SMGR_PREFETCH] = {"smgr_prefetch", "mdprefetch"},
	[HOOK_SMGR_READ] = {"smgr_read", "mdread"},
	[HOOK_SMGR_WRITE] = {"smgr_write", "mdwrite"},
	[HOOK_SMGR_WRITEBACK] = {"smgr_writeback", "mdwriteback"},
	[HOOK_SMGR_TRUNCATE] = {"smgr_truncate", "mdtruncate"},
	[HOOK_SYNC_SYNCFILETAG] = {"sync_syncfiletag", "mdsyncfiletag"},
	[HOOK_SYNC_UNLINKFILETAG] = {"sync_unlinkfiletag", "mdunlinkfiletag"},
};

/* Calls through each wrapped slot, cluster-wide.  Owned by this module. */
typedef struct SsdCacheHookShared
{
	pg_atomic_uint64 calls[SSD_CACHE_HOOK_NSLOTS];
} SsdCacheHookShared;

static SsdCacheHookShared *hook_shared = NULL;
static bool hook_installed = false;

static inline void
hook_count(SsdCacheHookSlot slot)
{
	/* Processes that run before shared memory exists are not counted. */
	if (hook_shared)
		pg_atomic_fetch_add_u64(&hook_shared->calls[slot], 1);
}

/*
 * Only main forks of permanent relations are cached: temporary relations
 * never reach shared buffers' write paths here in a way worth caching, and
 * the other forks are small and hot in shared_buffers anyway.
 */
static inline bool
cacheable(SMgrRelation reln, ForkNumber forknum)
{
	return forknum == MAIN_FORKNUM &&
		reln->smgr_rnode.backend == InvalidBackendId &&
		ssd_cache_enabled();
}

/*
 * The wrappers.  Each calls md.c and keeps the cache consistent with it:
 * the disk is written first and the cached copy brought up to date after;
 * anything that removes or replaces blocks invalidates them, durably,
 * before md.c acts.
 */
static void
ssd_smgr_create(SMgrRelation reln, ForkNumber forknum, bool isRedo)
{
	hook_count(HOOK_SMGR_CREATE);

	/*
	 * A reused relfilenode must not find its predecessor's pages.  WAL redo
	 * calls this for every block it reads (XLogReadBufferExtended), where
	 * the file almost always exists already: only a file that does not is
	 * new.  (Invalidating on every redo read emptied the cache during
	 * recovery, one durable directory write per cached block.)
	 */
	if (cacheable(reln, forknum) &&
		(!isRedo ||
		 (reln->md_num_open_segs[forknum] == 0 && !mdexists(reln, forknum))))
		ssd_cache_invalidate_from(reln->smgr_rnode.node, forknum, 0);
	mdcreate(reln, forknum, isRedo);
}

static void
ssd_smgr_unlink(RelFileNodeBackend rnode, ForkNumber forknum, bool isRedo)
{
	hook_count(HOOK_SMGR_UNLINK);
	if (rnode.backend == InvalidBackendId && ssd_cache_enabled() &&
		(forknum == MAIN_FORKNUM || forknum == InvalidForkNumber))
		ssd_cache_invalidate_from(rnode.node, MAIN_FORKNUM, 0);
	mdunlink(rnode, forknum, isRedo);
}

static void
ssd_smgr_extend(SMgrRelation reln, ForkNumber forknum, BlockNumber blocknum,
				char *buffer, bool skipFsync)
{
	hook_count(HOOK_SMGR_EXTEND);
	if (cacheable(reln, forknum))
	{
		BufferTag	tag;

		/* Nothing should be cached past the end; make sure. */
		INIT_BUFFERTAG(tag, reln->smgr_rnode.node, forknum, blocknum);
		if (ssd_cache_has_entry(&tag))
			ssd_cache_invalidate_block(&tag);
		ssd_cache_count(SSD_DISK_WRITES, 1);
	}
	mdextend(reln, forknum, blocknum, buffer, skipFsync);
}

static bool
ssd_smgr_prefetch(SMgrRelation reln, ForkNumber forknum, BlockNumber blocknum)
{
	hook_count(HOOK_SMGR_PREFETCH);
	if (cacheable(reln, forknum))
	{
		BufferTag	tag;

		/* A cached block will come from the SSD: do not spend disk I/O. */
		INIT_BUFFERTAG(tag, reln->smgr_rnode.node, forknum, blocknum);
		if (ssd_cache_contains(&tag))
			return true;
	}
	return mdprefetch(reln, forknum, blocknum);
}

/*
 * A read that misses the cache reserves its admission before it reads the
 * disk, so a write of the block racing with the read cancels it (see
 * ssd_cache_admit.c).
 */
static void
ssd_smgr_read(SMgrRelation reln, ForkNumber forknum, BlockNumber blocknum,
			  char *buffer)
{
	BufferTag	tag;
	bool		sequential;
	double		temperature;
	int			item = -1;

	hook_count(HOOK_SMGR_READ);
	if (!cacheable(reln, forknum))
	{
		if (warmup_loading() && !InRecovery && !warmup_am_loader &&
			!RelFileNodeBackendIsTemp(reln->smgr_rnode))
			warmup_note_miss(&reln->smgr_rnode.node, forknum, blocknum);
		mdread(reln, forknum, blocknum, buffer);
		return;
	}

	INIT_BUFFERTAG(tag, reln->smgr_rnode.node, forknum, blocknum);
	if (ssd_cache_read(&tag, buffer))
	{
		/* A hit heats its region too: it is I/O the SSD saved. */
		if (!InRecovery && !warmup_am_loader)
			(void) ssd_cache_heat(&tag, &sequential);
		return;
	}
	if (warmup_loading() && !InRecovery && !warmup_am_loader)
		warmup_note_miss(&reln->smgr_rnode.node, forknum, blocknum);

	/*
	 * WAL redo (InRecovery: the startup process, or a single-user backend
	 * replaying) reads the pages it is about to change: a write, and writes
	 * neither heat nor admit.  Crash recovery after a write load reads
	 * thousands of pages no query asked for; admitting them evicted as many
	 * hot pages.  The warm-up loader's reads are no new demand either:
	 * they restore what shared_buffers held, which heated and admitted
	 * those pages when queries first read them.
	 */
	if (!InRecovery && !warmup_am_loader)
	{
		temperature = ssd_cache_heat(&tag, &sequential);
		if (sequential)
			ssd_cache_count(SSD_SEQUENTIAL, 1);
		else if (ssd_cache_should_offer(temperature, sequential, ssd_cache_full()))
			item = ssd_cache_offer_reserve(&tag);
		else
			ssd_cache_count(SSD_REFUSALS, 1);
	}

	if (item < 0)
	{
		mdread(reln, forknum, blocknum, buffer);
		ssd_cache_recheck_after_crash(&tag, buffer);
	}
	else
	{
		PG_TRY();
		{
			mdread(reln, forknum, blocknum, buffer);
		}
		PG_CATCH();
		{
			ssd_cache_offer_withdraw(item, &tag);
			PG_RE_THROW();
		}
		PG_END_TRY();
		ssd_cache_offer_fill(item, buffer);
	}
	ssd_cache_count(SSD_DISK_READS, 1);
}

/*
 * A write: absorbed by the SSD in write-back mode (ssd_cache_writeback.c
 * decides), else to the disk first and then to any cached copy.  The buffer
 * manager has flushed the WAL up to the page's LSN before calling this, so
 * WAL-before-data holds for the SSD as for the disk.
 */
static void
ssd_smgr_write(SMgrRelation reln, ForkNumber forknum, BlockNumber blocknum,
			   char *buffer, bool skipFsync)
{
	BufferTag	tag;
	bool		cached = cacheable(reln, forknum);
	int32		begun = -1;

	hook_count(HOOK_SMGR_WRITE);
	if (cached)
	{
		INIT_BUFFERTAG(tag, reln->smgr_rnode.node, forknum, blocknum);

		/*
		 * skipFsync writes are made durable by an immediate sync that goes
		 * straight to md.c; they bypass the cache, which forgets the block
		 * first (a fresher copy too: this write replaces it).
		 */
		if (skipFsync)
			ssd_cache_invalidate_block(&tag);
		else if (ssd_cache_wb_absorb(&tag, buffer))
			return;
		else
			begun = ssd_cache_write_begin(&tag);
	}
	if (begun < 0)
		mdwrite(reln, forknum, blocknum, buffer, skipFsync);
	else
	{
		PG_TRY();
		{
			mdwrite(reln, forknum, blocknum, buffer, skipFsync);
		}
		PG_CATCH();
		{
			ssd_cache_write_end(begun);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	if (cached)
	{
		ssd_cache_count(SSD_DISK_WRITES, 1);
		if (!skipFsync)
			ssd_cache_after_disk_write(&tag, buffer, begun);
	}
}

static void
ssd_smgr_writeback(SMgrRelation reln, ForkNumber forknum, BlockNumber blocknum,
				   BlockNumber nblocks)
{
	hook_count(HOOK_SMGR_WRITEBACK);
	mdwriteback(reln, forknum, blocknum, nblocks);
}

/* mdtruncate as 15.0-15.10 and 15.11+ declare it (see "Releases"). */
typedef void (*MdTruncate3) (SMgrRelation reln, ForkNumber forknum,
							 BlockNumber nblocks);
typedef void (*MdTruncate4) (SMgrRelation reln, ForkNumber forknum,
							 BlockNumber old_blocks, BlockNumber nblocks);

/* mdtruncate as found in smgrsw[], called with the verified signature. */
static void (*md_truncate) (void) = NULL;

static void
ssd_smgr_truncate3(SMgrRelation reln, ForkNumber forknum, BlockNumber nblocks)
{
	hook_count(HOOK_SMGR_TRUNCATE);
	if (cacheable(reln, forknum))
		ssd_cache_invalidate_from(reln->smgr_rnode.node, forknum, nblocks);
	((MdTruncate3) md_truncate) (reln, forknum, nblocks);
}

/*
 * 15.11+ calls this inside a critical section (RelationTruncate): the
 * invalidation must not raise an error, and does not (ssd_cache_fault.c).
 */
static void
ssd_smgr_truncate4(SMgrRelation reln, ForkNumber forknum, BlockNumber old_blocks,
				   BlockNumber nblocks)
{
	hook_count(HOOK_SMGR_TRUNCATE);
	if (cacheable(reln, forknum))
		ssd_cache_invalidate_from(reln->smgr_rnode.node, forknum, nblocks);
	((MdTruncate4) md_truncate) (reln, forknum, old_blocks, nblocks);
}

static int
ssd_sync_syncfiletag(const FileTag *ftag, char *path)
{
	hook_count(HOOK_SYNC_SYNCFILETAG);

	/*
	 * Once per checkpoint, first: write-back's duties (lazy cleaning writes
	 * back what it absorbed; a base backup starting from this checkpoint).
	 * An ERROR there fails the checkpoint, which must then not be recorded
	 * below as one the cache saw complete.
	 */
	if (MyBackendType == B_CHECKPOINTER && ssd_cache_enabled() && !ssd_cache_bypassed())
	{
		static XLogRecPtr last_redo = InvalidXLogRecPtr;
		XLogRecPtr	redo = GetRedoRecPtr();

		if (redo != last_redo)
		{
			ssd_cache_wb_at_checkpoint();
			last_redo = redo;
		}
	}

	/*
	 * The checkpointer syncs data files before the checkpoint can complete:
	 * record the checkpoint as one the cache has seen (see
	 * ssd_cache_file.c, "Trust").  If that fails the next start cannot
	 * trust the cache, so stop using it now.
	 */
	if (MyBackendType == B_CHECKPOINTER && ssd_cache_enabled() && !ssd_cache_bypassed() &&
		!ssd_cache_file_note_checkpoint(GetRedoRecPtr()))
	{
		char		why[256];

		snprintf(why, sizeof(why), "the cache file header could not be written at a checkpoint: %s",
				 strerror(errno));
		ssd_cache_give_up(why);
	}

	if (ssd_cache_file_is_marker(ftag))
		return 0;				/* only there to get the checkpoint recorded */
	return mdsyncfiletag(ftag, path);
}

static int
ssd_sync_unlinkfiletag(const FileTag *ftag, char *path)
{
	hook_count(HOOK_SYNC_UNLINKFILETAG);
	return mdunlinkfiletag(ftag, path);
}

/*
 * WAL redo of database creation and removal copies and removes whole
 * directories without smgr (a standby replaying ALTER DATABASE ... SET
 * TABLESPACE, CREATE DATABASE with FILE_COPY, DROP DATABASE).  The SQL-level
 * hooks of ssd_cache_lifecycle.c do not run there, so the redo function of
 * the database resource manager is wrapped: the database's pages are
 * forgotten, durably, before its files are replaced or removed.
 */
static void (*prev_dbase_redo) (XLogReaderState *record) = NULL;

static void
ssd_dbase_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	Oid			dboid = InvalidOid;
	Oid			srcoid = InvalidOid;

	if (info == XLOG_DBASE_CREATE_FILE_COPY)
	{
		xl_dbase_create_file_copy_rec *rec =
		(xl_dbase_create_file_copy_rec *) XLogRecGetData(record);

		dboid = rec->db_id;
		srcoid = rec->src_db_id;
	}
	else if (info == XLOG_DBASE_CREATE_WAL_LOG)
		dboid = ((xl_dbase_create_wal_log_rec *) XLogRecGetData(record))->db_id;
	else if (info == XLOG_DBASE_DROP)
		dboid = ((xl_dbase_drop_rec *) XLogRecGetData(record))->db_id;

	/*
	 * The copy reads the source's files: complete them first (write-back).
	 * The target's OID then loses whatever is cached under it (an older
	 * database's pages, or, for a move, the pages just written back).  A
	 * dropped database loses its pages once the redo has dropped its
	 * buffers (restartpoints may absorb a page of it until then) and
	 * removed its files (hot-standby sessions still reading it are ended
	 * first, and read the pages until then).
	 */
	if (OidIsValid(srcoid))
		ssd_cache_wb_suspend_database(srcoid);
	if (OidIsValid(dboid) && info != XLOG_DBASE_DROP)
		ssd_cache_invalidate_database(dboid, false);
	prev_dbase_redo(record);
	if (OidIsValid(srcoid))
		ssd_cache_wb_resume_database(srcoid);
	if (info == XLOG_DBASE_DROP)
		ssd_cache_invalidate_database(dboid, false);
}

/* A byte image to find in the executable's RELRO segment. */
typedef struct TableSearch
{
	const void *image;
	Size		size;
	int			matches;
	char	   *found;
} TableSearch;

/*
 * dl_iterate_phdr callback: scan the main program's RELRO segment(s) for each
 * table image.  The main program is always reported first; stop after it,
 * because the tables are static in the executable and nowhere else.
 */
static int
search_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
	TableSearch *searches = (TableSearch *) arg;
	int			i;

	for (i = 0; i < info->dlpi_phnum; i++)
	{
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		char	   *start,
				   *end,
				   *p;
		int			s;

		if (ph->p_type != PT_GNU_RELRO)
			continue;
		start = (char *) (info->dlpi_addr + ph->p_vaddr);
		end = start + ph->p_memsz;
		for (p = (char *) TYPEALIGN(sizeof(void *), start); p < end; p += sizeof(void *))
		{
			for (s = 0; searches[s].image != NULL; s++)
			{
				if (p + searches[s].size <= end &&
					memcmp(p, searches[s].image, searches[s].size) == 0)
				{
					searches[s].matches++;
					searches[s].found = p;
				}
			}
		}
	}
	return 1;
}

/* Make [addr, addr + len) writable (or read-only again); false on failure. */
static bool
protect_range(void *addr, Size len, int prot)
{
	long		pagesize = sysconf(_SC_PAGESIZE);
	uintptr_t	first = (uintptr_t) addr & ~(pagesize - 1);
	uintptr_t	last = ((uintptr_t) addr + len + pagesize - 1) & ~(pagesize - 1);

	return mprotect((void *) first, last - first, prot) == 0;
}

/* Why the hook is not installed (shown by ssd_cache_stats). */
static char *not_hooked_reason = NULL;

/* Which smgr_truncate signature a verified release has: 3, 4, or 0. */
static int
truncate_arity(int server_version)
{
	if (ssd_cache_fault_enabled("server_release"))
		return 0;
	if (server_version >= 150000 && server_version <= 150010)
		return 3;
	if (server_version >= 150012 && server_version <= 150020)
		return 4;
	return 0;
}

/*
 * Find, verify and wrap both tables.  Called from _PG_init in the postmaster
 * (shared_preload_libraries).  On a server it cannot verify it wraps
 * nothing: ssd_cache_hook_active() is false, the cache stays off and
 * ssd_cache_hook_problem() says why.
 */
void
ssd_cache_hook_install(void)
{
	TableSearch searches[] = {
		{expected_smgrsw, sizeof(expected_smgrsw), 0, NULL},
		{expected_syncsw, sizeof(expected_syncsw), 0, NULL},
		{NULL, 0, 0, NULL}
	};
	SsdSmgrOps *smgrsw;
	SsdSyncOps *syncsw;
	int			server_version;
	int			arity;

	Assert(process_shared_preload_libraries_in_progress);
	if (hook_installed)
		return;

	server_version = atoi(GetConfigOption("server_version_num", false, false));
	arity = truncate_arity(server_version);
	if (arity == 0)
	{
		not_hooked_reason = psprintf("PostgreSQL %d.%d is not a release whose storage-manager "
									 "functions this ssd_cache has verified",
									 server_version / 10000, server_version % 100);
		return;
	}

	dl_iterate_phdr(search_relro, searches);

	/* Test-only: behave as on a server whose tables do not match. */
	if (ssd_cache_fault_enabled("hook_layout"))
		searches[0].matches = 0;

	if (searches[0].matches != 1 || searches[1].matches != 1)
	{
		not_hooked_reason = psprintf("found %d copies of the storage manager table and %d of the "
									 "sync handler table with the PostgreSQL 15 layout in the "
									 "postgres executable; exactly one of each is required",
									 searches[0].matches, searches[1].matches);
		return;
	}

	smgrsw = (SsdSmgrOps *) searches[0].found;
	syncsw = (SsdSyncOps *) searches[1].found;

	if (!protect_range(smgrsw, sizeof(expected_smgrsw), PROT_READ | PROT_WRITE) ||
		!protect_range(syncsw, sizeof(expected_syncsw), PROT_READ | PROT_WRITE))
	{
		not_hooked_reason = psprintf("the dispatch tables could not be made writable: %m");
		return;
	}
	md_truncate = smgrsw[0].smgr_truncate;
	smgrsw[0].smgr_create = ssd_smgr_create;
	smgrsw[0].smgr_unlink = ssd_smgr_unlink;
	smgrsw[0].smgr_extend = ssd_smgr_extend;
	smgrsw[0].smgr_prefetch = ssd_smgr_prefetch;
	smgrsw[0].smgr_read = ssd_smgr_read;
	smgrsw[0].smgr_write = ssd_smgr_write;
	smgrsw[0].smgr_writeback = ssd_smgr_writeback;
	smgrsw[0].smgr_truncate = arity == 3 ?
		(void (*) (void)) ssd_smgr_truncate3 : (void (*) (void)) ssd_smgr_truncate4;
	syncsw[SYNC_HANDLER_MD].sync_syncfiletag = ssd_sync_syncfiletag;
	syncsw[SYNC_HANDLER_MD].sync_unlinkfiletag = ssd_sync_unlinkfiletag;
	/* Read-only again; a failure here leaves the tables writable, not wrong. */
	(void) protect_range(smgrsw, sizeof(expected_smgrsw), PROT_READ);
	(void) protect_range(syncsw, sizeof(expected_syncsw), PROT_READ);

	/* RmgrTable is writable data in 15 (custom resource managers). */
	prev_dbase_redo = RmgrTable[RM_DBASE_ID].rm_redo;
	RmgrTable[RM_DBASE_ID].rm_redo = ssd_dbase_redo;

	hook_installed = true;
	ereport(LOG,
			(errmsg("ssd_cache: storage manager hooked (%d smgr and 2 sync handler functions wrapped, "
					"%d-argument mdtruncate)",
					SSD_CACHE_HOOK_NSLOTS - 2, arity)));
}

const char *
ssd_cache_hook_problem(void)
{
	return not_hooked_reason;
}

bool
ssd_cache_hook_active(void)
{
	return hook_installed;
}

Size
ssd_cache_hook_shmem_size(void)
{
	return MAXALIGN(sizeof(SsdCacheHookShared));
}

void
ssd_cache_hook_shmem_init(void)
{
	bool		found;
	int			i;

	hook_shared = ShmemInitStruct("ssd_cache hook", sizeof(SsdCacheHookShared), &found);
	if (!found)
		for (i = 0; i < SSD_CACHE_HOOK_NSLOTS; i++)
			pg_atomic_init_u64(&hook_shared->calls[i], 0);
}

/*
 * ssd_cache_hook_status(): one row per wrapped dispatch slot, with the md.c
 * function it wraps and the calls made through it since the server started.
 */
PG_FUNCTION_INFO_V1(ssd_cache_hook_status);

Datum
ssd_cache_hook_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	ssd_cache_require_preload();
	InitMaterializedSRF(fcinfo, 0);
	if (!hook_installed || hook_shared == NULL)
		return (Datum) 0;

	for (i = 0; i < SSD_CACHE_HOOK_NSLOTS; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(hook_slot_names[i].slot);
		values[1] = CStringGetTextDatum(hook_slot_names[i].wraps);
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&hook_shared->calls[i]));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
