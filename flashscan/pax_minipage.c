/*-------------------------------------------------------------------------
 *
 * pax_minipage.c
 *	  The byte format of one column's minipage, and how a group's minipages
 *	  are laid out over its blocks.  The writer (pax_writer.c) sizes and
 *	  encodes with these functions, the readers decode with them: the format
 *	  lives only here.
 *
 * A minipage is
 *		PaxMinipageHeader (nrows, nnulls and flags)
 *		null bitmap, nrows bits, bit set = NULL		(only when nnulls > 0)
 *		fixed width (attlen > 0): values at stride attlen from an offset
 *			aligned for the type; a NULL keeps its (zeroed) slot;
 *		variable width: a stride index (format 5, PAX_MINIPAGE_STRIDES set):
 *			from an int-aligned offset, one uint32 per PAX_STRIDE_ROWS rows,
 *			entry s the data offset where the values of rows s * 16 and on
 *			start (before any alignment padding); then, from a MAXALIGNed
 *			data start, the non-NULL values one after the other, stored as
 *			heap_fill_tuple would: short varlena headers where possible,
 *			otherwise 4-byte headers aligned for the type with zero padding;
 *			cstrings with their terminator.  A reader walks the values as
 *			heap_deform_tuple does (att_align_pointer tells padding from a
 *			short header): a whole minipage from its start, one row from its
 *			stride's start, so a random fetch reads a few hundred bytes of a
 *			minipage, not all of it.  Format 4 minipages have no index
 *			(flag clear) and are walked from the start.
 * Offsets inside a minipage are relative to its start, and a reader copies
 * the minipage into a MAXALIGNed buffer, so every alignment above is real.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "utils/memutils.h"

#include "pax.h"
#include "pax_minipage.h"

/*
 * The header.  The high bit of nnulls flags a variable-width minipage with a
 * stride index (format 5); format 4 wrote none, and nnulls never needs it.
 */
typedef struct PaxMinipageHeader
{
	uint32		nrows;
	uint32		nnulls;			/* NULL values, | PAX_MINIPAGE_STRIDES */
} PaxMinipageHeader;

#define PAX_MINIPAGE_STRIDES	0x80000000u

StaticAssertDecl(sizeof(PaxMinipageHeader) == PAX_MINIPAGE_HEADER_BYTES,
				 "pax_minipage.h names the header's size");

/* flashscan.write_format: the format new minipages and tables are written in. */
int			pax_write_format = PAX_FORMAT_VERSION;

/* Where the parts of one minipage lie (offsets from its start). */
typedef struct MinipageLayout
{
	bool		hasnulls;
	bool		strides;		/* variable width with a stride index */
	uint32		nstrides;
	Size		voff;			/* fixed-width values, or the stride index */
	Size		doff;			/* variable width: the data start */
} MinipageLayout;

static void
layout(Form_pg_attribute att, uint32 nrows, bool hasnulls, bool strides, MinipageLayout *l)
{
	Size		off = sizeof(PaxMinipageHeader) + (hasnulls ? (nrows + 7) / 8 : 0);

	l->hasnulls = hasnulls;
	l->strides = strides && att->attlen < 0;
	l->nstrides = l->strides ? (nrows + PAX_STRIDE_ROWS - 1) / PAX_STRIDE_ROWS : 0;
	l->voff = (att->attlen > 0) ? att_align_nominal(off, att->attalign) : INTALIGN(off);
	l->doff = MAXALIGN(l->voff + sizeof(uint32) * l->nstrides);
}


/*
 * Place one variable-width value at data offset "off": returns the offset
 * after it and sets *start to where it begins.  Values must be plain (not
 * toasted, not compressed); 4-byte-header values that are small enough are
 * stored with a 1-byte header, exactly as heap tuples store them.
 */
Size
pax_place_value(Form_pg_attribute att, Datum value, Size off, Size *start)
{
	Pointer		p = DatumGetPointer(value);

	if (att->attlen == -2)
	{
		*start = off;
		return off + strlen(p) + 1;
	}
	Assert(att->attlen == -1);
	Assert(!VARATT_IS_EXTERNAL(p) && !VARATT_IS_COMPRESSED(p));
	if (VARATT_IS_SHORT(p))
	{
		*start = off;
		return off + VARSIZE_SHORT(p);
	}
	if (att->attstorage != TYPSTORAGE_PLAIN && VARATT_CAN_MAKE_SHORT(p))
	{
		*start = off;
		return off + VARATT_CONVERTED_SHORT_SIZE(p);
	}
	off = att_align_nominal(off, att->attalign);
	*start = off;
	return off + VARSIZE(p);
}

