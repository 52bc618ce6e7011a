/*-------------------------------------------------------------------------
 *
 * pax_slot.c
 *	  The tuple slot pax scans and fetches return: a virtual slot that also
 *	  answers the system columns xmin, cmin, xmax and cmax.
 *
 * A pax row has no tuple header: its inserter is its group's (or, on a
 * delta page, its own header's), its deleter or locker is in the group's
 * row map.  The slot remembers where the row came from and reads those only
 * when a query asks for them (slot_getsysattr), so scans that do not pay
 * nothing.  What it remembers (a copy of the group's directory entry, and
 * the relation, which must stay open) stays valid as long as the row's
 * values do: until the next row is stored in the slot.  A copy into another
 * pax slot carries it, with the TID, as a copy of a heap row keeps its
 * header; a copy into any other slot keeps the values only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "executor/tuptable.h"

#include "pax.h"

typedef struct PaxTupleTableSlot
{
	VirtualTupleTableSlot base;
	Relation	rel;			/* NULL: no pax row stored */
	PaxGroupEntry *group;		/* NULL: a row this backend just inserted;
								 * else origin's */
	/*
	 * A copy of the row's directory entry (without its columns: system
	 * columns need none), not a pointer into the directory copy the row was
	 * read through, which a fetch that ends (a DML re-read, EvalPlanQual)
	 * may free while the slot still holds the row.
	 */
	union
	{
		char		space[PaxGroupEntrySize(0)];
		uint64		align;
	}			origin;
	uint64		rownum;
	TransactionId xmin;			/* ... whose inserter is this */
	CommandId	cmin;
} PaxTupleTableSlot;

static TupleTableSlotOps pax_slot_ops;

static Datum
pax_slot_getsysattr(TupleTableSlot *slot, int attnum, bool *isnull)
{
	PaxTupleTableSlot *ps = (PaxTupleTableSlot *) slot;
	PaxGroupEntry *g = ps->group;
	PaxRowState st;

	if (ps->rel == NULL || TTS_EMPTY(slot))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot retrieve a system column in this context")));
	*isnull = false;
	if (g == NULL)
	{
		/* just inserted (INSERT/UPDATE ... RETURNING): ours, nobody deleted it */
		switch (attnum)
		{
			case MinTransactionIdAttributeNumber:
				return TransactionIdGetDatum(ps->xmin);
			case MinCommandIdAttributeNumber:
			case MaxCommandIdAttributeNumber:
				return CommandIdGetDatum(ps->cmin);
			case MaxTransactionIdAttributeNumber:
				{
					/* a lock the new version carries (UPDATE ... RETURNING xmax) */
					PaxGroupEntry *cur = pax_find_group(pax_current_directory(ps->rel),
														ps->rownum);

					if (cur == NULL)
						return TransactionIdGetDatum(InvalidTransactionId);
					pax_row_state(ps->rel, cur, ps->rownum, &st);
					return TransactionIdGetDatum(st.xmax);
				}
		}
		elog(ERROR, "invalid attribute number %d for a pax row", attnum);
	}
	switch (attnum)
	{
		case MinTransactionIdAttributeNumber:
		case MinCommandIdAttributeNumber:
			{
				TransactionId xmin = g->xmin;
				CommandId	cmin = g->cmin;

				if (PaxGroupIsDelta(g))
				{
					PaxDeltaRowHeader hdr;

					if (pax_delta_row_header(ps->rel, g, ps->rownum, &hdr))
					{
						xmin = hdr.xmin;
						cmin = hdr.cmin;
					}
				}
				return (attnum == MinTransactionIdAttributeNumber) ?
					TransactionIdGetDatum(xmin) : CommandIdGetDatum(cmin);
			}
		case MaxTransactionIdAttributeNumber:
			pax_row_state(ps->rel, g, ps->rownum, &st);
			return TransactionIdGetDatum(st.xmax);
		case MaxCommandIdAttributeNumber:
			/* heap's cmin and cmax share one field too */
			pax_row_state(ps->rel, g, ps->rownum, &st);
			return CommandIdGetDatum(TransactionIdIsValid(st.xmax) ? st.cmax : g->cmin);
	}
	elog(ERROR, "invalid attribute number %d for a pax row", attnum);
	return (Datum) 0;			/* keep compiler quiet */
}

static void
pax_slot_clear(TupleTableSlot *slot)
{
	((PaxTupleTableSlot *) slot)->rel = NULL;
	TTSOpsVirtual.clear(slot);
}

/*
 * A heap tuple copy of the row carries its TID and table, as a copy of a
 * heap row does: ANALYZE sorts its sample by t_self to learn each column's
 * correlation with the table's order (without it every pax column read as
 * uncorrelated, and index range scans were priced as random fetches), and
 * triggers and logical decoding read them too.
 */
static HeapTuple
pax_slot_copy_heap_tuple(TupleTableSlot *slot)
{
	HeapTuple	tuple = TTSOpsVirtual.copy_heap_tuple(slot);

	tuple->t_self = slot->tts_tid;
	tuple->t_tableOid = slot->tts_tableOid;
	return tuple;
}

