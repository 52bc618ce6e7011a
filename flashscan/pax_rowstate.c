/*-------------------------------------------------------------------------
 *
 * pax_rowstate.c
 *	  Per-row states of pax groups: DELETE, UPDATE, row locks, and the
 *	  visibility of single rows.
 *
 * A group's rows are immutable; what happens to a row afterwards lives in
 * the group's row map (pax.h, PaxRowState), allocated on the group's first
 * delete, update or lock.  The protocol is heap's, with the row map slot in
 * place of the tuple header and the map block's buffer lock in place of the
 * heap page's:
 *
 *	- lock the slot's block, classify the slot (free, deleted or locked by a
 *	  transaction still running, deleted by a committed one, by ourselves);
 *	- free: write our xid into it (WAL-logged), done;
 *	- another writer running: unlock, queue on the row's heavyweight tuple
 *	  lock, wait for that transaction, and classify again;
 *	- deleted or updated by a committed transaction: report TM_Deleted or
 *	  TM_Updated with the new version's TID, and the executor does what it
 *	  does for heap (READ COMMITTED re-checks the new version with
 *	  EvalPlanQual; REPEATABLE READ and SERIALIZABLE raise a serialization
 *	  failure).
 *
 * Row locks (SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE,
 * foreign key checks, and the executor's own locks under EvalPlanQual)
 * store the locker's (sub)transaction xid and strength with PAX_ROW_LOCK_ONLY.
 * Lockers whose strengths do not conflict (heap's table: KEY SHARE
 * conflicts only with UPDATE, SHARE with both exclusive modes) share the
 * slot through a MultiXactId (PAX_ROW_MULTI), as heap shares a tuple's
 * xmax.  A DELETE or a key-changing UPDATE waits for every running locker;
 * an UPDATE that keeps the key columns passes FOR KEY SHARE lockers, and a
 * FOR KEY SHARE locker may join it (PaxKeyCheck), as with heap's
 * NoKeyUpdate.
 *
 * VACUUM (pax_vacuum.c) may move a group's rows and states to a new group
 * while we wait; a slot is used only after checking, under the map block's
 * lock, that the directory entry still points to that map.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/multixact.h"
#include "access/subtrans.h"
#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "pax.h"

/* A row's state slot, locked. */
typedef struct RowSlot
{
	Buffer		buf;			/* the map block, exclusively locked */
	PaxRowState *st;			/* the slot in it */
	PaxGroupEntry *g;			/* a copy of the group's entry (palloc'd) */
} RowSlot;

static void release_row_slot(RowSlot *rs);

StaticAssertDecl(PAX_ROW_MAP_CHUNK <= PAX_MAP_STAMP_OFFSET,
				 "a row map block's states leave room for its stamp");

/*
 * Write a row map of nrows states into the run of PaxRowMapBlocks(nrows)
 * blocks from map_first that pax_allocate_run() gave, tagged and stamped
 * (pax.h).
 */
void
pax_write_row_map(Relation rel, BlockNumber map_first, const PaxRowState *states,
				  uint32 nrows, uint32 tag)
{
	uint32		n = PaxRowMapBlocks(nrows);
	char	   *stream = palloc0((Size) Max(n, 1) * PAX_BLOCK_PAYLOAD);
	PaxMapStamp stamp;
	uint32		b;

	stamp.map_first = map_first;
	for (b = 0; b < n; b++)
	{
		uint32		first = b * PAX_ROW_STATES_PER_BLOCK;
		uint32		count = Min(nrows - first, (uint32) PAX_ROW_STATES_PER_BLOCK);

		if (states)
			memcpy(stream + (Size) b * PAX_BLOCK_PAYLOAD, states + first,
				   sizeof(PaxRowState) * count);
		stamp.index = b;
		memcpy(stream + (Size) b * PAX_BLOCK_PAYLOAD + PAX_MAP_STAMP_OFFSET, &stamp, sizeof(stamp));
	}
	pax_write_run(rel, map_first, n, stream, (Size) n * PAX_BLOCK_PAYLOAD, PAX_BLOCK_PAYLOAD, tag);
	pfree(stream);
}

/* Is this block (blkno) block index of the map starting at map_first?  */
void
pax_check_map_stamp(Relation rel, Page page, BlockNumber blkno, BlockNumber map_first,
					uint32 index)
{
	PaxMapStamp stamp;

	memcpy(&stamp, PageGetContents(page) + PAX_MAP_STAMP_OFFSET, sizeof(stamp));
	if ((stamp.map_first == 0 && stamp.index == 0) ||
		(stamp.map_first == map_first && stamp.index == index))
		return;
	if (RecoveryInProgress())
		pax_recovery_conflict();
	pax_corrupted(rel, blkno, "block of the pax row map its directory entry names");
}

/*
 * Row i's state slot in page, block blkno of group g's row map or, for a
 * group that keeps its rows' states, its delta page (which must still be
 * the one the entry names).  NULL for a row the delta page does not hold
 * yet: its state is free.
 */
PaxRowState *
pax_state_slot(Relation rel, const PaxGroupEntry *g, Page page, BlockNumber blkno, uint32 i)
{
	PaxRowState *st;

	if (!PaxGroupHasPageStates(g))
		return (PaxRowState *) PageGetContents(page) + i % PAX_ROW_STATES_PER_BLOCK;
	st = pax_delta_state(rel, page, blkno, i);
	if (PaxDeltaPageGetOpaque(page)->first_rownum != g->first_rownum)
	{
		if (RecoveryInProgress())
			pax_recovery_conflict();
		pax_corrupted(rel, blkno, "pax delta page its directory entry names");
	}
	return st;
}

/* Is this block (blkno) block index b of group g's row map?  (see pax_check_map_stamp()) */
static void
check_state_block(Relation rel, const PaxGroupEntry *g, Page page, BlockNumber blkno, uint32 b)
{
	pax_check_block_tag(rel, page, blkno, g->tag);
	if (!PaxGroupHasPageStates(g))
		pax_check_map_stamp(rel, page, blkno, g->row_map, b);
}

/* The state of a row VACUUM found dead, as a dead-row bitmap's set bit means. */
void
pax_dead_row_state(PaxRowState *st)
{
	memset(st, 0, sizeof(PaxRowState));
	st->xmax = FrozenTransactionId;
	st->flags = PAX_ROW_DEAD;
}

/*
 * Copy group g's dead-row bitmap ((nrows + 7) / 8 bytes) into bits, and
 * its block's LSN into *lsn if not NULL.
 */
void
pax_read_dead_bitmap(Relation rel, PaxGroupEntry *g, uint8 *bits,
					 BufferAccessStrategy strategy, uint64 *blocks_read, XLogRecPtr *lsn)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->row_map, RBM_NORMAL, strategy);
	Page		page;
	Size		len = (g->nrows + 7) / 8;

	Assert(PaxGroupHasDeadBitmap(g));
	if (blocks_read)
		(*blocks_read)++;
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	pax_check_block_tag(rel, page, g->row_map, g->tag);
	pax_check_map_stamp(rel, page, g->row_map, g->row_map, PAX_MAP_STAMP_BITMAP);
	if (g->nrows > PAX_DEAD_BITMAP_ROWS ||
		((PageHeader) page)->pd_lower < PAX_PAYLOAD_START + len)
		pax_corrupted(rel, g->row_map, "pax dead-row bitmap");
	memcpy(bits, PageGetContents(page), len);
	if (lsn)
		*lsn = PageGetLSN(page);
	UnlockReleaseBuffer(buf);
}

/*
 * Give group gi of dir a row map: tagged blocks of free states (or, for a
 * group with a dead-row bitmap, of the states the bitmap stands for), then
 * the entry's row_map with the metapage's directory version (one WAL
 * record; a bitmap block goes to the free list).  False if the entry
 * changed meanwhile (the caller reads the directory again).  If another
 * backend gave the group a map first, ours goes to the free list.
 */
