/*-------------------------------------------------------------------------
 *
 * pax_writer.c
 *	  Row buffers that become pax groups.
 *
 * Inserted rows collect in a buffer per relation in backend memory, column
 * by column, and are written as one group (pax_blocks.c, pax_directory.c) when:
 *	- the next row would not fit in group_blocks blocks, or the group has
 *	  PAX_MAX_GROUP_ROWS rows;
 *	- the inserting (sub)transaction or command changes: a group records one
 *	  writer xid and command id, its visibility unit;
 *	- this backend is about to read the relation (scans, index fetches,
 *	  ANALYZE, VACUUM, index builds call pax_flush_relation());
 *	- the transaction is about to commit or prepare.
 * Rows of an aborted (sub)transaction are dropped with its buffer.
 *
 * Each row gets its row number, hence its TID, when it is inserted, because
 * the executor inserts index entries right after: the buffer reserves row
 * numbers from the metapage in runs of up to PAX_ROWNUM_RESERVE, and when
 * another writer took the numbers after ours, the group is sealed and the
 * next one starts at the new run (a group's row numbers are contiguous).
 * Reserved numbers a group does not use are simply never valid TIDs.
 *
 * A transaction's first rows of a table (up to PAX_DELTA_BYTES_PER_XACT)
 * inserted by INSERT or UPDATE go to the shared delta page instead (pax_delta.c), so
 * that small transactions do not write a group each; VACUUM (autovacuum
 * counts inserts) later turns delta pages into groups.  COPY, CREATE TABLE
 * AS and table rewrites, and every row after the first ones, make groups.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "pax.h"
#include "pax_minipage.h"

typedef struct PaxWriteBuffer
{
	Oid			relid;			/* hash key */
	SubTransactionId subid;		/* the buffer's rows belong to this subxact */
	TransactionId xid;
	CommandId	cid;
	uint16		flags;			/* PaxGroupEntry flags of the group */
	uint8	   *decode_kinds;	/* [capacity] how the group's WAL decodes each row
								 * (PAX_DECODE_*), or NULL: no row */
	CommandId	decoded_cid;	/* the last command that buffered such a row */
	TransactionId horizon;		/* of the group (copies by VACUUM FULL) */
	int			natts;
	TupleDesc	desc;			/* the descriptor the rows were buffered under */
	RelFileNode node;			/* the file the reserved row numbers are of */
	int			group_blocks;
	int			format;			/* the format version the group is written in */
	uint32		nrows;
	uint32		capacity;		/* allocated rows per column */
	uint64		first_rownum;	/* of row 0 */
	uint64		reserved_end;	/* first row number past our reservation */
	TransactionId reserved_xid; /* the (sub)transaction it was made for */
	Size		delta_bytes;	/* bytes this transaction put in the delta */
	Datum	  **values;			/* [natts][capacity] */
	bool	  **isnull;
	bool	   *hasnulls;
	Size	   *data_bytes;		/* variable width: end of the data area */
	PaxRowState *states;		/* copies only: the rows' states, or NULL if none */
	MemoryContext cxt;			/* the rows; reset when the group is written */
} PaxWriteBuffer;

static HTAB *write_buffers = NULL;
static MemoryContext writer_cxt = NULL;

static void pax_xact_callback(XactEvent event, void *arg);
static void flush_buffers(bool decodable_only);
static void pax_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg);

void
pax_writer_init(void)
{
	RegisterXactCallback(pax_xact_callback, NULL);
	RegisterSubXactCallback(pax_subxact_callback, NULL);
}

