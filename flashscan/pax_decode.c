/*-------------------------------------------------------------------------
 *
 * pax_decode.c
 *	  Logical decoding of pax tables: a WAL resource manager of pax's own.
 *
 * pax writes its pages with generic WAL records (pax_blocks.c), which carry
 * bytes of pages, not rows, so logical decoding cannot turn them into
 * changes.  With wal_level = logical, the changes of a pax table that is
 * logically logged (RelationIsLogicallyLogged: not temporary, unlogged or a
 * catalog) are written with records of this resource manager instead,
 * which redo applies as the generic ones did and decoding turns into the
 * reorder-buffer changes heap's records give, each change logged once:
 *	- a row appended to the delta (single-row INSERT, an UPDATE's new
 *	  version): DELTA_INSERT, decoded as the INSERT, or as the UPDATE with
 *	  the old row's identity it carries;
 *	- a group of inserted rows (COPY, multi-row INSERT), or of an UPDATE's
 *	  new versions: GROUP records, whose minipages decoding reads back
 *	  into the rows' INSERTs or UPDATEs;
 *	- a row map slot (DELETE, locks, the old half of an UPDATE): ROW_STATE,
 *	  decoded as the DELETE with the old row's identity it carries;
 *	- the rest (an UPDATE that logs old columns and whose new version goes
 *	  to a group, the confirmed row of INSERT ... ON CONFLICT): INSERT and
 *	  UPDATE records holding heap tuples, beside the pages' own records.
 * The old row's identity is what heap's ExtractReplicaIdentity() logs (the
 * identity index's key columns for a DELETE, or an UPDATE that changes
 * them; the whole old row with REPLICA IDENTITY FULL; nothing with
 * NOTHING), so publications (pgoutput, row filters, column lists),
 * test_decoding, streaming of large transactions and two-phase decoding
 * see pax tables as they see heap tables.  TRUNCATE needs nothing here:
 * PostgreSQL logs it for every logically logged table, whatever its access
 * method.  Rows a transaction inserts in bulk are decoded where their group
 * is written: when it is full, before a change of the table decoded at once
 * (pax_flush_decoded_rows()), when the transaction reads the table, or at
 * commit; so in the table's order, but maybe after changes the transaction
 * made to other tables meanwhile.
 *
 * The records are written only when the resource manager is registered,
 * which PostgreSQL allows only from shared_preload_libraries; every server
 * that replays such WAL (crash recovery, standbys, point-in-time recovery)
 * then needs flashscan preloaded too, or recovery stops at the first
 * record.  A write of a logically logged pax table without it warns, and a
 * publication of pax tables without it is refused (pax_ddl.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "catalog/catalog.h"
#include "catalog/pg_class.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "lib/stringinfo.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "pax.h"
#include "pax_minipage.h"

/*
 * The resource manager id.  128 (RM_EXPERIMENTAL_ID) is for development
 * only; extensions take an id of the custom range (128-255) that no other
 * extension they are installed beside uses, listed on PostgreSQL's wiki
 * page "CustomWALResourceManagers".
 */
#define PAX_RMGR_ID				171
#define PAX_RMGR_NAME			"pax"

/* Record kinds (the high bits of xl_info). */
#define XLOG_PAX_INSERT			0x00
#define XLOG_PAX_UPDATE			0x10
#define XLOG_PAX_DELTA_INSERT	0x30
#define XLOG_PAX_GROUP			0x40
#define XLOG_PAX_ROW_STATE		0x50
#define XLOG_PAX_OPMASK			0x70

/* xl_pax_rows.flags */
#define XLP_HAS_OLD				0x0001	/* an old tuple comes first */
#define XLP_OLD_IS_KEY			0x0002	/* it holds the identity key columns only */
#define XLP_HAS_NEW				0x0004	/* new tuples follow */

/*
 * A record's main data: this header, then (XLP_HAS_OLD) one old tuple,
 * then (XLP_HAS_NEW) ntuples new tuples.  A tuple is logged as heap logs
 * one: an xl_pax_tuple, then its bytes past its HeapTupleHeader's fixed
 * fields (null bitmap, padding, data), unaligned; here each is preceded by
 * its length (a uint32), elsewhere a record's last tuple runs to its end.
 */
typedef struct xl_pax_tuple
{
	uint16		t_infomask2;
	uint16		t_infomask;
	uint8		t_hoff;
} xl_pax_tuple;

#define SizeOfPaxTuple			(offsetof(xl_pax_tuple, t_hoff) + sizeof(uint8))

typedef struct xl_pax_rows
{
	RelFileNode node;
	uint16		flags;
	uint16		pad;
	uint32		ntuples;		/* new tuples */
} xl_pax_rows;

/*
 * XLOG_PAX_DELTA_INSERT: a row appended to a delta page (block 0, whose
 * data is the item: PaxDeltaRowHeader and MinimalTuple).  It replaces the
 * generic record of that append when changes are decoded, so a single-row
 * INSERT or UPDATE logs its row once; redo applies it.  Decoded as an
 * INSERT with XLP_DECODE, as an UPDATE with XLP_UPDATE (the old row's
 * identity follows as with xl_pax_rows' XLP_HAS_OLD and XLP_OLD_IS_KEY);
 * otherwise (a speculative insertion, decoded once confirmed) not at all.
 */
typedef struct xl_pax_delta_insert
{
	RelFileNode node;
	OffsetNumber offnum;
	uint16		flags;
} xl_pax_delta_insert;

#define XLP_DECODE				0x0020	/* (beside xl_pax_rows' flags, which DELTA_INSERT shares) */
#define XLP_KINDS				0x0040	/* GROUP: each row's PAX_DECODE_* follows */
#define XLP_UPDATE				0x0008	/* (XLP_HAS_OLD and XLP_OLD_IS_KEY as above) */

/*
 * XLOG_PAX_ROW_STATE: a new state of one row's slot in a row map page,
 * block 0, whose data is an xl_pax_row_state and the slot's changed bytes
 * (as small as generic WAL's delta of the change).  It replaces the
 * generic record of the change when changes are decoded, and a DELETE's
 * decodes as the DELETE: its block data is kept beside a full-page image
 * (REGBUF_KEEP_DATA) and the old row's identity, if logged, is the
 * record's main data (a tuple: block data is limited to 64 kB, a pax row
 * is not).
 */