static bool
add_row_map(Relation rel, PaxDirectory *dir, int gi)
{
	PaxGroupEntry *g = dir->groups[gi];
	bool		from_bitmap = PaxGroupHasDeadBitmap(g);
	uint32		n = PaxRowMapBlocks(g->nrows);
	Size		len = (Size) g->nrows * sizeof(PaxRowState);
	char	   *states = palloc0(Max(len, 1));
	BlockNumber first;
	Buffer		metabuf,
				dirbuf;
	PaxGroupEntry *e;
	GenericXLogState *state;
	PaxMetaPageData *meta;
	bool		ok;

	if (from_bitmap)
	{
		/* the bitmap never changes: it goes when the entry stops pointing to it */
		uint8	   *dead = palloc((g->nrows + 7) / 8);
		uint32		i;

		pax_read_dead_bitmap(rel, g, dead, NULL, NULL, NULL);
		for (i = 0; i < g->nrows; i++)
			if (dead[i / 8] & (1 << (i % 8)))
				pax_dead_row_state((PaxRowState *) states + i);
		pfree(dead);
	}

	/* the blocks carry the group's tag, so a reader can tell them from reused ones */
	(void) pax_allocate_run(rel, n, 0, &first);
	pax_write_row_map(rel, first, (PaxRowState *) states, g->nrows, g->tag);
	pfree(states);

	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	dirbuf = pax_lock_directory_page(rel, dir->dir_blocks[gi], BUFFER_LOCK_EXCLUSIVE);
	e = (PaxGroupEntry *) ((char *) BufferGetPage(dirbuf) + dir->dir_offsets[gi]);
	ok = (e->first_rownum == g->first_rownum && e->tag == g->tag &&
		  !(e->flags & PAX_GROUP_EMPTY));
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (ok && e->row_map == g->row_map &&
		(e->flags & PAX_GROUP_DEAD_BITMAP) == (g->flags & PAX_GROUP_DEAD_BITMAP))
	{
		BlockNumber bitmap = from_bitmap ? e->row_map : InvalidBlockNumber;

		e = (PaxGroupEntry *) ((char *) GenericXLogRegisterBuffer(state, dirbuf, 0) +
							   dir->dir_offsets[gi]);
		e->row_map = first;
		e->flags &= ~PAX_GROUP_DEAD_BITMAP;
		if (bitmap != InvalidBlockNumber)
			pax_free_blocks(meta, bitmap, 1);
		meta->dir_version++;
		/* the cached copy stays current if ours was the only change */
		if (meta->dir_version == dir->version + 1)
		{
			dir->version = meta->dir_version;
			g->row_map = first;
			g->flags = e->flags;
		}
	}
	else
		pax_free_blocks(meta, first, n);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(metabuf);
	return ok;
}

/*
 * Find and exclusively lock the state slot of row number rownum.  False if
 * no group holds it (a row still in a writer's memory, or one VACUUM
 * removed); then nothing is locked.
 */
static bool
lock_row_slot(Relation rel, uint64 rownum, RowSlot *rs)
{
	for (;;)
	{
		PaxDirectory *dir = pax_current_directory(rel);
		int			gi = pax_find_group_index(dir, rownum);
		PaxGroupEntry *g;
		uint32		idx;
		BlockNumber dirblk;
		uint16		diroff;
		Buffer		dirbuf;
		PaxGroupEntry *e;
		bool		current;

		if (gi < 0)
			return false;
		g = dir->groups[gi];
		if (g->row_map == InvalidBlockNumber || PaxGroupHasDeadBitmap(g))
		{
			(void) add_row_map(rel, dir, gi);
			continue;
		}
		rs->g = palloc(PaxGroupEntrySize(g->ncols));
		memcpy(rs->g, g, PaxGroupEntrySize(g->ncols));
		dirblk = dir->dir_blocks[gi];
		diroff = dir->dir_offsets[gi];
		g = rs->g;
		idx = (uint32) (rownum - g->first_rownum);

		rs->buf = ReadBuffer(rel, g->row_map + idx / PAX_ROW_STATES_PER_BLOCK);
		LockBuffer(rs->buf, BUFFER_LOCK_EXCLUSIVE);

		/* still the group's map?  (VACUUM moves groups; see the file header) */
		dirbuf = pax_lock_directory_page(rel, dirblk, BUFFER_LOCK_SHARE);
		e = (PaxGroupEntry *) ((char *) BufferGetPage(dirbuf) + diroff);
		current = (e->first_rownum == g->first_rownum && e->tag == g->tag &&
				   e->row_map == g->row_map && !(e->flags & PAX_GROUP_EMPTY) &&
				   !(e->flags & PAX_GROUP_DEAD_BITMAP));
		UnlockReleaseBuffer(dirbuf);
		if (!current)
		{
			UnlockReleaseBuffer(rs->buf);
			pfree(rs->g);
			continue;
		}
		pax_check_block_tag(rel, BufferGetPage(rs->buf), BufferGetBlockNumber(rs->buf), g->tag);
		rs->st = pax_state_slot(rel, g, BufferGetPage(rs->buf), BufferGetBlockNumber(rs->buf), idx);
		if (rs->st == NULL)
		{
			/* a delta page row not appended yet */
			release_row_slot(rs);
			return false;
		}
		return true;
	}
}

/*
 * lock_row_slot() for a row this transaction has just written (and flushed
 * into a group or the delta): it must be there.
 */
static void
lock_written_row_slot(Relation rel, uint64 rownum, RowSlot *rs)
{
	if (!lock_row_slot(rel, rownum, rs))
		elog(ERROR, "pax row " UINT64_FORMAT " of \"%s\", just written, is in no group",
			 rownum, RelationGetRelationName(rel));
}

static void
release_row_slot(RowSlot *rs)
{
	UnlockReleaseBuffer(rs->buf);
	pfree(rs->g);
}

/*
 * Start a change of a locked slot: returns a copy of its state to change,
 * which finish_slot_change() writes and logs.
 */
static PaxRowState *
begin_slot_change(RowSlot *rs, PaxRowState *copy)
{
	*copy = *rs->st;
	return copy;
}

/*
 * Write a locked slot's new state st, WAL-logged: in a generic record, or
 * when changes are decoded, in pax's own (pax_log_row_state()), which also
 * carries the old row of a DELETE (deleted, NULL otherwise) for decoding.
 */
static void
finish_slot_change(Relation rel, RowSlot *rs, const PaxRowState *st,
				   const PaxLogicalOld *deleted)
{
	Size		off = (char *) rs->st - (char *) BufferGetPage(rs->buf);
	GenericXLogState *state;
	Page		page;

	if (pax_logical_delta(rel))
	{
		pax_log_row_state(rel, rs->buf, off, st, deleted);
		return;
	}
	Assert(deleted == NULL);
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, rs->buf, 0);
	memcpy((char *) page + off, st, sizeof(PaxRowState));
	GenericXLogFinish(state);

	/*
	 * VACUUM tells a map block changed since it read it by its LSN, which
	 * generic WAL leaves alone for a relation it does not log.
	 */
	if (!RelationNeedsWAL(rel))
		PageSetLSN(BufferGetPage(rs->buf), GetFakeLSNForUnloggedRel());
}

/*
 * SERIALIZABLE readers, heap's HeapCheckForSerializableConflictOut: a reader
 * that does not see a version because its inserter is concurrent (running,
 * or committed after the snapshot was taken), or that sees a version a
 * concurrent transaction deleted or updated, has a rw-conflict out to that
 * writer.  xid is the inserter of a version the snapshot does not see, or
 * the deleter of one it does; aborted writers conflict with nobody.
 */
void
pax_conflict_out(Relation rel, TransactionId xid, Snapshot snapshot)
{
	if (!TransactionIdIsNormal(xid) || !CheckForSerializableConflictOutNeeded(rel, snapshot))
		return;
	if (TransactionIdIsCurrentTransactionId(xid))
		return;
	if (!TransactionIdIsInProgress(xid) && !TransactionIdDidCommit(xid))
		return;
	xid = SubTransGetTopmostTransaction(xid);
	if (TransactionIdPrecedes(xid, TransactionXmin))
		return;
	CheckForSerializableConflictOut(rel, xid, snapshot);
}

/*
 * The transaction that deleted or updated a row: the slot's xid, or the
 * updating member of its multixact (heap's HeapTupleGetUpdateXid);
 * InvalidTransactionId when only lockers hold the row.
 */
TransactionId
pax_row_updater(const PaxRowState *st)
{
	MultiXactMember *members = NULL;
	TransactionId result = InvalidTransactionId;
	int			n,
				i;

	if (!TransactionIdIsValid(st->xmax) || (st->flags & PAX_ROW_LOCK_ONLY))
		return InvalidTransactionId;
	if (!(st->flags & PAX_ROW_MULTI))
		return st->xmax;
	n = GetMultiXactIdMembers(st->xmax, &members, false, false);
	for (i = 0; i < n; i++)
		if (ISUPDATE_from_mxstatus(members[i].status))
			result = members[i].xid;
	if (members)
		pfree(members);
	return result;
}

/* A row state's conflict, for a row the snapshot sees (not deleted for it). */
static inline void
row_state_conflict_out(Relation rel, const PaxRowState *st, Snapshot snapshot)
{
	if (TransactionIdIsValid(st->xmax) && !(st->flags & (PAX_ROW_LOCK_ONLY | PAX_ROW_DEAD)))
		pax_conflict_out(rel, pax_row_updater(st), snapshot);
}

/*
 * pax_group_visible() for a reader: a group whose insertion the snapshot
 * does not see is a rw-conflict for a serializable one.
 */
bool
pax_group_visible_to_reader(Relation rel, PaxGroupEntry *g, Snapshot snapshot)
{
	if (pax_group_visible(g, snapshot))
		return true;
	if (!(g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY | PAX_GROUP_FROZEN)))
		pax_conflict_out(rel, g->xmin, snapshot);
	return false;
}

/*
 * Row rownum's delta page header.  held: the row's state slot, locked by
 * us; when the group keeps its states in the delta page, the slot's page is
 * that page, and its header is read there (locking the page again would
 * wait on our own lock).
 */