static Size
minipage_size(Form_pg_attribute att, uint32 nrows, bool hasnulls, bool strides,
			  Size data_bytes)
{
	MinipageLayout l;

	layout(att, nrows, hasnulls, strides, &l);
	if (att->attlen > 0)
		return l.voff + (Size) att->attlen * nrows;
	return l.doff + data_bytes;
}

/*
 * Size of a minipage of nrows values in a format version; for variable
 * width, data_bytes is the end offset pax_place_value() reached for the
 * last value.
 */
Size
pax_minipage_size(Form_pg_attribute att, uint32 nrows, bool hasnulls,
				  Size data_bytes, int format)
{
	return minipage_size(att, nrows, hasnulls, format >= 5, data_bytes);
}

/* Write a minipage of nrows values into buf (minipage_size() bytes, zeroed). */
static void
encode_minipage(Form_pg_attribute att, uint32 nrows, const Datum *values,
				const bool *isnull, bool strides, char *buf)
{
	PaxMinipageHeader hdr;
	MinipageLayout l;
	uint32		nnulls = 0;
	uint32		i;
	bits8	   *bits;
	Size		off = 0;

	/* buf need not be aligned (minipages pack at any offset): memcpy */
	for (i = 0; i < nrows; i++)
		nnulls += isnull[i] ? 1 : 0;
	layout(att, nrows, nnulls > 0, strides, &l);
	hdr.nrows = nrows;
	hdr.nnulls = nnulls | (l.strides ? PAX_MINIPAGE_STRIDES : 0);
	memcpy(buf, &hdr, sizeof(hdr));
	bits = (bits8 *) (buf + sizeof(PaxMinipageHeader));
	if (nnulls > 0)
		for (i = 0; i < nrows; i++)
			if (isnull[i])
				bits[i / 8] |= (1 << (i % 8));

	if (att->attlen > 0)
	{
		for (i = 0; i < nrows; i++)
		{
			char	   *dst = buf + l.voff + (Size) att->attlen * i;

			if (isnull[i])
				continue;
			if (att->attbyval)
				store_att_byval(dst, values[i], att->attlen);
			else
				memcpy(dst, DatumGetPointer(values[i]), att->attlen);
		}
		return;
	}

	for (i = 0; i < nrows; i++)
	{
		Pointer		p;
		Size		start;
		Size		end;

		if (l.strides && i % PAX_STRIDE_ROWS == 0)
		{
			uint32		entry = (uint32) off;

			memcpy(buf + l.voff + sizeof(uint32) * (i / PAX_STRIDE_ROWS), &entry, sizeof(entry));
		}
		if (isnull[i])
			continue;
		p = DatumGetPointer(values[i]);
		end = pax_place_value(att, values[i], off, &start);
		/* bytes between off and start stay zero: the padding readers skip */
		if (att->attlen == -2 || VARATT_IS_SHORT(p))
			memcpy(buf + l.doff + start, p, end - start);
		else if (att->attstorage != TYPSTORAGE_PLAIN && VARATT_CAN_MAKE_SHORT(p))
		{
			/* the same choice pax_place_value() made */
			SET_VARSIZE_SHORT(buf + l.doff + start, end - start);
			memcpy(buf + l.doff + start + 1, VARDATA(p), end - start - 1);
		}
		else
			memcpy(buf + l.doff + start, p, end - start);
		off = end;
	}
}

/* rel is NULL when logical decoding reads a group from WAL */
#define REL_NAME(rel) ((rel) ? RelationGetRelationName(rel) : "(decoded from WAL)")

static void
minipage_corrupted(Form_pg_attribute att, Relation rel, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("pax table \"%s\": minipage of column \"%s\" is corrupted",
					REL_NAME(rel), NameStr(att->attname)),
			 errdetail_internal("%s", detail)));
}

/*
 * Check a minipage header against its group's row count and the
 * minipage's length (nbytes), and work out its layout.
 */
