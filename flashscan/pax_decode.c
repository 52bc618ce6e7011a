/*-------------------------------------------------------------------------
 *
 * pax_decode.c
 *	  Logical decoding of pax tables: a WAL resource manager of pax's own.
 *
 * pax writes its pages with generic WAL records (pax_blocks.c), which carry
 * bytes of pages, not rows, so logical decoding cannot turn them into
 * changes.  With wal_level = logical, every INSERT (COPY included), UPDATE
 * and DELETE of a pax table that is logically logged (RelationIsLogicallyLogged:
 * not temporary, unlogged or a catalog) also writes one record of this
 * resource manager holding the rows as heap tuples, with the old row's
 * replica identity as heap's ExtractReplicaIdentity() chooses it (the key
 * columns of the identity index when a DELETE, or an UPDATE that changes
 * them; the whole old row with REPLICA IDENTITY FULL; nothing with NOTHING).
 * Decoding queues the reorder-buffer changes heap's records give, so
 * publications (pgoutput, row filters, column lists), test_decoding,
 * streaming of large transactions and two-phase decoding see pax tables as
 * they see heap tables.  TRUNCATE needs nothing here: PostgreSQL logs it for
 * every logically logged table, whatever its access method.
 *
 * Redo does nothing: the pages come back from the generic records.  The
 * records are written only when the resource manager is registered, which
 * PostgreSQL allows only from shared_preload_libraries; every server that
 * replays such WAL (crash recovery, standbys, point-in-time recovery) then
 * needs flashscan preloaded too, or recovery stops at the first record.
 * A write of a logically logged pax table without it warns, and a
 * publication of pax tables without it is refused (pax_ddl.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "utils/rel.h"
#include "utils/relcache.h"

#include "pax.h"

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
#define XLOG_PAX_DELETE			0x20
#define XLOG_PAX_DELTA_INSERT	0x30
#define XLOG_PAX_OPMASK			0x70

/* xl_pax_rows.flags */
#define XLP_HAS_OLD				0x0001	/* an old tuple comes first */
#define XLP_OLD_IS_KEY			0x0002	/* it holds the identity key columns only */
#define XLP_HAS_NEW				0x0004	/* new tuples follow */

/*
 * A record's main data: this header, then (XLP_HAS_OLD) one old tuple,
 * then (XLP_HAS_NEW) ntuples new tuples; each tuple is a uint32 length and
 * that many bytes of HeapTupleHeader and data, unaligned.
 */
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
 * INSERT logs its row once; redo applies it.  Decoded as an INSERT only
 * with XLP_DECODE (an UPDATE's new version or a speculative insertion is
 * decoded from its own record).
 */
typedef struct xl_pax_delta_insert
{
	RelFileNode node;
	OffsetNumber offnum;
	uint16		flags;
} xl_pax_delta_insert;

#define XLP_DECODE				0x0001

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