static bool
delta_row_header(Relation rel, PaxGroupEntry *g, uint64 rownum, const RowSlot *held,
				 PaxDeltaRowHeader *hdr)
{
	if (held != NULL && PaxGroupHasPageStates(held->g))
	{
		Page		page = BufferGetPage(held->buf);
		OffsetNumber off = (OffsetNumber) (rownum - held->g->first_rownum + 1);

		Assert(held->g->first_rownum == g->first_rownum);
		/* (a slot exists only for a row the page holds) */
		*hdr = *(PaxDeltaRowHeader *) PageGetItem(page, PageGetItemId(page, off));
		return true;
	}
	return pax_delta_row_header(rel, g, rownum, hdr);
}

/*
 * Is row rownum of group g stored (not removed by VACUUM, or for a delta
 * page, appended), and is its insertion visible to snapshot?  (For other
 * groups the caller has checked the group's insertion.)
 */
static bool
row_inserted(Relation rel, PaxGroupEntry *g, uint64 rownum, Snapshot snapshot,
			 const RowSlot *held)
{
	Buffer		pinned = InvalidBuffer;
	uint32		i = (uint32) (rownum - g->first_rownum);
	bool		present;

	if (PaxGroupIsDelta(g))
	{
		PaxDeltaRowHeader hdr;

		if (!delta_row_header(rel, g, rownum, held, &hdr))
			return false;
		if (pax_xmin_visible(hdr.xmin, hdr.cmin, snapshot))
			return true;
		pax_conflict_out(rel, hdr.xmin, snapshot);
		return false;
	}
	if (!PaxGroupIsSparse(g))
		return true;
	present = (pax_read_presence(rel, g, &pinned, NULL)[i / 8] & (1 << (i % 8))) != 0;
	if (BufferIsValid(pinned))
		ReleaseBuffer(pinned);
	return present;
}

/*
 * Does the slot say the row is deleted, as far as snapshot is concerned?
 * heap's rules for a tuple's xmax (heapam_visibility.c).  For a dirty
 * snapshot, a delete in progress is reported in snapshot->xmax.
 */
bool
pax_row_state_deleted(const PaxRowState *st, Snapshot snapshot)
{
	TransactionId xmax = st->xmax;

	if (!TransactionIdIsValid(xmax) || (st->flags & PAX_ROW_LOCK_ONLY))
		return false;
	if (st->flags & PAX_ROW_DEAD)
		return true;			/* gone for every snapshot, SnapshotAny too */
	if (st->flags & PAX_ROW_MULTI)
	{
		xmax = pax_row_updater(st);
		if (!TransactionIdIsValid(xmax))
			return false;
	}

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(xmax))
				return st->cmax < snapshot->curcid;
			if (XidInMVCCSnapshot(xmax, snapshot))
				return false;
			return TransactionIdDidCommit(xmax);
		case SNAPSHOT_SELF:
			if (TransactionIdIsCurrentTransactionId(xmax))
				return true;
			if (TransactionIdIsInProgress(xmax))
				return false;
			return TransactionIdDidCommit(xmax);
		case SNAPSHOT_DIRTY:
			if (TransactionIdIsCurrentTransactionId(xmax))
				return true;
			if (TransactionIdIsInProgress(xmax))
			{
				snapshot->xmax = xmax;
				return false;
			}
			return TransactionIdDidCommit(xmax);
		case SNAPSHOT_NON_VACUUMABLE:
			if (TransactionIdIsCurrentTransactionId(xmax) || TransactionIdIsInProgress(xmax) ||
				!TransactionIdDidCommit(xmax))
				return false;
			return GlobalVisTestIsRemovableXid(snapshot->vistest, xmax);
		case SNAPSHOT_ANY:
		case SNAPSHOT_TOAST:
		case SNAPSHOT_HISTORIC_MVCC:
			return false;
	}
	return false;
}

/*
 * Visibility of every row of a group whose insertion is visible to the
 * snapshot: visible[i] for row number first_rownum + i.  Returns how many
 * are visible.  Reads the presence bitmap and the row map, when the group
 * has them, and a delta page's row headers.
 */
uint32
pax_visible_rows(Relation rel, PaxGroupEntry *g, Snapshot snapshot, bool *visible,
				 BufferAccessStrategy strategy, uint64 *blocks_read)
{
	uint32		n = 0;
	uint32		i;

	if (PaxGroupIsDelta(g))
	{
		PaxDeltaRowHeader *hdrs = palloc(sizeof(PaxDeltaRowHeader) * g->nrows);
		PaxRowState *states = PaxGroupHasPageStates(g) ?
			palloc(sizeof(PaxRowState) * g->nrows) : NULL;
		uint32		nrows = pax_delta_read_headers(rel, g, hdrs, states, strategy,
												   blocks_read);

		for (i = 0; i < g->nrows; i++)
		{
			visible[i] = i < nrows && pax_xmin_visible(hdrs[i].xmin, hdrs[i].cmin, snapshot);
			if (i < nrows && !visible[i])
				pax_conflict_out(rel, hdrs[i].xmin, snapshot);
			else if (visible[i] && states)
			{
				/* the page's own states (no map to read below) */
				if (pax_row_state_deleted(&states[i], snapshot))
					visible[i] = false;
				else
					row_state_conflict_out(rel, &states[i], snapshot);
			}
		}
		pfree(hdrs);
		if (states)
			pfree(states);
	}
	else if (PaxGroupIsSparse(g))
	{
		Buffer		pinned = InvalidBuffer;
		const uint8 *present = pax_read_presence(rel, g, &pinned, blocks_read);

		for (i = 0; i < g->nrows; i++)
			visible[i] = (present[i / 8] & (1 << (i % 8))) != 0;
		if (BufferIsValid(pinned))
			ReleaseBuffer(pinned);
	}
	else
		memset(visible, true, sizeof(bool) * g->nrows);

	if (PaxGroupHasDeadBitmap(g))
	{
		uint8	   *dead = palloc((g->nrows + 7) / 8);

		pax_read_dead_bitmap(rel, g, dead, strategy, blocks_read, NULL);
		for (i = 0; i < g->nrows; i++)
			if (dead[i / 8] & (1 << (i % 8)))
				visible[i] = false;
		pfree(dead);
	}
	else if (g->row_map != InvalidBlockNumber && !PaxGroupHasPageStates(g))
	{
		uint32		nblocks = PaxRowMapBlocks(g->nrows);
		uint32		b;

		for (b = 0; b < nblocks; b++)
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->row_map + b,
												 RBM_NORMAL, strategy);
			PaxRowState *st;
			uint32		end = Min(g->nrows, (b + 1) * PAX_ROW_STATES_PER_BLOCK);

			if (blocks_read)
				(*blocks_read)++;
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			check_state_block(rel, g, BufferGetPage(buf), g->row_map + b, b);
			st = (PaxRowState *) PageGetContents(BufferGetPage(buf));
			for (i = b * PAX_ROW_STATES_PER_BLOCK; i < end; i++, st++)
			{
				if (!visible[i])
					continue;
				if (pax_row_state_deleted(st, snapshot))
					visible[i] = false;
				else
					row_state_conflict_out(rel, st, snapshot);
			}
			UnlockReleaseBuffer(buf);
		}
	}
	for (i = 0; i < g->nrows; i++)
		n += visible[i];
	return n;
}

/*
 * A copy of row rownum's state, from group g's row map (which it must
 * have) or dead-row bitmap.
 */
static void
read_row_state(Relation rel, PaxGroupEntry *g, uint64 rownum, PaxRowState *st)
{
	uint32		i = (uint32) (rownum - g->first_rownum);
	Buffer		buf;
	PaxRowState *slot;

	if (PaxGroupHasDeadBitmap(g))
	{
		uint8	   *dead = palloc((g->nrows + 7) / 8);

		pax_read_dead_bitmap(rel, g, dead, NULL, NULL, NULL);
		if (dead[i / 8] & (1 << (i % 8)))
			pax_dead_row_state(st);
		else
			memset(st, 0, sizeof(PaxRowState));
		pfree(dead);
		return;
	}
	buf = ReadBuffer(rel, g->row_map + i / PAX_ROW_STATES_PER_BLOCK);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_state_block(rel, g, BufferGetPage(buf), BufferGetBlockNumber(buf),
					  i / PAX_ROW_STATES_PER_BLOCK);
	slot = pax_state_slot(rel, g, BufferGetPage(buf), BufferGetBlockNumber(buf), i);
	if (slot)
		*st = *slot;
	else
		memset(st, 0, sizeof(PaxRowState));
	UnlockReleaseBuffer(buf);
}

/* Row rownum's state: from its group's row map, or a free one if it has none. */
void
pax_row_state(Relation rel, PaxGroupEntry *g, uint64 rownum, PaxRowState *st)
{
	if (g->row_map == InvalidBlockNumber)
		memset(st, 0, sizeof(PaxRowState));
	else
		read_row_state(rel, g, rownum, st);
}

