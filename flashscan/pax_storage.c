/*-------------------------------------------------------------------------
 *
 * pax_storage.c
 *	  Blocks of a pax relation: the metapage, the group directory, writing
 *	  a sealed group, reading minipages, group visibility and freezing.
 *
 * Every change is WAL-logged with generic WAL records (a standby or crash
 * recovery replays them without this library), through shared buffers, so
 * checkpoints, checksums and replication treat pax blocks like any other.
 *
 * Write order of a group: its blocks first (new blocks, full-page images),
 * then its directory entry together with the metapage.  A crash in between
 * leaves blocks no entry points to: space, never wrong rows.  The entry
 * carries the writer's xid, so an aborted writer's group is never visible.
 *
 * Lock order: relation extension lock, then the metapage, then a directory
 * page.  The metapage's exclusive lock serializes directory appends and
 * row-number reservations.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/pg_class.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "port/pg_bitutils.h"

#include "pax.h"
#include "pax_minipage.h"

#define PAYLOAD_START	PAX_PAYLOAD_START

static void
corrupted(Relation rel, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("pax table \"%s\": block %u is not a valid %s",
					RelationGetRelationName(rel), blkno, what),
			 errhint("The table may have been written by an incompatible version of flashscan, or damaged.")));
}

/* Format a metapage image. */
static void
build_metapage(Page page, int group_blocks, uint64 dir_version)
{
	PaxMetaPageData *meta;

	PageInit(page, BLCKSZ, 0);
	meta = PaxPageGetMeta(page);
	meta->magic = PAX_MAGIC;
	meta->version = PAX_FORMAT_VERSION;
	meta->group_blocks = group_blocks;
	meta->next_rownum = 0;
	meta->ngroups = 0;
	meta->dir_first = InvalidBlockNumber;
	meta->dir_last = InvalidBlockNumber;
	meta->nreservations = 0;
	meta->dir_version = dir_version;
	meta->next_tag = 1;
	meta->nfree = 0;
	meta->delta_block = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = ((char *) meta - (char *) page) + sizeof(PaxMetaPageData);
}

/* Write a metapage as block 0 of a fork, around shared buffers. */
static void
write_metapage(SMgrRelation srel, const RelFileNode *rnode, ForkNumber fork,
			   bool log, int group_blocks)
{
	PGAlignedBlock buf;
	Page		page = (Page) buf.data;

	build_metapage(page, group_blocks, 0);
	if (log)
		log_newpage((RelFileNode *) rnode, fork, PAX_METAPAGE_BLKNO, page, true);
	PageSetChecksumInplace(page, PAX_METAPAGE_BLKNO);
	smgrextend(srel, fork, PAX_METAPAGE_BLKNO, (char *) page, true);
	/* it bypassed shared buffers, so no checkpoint will write it for us */
	smgrimmedsync(srel, fork);
}

/* Pin and lock the metapage. */
Buffer
pax_lock_metapage(Relation rel, int mode)
{
	Buffer		buf;
	Page		page;

	if (RelationGetNumberOfBlocks(rel) == 0)
		corrupted(rel, PAX_METAPAGE_BLKNO, "pax metapage (the table has no blocks)");
	buf = ReadBuffer(rel, PAX_METAPAGE_BLKNO);
	LockBuffer(buf, mode);
	page = BufferGetPage(buf);
	if (PageIsNew(page) || PaxPageGetMeta(page)->magic != PAX_MAGIC)
		corrupted(rel, PAX_METAPAGE_BLKNO, "pax metapage");
	if (PaxPageGetMeta(page)->version != PAX_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pax table \"%s\" has format version %u, this library reads version %u",
						RelationGetRelationName(rel), PaxPageGetMeta(page)->version,
						PAX_FORMAT_VERSION)));
	return buf;
}

/* Blocks per group for the relation's next groups. */
int
pax_relation_group_blocks(Relation rel)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	int			n = PaxPageGetMeta(BufferGetPage(buf))->group_blocks;

	UnlockReleaseBuffer(buf);
	return Max(PAX_MIN_GROUP_BLOCKS, Min(n, PAX_MAX_GROUP_BLOCKS));
}

/*
 * Format new storage of a pax relation (CREATE TABLE, TRUNCATE, rewrites):
 * a metapage in the main fork, and for an unlogged table in its init fork
 * too, so the table a crash resets it to is a formatted empty one.  The
 * group size is the relation's current one when it already has storage
 * (TRUNCATE keeps it), else flashscan.group_blocks.
 */
void
pax_init_storage(Relation rel, const RelFileNode *newrnode, SMgrRelation srel,
				 char persistence)
{
	int			group_blocks = pax_default_group_blocks;

	if (!RelFileNodeEquals(rel->rd_node, *newrnode) &&
		smgrexists(RelationGetSmgr(rel), MAIN_FORKNUM) &&
		RelationGetNumberOfBlocks(rel) > 0)
		group_blocks = pax_relation_group_blocks(rel);

	write_metapage(srel, newrnode, MAIN_FORKNUM,
				   persistence == RELPERSISTENCE_PERMANENT, group_blocks);
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		write_metapage(srel, newrnode, INIT_FORKNUM, true, group_blocks);
	}
}

/*
 * Refuse a pax table of more attributes than a directory entry can describe
 * (PAX_MAX_COLUMNS), before anything is written for it.
 */