static void
read_header(Form_pg_attribute att, uint32 nrows, const PaxMinipageHeader *hdr, Size nbytes,
			Relation rel, MinipageLayout *l)
{
	uint32		nnulls = hdr->nnulls & ~PAX_MINIPAGE_STRIDES;
	bool		strides = (hdr->nnulls & PAX_MINIPAGE_STRIDES) != 0;

	if (strides && att->attlen > 0)
		minipage_corrupted(att, rel, "A fixed-width column's minipage claims a stride index.");
	if (hdr->nrows != nrows || nnulls > nrows ||
		minipage_size(att, nrows, nnulls > 0, strides, 0) > nbytes)
		minipage_corrupted(att, rel,
						   psprintf("It claims %u rows (%u null) in %zu bytes; its group has %u rows.",
									hdr->nrows, nnulls, nbytes, nrows));
	layout(att, nrows, nnulls > 0, strides, l);
}

/*
 * Walk the variable-width values of rows [from, to) that start at buf + pos
 * and end before buf + end; buf must be MAXALIGNed at a MAXALIGNed minipage
 * offset, so that alignment padding is where heap_fill_tuple put it.  Null
 * bit i of bits is row bitbase + i (bits NULL: no nulls).  Rows from
 * store_from on go to values[r - store_from] / isnull[r - store_from]; the
 * ones before are only walked over.  By-reference values point into buf.
 */
static void
walk_values(Form_pg_attribute att, const char *buf, Size pos, Size end,
			const bits8 *bits, uint32 bitbase, uint32 from, uint32 to,
			Datum *values, bool *isnull, uint32 store_from, Relation rel)
{
	uint32		r;

	for (r = from; r < to; r++)
	{
		bool		null = bits != NULL &&
			(bits[(r - bitbase) / 8] & (1 << ((r - bitbase) % 8)));
		Datum		value = (Datum) 0;

		if (!null)
		{
			const char *p;
			Size		len = 0;

			if (att->attlen == -1 && pos < end)
				pos = att_align_pointer(pos, att->attalign, -1, buf + pos);
			p = buf + pos;
			if (pos >= end)
				len = 0;
			else if (att->attlen == -2)
				len = strnlen(p, end - pos) + 1;
			else if (VARATT_IS_1B(p) || end - pos >= VARHDRSZ)
				len = VARSIZE_ANY(p);
			if (len == 0 || pos + len > end)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("pax table \"%s\": value %u of column \"%s\" lies outside its minipage",
								REL_NAME(rel), r, NameStr(att->attname))));
			value = PointerGetDatum(p);
			pos += len;
		}
		if (r >= store_from)
		{
			values[r - store_from] = value;
			isnull[r - store_from] = null;
		}
	}
}

/*
 * Decode a whole minipage (in a MAXALIGNed buffer of nbytes), every row
 * into values[i]/isnull[i].  By-reference values point into buf.  A
 * minipage that does not match the group's row count or whose offsets
 * leave it is reported as corrupted.
 */
void
pax_decode_minipage(Form_pg_attribute att, uint32 nrows, const char *buf,
					Size nbytes, Datum *values, bool *isnull, Relation rel)
{
	MinipageLayout l;
	const bits8 *bits;
	uint32		i;

	if (nbytes < sizeof(PaxMinipageHeader))
		minipage_corrupted(att, rel, psprintf("It is %zu bytes long.", nbytes));
	read_header(att, nrows, (const PaxMinipageHeader *) buf, nbytes, rel, &l);
	bits = l.hasnulls ? (const bits8 *) (buf + sizeof(PaxMinipageHeader)) : NULL;
	if (att->attlen < 0)
	{
		walk_values(att, buf, l.doff, nbytes, bits, 0, 0, nrows, values, isnull, 0, rel);
		return;
	}
	for (i = 0; i < nrows; i++)
	{
		isnull[i] = (bits != NULL) && (bits[i / 8] & (1 << (i % 8)));
		values[i] = isnull[i] ? (Datum) 0 :
			fetch_att(buf + l.voff + (Size) att->attlen * i, att->attbyval, att->attlen);
	}
}

/*
 * Decode rows [k, k + n) of a minipage of nbytes (n <= PAX_MINIPAGE_MAX_READ_ROWS)
 * into values[0 .. n) / isnull[0 .. n), reading only the parts they take
 * through read(arg, offset, length), which returns a MAXALIGNed copy of
 * those bytes of the minipage, valid until its next call: the header, the
 * rows' null bits, then a slice of fixed-width values, or the stride index
 * entries of the strides holding the rows and those strides' values
 * (format 4: the whole minipage).  By-reference values point into the
 * last copy.  A single row (n = 1) costs what it always did; a run of rows
 * (an index range, a bitmap page) costs about what one does.
 */
