/*-------------------------------------------------------------------------
 *
 * pax.h
 *	  On-disk format and shared declarations of the pax table access method.
 *
 * A pax relation's main fork holds three kinds of blocks, every one a
 * standard PostgreSQL page (PageInit'ed, checksummed by the buffer manager):
 *
 *	block 0		the metapage: format version, the group size for new groups,
 *				the next unreserved row number, the directory chain's ends;
 *	directory	a chain of pages of group entries, appended in row order;
 *	groups		up to G consecutive blocks (reloption group_blocks) holding
 *				the rows of one group column by column, one minipage per
 *				column.
 *
 * A group's blocks carry one payload stream (the bytes after each page
 * header, concatenated).  Minipages are packed into it in column order,
 * except that one starts on the next block boundary when that saves it a
 * block read at the cost of at most a quarter block (pax_layout_group()).
 * The directory entry records every minipage's offset and length, so a
 * scan knows which blocks to read without reading the group.
 *
 * Rows are numbered densely as they are inserted; a group holds the rows of
 * one contiguous range of row numbers, and row number r has the TID
 * (r / PAX_ROWS_PER_TID_BLOCK, r % PAX_ROWS_PER_TID_BLOCK + 1).  TIDs are
 * logical: they never change while the row lives, and their block number
 * is not a physical block.  PAX_ROWS_PER_TID_BLOCK is MaxHeapTuplesPerPage
 * so that TID bitmaps accept every offset.
 *
 * Visibility: a group's insertion is one command of one (sub)transaction,
 * whose xid and command id the entry records.  Deletes, updates and row
 * locks are per row: a group gets a row map on its first one, blocks of
 * PaxRowState slots (xmax, cmax, the new version's row number), one per row
 * number of the group.  An UPDATE deletes the old version and inserts the
 * new one with a new row number, so every index gets an entry for it.
 *
 * VACUUM marks rows whose deleter committed before every snapshot dead,
 * removes their index entries, and rewrites a group that is mostly dead, or
 * several small neighbours, into one new group that keeps the rows' row
 * numbers: a sparse group, whose presence bitmap tells which numbers of its
 * span it stores.  The old blocks go to the metapage's free list and are
 * reused once no snapshot older than the rewrite exists.  Every group block
 * and row map block carries its group's tag in pd_prune_xid (unused on
 * non-heap pages), so a reader holding an old copy of the directory (only
 * possible on a hot standby, which primary snapshots do not hold back)
 * notices a reused block instead of decoding it; a group's horizon does the
 * same for rows VACUUM removed that such a snapshot could still see.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PAX_H
#define PAX_H

#include "postgres.h"

#include "access/htup_details.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "nodes/lockoptions.h"
#include "port/atomics.h"

typedef struct PaxFetchFilter PaxFetchFilter;	/* pax_fetch.c's selection first */

#define PAX_MAGIC				0x50415831	/* "PAX1" */
#define PAX_FORMAT_VERSION		6	/* 5: variable-width minipages have a stride
									 * index; dead-row bitmaps.  6: delta pages
									 * keep their rows' states (PAX_GROUP_PAGE_STATES) */
#define PAX_MIN_FORMAT_VERSION	4	/* the oldest format this library reads */
#define PAX_METAPAGE_BLKNO		0

/* Bytes of a group block that hold minipage data. */
#define PAX_BLOCK_PAYLOAD		(BLCKSZ - MAXALIGN(SizeOfPageHeaderData))

#define PAX_ROWS_PER_TID_BLOCK	MaxHeapTuplesPerPage

/* Group size (flashscan.group_blocks, pax_set_group_blocks()): range and default. */
#define PAX_MIN_GROUP_BLOCKS	1
#define PAX_MAX_GROUP_BLOCKS	4096
#define PAX_DEFAULT_GROUP_BLOCKS 128

/* At most this many rows in one group (bounds per-group arrays). */
#define PAX_MAX_GROUP_ROWS		65536

/*
 * A fetch (pax_fetch.c) decodes a group's needed columns whole once enough
 * fetches in a row have landed in it (at least two): in format 5,
 * PAX_FETCH_DECODE_ROWS_PER_BLOCK for each block their minipages take (a
 * row read alone touches a block or two per column, a decode reads each
 * block once and every row); in format 4, where a variable-width value is
 * found by walking its minipage, one per PAX_FETCH_DECODE_DIVISOR rows of
 * the group.
 */
#define PAX_FETCH_DECODE_ROWS_PER_BLOCK	4
#define PAX_FETCH_DECODE_DIVISOR	256
/*
 * A delta page (rows stored whole, a few dozen a page) is decoded on the
 * fetch that lands on it this many times in a row; earlier fetches read
 * their row alone (pax_delta_read_row()).
 */
#define PAX_FETCH_DELTA_DECODE_RUN	8

/* Row numbers are reserved for a group in ranges of this size at most. */
#define PAX_ROWNUM_RESERVE		1024