static PaxWriteBuffer *
lookup_buffer(Oid relid, bool create)
{
	bool		found;
	PaxWriteBuffer *wb;

	if (write_buffers == NULL)
	{
		HASHCTL		ctl;

		if (!create)
			return NULL;
		writer_cxt = AllocSetContextCreate(TopMemoryContext, "pax write buffers",
										   ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PaxWriteBuffer);
		ctl.hcxt = writer_cxt;
		write_buffers = hash_create("pax write buffers", 16, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	wb = hash_search(write_buffers, &relid, create ? HASH_ENTER : HASH_FIND, &found);
	if (create && !found)
	{
		wb->cxt = AllocSetContextCreate(writer_cxt, "pax write buffer",
										ALLOCSET_DEFAULT_SIZES);
		wb->nrows = 0;
		wb->capacity = 0;
		wb->reserved_end = wb->first_rownum = 0;
		wb->reserved_xid = InvalidTransactionId;
		wb->delta_bytes = 0;
		wb->horizon = InvalidTransactionId;
	}
	return wb;
}

/* Empty a buffer for a new group (keeping any reserved row numbers). */
static void
reset_buffer(PaxWriteBuffer *wb, Relation rel, TransactionId xid, CommandId cid)
{
	TupleDesc	desc = RelationGetDescr(rel);
	MemoryContext old;
	int			att;

	MemoryContextReset(wb->cxt);
	old = MemoryContextSwitchTo(wb->cxt);
	wb->subid = GetCurrentSubTransactionId();
	wb->xid = xid;
	wb->cid = cid;
	wb->flags = 0;
	wb->decode_kinds = NULL;
	wb->states = NULL;
	wb->natts = desc->natts;
	wb->desc = CreateTupleDescCopy(desc);
	wb->group_blocks = pax_relation_group_blocks(rel);
	/* as set when the rows come, not when they are written (at commit) */
	wb->format = pax_write_format;
	wb->nrows = 0;
	wb->capacity = 64;
	wb->values = palloc(sizeof(Datum *) * wb->natts);
	wb->isnull = palloc(sizeof(bool *) * wb->natts);
	wb->hasnulls = palloc0(sizeof(bool) * wb->natts);
	wb->data_bytes = palloc0(sizeof(Size) * wb->natts);
	for (att = 0; att < wb->natts; att++)
	{
		wb->values[att] = palloc(sizeof(Datum) * wb->capacity);
		wb->isnull[att] = palloc(sizeof(bool) * wb->capacity);
	}
	MemoryContextSwitchTo(old);
}

/* Minipage sizes of the buffered rows, plus (optionally) one more row. */
static uint32
blocks_needed(PaxWriteBuffer *wb, TupleDesc desc, uint32 nrows,
			  const Size *data_bytes, const bool *hasnulls, Size *sizes)
{
	int			att;

	for (att = 0; att < wb->natts; att++)
		sizes[att] = pax_minipage_size(TupleDescAttr(desc, att), nrows,
									   hasnulls[att], data_bytes[att], wb->format);
	return pax_layout_group(wb->natts, sizes, NULL);
}

/* Write the buffered rows as a group. */
static void
seal_group(PaxWriteBuffer *wb, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	PaxGroupEntry *entry;
	char	   *stream;
	MemoryContext old;

	if (wb->nrows == 0)
		return;
	/*
	 * The rows were buffered under the first wb->natts columns; ALTER TABLE
	 * may have added columns since (the group then stores fewer columns and
	 * readers supply the new ones' defaults).  Columns are never removed
	 * from the descriptor.  A type change rewrites the table, reading it
	 * with the old descriptor after the catalog already has the new types,
	 * and writes this buffer first: the rows are encoded as they were
	 * buffered, under wb->desc.
	 */
	if (desc->natts < wb->natts)
		elog(ERROR, "pax table \"%s\" lost columns with rows buffered",
			 RelationGetRelationName(rel));

	old = MemoryContextSwitchTo(wb->cxt);
	entry = palloc0(PaxGroupEntrySize(wb->natts));
	entry->first_rownum = wb->first_rownum;
	entry->nrows = wb->nrows;
	entry->flags = wb->flags;
	entry->xmin = wb->xid;
	entry->cmin = wb->cid;
	entry->row_map = InvalidBlockNumber;
	entry->horizon = wb->horizon;
	stream = pax_encode_group(wb->desc, wb->natts, wb->nrows, wb->values, wb->isnull,
							  wb->hasnulls, wb->data_bytes, NULL, wb->format, entry);
	MemoryContextSwitchTo(old);

	/* a copied group keeps its rows' deleters and lockers (VACUUM FULL) */
	pax_append_group(rel, entry, stream, wb->format, wb->states, wb->desc, wb->decode_kinds);

	wb->first_rownum += wb->nrows;
	wb->nrows = 0;
	MemoryContextReset(wb->cxt);
	wb->decode_kinds = NULL;
	wb->capacity = 0;
}

static void
grow_buffer(PaxWriteBuffer *wb)
{
	int			att;
	uint32		cap = wb->capacity * 2;

	for (att = 0; att < wb->natts; att++)
	{
		wb->values[att] = repalloc(wb->values[att], sizeof(Datum) * cap);
		wb->isnull[att] = repalloc(wb->isnull[att], sizeof(bool) * cap);
	}
	if (wb->states)
		wb->states = repalloc(wb->states, sizeof(PaxRowState) * cap);
	if (wb->decode_kinds)
		wb->decode_kinds = repalloc(wb->decode_kinds, cap);
	wb->capacity = cap;
}

/*
 * The minipage sizes after appending one row (vals/isnull) to the buffer:
 * fills new_bytes/new_nulls and returns the blocks the group would need.
 */
static uint32
blocks_with_row(PaxWriteBuffer *wb, TupleDesc desc, const Datum *vals,
				const bool *isnull, Size *new_bytes, bool *new_nulls, Size *sizes)
{
	int			att;

	for (att = 0; att < wb->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		Size		start;

		new_nulls[att] = wb->hasnulls[att] || isnull[att];
		new_bytes[att] = wb->data_bytes[att];
		if (!isnull[att] && a->attlen < 0)
			new_bytes[att] = pax_place_value(a, vals[att], wb->data_bytes[att], &start);
	}
	return blocks_needed(wb, desc, wb->nrows + 1, new_bytes, new_nulls, sizes);
}

/*
 * Does a row inserted by (xid, cid), going to a group with these flags,
 * belong to the buffered group?  Frozen rows (visible to every snapshot)
 * share a group whoever inserted them; it keeps the newest inserter, for
 * standby snapshots (pax_group_visible()).
 */
static bool
same_insertion(PaxWriteBuffer *wb, TransactionId xid, CommandId cid, uint16 flags)
{
	if (wb->flags != flags)
		return false;
	if (flags & PAX_GROUP_FROZEN)
		return true;
	return wb->xid == xid && wb->cid == cid;
}

/*
 * Append a row of plain values, inserted by (xid, cid), to the buffer of the
 * next group, writing the buffered group first when the row does not fit it
 * or has another insertion; returns the row's number.  flags and state (a
 * row state, or NULL) come from VACUUM FULL's copies; inserts pass 0, NULL.
 * decode_as: how the group's WAL is to decode the row (PAX_DECODE_*).
 */
static uint64
buffer_row(PaxWriteBuffer *wb, Relation rel, TransactionId xid, CommandId cid, uint16 flags,
		   const Datum *vals, const bool *isnull, const PaxRowState *state, int decode_as)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	Size	   *new_bytes = palloc(sizeof(Size) * natts);
	bool	   *new_nulls = palloc(sizeof(bool) * natts);
	Size	   *sizes = palloc(sizeof(Size) * natts);
	uint32		nblocks;
	uint64		rownum;
	MemoryContext old;
	int			att;

	/*
	 * Row numbers reserved in another file of the relation (CLUSTER and
	 * ALTER TABLE rewrites swap files without a new-file callback) are not
	 * this file's: a new reservation.  Its rows were written before the
	 * rewrite read the table.
	 */
	if (!RelFileNodeEquals(wb->node, rel->rd_node))
	{
		if (wb->nrows > 0)
			elog(ERROR, "pax table \"%s\" has buffered rows of a file it no longer has",
				 RelationGetRelationName(rel));
		wb->first_rownum = wb->reserved_end = 0;
		wb->capacity = 0;
		wb->node = rel->rd_node;
	}
	if (wb->capacity > 0 &&
		(!same_insertion(wb, xid, cid, flags) || wb->natts != natts))
		seal_group(wb, rel);
	if (wb->capacity == 0)
	{
		reset_buffer(wb, rel, xid, cid);
		wb->flags = flags;
	}

	/* Does the group still fit with this row?  If not, write it first. */
	nblocks = blocks_with_row(wb, desc, vals, isnull, new_bytes, new_nulls, sizes);
	if (wb->nrows > 0 &&
		(wb->nrows >= PAX_MAX_GROUP_ROWS || nblocks > (uint32) wb->group_blocks))
	{
		seal_group(wb, rel);
		reset_buffer(wb, rel, xid, cid);
		wb->flags = flags;
		nblocks = blocks_with_row(wb, desc, vals, isnull, new_bytes, new_nulls, sizes);
	}
	/*
	 * A row larger than the table's groups gets a group of its own, as
	 * large as it needs (the next row seals it), up to the largest group a
	 * directory entry describes; pax keeps no TOAST table for more.
	 */
	if (nblocks > PAX_MAX_GROUP_BLOCKS)
	{
		Size		total = 0;

		for (att = 0; att < natts; att++)
			total += sizes[att];
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too large for pax table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The row's %d minipages take %zu bytes; a pax group holds at most %d blocks of %zu bytes.",
						   natts, total, PAX_MAX_GROUP_BLOCKS, (Size) PAX_BLOCK_PAYLOAD),
				 errhint("Store rows this large in a heap table.")));
	}

	/*
	 * The row's number: continue our reservation, or start a new one.
	 * Numbers left over from another (sub)transaction's group are not this
	 * one's: the reservation names its owner (pax_reserve_rownums()).
	 */
	if (wb->nrows == 0 && wb->reserved_xid != GetCurrentTransactionId())
		wb->first_rownum = wb->reserved_end = 0;
	if (wb->first_rownum + wb->nrows >= wb->reserved_end)
	{
		/*
		 * Small runs first (a single-row INSERT leaves at most 15 numbers
		 * unused), doubling with the group's rows: bulk loads reserve
		 * PAX_ROWNUM_RESERVE at a time.
		 */
		uint32		count = Min(PAX_ROWNUM_RESERVE, Max(16, wb->nrows * 2));
		uint64		next = pax_reserve_rownums(rel, count,
											   wb->nrows > 0 ? wb->reserved_end : 0);

		if (wb->nrows > 0 && next != wb->reserved_end)
		{
			/* another writer reserved in between: this group ends here */
			seal_group(wb, rel);
			reset_buffer(wb, rel, xid, cid);
			wb->flags = flags;
			nblocks = blocks_with_row(wb, desc, vals, isnull, new_bytes, new_nulls, sizes);
		}
		if (wb->nrows == 0)
			wb->first_rownum = next;
		wb->reserved_end = next + count;
		wb->reserved_xid = GetCurrentTransactionId();
	}

	/* Append the row. */
	if (wb->nrows == wb->capacity)
		grow_buffer(wb);
	old = MemoryContextSwitchTo(wb->cxt);
	for (att = 0; att < natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);

		wb->values[att][wb->nrows] = isnull[att] ? (Datum) 0 :
			datumCopy(vals[att], a->attbyval, a->attlen);
		wb->isnull[att][wb->nrows] = isnull[att];
		wb->hasnulls[att] = new_nulls[att];
		wb->data_bytes[att] = new_bytes[att];
	}
	rownum = wb->first_rownum + wb->nrows;
	if (state != NULL && wb->states == NULL)
		wb->states = palloc0(sizeof(PaxRowState) * wb->capacity);
	if (wb->states)
	{
		if (state)
			wb->states[wb->nrows] = *state;
		else
			memset(&wb->states[wb->nrows], 0, sizeof(PaxRowState));
		if (TransactionIdIsValid(wb->states[wb->nrows].xmax))
			pax_row_set_next(&wb->states[wb->nrows], rownum);
	}
	/* rows of every kind share a group: each row's kind goes with it */
	if (decode_as != PAX_DECODE_NONE && wb->decode_kinds == NULL)
		wb->decode_kinds = palloc0(wb->capacity);
	if (wb->decode_kinds)
		wb->decode_kinds[wb->nrows] = (uint8) decode_as;
	if (decode_as != PAX_DECODE_NONE)
		wb->decoded_cid = cid;
	if ((flags & PAX_GROUP_FROZEN) && TransactionIdFollows(xid, wb->xid))
		wb->xid = xid;
	MemoryContextSwitchTo(old);
	wb->nrows++;

	pfree(new_bytes);
	pfree(new_nulls);
	pfree(sizes);
	return rownum;
}