void
pax_check_column_count(Relation rel, int natts)
{
	const char *name = RelationGetRelationName(rel);
	Oid			rewritten;

	if (natts <= PAX_MAX_COLUMNS)
		return;
	/* a rewrite (ALTER TABLE SET ACCESS METHOD) builds "pg_temp_<oid of the table>" */
	if (sscanf(name, "pg_temp_%u", &rewritten) == 1 && get_rel_name(rewritten) != NULL)
		name = get_rel_name(rewritten);
	ereport(ERROR,
			(errcode(ERRCODE_TOO_MANY_COLUMNS),
			 errmsg("tables using access method pax can have at most %d columns",
					PAX_MAX_COLUMNS),
			 errdetail("Table \"%s\" would have %d columns, counting dropped ones.",
					   name, natts),
			 errhint("Use access method heap for this table, or split its columns across tables.")));
}

/*
 * Empty the relation in place (TRUNCATE of a table created in the same
 * transaction): a fresh metapage, then everything after it cut off.
 */
void
pax_truncate_in_place(Relation rel)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	int			group_blocks = PaxPageGetMeta(BufferGetPage(buf))->group_blocks;
	uint64		version = PaxPageGetMeta(BufferGetPage(buf))->dir_version;
	GenericXLogState *state = GenericXLogStart(rel);

	/* the directory version goes on: cached directories must not match */
	build_metapage(GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE),
				   group_blocks, version + 1);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	RelationTruncate(rel, 1);
}

/* Change the group size of the relation's next groups (WAL-logged). */
void
pax_set_relation_group_blocks(Relation rel, int group_blocks)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *state = GenericXLogStart(rel);

	PaxPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0))->group_blocks = group_blocks;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/*
 * Reserve count consecutive row numbers for this transaction; returns the
 * first.  WAL-logged, so a number handed out (and perhaps already in an
 * index) is never handed out again, even after a crash; recorded in the
 * metapage's reservations so that other backends can tell whose unwritten
 * rows a TID may point to.
 */
uint64
pax_reserve_rownums(Relation rel, uint32 count)
{
	TransactionId xid = GetTopTransactionId();
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *state;
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(buf));
	uint64		first = meta->next_rownum;
	int			slot = -1;
	uint32		i;

	if (first + count > (uint64) MaxBlockNumber * PAX_ROWS_PER_TID_BLOCK)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pax table \"%s\" has used up its row numbers",
						RelationGetRelationName(rel)),
				 errhint("Copy it into a new table with CREATE TABLE ... USING pax AS SELECT ...")));
	}
	/* our own entry ending here extends; else a finished writer's is reused */
	for (i = 0; i < meta->nreservations; i++)
	{
		PaxReservation *r = &meta->reservations[i];

		if (r->xid == xid && r->end == first)
		{
			slot = i;
			break;
		}
		if (slot < 0 && (!TransactionIdIsValid(r->xid) ||
						 (r->xid != xid && !TransactionIdIsInProgress(r->xid))))
			slot = i;
	}
	if (slot < 0)
	{
		if (meta->nreservations >= PAX_MAX_RESERVATIONS)
		{
			UnlockReleaseBuffer(buf);
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("pax table \"%s\" has %d transactions writing to it already",
							RelationGetRelationName(rel), PAX_MAX_RESERVATIONS),
					 errhint("Retry when some of them have finished.")));
		}
		slot = -1 - (int) meta->nreservations;	/* a new entry */
	}

	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
	if (slot < 0)
		slot = meta->nreservations++;	/* pd_lower already covers the array */
	if (meta->reservations[slot].xid == xid && meta->reservations[slot].end == first)
		meta->reservations[slot].end = first + count;
	else
	{
		meta->reservations[slot].start = first;
		meta->reservations[slot].end = first + count;
		meta->reservations[slot].xid = xid;
	}
	meta->next_rownum = first + count;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return first;
}

/*
 * The transaction that reserved a row number and may still hold its row in
 * memory, or InvalidTransactionId.  (Once the writer has finished, its rows
 * are either in groups or gone.)
 */
TransactionId
pax_reservation_owner(Relation rel, uint64 rownum)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(buf));
	TransactionId xid = InvalidTransactionId;
	uint32		i;

	for (i = 0; i < meta->nreservations; i++)
		if (rownum >= meta->reservations[i].start && rownum < meta->reservations[i].end)
			xid = meta->reservations[i].xid;
	UnlockReleaseBuffer(buf);
	return xid;
}

/*
 * The metapage's counters: the first row number not yet reserved (every
 * TID below it may exist) and the directory version (a directory read with
 * another one is stale).  Either pointer may be NULL.
 */
void
pax_meta_counters(Relation rel, uint64 *next_rownum, uint64 *dir_version)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(buf));

	if (next_rownum)
		*next_rownum = meta->next_rownum;
	if (dir_version)
		*dir_version = meta->dir_version;
	UnlockReleaseBuffer(buf);
}

/* Pin and lock a directory page, checking that it is one. */
Buffer
pax_lock_directory_page(Relation rel, BlockNumber blkno, int mode)
{
	Buffer		buf = ReadBuffer(rel, blkno);
	Page		page;

	LockBuffer(buf, mode);
	page = BufferGetPage(buf);
	if (PageIsNew(page) || PaxDirPageGetOpaque(page)->page_id != PAX_DIR_PAGE_ID)
		corrupted(rel, blkno, "pax directory page");
	return buf;
}