/*
 * A run of row numbers a transaction reserved and may not have written yet:
 * its rows can sit in the writer's memory, with their index entries already
 * in place.  A unique-index check that meets such an entry must wait for the
 * writer (see pax_reservation_owner()).  Entries of finished transactions
 * are reused, and so are a running writer's whose rows are all in groups
 * (pax_reserve_rownums()): a writer puts a group in the directory before it
 * gives up the reservation, so a reader that finds neither reads the
 * directory again (pax_fetch_row()).
 */
typedef struct PaxReservation
{
	uint64		start;
	uint64		end;
	TransactionId xid;			/* top-level xid of the writer */
	uint32		pad;
} PaxReservation;

#define PAX_MAX_RESERVATIONS	128

/*
 * Blocks VACUUM freed.  They may be reused once every snapshot is newer
 * than freed_fxid, the next transaction id when they were freed: a scan
 * that read the directory before then has a snapshot at least that old.
 */
typedef struct PaxFreeExtent
{
	BlockNumber start;
	uint32		nblocks;
	uint64		freed_fxid;		/* FullTransactionId value */
} PaxFreeExtent;

#define PAX_MAX_FREE_EXTENTS	128

typedef struct PaxMetaPageData
{
	uint32		magic;
	uint32		version;
	uint32		group_blocks;	/* G for new groups */
	uint32		nreservations;	/* used entries of reservations[] */
	uint64		next_rownum;	/* first row number not yet reserved */
	uint64		ngroups;		/* directory entries */
	BlockNumber dir_first;		/* first directory page, or InvalidBlockNumber */
	BlockNumber dir_last;		/* page new entries go to */
	uint64		dir_version;	/* changes with every change of the directory */
	uint32		next_tag;		/* tag of the next group written */
	uint32		nfree;			/* used entries of free[] */
	BlockNumber delta_block;	/* the delta page small inserts go to, or invalid */
	uint32		pad;
	PaxReservation reservations[PAX_MAX_RESERVATIONS];
	PaxFreeExtent free[PAX_MAX_FREE_EXTENTS];
} PaxMetaPageData;

#define PaxPageGetMeta(page) ((PaxMetaPageData *) PageGetContents(page))

/* One column's minipage within a group. */
typedef struct PaxColumnExtent
{
	uint32		offset;			/* start in the group's payload stream */
	uint32		nbytes;			/* minipage length */
} PaxColumnExtent;

/* PaxGroupEntry.flags */
#define PAX_GROUP_FROZEN		0x0001	/* xmin is older than every snapshot */
#define PAX_GROUP_ABORTED		0x0002	/* its transaction aborted: never visible */
#define PAX_GROUP_EMPTY			0x0004	/* VACUUM removed or merged away all its rows */
#define PAX_GROUP_DELTA			0x0008	/* a delta page: rows with their own xmin (below) */
#define PAX_GROUP_DEAD_BITMAP	0x0010	/* row_map is one block: a bitmap of the rows
										 * VACUUM found dead; every other row's state
										 * is free (see PaxRowState) */
#define PAX_GROUP_PAGE_STATES	0x0020	/* a delta page whose items carry their rows'
										 * states; row_map is the page itself */

/*
 * A directory entry: where one group lives and who wrote it.  The group
 * spans row numbers [first_rownum, first_rownum + nrows) and stores nstored
 * of them: all, or (a sparse group) those whose bit is set in the presence
 * bitmap of (nrows + 7) / 8 bytes at present_offset of its payload stream.
 * Column minipages hold the stored rows only.
 */
typedef struct PaxGroupEntry
{
	uint64		first_rownum;
	uint32		nrows;			/* row numbers spanned */
	uint32		nstored;		/* rows stored */
	BlockNumber first_block;
	uint32		nblocks;
	uint16		ncols;			/* columns stored (later columns read as missing) */
	uint16		flags;
	TransactionId xmin;
	CommandId	cmin;
	BlockNumber row_map;		/* first row map block, or InvalidBlockNumber */
	uint32		tag;			/* in pd_prune_xid of its blocks and row map blocks */
	TransactionId horizon;		/* rows removed for snapshots older than this, or invalid */
	uint32		present_offset; /* sparse groups: the presence bitmap */
	PaxColumnExtent cols[FLEXIBLE_ARRAY_MEMBER];
} PaxGroupEntry;

#define PaxGroupIsSparse(g)		(!((g)->flags & PAX_GROUP_DELTA) && (g)->nstored < (g)->nrows)
#define PaxGroupIsDelta(g)		(((g)->flags & PAX_GROUP_DELTA) != 0)
#define PaxGroupHasDeadBitmap(g)	(((g)->flags & PAX_GROUP_DEAD_BITMAP) != 0)
#define PaxGroupHasPageStates(g)	(((g)->flags & PAX_GROUP_PAGE_STATES) != 0)