typedef struct xl_pax_row_state
{
	uint16		offset;			/* the slot's, in the page */
	uint8		from;			/* first changed byte of the slot */
	uint8		len_flags;		/* changed bytes (RS_LEN_MASK), RS_* flags */
} xl_pax_row_state;

#define RS_LEN_MASK				0x1F
#define RS_DELETE				0x20
#define RS_HAS_OLD				0x40
#define RS_OLD_IS_KEY			0x80

/*
 * XLOG_PAX_GROUP: blocks of a group of inserted rows, up to
 * PAX_GROUP_BLOCKS_PER_RECORD a record, each registered with
 * REGBUF_WILL_INIT and carrying its payload as block data; redo fills the
 * blocks as pax_fill_block() did.  With wal_level = logical it replaces the
 * generic full-page records of such a group, so a COPY logs its rows once:
 * decoding gathers the group's payload from its records and, at the last
 * one, decodes the minipages into the rows' INSERTs, or (XLP_UPDATE) the
 * UPDATEs whose new versions they are (updates that log no old columns),
 * or (XLP_KINDS, a statement that did both, or also updates decoded from
 * records of their own) each row as its kind, one byte per row after the
 * columns.  The first record
 * (first_index 0) is followed by nrows, ncols and one xl_pax_column per
 * column: what decoding needs, since it cannot read the catalogs then.
 */
typedef struct xl_pax_group
{
	TransactionId xid;			/* the rows' inserter (a subtransaction's, maybe) */
	TransactionId top_xid;		/* its top-level transaction */
	BlockNumber first_block;	/* the group's */
	uint32		nblocks;		/* the group's */
	uint32		first_index;	/* of this record's first block in the group */
	uint32		stream_len;		/* the group's payload bytes */
	uint32		tag;
	uint16		flags;			/* XLP_DECODE (INSERTs), XLP_UPDATE (UPDATEs) or XLP_KINDS */
	uint16		pad;
} xl_pax_group;

typedef struct xl_pax_group_head
{
	uint32		nrows;
	uint16		ncols;
	uint16		pad;
} xl_pax_group_head;

typedef struct xl_pax_column
{
	uint32		offset;			/* the minipage's extent in the payload */
	uint32		nbytes;
	int16		attlen;
	bool		attbyval;
	char		attalign;
	char		attstorage;
	char		pad[3];
} xl_pax_column;

/* XLR_MAX_BLOCK_ID is the largest block id, so one more reference fits */
#define PAX_GROUP_BLOCKS_PER_RECORD	32

static bool rmgr_registered = false;
static bool warned_unregistered = false;

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------
 */

/*
 * Does a change of rel need a record?  Warns once per session when it does
 * but cannot get one (flashscan not preloaded).
 */
static bool
logical_record_needed(Relation rel)
{
	if (!RelationIsLogicallyLogged(rel))
		return false;
	if (rmgr_registered)
		return true;
	if (!warned_unregistered)
	{
		warned_unregistered = true;
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("changes of pax table \"%s\" are not logically decoded",
						RelationGetRelationName(rel)),
				 errdetail("wal_level is logical, but flashscan is not in shared_preload_libraries, so pax cannot log its rows for logical decoding."),
				 errhint("Add flashscan to shared_preload_libraries and restart the server.")));
	}
	return false;
}

/* A slot's row as a heap tuple (values flattened, no TOAST pointers: pax has none). */
static HeapTuple
slot_tuple(TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	return heap_form_tuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
}

/*
 * The old row's replica identity for a DELETE (key_changed true) or an
 * UPDATE, as heap_delete/heap_update log it; NULL when none is logged.
 * *is_key: the tuple holds the identity columns only (the others NULL).
 */
static HeapTuple
replica_identity(Relation rel, TupleTableSlot *old, TupleTableSlot *new, bool *is_key)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *idattrs;
	Datum	   *values;
	bool	   *nulls;
	bool		changed = (new == NULL);
	HeapTuple	result;
	int			i;

	*is_key = false;
	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_NOTHING)
		return NULL;
	slot_getallattrs(old);
	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
		return heap_form_tuple(desc, old->tts_values, old->tts_isnull);

	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	if (idattrs == NULL)
		return NULL;
	if (new != NULL)
	{
		slot_getallattrs(new);
		for (i = 0; i < desc->natts && !changed; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs))
				continue;
			changed = old->tts_isnull[i] != new->tts_isnull[i] ||
				(!old->tts_isnull[i] &&
				 !datumIsEqual(old->tts_values[i], new->tts_values[i], a->attbyval, a->attlen));
		}
	}
	if (!changed)
	{
		bms_free(idattrs);
		return NULL;
	}
	values = palloc(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		bool		key = bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs);

		values[i] = key ? old->tts_values[i] : (Datum) 0;
		nulls[i] = key ? old->tts_isnull[i] : true;
	}
	result = heap_form_tuple(desc, values, nulls);
	pfree(values);
	pfree(nulls);
	bms_free(idattrs);
	*is_key = true;
	return result;
}

/*
 * Append a tuple, heap's way (xl_pax_tuple, then its bytes), to a record
 * being built; sized: preceded by its length (it is not the record's last).
 */
static void
append_tuple(StringInfo buf, HeapTuple tup, bool sized)
{
	xl_pax_tuple xt;
	uint32		datalen = tup->t_len - SizeofHeapTupleHeader;

	xt.t_infomask2 = tup->t_data->t_infomask2;
	xt.t_infomask = tup->t_data->t_infomask;
	xt.t_hoff = tup->t_data->t_hoff;
	if (sized)
		appendBinaryStringInfo(buf, (char *) &datalen, sizeof(uint32));
	appendBinaryStringInfo(buf, (char *) &xt, SizeOfPaxTuple);
	appendBinaryStringInfo(buf, (char *) tup->t_data + SizeofHeapTupleHeader, datalen);
}

/*
 * Write one record: header, old tuple (or NULL), nnew new tuples, built in
 * one buffer (a COPY batch has more tuples than a record has data slots).
 */