/*
 * The directory entry at *pos of a locked directory page, after checking
 * that it lies within the page's entries; *pos moves past it.  Every walk
 * over directory entries steps with this, so a damaged page is reported
 * instead of read past.
 */
PaxGroupEntry *
pax_next_directory_entry(Relation rel, BlockNumber blkno, Page page, char **pos)
{
	PaxGroupEntry *g = (PaxGroupEntry *) *pos;
	char	   *end = (char *) page + ((PageHeader) page)->pd_lower;

	if (*pos + PaxGroupEntrySize(0) > end ||
		*pos + PaxGroupEntrySize(g->ncols) > end)
		corrupted(rel, blkno, "pax directory page");
	*pos += PaxGroupEntrySize(g->ncols);
	return g;
}

/* Extend the relation by n blocks, pinned, all in one contiguous run. */
static void
extend_blocks(Relation rel, int n, Buffer *bufs)
{
	int			i;

	LockRelationForExtension(rel, ExclusiveLock);
	for (i = 0; i < n; i++)
	{
		bufs[i] = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
		if (i > 0 && BufferGetBlockNumber(bufs[i]) != BufferGetBlockNumber(bufs[0]) + i)
			elog(ERROR, "pax group blocks of \"%s\" are not contiguous",
				 RelationGetRelationName(rel));
	}
	UnlockRelationForExtension(rel, ExclusiveLock);
}

/*
 * The oldest transaction id any snapshot of this relation may still treat
 * as running, as a full id (relative to the next one).
 */
static FullTransactionId
oldest_snapshot_fxid(Relation rel)
{
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId oldest = GetOldestNonRemovableTransactionId(rel);

	return FullTransactionIdFromU64(U64FromFullTransactionId(next) -
									(uint32) (XidFromFullTransactionId(next) - oldest));
}

/*
 * Blocks for a new group or row map: n contiguous blocks, pinned, from the
 * free list when an extent freed before every snapshot is big enough, else
 * by extending the relation.  Returns the tag the blocks are to carry.
 * Taking an extent off the free list is logged at once: if we crash before
 * the blocks are referenced, they are lost to reuse, never used twice.
 */
uint32
pax_allocate_blocks(Relation rel, uint32 n, Buffer *bufs)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	BlockNumber start = InvalidBlockNumber;
	uint32		tag;
	uint32		i;
	int			best = -1;

	if (meta->nfree > 0)
	{
		uint64		oldest = U64FromFullTransactionId(oldest_snapshot_fxid(rel));

		for (i = 0; i < meta->nfree; i++)
			if (meta->free[i].nblocks >= n && meta->free[i].freed_fxid < oldest &&
				(best < 0 || meta->free[i].nblocks < meta->free[best].nblocks))
				best = i;
	}
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (best >= 0)
	{
		PaxFreeExtent *e = &meta->free[best];

		start = e->start;
		e->start += n;
		e->nblocks -= n;
		if (e->nblocks == 0)
			*e = meta->free[--meta->nfree];
	}
	tag = meta->next_tag++;
	if (meta->next_tag == 0)
		meta->next_tag = 1;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);

	if (start == InvalidBlockNumber)
		extend_blocks(rel, n, bufs);
	else
		for (i = 0; i < n; i++)
		{
			/* nobody can read them now: take them without reading the old contents */
			bufs[i] = ReadBufferExtended(rel, MAIN_FORKNUM, start + i, RBM_ZERO_AND_LOCK, NULL);
			LockBuffer(bufs[i], BUFFER_LOCK_UNLOCK);
		}
	return tag;
}

/*
 * Add extents to the free list, stamped with the next transaction id (see
 * PaxFreeExtent), in the caller's generic WAL record on the metapage.
 * Adjacent extents merge; when the list is full the smallest extent is
 * dropped (its blocks stay allocated: space, never wrong rows).
 */
void
pax_free_blocks(PaxMetaPageData *meta, BlockNumber start, uint32 nblocks)
{
	uint64		now = U64FromFullTransactionId(ReadNextFullTransactionId());
	uint32		i;

	if (nblocks == 0 || start == InvalidBlockNumber)
		return;
	for (i = 0; i < meta->nfree; i++)
	{
		PaxFreeExtent *e = &meta->free[i];

		if (e->start + e->nblocks == start || start + nblocks == e->start)
		{
			e->start = Min(e->start, start);
			e->nblocks += nblocks;
			e->freed_fxid = now;
			return;
		}
	}
	if (meta->nfree == PAX_MAX_FREE_EXTENTS)
	{
		int			smallest = 0;

		for (i = 1; i < meta->nfree; i++)
			if (meta->free[i].nblocks < meta->free[smallest].nblocks)
				smallest = i;
		if (meta->free[smallest].nblocks >= nblocks)
			return;
		meta->free[smallest] = meta->free[--meta->nfree];
	}
	meta->free[meta->nfree].start = start;
	meta->free[meta->nfree].nblocks = nblocks;
	meta->free[meta->nfree].freed_fxid = now;
	meta->nfree++;
}

/*
 * Write n pinned blocks as full images, block j holding bytes [j * chunk,
 * (j + 1) * chunk) of stream (stream_len bytes) as its payload, each block
 * tagged; releases the pins.  Everything past a block's payload is its
 * hole, which generic WAL neither logs nor keeps.
 */
