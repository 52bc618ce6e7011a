/*-------------------------------------------------------------------------
 *
 * pax_minipage.c
 *	  The byte format of one column's minipage, and how a group's minipages
 *	  are laid out over its blocks.  The writer (pax_writer.c) sizes and
 *	  encodes with these functions, the readers decode with them: the format
 *	  lives only here.
 *
 * A minipage is
 *		PaxMinipageHeader (nrows, nnulls)
 *		null bitmap, nrows bits, bit set = NULL		(only when nnulls > 0)
 *		fixed width (attlen > 0): values at stride attlen from an offset
 *			aligned for the type; a NULL keeps its (zeroed) slot;
 *		variable width: from a MAXALIGNed data start, the non-NULL values
 *			one after the other, stored as heap_fill_tuple would: short
 *			varlena headers where possible, otherwise 4-byte headers aligned
 *			for the type with zero padding; cstrings with their terminator.
 *			No offsets: a reader walks the values as heap_deform_tuple does
 *			(att_align_pointer tells padding from a short header), and every
 *			reader decodes whole minipages anyway.
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

static inline Size
bitmap_bytes(uint32 nrows)
{
	return (nrows + 7) / 8;
}

/* Where the values (fixed width) or the start array (variable width) begin. */
static inline Size
values_offset(Form_pg_attribute att, uint32 nrows, bool hasnulls)
{
	Size		off = sizeof(PaxMinipageHeader) + (hasnulls ? bitmap_bytes(nrows) : 0);

	return (att->attlen > 0) ? att_align_nominal(off, att->attalign) : INTALIGN(off);
}

/* Start of the data area of a variable-width minipage. */
static inline Size
data_offset(Form_pg_attribute att, uint32 nrows, bool hasnulls)
{
	return MAXALIGN(values_offset(att, nrows, hasnulls));
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

/*
 * Size of a minipage of nrows values; for variable width, data_bytes is the
 * end offset pax_place_value() reached for the last value.
 */
Size
pax_minipage_size(Form_pg_attribute att, uint32 nrows, bool hasnulls,
				  Size data_bytes)
{
	if (att->attlen > 0)
		return values_offset(att, nrows, hasnulls) + (Size) att->attlen * nrows;
	return data_offset(att, nrows, hasnulls) + data_bytes;
}

/* Write a minipage of nrows values into buf (pax_minipage_size() bytes, zeroed). */
void
pax_encode_minipage(Form_pg_attribute att, uint32 nrows, const Datum *values,
					const bool *isnull, char *buf)
{
	PaxMinipageHeader *hdr = (PaxMinipageHeader *) buf;
	uint32		nnulls = 0;
	uint32		i;
	bits8	   *bits;
	Size		voff;

	for (i = 0; i < nrows; i++)
		nnulls += isnull[i] ? 1 : 0;
	hdr->nrows = nrows;
	hdr->nnulls = nnulls;
	bits = (bits8 *) (buf + sizeof(PaxMinipageHeader));
	if (nnulls > 0)
		for (i = 0; i < nrows; i++)
			if (isnull[i])
				bits[i / 8] |= (1 << (i % 8));
	voff = values_offset(att, nrows, nnulls > 0);

	if (att->attlen > 0)
	{
		for (i = 0; i < nrows; i++)
		{
			char	   *dst = buf + voff + (Size) att->attlen * i;

			if (isnull[i])
				continue;
			if (att->attbyval)
				store_att_byval(dst, values[i], att->attlen);
			else
				memcpy(dst, DatumGetPointer(values[i]), att->attlen);
		}
		return;
	}

	{
		Size		dstart = data_offset(att, nrows, nnulls > 0);
		Size		off = 0;

		for (i = 0; i < nrows; i++)
		{
			Pointer		p;
			Size		start;
			Size		end;

			if (isnull[i])
				continue;
			p = DatumGetPointer(values[i]);
			end = pax_place_value(att, values[i], off, &start);
			/* bytes between off and start stay zero: the padding readers skip */
			if (att->attlen == -2 || VARATT_IS_SHORT(p))
				memcpy(buf + dstart + start, p, end - start);
			else if (att->attstorage != TYPSTORAGE_PLAIN && VARATT_CAN_MAKE_SHORT(p))
			{
				/* the same choice pax_place_value() made */
				SET_VARSIZE_SHORT(buf + dstart + start, end - start);
				memcpy(buf + dstart + start + 1, VARDATA(p), end - start - 1);
			}
			else
				memcpy(buf + dstart + start, p, end - start);
			off = end;
		}
	}
}

/* Where a minipage's fixed-width values begin (pax_read_row() reads one). */
Size
pax_minipage_values_offset(Form_pg_attribute att, uint32 nrows, bool hasnulls)
{
	return values_offset(att, nrows, hasnulls);
}

/*
 * Decode a minipage (in a MAXALIGNed buffer of nbytes): every row into
 * values[i]/isnull[i] (only < 0), or just row only into values[0]/isnull[0]
 * (variable-width values are walked up to it).  By-reference values point
 * into buf.  A minipage that does not match the group's row count or whose
 * offsets leave it is reported as corrupted.
 */
/* rel is NULL when logical decoding reads a group from WAL */
#define REL_NAME(rel) ((rel) ? RelationGetRelationName(rel) : "(decoded from WAL)")

static void
decode_minipage(Form_pg_attribute att, uint32 nrows, const char *buf, Size nbytes,
				Datum *values, bool *isnull, Relation rel, int64 only)
{
	const PaxMinipageHeader *hdr = (const PaxMinipageHeader *) buf;
	const bits8 *bits;
	Size		voff;
	Size		doff;			/* next variable-width value */
	uint32		i;

	if (nbytes < sizeof(PaxMinipageHeader) || hdr->nrows != nrows || hdr->nnulls > nrows ||
		pax_minipage_size(att, nrows, hdr->nnulls > 0, 0) > nbytes || only >= (int64) nrows)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("pax table \"%s\": minipage of column \"%s\" is corrupted",
						REL_NAME(rel), NameStr(att->attname)),
				 errdetail("It claims %u rows (%u null) in %zu bytes; its group has %u rows.",
						   hdr->nrows, hdr->nnulls, nbytes, nrows)));
	bits = (hdr->nnulls > 0) ? (const bits8 *) (buf + sizeof(PaxMinipageHeader)) : NULL;
	voff = values_offset(att, nrows, bits != NULL);
	doff = data_offset(att, nrows, bits != NULL);

	/* fixed width: straight to the row */
	i = (only >= 0 && att->attlen > 0) ? (uint32) only : 0;
	for (; i < nrows; i++)
	{
		bool		null = (bits != NULL) && (bits[i / 8] & (1 << (i % 8)));
		Datum		value = (Datum) 0;

		if (null)
			;
		else if (att->attlen > 0)
			value = fetch_att(buf + voff + (Size) att->attlen * i, att->attbyval, att->attlen);
		else
		{
			const char *p;
			Size		len;

			if (att->attlen == -1 && doff < nbytes)
				doff = att_align_pointer(doff, att->attalign, -1, buf + doff);
			p = buf + doff;
			if (doff >= nbytes)
				len = 0;
			else if (att->attlen == -2)
				len = strnlen(p, nbytes - doff) + 1;
			else
				len = VARSIZE_ANY(p);
			if (len == 0 || doff + len > nbytes)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("pax table \"%s\": value %u of column \"%s\" lies outside its minipage",
								REL_NAME(rel), i, NameStr(att->attname))));
			value = PointerGetDatum(p);
			doff += len;
		}
		if (only < 0)
		{
			values[i] = value;
			isnull[i] = null;
		}
		else if (i == (uint32) only)
		{
			values[0] = value;
			isnull[0] = null;
			return;
		}
	}
}