/*
 * Copies of a table's rows that keep their inserters and row states
 * (VACUUM FULL, CLUSTER: pax_rewrite.c) are written through a buffer of
 * their own, outside the per-relation table, so that they never mix with
 * the transaction's inserts.
 */
struct PaxCopyWriter
{
	PaxWriteBuffer wb;
	Relation	rel;
};

PaxCopyWriter *
pax_copy_writer_begin(Relation rel, TransactionId horizon)
{
	PaxCopyWriter *w = palloc0(sizeof(PaxCopyWriter));

	w->rel = rel;
	w->wb.relid = RelationGetRelid(rel);
	w->wb.cxt = AllocSetContextCreate(CurrentMemoryContext, "pax copy writer",
									  ALLOCSET_DEFAULT_SIZES);
	w->wb.horizon = horizon;
	return w;
}

/*
 * Add a row of plain values inserted by (xmin, cmin), or visible to every
 * snapshot (frozen), with its row state (NULL: none); returns its new row
 * number.
 */
uint64
pax_copy_writer_add(PaxCopyWriter *w, TransactionId xmin, CommandId cmin, bool frozen,
					const Datum *values, const bool *isnull, const PaxRowState *state)
{
	return buffer_row(&w->wb, w->rel, xmin, cmin, frozen ? PAX_GROUP_FROZEN : 0,
					  values, isnull, state, PAX_DECODE_NONE);
}