void
pax_minipage_read_rows(Form_pg_attribute att, uint32 nrows, Size nbytes,
					   PaxMinipageReadFn read, void *arg, uint32 k, uint32 n,
					   Datum *values, bool *isnull, Relation rel)
{
	PaxMinipageHeader hdr;
	MinipageLayout l;
	bits8		nullbits[PAX_MINIPAGE_MAX_READ_ROWS / 8 + PAX_STRIDE_ROWS / 8 + 2];
	const bits8 *bits = NULL;
	uint32		span[PAX_MINIPAGE_MAX_READ_ROWS / PAX_STRIDE_ROWS + 3];
	uint32		last = k + n - 1;
	uint32		s0,
				s1,
				nspan,
				first,
				i;
	Size		start,
				from,
				end;

	for (i = 0; i < n; i++)
	{
		values[i] = (Datum) 0;
		isnull[i] = true;
	}
	if (nbytes < sizeof(PaxMinipageHeader) || n == 0 || n > PAX_MINIPAGE_MAX_READ_ROWS ||
		k >= nrows || last >= nrows)
		minipage_corrupted(att, rel, psprintf("It is %zu bytes long; rows %u to %u of %u were asked for.",
											  nbytes, k, k + n - 1, nrows));
	memcpy(&hdr, read(arg, 0, sizeof(PaxMinipageHeader)), sizeof(PaxMinipageHeader));
	read_header(att, nrows, &hdr, nbytes, rel, &l);
	/* where the null bits to read start: the first row walked, a byte start */
	first = (att->attlen < 0 && l.strides) ? (k / PAX_STRIDE_ROWS) * PAX_STRIDE_ROWS :
		(att->attlen < 0 ? 0 : k - k % 8);
	if (l.hasnulls && (att->attlen > 0 || l.strides))
	{
		memcpy(nullbits, read(arg, sizeof(PaxMinipageHeader) + first / 8, last / 8 - first / 8 + 1),
			   last / 8 - first / 8 + 1);
		bits = nullbits;
	}
	if (att->attlen > 0)
	{
		const char *v = read(arg, l.voff + (Size) att->attlen * k, (Size) att->attlen * n);

		for (i = 0; i < n; i++)
		{
			isnull[i] = bits != NULL &&
				(bits[(k + i - first) / 8] & (1 << ((k + i - first) % 8)));
			if (!isnull[i])
				values[i] = fetch_att(v + (Size) att->attlen * i, att->attbyval, att->attlen);
		}
		return;
	}
	if (!l.strides)
	{
		/* format 4: walk from the start */
		const char *buf = read(arg, 0, nbytes);

		walk_values(att, buf, l.doff, nbytes,
					l.hasnulls ? (const bits8 *) (buf + sizeof(PaxMinipageHeader)) : NULL,
					0, 0, last + 1, values, isnull, k, rel);
		return;
	}

	/* the rows' strides: where their values start and end */
	s0 = k / PAX_STRIDE_ROWS;
	s1 = last / PAX_STRIDE_ROWS;
	nspan = Min(s1 + 2, l.nstrides) - s0;
	memcpy(span, read(arg, l.voff + sizeof(uint32) * s0, sizeof(uint32) * nspan),
		   sizeof(uint32) * nspan);
	if (s1 + 1 >= l.nstrides)
		span[nspan++] = (uint32) (nbytes - l.doff);
	if (span[0] > span[nspan - 1] || l.doff + span[nspan - 1] > nbytes)
		minipage_corrupted(att, rel, psprintf("Its stride index entries %u to %u (%u to %u) leave its %zu bytes.",
											  s0, s1, span[0], span[nspan - 1], nbytes));
	start = l.doff + span[0];
	from = TYPEALIGN_DOWN(MAXIMUM_ALIGNOF, start);
	end = l.doff + span[nspan - 1];
	walk_values(att, read(arg, from, end - from), start - from, end - from, bits, first,
				first, last + 1, values, isnull, k, rel);
}

/*
 * How many leading bytes of a minipage say where its rows' values lie: the
 * header, the null bits and a fixed-width column's padding up to its
 * values, or a variable-width column's stride index up to its data.  A
 * fetch that keeps them (pax_reader.c's prefix cache) reads one block per
 * column for a row instead of two.  0 for a format-4 variable-width
 * minipage, which is walked from its start.  header: its first
 * sizeof(PaxMinipageHeader) bytes.
 */