static void
write_record(Relation rel, uint8 info, HeapTuple oldtup, bool old_is_key,
			 HeapTuple *newtups, int nnew)
{
	xl_pax_rows xl;
	StringInfoData buf;
	int			i;

	/* the record names the transaction that made the change */
	(void) GetCurrentTransactionId();
	memset(&xl, 0, sizeof(xl));
	xl.node = rel->rd_node;
	xl.flags = (oldtup ? XLP_HAS_OLD : 0) | (old_is_key ? XLP_OLD_IS_KEY : 0) |
		(nnew > 0 ? XLP_HAS_NEW : 0);
	xl.ntuples = nnew;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (char *) &xl, sizeof(xl));
	if (oldtup)
		append_tuple(&buf, oldtup, true);
	for (i = 0; i < nnew; i++)
		append_tuple(&buf, newtups[i], true);

	XLogBeginInsert();
	XLogRegisterData(buf.data, buf.len);
	/* as heap's records: replication origins see whose change it was */
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(PAX_RMGR_ID, info);
	pfree(buf.data);
}

/*
 * Are the delta appends of rel logged with XLOG_PAX_DELTA_INSERT?  When its
 * changes are decoded: then every server replaying the WAL preloads
 * flashscan anyway.
 */
bool
pax_logical_delta(Relation rel)
{
	return rmgr_registered && RelationIsLogicallyLogged(rel);
}

/*
 * Append item to the delta page in buf (exclusively locked, with room
 * checked by the caller) and log it; returns its offset.
 */
OffsetNumber
pax_log_delta_insert(Relation rel, Buffer buf, const char *item, Size itemsz, bool decode_insert,
					 const PaxLogicalOld *update_old)
{
	Page		page = BufferGetPage(buf);
	xl_pax_delta_insert xl;
	OffsetNumber off;
	XLogRecPtr	recptr;
	StringInfoData old;

	(void) GetCurrentTransactionId();
	memset(&xl, 0, sizeof(xl));
	xl.flags = decode_insert ? XLP_DECODE : update_old ? XLP_UPDATE : 0;
	initStringInfo(&old);
	if (update_old && update_old->tuple)
	{
		xl.flags |= XLP_HAS_OLD | (update_old->is_key ? XLP_OLD_IS_KEY : 0);
		append_tuple(&old, update_old->tuple, false);
	}
	START_CRIT_SECTION();
	off = PageAddItem(page, (Item) item, itemsz, InvalidOffsetNumber, false, false);
	if (off == InvalidOffsetNumber)
		elog(PANIC, "could not add a row to delta page %u of \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	MarkBufferDirty(buf);
	xl.node = rel->rd_node;
	xl.offnum = off;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	if (old.len > 0)
		XLogRegisterData(old.data, old.len);
	/* the item stays in the record even beside a full-page image: decoding reads it */
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | REGBUF_KEEP_DATA);
	XLogRegisterBufData(0, (char *) item, itemsz);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	recptr = XLogInsert(PAX_RMGR_ID, XLOG_PAX_DELTA_INSERT);
	PageSetLSN(page, recptr);
	END_CRIT_SECTION();
	pfree(old.data);
	return off;
}

/*
 * Write a group of inserted rows (the run of entry->nblocks blocks from
 * entry->first_block that pax_allocate_run() gave, pinned a record's worth
 * at a time) with XLOG_PAX_GROUP records, when its rows are decoded from
 * them.
 */
void
pax_log_group_blocks(Relation rel, PaxGroupEntry *entry, const char *stream,
					 Size stream_len, TupleDesc desc, const uint8 *decode_kinds)
{
	Buffer		bufs[PAX_GROUP_BLOCKS_PER_RECORD];
	bool		uniform = true;
	uint32		k;
	xl_pax_group xl;
	xl_pax_group_head head;
	xl_pax_column *cols;
	uint32		i;
	int			c;

	memset(&xl, 0, sizeof(xl));
	xl.xid = entry->xmin;
	xl.top_xid = GetTopTransactionId();
	xl.first_block = entry->first_block;
	xl.nblocks = entry->nblocks;
	xl.stream_len = (uint32) stream_len;
	xl.tag = entry->tag;
	for (k = 1; k < entry->nrows && uniform; k++)
		uniform = decode_kinds[k] == decode_kinds[0];
	xl.flags = !uniform ? XLP_KINDS :
		(decode_kinds[0] == PAX_DECODE_UPDATE) ? XLP_UPDATE : XLP_DECODE;
	memset(&head, 0, sizeof(head));
	head.nrows = entry->nrows;
	head.ncols = entry->ncols;
	cols = palloc0(sizeof(xl_pax_column) * Max(entry->ncols, 1));
	for (c = 0; c < entry->ncols; c++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, c);

		cols[c].offset = entry->cols[c].offset;
		cols[c].nbytes = entry->cols[c].nbytes;
		cols[c].attlen = a->attlen;
		cols[c].attbyval = a->attbyval;
		cols[c].attalign = a->attalign;
		cols[c].attstorage = a->attstorage;
	}

	XLogEnsureRecordSpace(PAX_GROUP_BLOCKS_PER_RECORD - 1, PAX_GROUP_BLOCKS_PER_RECORD + 3);
	for (i = 0; i < entry->nblocks; i += PAX_GROUP_BLOCKS_PER_RECORD)
	{
		uint32		end = Min(i + PAX_GROUP_BLOCKS_PER_RECORD, entry->nblocks);
		XLogRecPtr	recptr;
		uint32		j;

		for (j = i; j < end; j++)
			bufs[j - i] = pax_pin_new_block(rel, entry->first_block + j);
		xl.first_index = i;
		START_CRIT_SECTION();
		XLogBeginInsert();
		XLogRegisterData((char *) &xl, sizeof(xl));
		if (i == 0)
		{
			XLogRegisterData((char *) &head, sizeof(head));
			if (entry->ncols > 0)
				XLogRegisterData((char *) cols, sizeof(xl_pax_column) * entry->ncols);
			if (!uniform)
				XLogRegisterData((char *) decode_kinds, entry->nrows);
		}
		for (j = i; j < end; j++)
		{
			Size		off = (Size) j * PAX_BLOCK_PAYLOAD;
			Size		used = (stream_len > off) ? Min(stream_len - off, PAX_BLOCK_PAYLOAD) : 0;

			pax_fill_block(BufferGetPage(bufs[j - i]), stream + off, used, entry->tag);
			MarkBufferDirty(bufs[j - i]);
			XLogRegisterBuffer(j - i, bufs[j - i], REGBUF_WILL_INIT);
			if (used > 0)
				XLogRegisterBufData(j - i, (char *) stream + off, used);
		}
		XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
		recptr = XLogInsert(PAX_RMGR_ID, XLOG_PAX_GROUP);
		for (j = i; j < end; j++)
			PageSetLSN(BufferGetPage(bufs[j - i]), recptr);
		END_CRIT_SECTION();
		for (j = i; j < end; j++)
			UnlockReleaseBuffer(bufs[j - i]);
	}
	pfree(cols);
}

