/*-------------------------------------------------------------------------
 *
 * qdtt_residency.c
 *	  Where relations' pages are: the residency sampler.
 *
 * A page a query finds in shared_buffers or in the OS page cache costs far
 * less than a device read, and on a server whose data sits in memory the
 * device model alone prices plans wrongly.  So a background worker, the
 * "qdtt residency sampler", measures every qdtt.residency_interval seconds,
 * for every relation file fork of the cluster: its size in blocks, how many
 * of its blocks are in shared_buffers (the buffer descriptors, as
 * pg_buffercache reads them), and how many are in the OS page cache
 * (mincore() over a read-only mapping of each segment, as pgfincore does;
 * no page is read), and publishes the counts in shared memory, where the
 * qdtt_residency view shows them.
 *
 * Cost: a pass reads every buffer header once and maps each file; mincore()
 * walks the kernel's page cache of the file, which costs in proportion to
 * its size.  qdtt.residency_max_pages bounds the OS pages a pass examines:
 * a pass past the bound keeps the previous counts of the relations it did
 * not reach and the next pass starts where it stopped, so on a large
 * cluster the OS-cache counts are a few passes old.  A pass keeps one
 * small entry per fork found in backend memory.  Relation forks whose
 * files are gone (DROP, TRUNCATE's old file: the checkpoint after unlinks
 * them) leave the table at the next pass; shared memory holds at most
 * qdtt.residency_max_relations forks, the largest first (the view says how
 * many were left out).
 *
 * A pass holds no lock while it reads directories and maps files, so that
 * it can be cancelled and never holds up a shutdown or a barrier; passes
 * take turns through pass_pid (the worker skips its turn when a backend's
 * qdtt_sample_residency() is running, and the other way round).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "catalog/pg_tablespace_d.h"
#include "common/relpath.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/buf_internals.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "qdtt_costing.h"

int			qdtt_residency_interval = 10;
int			qdtt_residency_max_pages = 33554432;	/* 128 GB of 4 kB pages */
int			qdtt_residency_max_relations = 10000;

typedef struct ResidencyKey
{
	RelFileNode node;
	ForkNumber	fork;
} ResidencyKey;

typedef struct ResidencyEntry
{
	ResidencyKey key;			/* hash key: zeroed, then filled */
	int64		blocks;			/* the fork's size */
	int64		sb_blocks;		/* of them in shared_buffers */
	int64		os_blocks;		/* in the OS page cache, or -1: not measured yet */
	int64		os_gaps;		/* runs of OS pages not in it (see os_resident_pages) */
	TimestampTz sampled_at;		/* of the OS count */
} ResidencyEntry;

typedef struct ResidencyShared
{
	pg_atomic_uint32 pass_pid;	/* the process running a pass, or 0 */
	int64		untracked;		/* forks the last pass found no room for */
	TimestampTz published_at;	/* when the last pass published, or 0 */
	ResidencyKey cursor;		/* where the next pass's OS counting starts */
	bool		cursor_valid;
} ResidencyShared;

static ResidencyShared *shared = NULL;
static HTAB *shared_hash = NULL;
static LWLock *table_lock = NULL;	/* the hash and ResidencyShared */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* One fork found by a pass: its size and segments, and what they held. */
typedef struct FoundFork
{
	ResidencyKey key;
	int64		blocks;
	int64		os_blocks;		/* -1: not counted this pass */
	int64		os_gaps;
	uint32		nsegs;			/* segment files 0 .. nsegs - 1 seen */
} FoundFork;

PG_FUNCTION_INFO_V1(qdtt_residency);
PG_FUNCTION_INFO_V1(qdtt_sample_residency);
PGDLLEXPORT void qdtt_residency_main(Datum arg);

/* ------------------------------------------------------------------------
 * Shared memory
 * ------------------------------------------------------------------------
 */

static Size
residency_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(ResidencyShared)),
					hash_estimate_size(qdtt_residency_max_relations, sizeof(ResidencyEntry)));
}

static void
residency_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(residency_shmem_size());
	RequestNamedLWLockTranche("qdtt_residency", 1);
}