void
pax_decode_minipage(Form_pg_attribute att, uint32 nrows, const char *buf,
					Size nbytes, Datum *values, bool *isnull, Relation rel)
{
	decode_minipage(att, nrows, buf, nbytes, values, isnull, rel, -1);
}

/* Decode row k of a minipage only. */
void
pax_decode_minipage_row(Form_pg_attribute att, uint32 nrows, const char *buf,
						Size nbytes, uint32 k, Datum *value, bool *isnull, Relation rel)
{
	decode_minipage(att, nrows, buf, nbytes, value, isnull, rel, k);
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
 * data) are computed when NULL.  Fills entry's ncols, nstored, nblocks,
 * cols and present_offset; returns the payload stream (palloc'd, nblocks
 * blocks' worth).
 */
char *
pax_encode_group(TupleDesc desc, int natts, uint32 nstored, Datum **values, bool **isnull,
				 const bool *hasnulls, const Size *data_bytes, const uint8 *present,
				 PaxGroupEntry *entry)
{
	Size	   *sizes = palloc(sizeof(Size) * (natts + 1));
	PaxColumnExtent *extents = palloc(sizeof(PaxColumnExtent) * (natts + 1));
	int			ncols = natts + (present ? 1 : 0);
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
		sizes[att] = pax_minipage_size(a, nstored, nulls, bytes);
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
		pax_encode_minipage(TupleDescAttr(desc, att), nstored, values[att], isnull[att],
							stream + entry->cols[att].offset);
	if (present)
		memcpy(stream + entry->present_offset, present, sizes[natts]);
	pfree(sizes);
	pfree(extents);
	return stream;
}
