/*-------------------------------------------------------------------------
 *
 * pax_blocks.c
 *	  Blocks of a pax relation: allocation (the free list, then extension),
 *	  writing a sealed group's blocks, and their tags.
 *
 * Every change is WAL-logged with generic WAL records (a standby or crash
 * recovery replays them without this library), through shared buffers, so
 * checkpoints, checksums and replication treat pax blocks like any other.
 *
 * Write order of a group: its blocks first (new blocks, full-page images),
 * then its directory entry together with the metapage (pax_directory.c).
 * A crash in between leaves blocks no entry points to: space, never wrong
 * rows.  Every block carries its group's tag in pd_prune_xid, so a reader
 * holding an old directory copy notices a block VACUUM freed and reused.
 *
 * Lock order: relation extension lock, then the metapage, then a directory
 * page.
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
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "port/pg_bitutils.h"

#include "pax.h"
#include "pax_minipage.h"

#define PAYLOAD_START	PAX_PAYLOAD_START

/*
 * Extend the relation by n blocks, all in one contiguous run; returns the
 * first.  With bufs, they stay pinned there; without, each is released as
 * soon as it exists (zeroed on disk), so that a run of up to
 * PAX_MAX_GROUP_BLOCKS costs no more pins than a small one: a backend may not
 * pin more buffers than shared_buffers holds.
 */
BlockNumber
pax_extend_blocks(Relation rel, int n, Buffer *bufs)
{
	BlockNumber first = InvalidBlockNumber;
	int			i;

	LockRelationForExtension(rel, ExclusiveLock);
	for (i = 0; i < n; i++)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

		if (i == 0)
			first = BufferGetBlockNumber(buf);
		else if (BufferGetBlockNumber(buf) != first + i)
			elog(ERROR, "pax group blocks of \"%s\" are not contiguous",
				 RelationGetRelationName(rel));
		if (bufs)
			bufs[i] = buf;
		else
			ReleaseBuffer(buf);
	}
	UnlockRelationForExtension(rel, ExclusiveLock);
	return first;
}

/*
 * Pin a block of a run pax_allocate_run() handed out, exclusively locked,
 * for its new contents (what it held before is overwritten whole).
 */
Buffer
pax_pin_new_block(Relation rel, BlockNumber blkno)
{
	return ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_ZERO_AND_LOCK, NULL);
}

/*
 * The oldest transaction id any snapshot of this relation may still treat
 * as running, as a full id (relative to the next one).  (The data horizon
 * leaves out VACUUM backends: a VACUUM of this relation reads a map or
 * bitmap through its directory copy only while the entry naming it is
 * locked, lock_entry_if_current(), and other relations' VACUUMs do not
 * read it.)
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
 * Free extents must lie inside the file: a block handed out past its end
 * would be zeroed in a buffer without extending the file, and a later
 * extension would meet it ("unexpected data beyond EOF").  A free list that
 * names such blocks (one left by a crash in the truncation window fixed in
 * pax_truncate_free_tail()) loses them here, in the caller's WAL record;
 * the rest of an extent that straddles the end is kept.
 */
static void
drop_extents_past_end(Relation rel, PaxMetaPageData *meta)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	uint32		i = 0;

	while (i < meta->nfree)
	{
		PaxFreeExtent *e = &meta->free[i];

		if (e->start >= nblocks)
		{
			*e = meta->free[--meta->nfree];
			continue;
		}
		if (e->start + e->nblocks > nblocks)
			e->nblocks = nblocks - e->start;
		i++;
	}
}

/*
 * Blocks for a new group or row map: n contiguous blocks from the free list
 * when an extent freed before every snapshot is big enough (the lowest
 * such), else (*startp invalid) the caller extends the relation.  Returns
 * the tag the blocks are to carry.  Taking an extent off the free list is
 * logged at once: if we crash before the blocks are referenced, they are
 * lost to reuse, never used twice.
 */