/* INSERT and COPY: the new rows of one call, in one record. */
void
pax_log_logical_insert(Relation rel, TupleTableSlot **slots, int nslots)
{
	HeapTuple  *tups;
	int			i;

	if (nslots <= 0 || !logical_record_needed(rel))
		return;
	tups = palloc(sizeof(HeapTuple) * nslots);
	for (i = 0; i < nslots; i++)
		tups[i] = slot_tuple(slots[i]);
	write_record(rel, XLOG_PAX_INSERT, NULL, false, tups, nslots);
	for (i = 0; i < nslots; i++)
		heap_freetuple(tups[i]);
	pfree(tups);
}

/*
 * The old row's identity an UPDATE (new is the new row) or DELETE (new
 * NULL) of the row at otid logs, read before the change is written; NULL
 * when the change needs no record (the table's changes are not decoded).
 */
PaxLogicalOld *
pax_logical_old(Relation rel, ItemPointer otid, TupleTableSlot *new)
{
	PaxLogicalOld *result;
	TupleTableSlot *old;
	char		replident = rel->rd_rel->relreplident;
	Bitmapset  *idattrs = NULL;

	if (!logical_record_needed(rel))
		return NULL;
	result = palloc0(sizeof(PaxLogicalOld));
	/* the old row's columns the identity needs: all (FULL), the key's, or none */
	if (replident != REPLICA_IDENTITY_FULL && replident != REPLICA_IDENTITY_NOTHING)
		idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	if (replident != REPLICA_IDENTITY_FULL && idattrs == NULL)
		return result;			/* nothing of the old row is logged */
	old = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	if (!pax_fetch_row_columns(rel, otid, SnapshotAny, old, idattrs))	/* NULL: all */
		elog(ERROR, "pax row (%u,%u) of \"%s\" vanished while it was changed",
			 ItemPointerGetBlockNumber(otid), ItemPointerGetOffsetNumber(otid),
			 RelationGetRelationName(rel));
	result->tuple = replica_identity(rel, old, new, &result->is_key);
	bms_free(idattrs);
	ExecDropSingleTupleTableSlot(old);
	return result;
}

void
pax_free_logical_old(PaxLogicalOld *old)
{
	if (old == NULL)
		return;
	if (old->tuple)
		heap_freetuple(old->tuple);
	pfree(old);
}

/*
 * An UPDATE whose new version (new) went to a group, logged after the
 * change succeeded, with the old row's identity (pax_logical_old()).
 */
void
pax_log_logical_change(Relation rel, const PaxLogicalOld *old, TupleTableSlot *new)
{
	HeapTuple	newtup = slot_tuple(new);

	write_record(rel, XLOG_PAX_UPDATE, old->tuple, old->is_key, &newtup, 1);
	heap_freetuple(newtup);
}

/*
 * Write a row map slot's new state st (at offset in the page of buf,
 * exclusively locked) and log it; a DELETE's (deleted not NULL) record
 * also decodes as the DELETE.
 */
void
pax_log_row_state(Relation rel, Buffer buf, Size offset, const PaxRowState *st,
				  const PaxLogicalOld *deleted)
{
	Page		page = BufferGetPage(buf);
	const char *cur = (const char *) page + offset;
	const char *new = (const char *) st;
	xl_pax_row_state xl;
	StringInfoData data;
	StringInfoData old;
	int			from = 0;
	int			to = sizeof(PaxRowState);
	XLogRecPtr	recptr;

	StaticAssertStmt(sizeof(PaxRowState) <= RS_LEN_MASK, "a row state must fit RS_LEN_MASK");
	Assert(offset + sizeof(PaxRowState) <= BLCKSZ);
	/* only the bytes that change, as generic WAL's delta would hold them */
	while (from < to && cur[from] == new[from])
		from++;
	while (to > from && cur[to - 1] == new[to - 1])
		to--;
	xl.offset = (uint16) offset;
	xl.from = (uint8) from;
	xl.len_flags = (uint8) (to - from);
	if (deleted)
		xl.len_flags |= RS_DELETE;
	if (deleted && deleted->tuple)
		xl.len_flags |= RS_HAS_OLD | (deleted->is_key ? RS_OLD_IS_KEY : 0);
	initStringInfo(&data);
	appendBinaryStringInfo(&data, (char *) &xl, sizeof(xl));
	appendBinaryStringInfo(&data, new + from, to - from);
	initStringInfo(&old);
	if (deleted && deleted->tuple)
		append_tuple(&old, deleted->tuple, false);

	START_CRIT_SECTION();
	memcpy((char *) page + offset, st, sizeof(PaxRowState));
	MarkBufferDirty(buf);
	XLogBeginInsert();
	if (old.len > 0)
		XLogRegisterData(old.data, old.len);
	/* a DELETE's data is kept beside a full-page image: decoding reads it */
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | (deleted ? REGBUF_KEEP_DATA : 0));
	XLogRegisterBufData(0, data.data, data.len);
	if (deleted)
		XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	recptr = XLogInsert(PAX_RMGR_ID, XLOG_PAX_ROW_STATE);
	PageSetLSN(page, recptr);
	END_CRIT_SECTION();
	pfree(data.data);
	pfree(old.data);
}

/* ------------------------------------------------------------------------
 * Redo, description, decoding
 * ------------------------------------------------------------------------
 */