/*
 * The delta: where small inserts go (pax_delta.c).  A delta page is one
 * block, a standard heap-like page of line pointers, registered in the
 * directory as a group (PAX_GROUP_DELTA, nblocks 1) spanning
 * PAX_DELTA_SPAN row numbers reserved when the page was made; its k-th item
 * is row number first_rownum + k - 1.  An item is a PaxDeltaRowHeader, the
 * row's own inserter and command (visibility is per row, heap's xmin rules),
 * followed by the row as a MinimalTuple of plain values.  Items are only
 * appended, under the page's exclusive lock, until VACUUM seals the page to
 * rewrite it into a (sparse) PAX group; deletes, updates and locks use the
 * group's row map as for any group.  The entry's xmin, cmin and nstored are
 * unused.
 *
 * From format 6 a delta page holds its rows' states itself: each item ends
 * with the row's PaxRowState (PAX_DELTA_ROW_STATES on the page,
 * PAX_GROUP_PAGE_STATES on the entry, whose row_map names the page).  A
 * separate map would take a whole block for a page of a few dozen rows, on
 * the first update of any of them, and every scan would read it beside the
 * page; an update-heavy workload (each new version lands on a delta page,
 * and is itself updated later) made most delta pages carry one.
 */
typedef struct PaxDeltaRowHeader
{
	TransactionId xmin;
	CommandId	cmin;
} PaxDeltaRowHeader;

/* A delta item: its header, then the row as a MinimalTuple. */
#define PAX_DELTA_ITEM_HEADER_SIZE	MAXALIGN(sizeof(PaxDeltaRowHeader))

typedef struct PaxDeltaPageOpaque
{
	uint64		first_rownum;
	uint32		span;			/* row numbers reserved for the page */
	uint16		flags;
	uint16		page_id;		/* PAX_DELTA_PAGE_ID */
} PaxDeltaPageOpaque;

#define PAX_DELTA_PAGE_ID		0xFA5E
#define PAX_DELTA_SEALED		0x0001	/* no more appends: VACUUM is rewriting it */
#define PAX_DELTA_ROW_STATES	0x0002	/* each item ends with its row's PaxRowState */
#define PAX_DELTA_SPAN			PAX_ROWS_PER_TID_BLOCK
#define PaxDeltaPageGetOpaque(page) ((PaxDeltaPageOpaque *) PageGetSpecialPointer(page))

/*
 * A transaction's first rows of a table go to the delta, up to this many
 * bytes of items: a small transaction's rows all do, and a bulk load leaves
 * at most half a page there.
 */
#define PAX_DELTA_BYTES_PER_XACT	(BLCKSZ / 2)

/*
 * A row's state in its group's row map.  xmax is the deleting (or, with
 * PAX_ROW_LOCK_ONLY, the locking) transaction; after an UPDATE the new
 * version's row number is next.  PAX_ROW_DEAD: the delete committed before
 * every snapshot, and the row's index entries are gone (VACUUM).
 */
typedef struct PaxRowState
{
	TransactionId xmax;
	CommandId	cmax;
	uint16		flags;
	uint16		next_hi;
	uint32		next_lo;
} PaxRowState;

#define PAX_ROW_LOCK_ONLY		0x0001
#define PAX_ROW_UPDATED			0x0002
#define PAX_ROW_DEAD			0x0004
#define PAX_ROW_MOVED			0x0008	/* deleted by an UPDATE that moved it to
										 * another partition (heap's moved
										 * partitions ctid) */
#define PAX_ROW_MULTI			0x0010	/* xmax is a MultiXactId: of several
										 * lockers (with LOCK_ONLY), or of the
										 * row's updater and the FOR KEY SHARE
										 * lockers a non-key UPDATE passed
										 * (with UPDATED) */
#define PAX_ROW_SPECULATIVE		0x0020	/* with no xmax: an INSERT ... ON CONFLICT
										 * is still checking its row; next holds
										 * its speculative insertion token */
/*
 * A single locker's strength (LockTupleMode), stored as LockTupleExclusive
 * minus the mode so that 0 is FOR UPDATE, the only mode before shared locks.
 */
#define PAX_ROW_LOCK_MODE_MASK	0x0300
#define PAX_ROW_LOCK_MODE_SHIFT	8

static inline LockTupleMode
pax_row_lock_mode(const PaxRowState *st)
{
	return (LockTupleMode) (LockTupleExclusive -
							((st->flags & PAX_ROW_LOCK_MODE_MASK) >> PAX_ROW_LOCK_MODE_SHIFT));
}

static inline uint16
pax_row_lock_flags(LockTupleMode mode)
{
	return (uint16) (((LockTupleExclusive - mode) << PAX_ROW_LOCK_MODE_SHIFT) &
					 PAX_ROW_LOCK_MODE_MASK);
}

#define PAX_ROW_STATES_PER_BLOCK	((int) (PAX_BLOCK_PAYLOAD / sizeof(PaxRowState)))
#define PAX_ROW_MAP_CHUNK		(PAX_ROW_STATES_PER_BLOCK * sizeof(PaxRowState))
#define PaxRowMapBlocks(nrows) \
	(((nrows) + PAX_ROW_STATES_PER_BLOCK - 1) / PAX_ROW_STATES_PER_BLOCK)

/*
 * A row map records, per row, who deleted, updated or locked it: 16 bytes
 * a row of the group, which every scan reads, however few rows changed.
 * Once VACUUM has found every state in it either free or dead for everyone
 * (removed from the indexes), one bit a row says as much: the map is
 * replaced by a dead-row bitmap of one block (PAX_GROUP_DEAD_BITMAP), and
 * the first later delete, update or lock of the group's rows makes a full
 * map from it again.  Groups of more rows than a block has bits keep their
 * map.
 */