static uint32
take_free_extent(Relation rel, uint32 n, int format, BlockNumber *startp)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	GenericXLogState *state;
	BlockNumber start = InvalidBlockNumber;
	uint32		tag;
	uint32		i;
	int			best = -1;

	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	drop_extents_past_end(rel, meta);
	if (meta->nfree > 0)
	{
		uint64		oldest = U64FromFullTransactionId(oldest_snapshot_fxid(rel));

		/* the lowest that fits: files fill from the front, VACUUM can cut the tail */
		for (i = 0; i < meta->nfree; i++)
			if (meta->free[i].nblocks >= n && meta->free[i].freed_fxid < oldest &&
				(best < 0 || meta->free[i].start < meta->free[best].start))
				best = i;
	}
	if (best >= 0)
	{
		PaxFreeExtent *e = &meta->free[best];

		start = e->start;
		e->start += n;
		e->nblocks -= n;
		if (e->nblocks == 0)
			*e = meta->free[--meta->nfree];
	}
	/* the metapage records the newest format of the table's minipages */
	if (meta->version < (uint32) format)
		meta->version = format;
	tag = meta->next_tag++;
	if (meta->next_tag == 0)
		meta->next_tag = 1;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	*startp = start;
	return tag;
}

/* pax_allocate_blocks() with the n blocks pinned in bufs (unlocked). */
uint32
pax_allocate_blocks(Relation rel, uint32 n, Buffer *bufs, int format)
{
	BlockNumber start;
	uint32		tag = take_free_extent(rel, n, format, &start);
	uint32		i;

	if (start == InvalidBlockNumber)
		pax_extend_blocks(rel, n, bufs);
	else
		for (i = 0; i < n; i++)
		{
			/* nobody can read them now: take them without reading the old contents */
			bufs[i] = pax_pin_new_block(rel, start + i);
			LockBuffer(bufs[i], BUFFER_LOCK_UNLOCK);
		}
	return tag;
}

/*
 * pax_allocate_blocks() of a run none of whose blocks stays pinned: *start
 * is its first block; pax_write_run() (or pax_pin_new_block()) fills it.
 * Groups and row maps of many blocks are written this way.
 */
uint32
pax_allocate_run(Relation rel, uint32 n, int format, BlockNumber *start)
{
	uint32		tag = take_free_extent(rel, n, format, start);

	if (*start == InvalidBlockNumber)
		*start = pax_extend_blocks(rel, n, NULL);
	return tag;
}

/*
 * Extent i grew: join it with an extent it now touches (a run freed
 * between two free ones bridges them), which keeps the newer stamp.
 */
static void
coalesce_free_extents(PaxMetaPageData *meta, uint32 i)
{
	uint32		j = 0;

	while (j < meta->nfree)
	{
		PaxFreeExtent *e = &meta->free[i];
		PaxFreeExtent *o = &meta->free[j];

		if (j != i && (o->start + o->nblocks == e->start || e->start + e->nblocks == o->start))
		{
			e->start = Min(e->start, o->start);
			e->nblocks += o->nblocks;
			e->freed_fxid = Max(e->freed_fxid, o->freed_fxid);
			/* o goes; the last entry takes its place (and may be i) */
			if (i == meta->nfree - 1)
				i = j;
			*o = meta->free[--meta->nfree];
			j = 0;
			continue;
		}
		j++;
	}
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
			coalesce_free_extents(meta, i);
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
 * Lay used bytes of payload into an initialized pax block tagged tag;
 * everything past the payload is the page's hole (zero, left out of WAL
 * images).  The primary and redo of pax's own records (pax_decode.c) fill
 * blocks alike, so that a replayed block equals the written one.
 */
void
pax_fill_block(Page page, const char *payload, Size used, uint32 tag)
{
	Assert(used <= PAX_BLOCK_PAYLOAD);
	PageInit(page, BLCKSZ, 0);
	if (used > 0)
		memcpy((char *) page + PAYLOAD_START, payload, used);
	((PageHeader) page)->pd_lower = PAYLOAD_START + used;
	((PageHeader) page)->pd_prune_xid = tag;
}

/*
 * Write n blocks as full images, block j holding bytes [j * chunk,
 * (j + 1) * chunk) of stream (stream_len bytes) as its payload, each block
 * tagged: the pinned bufs (pins released), or without bufs the run from
 * block start, pinned a record's worth at a time.
 */