void
pax_write_blocks(Relation rel, Buffer *bufs, uint32 n, const char *stream, Size stream_len,
				 Size chunk, uint32 tag)
{
	uint32		i;

	for (i = 0; i < n; i += MAX_GENERIC_XLOG_PAGES)
	{
		uint32		j;
		uint32		end = Min(i + MAX_GENERIC_XLOG_PAGES, n);
		GenericXLogState *state = GenericXLogStart(rel);

		for (j = i; j < end; j++)
		{
			Size		off = (Size) j * chunk;
			Size		used = (stream_len > off) ? Min(stream_len - off, chunk) : 0;
			Page		page;

			LockBuffer(bufs[j], BUFFER_LOCK_EXCLUSIVE);
			page = GenericXLogRegisterBuffer(state, bufs[j], GENERIC_XLOG_FULL_IMAGE);
			PageInit(page, BLCKSZ, 0);
			memcpy((char *) page + PAYLOAD_START, stream + off, used);
			/* the unused tail is the page's hole: zero, left out of the images */
			((PageHeader) page)->pd_lower = PAYLOAD_START + used;
			((PageHeader) page)->pd_prune_xid = tag;
		}
		GenericXLogFinish(state);
		for (j = i; j < end; j++)
			UnlockReleaseBuffer(bufs[j]);
	}
}

static int
cmp_group_rownum(const void *a, const void *b)
{
	const PaxGroupEntry *ga = *(PaxGroupEntry *const *) a;
	const PaxGroupEntry *gb = *(PaxGroupEntry *const *) b;

	if (ga->first_rownum != gb->first_rownum)
		return (ga->first_rownum < gb->first_rownum) ? -1 : 1;
	return 0;
}

/* Length of a group's payload stream (its minipages and presence bitmap). */
static Size
group_stream_len(PaxGroupEntry *entry)
{
	Size		len = 0;
	int			c;

	for (c = 0; c < entry->ncols; c++)
		len = Max(len, (Size) entry->cols[c].offset + entry->cols[c].nbytes);
	if (PaxGroupIsSparse(entry))
		len = Max(len, (Size) entry->present_offset + (entry->nrows + 7) / 8);
	return len;
}

/*
 * Write a group's blocks (stream holds entry->nblocks payloads laid out by
 * pax_layout_group()); fills in the entry's first_block and tag.
 */
void
pax_write_group_blocks(Relation rel, PaxGroupEntry *entry, const char *stream)
{
	Buffer	   *bufs = palloc(sizeof(Buffer) * Max(entry->nblocks, 1));

	if (entry->nblocks == 0)
	{
		entry->first_block = InvalidBlockNumber;
		entry->tag = 0;
		pfree(bufs);
		return;
	}
	entry->tag = pax_allocate_blocks(rel, entry->nblocks, bufs);
	entry->first_block = BufferGetBlockNumber(bufs[0]);
	pax_write_blocks(rel, bufs, entry->nblocks, stream, group_stream_len(entry),
					 PAX_BLOCK_PAYLOAD, entry->tag);
	pfree(bufs);
}

/*
 * Add a group's entry to the last directory page (or a new one), with the
 * metapage, which the caller holds exclusively locked, in one WAL record.
 * A valid delta_block becomes the metapage's delta page in the same record.
 */
void
pax_add_directory_entry(Relation rel, Buffer metabuf, PaxGroupEntry *entry,
						BlockNumber delta_block)
{
	Size		entry_size = PaxGroupEntrySize(entry->ncols);
	Buffer		lastbuf = InvalidBuffer,
				newbuf = InvalidBuffer;
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	Page		target;

	/* an entry larger than an empty page would be written past it */
	pax_check_column_count(rel, entry->ncols);
	Assert(entry_size <= BLCKSZ - MAXALIGN(SizeOfPageHeaderData) -
		   MAXALIGN(sizeof(PaxDirPageOpaque)));

	if (meta->dir_last != InvalidBlockNumber)
	{
		Page		lp;

		lastbuf = pax_lock_directory_page(rel, meta->dir_last, BUFFER_LOCK_EXCLUSIVE);
		lp = BufferGetPage(lastbuf);
		if (((PageHeader) lp)->pd_upper - ((PageHeader) lp)->pd_lower < entry_size)
		{
			extend_blocks(rel, 1, &newbuf);
			LockBuffer(newbuf, BUFFER_LOCK_EXCLUSIVE);
		}
	}
	else
	{
		extend_blocks(rel, 1, &newbuf);
		LockBuffer(newbuf, BUFFER_LOCK_EXCLUSIVE);
	}

	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (BufferIsValid(newbuf))
	{
		BlockNumber newblk = BufferGetBlockNumber(newbuf);
		PaxDirPageOpaque *op;

		target = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		PageInit(target, BLCKSZ, sizeof(PaxDirPageOpaque));
		op = PaxDirPageGetOpaque(target);
		op->next = InvalidBlockNumber;
		op->nentries = 0;
		op->page_id = PAX_DIR_PAGE_ID;
		if (BufferIsValid(lastbuf))
			PaxDirPageGetOpaque(GenericXLogRegisterBuffer(state, lastbuf, 0))->next = newblk;
		else
			meta->dir_first = newblk;
		meta->dir_last = newblk;
	}
	else
		target = GenericXLogRegisterBuffer(state, lastbuf, 0);
	memcpy((char *) target + ((PageHeader) target)->pd_lower, entry, entry_size);
	((PageHeader) target)->pd_lower += entry_size;
	PaxDirPageGetOpaque(target)->nentries++;
	meta->ngroups++;
	meta->dir_version++;
	meta->next_rownum = Max(meta->next_rownum, entry->first_rownum + entry->nrows);
	if (delta_block != InvalidBlockNumber)
		meta->delta_block = delta_block;
	GenericXLogFinish(state);

	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(lastbuf))
		UnlockReleaseBuffer(lastbuf);
}

