/*-------------------------------------------------------------------------
 *
 * pax_reader.c
 *	  Reading rows of pax groups: the needed columns' minipages of a group,
 *	  one row of a group, prefetching, a sparse group's presence bitmap.
 *
 * Scans (the access method's, FlashScan, ANALYZE, VACUUM's rewrites) and
 * single-row fetches (index scans, DML's re-reads, triggers) read rows
 * here, for groups and delta pages alike (the delta page's decoding is
 * pax_delta.c's): only the blocks holding the needed minipages are read,
 * each minipage is checked against its directory entry, and by-reference
 * values point into a copy the caller's PaxColumnData keeps.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/pg_class.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
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
#include "ssdkit_cache.h"

#define PAYLOAD_START	PAX_PAYLOAD_START

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
 * Blocks holding column att of g: [*first, *first + *n); a delta page is one
 * block for every column.  The shared scans' pusher reads by these.
 */
void
pax_column_blocks(PaxGroupEntry *g, int att, BlockNumber *first, uint32 *n)
{
	if (PaxGroupIsDelta(g) || att >= g->ncols)
	{
		*first = g->first_block;
		*n = PaxGroupIsDelta(g) ? 1 : 0;
		return;
	}
	minipage_blocks(g, &g->cols[att], first, n);
}

/* Blocks of a group's needed minipages (a block two share counts twice). */
uint32
pax_needed_blocks(PaxGroupEntry *g, const bool *needed, int natts)
{
	uint32		n = 0;
	int			att;

	for (att = 0; att < Min(natts, g->ncols); att++)
	{
		BlockNumber first;
		uint32		nblocks;

		if (!needed[att])
			continue;
		minipage_blocks(g, &g->cols[att], &first, &nblocks);
		n += nblocks;
	}
	return n;
}

/*
 * Will a read of block blk of rnode's main fork reach the data file?  Not
 * if the block is in shared_buffers, nor if ssd_cache holds it (its read
 * hook serves it from the SSD).  Asking the disk for such a block ahead
 * would only spend the disk's time.
 */
bool
pax_block_read_elsewhere(RelFileNode rnode, BlockNumber blk)
{
	SsdkitCacheApi *cache = ssdkit_cache_api();
	BufferTag	tag;
	uint32		hash;
	int			buf_id;

	INIT_BUFFERTAG(tag, rnode, MAIN_FORKNUM, blk);
	hash = BufTableHashCode(&tag);
	LWLockAcquire(BufMappingPartitionLock(hash), LW_SHARED);
	buf_id = BufTableLookup(&tag, hash);
	LWLockRelease(BufMappingPartitionLock(hash));
	if (buf_id >= 0)
		return true;
	return cache != NULL && cache->version >= 1 && cache->contains(&tag);
}

/* qsort comparator of BlockNumbers. */
int
pax_block_cmp(const void *pa, const void *pb)
{
	BlockNumber a = *(const BlockNumber *) pa,
				b = *(const BlockNumber *) pb;

	return (a > b) - (a < b);
}

/*
 * Ask the kernel for blocks [first, first + n) of rel, all in one segment,
 * with one posix_fadvise: it reads them in requests as large as the run,
 * where a posix_fadvise per block (PrefetchBuffer) makes 8 kB requests,
 * which a disk bound by its I/O operations serves at a few MB/s.
 */
static void
prefetch_run(Relation rel, BlockNumber first, uint32 n)
{
#ifdef USE_POSIX_FADVISE
	BlockNumber seg = first / RELSEG_SIZE;
	char	   *path = relpath(RelationGetSmgr(rel)->smgr_rnode, MAIN_FORKNUM);
	char	   *segpath = seg == 0 ? path : psprintf("%s.%u", path, seg);
	int			fd;

	fd = OpenTransientFile(segpath, O_RDONLY | PG_BINARY);
	if (fd >= 0)
	{
		(void) posix_fadvise(fd, (off_t) (first % RELSEG_SIZE) * BLCKSZ,
							 (off_t) n * BLCKSZ, POSIX_FADV_WILLNEED);
		CloseTransientFile(fd);
	}
	if (segpath != path)
		pfree(segpath);
	pfree(path);
#else
	uint32		i;

	for (i = 0; i < n; i++)
		(void) PrefetchBuffer(rel, MAIN_FORKNUM, first + i);
#endif
}