static void
write_images(Relation rel, Buffer *bufs, BlockNumber start, uint32 n,
			 const char *stream, Size stream_len, Size chunk, uint32 tag)
{
	Buffer		held[MAX_GENERIC_XLOG_PAGES];
	uint32		i;

	for (i = 0; i < n; i += MAX_GENERIC_XLOG_PAGES)
	{
		uint32		j;
		uint32		end = Min(i + MAX_GENERIC_XLOG_PAGES, n);
		GenericXLogState *state;

		for (j = i; j < end; j++)
		{
			if (bufs)
			{
				held[j - i] = bufs[j];
				LockBuffer(held[j - i], BUFFER_LOCK_EXCLUSIVE);
			}
			else
				held[j - i] = pax_pin_new_block(rel, start + j);
		}
		state = GenericXLogStart(rel);
		for (j = i; j < end; j++)
		{
			Size		off = (Size) j * chunk;
			Size		used = (stream_len > off) ? Min(stream_len - off, chunk) : 0;

			pax_fill_block(GenericXLogRegisterBuffer(state, held[j - i], GENERIC_XLOG_FULL_IMAGE),
						   stream + off, used, tag);
		}
		GenericXLogFinish(state);
		for (j = i; j < end; j++)
			UnlockReleaseBuffer(held[j - i]);
	}
}

/* write_images() of n pinned blocks (bufs; pins released). */
void
pax_write_blocks(Relation rel, Buffer *bufs, uint32 n, const char *stream, Size stream_len,
				 Size chunk, uint32 tag)
{
	write_images(rel, bufs, InvalidBlockNumber, n, stream, stream_len, chunk, tag);
}

/* write_images() of the n-block run pax_allocate_run() gave from start. */
void
pax_write_run(Relation rel, BlockNumber start, uint32 n, const char *stream, Size stream_len,
			  Size chunk, uint32 tag)
{
	write_images(rel, NULL, start, n, stream, stream_len, chunk, tag);
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
 * pax_layout_group()); fills in the entry's first_block and tag.  A group
 * some of whose rows logical decoding is to see in its WAL (decode_kinds:
 * one PAX_DECODE_* per row, or NULL for none), when changes are decoded, is
 * logged by pax_decode.c in records of its own, with the columns of desc
 * (the descriptor the rows were encoded under).
 */
void
pax_write_group_blocks(Relation rel, PaxGroupEntry *entry, const char *stream, int format,
					   TupleDesc desc, const uint8 *decode_kinds)
{
	if (entry->nblocks == 0)
	{
		entry->first_block = InvalidBlockNumber;
		entry->tag = 0;
		return;
	}
	entry->tag = pax_allocate_run(rel, entry->nblocks, format, &entry->first_block);
	if (decode_kinds != NULL && pax_logical_delta(rel))
		pax_log_group_blocks(rel, entry, stream, group_stream_len(entry), desc,
							 decode_kinds);
	else
		pax_write_run(rel, entry->first_block, entry->nblocks, stream,
					  group_stream_len(entry), PAX_BLOCK_PAYLOAD, entry->tag);
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
	pax_corrupted(rel, blkno, "block of the pax group its directory entry names");
}

/*
 * Does a transaction other than ours hold a lock on the relation that
 * conflicts with mode?  AccessExclusiveLock: any lock at all.  A scan holds
 * its lock while it uses a directory copy, and a writer holds its lock from
 * the moment it takes blocks off the free list until its directory entry
 * names them.
 */
static bool
relation_locked_elsewhere(Relation rel, LOCKMODE mode)
{
	LOCKTAG		tag;
	int			n;

	if (RelationUsesLocalBuffers(rel))
		return false;
	SET_LOCKTAG_RELATION(tag, rel->rd_lockInfo.lockRelId.dbId,
						 rel->rd_lockInfo.lockRelId.relId);
	pfree(GetLockConflicts(&tag, mode, &n));
	return n > 0;
}

/*
 * May a standby's snapshot hold back the horizon (hot_standby_feedback
 * through a walsender, whose xmin it sets, or a replication slot's xmin)?
 * Then a snapshot as old as a free's stamp may be a standby query's that
 * read the directory before the free, and only the strict rule of
 * PaxFreeExtent protects it.  A standby never reads a temporary table.
 */