/* Append a tuple (its length, then its bytes) to a record being built. */
static void
append_tuple(StringInfo buf, HeapTuple tup)
{
	uint32		len = tup->t_len;

	appendBinaryStringInfo(buf, (char *) &len, sizeof(uint32));
	appendBinaryStringInfo(buf, (char *) tup->t_data, len);
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
		append_tuple(&buf, oldtup);
	for (i = 0; i < nnew; i++)
		append_tuple(&buf, newtups[i]);

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
pax_log_delta_insert(Relation rel, Buffer buf, const char *item, Size itemsz, bool decode_insert)
{
	Page		page = BufferGetPage(buf);
	xl_pax_delta_insert xl;
	OffsetNumber off;
	XLogRecPtr	recptr;

	(void) GetCurrentTransactionId();
	memset(&xl, 0, sizeof(xl));
	START_CRIT_SECTION();
	off = PageAddItem(page, (Item) item, itemsz, InvalidOffsetNumber, false, false);
	if (off == InvalidOffsetNumber)
		elog(PANIC, "could not add a row to delta page %u of \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	MarkBufferDirty(buf);
	xl.node = rel->rd_node;
	xl.offnum = off;
	xl.flags = decode_insert ? XLP_DECODE : 0;
	XLogBeginInsert();
	XLogRegisterData((char *) &xl, sizeof(xl));
	/* the item stays in the record even beside a full-page image: decoding reads it */
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | REGBUF_KEEP_DATA);
	XLogRegisterBufData(0, (char *) item, itemsz);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	recptr = XLogInsert(PAX_RMGR_ID, XLOG_PAX_DELTA_INSERT);
	PageSetLSN(page, recptr);
	END_CRIT_SECTION();
	return off;
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
 * UPDATE (new is the new row) or DELETE (new NULL) of the row at otid,
 * logged after the change succeeded; the old row is read back.
 */
void
pax_log_logical_change(Relation rel, ItemPointer otid, TupleTableSlot *new)
{
	TupleTableSlot *old;
	HeapTuple	oldtup = NULL;
	HeapTuple	newtup = NULL;
	bool		is_key = false;
	char		replident = rel->rd_rel->relreplident;
	Bitmapset  *idattrs = NULL;
	bool		found;

	if (!logical_record_needed(rel))
		return;
	/* the old row's columns the identity needs: all (FULL), the key's, or none */
	if (replident != REPLICA_IDENTITY_FULL && replident != REPLICA_IDENTITY_NOTHING)
		idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	old = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	if (replident == REPLICA_IDENTITY_FULL || idattrs != NULL)
		found = pax_fetch_row_columns(rel, otid, SnapshotAny, old, idattrs);	/* NULL: all */
	else
		found = true;			/* nothing of the old row is logged */
	if (!found)
		elog(ERROR, "pax row (%u,%u) of \"%s\" vanished while it was changed",
			 ItemPointerGetBlockNumber(otid), ItemPointerGetOffsetNumber(otid),
			 RelationGetRelationName(rel));
	if (replident == REPLICA_IDENTITY_FULL || idattrs != NULL)
		oldtup = replica_identity(rel, old, new, &is_key);
	bms_free(idattrs);
	if (new != NULL)
		newtup = slot_tuple(new);
	write_record(rel, new ? XLOG_PAX_UPDATE : XLOG_PAX_DELETE, oldtup, is_key,
				 newtup ? &newtup : NULL, newtup ? 1 : 0);
	if (oldtup)
		heap_freetuple(oldtup);
	if (newtup)
		heap_freetuple(newtup);
	ExecDropSingleTupleTableSlot(old);
}

/* ------------------------------------------------------------------------
 * Redo, description, decoding
 * ------------------------------------------------------------------------
 */

/*
 * Redo: a delta append is applied at its offset; the row records apply
 * nothing (their pages come back from the generic WAL records).
 */
static void
pax_rm_redo(XLogReaderState *record)
{
	uint8		op = XLogRecGetInfo(record) & XLOG_PAX_OPMASK;
	xl_pax_delta_insert *xl;
	Buffer		buf;

	if (op != XLOG_PAX_DELTA_INSERT)
		return;
	xl = (xl_pax_delta_insert *) XLogRecGetData(record);
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *item = XLogRecGetBlockData(record, 0, &len);

		if (PageAddItem(page, (Item) item, len, xl->offnum, false, false) != xl->offnum)
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
		case XLOG_PAX_DELETE:
			return "DELETE";
		case XLOG_PAX_DELTA_INSERT:
			return "DELTA_INSERT";
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

		appendStringInfo(buf, "off %u%s", dx->offnum, (dx->flags & XLP_DECODE) ? "; decoded" : "");
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

/* Queue one change of a record, as heap's DecodeInsert/Update/Delete do. */
static void
queue_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf, RelFileNode node,
			 ReorderBufferChangeType action, ReorderBufferTupleBuf *newtup,
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
	ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(buf->record), buf->origptr, change,
							 false);
}

/*
 * The next tuple of a record, copied into a reorder buffer tuple; *pos
 * advances past it.
 */
static ReorderBufferTupleBuf *
read_tuple(LogicalDecodingContext *ctx, char **pos, char *end)
{
	uint32		len;
	ReorderBufferTupleBuf *tb;

	if (*pos + sizeof(uint32) > end)
		elog(ERROR, "pax WAL record is truncated");
	memcpy(&len, *pos, sizeof(uint32));
	*pos += sizeof(uint32);
	if (len < SizeofHeapTupleHeader || *pos + len > end)
		elog(ERROR, "pax WAL record holds a tuple of invalid length %u", len);
	tb = new_tuple_buf(ctx, len);
	memcpy(tb->tuple.t_data, *pos, len);
	*pos += len;
	return tb;
}

/* A delta append that is a plain INSERT: its MinimalTuple as a heap tuple. */
static void
decode_delta_insert(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	xl_pax_delta_insert *xl = (xl_pax_delta_insert *) XLogRecGetData(r);
	ReorderBufferTupleBuf *tb;
	Size		len;
	char	   *item;
	uint32		mlen;

	if (!(xl->flags & XLP_DECODE))
		return;
	item = XLogRecGetBlockData(r, 0, &len);
	if (item == NULL || len < PAX_DELTA_ITEM_HEADER_SIZE + sizeof(uint32))
		elog(ERROR, "pax delta insert record has no row");
	memcpy(&mlen, item + PAX_DELTA_ITEM_HEADER_SIZE, sizeof(uint32));
	if (PAX_DELTA_ITEM_HEADER_SIZE + mlen > len)
		elog(ERROR, "pax delta insert record holds a row of invalid length %u", mlen);

	/* heap_tuple_from_minimal_tuple(), into the reorder buffer's memory */
	tb = new_tuple_buf(ctx, mlen + MINIMAL_TUPLE_OFFSET);
	memcpy((char *) tb->tuple.t_data + MINIMAL_TUPLE_OFFSET,
		   item + PAX_DELTA_ITEM_HEADER_SIZE, mlen);
	memset(tb->tuple.t_data, 0, offsetof(HeapTupleHeaderData, t_infomask2));
	queue_change(ctx, buf, xl->node, REORDER_BUFFER_CHANGE_INSERT, tb, NULL, true);
}

/* heap_decode()'s gates and DecodeInsert/Update/Delete for our records. */
static void
pax_rm_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	TransactionId xid = XLogRecGetXid(r);
	uint8		op = XLogRecGetInfo(r) & XLOG_PAX_OPMASK;
	/* both record kinds start with the relation's RelFileNode */
	RelFileNode *node = (RelFileNode *) XLogRecGetData(r);
	xl_pax_rows *xl;
	char	   *pos;
	char	   *end;
	ReorderBufferTupleBuf *oldtup = NULL;
	uint32		i;

	StaticAssertStmt(offsetof(xl_pax_rows, node) == 0 &&
					 offsetof(xl_pax_delta_insert, node) == 0,
					 "pax WAL records must start with their RelFileNode");
	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT ||
		ctx->fast_forward)
		return;
	if (!SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr))
		return;
	if (node->dbNode != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;
	if (op == XLOG_PAX_DELTA_INSERT)
	{
		decode_delta_insert(ctx, buf);
		return;
	}

	xl = (xl_pax_rows *) XLogRecGetData(r);
	pos = (char *) xl + sizeof(xl_pax_rows);
	end = (char *) xl + XLogRecGetDataLen(r);
	if (xl->flags & XLP_HAS_OLD)
		oldtup = read_tuple(ctx, &pos, end);
	if (op == XLOG_PAX_DELETE || xl->ntuples == 0)
	{
		queue_change(ctx, buf, xl->node, REORDER_BUFFER_CHANGE_DELETE, NULL, oldtup, true);
		return;
	}
	for (i = 0; i < xl->ntuples; i++)
		queue_change(ctx, buf, xl->node,
					 (op == XLOG_PAX_UPDATE) ? REORDER_BUFFER_CHANGE_UPDATE :
					 REORDER_BUFFER_CHANGE_INSERT,
					 read_tuple(ctx, &pos, end), (i == 0) ? oldtup : NULL,
					 i == xl->ntuples - 1);
}

static RmgrData pax_rmgr = {
	.rm_name = PAX_RMGR_NAME,
	.rm_redo = pax_rm_redo,
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