void
pax_copy_writer_end(PaxCopyWriter *w)
{
	seal_group(&w->wb, w->rel);
	MemoryContextDelete(w->wb.cxt);
	pfree(w);
}

/*
 * Insert one row: into the delta if PAX_INSERT_SMALL (a single-row path:
 * INSERT, UPDATE) and the transaction has put few rows there, or if
 * PAX_INSERT_SHARED and it fits a page; else into the buffer of the next
 * group.  Sets the slot's TID to the row's.  Values are copied,
 * detoasted and decompressed: groups and the delta hold plain values only.
 * True when the row's WAL record already decodes it as an INSERT
 * (PAX_INSERT_DECODE and a delta append logged by pax_log_delta_insert(),
 * or a group logged by pax_log_group_blocks()), or as the UPDATE whose new
 * version it is (update_old, the old row's identity: with a delta append,
 * or with a group when no old columns are logged).
 */
bool
pax_insert_row(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
			   const PaxLogicalOld *update_old)
{
	TupleDesc	desc = RelationGetDescr(rel);
	PaxWriteBuffer *wb = lookup_buffer(RelationGetRelid(rel), true);
	int			natts = desc->natts;
	Datum	   *vals = palloc(sizeof(Datum) * natts);
	bool	   *isnull = palloc(sizeof(bool) * natts);
	uint64		rownum;
	Size		used;
	int			att;
	bool		decoded = false;
	Size		budget = 0;

	/* serializable transactions: a write conflicts with any reader of the table */
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);

	/* The row as the group will hold it: plain values (in this call's context). */
	slot_getallattrs(slot);
	for (att = 0; att < natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);

		isnull[att] = slot->tts_isnull[att] || a->attisdropped;
		vals[att] = isnull[att] ? (Datum) 0 : slot->tts_values[att];
		/*
		 * A TOAST pointer names another relation's chunks (gone once that
		 * table is dropped or vacuumed), an expanded or indirect one memory
		 * of this statement: neither may reach a page.  (A short inline
		 * header is 1B too, but not 1B_E: VARATT_IS_SHORT does not tell
		 * them apart.)
		 */
		if (!isnull[att] && a->attlen == -1 &&
			(VARATT_IS_EXTERNAL(DatumGetPointer(vals[att])) ||
			 VARATT_IS_COMPRESSED(DatumGetPointer(vals[att]))))
			vals[att] = PointerGetDatum(detoast_attr((struct varlena *) DatumGetPointer(vals[att])));
	}

	/* the bytes the delta may take for this row */
	if (options & PAX_INSERT_SHARED)
		budget = BLCKSZ;
	else if ((options & PAX_INSERT_SMALL) && wb->delta_bytes < PAX_DELTA_BYTES_PER_XACT)
		budget = PAX_DELTA_BYTES_PER_XACT - wb->delta_bytes;
	/* a delta append decoded at once comes after the rows buffered before it */
	if (budget > 0 && ((options & PAX_INSERT_DECODE) || update_old != NULL) &&
		pax_delta_item_size(desc, vals, isnull) <= budget)
		pax_flush_decoded_rows(rel, cid);
	if (budget > 0 &&
		pax_delta_insert(rel, desc, vals, isnull, cid, budget,
						 (options & PAX_INSERT_DECODE) != 0, update_old, &rownum, &used,
						 &decoded))
		wb->delta_bytes += used;
	else
	{
		/*
		 * When changes are decoded: an INSERT from the group, an UPDATE's
		 * new version too unless old columns are logged.
		 */
		int			decode_as = !pax_logical_delta(rel) ? PAX_DECODE_NONE :
			(options & PAX_INSERT_DECODE) ? PAX_DECODE_INSERT :
			(update_old != NULL && update_old->tuple == NULL) ? PAX_DECODE_UPDATE :
			PAX_DECODE_NONE;

		rownum = buffer_row(wb, rel, GetCurrentTransactionId(), cid, 0, vals, isnull, NULL,
							decode_as);
		decoded = decode_as != PAX_DECODE_NONE;
	}
	pax_rownum_to_tid(rownum, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	pax_slot_set_inserted(slot, rel, rownum, GetCurrentTransactionId(), cid);
	pfree(vals);
	pfree(isnull);
	return decoded;
}