static bool
standby_may_hold_horizon(Relation rel)
{
	TransactionId xmin,
				catalog_xmin;
	int			i;

	if (RelationUsesLocalBuffers(rel))
		return false;
	ProcArrayGetReplicationSlotXmin(&xmin, &catalog_xmin);
	if (TransactionIdIsValid(xmin))
		return true;
	for (i = 0; WalSndCtl != NULL && i < max_wal_senders; i++)
	{
		WalSnd	   *walsnd = &WalSndCtl->walsnds[i];
		pid_t		pid;
		PGPROC	   *proc;

		SpinLockAcquire(&walsnd->mutex);
		pid = walsnd->pid;
		SpinLockRelease(&walsnd->mutex);
		if (pid == 0)
			continue;
		/* (a walsender that just started or ended: assume feedback) */
		proc = BackendPidGetProc(pid);
		if (proc == NULL || TransactionIdIsValid(((volatile PGPROC *) proc)->xmin))
			return true;
	}
	return false;
}

/*
 * The stamp up to which free extents may be reused now, by the rule of
 * PaxFreeExtent (stamps before the oldest snapshot), or, when no other
 * transaction has the relation open and no standby can hold the horizon
 * back, stamps up to the oldest snapshot too: a snapshot that old read the
 * directory before the free only if it is still reading the relation, and
 * then it holds a lock on it.  Metapage locked exclusively, so that no
 * directory copy is taken meanwhile.
 */
static uint64
reusable_stamp_limit(Relation rel)
{
	uint64		oldest = U64FromFullTransactionId(oldest_snapshot_fxid(rel));

	/*
	 * Nobody else has the relation open: only a standby's snapshot can have
	 * read the directory before a free (this VACUUM's own copy is checked
	 * against the directory before it reads a map: lock_entry_if_current()),
	 * and the data horizon, which counts hot_standby_feedback and slots but
	 * not our own snapshot, stands for it.
	 */
	if (!relation_locked_elsewhere(rel, AccessExclusiveLock) && !standby_may_hold_horizon(rel))
		return oldest;
	return oldest - 1;
}

/*
 * VACUUM, after freeing blocks: make the free extents reusable that may
 * be reused now (reusable_stamp_limit()), so that one VACUUM of a quiet
 * table writes the groups it rewrites into the space of those it rewrote
 * before, and the truncation after it can cut the tail.  The snapshot
 * rule alone waits for a transaction id newer than the free to complete,
 * which on an idle server never happens within the VACUUM.
 */
void
pax_settle_free_space(Relation rel)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	uint64		limit = reusable_stamp_limit(rel);
	uint32		i;
	bool		any = false;

	for (i = 0; i < meta->nfree; i++)
		if (meta->free[i].freed_fxid != 0 && meta->free[i].freed_fxid <= limit)
			any = true;
	if (any)
	{
		GenericXLogState *state = GenericXLogStart(rel);

		meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		for (i = 0; i < meta->nfree; i++)
			if (meta->free[i].freed_fxid <= limit)
				meta->free[i].freed_fxid = 0;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * Could n blocks be allocated from the free list entirely below block
 * `below` now?  VACUUM moves groups from the end of the file into such
 * space, so that the tail it leaves can be truncated.
 */
bool
pax_reusable_space_below(Relation rel, BlockNumber below, uint32 n)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	bool		found = false;
	uint32		i;

	if (meta->nfree > 0)
	{
		uint64		oldest = U64FromFullTransactionId(oldest_snapshot_fxid(rel));

		for (i = 0; i < meta->nfree && !found; i++)
			found = meta->free[i].nblocks >= n && meta->free[i].start + n <= below &&
				meta->free[i].freed_fxid < oldest;
	}
	UnlockReleaseBuffer(metabuf);
	return found;
}

/*
 * Does the directory hold no entry at all (every group VACUUM emptied has
 * been dropped from it) and no delta page take inserts?  Metapage locked.
 */