/*
 * The last bytes of a row map block's payload (its states leave them free)
 * say which map the block belongs to: the map's first block and the
 * block's index in it; a dead-row bitmap's, its own block and
 * PAX_MAP_STAMP_BITMAP.  A group's maps come and go under one tag (a
 * bitmap, a map again), so the tag alone cannot tell a hot-standby reader
 * holding an old directory copy that the block it expects was reused by
 * the group's later map; the stamp can.  All zero: a map written before
 * stamps (format 4), not checked (block 0 is the metapage, never a map).
 */
typedef struct PaxMapStamp
{
	BlockNumber map_first;
	uint32		index;
} PaxMapStamp;

#define PAX_MAP_STAMP_OFFSET	(PAX_BLOCK_PAYLOAD - sizeof(PaxMapStamp))
#define PAX_MAP_STAMP_BITMAP	0xFFFFFFFF
#define PAX_DEAD_BITMAP_ROWS	((uint32) (PAX_MAP_STAMP_OFFSET * 8))

/*
 * Blocks of a group's row map (a dead-row bitmap: one; states kept in a
 * delta page: none of its own).
 */
static inline uint32
pax_row_map_blocks(const PaxGroupEntry *g)
{
	if (PaxGroupHasPageStates(g))
		return 0;
	return PaxGroupHasDeadBitmap(g) ? 1 : PaxRowMapBlocks(g->nrows);
}

static inline uint64
pax_row_next(const PaxRowState *st)
{
	return ((uint64) st->next_hi << 32) | st->next_lo;
}

static inline void
pax_row_set_next(PaxRowState *st, uint64 rownum)
{
	st->next_hi = (uint16) (rownum >> 32);
	st->next_lo = (uint32) rownum;
}

#define PaxGroupEntrySize(ncols) \
	MAXALIGN(offsetof(PaxGroupEntry, cols) + (ncols) * sizeof(PaxColumnExtent))

/*
 * The widest table pax stores: a group's directory entry, one extent per
 * attribute (dropped ones too), must fit an empty directory page.  1013 with
 * 8 kB blocks; PostgreSQL allows 1600, so CREATE TABLE, ALTER TABLE ADD
 * COLUMN and table rewrites into pax check it (pax_check_column_count()).
 */
#define PAX_MAX_COLUMNS \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(PaxDirPageOpaque)) - \
			 offsetof(PaxGroupEntry, cols)) / sizeof(PaxColumnExtent)))

/* Directory pages: entries packed from the page contents; the special space links the chain. */
typedef struct PaxDirPageOpaque
{
	BlockNumber next;
	uint16		nentries;
	uint16		page_id;		/* PAX_DIR_PAGE_ID, to tell the page kinds apart */
} PaxDirPageOpaque;

#define PAX_DIR_PAGE_ID			0xFA5D
#define PaxDirPageGetOpaque(page) ((PaxDirPageOpaque *) PageGetSpecialPointer(page))

/* The directory of a relation as a scan sees it: entries sorted by row number. */
typedef struct PaxDirectory
{
	int			ngroups;
	int			natts;			/* the relation's attribute count when read */
	uint64		version;		/* the metapage's dir_version when read */
	int			format;			/* and its format version (format 5 and
								 * later: stride indexes) */
	PaxGroupEntry **groups;
	BlockNumber *dir_blocks;	/* where groups[i]'s entry is: page ... */
	uint16	   *dir_offsets;	/* ... and offset in it */
	MemoryContext cxt;
	/* the backend's cached copy (pax_current_directory()) only: */
	int			refcount;		/* pax_directory_acquire()s not yet released */
	bool		orphaned;		/* replaced in the cache: freed at refcount 0 */
} PaxDirectory;

/*
 * A decoded column of one group.  Its arrays and its copy of the minipage
 * (which by-reference values point into) are reused from group to group,
 * grown when a group needs more: a scan allocates them once, not per group.
 */
typedef struct PaxColumnData
{
	Datum	   *values;
	bool	   *isnull;
	uint32		capacity;		/* rows values/isnull can hold */
	char	   *buf;			/* the minipage, MAXALIGNed */
	Size		bufsize;
} PaxColumnData;

/* Row number <-> TID. */
static inline void
pax_rownum_to_tid(uint64 rownum, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (rownum / PAX_ROWS_PER_TID_BLOCK),
				   (OffsetNumber) (rownum % PAX_ROWS_PER_TID_BLOCK + 1));
}

static inline uint64
pax_tid_to_rownum(ItemPointer tid)
{
	return (uint64) ItemPointerGetBlockNumberNoCheck(tid) * PAX_ROWS_PER_TID_BLOCK +
		(ItemPointerGetOffsetNumberNoCheck(tid) - 1);
}

/* Bytes before a block's payload. */
#define PAX_PAYLOAD_START		MAXALIGN(SizeOfPageHeaderData)

typedef enum PaxModifyKind
{
	PAX_MODIFY_DELETE,
	PAX_MODIFY_MOVE,			/* delete: the row moves to another partition */
	PAX_MODIFY_UPDATE,
	PAX_MODIFY_LOCK
} PaxModifyKind;

