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

extern Size pax_place_value(Form_pg_attribute att, Datum value, Size off, Size *start);
extern Size pax_minipage_size(Form_pg_attribute att, uint32 nrows, bool hasnulls,
							  Size data_bytes);
extern void pax_encode_minipage(Form_pg_attribute att, uint32 nrows,
								const Datum *values, const bool *isnull, char *buf);
extern void pax_decode_minipage(Form_pg_attribute att, uint32 nrows, const char *buf,
								Size nbytes, Datum *values, bool *isnull, Relation rel);
extern void pax_decode_minipage_row(Form_pg_attribute att, uint32 nrows, const char *buf,
									Size nbytes, uint32 k, Datum *value, bool *isnull,
									Relation rel);
extern Size pax_minipage_values_offset(Form_pg_attribute att, uint32 nrows, bool hasnulls);
extern uint32 pax_layout_group(int ncols, const Size *sizes, PaxColumnExtent *extents);
extern char *pax_encode_group(TupleDesc desc, int natts, uint32 nstored, Datum **values,
							  bool **isnull, const bool *hasnulls, const Size *data_bytes,
							  const uint8 *present, PaxGroupEntry *entry);

#endif							/* PAX_MINIPAGE_H */
