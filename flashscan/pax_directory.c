/*-------------------------------------------------------------------------
 *
 * pax_directory.c
 *	  The group directory of a pax relation: appending entries, reading the
 *	  directory, the backend's cached copy, finding a row's group.
 *
 * The directory is a chain of pages of group entries, appended in row
 * order under the metapage's exclusive lock, each append one WAL record
 * with the metapage.  Readers take a copy sorted by row number; the
 * metapage's dir_version tells a cached copy whether it is current.  An
 * entry's size grows with the column count, which is why a table may have
 * at most PAX_MAX_COLUMNS columns (pax_metapage.c).
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

/* Pin and lock a directory page, checking that it is one. */
Buffer
pax_lock_directory_page(Relation rel, BlockNumber blkno, int mode)
{
	Buffer		buf = ReadBuffer(rel, blkno);
	Page		page;

	LockBuffer(buf, mode);
	page = BufferGetPage(buf);
	if (PageIsNew(page) || PaxDirPageGetOpaque(page)->page_id != PAX_DIR_PAGE_ID)
		pax_corrupted(rel, blkno, "pax directory page");
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
		pax_corrupted(rel, blkno, "pax directory page");
	*pos += PaxGroupEntrySize(g->ncols);
	return g;
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
			pax_extend_blocks(rel, 1, &newbuf);
			LockBuffer(newbuf, BUFFER_LOCK_EXCLUSIVE);
		}
	}
	else
	{
		pax_extend_blocks(rel, 1, &newbuf);
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
 * Rewrite the directory chain, without the entries of emptied groups, into
 * the lowest free blocks, when that brings it lower.  Directory pages are
 * made at the end of the file as the table grows, and they never move
 * otherwise, so they stop the truncation of a tail VACUUM emptied.  The
 * caller holds the relation's AccessExclusiveLock: no backend reads the
 * directory meanwhile (a cached copy is checked against dir_version, which
 * changes here), and a standby has cancelled its queries on the relation
 * before it replays us.  The new pages are logged before the metapage
 * points to them: a crash in between leaves them unreferenced, never a
 * chain half moved.
 */
void
pax_relocate_directory(Relation rel)
{
	Buffer		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
	PaxMetaPageData *meta = PaxPageGetMeta(BufferGetPage(metabuf));
	BlockNumber blkno = meta->dir_first;
	BlockNumber highest = 0;
	BlockNumber lowest_free = InvalidBlockNumber;
	int			nold = 0,
				nnew = 0,
				i;
	BlockNumber *old = palloc(sizeof(BlockNumber) * 16);
	int			oldcap = 16;
	char	   *entries;
	Size		len = 0,
				cap = BLCKSZ;
	Size		room = BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(PaxDirPageOpaque));
	Size		used;
	BlockNumber first,
				last = InvalidBlockNumber;
	GenericXLogState *state;

	for (i = 0; i < (int) meta->nfree; i++)
		if (lowest_free == InvalidBlockNumber || meta->free[i].start < lowest_free)
			lowest_free = meta->free[i].start;
	UnlockReleaseBuffer(metabuf);
	if (lowest_free == InvalidBlockNumber)
		return;

	/* the live entries, in chain order, and how many pages they fill */
	entries = palloc(cap);
	used = room;
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = pax_lock_directory_page(rel, blkno, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buf);
		char	   *p = PageGetContents(page);

		if (nold == oldcap)
		{
			oldcap *= 2;
			old = repalloc(old, sizeof(BlockNumber) * oldcap);
		}
		old[nold++] = blkno;
		highest = Max(highest, blkno);
		for (i = 0; i < PaxDirPageGetOpaque(page)->nentries; i++)
		{
			PaxGroupEntry *g = pax_next_directory_entry(rel, blkno, page, &p);
			Size		sz = PaxGroupEntrySize(g->ncols);

			if (g->flags & PAX_GROUP_EMPTY)
				continue;
			if (used + sz > room)
			{
				nnew++;
				used = 0;
			}
			used += sz;
			if (len + sz > cap)
			{
				cap *= 2;
				entries = repalloc(entries, cap);
			}
			memcpy(entries + len, g, sz);
			len += sz;
		}
		blkno = PaxDirPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
	/* nothing to gain: the chain lies below every free block already */
	if (nold == 0 || nnew == 0 || highest < lowest_free)
		return;

	/*
	 * Only into listed blocks below the chain's highest page: were the
	 * list short of them, the rest would extend the file it is to shrink.
	 */
	{
		BlockNumber below = 0;

		metabuf = pax_lock_metapage(rel, BUFFER_LOCK_SHARE);
		meta = PaxPageGetMeta(BufferGetPage(metabuf));
		for (i = 0; i < (int) meta->nfree; i++)
			if (meta->free[i].start < highest)
				below += Min(meta->free[i].nblocks, highest - meta->free[i].start);
		UnlockReleaseBuffer(metabuf);
		if (below < (BlockNumber) nnew)
			return;
	}

	/*
	 * The new chain, page by page, each linked to the next: a page is
	 * allocated before the one that points to it is written, so that at
	 * most two are pinned (a long directory in a small buffer pool).
	 */
	{
		Size		pos = 0;
		Buffer		cur,
					next = InvalidBuffer;

		(void) pax_allocate_blocks(rel, 1, &cur, 0);
		first = BufferGetBlockNumber(cur);
		for (i = 0; i < nnew; i++)
		{
			Page		page;
			PaxDirPageOpaque *op;

			if (i + 1 < nnew)
				(void) pax_allocate_blocks(rel, 1, &next, 0);
			LockBuffer(cur, BUFFER_LOCK_EXCLUSIVE);
			state = GenericXLogStart(rel);
			page = GenericXLogRegisterBuffer(state, cur, GENERIC_XLOG_FULL_IMAGE);
			PageInit(page, BLCKSZ, sizeof(PaxDirPageOpaque));
			op = PaxDirPageGetOpaque(page);
			op->next = (i + 1 < nnew) ? BufferGetBlockNumber(next) : InvalidBlockNumber;
			op->nentries = 0;
			op->page_id = PAX_DIR_PAGE_ID;
			while (pos < len)
			{
				PaxGroupEntry *g = (PaxGroupEntry *) (entries + pos);
				Size		sz = PaxGroupEntrySize(g->ncols);

				if (((PageHeader) page)->pd_upper - ((PageHeader) page)->pd_lower < sz)
					break;
				memcpy((char *) page + ((PageHeader) page)->pd_lower, g, sz);
				((PageHeader) page)->pd_lower += sz;
				op->nentries++;
				pos += sz;
			}
			GenericXLogFinish(state);
			last = BufferGetBlockNumber(cur);
			UnlockReleaseBuffer(cur);
			cur = next;
		}
		if (pos != len)
			elog(ERROR, "pax directory of \"%s\" did not fit the pages counted for it",
				 RelationGetRelationName(rel));
	}

	/* the metapage switches to it and frees the old pages, in one record */
	metabuf = pax_lock_metapage(rel, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(rel);
	meta = PaxPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	meta->dir_first = first;
	meta->dir_last = last;
	for (i = 0; i < nold; i++)
		pax_free_blocks(meta, old[i], 1);
	meta->dir_version++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	pfree(entries);
	pfree(old);
}

/*
 * Write a sealed group: its blocks (minipages of format version format),
 * its row map if states is not NULL (one state per row, tagged like the
 * group's blocks), then its entry.
 * desc (the rows' descriptor) and decode_kinds: see pax_write_group_blocks().
 */
void
pax_append_group(Relation rel, PaxGroupEntry *entry, const char *stream, int format,
				 const PaxRowState *states, TupleDesc desc, const uint8 *decode_kinds)
{
	Buffer		metabuf;

	pax_write_group_blocks(rel, entry, stream, format, desc, decode_kinds);
	if (states)
	{
		uint32		n = PaxRowMapBlocks(entry->nrows);

		(void) pax_allocate_run(rel, n, 0, &entry->row_map);
		pax_write_row_map(rel, entry->row_map, states, entry->nrows, entry->tag);
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
	dir->format = PaxPageGetMeta(BufferGetPage(buf))->version;
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
	{
		/* a copy someone still reads goes when they release it */
		if (e->dir->refcount > 0)
			e->dir->orphaned = true;
		else
			MemoryContextDelete(e->dir->cxt);
	}
	e->dir = NULL;
	e->node = rel->rd_node;
	e->dir = pax_read_directory(rel, AllocSetContextCreate(CacheMemoryContext, "pax directory",
														   ALLOCSET_SMALL_SIZES));
	return e->dir;
}

/*
 * The backend's cached directory (pax_current_directory()), kept for the
 * caller until pax_directory_release(): a later call that finds the
 * directory changed replaces the cached copy but leaves this one alone.
 * An index scan thus reads the directory once per change of it, not once
 * per scan (a point query's scan read and sorted it every time).
 */
PaxDirectory *
pax_directory_acquire(Relation rel)
{
	PaxDirectory *dir = pax_current_directory(rel);

	dir->refcount++;
	return dir;
}

void
pax_directory_release(PaxDirectory *dir)
{
	Assert(dir->refcount > 0);
	if (--dir->refcount == 0 && dir->orphaned)
		MemoryContextDelete(dir->cxt);
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

/* ------------------------------------------------------------------------
 * Parallel scans: row numbers claimed in chunks
 * ------------------------------------------------------------------------
 *
 * The participants of a parallel scan (pax's Parallel Seq Scan, Parallel
 * FlashScan) claim row numbers in chunks from a shared counter.  Each row
 * number is claimed by exactly one participant, which reads the groups
 * holding its chunk's rows and keeps only those.  Participants read the
 * directory at different moments, and a VACUUM in between may have merged
 * groups: row numbers survive that, group bounds do not, so handing out
 * whole groups by their first row number would lose or repeat rows.
 */

/* Row numbers a chunk should span: about eight groups' worth, at least min. */
uint64
pax_claim_chunk_rows(PaxDirectory *dir, uint64 min)
{
	uint64		end = pax_directory_end(dir);

	return Max(min, 8 * (end / (uint64) Max(dir->ngroups, 1)));
}

/* The row number after the directory's last group (0 when it has none). */
uint64
pax_directory_end(PaxDirectory *dir)
{
	PaxGroupEntry *last;

	if (dir->ngroups == 0)
		return 0;
	last = dir->groups[dir->ngroups - 1];
	return last->first_rownum + last->nrows;
}

/*
 * The next group to read after group *gi (-1: none yet) within this
 * participant's claim [*start, *end), claiming chunks of chunk_rows from
 * counter as needed; false when the claims have passed the directory's end.
 */
bool
pax_claim_next_group(PaxDirectory *dir, pg_atomic_uint64 *counter, uint64 chunk_rows,
					 uint64 *start, uint64 *end, int *gi)
{
	uint64		dir_end = pax_directory_end(dir);

	for (;;)
	{
		if (*end > *start && *gi + 1 < dir->ngroups &&
			dir->groups[*gi + 1]->first_rownum < *end)
		{
			(*gi)++;
			return true;
		}
		*start = pg_atomic_fetch_add_u64(counter, chunk_rows);
		*end = *start + chunk_rows;
		if (*start >= dir_end)
		{
			*gi = dir->ngroups;
			return false;
		}
		*gi = pax_first_group_ending_after(dir, *start) - 1;
		/* a chunk without a group: the loop claims the next */
	}
}

/* The index of the first group ending after rownum (ngroups if none). */
int
pax_first_group_ending_after(PaxDirectory *dir, uint64 rownum)
{
	int			lo = 0,
				hi = dir->ngroups;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		PaxGroupEntry *g = dir->groups[mid];

		if (g->first_rownum + g->nrows <= rownum)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Rows of g outside the claim [start, end) made invisible; the visible rest. */
uint32
pax_claim_mask_rows(PaxGroupEntry *g, bool *visible, uint64 start, uint64 end)
{
	uint32		ri,
				n = 0;

	for (ri = 0; ri < g->nrows; ri++)
	{
		uint64		rownum = g->first_rownum + ri;

		if (rownum < start || rownum >= end)
			visible[ri] = false;
		n += visible[ri];
	}
	return n;
}