/*
 * If row number rownum is one of this backend's buffered rows of rel, store
 * it in slot (values point into the buffer: valid until the next insert)
 * and give the command that inserted it.
 */
bool
pax_buffered_row(Relation rel, uint64 rownum, TupleTableSlot *slot, CommandId *cid)
{
	PaxWriteBuffer *wb = lookup_buffer(RelationGetRelid(rel), false);
	uint32		ri;
	int			att;

	if (wb == NULL || wb->nrows == 0 || rownum < wb->first_rownum ||
		rownum >= wb->first_rownum + wb->nrows)
		return false;
	ri = (uint32) (rownum - wb->first_rownum);
	ExecClearTuple(slot);
	for (att = 0; att < slot->tts_tupleDescriptor->natts; att++)
	{
		if (att < wb->natts)
		{
			slot->tts_values[att] = wb->values[att][ri];
			slot->tts_isnull[att] = wb->isnull[att][ri];
		}
		else					/* added since: its default, as a group's reader gives */
			slot->tts_values[att] = getmissingattr(slot->tts_tupleDescriptor, att + 1,
												   &slot->tts_isnull[att]);
	}
	ExecStoreVirtualTuple(slot);
	/* the buffer's memory goes when its rows are written (a lock may do it) */
	ExecMaterializeSlot(slot);
	pax_rownum_to_tid(rownum, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	pax_slot_set_inserted(slot, rel, rownum, wb->xid, wb->cid);
	*cid = wb->cid;
	return true;
}

/* Write this relation's buffered rows, if any (before this backend reads it). */
void
pax_flush_relation(Relation rel)
{
	PaxWriteBuffer *wb = lookup_buffer(RelationGetRelid(rel), false);

	if (wb != NULL && wb->nrows > 0)
		seal_group(wb, rel);
}

/*
 * Before a change of rel by command cid that a record of its own decodes
 * at once (a DELETE, a delta append, a confirmed upsert): write the rows an
 * earlier command buffered that their group decodes, so that logical
 * decoding sees the table's statements in the order they ran, as heap's.
 * Within one statement (MERGE, a data-modifying CTE) rows are not flushed
 * for that: its buffered rows decode after its changes decoded at once,
 * which a subscriber applies to the same effect (a row it changes is
 * written before: pax_flush_row()), and its groups stay whole.
 */
void
pax_flush_decoded_rows(Relation rel, CommandId cid)
{
	PaxWriteBuffer *wb;

	if (!pax_logical_delta(rel))
		return;
	wb = lookup_buffer(RelationGetRelid(rel), false);
	if (wb != NULL && wb->nrows > 0 && wb->decode_kinds != NULL && wb->decoded_cid != cid)
		seal_group(wb, rel);
}

/*
 * Write the buffered rows if row number rownum is one of them (before it is
 * deleted, updated or locked: those need its group).  Other buffered rows
 * stay: an UPDATE keeps filling one group with its new versions.
 */
void
pax_flush_row(Relation rel, uint64 rownum)
{
	PaxWriteBuffer *wb = lookup_buffer(RelationGetRelid(rel), false);

	if (wb != NULL && wb->nrows > 0 && rownum >= wb->first_rownum &&
		rownum < wb->first_rownum + wb->nrows)
		seal_group(wb, rel);
}

/* Drop a relation's buffer (its storage was truncated or replaced). */
void
pax_forget_relation(Oid relid)
{
	PaxWriteBuffer *wb = lookup_buffer(relid, false);

	if (wb != NULL)
	{
		MemoryContextDelete(wb->cxt);
		hash_search(write_buffers, &relid, HASH_REMOVE, NULL);
	}
}

/*
 * Write every buffered row of this backend (at commit and prepare, and
 * before a plan that may run in parallel workers, which read the tables,
 * not this backend's memory).
 */
void
pax_flush_all_buffers(void)
{
	flush_buffers(false);
}

/*
 * Before DDL that may change a table's columns (pax_ddl.c): write the rows
 * whose groups logical decoding reads, so that they are decoded under the
 * catalog they were inserted under, as heap's rows are (decoded after an
 * ALTER COLUMN TYPE, an int column's values read as text).
 */
void
pax_flush_decodable_buffers(void)
{
	flush_buffers(true);
}

static void
flush_buffers(bool decodable_only)
{
	HASH_SEQ_STATUS seq;
	PaxWriteBuffer *wb;

	if (write_buffers == NULL)
		return;
	hash_seq_init(&seq, write_buffers);
	while ((wb = hash_seq_search(&seq)) != NULL)
	{
		if (wb->nrows > 0 && (!decodable_only || wb->decode_kinds != NULL))
		{
			/* a relation dropped in this transaction takes its rows along */
			Relation	rel = try_relation_open(wb->relid, RowExclusiveLock);

			if (rel == NULL)
				continue;
			seal_group(wb, rel);
			relation_close(rel, NoLock);
		}
	}
}

static void
forget_all(void)
{
	if (write_buffers == NULL)
		return;
	/* every buffer lives in writer_cxt */
	MemoryContextDelete(writer_cxt);
	writer_cxt = NULL;
	write_buffers = NULL;
}

static void
pax_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			pax_flush_all_buffers();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			forget_all();
			break;
	}
}

static void
pax_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS seq;
	PaxWriteBuffer *wb;

	if (write_buffers == NULL)
		return;
	hash_seq_init(&seq, write_buffers);
	while ((wb = hash_seq_search(&seq)) != NULL)
	{
		if (wb->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			wb->subid = parentSubid;
		else if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			/* the rows die with the subtransaction; the reservation too */
			MemoryContextReset(wb->cxt);
			wb->decode_kinds = NULL;
			wb->nrows = 0;
			wb->capacity = 0;
			wb->first_rownum = wb->reserved_end = 0;
		}
	}
}