/*
 * A copy of a row carries its TID, table and origin, as a copy of a heap
 * row does (heap's copies keep t_self).  Logical replication's apply on a
 * table without a replica identity index finds each row by a scan, copies
 * it to another slot and locks the copy's TID (RelationFindReplTupleSeq):
 * with the virtual slot's copy, an invalid one, so every UPDATE and DELETE
 * failed with "attempted to lock invisible tuple" and the subscription
 * stalled.
 */
static void
pax_slot_copyslot(TupleTableSlot *dst, TupleTableSlot *src)
{
	PaxTupleTableSlot *pd = (PaxTupleTableSlot *) dst;

	TTSOpsVirtual.copyslot(dst, src);
	dst->tts_tid = src->tts_tid;
	dst->tts_tableOid = src->tts_tableOid;
	pd->rel = NULL;
	if (src->tts_ops == &pax_slot_ops && ((PaxTupleTableSlot *) src)->rel != NULL)
	{
		PaxTupleTableSlot *ps = (PaxTupleTableSlot *) src;

		pd->rel = ps->rel;
		pd->rownum = ps->rownum;
		pd->xmin = ps->xmin;
		pd->cmin = ps->cmin;
		pd->group = NULL;
		if (ps->group != NULL)
		{
			memcpy(pd->origin.space, ps->group, sizeof(pd->origin.space));
			pd->group = (PaxGroupEntry *) pd->origin.space;
		}
	}
}

const TupleTableSlotOps *
pax_slot_ops_get(void)
{
	if (pax_slot_ops.getsysattr == NULL)
	{
		pax_slot_ops = TTSOpsVirtual;
		pax_slot_ops.base_slot_size = sizeof(PaxTupleTableSlot);
		pax_slot_ops.clear = pax_slot_clear;
		pax_slot_ops.getsysattr = pax_slot_getsysattr;
		pax_slot_ops.copy_heap_tuple = pax_slot_copy_heap_tuple;
		pax_slot_ops.copyslot = pax_slot_copyslot;
	}
	return &pax_slot_ops;
}

/*
 * The row in slot was just inserted by (xmin, cmin), if it is a pax slot:
 * it may still be in this backend's write buffer, so its system columns
 * come from here.
 */
void
pax_slot_set_inserted(TupleTableSlot *slot, Relation rel, uint64 rownum,
					  TransactionId xmin, CommandId cmin)
{
	PaxTupleTableSlot *ps = (PaxTupleTableSlot *) slot;

	if (slot->tts_ops != &pax_slot_ops)
		return;
	ps->rel = rel;
	ps->group = NULL;
	ps->rownum = rownum;
	ps->xmin = xmin;
	ps->cmin = cmin;
}

/* Remember where the row just stored in slot comes from, if it is a pax slot. */
void
pax_slot_set_origin(TupleTableSlot *slot, Relation rel, PaxGroupEntry *g, uint64 rownum)
{
	PaxTupleTableSlot *ps = (PaxTupleTableSlot *) slot;

	if (slot->tts_ops != &pax_slot_ops)
		return;
	ps->rel = rel;
	ps->group = (PaxGroupEntry *) ps->origin.space;
	memcpy(ps->group, g, offsetof(PaxGroupEntry, cols));
	ps->group->ncols = 0;
	ps->rownum = rownum;
}

/* Store the values filled into slot as row ri of group g of rel. */
void
pax_store_virtual_row(TupleTableSlot *slot, PaxGroupEntry *g, uint32 ri, Relation rel)
{
	ExecStoreVirtualTuple(slot);
	pax_rownum_to_tid(g->first_rownum + ri, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	pax_slot_set_origin(slot, rel, g, g->first_rownum + ri);
}

/* Fill a virtual slot with row ri of the decoded columns. */
void
pax_store_row(TupleTableSlot *slot, TupleDesc desc, PaxColumnData *cols,
		  const bool *needed, PaxGroupEntry *g, uint32 ri, Relation rel)
{
	pax_store_row_at(slot, desc, cols, needed, ri, g, ri, rel);
}

/* Fill a virtual slot with row ri of group g, decoded at index idx of cols. */
void
pax_store_row_at(TupleTableSlot *slot, TupleDesc desc, PaxColumnData *cols,
				 const bool *needed, uint32 idx, PaxGroupEntry *g, uint32 ri, Relation rel)
{
	int			att;

	ExecClearTuple(slot);
	for (att = 0; att < desc->natts; att++)
	{
		if (needed[att])
		{
			slot->tts_values[att] = cols[att].values[idx];
			slot->tts_isnull[att] = cols[att].isnull[idx];
		}
		else
		{
			slot->tts_values[att] = (Datum) 0;
			slot->tts_isnull[att] = true;
		}
	}
	pax_store_virtual_row(slot, g, ri, rel);
}

bool *
pax_all_columns(TupleDesc desc)
{
	bool	   *needed = palloc(sizeof(bool) * Max(desc->natts, 1));
	int			att;

	for (att = 0; att < desc->natts; att++)
		needed[att] = !TupleDescAttr(desc, att)->attisdropped;
	return needed;
}