/*
 * Ask for the blocks of a group's needed minipages to be read ahead, so
 * the device has them in flight while the caller works; returns how many
 * (0 when the columns cover the whole group: see below).  Blocks in
 * shared_buffers or in ssd_cache are skipped; runs of consecutive blocks
 * go out as one request each.
 */
uint32
pax_prefetch_columns(Relation rel, PaxGroupEntry *g, const bool *needed, int natts)
{
	BlockNumber *blocks;
	uint32		total = 0,
				n = 0,
				count = 0,
				k;
	int			att;

	/*
	 * Reading the whole group is sequential, and the kernel's readahead
	 * serves it better than a posix_fadvise per block.  Anything less is
	 * prefetched: left to readahead, a read of most columns would pull in
	 * the others too (measured: 8 of 16 columns read the whole table).
	 */
	if (PaxGroupIsDelta(g))
	{
		(void) PrefetchBuffer(rel, MAIN_FORKNUM, g->first_block);
		return 1;
	}
	total = pax_needed_blocks(g, needed, natts);
	if (total >= g->nblocks || total == 0)
		return 0;

	blocks = palloc(sizeof(BlockNumber) * total);
	for (att = 0; att < Min(natts, g->ncols); att++)
	{
		BlockNumber first;
		uint32		nblocks,
					i;

		if (!needed[att])
			continue;
		minipage_blocks(g, &g->cols[att], &first, &nblocks);
		for (i = 0; i < nblocks; i++)
			blocks[n++] = first + i;
	}
	qsort(blocks, n, sizeof(BlockNumber), pax_block_cmp);

	for (k = 0; k < n;)
	{
		BlockNumber start = blocks[k];
		uint32		len = 1;

		/* temporary tables' blocks live in local buffers: PrefetchBuffer knows */
		if (RelationUsesLocalBuffers(rel))
		{
			if (k == 0 || blocks[k - 1] != start)
			{
				(void) PrefetchBuffer(rel, MAIN_FORKNUM, start);
				count++;
			}
			k++;
			continue;
		}
		if (pax_block_read_elsewhere(rel->rd_node, start))
		{
			while (k < n && blocks[k] == start)
				k++;
			continue;
		}
		/* the run: consecutive blocks (a block two minipages share once) */
		while (k + 1 < n && (blocks[k + 1] == start + len - 1 || blocks[k + 1] == start + len))
		{
			if (blocks[k + 1] == start + len)
			{
				if ((start + len) / RELSEG_SIZE != start / RELSEG_SIZE ||
					pax_block_read_elsewhere(rel->rd_node, start + len))
					break;
				len++;
			}
			k++;
		}
		k++;
		if (len == 1)
			(void) PrefetchBuffer(rel, MAIN_FORKNUM, start);
		else
			prefetch_run(rel, start, len);
		count += len;
	}
	pfree(blocks);
	return count;
}

/* col's buffer, grown to hold at least nbytes (MAXALIGNed, as palloc gives). */
static char *
column_buffer(PaxColumnData *col, Size nbytes)
{
	if (col->bufsize < MAXALIGN(Max(nbytes, 1)))
	{
		if (col->buf)
			pfree(col->buf);
		col->bufsize = MAXALIGN(Max(nbytes, 1));
		col->buf = palloc(col->bufsize);
	}
	return col->buf;
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
		pax_corrupted(rel, g->first_block, "pax group (a minipage runs past its blocks)");
	buf = column_buffer(col, ext->nbytes);
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
			pax_corrupted(rel, blkno, "pax group block");
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
 * long as cols), counting the blocks read into *blocks_read.  Columns added
 * after the group was written read as their default (attmissingval) or
 * NULL; dropped columns as NULL.  Returns the rows decoded: a delta page's
 * may be fewer than its group's span, and grow later.
 */
uint32
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
		return pax_delta_read_columns(rel, g, desc, needed, cols, strategy, blocks_read);
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
	return g->nrows;
}

/*
 * Where read_stored_rows() reads a minipage's parts from.  The block pinned
 * stays share-locked while consecutive parts lie in it (a row's header,
 * null bits and value, or index entry and stride, usually share a block):
 * one lock and one tag check per block instead of per part.  Group blocks
 * never change while a directory entry names them, and only one block is
 * locked at a time.
 */