/* flashscan.c */
extern int	pax_default_group_blocks;
extern int	pax_write_format;
extern double pax_vacuum_rewrite_fraction;

/* pax_metapage.c, pax_blocks.c, pax_directory.c, pax_visibility.c, pax_reader.c */
extern void pax_corrupted(Relation rel, BlockNumber blkno, const char *what) pg_attribute_noreturn();
extern BlockNumber pax_extend_blocks(Relation rel, int n, Buffer *bufs);
extern Buffer pax_pin_new_block(Relation rel, BlockNumber blkno);
extern Buffer pax_lock_metapage(Relation rel, int mode);
extern Buffer pax_lock_directory_page(Relation rel, BlockNumber blkno, int mode);
extern PaxGroupEntry *pax_next_directory_entry(Relation rel, BlockNumber blkno, Page page,
											   char **pos);
/* format: the version of the minipages the blocks will hold, 0 for none */
extern uint32 pax_allocate_blocks(Relation rel, uint32 n, Buffer *bufs, int format);
extern uint32 pax_allocate_run(Relation rel, uint32 n, int format, BlockNumber *start);
extern void pax_free_blocks(PaxMetaPageData *meta, BlockNumber start, uint32 nblocks);
extern BlockNumber pax_truncate_free_tail(Relation rel);
extern bool pax_reusable_space_below(Relation rel, BlockNumber below, uint32 n);
extern void pax_settle_free_space(Relation rel);
extern bool pax_recover_free_space(Relation rel);
extern void pax_relocate_directory(Relation rel);
extern void pax_write_blocks(Relation rel, Buffer *bufs, uint32 n, const char *stream,
							 Size stream_len, Size chunk, uint32 tag);
extern void pax_write_run(Relation rel, BlockNumber start, uint32 n, const char *stream,
						  Size stream_len, Size chunk, uint32 tag);
extern void pax_fill_block(Page page, const char *payload, Size used, uint32 tag);
/* How logical decoding sees a row of a group written (pax_decode.c) */
#define PAX_DECODE_NONE			0	/* not at all, or from a record of its own */
#define PAX_DECODE_INSERT		1	/* as an INSERT */
#define PAX_DECODE_UPDATE		2	/* as an UPDATE's new version (no old identity logged) */
extern void pax_write_group_blocks(Relation rel, PaxGroupEntry *entry, const char *stream,
								   int format, TupleDesc desc, const uint8 *decode_kinds);
extern PaxDirectory *pax_current_directory(Relation rel);
extern PaxDirectory *pax_directory_acquire(Relation rel);
extern void pax_directory_release(PaxDirectory *dir);
extern int	pax_find_group_index(PaxDirectory *dir, uint64 rownum);
extern uint64 pax_directory_end(PaxDirectory *dir);
extern uint64 pax_claim_chunk_rows(PaxDirectory *dir, uint64 min);
extern bool pax_claim_next_group(PaxDirectory *dir, pg_atomic_uint64 *counter,
								 uint64 chunk_rows, uint64 *start, uint64 *end, int *gi);
extern uint32 pax_claim_mask_rows(PaxGroupEntry *g, bool *visible, uint64 start, uint64 end);
extern int	pax_first_group_ending_after(PaxDirectory *dir, uint64 rownum);
extern void pax_check_horizon(PaxGroupEntry *g, Snapshot snapshot);
extern void pax_recovery_conflict(void) pg_attribute_noreturn();
extern void pax_check_block_tag(Relation rel, Page page, BlockNumber blkno, uint32 tag);
extern const uint8 *pax_read_presence(Relation rel, PaxGroupEntry *g, Buffer *pinned,
									  uint64 *blocks_read);
extern void pax_check_column_count(Relation rel, int natts);
extern void pax_init_storage(Relation rel, const RelFileNode *newrnode,
							 SMgrRelation srel, char persistence);
extern int	pax_relation_group_blocks(Relation rel);
extern void pax_relation_meta(Relation rel, int *group_blocks, int *format);
extern void pax_set_relation_group_blocks(Relation rel, int group_blocks);
extern void pax_truncate_in_place(Relation rel);
extern uint64 pax_reserve_rownums(Relation rel, uint32 count, uint64 held_end);
extern void pax_meta_counters(Relation rel, uint64 *next_rownum, uint64 *dir_version);
extern TransactionId pax_reservation_owner(Relation rel, uint64 rownum);
extern PaxDirectory *pax_read_directory(Relation rel, MemoryContext cxt);
extern PaxGroupEntry *pax_find_group(PaxDirectory *dir, uint64 rownum);
extern int	pax_search_groups(PaxGroupEntry **groups, int ngroups, uint64 key,
							  bool by_block);
extern void pax_append_group(Relation rel, PaxGroupEntry *entry, const char *stream, int format,
							 const PaxRowState *states, TupleDesc desc,
							 const uint8 *decode_kinds);
extern bool pax_group_visible(PaxGroupEntry *g, Snapshot snapshot);
extern bool pax_xmin_visible(TransactionId xmin, CommandId cmin, Snapshot snapshot);
extern void pax_add_directory_entry(Relation rel, Buffer metabuf, PaxGroupEntry *entry,
									BlockNumber delta_block);