static void
residency_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;
	LWLockPadded *locks;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("qdtt residency", sizeof(ResidencyShared), &found);
	if (!found)
	{
		memset(shared, 0, sizeof(ResidencyShared));
		pg_atomic_init_u32(&shared->pass_pid, 0);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(ResidencyKey);
	info.entrysize = sizeof(ResidencyEntry);
	shared_hash = ShmemInitHash("qdtt residency table", qdtt_residency_max_relations,
								qdtt_residency_max_relations, &info, HASH_ELEM | HASH_BLOBS);
	locks = GetNamedLWLockTranche("qdtt_residency");
	table_lock = &locks[0].lock;
	LWLockRelease(AddinShmemInitLock);
}

/* ------------------------------------------------------------------------
 * A pass
 * ------------------------------------------------------------------------
 */

static int
cmp_key(const ResidencyKey *a, const ResidencyKey *b)
{
	if (a->node.spcNode != b->node.spcNode)
		return (a->node.spcNode < b->node.spcNode) ? -1 : 1;
	if (a->node.dbNode != b->node.dbNode)
		return (a->node.dbNode < b->node.dbNode) ? -1 : 1;
	if (a->node.relNode != b->node.relNode)
		return (a->node.relNode < b->node.relNode) ? -1 : 1;
	if (a->fork != b->fork)
		return (a->fork < b->fork) ? -1 : 1;
	return 0;
}

/* Larger forks first (then key order, for a stable result). */
static int
cmp_size(const void *a, const void *b)
{
	const FoundFork *fa = *(FoundFork *const *) a;
	const FoundFork *fb = *(FoundFork *const *) b;

	if (fa->blocks != fb->blocks)
		return (fa->blocks > fb->blocks) ? -1 : 1;
	return cmp_key(&fa->key, &fb->key);
}

static int
cmp_found(const void *a, const void *b)
{
	return cmp_key(&(*(FoundFork *const *) a)->key, &(*(FoundFork *const *) b)->key);
}

/*
 * A relation file name: "<filenode>[_<fork>][.<segment>]"; false for
 * anything else (temporary relations' "t<backend>_...", pg_filenode.map,
 * PG_VERSION, pg_internal.init).
 */
static bool
parse_file_name(const char *name, Oid *relnode, ForkNumber *fork, uint32 *segno)
{
	char	   *end;
	unsigned long n;

	if (!isdigit((unsigned char) name[0]))
		return false;
	errno = 0;
	n = strtoul(name, &end, 10);
	if (errno != 0 || n == 0 || n > PG_UINT32_MAX)
		return false;
	*relnode = (Oid) n;
	*fork = MAIN_FORKNUM;
	if (*end == '_')
	{
		int			len = forkname_chars(end + 1, fork);

		if (len == 0)
			return false;
		end += 1 + len;
	}
	*segno = 0;
	if (*end == '.')
	{
		end++;
		if (!isdigit((unsigned char) *end))
			return false;
		*segno = (uint32) strtoul(end, &end, 10);
	}
	return *end == '\0';
}

/* Add the relation files of one database directory to the forks found. */
static void
scan_directory(const char *dir, Oid spc, Oid db, HTAB *found)
{
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;

	if (d == NULL)
		return;					/* dropped meanwhile */
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		ResidencyKey key;
		FoundFork  *f;
		bool		known;
		struct stat st;
		char		path[MAXPGPATH];
		uint32		segno;

		CHECK_FOR_INTERRUPTS();
		memset(&key, 0, sizeof(key));
		if (!parse_file_name(de->d_name, &key.node.relNode, &key.fork, &segno))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		key.node.spcNode = spc;
		key.node.dbNode = db;
		f = hash_search(found, &key, HASH_ENTER, &known);
		if (!known)
		{
			f->blocks = 0;
			f->os_blocks = -1;
			f->os_gaps = 0;
			f->nsegs = 0;
		}
		f->blocks += st.st_size / BLCKSZ;
		f->nsegs = Max(f->nsegs, segno + 1);
	}
	FreeDir(d);
}

