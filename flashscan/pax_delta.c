/*-------------------------------------------------------------------------
 *
 * pax_delta.c
 *	  The delta: the shared page small inserts append rows to.
 *
 * A PAX group records one inserting command, so a transaction that inserts
 * one row would otherwise write a group, a block, of its own.  Instead a
 * transaction's first rows of a table, up to PAX_DELTA_BYTES_PER_XACT
 * (through INSERT or UPDATE; COPY and CREATE TABLE AS go straight to
 * groups), are
 * appended to the table's delta page, row-wise, each with its own xmin and
 * cmin, under the page's exclusive lock and one generic WAL record, much as
 * heap inserts a tuple.  The row gets its row number (its TID) from its
 * line pointer: the page spans PAX_DELTA_SPAN row numbers reserved when it
 * was made, and is registered in the directory as a group
 * (PAX_GROUP_DELTA), so every reader finds it by row number or by scanning
 * the directory, and deletes, updates and row locks use its rows' states
 * like any group's (pax_rowstate.c): kept at the end of each item from
 * format 6 (pax.h), in a row map of its own before.
 *
 * When the page is full the next inserter makes a new one (a block from
 * the free list or the end of the file, then the directory entry and the
 * metapage's delta_block in one record).  VACUUM rewrites delta pages whose
 * rows are all committed before every snapshot (or aborted) into PAX
 * groups, merged with their small neighbours (pax_vacuum.c); it first seals
 * the page so that no row is appended while it copies.
 *
 * Readers decode a delta page into the same column arrays a group decodes
 * into (pax_delta_read_columns()), so scans, FlashScan, index fetches,
 * ANALYZE and VACUUM treat it as a group whose visibility is per row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "pax.h"

#define DELTA_HEADER_SIZE	PAX_DELTA_ITEM_HEADER_SIZE

/* The most an item may take: what an empty delta page has room for. */
#define DELTA_MAX_ITEM \
	(BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(PaxDeltaPageOpaque)) - sizeof(ItemIdData))

static bool
is_delta_page(Page page)
{
	return !PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(PaxDeltaPageOpaque)) &&
		PaxDeltaPageGetOpaque(page)->page_id == PAX_DELTA_PAGE_ID;
}

/* Does a delta page's every item end with its row's state? */
static bool
has_row_states(Page page)
{
	return (PaxDeltaPageGetOpaque(page)->flags & PAX_DELTA_ROW_STATES) != 0;
}

/* The bytes an item of tuple bytes item_bytes (header included) takes on page. */
static Size
item_size_on(Page page, Size item_bytes)
{
	return has_row_states(page) ? MAXALIGN(item_bytes) + sizeof(PaxRowState) : item_bytes;
}

/*
 * The state of row i of delta page page (block blkno of rel), which keeps
 * its rows' states; NULL if the page does not hold that row (yet).  The
 * state is the item's last bytes, MAXALIGN'ed: items start aligned and
 * their length is a multiple of the alignment.
 */
PaxRowState *
pax_delta_state(Relation rel, Page page, BlockNumber blkno, uint32 i)
{
	ItemId		lp;

	if (!is_delta_page(page) || !has_row_states(page))
		pax_corrupted(rel, blkno, "pax delta page that keeps its rows' states");
	if (i >= PageGetMaxOffsetNumber(page))
		return NULL;
	lp = PageGetItemId(page, i + 1);
	if (!ItemIdIsNormal(lp) ||
		ItemIdGetLength(lp) < DELTA_HEADER_SIZE + sizeof(uint32) + sizeof(PaxRowState) ||
		ItemIdGetLength(lp) % MAXIMUM_ALIGNOF != 0)
		pax_corrupted(rel, blkno, "pax delta page item");
	return (PaxRowState *) ((char *) PageGetItem(page, lp) + ItemIdGetLength(lp) -
							sizeof(PaxRowState));
}

/* Is page a delta page that still takes rows? */
static bool
delta_page_open(Page page)
{
	return is_delta_page(page) && !(PaxDeltaPageGetOpaque(page)->flags & PAX_DELTA_SEALED);
}

/*
 * Make a new delta page, unless another backend replaced the full one
 * (full_blk) meanwhile.  The page image is logged first; the directory
 * entry and the metapage's delta_block follow in one record, so a crash in
 * between leaves an unreferenced block, never a half-made delta.
 */