/*
 * Is a row whose state is st gone for every snapshot there is or will be
 * (VACUUM removed it, or its delete or update committed before the
 * horizon no running transaction, standby or slot holds back)?  If so and
 * latest_removed is not NULL, it advances to the deleter's xid: the index
 * entries an index removes for it must cancel standby queries that still
 * see the row, as heap's pruning does.
 */
static bool
row_state_removable(Snapshot nonvacuumable, const PaxRowState *st, TransactionId inserter,
					TransactionId *latest_removed, bool known_dead)
{
	TransactionId xmax;

	if (st->flags & PAX_ROW_DEAD)
		return true;			/* VACUUM logged its own horizon */
	if (!known_dead && !pax_row_state_deleted(st, nonvacuumable))
		return false;
	xmax = pax_row_updater(st);
	/* a row its own inserter deleted was never seen by anyone else */
	if (latest_removed && TransactionIdIsNormal(xmax) && xmax != inserter &&
		TransactionIdFollows(xmax, *latest_removed))
		*latest_removed = xmax;
	return true;
}

/*
 * May the index entries naming rows rownums[0 .. n) of group g go
 * (tableam's index_delete_tuples)?  removable[j] says.  Only when no
 * snapshot can see the row, ever: its group's insertion aborted, VACUUM
 * removed it, its delta row's insertion aborted, or its delete committed
 * before every snapshot (row_state_removable()).  A delta row not appended
 * yet may still be: it stays.  Row numbers are never reused, so an entry
 * can never come to name another row.  known_dead[j]: the index marked the
 * entry dead after an earlier answer (the horizon may have moved back
 * since, a standby's feedback arriving); only *latest_removed is wanted.
 * The group's delta headers, presence bitmap, dead-row bitmap and each row
 * map block are read once for all the rows: the index holds its leaf page
 * locked meanwhile.
 */
void
pax_rows_removable(Relation rel, PaxGroupEntry *g, int n, const uint64 *rownums,
				   const bool *known_dead, bool *removable, TransactionId *latest_removed)
{
	SnapshotData nonvacuumable;
	PaxDeltaRowHeader *hdrs = NULL;
	uint32		nhdrs = 0;
	const uint8 *present = NULL;
	Buffer		pinned = InvalidBuffer;
	uint8	   *dead = NULL;
	Buffer		mapbuf = InvalidBuffer;
	PaxRowState *page_states = NULL;
	bool		group_gone = (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY)) != 0;
	int			j;

	InitNonVacuumableSnapshot(nonvacuumable, GlobalVisTestFor(rel));
	if (!group_gone && !PaxGroupIsDelta(g) && !(g->flags & PAX_GROUP_FROZEN) &&
		!pax_xmin_visible(g->xmin, g->cmin, &nonvacuumable))
		group_gone = true;
	if (!group_gone && PaxGroupIsDelta(g))
	{
		hdrs = palloc(sizeof(PaxDeltaRowHeader) * Max(g->nrows, 1));
		if (PaxGroupHasPageStates(g))
			page_states = palloc(sizeof(PaxRowState) * Max(g->nrows, 1));
		nhdrs = pax_delta_read_headers(rel, g, hdrs, page_states, NULL, NULL);
	}
	else if (!group_gone && PaxGroupIsSparse(g))
		present = pax_read_presence(rel, g, &pinned, NULL);
	if (!group_gone && PaxGroupHasDeadBitmap(g))
	{
		dead = palloc((g->nrows + 7) / 8);
		pax_read_dead_bitmap(rel, g, dead, NULL, NULL, NULL);
	}

	for (j = 0; j < n; j++)
	{
		uint32		i = (uint32) (rownums[j] - g->first_rownum);
		TransactionId inserter = g->xmin;
		PaxRowState st;

		removable[j] = group_gone;
		if (group_gone)
			continue;
		if (hdrs != NULL)
		{
			if (i >= nhdrs)
				continue;
			if (!pax_xmin_visible(hdrs[i].xmin, hdrs[i].cmin, &nonvacuumable))
			{
				removable[j] = true;
				continue;
			}
			inserter = hdrs[i].xmin;
		}
		else if (present != NULL && !(present[i / 8] & (1 << (i % 8))))
		{
			removable[j] = true;
			continue;
		}
		if (g->row_map == InvalidBlockNumber)
			continue;
		if (dead != NULL)
		{
			if (dead[i / 8] & (1 << (i % 8)))
				pax_dead_row_state(&st);
			else
				memset(&st, 0, sizeof(st));
		}
		else if (page_states != NULL)
			st = page_states[i];	/* (i < nhdrs: above) */
		else
		{
			BlockNumber blkno = g->row_map + i / PAX_ROW_STATES_PER_BLOCK;

			if (!BufferIsValid(mapbuf) || BufferGetBlockNumber(mapbuf) != blkno)
			{
				if (BufferIsValid(mapbuf))
					ReleaseBuffer(mapbuf);
				mapbuf = ReadBuffer(rel, blkno);
			}
			LockBuffer(mapbuf, BUFFER_LOCK_SHARE);
			check_state_block(rel, g, BufferGetPage(mapbuf), blkno, i / PAX_ROW_STATES_PER_BLOCK);
			st = ((PaxRowState *) PageGetContents(BufferGetPage(mapbuf)))[i % PAX_ROW_STATES_PER_BLOCK];
			LockBuffer(mapbuf, BUFFER_LOCK_UNLOCK);
		}
		removable[j] = row_state_removable(&nonvacuumable, &st, inserter, latest_removed,
										   known_dead[j]);
	}
	if (BufferIsValid(mapbuf))
		ReleaseBuffer(mapbuf);
	if (BufferIsValid(pinned))
		ReleaseBuffer(pinned);
	if (hdrs)
		pfree(hdrs);
	if (page_states)
		pfree(page_states);
	if (dead)
		pfree(dead);
}

/*
 * Is one row of a group whose insertion is visible to the snapshot visible
 * itself?  *all_dead (if not NULL) is set when no snapshot can see it any
 * more, so that index scans may mark their entry dead.
 */
bool
pax_row_visible(Relation rel, PaxGroupEntry *g, uint64 rownum, Snapshot snapshot,
				bool *all_dead)
{
	PaxRowState st;

	if (!row_inserted(rel, g, rownum, snapshot, NULL))
	{
		/* removed by VACUUM: dead for everyone (a delta row may yet commit) */
		if (all_dead && !PaxGroupIsDelta(g))
			*all_dead = true;
		return false;
	}
	if (g->row_map == InvalidBlockNumber)
		return true;
	read_row_state(rel, g, rownum, &st);
	if (pax_row_state_deleted(&st, snapshot))
	{
		/*
		 * Heap's "surely dead": a delete every snapshot sees lets the index
		 * scan mark its entry dead (kill_prior_tuple), so that later scans,
		 * bitmap scans included, skip it and the index may drop it before
		 * splitting a page.  Without this an updated row's old versions
		 * were visited by every scan of its key until VACUUM.
		 */
		if (all_dead)
		{
			SnapshotData nonvacuumable;

			InitNonVacuumableSnapshot(nonvacuumable, GlobalVisTestFor(rel));
			*all_dead = row_state_removable(&nonvacuumable, &st, InvalidTransactionId, NULL,
											false);
		}
		return false;
	}
	/* an ON CONFLICT insertion still checking: a unique check waits for its token */
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY && TransactionIdIsValid(snapshot->xmin) &&
		!TransactionIdIsValid(st.xmax) && (st.flags & PAX_ROW_SPECULATIVE))
		snapshot->speculativeToken = (uint32) pax_row_next(&st);
	row_state_conflict_out(rel, &st, snapshot);
	return true;
}

/*
 * What a slot means to a transaction that wants to delete, update or lock
 * the row (heap's HeapTupleSatisfiesUpdate, for the xmax half).
 */
typedef enum
{
	SLOT_FREE,					/* nobody holds it (or we hold a lock on it) */
	SLOT_BUSY,					/* another running transaction deleted or locked it */
	SLOT_SHARED,				/* running lockers hold it in modes that let us lock it too */
	SLOT_GONE,					/* a committed transaction deleted or updated it */
	SLOT_SELF_MODIFIED,			/* we deleted it in this command (or a later one) */
	SLOT_INVISIBLE				/* we deleted it in an earlier command */
} SlotStatus;

/* Do two row lock strengths conflict?  heap's table (README.tuplock). */
static bool
lock_modes_conflict(LockTupleMode a, LockTupleMode b)
{
	LockTupleMode weaker = Min(a, b),
				stronger = Max(a, b);

	switch (weaker)
	{
		case LockTupleKeyShare:
			return stronger == LockTupleExclusive;
		case LockTupleShare:
			return stronger >= LockTupleNoKeyExclusive;
		default:
			return true;
	}
}

static MultiXactStatus
lock_status(LockTupleMode mode)
{
	switch (mode)
	{
		case LockTupleKeyShare:
			return MultiXactStatusForKeyShare;
		case LockTupleShare:
			return MultiXactStatusForShare;
		case LockTupleNoKeyExclusive:
			return MultiXactStatusForNoKeyUpdate;
		default:
			return MultiXactStatusForUpdate;
	}
}