/* Every relation fork of the cluster: global, base, tablespaces. */
static HTAB *
find_forks(void)
{
	HASHCTL		info;
	HTAB	   *found;
	DIR		   *d;
	struct dirent *de;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(ResidencyKey);
	info.entrysize = sizeof(FoundFork);
	info.hcxt = CurrentMemoryContext;
	found = hash_create("qdtt residency pass", 1024, &info,
						HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	scan_directory("global", GLOBALTABLESPACE_OID, InvalidOid, found);
	d = AllocateDir("base");
	while ((de = ReadDirExtended(d, "base", LOG)) != NULL)
	{
		Oid			db = (Oid) strtoul(de->d_name, NULL, 10);

		if (OidIsValid(db))
			scan_directory(psprintf("base/%s", de->d_name), DEFAULTTABLESPACE_OID, db, found);
	}
	FreeDir(d);
	d = AllocateDir("pg_tblspc");
	while ((de = ReadDirExtended(d, "pg_tblspc", LOG)) != NULL)
	{
		Oid			spc = (Oid) strtoul(de->d_name, NULL, 10);
		char	   *spcdir;
		DIR		   *dd;
		struct dirent *dbde;

		if (!OidIsValid(spc))
			continue;
		spcdir = psprintf("pg_tblspc/%u/%s", spc, TABLESPACE_VERSION_DIRECTORY);
		dd = AllocateDir(spcdir);
		if (dd == NULL)
			continue;
		while ((dbde = ReadDirExtended(dd, spcdir, LOG)) != NULL)
		{
			Oid			db = (Oid) strtoul(dbde->d_name, NULL, 10);

			if (OidIsValid(db))
				scan_directory(psprintf("%s/%s", spcdir, dbde->d_name), spc, db, found);
		}
		FreeDir(dd);
	}
	FreeDir(d);
	return found;
}

/*
 * OS pages of one file in the page cache, counted with mincore() over a
 * read-only shared mapping (nothing is read); *pages gets the file's OS
 * pages and *gaps the runs of pages not in the cache (how often a pass over
 * the file goes from cached pages to the device: each time the kernel's
 * readahead starts again small).  A file that vanished or cannot be mapped
 * counts as 0 of 0.
 */
static int64
os_resident_pages(const char *path, int64 *pages, int64 *gaps)
{
	long		pagesize = sysconf(_SC_PAGESIZE);
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	struct stat st;
	void	   *map;
	unsigned char *vec;
	int64		n,
				i,
				resident = 0;

	*pages = 0;
	*gaps = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || st.st_size == 0)
	{
		CloseTransientFile(fd);
		return 0;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	CloseTransientFile(fd);		/* the mapping keeps the file */
	if (map == MAP_FAILED)
		return 0;
	n = (st.st_size + pagesize - 1) / pagesize;
	vec = palloc(n);
	if (mincore(map, st.st_size, vec) == 0)
	{
		for (i = 0; i < n; i++)
		{
			resident += vec[i] & 1;
			if ((vec[i] & 1) == 0 && (i == 0 || (vec[i - 1] & 1) != 0))
				(*gaps)++;
		}
	}
	munmap(map, st.st_size);
	pfree(vec);
	*pages = n;
	return resident;
}

/* Blocks of every fork in shared_buffers, from the buffer headers. */
static HTAB *
count_shared_buffers(void)
{
	HASHCTL		info;
	HTAB	   *counts;
	int			i;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(ResidencyKey);
	info.entrysize = sizeof(ResidencyKey) + sizeof(int64);
	info.hcxt = CurrentMemoryContext;
	counts = hash_create("qdtt residency buffers", 1024, &info,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (i = 0; i < NBuffers; i++)
	{
		BufferDesc *buf = GetBufferDescriptor(i);
		uint32		state = LockBufHdr(buf);
		ResidencyKey key;
		bool		valid = (state & BM_VALID) && (state & BM_TAG_VALID);

		memset(&key, 0, sizeof(key));
		if (valid)
		{
			key.node = buf->tag.rnode;
			key.fork = buf->tag.forkNum;
		}
		UnlockBufHdr(buf, state);
		if (valid)
		{
			bool		known;
			char	   *e = hash_search(counts, &key, HASH_ENTER, &known);
			int64	   *n = (int64 *) (e + sizeof(ResidencyKey));

			*n = known ? *n + 1 : 1;
		}
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return counts;
}

/*
 * One pass: find every fork, count its OS-cached pages from the cursor on
 * until max_pages OS pages were examined, count shared_buffers, publish.
 * Returns the OS pages examined.  The caller has the turn (claim_pass()).
 */
static int64
run_pass(int64 max_pages)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "qdtt residency pass",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int64		os_page = sysconf(_SC_PAGESIZE);
	HTAB	   *found;
	HTAB	   *sb;
	HASH_SEQ_STATUS seq;
	FoundFork  *f;
	FoundFork **sorted;
	int			nforks = 0,
				start = 0,
				k;
	int64		examined = 0;
	int64		untracked = 0;
	ResidencyKey cursor;
	bool		cursor_valid;
	ResidencyEntry *e;

	found = find_forks();

	/* the OS count, in key order from where the last pass stopped */
	sorted = palloc(sizeof(FoundFork *) * Max(hash_get_num_entries(found), 1));
	hash_seq_init(&seq, found);
	while ((f = hash_seq_search(&seq)) != NULL)
		sorted[nforks++] = f;
	qsort(sorted, nforks, sizeof(FoundFork *), cmp_found);
	LWLockAcquire(table_lock, LW_SHARED);
	cursor = shared->cursor;
	cursor_valid = shared->cursor_valid;
	LWLockRelease(table_lock);
	if (cursor_valid)
		while (start < nforks && cmp_key(&sorted[start]->key, &cursor) < 0)
			start++;
	if (start >= nforks)
		start = 0;
	memset(&cursor, 0, sizeof(cursor));
	cursor_valid = false;
	for (k = 0; k < nforks; k++)
	{
		FoundFork  *ff = sorted[(start + k) % nforks];
		char	   *base;
		int64		resident = 0;
		int64		gaps = 0;
		uint32		seg;

		if (k > 0 && examined >= max_pages)
		{
			cursor = ff->key;	/* the next pass starts here */
			cursor_valid = true;
			break;
		}
		base = relpathbackend(ff->key.node, InvalidBackendId, ff->key.fork);
		for (seg = 0; seg < ff->nsegs; seg++)
		{
			char		path[MAXPGPATH];
			int64		pages,
						seg_gaps;

			if (seg == 0)
				strlcpy(path, base, sizeof(path));
			else
				snprintf(path, sizeof(path), "%s.%u", base, seg);
			resident += os_resident_pages(path, &pages, &seg_gaps);
			gaps += seg_gaps;
			examined += pages;
		}
		pfree(base);
		ff->os_blocks = Min(resident * os_page / BLCKSZ, ff->blocks);
		ff->os_gaps = gaps;
		CHECK_FOR_INTERRUPTS();
	}

	sb = count_shared_buffers();

	/* the largest forks first, should the table be too small for all */
	qsort(sorted, nforks, sizeof(FoundFork *), cmp_size);

	/* publish: forget the forks whose files are gone, then enter the found */
	LWLockAcquire(table_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, shared_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (hash_search(found, &e->key, HASH_FIND, NULL) == NULL)
			hash_search(shared_hash, &e->key, HASH_REMOVE, NULL);
	for (k = 0; k < nforks; k++)
	{
		bool		isnew = false;
		char	   *c;

		f = sorted[k];
		/* no more forks than the table was sized for */
		e = hash_search(shared_hash, &f->key, HASH_FIND, NULL);
		if (e == NULL && hash_get_num_entries(shared_hash) < qdtt_residency_max_relations)
		{
			e = hash_search(shared_hash, &f->key, HASH_ENTER_NULL, NULL);
			isnew = (e != NULL);
		}
		if (e == NULL)
		{
			untracked++;
			continue;
		}
		if (isnew)
		{
			e->os_blocks = -1;
			e->os_gaps = 0;
			e->sampled_at = 0;
		}
		e->blocks = f->blocks;
		c = hash_search(sb, &f->key, HASH_FIND, NULL);
		e->sb_blocks = c ? Min(*(int64 *) (c + sizeof(ResidencyKey)), f->blocks) : 0;
		if (f->os_blocks >= 0)
		{
			e->os_blocks = f->os_blocks;
			e->os_gaps = f->os_gaps;
			e->sampled_at = GetCurrentTimestamp();
		}
		else if (e->os_blocks > e->blocks)
		{
			e->os_blocks = e->blocks;	/* truncated since */
			e->os_gaps = Min(e->os_gaps, e->blocks);
		}
	}
	shared->untracked = untracked;
	shared->published_at = GetCurrentTimestamp();
	shared->cursor = cursor;
	shared->cursor_valid = cursor_valid;
	LWLockRelease(table_lock);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return examined;
}

/*
 * Take the turn to run a pass: false while another live process has it.
 * The turn is an atomic pid, not a lock, so that a pass stays cancellable.
 */
static bool
claim_pass(void)
{
	uint32		holder = 0;

	if (pg_atomic_compare_exchange_u32(&shared->pass_pid, &holder, (uint32) MyProcPid))
		return true;
	if (holder == (uint32) MyProcPid)
		return true;
	/* a process that died in a pass leaves its turn behind */
	if (kill((pid_t) holder, 0) != 0 && errno == ESRCH)
		return pg_atomic_compare_exchange_u32(&shared->pass_pid, &holder, (uint32) MyProcPid);
	return false;
}

static void
release_pass(void)
{
	uint32		mine = (uint32) MyProcPid;

	(void) pg_atomic_compare_exchange_u32(&shared->pass_pid, &mine, 0);
}

/* A pass if this process gets the turn; -1 if another one has it. */
static int64
sample_pass(int64 max_pages)
{
	int64		examined = -1;

	if (!claim_pass())
		return -1;
	PG_TRY();
	{
		examined = run_pass(max_pages);
	}
	PG_FINALLY();
	{
		release_pass();
	}
	PG_END_TRY();
	return examined;
}

/* ------------------------------------------------------------------------
 * The worker
 * ------------------------------------------------------------------------
 */

void
qdtt_residency_main(Datum arg)
{
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* a context of our own: each pass makes and drops one below it */
	MemoryContextSwitchTo(AllocSetContextCreate(TopMemoryContext, "qdtt residency sampler",
												ALLOCSET_DEFAULT_SIZES));

	for (;;)
	{
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (qdtt_residency_interval > 0)
			(void) sample_pass(qdtt_residency_max_pages);
		/* 0 turns sampling off: wake up now and then for a reload */
		wait_ms = (qdtt_residency_interval > 0) ? qdtt_residency_interval * 1000L : 60000L;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* _PG_init, when preloaded: the GUCs' companions, shared memory, the worker. */
void
qdtt_residency_init(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = residency_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = residency_shmem_startup;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 10;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "qdtt_costing");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "qdtt_residency_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "qdtt residency sampler");
	snprintf(worker.bgw_type, BGW_MAXLEN, "qdtt residency sampler");
	RegisterBackgroundWorker(&worker);
}

/* ------------------------------------------------------------------------
 * The planner's question
 * ------------------------------------------------------------------------
 */

/*
 * Where a read of a block of this fork will be served from, as fractions of
 * the fork's blocks at the last pass: *sb in shared_buffers, *os in the OS
 * page cache only.  PostgreSQL reads and writes through the OS page cache,
 * so a block in shared_buffers is taken to be in the page cache as well
 * (double buffering): the OS-only share is the page cache's count less
 * shared_buffers'.  Where the kernel dropped such pages, that errs toward
 * the device, that is, toward the costs the model would charge without
 * residency.  A fork whose OS count is not taken yet has an OS share of 0.
 * *gaps_per_block (unless NULL) gets the runs of blocks outside the page
 * cache a pass over the fork meets, per block of the fork (one run in all
 * before the first OS count).
 *
 * False when nothing is known about the fork (the sampler is not running,
 * has not reached it, or the fork is empty) or the last pass is stale (more
 * than three intervals and a minute old: the sampler stopped, or was
 * turned off after a pass, and the caches may have changed since): the
 * caller prices it as before.  One shared hash probe: planning calls this
 * per base relation.
 */
#define RESIDENCY_STALE_MIN_SECONDS	60
bool
qdtt_residency_fractions(const RelFileNode *node, ForkNumber fork,
						 double *sb, double *os, double *gaps_per_block)
{
	ResidencyKey key;
	ResidencyEntry *e;
	bool		found = false;

	if (shared == NULL)
		return false;
	memset(&key, 0, sizeof(key));
	key.node = *node;
	key.fork = fork;
	LWLockAcquire(table_lock, LW_SHARED);
	e = hash_search(shared_hash, &key, HASH_FIND, NULL);
	if (e != NULL && e->blocks > 0 && shared->published_at != 0 &&
		!TimestampDifferenceExceeds(shared->published_at, GetCurrentStatementStartTimestamp(),
									(3 * qdtt_residency_interval + RESIDENCY_STALE_MIN_SECONDS) * 1000))
	{
		double		blocks = (double) e->blocks;
		double		in_sb = Min((double) e->sb_blocks, blocks);
		double		in_os = (e->os_blocks < 0) ? 0 :
			Min((double) e->os_blocks, blocks);

		*sb = in_sb / blocks;
		*os = Max(in_os - in_sb, 0) / blocks;
		if (gaps_per_block != NULL)
			*gaps_per_block = ((e->os_blocks < 0) ? 1 : (double) e->os_gaps) / blocks;
		found = true;
	}
	LWLockRelease(table_lock);
	return found;
}

/* ------------------------------------------------------------------------
 * SQL
 * ------------------------------------------------------------------------
 */

static void
require_shared_memory(void)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the QDTT residency sampler is not running"),
				 errdetail("Its shared memory exists only when qdtt_costing is loaded at server start."),
				 errhint("Add qdtt_costing to shared_preload_libraries and restart the server.")));
}

/*
 * qdtt_residency(): every tracked fork: tablespace, database, filenode,
 * fork, blocks, shared_buffers_blocks, os_cache_blocks (NULL until its
 * first OS count), sampled_at, the pass's untracked forks and, from 0.3,
 * os_cache_gaps (the runs of blocks outside the page cache; NULL with
 * os_cache_blocks).  The 0.2 function's result has no os_cache_gaps: a
 * library updated before ALTER EXTENSION ... UPDATE fills what the
 * caller's result descriptor has.
 */
Datum
qdtt_residency(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	ResidencyEntry *e;

	require_shared_memory();
	InitMaterializedSRF(fcinfo, 0);
	LWLockAcquire(table_lock, LW_SHARED);
	hash_seq_init(&seq, shared_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[10];
		bool		nulls[10] = {0};

		values[0] = ObjectIdGetDatum(e->key.node.spcNode);
		values[1] = ObjectIdGetDatum(e->key.node.dbNode);
		values[2] = ObjectIdGetDatum(e->key.node.relNode);
		values[3] = CStringGetTextDatum(forkNames[e->key.fork]);
		values[4] = Int64GetDatum(e->blocks);
		values[5] = Int64GetDatum(e->sb_blocks);
		values[6] = Int64GetDatum(e->os_blocks);
		nulls[6] = e->os_blocks < 0;
		values[7] = TimestampTzGetDatum(e->sampled_at);
		nulls[7] = e->sampled_at == 0;
		values[8] = Int64GetDatum(shared->untracked);
		values[9] = Int64GetDatum(e->os_gaps);
		nulls[9] = e->os_blocks < 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(table_lock);
	return (Datum) 0;
}

/*
 * qdtt_sample_residency(): one pass now, in this backend (after the
 * worker's, if one is running; the worker's next pass follows its own
 * schedule); returns the OS pages examined.
 */
Datum
qdtt_sample_residency(PG_FUNCTION_ARGS)
{
	int64		examined;

	require_shared_memory();
	/* the worker's pass is short: wait for it (cancellable) */
	while ((examined = sample_pass(qdtt_residency_max_pages)) < 0)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
	PG_RETURN_INT64(examined);
}