/* Redo of XLOG_PAX_GROUP: every block is filled anew. */
static void
redo_group(XLogReaderState *record)
{
	xl_pax_group *xl = (xl_pax_group *) XLogRecGetData(record);
	int			id;

	for (id = 0; id <= XLogRecMaxBlockId(record); id++)
	{
		Buffer		buf;
		Size		len = 0;
		char	   *payload;

		if (!XLogRecHasBlockRef(record, id))
			continue;
		buf = XLogInitBufferForRedo(record, id);
		payload = XLogRecGetBlockData(record, id, &len);
		pax_fill_block(BufferGetPage(buf), payload, len, xl->tag);
		PageSetLSN(BufferGetPage(buf), record->EndRecPtr);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
}

/*
 * A ROW_STATE record's block data: its header, and where its changed bytes
 * and (a DELETE's) old tuple start.
 */
static void
parse_row_state(XLogReaderState *record, xl_pax_row_state *xl, char **bytes, char **end)
{
	Size		len = 0;
	char	   *data = XLogRecGetBlockData(record, 0, &len);

	if (data == NULL || len < sizeof(xl_pax_row_state))
		elog(ERROR, "pax row state record has no data");
	memcpy(xl, data, sizeof(xl_pax_row_state));
	*bytes = data + sizeof(xl_pax_row_state);
	*end = data + len;
	if (xl->from + (xl->len_flags & RS_LEN_MASK) > sizeof(PaxRowState) ||
		*bytes + (xl->len_flags & RS_LEN_MASK) > *end ||
		xl->offset < SizeOfPageHeaderData || xl->offset + sizeof(PaxRowState) > BLCKSZ)
		elog(ERROR, "pax row state record is corrupted");
}

/* Redo of XLOG_PAX_ROW_STATE: the slot gets its changed bytes. */
static void
redo_row_state(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		xl_pax_row_state xl;
		char	   *bytes;
		char	   *end;

		parse_row_state(record, &xl, &bytes, &end);
		memcpy((char *) page + xl.offset + xl.from, bytes, xl.len_flags & RS_LEN_MASK);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * Redo: a delta append is applied at its offset, a group's blocks are
 * filled, a row state is set; the row records apply nothing (their pages come back from the
 * generic WAL records).
 */
static void
pax_rm_redo(XLogReaderState *record)
{
	uint8		op = XLogRecGetInfo(record) & XLOG_PAX_OPMASK;
	xl_pax_delta_insert *xl;
	Buffer		buf;

	if (op == XLOG_PAX_GROUP)
	{
		redo_group(record);
		return;
	}
	if (op == XLOG_PAX_ROW_STATE)
	{
		redo_row_state(record);
		return;
	}
	if (op != XLOG_PAX_DELTA_INSERT)
		return;
	xl = (xl_pax_delta_insert *) XLogRecGetData(record);
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *item = XLogRecGetBlockData(record, 0, &len);

		/* appended: the next offset, so that no line pointer moves */
		if (xl->offnum != OffsetNumberNext(PageGetMaxOffsetNumber(page)) ||
			PageAddItem(page, (Item) item, len, xl->offnum, false, false) != xl->offnum)
			elog(PANIC, "pax delta insert redo: could not add the row at offset %u of block %u",
				 xl->offnum, BufferGetBlockNumber(buf));
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static const char *
pax_rm_identify(uint8 info)
{
	switch (info & XLOG_PAX_OPMASK)
	{
		case XLOG_PAX_INSERT:
			return "INSERT";
		case XLOG_PAX_UPDATE:
			return "UPDATE";
		case XLOG_PAX_DELTA_INSERT:
			return "DELTA_INSERT";
		case XLOG_PAX_GROUP:
			return "GROUP";
		case XLOG_PAX_ROW_STATE:
			return "ROW_STATE";
	}
	return NULL;
}

static void
pax_rm_desc(StringInfo buf, XLogReaderState *record)
{
	xl_pax_rows *xl = (xl_pax_rows *) XLogRecGetData(record);

	if ((XLogRecGetInfo(record) & XLOG_PAX_OPMASK) == XLOG_PAX_DELTA_INSERT)
	{
		xl_pax_delta_insert *dx = (xl_pax_delta_insert *) XLogRecGetData(record);

		appendStringInfo(buf, "off %u%s%s", dx->offnum,
						 (dx->flags & XLP_DECODE) ? "; decoded" : "",
						 (dx->flags & XLP_UPDATE) ? "; decoded as an update" : "");
		if (dx->flags & XLP_HAS_OLD)
			appendStringInfoString(buf, (dx->flags & XLP_OLD_IS_KEY) ? "; old key" : "; old row");
		return;
	}
	if ((XLogRecGetInfo(record) & XLOG_PAX_OPMASK) == XLOG_PAX_ROW_STATE)
	{
		xl_pax_row_state rx;
		Size		len = 0;
		char	   *data = XLogRecHasBlockRef(record, 0) ?
			XLogRecGetBlockData(record, 0, &len) : NULL;

		if (data == NULL || len < sizeof(rx))
			return;				/* a full-page image only */
		memcpy(&rx, data, sizeof(rx));
		appendStringInfo(buf, "slot at %u: %u bytes from %u", rx.offset,
						 rx.len_flags & RS_LEN_MASK, rx.from);
		if (rx.len_flags & RS_DELETE)
			appendStringInfoString(buf, "; decoded as a delete");
		if (rx.len_flags & RS_HAS_OLD)
			appendStringInfoString(buf, (rx.len_flags & RS_OLD_IS_KEY) ? "; old key" : "; old row");
		return;
	}
	if ((XLogRecGetInfo(record) & XLOG_PAX_OPMASK) == XLOG_PAX_GROUP)
	{
		xl_pax_group *gx = (xl_pax_group *) XLogRecGetData(record);

		appendStringInfo(buf, "group at block %u of %u blocks: blocks %u-%u; inserter %u%s",
						 gx->first_block, gx->nblocks, gx->first_index,
						 gx->first_index + XLogRecMaxBlockId(record), gx->xid,
						 (gx->flags & XLP_DECODE) ? "; decoded" :
						 (gx->flags & XLP_UPDATE) ? "; decoded as updates" :
						 (gx->flags & XLP_KINDS) ? "; decoded row by row" : "");
		if (gx->first_index == 0 &&
			XLogRecGetDataLen(record) >= sizeof(xl_pax_group) + sizeof(xl_pax_group_head))
		{
			xl_pax_group_head *head = (xl_pax_group_head *) (gx + 1);

			appendStringInfo(buf, "; %u rows, %u columns", head->nrows, head->ncols);
		}
		return;
	}

	if (XLogRecGetDataLen(record) < sizeof(xl_pax_rows))
		return;
	appendStringInfo(buf, "rel %u/%u/%u; new rows %u%s", xl->node.spcNode, xl->node.dbNode,
					 xl->node.relNode, xl->ntuples,
					 !(xl->flags & XLP_HAS_OLD) ? "" :
					 (xl->flags & XLP_OLD_IS_KEY) ? "; old key" : "; old row");
}

/* A reorder buffer tuple of len bytes (header included), to be filled. */
static ReorderBufferTupleBuf *
new_tuple_buf(LogicalDecodingContext *ctx, uint32 len)
{
	ReorderBufferTupleBuf *tb = ReorderBufferGetTupleBuf(ctx->reorder,
														 len - SizeofHeapTupleHeader);

	tb->tuple.t_len = len;
	ItemPointerSetInvalid(&tb->tuple.t_self);
	tb->tuple.t_tableOid = InvalidOid;
	return tb;
}

/*
 * Queue one change of a record for transaction xid, as heap's
 * DecodeInsert/Update/Delete do.
 */
static void
queue_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, TransactionId xid,
			 RelFileNode node, ReorderBufferChangeType action, ReorderBufferTupleBuf *newtup,
			 ReorderBufferTupleBuf *oldtup, bool last_of_record)
{
	ReorderBufferChange *change = ReorderBufferGetChange(ctx->reorder);

	change->action = action;
	change->origin_id = XLogRecGetOrigin(buf->record);
	change->data.tp.relnode = node;
	change->data.tp.newtuple = newtup;
	change->data.tp.oldtuple = oldtup;
	/* the reorder buffer's TOAST state is reset after a record's last change */
	change->data.tp.clear_toast_afterwards = last_of_record;
	ReorderBufferQueueChange(ctx->reorder, xid, buf->origptr, change, false);
}

/*
 * The next tuple of a record, copied into a reorder buffer tuple; *pos
 * advances past it.
 */
static ReorderBufferTupleBuf *
read_tuple(LogicalDecodingContext *ctx, char **pos, char *end, bool sized)
{
	xl_pax_tuple xt;
	uint32		datalen;
	ReorderBufferTupleBuf *tb;
	HeapTupleHeader header;

	if (sized)
	{
		if (*pos + sizeof(uint32) > end)
			elog(ERROR, "pax WAL record is truncated");
		memcpy(&datalen, *pos, sizeof(uint32));
		*pos += sizeof(uint32);
	}
	if (*pos + SizeOfPaxTuple > end)
		elog(ERROR, "pax WAL record is truncated");
	memcpy(&xt, *pos, SizeOfPaxTuple);
	*pos += SizeOfPaxTuple;
	if (!sized)
		datalen = end - *pos;
	if (datalen > end - *pos)
		elog(ERROR, "pax WAL record holds a tuple of invalid length %u", datalen);
	/* as heap's DecodeXLogTuple() */
	tb = new_tuple_buf(ctx, datalen + SizeofHeapTupleHeader);
	header = tb->tuple.t_data;
	memset(header, 0, SizeofHeapTupleHeader);
	header->t_infomask = xt.t_infomask;
	header->t_infomask2 = xt.t_infomask2;
	header->t_hoff = xt.t_hoff;
	memcpy((char *) header + SizeofHeapTupleHeader, *pos, datalen);
	*pos += datalen;
	return tb;
}

/*
 * A delta append that is a plain INSERT, or an UPDATE's new version: its
 * MinimalTuple as a heap tuple, with the old row's identity for an UPDATE.
 */
static void
decode_delta_insert(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	xl_pax_delta_insert *xl = (xl_pax_delta_insert *) XLogRecGetData(r);
	ReorderBufferTupleBuf *tb;
	ReorderBufferTupleBuf *oldtup = NULL;
	Size		len;
	char	   *item;
	uint32		mlen;

	if (!(xl->flags & (XLP_DECODE | XLP_UPDATE)))
		return;
	item = XLogRecGetBlockData(r, 0, &len);
	if (item == NULL || len < PAX_DELTA_ITEM_HEADER_SIZE + sizeof(uint32))
		elog(ERROR, "pax delta insert record has no row");
	memcpy(&mlen, item + PAX_DELTA_ITEM_HEADER_SIZE, sizeof(uint32));
	if (PAX_DELTA_ITEM_HEADER_SIZE + mlen > len)
		elog(ERROR, "pax delta insert record holds a row of invalid length %u", mlen);
	if (xl->flags & XLP_HAS_OLD)
	{
		char	   *pos = (char *) (xl + 1);

		oldtup = read_tuple(ctx, &pos, (char *) xl + XLogRecGetDataLen(r), false);
	}

	/* heap_tuple_from_minimal_tuple(), into the reorder buffer's memory */
	tb = new_tuple_buf(ctx, mlen + MINIMAL_TUPLE_OFFSET);
	memcpy((char *) tb->tuple.t_data + MINIMAL_TUPLE_OFFSET,
		   item + PAX_DELTA_ITEM_HEADER_SIZE, mlen);
	memset(tb->tuple.t_data, 0, offsetof(HeapTupleHeaderData, t_infomask2));
	queue_change(ctx, buf, XLogRecGetXid(r), xl->node,
				 (xl->flags & XLP_UPDATE) ? REORDER_BUFFER_CHANGE_UPDATE :
				 REORDER_BUFFER_CHANGE_INSERT, tb, oldtup, true);
}

/* A row state change that is a DELETE: the old row's identity, if logged. */
static void
decode_row_state(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, RelFileNode node)
{
	XLogReaderState *r = buf->record;
	ReorderBufferTupleBuf *oldtup = NULL;
	xl_pax_row_state xl;
	Size		len = 0;
	char	   *bytes;
	char	   *end;

	/* without data (a full-page image alone) it is no DELETE: those keep it */
	if (XLogRecGetBlockData(r, 0, &len) == NULL || len == 0)
		return;
	parse_row_state(r, &xl, &bytes, &end);
	if (!(xl.len_flags & RS_DELETE))
		return;
	if (xl.len_flags & RS_HAS_OLD)
	{
		char	   *pos = XLogRecGetData(r);

		oldtup = read_tuple(ctx, &pos, pos + XLogRecGetDataLen(r), false);
	}
	queue_change(ctx, buf, XLogRecGetXid(r), node, REORDER_BUFFER_CHANGE_DELETE, NULL, oldtup,
				 true);
}

/*
 * Groups being gathered from their XLOG_PAX_GROUP records, in this
 * backend's decoding context (a walsender or a SQL decoding function).
 * Records of one transaction's group follow each other, but other
 * transactions' records come between.  A group whose transaction failed
 * between two of its records is dropped when the same inserter starts
 * another group, or with the decoding context.
 */
typedef struct GroupAssembly
{
	TransactionId xid;
	RelFileNode node;
	BlockNumber first_block;
	uint32		nblocks;
	uint32		received;		/* blocks so far */
	uint32		nrows;
	uint16		ncols;
	uint32		stream_len;
	uint16		flags;			/* xl_pax_group's */
	uint8	   *kinds;			/* XLP_KINDS: each row's PAX_DECODE_* */
	xl_pax_column *cols;
	char	   *stream;
} GroupAssembly;

static List *assemblies = NIL;
static MemoryContext assembly_cxt = NULL;
static LogicalDecodingContext *assembly_owner = NULL;

static void
assemblies_gone(void *arg)
{
	assemblies = NIL;
	assembly_cxt = NULL;
	assembly_owner = NULL;
}

/* The memory of gathered groups: a child of the decoding context. */
static MemoryContext
assembly_memory(LogicalDecodingContext *ctx)
{
	MemoryContextCallback *cb;

	if (assembly_owner == ctx && assembly_cxt != NULL)
		return assembly_cxt;
	if (assembly_cxt != NULL)
		MemoryContextDelete(assembly_cxt);	/* calls assemblies_gone() */
	assembly_cxt = AllocSetContextCreate(ctx->context, "pax groups being decoded",
										 ALLOCSET_DEFAULT_SIZES);
	cb = MemoryContextAlloc(assembly_cxt, sizeof(MemoryContextCallback));
	cb->func = assemblies_gone;
	cb->arg = NULL;
	MemoryContextRegisterResetCallback(assembly_cxt, cb);
	assembly_owner = ctx;
	return assembly_cxt;
}

static GroupAssembly *
find_assembly(TransactionId xid, RelFileNode node, BlockNumber first_block)
{
	ListCell   *lc;

	foreach(lc, assemblies)
	{
		GroupAssembly *ga = lfirst(lc);

		if (ga->xid == xid && ga->first_block == first_block && RelFileNodeEquals(ga->node, node))
			return ga;
	}
	return NULL;
}

static void
drop_assembly(GroupAssembly *ga)
{
	assemblies = list_delete_ptr(assemblies, ga);
	pfree(ga->stream);
	pfree(ga->cols);
	if (ga->kinds)
		pfree(ga->kinds);
	pfree(ga);
}

/* A group's first record: what decoding needs to know of its columns. */
static GroupAssembly *
start_assembly(LogicalDecodingContext *ctx, XLogReaderState *r, RelFileNode node)
{
	xl_pax_group *gx = (xl_pax_group *) XLogRecGetData(r);
	xl_pax_group_head *head = (xl_pax_group_head *) (gx + 1);
	MemoryContext old;
	GroupAssembly *ga;
	Size		colbytes;
	int			c;

	if (XLogRecGetDataLen(r) < sizeof(xl_pax_group) + sizeof(xl_pax_group_head))
		elog(ERROR, "pax group record is truncated");
	colbytes = sizeof(xl_pax_column) * head->ncols;
	if (XLogRecGetDataLen(r) < sizeof(xl_pax_group) + sizeof(xl_pax_group_head) + colbytes +
		((gx->flags & XLP_KINDS) ? head->nrows : 0))
		elog(ERROR, "pax group record lacks its columns");

	old = MemoryContextSwitchTo(assembly_memory(ctx));
	ga = find_assembly(gx->xid, node, gx->first_block);
	if (ga != NULL)
		drop_assembly(ga);
	ga = palloc0(sizeof(GroupAssembly));
	ga->xid = gx->xid;
	ga->node = node;
	ga->first_block = gx->first_block;
	ga->nblocks = gx->nblocks;
	ga->nrows = head->nrows;
	ga->ncols = head->ncols;
	ga->stream_len = gx->stream_len;
	ga->flags = gx->flags;
	ga->cols = palloc(Max(colbytes, 1));
	memcpy(ga->cols, head + 1, colbytes);
	if (gx->flags & XLP_KINDS)
	{
		ga->kinds = palloc(Max(head->nrows, 1));
		memcpy(ga->kinds, (char *) (head + 1) + colbytes, head->nrows);
	}
	for (c = 0; c < ga->ncols; c++)
		if ((uint64) ga->cols[c].offset + ga->cols[c].nbytes > ga->stream_len)
			elog(ERROR, "pax group record: minipage %d lies outside the group's payload", c);
	ga->stream = palloc0(Max(ga->stream_len, 1));
	assemblies = lappend(assemblies, ga);
	MemoryContextSwitchTo(old);
	return ga;
}

/* A gathered group's row k: how it decodes (PAX_DECODE_*). */
static inline int
row_kind(const GroupAssembly *ga, uint32 k)
{
	if (ga->kinds)
		return ga->kinds[k];
	return (ga->flags & XLP_UPDATE) ? PAX_DECODE_UPDATE : PAX_DECODE_INSERT;
}

/* The gathered group's rows, as INSERTs or UPDATEs of its inserter. */
static void
emit_group_rows(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, GroupAssembly *ga)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "pax group decoding",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	TupleDesc	desc = CreateTemplateTupleDesc(ga->ncols);
	Datum	  **values = palloc(sizeof(Datum *) * Max(ga->ncols, 1));
	bool	  **isnull = palloc(sizeof(bool *) * Max(ga->ncols, 1));
	Datum	   *rowvals = palloc(sizeof(Datum) * Max(ga->ncols, 1));
	bool	   *rownulls = palloc(sizeof(bool) * Max(ga->ncols, 1));
	uint32		k;
	uint32		last = 0;
	int			c;

	for (k = 0; k < ga->nrows; k++)
		if (row_kind(ga, k) != PAX_DECODE_NONE)
			last = k;
	for (c = 0; c < ga->ncols; c++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, c);

		memset(a, 0, ATTRIBUTE_FIXED_PART_SIZE);
		snprintf(NameStr(a->attname), NAMEDATALEN, "column %d", c + 1);
		a->attnum = c + 1;
		a->attlen = ga->cols[c].attlen;
		a->attbyval = ga->cols[c].attbyval;
		a->attalign = ga->cols[c].attalign;
		a->attstorage = ga->cols[c].attstorage;
		a->atttypmod = -1;
		a->attcacheoff = -1;
		values[c] = palloc(sizeof(Datum) * Max(ga->nrows, 1));
		isnull[c] = palloc(sizeof(bool) * Max(ga->nrows, 1));
		pax_decode_minipage(a, ga->nrows, ga->stream + ga->cols[c].offset, ga->cols[c].nbytes,
							values[c], isnull[c], NULL);
	}
	for (k = 0; k < ga->nrows; k++)
	{
		HeapTuple	tup;
		ReorderBufferTupleBuf *tb;
		int			kind = row_kind(ga, k);

		/* rows decoded from records of their own (updates logging old columns) */
		if (kind == PAX_DECODE_NONE)
			continue;
		for (c = 0; c < ga->ncols; c++)
		{
			rowvals[c] = values[c][k];
			rownulls[c] = isnull[c][k];
		}
		tup = heap_form_tuple(desc, rowvals, rownulls);
		tb = new_tuple_buf(ctx, tup->t_len);
		memcpy(tb->tuple.t_data, tup->t_data, tup->t_len);
		heap_freetuple(tup);
		queue_change(ctx, buf, ga->xid, ga->node,
					 (kind == PAX_DECODE_UPDATE) ? REORDER_BUFFER_CHANGE_UPDATE :
					 REORDER_BUFFER_CHANGE_INSERT, tb, NULL, k == last);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * A record of a group of inserted rows: its blocks' payloads are gathered;
 * at the group's last record its rows are queued.  A record whose group's
 * first record was not decoded belongs to a transaction decoding skips.
 */
static void
decode_group(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, RelFileNode node)
{
	XLogReaderState *r = buf->record;
	xl_pax_group *gx = (xl_pax_group *) XLogRecGetData(r);
	GroupAssembly *ga;
	int			id;

	if (gx->first_index == 0)
		ga = start_assembly(ctx, r, node);
	else if ((ga = find_assembly(gx->xid, node, gx->first_block)) == NULL)
		return;
	for (id = 0; id <= XLogRecMaxBlockId(r); id++)
	{
		uint64		off = (uint64) (gx->first_index + id) * PAX_BLOCK_PAYLOAD;
		Size		len = 0;
		char	   *payload;

		if (!XLogRecHasBlockRef(r, id))
			continue;
		payload = XLogRecGetBlockData(r, id, &len);
		if (len > 0 && (payload == NULL || off + len > ga->stream_len))
			elog(ERROR, "pax group record: block %u lies outside the group's payload",
				 gx->first_index + id);
		if (len > 0)
			memcpy(ga->stream + off, payload, len);
		ga->received++;
	}
	if (ga->received < ga->nblocks)
		return;
	emit_group_rows(ctx, buf, ga);
	drop_assembly(ga);
}

/* heap_decode()'s gates and DecodeInsert/Update/Delete for our records. */
static void
pax_rm_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	TransactionId xid = XLogRecGetXid(r);
	uint8		op = XLogRecGetInfo(r) & XLOG_PAX_OPMASK;
	RelFileNode node;
	xl_pax_rows *xl;
	char	   *pos;
	char	   *end;
	ReorderBufferTupleBuf *oldtup = NULL;
	uint32		i;

	StaticAssertStmt(offsetof(xl_pax_rows, node) == 0 &&
					 offsetof(xl_pax_delta_insert, node) == 0,
					 "pax WAL records must start with their RelFileNode");
	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (op == XLOG_PAX_GROUP)
	{
		xl_pax_group *gx = (xl_pax_group *) XLogRecGetData(r);

		/*
		 * A group is written when its rows' buffer is, maybe after their
		 * subtransaction ended or in another one: the changes are the
		 * inserter's, and the reorder buffer learns whose child it is.
		 */
		xid = gx->xid;
		if (TransactionIdIsValid(gx->top_xid) && gx->top_xid != xid)
			ReorderBufferAssignChild(ctx->reorder, gx->top_xid, xid, buf->origptr);
		ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
		XLogRecGetBlockTag(r, 0, &node, NULL, NULL);
	}
	else if (op == XLOG_PAX_ROW_STATE)
		XLogRecGetBlockTag(r, 0, &node, NULL, NULL);
	else
		node = *(RelFileNode *) XLogRecGetData(r);	/* other records start with it */
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT ||
		ctx->fast_forward)
		return;
	if (!SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr))
		return;
	if (node.dbNode != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;
	if (op == XLOG_PAX_GROUP)
	{
		decode_group(ctx, buf, node);
		return;
	}
	if (op == XLOG_PAX_ROW_STATE)
	{
		decode_row_state(ctx, buf, node);
		return;
	}
	if (op == XLOG_PAX_DELTA_INSERT)
	{
		decode_delta_insert(ctx, buf);
		return;
	}

	xl = (xl_pax_rows *) XLogRecGetData(r);
	pos = (char *) xl + sizeof(xl_pax_rows);
	end = (char *) xl + XLogRecGetDataLen(r);
	if (xl->flags & XLP_HAS_OLD)
		oldtup = read_tuple(ctx, &pos, end, true);
	for (i = 0; i < xl->ntuples; i++)
		queue_change(ctx, buf, xid, xl->node,
					 (op == XLOG_PAX_UPDATE) ? REORDER_BUFFER_CHANGE_UPDATE :
					 REORDER_BUFFER_CHANGE_INSERT,
					 read_tuple(ctx, &pos, end, true), (i == 0) ? oldtup : NULL,
					 i == xl->ntuples - 1);
}

/*
 * wal_consistency_checking = 'pax': what may differ between a page and its
 * replayed copy.  Every byte pax's records change is logged, so only the
 * LSN, the checksum and the unused space between pd_lower and pd_upper
 * (zero on group and row map blocks, free space on delta pages) are masked.
 */
static void
pax_rm_mask(char *pagedata, BlockNumber blkno)
{
	mask_page_lsn_and_checksum(pagedata);
	mask_unused_space(pagedata);
}

static RmgrData pax_rmgr = {
	.rm_name = PAX_RMGR_NAME,
	.rm_redo = pax_rm_redo,
	.rm_mask = pax_rm_mask,
	.rm_desc = pax_rm_desc,
	.rm_identify = pax_rm_identify,
	.rm_decode = pax_rm_decode
};

/* _PG_init: register the resource manager when loaded at server start. */
void
pax_decode_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(PAX_RMGR_ID, &pax_rmgr);
	rmgr_registered = true;
}

/* Can pax's changes be logically decoded in this server? */
bool
pax_logical_decoding_ready(void)
{
	return rmgr_registered;
}