static bool
directory_is_empty(Relation rel, PaxMetaPageData *meta)
{
	BlockNumber blkno = meta->dir_first;
	uint32		i;

	if (meta->delta_block != InvalidBlockNumber)
		return false;
	/* a writer that may still hold rows in memory (not under our lock, but be sure) */
	for (i = 0; i < meta->nreservations; i++)
		if (TransactionIdIsValid(meta->reservations[i].xid) &&
			TransactionIdIsInProgress(meta->reservations[i].xid))
			return false;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_SHARE);
		PaxDirPageOpaque *op = PaxDirPageGetOpaque(BufferGetPage(buf));
		bool		empty = (op->nentries == 0);

		blkno = op->next;
		UnlockReleaseBuffer(buf);
		if (!empty)
			return false;
	}
	return true;
}

/*
 * Where the run of free extents that ends the file starts (end itself when
 * the last block is in use).  Metapage locked.
 */
static BlockNumber
free_tail_start(PaxMetaPageData *meta, BlockNumber end)
{
	bool		found;

	do
	{
		uint32		i;

		found = false;
		for (i = 0; i < meta->nfree; i++)
			if (meta->free[i].start + meta->free[i].nblocks == end &&
				meta->free[i].start > PAX_METAPAGE_BLKNO)
			{
				end = meta->free[i].start;
				found = true;
			}
	} while (found);
	return end;
}

/* Set bits start .. start + n - 1 of used, within nblocks (used may be NULL). */
static void
mark_used(uint8 *used, BlockNumber nblocks, BlockNumber start, uint32 n)
{
	BlockNumber b;

	for (b = start; used != NULL && b < nblocks && b - start < n; b++)
		used[b / 8] |= (uint8) (1 << (b % 8));
}

#define BLOCK_USED(used, b)	(((used)[(b) / 8] & (1 << ((b) % 8))) != 0)

/*
 * The blocks the relation uses: the metapage, the directory pages from
 * dir_first on, and every group's blocks and row map (a delta page is a
 * group; delta_block too).  Sets their bits in used (may be NULL) and
 * returns the end of the used blocks (the highest + 1); *data_end is the
 * same without the directory pages, *ndir the directory pages.
 */
static BlockNumber
used_blocks(Relation rel, BlockNumber dir_first, BlockNumber delta_block, BlockNumber nblocks,
			uint8 *used, BlockNumber *data_end, int *ndir)
{
	BlockNumber blkno = dir_first;
	BlockNumber end = PAX_METAPAGE_BLKNO + 1;
	BlockNumber dend = PAX_METAPAGE_BLKNO + 1;
	int			npages = 0;

	mark_used(used, nblocks, PAX_METAPAGE_BLKNO, 1);
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buf);
		char	   *p = PageGetContents(page);
		int			i;

		CHECK_FOR_INTERRUPTS();
		mark_used(used, nblocks, blkno, 1);
		end = Max(end, blkno + 1);
		npages++;
		for (i = 0; i < PaxDirPageGetOpaque(page)->nentries; i++)
		{
			PaxGroupEntry *g = pax_next_directory_entry(rel, blkno, page, &p);

			if (g->flags & PAX_GROUP_EMPTY)
				continue;
			if (g->nblocks > 0)
			{
				mark_used(used, nblocks, g->first_block, g->nblocks);
				dend = Max(dend, g->first_block + g->nblocks);
			}
			if (g->row_map != InvalidBlockNumber)
			{
				mark_used(used, nblocks, g->row_map, pax_row_map_blocks(g));
				dend = Max(dend, g->row_map + pax_row_map_blocks(g));
			}
		}
		blkno = PaxDirPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
	if (delta_block != InvalidBlockNumber)
	{
		mark_used(used, nblocks, delta_block, 1);
		dend = Max(dend, delta_block + 1);
	}
	if (data_end)
		*data_end = dend;
	if (ndir)
		*ndir = npages;
	return Max(end, dend);
}

/*
 * The stamp a rebuilt run [start, end) gets: that of the old extents it
 * lies in (the newest), or `stamp` if any of its blocks was on no extent
 * (blocks a full list dropped or a crash lost: freed as of now).
 */