/*
 * Write a sealed group: its blocks, its row map if states is not NULL (one
 * state per row, tagged like the group's blocks), then its entry.
 */
void
pax_append_group(Relation rel, PaxGroupEntry *entry, const char *stream,
				 const PaxRowState *states)
{
	Buffer		metabuf;

	pax_write_group_blocks(rel, entry, stream);
	if (states)
	{
		uint32		n = PaxRowMapBlocks(entry->nrows);
		Buffer	   *bufs = palloc(sizeof(Buffer) * n);

		(void) pax_allocate_blocks(rel, n, bufs);
		entry->row_map = BufferGetBlockNumber(bufs[0]);
		pax_write_blocks(rel, bufs, n, (const char *) states,
						 sizeof(PaxRowState) * entry->nrows, PAX_ROW_MAP_CHUNK, entry->tag);
		pfree(bufs);
	}
	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	pax_add_directory_entry(rel, metabuf, entry, InvalidBlockNumber);
	UnlockReleaseBuffer(metabuf);
}

typedef struct DirItem
{
	PaxGroupEntry *g;
	BlockNumber blk;
	uint16		off;
} DirItem;

static int
cmp_dir_item(const void *a, const void *b)
{
	return cmp_group_rownum(&((const DirItem *) a)->g, &((const DirItem *) b)->g);
}

/*
 * The directory as it is now, sorted by row number, in cxt, without the
 * entries of groups VACUUM emptied.  A group appended after the caller took
 * its snapshot may or may not be included; either way it is invisible to
 * that snapshot.
 */
PaxDirectory *
pax_read_directory(Relation rel, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PaxDirectory *dir = palloc0(sizeof(PaxDirectory));
	Buffer		buf;
	BlockNumber blkno;
	int			cap = 16;
	int			i;
	DirItem    *items = palloc(sizeof(DirItem) * cap);

	dir->cxt = cxt;
	dir->natts = RelationGetDescr(rel)->natts;
	buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	blkno = PaxPageGetMeta(BufferGetPage(buf))->dir_first;
	dir->version = PaxPageGetMeta(BufferGetPage(buf))->dir_version;
	UnlockReleaseBuffer(buf);

	while (blkno != InvalidBlockNumber)
	{
		Page		page;
		PaxDirPageOpaque *op;
		char	   *p;

		CHECK_FOR_INTERRUPTS();
		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		op = PaxDirPageGetOpaque(page);
		p = PageGetContents(page);
		for (i = 0; i < op->nentries; i++)
		{
			uint16		off = (uint16) (p - (char *) page);
			PaxGroupEntry *g = pax_next_directory_entry(rel, blkno, page, &p);
			Size		sz = PaxGroupEntrySize(g->ncols);

			if (!(g->flags & PAX_GROUP_EMPTY))
			{
				if (dir->ngroups == cap)
				{
					cap *= 2;
					items = repalloc(items, sizeof(DirItem) * cap);
				}
				items[dir->ngroups].g = palloc(sz);
				memcpy(items[dir->ngroups].g, g, sz);
				items[dir->ngroups].blk = blkno;
				items[dir->ngroups].off = off;
				dir->ngroups++;
			}
		}
		blkno = op->next;
		UnlockReleaseBuffer(buf);
	}
	qsort(items, dir->ngroups, sizeof(DirItem), cmp_dir_item);
	dir->groups = palloc(sizeof(PaxGroupEntry *) * Max(dir->ngroups, 1));
	dir->dir_blocks = palloc(sizeof(BlockNumber) * Max(dir->ngroups, 1));
	dir->dir_offsets = palloc(sizeof(uint16) * Max(dir->ngroups, 1));
	for (i = 0; i < dir->ngroups; i++)
	{
		dir->groups[i] = items[i].g;
		dir->dir_blocks[i] = items[i].blk;
		dir->dir_offsets[i] = items[i].off;
	}
	pfree(items);
	MemoryContextSwitchTo(old);
	return dir;
}

/*
 * This backend's copy of a relation's current directory, read again only
 * when the metapage says it changed.  Valid until the next call (for any
 * relation): callers use it and let go.
 */
typedef struct PaxDirCacheEntry
{
	Oid			relid;			/* hash key */
	RelFileNode node;
	PaxDirectory *dir;
} PaxDirCacheEntry;

static HTAB *dir_cache = NULL;