static void
make_delta_page(Relation rel, BlockNumber full_blk)
{
	Buffer		buf,
				metabuf;
	uint32		tag;
	PaxMetaPageData *meta;
	GenericXLogState *state;
	Page		page;
	PaxDeltaPageOpaque *op;
	PaxGroupEntry *entry;
	int			natts = RelationGetDescr(rel)->natts;
	uint64		first;
	bool		states = pax_write_format >= 6;

	/* (a format 6 page makes the table one older libraries refuse) */
	tag = pax_allocate_blocks(rel, 1, &buf, states ? 6 : 0);
	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	meta = PaxPageGetMeta(BufferGetPage(metabuf));
	if (meta->delta_block != full_blk)
	{
		/* somebody else made one: ours goes back to the free list */
		state = GenericXLogStart(rel);
		pax_free_blocks(PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0)),
						BufferGetBlockNumber(buf), 1);
		GenericXLogFinish(state);
		UnlockReleaseBuffer(metabuf);
		ReleaseBuffer(buf);
		return;
	}
	first = meta->next_rownum;
	if (first + PAX_DELTA_SPAN > (uint64) MaxBlockNumber * PAX_ROWS_PER_TID_BLOCK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pax table \"%s\" has used up its row numbers",
						RelationGetRelationName(rel)),
				 errhint("Copy it into a new table with CREATE TABLE ... USING pax AS SELECT ...")));

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
	PageInit(page, BLCKSZ, sizeof(PaxDeltaPageOpaque));
	((PageHeader) page)->pd_prune_xid = tag;
	op = PaxDeltaPageGetOpaque(page);
	op->first_rownum = first;
	op->span = PAX_DELTA_SPAN;
	op->flags = states ? PAX_DELTA_ROW_STATES : 0;
	op->page_id = PAX_DELTA_PAGE_ID;
	GenericXLogFinish(state);

	entry = palloc0(PaxGroupEntrySize(natts));
	entry->first_rownum = first;
	entry->nrows = PAX_DELTA_SPAN;
	entry->first_block = BufferGetBlockNumber(buf);
	entry->nblocks = 1;
	entry->ncols = natts;
	entry->flags = PAX_GROUP_DELTA | (states ? PAX_GROUP_PAGE_STATES : 0);
	entry->xmin = InvalidTransactionId;
	entry->row_map = states ? BufferGetBlockNumber(buf) : InvalidBlockNumber;
	entry->tag = tag;
	entry->horizon = InvalidTransactionId;
	pax_add_directory_entry(rel, metabuf, entry, BufferGetBlockNumber(buf));
	pfree(entry);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
}

/*
 * The bytes a row's delta item takes (its PaxDeltaRowHeader and
 * MinimalTuple; on a page that keeps row states, their alignment and the
 * state too), computed as heap_form_minimal_tuple() sizes the tuple,
 * without forming it.
 */
Size
pax_delta_item_size(TupleDesc desc, Datum *values, bool *isnull)
{
	bool		hasnull = false;
	Size		len;
	int			i;

	for (i = 0; i < desc->natts && !hasnull; i++)
		hasnull = isnull[i];
	len = SizeofMinimalTupleHeader + (hasnull ? BITMAPLEN(desc->natts) : 0);
	len = MAXALIGN(len + MINIMAL_TUPLE_OFFSET) - MINIMAL_TUPLE_OFFSET;
	len += DELTA_HEADER_SIZE + heap_compute_data_size(desc, values, isnull);
	return pax_write_format >= 6 ? MAXALIGN(len) + sizeof(PaxRowState) : len;
}

/*
 * Append a row (plain values, as a group would hold them) to the delta;
 * *rownum gets its row number, *used the bytes it took.  False if its item
 * would take more than budget bytes (the caller makes a group of it).
 * When pax's changes are logically decoded, the append is logged by pax's
 * own WAL record, which also carries the row for decoding: with
 * decode_insert (a plain INSERT) it decodes as one, with update_old (an
 * UPDATE's new version, and the old row's identity) as the UPDATE, and
 * *decoded says so.
 */