static LockTupleMode
status_mode(MultiXactStatus status)
{
	switch (status)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		default:
			return LockTupleExclusive;
	}
}

/*
 * What the lockers of a multixact mean to a request: SLOT_BUSY (with one
 * running member it conflicts with in *wait_xid), SLOT_SHARED (other
 * lockers still run, none in conflict), or SLOT_FREE.  *own_mode gets the
 * strongest mode we hold in it, or -1.
 */
static SlotStatus
classify_lockers(MultiXactId multi, PaxModifyKind kind, LockTupleMode mode,
				 TransactionId *wait_xid, int *own_mode)
{
	MultiXactMember *members = NULL;
	int			n = GetMultiXactIdMembers(multi, &members, false, true);
	SlotStatus	result = SLOT_FREE;
	int			i;

	*own_mode = -1;
	/* every member: the caller needs our own strongest lock even when busy */
	for (i = 0; i < n; i++)
	{
		TransactionId xid = members[i].xid;
		LockTupleMode m = status_mode(members[i].status);

		if (TransactionIdIsCurrentTransactionId(xid))
		{
			*own_mode = Max(*own_mode, (int) m);
			continue;
		}
		if (result == SLOT_BUSY || !TransactionIdIsInProgress(xid))
			continue;
		if ((kind != PAX_MODIFY_LOCK && kind != PAX_MODIFY_UPDATE) ||
			ISUPDATE_from_mxstatus(members[i].status) || lock_modes_conflict(m, mode))
		{
			*wait_xid = xid;
			result = SLOT_BUSY;
			continue;
		}
		result = SLOT_SHARED;
	}
	if (members)
		pfree(members);
	return result;
}

/*
 * What the slot means to a request of this kind (heap's
 * HeapTupleSatisfiesUpdate, for the xmax half).  For SLOT_BUSY *wait_xid is
 * the transaction to wait for; *own_mode is the strongest lock we already
 * hold on the row, or -1.
 */
static SlotStatus
classify_slot(const PaxRowState *st, CommandId cid, PaxModifyKind kind, LockTupleMode mode,
			  TransactionId *wait_xid, int *own_mode)
{
	TransactionId xmax = st->xmax;

	*wait_xid = InvalidTransactionId;
	*own_mode = -1;
	if (!TransactionIdIsValid(xmax))
		return SLOT_FREE;
	if (st->flags & PAX_ROW_DEAD)
		return SLOT_GONE;
	if ((st->flags & PAX_ROW_MULTI) && (st->flags & PAX_ROW_LOCK_ONLY))
		return classify_lockers(xmax, kind, mode, wait_xid, own_mode);
	if (st->flags & PAX_ROW_MULTI)
	{
		/* an updater and the key-share lockers it passed */
		xmax = pax_row_updater(st);
		if (!TransactionIdIsValid(xmax) ||
			(!TransactionIdIsCurrentTransactionId(xmax) && !TransactionIdIsInProgress(xmax) &&
			 !TransactionIdDidCommit(xmax)))
			return classify_lockers(st->xmax, kind, mode, wait_xid, own_mode);
	}
	if (TransactionIdIsCurrentTransactionId(xmax))
	{
		if (!(st->flags & PAX_ROW_LOCK_ONLY))
			return (st->cmax >= cid) ? SLOT_SELF_MODIFIED : SLOT_INVISIBLE;
		*own_mode = (int) pax_row_lock_mode(st);
		return SLOT_FREE;
	}
	if (TransactionIdIsInProgress(xmax))
	{
		/* a lock of ours beside another's update: see the tuple lock in pax_modify_row() */
		if (st->flags & PAX_ROW_MULTI)
		{
			TransactionId unused;

			(void) classify_lockers(st->xmax, PAX_MODIFY_LOCK, LockTupleKeyShare, &unused,
									own_mode);
		}
		if ((st->flags & PAX_ROW_LOCK_ONLY) &&
			(kind == PAX_MODIFY_LOCK || kind == PAX_MODIFY_UPDATE) &&
			!lock_modes_conflict(pax_row_lock_mode(st), mode))
			return SLOT_SHARED;
		*wait_xid = xmax;
		return SLOT_BUSY;
	}
	if (st->flags & PAX_ROW_LOCK_ONLY)
		return SLOT_FREE;
	return TransactionIdDidCommit(xmax) ? SLOT_GONE : SLOT_FREE;
}

/* The heavyweight tuple lock a waiter queues on, heap's per strength. */
static LOCKMODE
tuple_lock_mode(PaxModifyKind kind, LockTupleMode mode)
{
	if (kind != PAX_MODIFY_LOCK)
		return AccessExclusiveLock;
	switch (mode)
	{
		case LockTupleKeyShare:
			return AccessShareLock;
		case LockTupleShare:
			return RowShareLock;
		case LockTupleNoKeyExclusive:
			return ExclusiveLock;
		default:
			return AccessExclusiveLock;
	}
}

/*
 * Is row rownum stored, and its insertion something cid may modify?  The
 * inserter goes to *xmin_out and *cmin_out.
 */
static bool
insertion_usable(Relation rel, const RowSlot *rs, uint64 rownum, CommandId cid,
				 TransactionId *xmin_out, CommandId *cmin_out)
{
	PaxGroupEntry *g = rs->g;
	TransactionId xmin = g->xmin;
	CommandId	cmin = g->cmin;

	*xmin_out = InvalidTransactionId;
	*cmin_out = InvalidCommandId;
	if (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY))
		return false;
	if (PaxGroupIsDelta(g))
	{
		PaxDeltaRowHeader hdr;

		if (!delta_row_header(rel, g, rownum, rs, &hdr))
			return false;
		xmin = hdr.xmin;
		cmin = hdr.cmin;
	}
	else if (!row_inserted(rel, g, rownum, SnapshotAny, rs))
		return false;			/* removed by VACUUM */
	*xmin_out = xmin;
	*cmin_out = cmin;
	if (!PaxGroupIsDelta(g) && (g->flags & PAX_GROUP_FROZEN))
		return true;
	if (TransactionIdIsCurrentTransactionId(xmin))
		return cmin < cid;
	return TransactionIdDidCommit(xmin);
}

static void
fill_failure(TM_FailureData *tmfd, const PaxRowState *st, uint64 rownum)
{
	TransactionId updater = pax_row_updater(st);

	tmfd->xmax = TransactionIdIsValid(updater) ? updater : st->xmax;
	tmfd->cmax = TransactionIdIsCurrentTransactionId(tmfd->xmax) ? st->cmax : InvalidCommandId;
	if (st->flags & PAX_ROW_MOVED)
		ItemPointerSetMovedPartitions(&tmfd->ctid);
	else if (st->flags & PAX_ROW_UPDATED)
		pax_rownum_to_tid(pax_row_next(st), &tmfd->ctid);
	else
		pax_rownum_to_tid(rownum, &tmfd->ctid);
	tmfd->traversed = false;
}

/* Does the update in a row state's multixact change the key columns? */
static bool
updater_changes_keys(const PaxRowState *st)
{
	MultiXactMember *members = NULL;
	int			n = GetMultiXactIdMembers(st->xmax, &members, false, false);
	bool		result = true;
	int			i;

	for (i = 0; i < n; i++)
		if (ISUPDATE_from_mxstatus(members[i].status))
			result = (members[i].status == MultiXactStatusUpdate);
	if (members)
		pfree(members);
	return result;
}

/*
 * FOR KEY SHARE and updates that keep the key columns.  A FOR KEY SHARE
 * request (a foreign key check) that meets an update of the row, running or
 * committed, which kept the key columns does not wait for it and does not
 * move to the new version: as heap's lockers with a NoKeyUpdate, it locks
 * the old version and every later one (so no later delete or key update
 * can pass it), and returns the version it was given.
 *
 * The hop from version `from` to its successor is judged once per request
 * and cached in the request's PaxKeyCheck (otid, new_tid, state): from the
 * multixact when the update passed lockers (it records NoKeyUpdate), else
 * by comparing the two versions' key columns (reads rows: no slot may be
 * locked).  new_locked says the versions after new_tid's predecessor are
 * locked already.
 */
/* Compare the versions kc names (no slot may be locked): state 1 kept, 2 changed. */
static void
judge_keys(PaxKeyCheck *kc)
{
	kc->state = kc->keys_unchanged(kc) ? 1 : 2;
}

static int
hop_keys_known(PaxKeyCheck *kc, const PaxRowState *st, uint64 from)
{
	ItemPointerData a,
				b;

	pax_rownum_to_tid(from, &a);
	pax_rownum_to_tid(pax_row_next(st), &b);
	if (!(ItemPointerEquals(&kc->otid, &a) && ItemPointerEquals(&kc->new_tid, &b)))
	{
		kc->otid = a;
		kc->new_tid = b;
		kc->state = 0;
		kc->new_locked = false;
	}
	if (kc->state == 0 && (st->flags & PAX_ROW_MULTI))
		kc->state = updater_changes_keys(st) ? 2 : 1;
	return kc->state;
}