extern uint32 pax_read_columns(Relation rel, PaxGroupEntry *g, TupleDesc desc,
							 const bool *needed, PaxColumnData *cols,
							 BufferAccessStrategy strategy, uint64 *blocks_read);
/*
 * A fetch's cache of minipage prefixes (pax_reader.c): the memory it may
 * take, its table included (pax_prefix_cache_bytes(): hash_mem, 8 MB by
 * default, the stride indexes of about 3,500 columns of 8,000-row groups),
 * and what one entry takes besides its bytes (its hash entry and the
 * copy's chunk header), which the planner counts too.
 */
extern Size pax_prefix_cache_bytes(void);
#define PAX_PREFIX_ENTRY_BYTES	96
typedef struct PaxPrefixCache PaxPrefixCache;
extern PaxPrefixCache *pax_prefix_cache_create(void);
extern void pax_read_row_run(Relation rel, PaxGroupEntry *g, TupleDesc desc,
							 const bool *needed, uint32 k, uint32 n, PaxColumnData *cols,
							 PaxPrefixCache *cache);
extern uint32 pax_stored_index(Relation rel, PaxGroupEntry *g, uint32 ri);
extern uint32 pax_needed_blocks(PaxGroupEntry *g, const bool *needed, int natts);
extern void pax_column_blocks(PaxGroupEntry *g, int att, BlockNumber *first, uint32 *n);
extern bool pax_block_read_elsewhere(RelFileNode rnode, BlockNumber blk);
extern int	pax_block_cmp(const void *pa, const void *pb);
extern uint32 pax_prefetch_columns(Relation rel, PaxGroupEntry *g, const bool *needed,
								   int natts);


/*
 * What an UPDATE or DELETE logs of the old row for logical decoding
 * (pax_logical_old() in pax_decode.c): its replica identity, as heap's
 * ExtractReplicaIdentity() chooses it.
 */
typedef struct PaxLogicalOld
{
	HeapTuple	tuple;			/* NULL: nothing of the old row is logged */
	bool		is_key;			/* it holds the identity key columns only */
} PaxLogicalOld;

/* pax_delta.c */
extern Size pax_delta_item_size(TupleDesc desc, Datum *values, bool *isnull);
extern bool pax_delta_insert(Relation rel, TupleDesc desc, Datum *values, bool *isnull,
							 CommandId cid, Size budget, bool decode_insert,
							 const PaxLogicalOld *update_old, uint64 *rownum,
							 Size *used, bool *decoded);
extern uint32 pax_delta_read_headers(Relation rel, PaxGroupEntry *g, PaxDeltaRowHeader *hdrs,
									 PaxRowState *states, BufferAccessStrategy strategy,
									 uint64 *blocks_read);
extern PaxRowState *pax_delta_state(Relation rel, Page page, BlockNumber blkno, uint32 i);
extern uint32 pax_delta_nrows(Relation rel, PaxGroupEntry *g);
extern void pax_delta_read_row(Relation rel, PaxGroupEntry *g, TupleDesc desc,
							   const bool *needed, uint32 ri, PaxColumnData *cols,
							   Datum *values, bool *isnull);
extern bool pax_delta_row_header(Relation rel, PaxGroupEntry *g, uint64 rownum,
								 PaxDeltaRowHeader *hdr);
extern uint32 pax_delta_read_columns(Relation rel, PaxGroupEntry *g, TupleDesc desc,
								   const bool *needed, PaxColumnData *cols,
								   BufferAccessStrategy strategy, uint64 *blocks_read);
extern bool pax_delta_seal(Relation rel, PaxGroupEntry *g, TransactionId oldest_xmin);

/* pax_vacuum.c */
extern void pax_vacuum_relation(Relation rel, TransactionId oldest_xmin,
								TransactionId freeze_limit, BufferAccessStrategy bstrategy,
								TransactionId *new_frozen_xid, double *live, double *dead,
								uint64 *groups_rewritten);

/* pax_rowstate.c */
extern bool pax_row_state_deleted(const PaxRowState *st, Snapshot snapshot);
extern void pax_row_state(Relation rel, PaxGroupEntry *g, uint64 rownum, PaxRowState *st);
extern void pax_read_dead_bitmap(Relation rel, PaxGroupEntry *g, uint8 *bits,
								 BufferAccessStrategy strategy, uint64 *blocks_read,
								 XLogRecPtr *lsn);
extern void pax_dead_row_state(PaxRowState *st);
extern void pax_write_row_map(Relation rel, BlockNumber map_first, const PaxRowState *states,
							  uint32 nrows, uint32 tag);
extern PaxRowState *pax_state_slot(Relation rel, const PaxGroupEntry *g, Page page,
									BlockNumber blkno, uint32 i);
extern void pax_check_map_stamp(Relation rel, Page page, BlockNumber blkno,
								BlockNumber map_first, uint32 index);
extern void pax_conflict_out(Relation rel, TransactionId xid, Snapshot snapshot);
extern bool pax_group_visible_to_reader(Relation rel, PaxGroupEntry *g, Snapshot snapshot);
extern uint32 pax_visible_rows(Relation rel, PaxGroupEntry *g, Snapshot snapshot,
							   bool *visible, BufferAccessStrategy strategy,
							   uint64 *blocks_read);