typedef struct MinipageSource
{
	Relation	rel;
	PaxGroupEntry *g;
	PaxColumnExtent *ext;
	Buffer		pinned;
	bool		locked;			/* pinned is share-locked by us */
	PaxColumnData *col;
	const char *prefix;			/* the minipage's first prefix_len bytes, kept */
	Size		prefix_len;
} MinipageSource;

/*
 * A fetch's copies of minipage prefixes (pax_minipage_prefix_bytes(): the
 * header, null bits and stride index that say where a row's value lies).
 * Without them, a row fetched from a group reads two blocks a column (the
 * prefix's, then the value's), where heap reads one page for the whole
 * row; an index probe that comes back to a group the fetch has met reads
 * the value's block alone.  A group met once is only remembered: its
 * prefixes are copied when the fetch comes back, since a whole prefix may
 * span more blocks than one row's parts of it (the stride index of a group
 * of 50,000 rows takes 12 kB), which a fetch that never returns would pay
 * for nothing.  The key is the group's first block and tag: a group's
 * minipages never change while that pair names it (a rewrite makes a new
 * group with a new tag; delta pages are not read here).
 */
typedef struct PrefixKey
{
	BlockNumber first_block;
	uint32		tag;
	int32		att;
} PrefixKey;

typedef struct PrefixEntry
{
	PrefixKey	key;
	bool		keep;			/* copy it on the next meeting */
	Size		len;
	char	   *data;			/* NULL: not copied (yet, or ever) */
} PrefixEntry;

struct PaxPrefixCache
{
	MemoryContext cxt;			/* the table */
	MemoryContext copies;		/* the prefixes, a child of cxt */
	HTAB	   *hash;
	bool		full;			/* it has refused a newcomer */
	uint64		hits;			/* prefixes served since it filled */
	uint64		refused;		/* newcomers refused since it filled */
	long		held;			/* entries when it filled */
};

/* A longer prefix (the null bits of a group of a million rows) is not kept. */
#define PAX_PREFIX_MAX_BYTES	(64 * 1024)

/*
 * The memory a fetch's prefix cache may take: hash_mem (work_mem times
 * hash_mem_multiplier), the memory a hash table of the query may take.
 * The planner counts the share of groups it holds by the same figure.
 */
Size
pax_prefix_cache_bytes(void)
{
	return get_hash_memory_limit();
}

/*
 * The table and the copies' context, empty.  The copies go to a generation
 * context: they are never freed one by one, and an allocation set would
 * round each up to a power of two (a 2,080-byte stride index of an
 * 8,288-row group would take 4 kB, half the cache).
 */