Size
pax_minipage_prefix_bytes(Form_pg_attribute att, uint32 nrows, Size nbytes,
						  const char *header, Relation rel)
{
	PaxMinipageHeader hdr;
	MinipageLayout l;

	memcpy(&hdr, header, sizeof(PaxMinipageHeader));
	read_header(att, nrows, &hdr, nbytes, rel, &l);	/* checks nbytes too */
	if (att->attlen > 0)
		return l.voff;
	return l.strides ? l.doff : 0;
}

/*
 * Lay a group's minipages over its payload stream, in column order.  A
 * minipage starts on the next block boundary when that saves a block read
 * (it would otherwise straddle one more block than its size needs) and
 * wastes at most a quarter of a block; otherwise it packs right after the
 * previous one, as the paper's minipages do.  So narrow columns share
 * blocks, wide ones mostly start on a boundary, and alignment never costs
 * more than a quarter block per minipage.  Returns the blocks needed.
 */
uint32
pax_layout_group(int ncols, const Size *sizes, PaxColumnExtent *extents)
{
	Size		pos = 0;
	int			c;

	for (c = 0; c < ncols; c++)
	{
		Size		inblk = pos % PAX_BLOCK_PAYLOAD;
		Size		left = PAX_BLOCK_PAYLOAD - inblk;
		Size		s = Max(sizes[c], 1);

		if (inblk != 0 && left <= PAX_BLOCK_PAYLOAD / 4 &&
			(inblk + s + PAX_BLOCK_PAYLOAD - 1) / PAX_BLOCK_PAYLOAD >
			(s + PAX_BLOCK_PAYLOAD - 1) / PAX_BLOCK_PAYLOAD)
			pos += left;
		if (extents)
		{
			extents[c].offset = (uint32) pos;
			extents[c].nbytes = (uint32) sizes[c];
		}
		pos += sizes[c];
	}
	return (uint32) Max((pos + PAX_BLOCK_PAYLOAD - 1) / PAX_BLOCK_PAYLOAD, 1);
}

/*
 * Lay out and encode a group of nstored rows (values[att][i], isnull[att][i]
 * for the first natts columns of desc), plus, when present is not NULL, the
 * presence bitmap of a sparse group spanning entry->nrows row numbers.
 * hasnulls and data_bytes (per column: any nulls, bytes of variable-width
 * data) are computed when NULL.  Minipages are written in format version
 * format.  Fills entry's ncols, nstored, nblocks, cols and present_offset;
 * returns the payload stream (palloc'd, nblocks blocks' worth).
 */
char *
pax_encode_group(TupleDesc desc, int natts, uint32 nstored, Datum **values, bool **isnull,
				 const bool *hasnulls, const Size *data_bytes, const uint8 *present,
				 int format, PaxGroupEntry *entry)
{
	Size	   *sizes = palloc(sizeof(Size) * (natts + 1));
	PaxColumnExtent *extents = palloc(sizeof(PaxColumnExtent) * (natts + 1));
	int			ncols = natts + (present ? 1 : 0);
	bool		strides = format >= 5;
	char	   *stream;
	int			att;

	for (att = 0; att < natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att);
		bool		nulls = false;
		Size		bytes = 0;
		uint32		i;

		if (hasnulls)
		{
			nulls = hasnulls[att];
			bytes = data_bytes[att];
		}
		else
			for (i = 0; i < nstored; i++)
			{
				Size		start;

				if (isnull[att][i])
					nulls = true;
				else if (a->attlen < 0)
					bytes = pax_place_value(a, values[att][i], bytes, &start);
			}
		sizes[att] = minipage_size(a, nstored, nulls, strides, bytes);
	}
	if (present)
		sizes[natts] = (entry->nrows + 7) / 8;
	entry->ncols = natts;
	entry->nstored = nstored;
	entry->nblocks = pax_layout_group(ncols, sizes, extents);
	memcpy(entry->cols, extents, sizeof(PaxColumnExtent) * natts);
	entry->present_offset = present ? extents[natts].offset : 0;
	stream = palloc0((Size) entry->nblocks * PAX_BLOCK_PAYLOAD);
	for (att = 0; att < natts; att++)
		encode_minipage(TupleDescAttr(desc, att), nstored, values[att], isnull[att], strides,
						stream + entry->cols[att].offset);
	if (present)
		memcpy(stream + entry->present_offset, present, sizes[natts]);
	pfree(sizes);
	pfree(extents);
	return stream;
}