PaxDirectory *
pax_current_directory(Relation rel)
{
	PaxDirCacheEntry *e;
	bool		found;
	uint64		version;

	pax_meta_counters(rel, NULL, &version);
	if (dir_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PaxDirCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		dir_cache = hash_create("pax directories", 16, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(dir_cache, &RelationGetRelid(rel), HASH_ENTER, &found);
	if (found && e->dir != NULL &&
		RelFileNodeEquals(e->node, rel->rd_node) && e->dir->version == version &&
		e->dir->natts == RelationGetDescr(rel)->natts)
		return e->dir;
	if (found && e->dir != NULL)
		MemoryContextDelete(e->dir->cxt);
	e->dir = NULL;
	e->node = rel->rd_node;
	e->dir = pax_read_directory(rel, AllocSetContextCreate(CacheMemoryContext, "pax directory",
														   ALLOCSET_SMALL_SIZES));
	return e->dir;
}

/* Index of the group holding rownum in dir->groups, or -1. */
int
pax_find_group_index(PaxDirectory *dir, uint64 rownum)
{
	return pax_search_groups(dir->groups, dir->ngroups, rownum, false);
}

/*
 * Binary search of groups sorted by row number (by_block false) or by first
 * block (by_block true) for the one whose range holds key: its index, or -1.
 */
int
pax_search_groups(PaxGroupEntry **groups, int ngroups, uint64 key, bool by_block)
{
	int			lo = 0,
				hi = ngroups - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		PaxGroupEntry *g = groups[mid];
		uint64		start = by_block ? g->first_block : g->first_rownum;
		uint64		len = by_block ? g->nblocks : g->nrows;

		if (key < start)
			hi = mid - 1;
		else if (key >= start + len)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/* The group holding a row number, or NULL. */
PaxGroupEntry *
pax_find_group(PaxDirectory *dir, uint64 rownum)
{
	int			i = pax_find_group_index(dir, rownum);

	return (i < 0) ? NULL : dir->groups[i];
}

/*
 * A snapshot older than a group's horizon may need rows VACUUM removed from
 * it.  On the primary no such snapshot exists (the horizon is VACUUM's
 * oldest xmin); on a hot standby the query is cancelled, as heap's recovery
 * conflicts cancel it.
 */
void
pax_check_horizon(PaxGroupEntry *g, Snapshot snapshot)
{
	if (snapshot->snapshot_type == SNAPSHOT_MVCC && TransactionIdIsValid(g->horizon) &&
		TransactionIdPrecedes(snapshot->xmin, g->horizon))
		pax_recovery_conflict();
}

void
pax_recovery_conflict(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("User query might have needed to see rows of a pax table that VACUUM removed or moved.")));
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent VACUUM of a pax table"),
			 errdetail("A snapshot older than the VACUUM read rows it removed or moved."),
			 errhint("Retry the transaction.")));
}

/*
 * Is an insertion by xmin (command cmin) visible to the snapshot?  heap's
 * rules for a tuple's xmin (heapam_visibility.c); for a dirty snapshot an
 * insert in progress is reported in snapshot->xmin.
 */
bool
pax_xmin_visible(TransactionId xmin, CommandId cmin, Snapshot snapshot)
{
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(xmin))
				return cmin < snapshot->curcid;
			if (XidInMVCCSnapshot(xmin, snapshot))
				return false;
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_SELF:
			if (TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
				return false;
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_DIRTY:
			snapshot->xmin = snapshot->xmax = InvalidTransactionId;
			snapshot->speculativeToken = 0;
			if (TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
			{
				snapshot->xmin = xmin;
				return true;
			}
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_ANY:
		case SNAPSHOT_TOAST:
			return true;
		case SNAPSHOT_NON_VACUUMABLE:
			return TransactionIdIsCurrentTransactionId(xmin) ||
				TransactionIdIsInProgress(xmin) || TransactionIdDidCommit(xmin);
		case SNAPSHOT_HISTORIC_MVCC:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pax tables cannot be read with a historic snapshot")));
	return false;				/* keep compiler quiet */
}

/*
 * Is a group's insertion visible to the snapshot?  pax_xmin_visible() for
 * the whole group.  A frozen group keeps its xmin, so that a snapshot on a
 * standby that still sees the writer as running does not see it either.
 * A delta page's rows each have their own xmin: the page as a whole is
 * visible, and pax_visible_rows() / pax_row_visible() decide per row.
 */
bool
pax_group_visible(PaxGroupEntry *g, Snapshot snapshot)
{
	if (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY))
		return false;
	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
		pax_check_horizon(g, snapshot);
	if (PaxGroupIsDelta(g))
		return true;
	if (g->flags & PAX_GROUP_FROZEN)
		return snapshot->snapshot_type != SNAPSHOT_MVCC ||
			!XidInMVCCSnapshot(g->xmin, snapshot);
	return pax_xmin_visible(g->xmin, g->cmin, snapshot);
}

/* Blocks of the group holding a minipage: [*first, *first + *n). */
static void
minipage_blocks(PaxGroupEntry *g, PaxColumnExtent *ext, BlockNumber *first, uint32 *n)
{
	Size		end = (Size) ext->offset + Max(ext->nbytes, 1);

	*first = g->first_block + (BlockNumber) (ext->offset / PAX_BLOCK_PAYLOAD);
	*n = (uint32) ((end + PAX_BLOCK_PAYLOAD - 1) / PAX_BLOCK_PAYLOAD -
				   ext->offset / PAX_BLOCK_PAYLOAD);
}

/*
 * Ask for the blocks of a group's needed minipages to be read ahead
 * (PrefetchBuffer: posix_fadvise for blocks not in shared_buffers), so the
 * device has them in flight while the caller works; returns how many (0
 * when the columns cover the whole group: see below).
 */