static uint64
rebuilt_run_stamp(const PaxFreeExtent *old, int nold, BlockNumber start, BlockNumber end,
				  uint64 stamp)
{
	uint64		newest = 0;
	BlockNumber covered = 0;
	int			i;

	for (i = 0; i < nold; i++)
	{
		BlockNumber s = Max(start, old[i].start);
		BlockNumber e = Min(end, old[i].start + old[i].nblocks);

		if (s < e)
		{
			covered += e - s;
			newest = Max(newest, old[i].freed_fxid);
		}
	}
	return covered == end - start ? newest : Max(newest, stamp);
}

/*
 * Make the free list again from the blocks nothing uses, the largest runs
 * first (as many as it holds): below the end of the used blocks (the
 * truncation cuts the rest), or to the end of the file (to_end).  A list
 * that overflowed (a VACUUM freeing more runs than it holds) or a crash
 * between an allocation and its entry left blocks nobody uses and nobody
 * can allocate; they come back here, stamped `stamp` (0: reusable at
 * once); blocks the list held keep their stamps.  The caller has made sure
 * that no block is in a writer's hands between the free list and its
 * directory entry; the metapage stays locked throughout, so none is taken
 * meanwhile.  Returns the end of the used blocks.  *lsn: the record's.
 */
static BlockNumber
rebuild_free_list(Relation rel, Buffer metabuf, uint64 stamp, bool to_end, XLogRecPtr *lsn)
{
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	/* a bit a block: 512 MB for the largest relation PostgreSQL allows */
	uint8	   *used = MemoryContextAllocHuge(CurrentMemoryContext, nblocks / 8 + 1);
	BlockNumber end,
				scan_end;
	PaxFreeExtent runs[PAX_MAX_FREE_EXTENTS];
	PaxFreeExtent old[PAX_MAX_FREE_EXTENTS];
	int			nold = meta->nfree;
	int			nruns = 0;
	BlockNumber b = PAX_METAPAGE_BLKNO + 1;
	GenericXLogState *state;
	int			i;

	memcpy(old, meta->free, sizeof(PaxFreeExtent) * nold);
	memset(used, 0, nblocks / 8 + 1);
	end = Min(used_blocks(rel, meta->dir_first, meta->delta_block, nblocks, used, NULL, NULL),
			  nblocks);
	scan_end = to_end ? nblocks : end;
	while (b < scan_end)
	{
		BlockNumber s;
		int			smallest = 0;

		if (BLOCK_USED(used, b))
		{
			b++;
			continue;
		}
		s = b;
		while (b < scan_end && !BLOCK_USED(used, b))
			b++;
		/* keep the largest runs: a new one replaces the smallest kept */
		if (nruns < PAX_MAX_FREE_EXTENTS)
			smallest = nruns++;
		else
		{
			for (i = 1; i < nruns; i++)
				if (runs[i].nblocks < runs[smallest].nblocks)
					smallest = i;
			if (runs[smallest].nblocks >= b - s)
				continue;
		}
		runs[smallest].start = s;
		runs[smallest].nblocks = b - s;
		runs[smallest].freed_fxid = stamp == 0 ? 0 : rebuilt_run_stamp(old, nold, s, b, stamp);
	}
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->nfree = nruns;
	memcpy(meta->free, runs, sizeof(PaxFreeExtent) * nruns);
	*lsn = GenericXLogFinish(state);
	pfree(used);
	return end;
}

/*
 * A free list that filled up dropped runs it could not hold (their blocks
 * stay allocated, used by nothing): VACUUM's moves toward the front need
 * them back.  When the list is full and no other transaction holds a lock
 * on the relation that a writer or row locker holds (anything above
 * AccessShareLock: those are the only ones that allocate), rebuild it,
 * blocks it held keeping their stamps, those it lost stamped as freed now
 * (readers may still hold directory copies naming them).  True if rebuilt.
 */
bool
pax_recover_free_space(Relation rel)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	XLogRecPtr	lsn;
	bool		rebuilt = false;

	if (PaxPageGetMeta(BufferGetPage(metabuf))->nfree >= PAX_MAX_FREE_EXTENTS &&
		!relation_locked_elsewhere(rel, ExclusiveLock))
	{
		(void) rebuild_free_list(rel, metabuf,
								 U64FromFullTransactionId(ReadNextFullTransactionId()),
								 true, &lsn);
		rebuilt = true;
	}
	UnlockReleaseBuffer(metabuf);
	return rebuilt;
}