bool
pax_delta_insert(Relation rel, TupleDesc desc, Datum *values, bool *isnull,
				 CommandId cid, Size budget, bool decode_insert,
				 const PaxLogicalOld *update_old, uint64 *rownum, Size *used, bool *decoded)
{
	Size		tuplesz;
	MinimalTuple mtup;
	TransactionId xid;
	char	   *item;

	*decoded = false;
	if (pax_delta_item_size(desc, values, isnull) > budget)
		return false;
	mtup = heap_form_minimal_tuple(desc, values, isnull);
	tuplesz = DELTA_HEADER_SIZE + mtup->t_len;
	/* (a row no page could take would make new pages for ever) */
	if (MAXALIGN(tuplesz) + sizeof(PaxRowState) > DELTA_MAX_ITEM)
	{
		pfree(mtup);
		return false;
	}
	/* the (sub)transaction's own xid, as heap's t_xmin: a rollback to savepoint hides it */
	xid = GetCurrentTransactionId();
	/* room for a free row state after it, for a page that keeps them */
	item = palloc0(MAXALIGN(tuplesz) + sizeof(PaxRowState));
	((PaxDeltaRowHeader *) item)->xmin = xid;
	((PaxDeltaRowHeader *) item)->cmin = cid;
	memcpy(item + DELTA_HEADER_SIZE, mtup, mtup->t_len);
	pfree(mtup);

	for (;;)
	{
		Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
		BlockNumber blk = PaxPageGetMeta(BufferGetPage(metabuf))->delta_block;

		UnlockReleaseBuffer(metabuf);
		CHECK_FOR_INTERRUPTS();
		if (blk != InvalidBlockNumber)
		{
			Buffer		buf = ReadBuffer(rel, blk);
			Page		page;
			Size		itemsz = 0;

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			page = BufferGetPage(buf);
			if (delta_page_open(page))
				itemsz = item_size_on(page, tuplesz);
			if (itemsz > 0 &&
				PageGetMaxOffsetNumber(page) < PaxDeltaPageGetOpaque(page)->span &&
				PageGetFreeSpace(page) >= MAXALIGN(itemsz))
			{
				OffsetNumber off;

				*used = MAXALIGN(itemsz) + sizeof(ItemIdData);
				if (pax_logical_delta(rel))
				{
					off = pax_log_delta_insert(rel, buf, item, itemsz, decode_insert,
											   update_old);
					*decoded = decode_insert || update_old != NULL;
					*rownum = PaxDeltaPageGetOpaque(page)->first_rownum + off - 1;
				}
				else
				{
					GenericXLogState *state = GenericXLogStart(rel);
					Page		wpage = GenericXLogRegisterBuffer(state, buf, 0);

					off = PageAddItem(wpage, (Item) item, itemsz, InvalidOffsetNumber,
									  false, false);
					if (off == InvalidOffsetNumber)
						elog(ERROR, "could not add a row to delta page %u of \"%s\"",
							 blk, RelationGetRelationName(rel));
					*rownum = PaxDeltaPageGetOpaque(wpage)->first_rownum + off - 1;
					GenericXLogFinish(state);
				}
				UnlockReleaseBuffer(buf);
				pfree(item);
				return true;
			}
			UnlockReleaseBuffer(buf);
		}
		make_delta_page(rel, blk);
	}
}

/* Pin and share-lock a delta group's page, checking it is the one the entry names. */
static Buffer
lock_delta_page(Relation rel, PaxGroupEntry *g, BufferAccessStrategy strategy,
				uint64 *blocks_read)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, g->first_block, RBM_NORMAL, strategy);
	Page		page;

	if (blocks_read)
		(*blocks_read)++;
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	pax_check_block_tag(rel, page, g->first_block, g->tag);
	if (!is_delta_page(page) ||
		PaxDeltaPageGetOpaque(page)->first_rownum != g->first_rownum ||
		PageGetMaxOffsetNumber(page) > g->nrows)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("pax table \"%s\": block %u is not the delta page its directory entry names",
						RelationGetRelationName(rel), g->first_block)));
	return buf;
}

/*
 * The headers of a delta group's rows (hdrs has room for g->nrows); returns
 * how many rows the page holds.  With states (room for g->nrows), a group
 * that keeps its rows' states (PaxGroupHasPageStates) gives them too, read
 * under the same lock.
 */