uint32
pax_prefetch_columns(Relation rel, PaxGroupEntry *g, const bool *needed, int natts)
{
	uint32		n = 0;
	BlockNumber last = InvalidBlockNumber;
	int			att;

	/*
	 * Reading the whole group is sequential, and the kernel's readahead
	 * serves it better than a posix_fadvise per block.  Anything less is
	 * prefetched block by block: left to readahead, a read of most columns
	 * would pull in the others too (measured: 8 of 16 columns read the whole
	 * table).
	 */
	if (PaxGroupIsDelta(g))
	{
		(void) PrefetchBuffer(rel, MAIN_FORKNUM, g->first_block);
		return 1;
	}
	for (att = 0; att < Min(natts, g->ncols); att++)
	{
		BlockNumber first;
		uint32		nblocks;

		if (!needed[att])
			continue;
		minipage_blocks(g, &g->cols[att], &first, &nblocks);
		n += nblocks;
	}
	if (n >= g->nblocks)
		return 0;

	n = 0;
	for (att = 0; att < Min(natts, g->ncols); att++)
	{
		BlockNumber first;
		uint32		nblocks,
					i;

		if (!needed[att])
			continue;
		minipage_blocks(g, &g->cols[att], &first, &nblocks);
		for (i = 0; i < nblocks; i++)
		{
			if (first + i == last)
				continue;		/* shared with the previous minipage */
			(void) PrefetchBuffer(rel, MAIN_FORKNUM, first + i);
			last = first + i;
			n++;
		}
	}
	return n;
}

/*
 * Is this block still the one a directory entry (tag) points to?  Blocks
 * are reused only when no snapshot that could have read the old entry is
 * left on the primary; a standby query holding one is cancelled.
 */
void
pax_check_block_tag(Relation rel, Page page, BlockNumber blkno, uint32 tag)
{
	if (((PageHeader) page)->pd_prune_xid == tag)
		return;
	if (RecoveryInProgress())
		pax_recovery_conflict();
	corrupted(rel, blkno, "block of the pax group its directory entry names");
}

/*
 * Copy a minipage out of the group's blocks into one MAXALIGNed buffer.
 * *pinned is the block the previous minipage ended in, still pinned: small
 * minipages share blocks, and the next one usually starts there.
 */
static char *
read_minipage(Relation rel, PaxGroupEntry *g, PaxColumnExtent *ext,
			  BufferAccessStrategy strategy, Buffer *pinned, uint64 *blocks_read,
			  PaxColumnData *col)
{
	char	   *buf;
	Size		off = ext->offset;
	Size		done = 0;

	if ((Size) ext->offset + ext->nbytes > (Size) g->nblocks * PAX_BLOCK_PAYLOAD)
		corrupted(rel, g->first_block, "pax group (a minipage runs past its blocks)");
	if (col->bufsize < MAXALIGN(Max(ext->nbytes, 1)))
	{
		if (col->buf)
			pfree(col->buf);
		col->bufsize = MAXALIGN(Max(ext->nbytes, 1));
		col->buf = palloc(col->bufsize);
	}
	buf = col->buf;
	while (done < ext->nbytes)
	{
		BlockNumber blkno = g->first_block + (BlockNumber) (off / PAX_BLOCK_PAYLOAD);
		Size		inblk = off % PAX_BLOCK_PAYLOAD;
		Size		n = Min(ext->nbytes - done, PAX_BLOCK_PAYLOAD - inblk);
		Page		page;

		if (!BufferIsValid(*pinned) || BufferGetBlockNumber(*pinned) != blkno)
		{
			if (BufferIsValid(*pinned))
				ReleaseBuffer(*pinned);
			*pinned = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
			if (blocks_read)
				(*blocks_read)++;
		}
		LockBuffer(*pinned, BUFFER_LOCK_SHARE);
		page = BufferGetPage(*pinned);
		pax_check_block_tag(rel, page, blkno, g->tag);
		if (((PageHeader) page)->pd_lower < PAYLOAD_START + inblk + n)
			corrupted(rel, blkno, "pax group block");
		memcpy(buf + done, (char *) page + PAYLOAD_START + inblk, n);
		LockBuffer(*pinned, BUFFER_LOCK_UNLOCK);
		done += n;
		off += n;
	}
	return buf;
}

/*
 * Decode the needed columns of a group into cols[] (their arrays are reused,
 * and grown in the current memory context, which must therefore live as
 * long as cols), counting the blocks read into *blocks_read.  Columns added after the group was written read
 * as their default (attmissingval) or NULL; dropped columns as NULL.
 */