extern bool pax_row_visible(Relation rel, PaxGroupEntry *g, uint64 rownum,
							Snapshot snapshot, bool *all_dead);
extern void pax_rows_removable(Relation rel, PaxGroupEntry *g, int n, const uint64 *rownums,
							   const bool *known_dead, bool *removable,
							   TransactionId *latest_removed);
extern TransactionId pax_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate);
/*
 * Whether an update changes the row's key columns (those of unique indexes
 * a foreign key may reference): asked by the UPDATE when the row has FOR
 * KEY SHARE lockers it may pass, and by a FOR KEY SHARE locker that meets
 * an update in progress it may join; answered once (state: 0 unknown, 1
 * unchanged, 2 changed).
 */
typedef struct PaxKeyCheck
{
	bool		(*keys_unchanged) (struct PaxKeyCheck *kc);
	Relation	rel;
	ItemPointerData otid;
	TupleTableSlot *newslot;	/* the new values, or NULL: those of new_tid */
	ItemPointerData new_tid;
	int			state;
	bool		new_locked;		/* a locker: it locked new_tid already */
	int			own_lock_mode;	/* set by the update: the LockTupleMode of the
								 * lock we held on the row, or -1 */
} PaxKeyCheck;

extern TransactionId pax_row_updater(const PaxRowState *st);
extern void pax_carry_locks(Relation rel, uint64 old_rownum, uint64 new_rownum, int own_mode);
extern TM_Result pax_modify_row(Relation rel, uint64 *rownum, CommandId cid,
								Snapshot crosscheck, PaxModifyKind kind, LockTupleMode mode,
								PaxKeyCheck *keycheck,
								LockWaitPolicy wait_policy, bool lock_last_version,
								TM_FailureData *tmfd, const PaxLogicalOld *deleted);
extern void pax_kill_speculative_row(Relation rel, uint64 rownum);
extern void pax_set_speculative_token(Relation rel, uint64 rownum, uint32 token);
extern void pax_link_update(Relation rel, uint64 old_rownum, uint64 new_rownum);
extern uint64 pax_latest_version(Relation rel, uint64 rownum);

/* pax_slot.c */
extern const TupleTableSlotOps *pax_slot_ops_get(void);
extern void pax_slot_set_inserted(TupleTableSlot *slot, Relation rel, uint64 rownum,
								  TransactionId xmin, CommandId cmin);
extern void pax_slot_set_origin(TupleTableSlot *slot, Relation rel, PaxGroupEntry *g,
								uint64 rownum);

/* pax_writer.c */
typedef struct PaxCopyWriter PaxCopyWriter;
extern PaxCopyWriter *pax_copy_writer_begin(Relation rel, TransactionId horizon);
extern uint64 pax_copy_writer_add(PaxCopyWriter *w, TransactionId xmin, CommandId cmin,
								  bool frozen, const Datum *values, const bool *isnull,
								  const PaxRowState *state);
extern void pax_copy_writer_end(PaxCopyWriter *w);
extern void pax_writer_init(void);
/* pax_insert_row() options */
#define PAX_INSERT_SMALL		0x0001	/* a single-row path: the delta, within the
										 * transaction's delta budget */
#define PAX_INSERT_SHARED		0x0002	/* others must find the row at once (a
										 * speculative insertion): the delta whatever
										 * the budget */
#define PAX_INSERT_DECODE		0x0004	/* a plain INSERT: its record may decode it */
extern bool pax_insert_row(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
						   const PaxLogicalOld *update_old);
extern void pax_flush_relation(Relation rel);
extern void pax_flush_all_buffers(void);
extern void pax_flush_decodable_buffers(void);
extern void pax_flush_decoded_rows(Relation rel, CommandId cid);
extern void pax_flush_row(Relation rel, uint64 rownum);
extern bool pax_buffered_row(Relation rel, uint64 rownum, TupleTableSlot *slot,
							 CommandId *cid);
extern void pax_forget_relation(Oid relid);

/* pax_decode.c */
extern void pax_decode_init(void);
extern bool pax_logical_decoding_ready(void);
extern void pax_log_logical_insert(Relation rel, TupleTableSlot **slots, int nslots);
extern PaxLogicalOld *pax_logical_old(Relation rel, ItemPointer otid, TupleTableSlot *new);
extern void pax_free_logical_old(PaxLogicalOld *old);
extern void pax_log_logical_change(Relation rel, const PaxLogicalOld *old, TupleTableSlot *new);
extern bool pax_logical_delta(Relation rel);
extern OffsetNumber pax_log_delta_insert(Relation rel, Buffer buf, const char *item, Size itemsz,
										 bool decode_insert, const PaxLogicalOld *update_old);
extern void pax_log_row_state(Relation rel, Buffer buf, Size offset, const PaxRowState *st,
							  const PaxLogicalOld *deleted);
extern void pax_log_group_blocks(Relation rel, PaxGroupEntry *entry,
								 const char *stream, Size stream_len, TupleDesc desc,
								 const uint8 *decode_kinds);

/* pax_ddl.c */
extern void pax_ddl_init(void);
extern void pax_bitmap_init(void);