uint32
pax_delta_read_headers(Relation rel, PaxGroupEntry *g, PaxDeltaRowHeader *hdrs,
					   PaxRowState *states, BufferAccessStrategy strategy,
					   uint64 *blocks_read)
{
	Buffer		buf = lock_delta_page(rel, g, strategy, blocks_read);
	Page		page = BufferGetPage(buf);
	uint32		n = PageGetMaxOffsetNumber(page);
	uint32		i;

	Assert(states == NULL || PaxGroupHasPageStates(g));
	for (i = 0; i < n; i++)
	{
		hdrs[i] = *(PaxDeltaRowHeader *) PageGetItem(page, PageGetItemId(page, i + 1));
		if (states)
			states[i] = *pax_delta_state(rel, page, g->first_block, i);
	}
	UnlockReleaseBuffer(buf);
	return n;
}

/* How many rows a delta group's page holds. */
uint32
pax_delta_nrows(Relation rel, PaxGroupEntry *g)
{
	Buffer		buf = lock_delta_page(rel, g, NULL, NULL);
	uint32		n = PageGetMaxOffsetNumber(BufferGetPage(buf));

	UnlockReleaseBuffer(buf);
	return n;
}

/* One row's header; false if the delta page does not hold that row. */
bool
pax_delta_row_header(Relation rel, PaxGroupEntry *g, uint64 rownum, PaxDeltaRowHeader *hdr)
{
	Buffer		buf = lock_delta_page(rel, g, NULL, NULL);
	Page		page = BufferGetPage(buf);
	OffsetNumber off = (OffsetNumber) (rownum - g->first_rownum + 1);
	bool		found = off <= PageGetMaxOffsetNumber(page);

	if (found)
		*hdr = *(PaxDeltaRowHeader *) PageGetItem(page, PageGetItemId(page, off));
	UnlockReleaseBuffer(buf);
	return found;
}

/*
 * Decode the needed columns of a delta group's rows into cols[], as
 * pax_read_columns() does for a group.  Each column keeps its own copy of
 * the page for its by-reference values to point into, so that a later read
 * of other columns (FlashScan's second pass) leaves them valid.  Row
 * numbers the page does not hold (yet) read as NULL.  Returns how many rows
 * the page held.
 */
uint32
pax_delta_read_columns(Relation rel, PaxGroupEntry *g, TupleDesc desc,
					   const bool *needed, PaxColumnData *cols,
					   BufferAccessStrategy strategy, uint64 *blocks_read)
{
	Buffer		buf = lock_delta_page(rel, g, strategy, blocks_read);
	Page		page = BufferGetPage(buf);
	uint32		n = PageGetMaxOffsetNumber(page);
	int			att;

	for (att = 0; att < desc->natts; att++)
	{
		if (!needed[att])
			continue;
		if (cols[att].bufsize < BLCKSZ)
		{
			if (cols[att].buf)
				pfree(cols[att].buf);
			cols[att].bufsize = BLCKSZ;
			cols[att].buf = palloc(BLCKSZ);
		}
		memcpy(cols[att].buf, page, BLCKSZ);
	}
	UnlockReleaseBuffer(buf);

	for (att = 0; att < desc->natts; att++)
	{
		Page		copy = (Page) cols[att].buf;
		uint32		i;

		if (!needed[att])
			continue;
		for (i = 0; i < n; i++)
		{
			MinimalTuple mtup = (MinimalTuple) ((char *) PageGetItem(copy, PageGetItemId(copy, i + 1)) +
												DELTA_HEADER_SIZE);
			HeapTupleData htup;

			htup.t_len = mtup->t_len + MINIMAL_TUPLE_OFFSET;
			htup.t_data = (HeapTupleHeader) ((char *) mtup - MINIMAL_TUPLE_OFFSET);
			ItemPointerSetInvalid(&htup.t_self);
			htup.t_tableOid = InvalidOid;
			if (TupleDescAttr(desc, att)->attisdropped)
			{
				cols[att].values[i] = (Datum) 0;
				cols[att].isnull[i] = true;
			}
			else
				cols[att].values[i] = heap_getattr(&htup, att + 1, desc, &cols[att].isnull[i]);
		}
		for (; i < g->nrows; i++)
		{
			cols[att].values[i] = (Datum) 0;
			cols[att].isnull[i] = true;
		}
	}
	return n;
}

/*
 * Read the needed columns of one row of a delta group (row ri, which the
 * page holds) into values/isnull.  By-reference values point into a copy
 * of the row kept in cols[] (the first needed column's buffer), valid until
 * cols is used again.  A fetch that lands on one or two rows of a delta
 * page (a bitmap scan of a range whose rows were updated at different
 * times, each new version on the delta page of its moment) reads just
 * them instead of decoding every row of the page.
 */