void
pax_read_columns(Relation rel, PaxGroupEntry *g, TupleDesc desc,
				 const bool *needed, PaxColumnData *cols,
				 BufferAccessStrategy strategy, uint64 *blocks_read)
{
	Buffer		pinned = InvalidBuffer;
	const uint8 *present = NULL;
	int			att;

	for (att = 0; att < desc->natts; att++)
	{
		if (needed[att] && cols[att].capacity < g->nrows)
		{
			if (cols[att].values)
			{
				pfree(cols[att].values);
				pfree(cols[att].isnull);
			}
			cols[att].capacity = Max(g->nrows, 1024);
			cols[att].values = palloc(sizeof(Datum) * cols[att].capacity);
			cols[att].isnull = palloc(sizeof(bool) * cols[att].capacity);
		}
	}
	if (PaxGroupIsDelta(g))
	{
		pax_delta_read_columns(rel, g, desc, needed, cols, strategy, blocks_read);
		return;
	}
	for (att = 0; att < desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		uint32		i;

		if (!needed[att])
			continue;
		if (a->attisdropped || att >= g->ncols)
		{
			bool		isnull = true;
			Datum		d = (Datum) 0;

			if (!a->attisdropped)
				d = getmissingattr(desc, att + 1, &isnull);
			for (i = 0; i < g->nrows; i++)
			{
				cols[att].values[i] = d;
				cols[att].isnull[i] = isnull;
			}
			continue;
		}
		pax_decode_minipage(a, g->nstored,
							read_minipage(rel, g, &g->cols[att], strategy, &pinned,
										  blocks_read, &cols[att]),
							g->cols[att].nbytes, cols[att].values, cols[att].isnull, rel);
		if (PaxGroupIsSparse(g))
		{
			/* spread the stored rows out to their places in the span */
			int64		k = (int64) g->nstored - 1;

			if (present == NULL)
				present = pax_read_presence(rel, g, &pinned, blocks_read);

			for (i = g->nrows; i-- > 0;)
			{
				if (present[i / 8] & (1 << (i % 8)))
				{
					Assert(k >= 0);
					cols[att].values[i] = cols[att].values[k];
					cols[att].isnull[i] = cols[att].isnull[k];
					k--;
				}
				else
				{
					cols[att].values[i] = (Datum) 0;
					cols[att].isnull[i] = true;
				}
			}
		}
	}
	if (BufferIsValid(pinned))
		ReleaseBuffer(pinned);
}

/*
 * Decode one row of a group, at position ri of its span (which must be
 * stored), into values/isnull for the needed columns, reading only what
 * that takes: a fixed-width column's header, null bit and value; a
 * variable-width column's minipage, walked up to the row.  An index fetch
 * of a single row thus reads a few blocks, not every needed column of a
 * group of thousands of rows.  By-reference values point into cols[att].buf
 * (valid until the next read).
 */
void
pax_read_row(Relation rel, PaxGroupEntry *g, TupleDesc desc, const bool *needed,
			 uint32 ri, PaxColumnData *cols, Datum *values, bool *isnull)
{
	Buffer		pinned = InvalidBuffer;
	uint32		k = ri;
	int			att;

	Assert(!PaxGroupIsDelta(g));
	if (PaxGroupIsSparse(g))
	{
		/* the row's place among the stored ones */
		const uint8 *present = pax_read_presence(rel, g, &pinned, NULL);

		k = (uint32) pg_popcount((const char *) present, ri / 8) +
			pg_popcount32(present[ri / 8] & ((1u << (ri % 8)) - 1));
	}
	for (att = 0; att < desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		PaxColumnExtent *ext;

		values[att] = (Datum) 0;
		isnull[att] = true;
		if (!needed[att] || a->attisdropped)
			continue;
		if (att >= g->ncols)
		{
			values[att] = getmissingattr(desc, att + 1, &isnull[att]);
			continue;
		}
		ext = &g->cols[att];
		if (a->attlen > 0)
		{
			PaxColumnExtent part;
			PaxMinipageHeader hdr;
			Size		voff;

			part.offset = ext->offset;
			part.nbytes = sizeof(PaxMinipageHeader);
			if (ext->nbytes < sizeof(PaxMinipageHeader))
				corrupted(rel, g->first_block, "pax group (a minipage is too short)");
			memcpy(&hdr, read_minipage(rel, g, &part, NULL, &pinned, NULL, &cols[att]),
				   sizeof(PaxMinipageHeader));
			voff = pax_minipage_values_offset(a, hdr.nrows, hdr.nnulls > 0);
			if (hdr.nrows != g->nstored || k >= hdr.nrows ||
				voff + (Size) a->attlen * hdr.nrows > ext->nbytes)
				corrupted(rel, g->first_block, "pax group (a minipage does not match its group)");
			if (hdr.nnulls > 0)
			{
				part.offset = ext->offset + sizeof(PaxMinipageHeader) + k / 8;
				part.nbytes = 1;
				if ((*(uint8 *) read_minipage(rel, g, &part, NULL, &pinned, NULL, &cols[att]) >>
					 (k % 8)) & 1)
					continue;	/* NULL */
			}
			part.offset = ext->offset + voff + a->attlen * k;
			part.nbytes = a->attlen;
			values[att] = fetch_att(read_minipage(rel, g, &part, NULL, &pinned, NULL, &cols[att]),
									a->attbyval, a->attlen);
			isnull[att] = false;
		}
		else
			pax_decode_minipage_row(a, g->nstored,
									read_minipage(rel, g, ext, NULL, &pinned, NULL, &cols[att]),
									ext->nbytes, k, &values[att], &isnull[att], rel);
	}
	if (BufferIsValid(pinned))
		ReleaseBuffer(pinned);
}

/*
 * A sparse group's presence bitmap (bit i set: row number first_rownum + i
 * is stored), in memory that lives until the next call.
 */
const uint8 *
pax_read_presence(Relation rel, PaxGroupEntry *g, Buffer *pinned, uint64 *blocks_read)
{
	static PaxColumnData holder;
	PaxColumnExtent ext;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	const uint8 *result;

	ext.offset = g->present_offset;
	ext.nbytes = (g->nrows + 7) / 8;
	result = (const uint8 *) read_minipage(rel, g, &ext, NULL, pinned, blocks_read, &holder);
	MemoryContextSwitchTo(old);
	return result;
}
