/*-------------------------------------------------------------------------
 *
 * pax_minipage.h
 *	  Minipage format of the pax table access method (see pax_minipage.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PAX_MINIPAGE_H
#define PAX_MINIPAGE_H

#include "access/tupdesc.h"
#include "utils/rel.h"

#include "pax.h"

/*
 * Rows per stride index entry of a variable-width minipage: a random fetch
 * walks at most this many values, and the index costs 4 bytes per this many
 * rows (a quarter byte a row, about 3% of a minipage of 8-byte strings).
 */
#define PAX_STRIDE_ROWS			16

/* The header that starts every minipage: rows, and nulls with a flag. */
#define PAX_MINIPAGE_HEADER_BYTES	8

/* Returns a MAXALIGNed copy of bytes [offset, offset + nbytes) of a minipage. */
typedef const char *(*PaxMinipageReadFn) (void *arg, Size offset, Size nbytes);

extern Size pax_place_value(Form_pg_attribute att, Datum value, Size off, Size *start);
extern Size pax_minipage_size(Form_pg_attribute att, uint32 nrows, bool hasnulls,
							  Size data_bytes, int format);
extern void pax_decode_minipage(Form_pg_attribute att, uint32 nrows, const char *buf,
								Size nbytes, Datum *values, bool *isnull, Relation rel);
/* Most rows pax_minipage_read_rows() decodes at once. */
#define PAX_MINIPAGE_MAX_READ_ROWS	256

extern void pax_minipage_read_rows(Form_pg_attribute att, uint32 nrows, Size nbytes,
								   PaxMinipageReadFn read, void *arg, uint32 k, uint32 n,
								   Datum *values, bool *isnull, Relation rel);
extern Size pax_minipage_prefix_bytes(Form_pg_attribute att, uint32 nrows, Size nbytes,
									  const char *header, Relation rel);
extern uint32 pax_layout_group(int ncols, const Size *sizes, PaxColumnExtent *extents);
extern char *pax_encode_group(TupleDesc desc, int natts, uint32 nstored, Datum **values,
							  bool **isnull, const bool *hasnulls, const Size *data_bytes,
							  const uint8 *present, int format, PaxGroupEntry *entry);

#endif							/* PAX_MINIPAGE_H */