/*
 * Does the file end in free blocks, or hold no rows at all?  (Looked at
 * without the relation's exclusive lock; pax_truncate_free_tail() looks
 * again under it.)
 */
static bool
truncatable_tail(Relation rel)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber dir_first = meta->dir_first;
	BlockNumber delta_block = meta->delta_block;
	BlockNumber data_end;
	int			ndir;
	bool		result;

	result = free_tail_start(meta, nblocks) < nblocks ||
		(nblocks > PAX_METAPAGE_BLKNO + 1 && directory_is_empty(rel, meta));
	UnlockReleaseBuffer(metabuf);
	if (result)
		return true;

	/*
	 * Or would it, once the directory pages moved down?  (The walk, without
	 * the metapage's lock, which writers need, sees a directory that may be
	 * changing: a guess, checked under the exclusive lock.)
	 */
	(void) used_blocks(rel, dir_first, delta_block, nblocks, NULL, &data_end, &ndir);
	return data_end + ndir < nblocks;
}

/*
 * Give the free extents at the end of the relation back to the file
 * system, as heap's VACUUM truncates its empty tail.  Needs the relation's
 * AccessExclusiveLock, taken without waiting (none: try at the next
 * VACUUM): no scan of ours can then hold a directory copy that names the
 * blocks, and the lock is WAL-logged, so a standby cancels its queries on
 * the relation before it replays the truncation, as for heap.  The free
 * list loses the extents before the file shrinks: a crash in between
 * leaves unlisted blocks (space), never listed blocks past the end.  A
 * relation left without rows goes back to its metapage alone.
 * Returns the blocks removed.
 */
BlockNumber
pax_truncate_free_tail(Relation rel)
{
	Buffer		metabuf;
	PaxMetaPageData *meta;
	GenericXLogState *state;
	BlockNumber nblocks;
	BlockNumber end;
	XLogRecPtr	lsn;

	/*
	 * Only when there is something to cut: the lock is WAL-logged, and a
	 * standby's queries on the table wait for its replay or are cancelled.
	 */
	if (!truncatable_tail(rel))
		return 0;
	if (!ConditionalLockRelation(rel, AccessExclusiveLock))
		return 0;
	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	meta = PaxPageGetMeta(BufferGetPage(metabuf));
	nblocks = RelationGetNumberOfBlocks(rel);
	if (directory_is_empty(rel, meta))
	{
		/* no rows at all: back to a new relation's single metapage */
		state = GenericXLogStart(rel);
		meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		meta->dir_first = meta->dir_last = InvalidBlockNumber;
		meta->ngroups = 0;
		meta->nfree = 0;
		meta->dir_version++;
		lsn = GenericXLogFinish(state);
		end = PAX_METAPAGE_BLKNO + 1;
		UnlockReleaseBuffer(metabuf);
	}
	else
	{
		/*
		 * Nobody else reads the relation now: every block no entry names
		 * is free and reusable at once.  The directory moves into the
		 * lowest of them when it lies higher; then the end of the used
		 * blocks is where the file ends.
		 */
		(void) rebuild_free_list(rel, metabuf, 0, false, &lsn);
		UnlockReleaseBuffer(metabuf);
		pax_relocate_directory(rel);
		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
		end = rebuild_free_list(rel, metabuf, 0, false, &lsn);
		UnlockReleaseBuffer(metabuf);
	}

	/*
	 * The shorter free list must be durable before the file shrinks:
	 * RelationTruncate() flushes its WAL first only for forks that point
	 * into the main fork (FSM, VM), and after a crash in between the free
	 * list would hand out blocks past the end of the file.
	 */
	if (end < nblocks && RelationNeedsWAL(rel))
		XLogFlush(lsn);
	if (end < nblocks)
		RelationTruncate(rel, end);
	UnlockRelation(rel, AccessExclusiveLock);
	return end < nblocks ? nblocks - end : 0;
}