static void
prefix_cache_reset(PaxPrefixCache *cache)
{
	HASHCTL		ctl;

	MemoryContextReset(cache->cxt);	/* the copies' context too */
	cache->copies = GenerationContextCreate(cache->cxt, "pax minipage prefix copies",
											0, 8 * 1024, 64 * 1024);
	ctl.keysize = sizeof(PrefixKey);
	ctl.entrysize = sizeof(PrefixEntry);
	ctl.hcxt = cache->cxt;
	cache->hash = hash_create("pax minipage prefixes", 256, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	cache->full = false;
	cache->hits = cache->refused = 0;
	cache->held = 0;
}

/*
 * Is there room for bytes more?  A full cache keeps what it holds and takes
 * nothing new while what it holds is met again: fetches at random over more
 * groups than it holds then find a fixed share of their prefixes (the share
 * the planner counts), where starting again would copy prefixes that the
 * next start throws away.  Once it has refused more newcomers than it has
 * served since it filled (and a quarter as many as it holds), the fetch
 * has moved on, as probes in the table's order do: it starts again.
 */
static bool
prefix_cache_room(PaxPrefixCache *cache, Size bytes)
{
	if (MemoryContextMemAllocated(cache->cxt, true) + bytes <= pax_prefix_cache_bytes())
		return true;
	if (!cache->full)
	{
		cache->full = true;
		cache->held = hash_get_num_entries(cache->hash);
	}
	cache->refused++;
	/* (a cache too small to hold anything stays empty: no start again) */
	if (cache->held > 0 && cache->refused > cache->hits &&
		cache->refused >= Max(cache->held / 4, 1))
	{
		prefix_cache_reset(cache);
		return MemoryContextMemAllocated(cache->cxt, true) + bytes <= pax_prefix_cache_bytes();
	}
	return false;
}

/* An empty prefix cache in the current memory context. */
PaxPrefixCache *
pax_prefix_cache_create(void)
{
	PaxPrefixCache *cache = palloc0(sizeof(PaxPrefixCache));

	cache->cxt = AllocSetContextCreate(CurrentMemoryContext, "pax minipage prefixes",
									   ALLOCSET_DEFAULT_SIZES);
	prefix_cache_reset(cache);
	return cache;
}

static void
unlock_source(MinipageSource *src)
{
	if (src->locked)
		LockBuffer(src->pinned, BUFFER_LOCK_UNLOCK);
	src->locked = false;
}

/* PaxMinipageReadFn over a group's blocks: copy a part of one minipage. */
static const char *
read_minipage_part(void *arg, Size offset, Size nbytes)
{
	MinipageSource *src = (MinipageSource *) arg;
	Size		off = (Size) src->ext->offset + offset;
	PaxColumnExtent part;

	if (offset + nbytes > src->ext->nbytes)
		pax_corrupted(src->rel, src->g->first_block, "pax group (a minipage part lies past its end)");
	if (src->prefix != NULL && offset + nbytes <= src->prefix_len)
	{
		/* a copy, as the other parts: MAXALIGNed, ours to keep until the next read */
		return memcpy(column_buffer(src->col, nbytes), src->prefix + offset, nbytes);
	}
	if (nbytes > 0 && off / PAX_BLOCK_PAYLOAD == (off + nbytes - 1) / PAX_BLOCK_PAYLOAD &&
		off + nbytes <= (Size) src->g->nblocks * PAX_BLOCK_PAYLOAD)
	{
		BlockNumber blkno = src->g->first_block + (BlockNumber) (off / PAX_BLOCK_PAYLOAD);
		Size		inblk = off % PAX_BLOCK_PAYLOAD;
		Page		page;

		if (!BufferIsValid(src->pinned) || BufferGetBlockNumber(src->pinned) != blkno)
		{
			unlock_source(src);
			if (BufferIsValid(src->pinned))
				ReleaseBuffer(src->pinned);
			src->pinned = ReadBuffer(src->rel, blkno);
			LockBuffer(src->pinned, BUFFER_LOCK_SHARE);
			src->locked = true;
			pax_check_block_tag(src->rel, BufferGetPage(src->pinned), blkno, src->g->tag);
		}
		else if (!src->locked)
		{
			LockBuffer(src->pinned, BUFFER_LOCK_SHARE);
			src->locked = true;
			pax_check_block_tag(src->rel, BufferGetPage(src->pinned), blkno, src->g->tag);
		}
		page = BufferGetPage(src->pinned);
		if (((PageHeader) page)->pd_lower < PAYLOAD_START + inblk + nbytes)
			pax_corrupted(src->rel, blkno, "pax group block");
		return memcpy(column_buffer(src->col, nbytes), (char *) page + PAYLOAD_START + inblk,
					  nbytes);
	}
	/* across blocks: read_minipage() locks block by block itself */
	unlock_source(src);
	part.offset = (uint32) off;
	part.nbytes = (uint32) nbytes;
	return read_minipage(src->rel, src->g, &part, NULL, &src->pinned, NULL, src->col);
}

/*
 * Where row ri of group g's span (which must be stored) has its values in
 * g's minipages: for a sparse group, its place among the rows the group
 * stores, from the presence bitmap.
 */
uint32
pax_stored_index(Relation rel, PaxGroupEntry *g, uint32 ri)
{
	Buffer		pinned = InvalidBuffer;
	const uint8 *present;
	uint32		k;

	if (!PaxGroupIsSparse(g))
		return ri;
	present = pax_read_presence(rel, g, &pinned, NULL);
	k = (uint32) pg_popcount((const char *) present, ri / 8) +
		pg_popcount32(present[ri / 8] & ((1u << (ri % 8)) - 1));
	if (BufferIsValid(pinned))
		ReleaseBuffer(pinned);
	return k;
}

/*
 * Point src (at column att of its group) at the column's minipage prefix
 * if the cache has it; remember a group met for the first time, and copy
 * the prefix of one met before.
 */
static void
use_prefix(MinipageSource *src, PaxPrefixCache *cache, Form_pg_attribute a, int att)
{
	PrefixKey	key;
	PrefixEntry *e;
	bool		found;
	Size		len;

	memset(&key, 0, sizeof(key));
	key.first_block = src->g->first_block;
	key.tag = src->g->tag;
	key.att = att;
	e = hash_search(cache->hash, &key, HASH_FIND, NULL);
	if (e == NULL)
	{
		if (!prefix_cache_room(cache, PAX_PREFIX_ENTRY_BYTES))
			return;
		e = hash_search(cache->hash, &key, HASH_ENTER, &found);
		e->keep = true;
		e->len = 0;
		e->data = NULL;
		return;
	}
	if (e->data == NULL && e->keep)
	{
		len = pax_minipage_prefix_bytes(a, src->g->nstored, src->ext->nbytes,
										read_minipage_part(src, 0, PAX_MINIPAGE_HEADER_BYTES),
										src->rel);
		e->keep = false;
		if (len == 0 || len > PAX_PREFIX_MAX_BYTES || !prefix_cache_room(cache, len))
			return;				/* read as without a cache from now on */
		/* (the room may have been made by starting again, without e) */
		e = hash_search(cache->hash, &key, HASH_ENTER, &found);
		e->keep = false;
		e->data = MemoryContextAlloc(cache->copies, len);
		memcpy(e->data, read_minipage_part(src, 0, len), len);
		e->len = len;
	}
	else if (e->data != NULL)
		cache->hits++;
	if (e->data == NULL)
		return;
	src->prefix = e->data;
	src->prefix_len = e->len;
}

/*
 * Decode the stored rows [k, k + n) of a group (not a delta page; for a
 * sparse group, k counts stored rows: pax_stored_index()) into
 * cols[att].values[0 .. n) and isnull[0 .. n) for the needed columns,
 * reading only what that takes (pax_minipage_read_rows()): a fixed-width
 * column's header, null bits and values; a variable-width column's header,
 * null bits and the values of the rows' strides.  One row (an index fetch)
 * thus reads a few blocks, not every needed column of a group of thousands
 * of rows, and a run of rows (a range) about as many.  By-reference values
 * point into cols[att].buf (valid until the next read into cols); the
 * arrays are grown in the current memory context.  With a prefix cache
 * (NULL: none), the columns' prefixes come from it or are kept in it.
 */
void
pax_read_row_run(Relation rel, PaxGroupEntry *g, TupleDesc desc, const bool *needed,
				 uint32 k, uint32 n, PaxColumnData *cols, PaxPrefixCache *cache)
{
	MinipageSource src;
	int			att;
	uint32		i;

	Assert(!PaxGroupIsDelta(g));
	src.rel = rel;
	src.g = g;
	src.pinned = InvalidBuffer;
	src.locked = false;
	for (att = 0; att < desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);

		if (!needed[att])
			continue;
		if (cols[att].capacity < n)
		{
			if (cols[att].values)
			{
				pfree(cols[att].values);
				pfree(cols[att].isnull);
			}
			cols[att].capacity = Max(n, 1024);
			cols[att].values = palloc(sizeof(Datum) * cols[att].capacity);
			cols[att].isnull = palloc(sizeof(bool) * cols[att].capacity);
		}
		if (a->attisdropped || att >= g->ncols)
		{
			/* dropped: NULL; added after the group was written: its default */
			for (i = 0; i < n; i++)
			{
				cols[att].values[i] = (Datum) 0;
				cols[att].isnull[i] = true;
				if (!a->attisdropped)
					cols[att].values[i] = getmissingattr(desc, att + 1, &cols[att].isnull[i]);
			}
			continue;
		}
		src.ext = &g->cols[att];
		src.col = &cols[att];
		src.prefix = NULL;
		src.prefix_len = 0;
		if (cache != NULL)
			use_prefix(&src, cache, a, att);
		pax_minipage_read_rows(a, g->nstored, g->cols[att].nbytes, read_minipage_part, &src,
							   k, n, cols[att].values, cols[att].isnull, rel);
	}
	unlock_source(&src);
	if (BufferIsValid(src.pinned))
		ReleaseBuffer(src.pinned);
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