/*
 * Compare the key columns of the hop hop_keys_known() left unknown.  False
 * when the new version cannot be read yet (it is still in its writer's
 * memory): the state stays unknown.
 */
static bool
hop_compare_keys(Relation rel, PaxKeyCheck *kc)
{
	if (pax_find_group(pax_current_directory(rel), pax_tid_to_rownum(&kc->new_tid)) == NULL)
		return false;
	judge_keys(kc);
	return true;
}

typedef enum ChainResult
{
	CHAIN_LOCKED,				/* every later version is locked (or ours) */
	CHAIN_WAIT,					/* a later version is busy: wait for *wait_xid */
	CHAIN_GONE					/* a committed delete or key update ends it */
} ChainResult;

/*
 * Lock the versions of a row from rownum on, FOR KEY SHARE, in chain order
 * as heap_lock_updated_tuple() does: a version a running transaction
 * updated keeping the keys is joined (its xmax becomes a multixact of that
 * update and our lock), one a committed transaction updated so is passed,
 * the last one gets our lock.  writer is the transaction that made version
 * rownum (to wait for while it is still in its memory).  Locks taken before
 * a CHAIN_WAIT or CHAIN_GONE stay: they are ours, on versions we may lock.
 */
static ChainResult
lock_later_versions(Relation rel, uint64 rownum, PaxKeyCheck *kc, TransactionId writer,
					TransactionId *wait_xid)
{
	TransactionId xid = GetCurrentTransactionId();
	PaxKeyCheck hop = *kc;		/* a cache of its own: kc's is the first hop's */

	ItemPointerSetInvalid(&hop.otid);
	*wait_xid = InvalidTransactionId;
	for (;;)
	{
		RowSlot		rs;
		PaxRowState seen;
		SlotStatus	status;
		TransactionId w;
		int			own;
		int			keys;
		MultiXactId multi = InvalidMultiXactId;
		PaxRowState change;
		PaxRowState *st;

		CHECK_FOR_INTERRUPTS();
		if (!lock_row_slot(rel, rownum, &rs))
		{
			/* in its writer's memory, or removed (dead) by VACUUM */
			if (TransactionIdIsValid(writer) && TransactionIdIsInProgress(writer))
			{
				*wait_xid = writer;
				return CHAIN_WAIT;
			}
			return CHAIN_GONE;
		}
		seen = *rs.st;
		status = classify_slot(&seen, InvalidCommandId, PAX_MODIFY_LOCK, LockTupleKeyShare,
							   &w, &own);
		if (status == SLOT_SELF_MODIFIED || status == SLOT_INVISIBLE ||
			((status == SLOT_FREE || status == SLOT_SHARED) && own >= (int) LockTupleKeyShare))
		{
			/* our own update or lock: what follows is ours too */
			release_row_slot(&rs);
			return CHAIN_LOCKED;
		}
		if (status == SLOT_FREE || status == SLOT_SHARED)
		{
			/* the live version (or one whose updater aborted): lock it */
			if (seen.flags & PAX_ROW_MULTI)
				multi = MultiXactIdExpand(seen.xmax, xid, MultiXactStatusForKeyShare);
			else if ((seen.flags & PAX_ROW_LOCK_ONLY) && TransactionIdIsInProgress(seen.xmax))
				multi = MultiXactIdCreate(seen.xmax, lock_status(pax_row_lock_mode(&seen)),
										  xid, MultiXactStatusForKeyShare);
			st = begin_slot_change(&rs, &change);
			if (MultiXactIdIsValid(multi))
			{
				st->xmax = multi;
				st->flags = PAX_ROW_LOCK_ONLY | PAX_ROW_MULTI;
			}
			else
			{
				st->xmax = xid;
				st->flags = PAX_ROW_LOCK_ONLY | pax_row_lock_flags(LockTupleKeyShare);
			}
			st->cmax = InvalidCommandId;
			pax_row_set_next(st, rownum);
			finish_slot_change(rel, &rs, st, NULL);
			release_row_slot(&rs);
			return CHAIN_LOCKED;
		}

		/* updated or deleted by another transaction, running (busy) or committed (gone) */
		if (!(seen.flags & PAX_ROW_UPDATED) || (seen.flags & (PAX_ROW_MOVED | PAX_ROW_DEAD)) ||
			pax_row_next(&seen) == rownum ||
			(status == SLOT_BUSY && !TransactionIdEquals(w, pax_row_updater(&seen))))
		{
			release_row_slot(&rs);
			if (status == SLOT_GONE)
				return CHAIN_GONE;
			*wait_xid = w;
			return CHAIN_WAIT;
		}
		keys = hop_keys_known(&hop, &seen, rownum);
		if (keys != 1)
		{
			release_row_slot(&rs);
			if (keys == 0 && hop_compare_keys(rel, &hop))
				continue;		/* judged: look at the version again */
			if (status == SLOT_GONE && keys == 2)
				return CHAIN_GONE;
			*wait_xid = (status == SLOT_BUSY) ? w : pax_row_updater(&seen);
			return TransactionIdIsInProgress(*wait_xid) ? CHAIN_WAIT : CHAIN_GONE;
		}
		if (status == SLOT_BUSY)
		{
			/* join the running update, keeping its link */
			multi = (seen.flags & PAX_ROW_MULTI) ?
				MultiXactIdExpand(seen.xmax, xid, MultiXactStatusForKeyShare) :
				MultiXactIdCreate(seen.xmax, MultiXactStatusNoKeyUpdate,
								  xid, MultiXactStatusForKeyShare);
			st = begin_slot_change(&rs, &change);
			st->xmax = multi;
			st->flags = PAX_ROW_UPDATED | PAX_ROW_MULTI;
			finish_slot_change(rel, &rs, st, NULL);
		}
		writer = pax_row_updater(&seen);
		rownum = pax_row_next(&seen);
		release_row_slot(&rs);
	}
}

/*
 * Move pax_modify_row() on to row number next of an update chain: the tuple
 * lock it may hold belongs to the row it leaves.
 */
static void
step_to(Relation rel, uint64 *rownum, uint64 next, ItemPointer tid, bool *have_tuple_lock,
		LOCKMODE hwmode)
{
	*rownum = next;
	if (*have_tuple_lock)
	{
		UnlockTuple(rel, tid, hwmode);
		*have_tuple_lock = false;
	}
}

/*
 * Delete (kind PAX_MODIFY_DELETE, or PAX_MODIFY_MOVE for the delete half of
 * an UPDATE that moves the row to another partition), mark as updated (PAX_MODIFY_UPDATE: the
 * caller links the new version with pax_link_update()) or lock
 * (PAX_MODIFY_LOCK) row *rownum for command cid.  With lock_last_version,
 * an update chain is followed to its last version, whose row number
 * replaces *rownum.  Returns heap's TM_Result codes with tmfd filled.
 * deleted: a delete's old row for logical decoding (pax_logical_old()),
 * logged with the change; NULL when changes are not decoded.
 */