/* pax_handler.c */
extern const TableAmRoutine *pax_table_am_routine(void);
extern void pax_scan_set_columns(TableScanDesc sscan, const bool *needed);
extern void pax_scan_set_filter(TableScanDesc sscan, PaxFetchFilter *filter);
extern bool pax_fetch_selection_first(void);
extern bool pax_fetch_may_test(Node *clause);
extern bool pax_scan_needed_columns;
extern bool pax_fetch_filter_first;

/* pax_exec.c */
extern void pax_exec_init(void);

/* pax_slot.c: filling a pax slot */
extern void pax_store_virtual_row(TupleTableSlot *slot, PaxGroupEntry *g, uint32 ri,
								  Relation rel);
extern void pax_store_row_at(TupleTableSlot *slot, TupleDesc desc, PaxColumnData *cols,
							 const bool *needed, uint32 idx, PaxGroupEntry *g, uint32 ri,
							 Relation rel);
extern void pax_store_row(TupleTableSlot *slot, TupleDesc desc, PaxColumnData *cols,
						  const bool *needed, PaxGroupEntry *g, uint32 ri, Relation rel);
extern bool *pax_all_columns(TupleDesc desc);

/* pax_fetch.c: rows by TID */
/*
 * Selection first for the row fetches of one scan node (pax_exec.c builds
 * it from the node's qual): stage i reads cols[i] (the columns its clauses
 * use) and drops the row when quals[i] fails; the node's other columns are
 * read only for rows that pass every stage.
 */
struct PaxFetchFilter
{
	int			nstages;
	bool	  **cols;
	struct ExprState **quals;
	struct ExprContext *econtext;	/* its own, in the node's EState */
	struct PlanState *ps;		/* the node: its EXPLAIN counters */
	Relation	counted;		/* whose fetch count a dropped row adds to:
								 * the index (an index scan's), the table (a
								 * bitmap scan's), as when it was returned */
};

typedef struct PaxFetch
{
	IndexFetchTableData base;	/* first: the index AM's fetch is one */
	PaxDirectory *dir;
	bool		dir_cached;		/* dir is the backend's cached copy, acquired */
	MemoryContextCallback dir_release;	/* releases it when cxt goes */
	PaxGroupEntry *cur;			/* group whose needed columns cols hold, decoded */
	PaxGroupEntry *last;		/* group of the previous fetch */
	uint32		run;			/* fetches in a row in last */
	uint32		decode_after;	/* run that makes last worth decoding */
	PaxColumnData *cols;
	bool	   *needed;
	MemoryContext cxt;
	/* what it did, for EXPLAIN ANALYZE of FlashJoin's fetch kernel */
	uint64		rows_fetched;
	uint64		groups_decoded;	/* whole-group decodes of the needed columns */
	uint64		blocks_read;	/* blocks those decodes read */
	uint32		cur_rows;		/* rows of cur decoded (a delta page grows) */
	bool		read_ahead;		/* fetches come in row order over most groups:
								 * prefetch a group's needed minipages and the
								 * next group's on first touch */
	PaxGroupEntry *prefetched;	/* last group prefetched that way */
	PaxGroupEntry *window;		/* group whose stored rows [window_first, +
								 * window_rows) cols hold (read_window()) */
	uint32		window_first;
	uint32		window_rows;
	uint32		window_size;
	PaxPrefixCache *prefixes;	/* minipage prefixes windows were read with */
	uint32		windows_read;	/* until prefixes exists */
	bool	   *loaded;			/* columns cols hold for the window's rows */
	bool	   *to_read;		/* scratch: columns a window read adds */
	PaxFetchFilter *filter;		/* selection first, or NULL */
	bool		filter_off;		/* it let nearly every row through: stopped */
	bool		filter_paused;	/* a bitmap page whose rows the node rechecks */
	bool		filtered;		/* the last fetch's row was visible, dropped by it */
	uint64		filter_tested;
	uint64		filter_passed;
} PaxFetch;

extern IndexFetchTableData *pax_index_fetch_begin(Relation rel);
extern void pax_index_fetch_reset(IndexFetchTableData *scan);
extern void pax_index_fetch_end(IndexFetchTableData *scan);
extern bool pax_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid,
								  Snapshot snapshot, TupleTableSlot *slot,
								  bool *call_again, bool *all_dead);
extern PaxFetch *pax_fetch_begin(Relation rel, const bool *needed);
extern void pax_fetch_end(PaxFetch *f);
extern void pax_fetch_set_columns(PaxFetch *f, const bool *needed);
extern void pax_fetch_set_filter(PaxFetch *f, PaxFetchFilter *filter);
extern bool pax_fetch_row(PaxFetch *f, ItemPointer tid, Snapshot snapshot,
						  TupleTableSlot *slot, bool *all_dead);
extern bool pax_fetch_unwritten_row(PaxFetch *f, ItemPointer tid, Snapshot snapshot,
									TupleTableSlot *slot);
extern bool pax_fetch_row_columns(Relation rel, ItemPointer tid, Snapshot snapshot,
								  TupleTableSlot *slot, const Bitmapset *attrs);

#endif							/* PAX_H */
