/*-------------------------------------------------------------------------
 *
 * pax_metapage.c
 *	  The metapage of a pax relation: its format, the group size, row-number
 *	  reservations, and the column limit.
 *
 * Block 0 holds what every writer of the relation shares: the format
 * version, the group size for new groups, the next unreserved row number
 * (reserved in runs and WAL-logged, so a number an index holds is never
 * handed out twice), the reservations still open with their writers, the
 * directory chain's ends and the free-block list.  Its exclusive lock
 * serializes directory appends, reservations and block allocation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
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

/* A block that is not what the directory or the metapage says it is. */
void
pax_corrupted(Relation rel, BlockNumber blkno, const char *what)
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
	meta->version = pax_write_format;
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
		pax_corrupted(rel, PAX_METAPAGE_BLKNO, "pax metapage (the table has no blocks)");
	buf = ReadBuffer(rel, PAX_METAPAGE_BLKNO);
	LockBuffer(buf, mode);
	page = BufferGetPage(buf);
	if (PageIsNew(page) || PaxPageGetMeta(page)->magic != PAX_MAGIC)
		pax_corrupted(rel, PAX_METAPAGE_BLKNO, "pax metapage");
	if (PaxPageGetMeta(page)->version < PAX_MIN_FORMAT_VERSION ||
		PaxPageGetMeta(page)->version > PAX_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pax table \"%s\" has format version %u, this library reads versions %u to %u",
						RelationGetRelationName(rel), PaxPageGetMeta(page)->version,
						PAX_MIN_FORMAT_VERSION, PAX_FORMAT_VERSION),
				 errhint("Read it with a flashscan library that reads its version, or move it through heap (ALTER TABLE ... SET ACCESS METHOD heap) with the library that wrote it.")));
	return buf;
}

/*
 * The group size of the relation's next groups, and the newest format
 * version its groups may be in.
 */
void
pax_relation_meta(Relation rel, int *group_blocks, int *format)
{
	Buffer		buf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(buf));

	*group_blocks = meta->group_blocks;
	*format = meta->version;
	UnlockReleaseBuffer(buf);
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

	/*
	 * With wal_level = minimal a relfilenode made in this transaction is
	 * made durable at commit (its pages WAL-logged whole, or the file
	 * fsynced) and its changes until then are not logged: a WAL image of
	 * this empty metapage would be replayed by crash recovery over the
	 * committed one, emptying the table.  So log it only when WAL is.
	 */
	write_metapage(srel, newrnode, MAIN_FORKNUM,
				   persistence == RELPERSISTENCE_PERMANENT && XLogIsNeeded(), group_blocks);
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
 *
 * held_end is the end of the reservation whose numbers the caller's buffered
 * rows use (0 when it buffers none): that entry must stay until they are
 * written.  The transaction's other entries cover rows already written into
 * groups (or numbers never used), which readers find in the directory: such
 * an entry is reused.  Without that, a bulk load interleaved with another
 * writer took an entry at every interleaving and ran out of them.
 */
uint64
pax_reserve_rownums(Relation rel, uint32 count, uint64 held_end)
{
	/*
	 * The owner is the (sub)transaction whose rows the numbers are for, as
	 * a heap tuple's xmin is: when a subtransaction rolls back, a unique
	 * check that meets one of its rows in our memory neither waits for the
	 * top-level transaction nor (SERIALIZABLE) conflicts with it.
	 */
	TransactionId xid = GetCurrentTransactionId();
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
	/*
	 * Our own entry ending here extends; else one of this transaction's
	 * (any of its subtransactions': a buffer holds one's rows at a time)
	 * that no buffered row uses, or a finished writer's, is reused.
	 */
	for (i = 0; i < meta->nreservations; i++)
	{
		PaxReservation *r = &meta->reservations[i];

		if (r->xid == xid && r->end == first)
		{
			slot = i;
			break;
		}
		if (slot < 0 &&
			(!TransactionIdIsValid(r->xid) ||
			 (TransactionIdIsCurrentTransactionId(r->xid) && r->end != held_end) ||
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