void
pax_delta_read_row(Relation rel, PaxGroupEntry *g, TupleDesc desc, const bool *needed,
				   uint32 ri, PaxColumnData *cols, Datum *values, bool *isnull)
{
	Buffer		buf = lock_delta_page(rel, g, NULL, NULL);
	Page		page = BufferGetPage(buf);
	ItemId		lp;
	MinimalTuple mtup;
	HeapTupleData htup;
	PaxColumnData *holder = NULL;
	int			att;

	if (ri >= PageGetMaxOffsetNumber(page))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("pax table \"%s\": delta page %u does not hold row " UINT64_FORMAT,
						RelationGetRelationName(rel), g->first_block, g->first_rownum + ri)));
	lp = PageGetItemId(page, ri + 1);
	mtup = (MinimalTuple) ((char *) PageGetItem(page, lp) + DELTA_HEADER_SIZE);
	if (!ItemIdIsNormal(lp) || ItemIdGetLength(lp) < DELTA_HEADER_SIZE + sizeof(uint32) ||
		DELTA_HEADER_SIZE + mtup->t_len > ItemIdGetLength(lp))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("pax table \"%s\": row " UINT64_FORMAT " of delta page %u is damaged",
						RelationGetRelationName(rel), g->first_rownum + ri, g->first_block)));
	for (att = 0; att < desc->natts && holder == NULL; att++)
		if (needed[att])
			holder = &cols[att];
	if (holder == NULL)
	{
		UnlockReleaseBuffer(buf);
		for (att = 0; att < desc->natts; att++)
		{
			values[att] = (Datum) 0;
			isnull[att] = true;
		}
		return;
	}
	if (holder->bufsize < mtup->t_len)
	{
		if (holder->buf)
			pfree(holder->buf);
		holder->bufsize = Max(mtup->t_len, BLCKSZ);
		holder->buf = palloc(holder->bufsize);
	}
	memcpy(holder->buf, mtup, mtup->t_len);
	UnlockReleaseBuffer(buf);

	mtup = (MinimalTuple) holder->buf;
	htup.t_len = mtup->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) mtup - MINIMAL_TUPLE_OFFSET);
	ItemPointerSetInvalid(&htup.t_self);
	htup.t_tableOid = InvalidOid;
	heap_deform_tuple(&htup, desc, values, isnull);
	for (att = 0; att < desc->natts; att++)
		if (!needed[att] || TupleDescAttr(desc, att)->attisdropped)
		{
			values[att] = (Datum) 0;
			isnull[att] = true;
		}
}

/*
 * Seal a delta page for VACUUM to rewrite it, if every row on it was
 * inserted by a transaction that committed before oldest_xmin or aborted
 * (and it has any): no row is appended after this, and the metapage no
 * longer names it as the delta page.  Returns whether it is sealed.
 */
bool
pax_delta_seal(Relation rel, PaxGroupEntry *g, TransactionId oldest_xmin)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	Buffer		buf = ReadBuffer(rel, g->first_block);
	Page		page;
	uint32		n,
				i;
	bool		ok = true;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	pax_check_block_tag(rel, page, g->first_block, g->tag);
	n = PageGetMaxOffsetNumber(page);
	if (n == 0)
		ok = false;
	for (i = 0; i < n && ok; i++)
	{
		TransactionId xmin = ((PaxDeltaRowHeader *) PageGetItem(page, PageGetItemId(page, i + 1)))->xmin;

		if (TransactionIdIsCurrentTransactionId(xmin) || TransactionIdIsInProgress(xmin))
			ok = false;
		else if (TransactionIdDidCommit(xmin) && !TransactionIdPrecedes(xmin, oldest_xmin))
			ok = false;
	}
	if (ok && !(PaxDeltaPageGetOpaque(page)->flags & PAX_DELTA_SEALED))
	{
		GenericXLogState *state = GenericXLogStart(rel);
		PaxMetaPageData *meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));

		PaxDeltaPageGetOpaque(GenericXLogRegisterBuffer(state, buf, 0))->flags |= PAX_DELTA_SEALED;
		if (meta->delta_block == g->first_block)
			meta->delta_block = InvalidBlockNumber;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return ok;
}