TM_Result
pax_modify_row(Relation rel, uint64 *rownum, CommandId cid, Snapshot crosscheck,
			   PaxModifyKind kind, LockTupleMode mode, PaxKeyCheck *keycheck,
			   LockWaitPolicy wait_policy, bool lock_last_version, TM_FailureData *tmfd,
			   const PaxLogicalOld *deleted)
{
	TM_Result	result;
	bool		have_tuple_lock = false;
	LOCKMODE	hwmode = tuple_lock_mode(kind, mode);
	ItemPointerData tid;

	/*
	 * Serializable transactions: changing a row conflicts with readers of
	 * the row (index fetches lock their rows) and of the whole table.
	 */
	pax_rownum_to_tid(*rownum, &tid);
	CheckForSerializableConflictIn(rel, &tid, ItemPointerGetBlockNumber(&tid));
	memset(tmfd, 0, sizeof(TM_FailureData));

	/*
	 * A locker may become a member of a multixact: announce the oldest one
	 * it could be in first, or other backends take multixacts made from
	 * now on as too old to have running members (heap_lock_tuple does the
	 * same).
	 */
	MultiXactIdSetOldestMember();

	for (;;)
	{
		RowSlot		rs;
		SlotStatus	status;
		TransactionId xwait;
		bool		join_update = false;
		TransactionId ins_xmin;
		CommandId	ins_cmin;
		int			own_mode;
		MultiXactId new_multi = InvalidMultiXactId;

		CHECK_FOR_INTERRUPTS();
		pax_rownum_to_tid(*rownum, &tid);
		if (!lock_row_slot(rel, *rownum, &rs))
		{
			result = TM_Invisible;
			break;
		}
		if (!insertion_usable(rel, &rs, *rownum, cid, &ins_xmin, &ins_cmin))
		{
			PaxRowState st = *rs.st;

			release_row_slot(&rs);

			/*
			 * Following an update chain, a version this statement (or a
			 * trigger or function it ran) inserted: if we also updated it
			 * since, go on to the next; the last one answers heap's
			 * TM_SelfModified with its inserting command, so that the
			 * executor refuses the update when a later command made it
			 * instead of skipping the row.
			 */
			if (tmfd->traversed && TransactionIdIsCurrentTransactionId(ins_xmin) &&
				ins_cmin >= cid)
			{
				if (TransactionIdIsCurrentTransactionId(pax_row_updater(&st)) &&
					(st.flags & PAX_ROW_UPDATED) &&
					pax_row_next(&st) != *rownum)
				{
					step_to(rel, rownum, pax_row_next(&st), &tid, &have_tuple_lock, hwmode);
					continue;
				}
				if (TransactionIdIsCurrentTransactionId(pax_row_updater(&st)))
				{
					result = TM_Deleted;
					break;
				}
				tmfd->xmax = ins_xmin;
				tmfd->cmax = ins_cmin;
				result = TM_SelfModified;
			}
			else
				result = TM_Invisible;
			break;
		}
		status = classify_slot(rs.st, cid, kind, mode, &xwait, &own_mode);

		/*
		 * Past the first version of a chain, versions our own transaction
		 * updated or deleted are dead to the search for the last version,
		 * whatever their command (heap follows them with a dirty snapshot).
		 */
		if (lock_last_version && tmfd->traversed &&
			(status == SLOT_SELF_MODIFIED || status == SLOT_INVISIBLE))
		{
			bool		updated = (rs.st->flags & PAX_ROW_UPDATED) != 0;
			uint64		next = pax_row_next(rs.st);

			release_row_slot(&rs);
			if (updated && next != *rownum)
			{
				step_to(rel, rownum, next, &tid, &have_tuple_lock, hwmode);
				continue;
			}
			result = TM_Deleted;	/* deleted by us: nothing left to lock */
			break;
		}

		/*
		 * A FOR KEY SHARE request (a foreign key check) that meets an update
		 * keeping the key columns, running or committed, locks the later
		 * versions first (they may share a row map block with this one, so
		 * not while this slot is held), then joins the running update, or
		 * passes the committed one: the version it was given is locked.
		 */
		if ((status == SLOT_BUSY || status == SLOT_GONE) && kind == PAX_MODIFY_LOCK &&
			mode == LockTupleKeyShare && keycheck != NULL &&
			(rs.st->flags & PAX_ROW_UPDATED) &&
			!(rs.st->flags & (PAX_ROW_MOVED | PAX_ROW_DEAD)) &&
			pax_row_next(rs.st) != *rownum &&
			(status == SLOT_GONE || TransactionIdEquals(xwait, pax_row_updater(rs.st))))
		{
			PaxRowState seen = *rs.st;
			int			keys = hop_keys_known(keycheck, &seen, *rownum);

			if (keys == 0)
			{
				release_row_slot(&rs);
				if (!hop_compare_keys(rel, keycheck))
				{
					if (status == SLOT_BUSY)
						XactLockTableWait(xwait, rel, &tid, XLTW_Lock);
					else
						keycheck->state = 2;
				}
				continue;
			}
			if (keys == 1 && !keycheck->new_locked)
			{
				TransactionId chain_wait;
				ChainResult r;

				release_row_slot(&rs);
				r = lock_later_versions(rel, pax_row_next(&seen), keycheck,
										pax_row_updater(&seen), &chain_wait);
				if (r == CHAIN_LOCKED)
					keycheck->new_locked = true;
				else if (r == CHAIN_GONE)
					keycheck->state = 2;	/* as if the update changed the keys */
				else if (wait_policy == LockWaitBlock)
					XactLockTableWait(chain_wait, rel, &tid, XLTW_LockUpdated);
				else if (wait_policy == LockWaitError)
					ereport(ERROR,
							(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
							 errmsg("could not obtain lock on row in relation \"%s\"",
									RelationGetRelationName(rel))));
				else
				{
					result = TM_WouldBlock;
					break;
				}
				continue;		/* then this version, if it is still as it was */
			}
			if (keys == 1 && status == SLOT_GONE)
			{
				release_row_slot(&rs);
				result = TM_Ok;
				break;
			}
			if (keys == 1)
			{
				join_update = true;
				status = SLOT_SHARED;
			}
		}

		/*
		 * An UPDATE must know whether it keeps the key columns when it may
		 * pass FOR KEY SHARE lockers (if it does not, it has FOR UPDATE
		 * strength and waits for every locker), and when a lock we took in
		 * another (sub)transaction stays beside it in a multixact, whose
		 * status tells later FOR KEY SHARE requests whether the keys
		 * changed.  (Reads the row: unlocked.)
		 */
		if (kind == PAX_MODIFY_UPDATE && keycheck != NULL && keycheck->state == 0 &&
			(status == SLOT_SHARED ||
			 (status == SLOT_FREE && own_mode >= 0 &&
			  ((rs.st->flags & PAX_ROW_MULTI) ||
			   !TransactionIdEquals(rs.st->xmax, GetCurrentTransactionId())))))
		{
			release_row_slot(&rs);
			judge_keys(keycheck);
			continue;
		}
		if (status == SLOT_SHARED && kind == PAX_MODIFY_UPDATE &&
			(keycheck == NULL || keycheck->state != 1))
			status = classify_slot(rs.st, cid, kind, LockTupleExclusive, &xwait, &own_mode);

		if (status == SLOT_BUSY)
		{
			fill_failure(tmfd, rs.st, *rownum);
			release_row_slot(&rs);
			if (wait_policy == LockWaitBlock)
			{
				/*
				 * Queue behind other waiters for this row, as heap does,
				 * unless we hold a lock on it already: a waiter queued
				 * there may be waiting for that lock of ours, and would
				 * deadlock with our upgrade (heap's skip_tuple_lock).
				 */
				if (!have_tuple_lock && own_mode < 0)
				{
					LockTuple(rel, &tid, hwmode);
					have_tuple_lock = true;
				}
				XactLockTableWait(xwait, rel, &tid,
								  kind == PAX_MODIFY_LOCK ? XLTW_Lock :
								  kind == PAX_MODIFY_UPDATE ? XLTW_Update : XLTW_Delete);
				continue;
			}
			if (wait_policy == LockWaitError)
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			result = (kind == PAX_MODIFY_LOCK) ? TM_WouldBlock : TM_BeingModified;
			break;
		}
		if (status == SLOT_GONE)
		{
			fill_failure(tmfd, rs.st, *rownum);
			release_row_slot(&rs);
			/* the last version is in another partition: heap's error, from heap's place */
			if (lock_last_version && ItemPointerIndicatesMovedPartitions(&tmfd->ctid))
			{
				if (have_tuple_lock)
					UnlockTuple(rel, &tid, hwmode);
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
			}
			if (!ItemPointerEquals(&tmfd->ctid, &tid) && lock_last_version)
			{
				step_to(rel, rownum, pax_tid_to_rownum(&tmfd->ctid), &tid, &have_tuple_lock,
						hwmode);
				tmfd->traversed = true;
				continue;
			}
			result = ItemPointerEquals(&tmfd->ctid, &tid) ? TM_Deleted : TM_Updated;
			break;
		}
		if (status == SLOT_SELF_MODIFIED || status == SLOT_INVISIBLE)
		{
			fill_failure(tmfd, rs.st, *rownum);
			release_row_slot(&rs);
			result = (status == SLOT_SELF_MODIFIED) ? TM_SelfModified : TM_Invisible;
			break;
		}

		/* free */
		if (crosscheck != InvalidSnapshot &&
			!(pax_group_visible(rs.g, crosscheck) &&
			  row_inserted(rel, rs.g, *rownum, crosscheck, &rs)))
		{
			fill_failure(tmfd, rs.st, *rownum);
			release_row_slot(&rs);
			result = TM_Updated;
			break;
		}
		/* free, or shared with other lockers */
		if (keycheck)
			keycheck->own_lock_mode = own_mode;
		/* a lock we hold already at this strength or stronger needs no write */
		if (kind != PAX_MODIFY_LOCK || own_mode < (int) mode)
		{
			/*
			 * Locks and changes are made in the current (sub)transaction's
			 * name, as heap's: a rollback to a savepoint undoes what the
			 * subtransaction did.  The update the request joins, other
			 * transactions' lockers it may pass (SLOT_SHARED), and a lock
			 * of ours taken by another (sub)transaction, which must outlive
			 * that rollback, stay in a multixact with it, with heap's
			 * statuses.  (The multixact is made before the WAL record: it
			 * logs itself and may fail.)
			 */
			TransactionId cur = GetCurrentTransactionId();
			MultiXactStatus newstatus = (kind == PAX_MODIFY_LOCK) ? lock_status(mode) :
				(kind == PAX_MODIFY_UPDATE && keycheck && keycheck->state == 1) ?
				MultiXactStatusNoKeyUpdate : MultiXactStatusUpdate;
			bool		own_by_other = own_mode >= 0 &&
				((rs.st->flags & PAX_ROW_MULTI) || !TransactionIdEquals(rs.st->xmax, cur));
			PaxRowState change;
			PaxRowState *st;

			if (join_update || status == SLOT_SHARED || own_by_other)
				new_multi = (rs.st->flags & PAX_ROW_MULTI) ?
					MultiXactIdExpand(rs.st->xmax, cur, newstatus) :
					MultiXactIdCreate(rs.st->xmax,
									  join_update ? MultiXactStatusNoKeyUpdate :
									  lock_status(pax_row_lock_mode(rs.st)),
									  cur, newstatus);
			st = begin_slot_change(&rs, &change);

			if (join_update)
			{
				/* the update stays, with its link to the new version */
				uint64		next = pax_row_next(st);

				st->xmax = new_multi;
				st->flags = PAX_ROW_UPDATED | PAX_ROW_MULTI;
				pax_row_set_next(st, next);
				finish_slot_change(rel, &rs, st, NULL);
				release_row_slot(&rs);
				result = TM_Ok;
				break;
			}
			if (kind == PAX_MODIFY_LOCK && MultiXactIdIsValid(new_multi))
			{
				st->xmax = new_multi;
				st->flags = PAX_ROW_LOCK_ONLY | PAX_ROW_MULTI;
			}
			else if (MultiXactIdIsValid(new_multi))
			{
				/* an update or delete with the lockers it keeps */
				st->xmax = new_multi;
				st->flags = PAX_ROW_MULTI | ((kind == PAX_MODIFY_UPDATE) ? PAX_ROW_UPDATED :
											 (kind == PAX_MODIFY_MOVE) ? PAX_ROW_MOVED : 0);
			}
			else if (kind == PAX_MODIFY_LOCK)
			{
				st->xmax = cur;
				st->flags = PAX_ROW_LOCK_ONLY |
					pax_row_lock_flags((LockTupleMode) Max((int) mode, own_mode));
			}
			else
			{
				st->xmax = cur;
				st->flags = (kind == PAX_MODIFY_UPDATE) ? PAX_ROW_UPDATED :
					(kind == PAX_MODIFY_MOVE) ? PAX_ROW_MOVED : 0;
			}
			st->cmax = cid;
			pax_row_set_next(st, *rownum);
			finish_slot_change(rel, &rs, st,
							   (kind == PAX_MODIFY_DELETE || kind == PAX_MODIFY_MOVE) ?
							   deleted : NULL);
		}
		release_row_slot(&rs);
		result = TM_Ok;
		break;
	}
	if (have_tuple_lock)
		UnlockTuple(rel, &tid, hwmode);
	return result;
}

/*
 * Delete row rownum, which the current command of this transaction has just
 * inserted (a speculative insertion that met a conflict): deleted by the
 * inserting command itself, it is invisible to every later command, and to
 * other transactions whatever becomes of ours.
 */
void
pax_kill_speculative_row(Relation rel, uint64 rownum)
{
	RowSlot		rs;
	PaxRowState change;
	PaxRowState *st;

	lock_written_row_slot(rel, rownum, &rs);
	st = begin_slot_change(&rs, &change);
	st->xmax = GetCurrentTransactionId();
	st->cmax = GetCurrentCommandId(false);
	st->flags = 0;
	pax_row_set_next(st, rownum);
	finish_slot_change(rel, &rs, st, NULL);
	release_row_slot(&rs);
}

/*
 * Mark row rownum, just inserted by this transaction under INSERT ... ON
 * CONFLICT, as a speculative insertion with its token (token 0: confirmed,
 * unmark it).  A unique check of another transaction that meets the row
 * then waits for the token, that is for our check to end, not for our
 * transaction (heap keeps the token in the tuple's t_ctid).
 */
void
pax_set_speculative_token(Relation rel, uint64 rownum, uint32 token)
{
	RowSlot		rs;
	PaxRowState change;
	PaxRowState *st;

	lock_written_row_slot(rel, rownum, &rs);
	if (TransactionIdIsValid(rs.st->xmax) ||
		(token == 0 && !(rs.st->flags & PAX_ROW_SPECULATIVE)))
	{
		/* nothing to mark: the slot belongs to someone else's story now */
		release_row_slot(&rs);
		return;
	}
	st = begin_slot_change(&rs, &change);
	st->flags = (token != 0) ? PAX_ROW_SPECULATIVE : 0;
	st->cmax = InvalidCommandId;
	pax_row_set_next(st, (token != 0) ? token : rownum);
	finish_slot_change(rel, &rs, st, NULL);
	release_row_slot(&rs);
}

/*
 * After an UPDATE, the new version new_rownum (which must be in a group or
 * the delta: the caller flushes it) carries the locks still held on the old
 * one, as heap's new tuple does: the FOR KEY SHARE lockers a non-key update
 * passed, and the lock this transaction held itself (own_mode, or -1).  A
 * DELETE or key update of the row then waits for them whichever version it
 * meets, and the locks survive an abort of the update.
 */
void
pax_carry_locks(Relation rel, uint64 old_rownum, uint64 new_rownum, int own_mode)
{
	RowSlot		rs;
	MultiXactMember *members = NULL;
	MultiXactMember *keep;
	TransactionId cur = GetCurrentTransactionId();
	int			n = 0,
				i,
				nkeep = 0;
	bool		own_kept = false;
	PaxRowState change;
	PaxRowState *st;

	if (!lock_row_slot(rel, old_rownum, &rs))
		return;
	if ((rs.st->flags & PAX_ROW_MULTI) && !(rs.st->flags & PAX_ROW_LOCK_ONLY))
		n = GetMultiXactIdMembers(rs.st->xmax, &members, false, false);
	release_row_slot(&rs);
	keep = palloc(sizeof(MultiXactMember) * (n + 1));
	for (i = 0; i < n; i++)
	{
		if (ISUPDATE_from_mxstatus(members[i].status) ||
			!TransactionIdIsInProgress(members[i].xid))
			continue;
		if (TransactionIdEquals(members[i].xid, cur))
		{
			if (own_kept)
				continue;
			own_kept = true;
			if (own_mode > (int) status_mode(members[i].status))
				members[i].status = lock_status((LockTupleMode) own_mode);
		}
		keep[nkeep++] = members[i];
	}
	if (own_mode >= 0 && !own_kept)
	{
		keep[nkeep].xid = cur;
		keep[nkeep].status = lock_status((LockTupleMode) own_mode);
		nkeep++;
	}
	if (nkeep == 0)
		return;

	lock_written_row_slot(rel, new_rownum, &rs);
	st = begin_slot_change(&rs, &change);
	if (nkeep > 1)
	{
		st->xmax = MultiXactIdCreateFromMembers(nkeep, keep);
		st->flags = PAX_ROW_LOCK_ONLY | PAX_ROW_MULTI;
	}
	else
	{
		st->xmax = keep[0].xid;
		st->flags = PAX_ROW_LOCK_ONLY | pax_row_lock_flags(status_mode(keep[0].status));
	}
	st->cmax = InvalidCommandId;
	pax_row_set_next(st, new_rownum);
	finish_slot_change(rel, &rs, st, NULL);
	release_row_slot(&rs);
}

/* Record that row old_rownum, which we just marked updated, lives on as new_rownum. */
void
pax_link_update(Relation rel, uint64 old_rownum, uint64 new_rownum)
{
	RowSlot		rs;
	PaxRowState change;
	PaxRowState *st;

	lock_written_row_slot(rel, old_rownum, &rs);
	if (!TransactionIdIsCurrentTransactionId(pax_row_updater(rs.st)) ||
		!(rs.st->flags & PAX_ROW_UPDATED))
		elog(ERROR, "pax row " UINT64_FORMAT " of \"%s\" is not being updated by this transaction",
			 old_rownum, RelationGetRelationName(rel));
	st = begin_slot_change(&rs, &change);
	pax_row_set_next(st, new_rownum);
	finish_slot_change(rel, &rs, st, NULL);
	release_row_slot(&rs);
}

/*
 * The row number of the last version of a row in its update chain, as far
 * as committed (or our own) updates go.
 */
uint64
pax_latest_version(Relation rel, uint64 rownum)
{
	int			hops;

	for (hops = 0; hops < 1000000; hops++)
	{
		PaxDirectory *dir = pax_current_directory(rel);
		int			gi = pax_find_group_index(dir, rownum);
		PaxGroupEntry *g;
		PaxRowState st;
		TransactionId updater;

		if (gi < 0)
			return rownum;
		g = dir->groups[gi];
		if (g->row_map == InvalidBlockNumber)
			return rownum;
		read_row_state(rel, g, rownum, &st);
		if (!(st.flags & PAX_ROW_UPDATED) || pax_row_next(&st) == rownum)
			return rownum;
		updater = pax_row_updater(&st);
		if (!(TransactionIdIsCurrentTransactionId(updater) ||
			  (st.flags & PAX_ROW_DEAD) || TransactionIdDidCommit(updater)))
			return rownum;
		rownum = pax_row_next(&st);
	}
	return rownum;
}
