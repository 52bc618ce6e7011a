/*-------------------------------------------------------------------------
 *
 * pax_index_delete.c
 *	  Which index entries of a pax table may go before VACUUM
 *	  (tableam's index_delete_tuples).
 *
 * A pax UPDATE writes a new row with a new row number and gives it an
 * entry in every index, also in indexes whose columns it did not change.
 * Rows updated over and over thus pile up entries with equal keys, and
 * every scan of such a key visited every old version until VACUUM.  btree
 * asks the table before it splits a leaf page: for entries it found dead
 * (simple deletion) and, when the insertion did not change the indexed
 * columns, for the duplicates on the page (bottom-up deletion,
 * PostgreSQL 14).  Answering lets it drop the entries of rows no snapshot
 * can see any more instead of splitting, as heap does for its non-HOT
 * updates.
 *
 * The unit of work is one block of a group's row map (the states of
 * PAX_ROW_STATES_PER_BLOCK consecutive rows), heap's table block, read
 * once for all its entries (pax_rows_removable()): a bottom-up pass reads
 * the most promising few and stops when it frees what the index asked
 * for, or when a block freed nothing more.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/transam.h"

#include "pax.h"

/* heap's cap on the table blocks one bottom-up pass reads (heapam.c) */
#define BOTTOMUP_MAX_UNITS		6

/* The row map block a row's state is in: group index and block within. */
typedef struct DeleteUnit
{
	int			gi;				/* group index, or -1: not written yet */
	uint32		block;
	int			start;			/* its entries: deltids[start .. start + n) */
	int			n;
	int			promising;
} DeleteUnit;

static int
compare_tids(const void *a, const void *b)
{
	return ItemPointerCompare(&((TM_IndexDelete *) a)->tid, &((TM_IndexDelete *) b)->tid);
}

/* Most promising entries first, then most entries, then table order. */
static int
compare_units(const void *a, const void *b)
{
	const DeleteUnit *ua = a;
	const DeleteUnit *ub = b;

	if (ua->promising != ub->promising)
		return ua->promising > ub->promising ? -1 : 1;
	if (ua->n != ub->n)
		return ua->n > ub->n ? -1 : 1;
	return ua->start < ub->start ? -1 : (ua->start > ub->start);
}

/*
 * Split the TID-sorted entries into units.  Returns how many; units is
 * palloc'd.
 */
static int
split_units(PaxDirectory *dir, TM_IndexDeleteOp *delstate, DeleteUnit **units)
{
	DeleteUnit *u = palloc(sizeof(DeleteUnit) * delstate->ndeltids);
	int			nunits = 0;
	int			i;

	for (i = 0; i < delstate->ndeltids; i++)
	{
		uint64		rownum = pax_tid_to_rownum(&delstate->deltids[i].tid);
		int			gi = pax_find_group_index(dir, rownum);
		uint32		block = 0;

		if (gi >= 0)
			block = (uint32) ((rownum - dir->groups[gi]->first_rownum) /
							  PAX_ROW_STATES_PER_BLOCK);
		if (nunits == 0 || u[nunits - 1].gi != gi || u[nunits - 1].block != block)
		{
			u[nunits].gi = gi;
			u[nunits].block = block;
			u[nunits].start = i;
			u[nunits].n = 0;
			u[nunits].promising = 0;
			nunits++;
		}
		u[nunits - 1].n++;
		if (delstate->status[delstate->deltids[i].id].promising)
			u[nunits - 1].promising++;
	}
	*units = u;
	return nunits;
}

/*
 * Bottom-up: keep the entries of the most promising units only, those
 * first (the index AM sorts the array back after us).
 */
static int
keep_promising_units(TM_IndexDeleteOp *delstate, DeleteUnit *units, int nunits)
{
	TM_IndexDelete *reordered;
	int			n = 0;
	int			u;

	qsort(units, nunits, sizeof(DeleteUnit), compare_units);
	nunits = Min(nunits, BOTTOMUP_MAX_UNITS);
	while (nunits > 1 && units[nunits - 1].promising == 0)
		nunits--;
	reordered = palloc(sizeof(TM_IndexDelete) * delstate->ndeltids);
	for (u = 0; u < nunits; u++)
	{
		memcpy(reordered + n, delstate->deltids + units[u].start,
			   sizeof(TM_IndexDelete) * units[u].n);
		units[u].start = n;
		n += units[u].n;
	}
	memcpy(delstate->deltids, reordered, sizeof(TM_IndexDelete) * n);
	pfree(reordered);
	delstate->ndeltids = n;
	return nunits;
}

TransactionId
pax_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	TransactionId latest_removed = InvalidTransactionId;
	PaxDirectory *dir = pax_directory_acquire(rel);
	DeleteUnit *units;
	int			nunits;
	int			target = delstate->bottomupfreespace;
	int			freed = 0;
	int			final_n = 0;
	uint64	   *rownums;
	bool	   *known_dead;
	bool	   *removable;
	int			u;

	qsort(delstate->deltids, delstate->ndeltids, sizeof(TM_IndexDelete), compare_tids);
	nunits = split_units(dir, delstate, &units);
	if (delstate->bottomup)
		nunits = keep_promising_units(delstate, units, nunits);

	rownums = palloc(sizeof(uint64) * Max(delstate->ndeltids, 1));
	known_dead = palloc(sizeof(bool) * Max(delstate->ndeltids, 1));
	removable = palloc(sizeof(bool) * Max(delstate->ndeltids, 1));
	for (u = 0; u < nunits; u++)
	{
		DeleteUnit *unit = &units[u];
		int			freed_before = freed;
		int			i;

		for (i = 0; i < unit->n; i++)
		{
			TM_IndexDelete *d = &delstate->deltids[unit->start + i];

			rownums[i] = pax_tid_to_rownum(&d->tid);
			known_dead[i] = delstate->status[d->id].knowndeletable;
			removable[i] = false;
		}
		/* a row still in some backend's write buffer has no group yet */
		if (unit->gi >= 0)
			pax_rows_removable(rel, dir->groups[unit->gi], unit->n, rownums, known_dead,
							   removable, &latest_removed);
		for (i = 0; i < unit->n; i++)
		{
			TM_IndexStatus *st = &delstate->status[delstate->deltids[unit->start + i].id];

			if (!st->knowndeletable && removable[i])
			{
				st->knowndeletable = true;
				if (delstate->bottomup)
					freed += st->freespace;
			}
			/* (an entry the index found dead had its horizon counted above) */
			if (st->knowndeletable)
				final_n = unit->start + i + 1;
		}
		if (!delstate->bottomup)
			continue;
		/* heap's rules for giving up: enough freed, or a unit freed nothing */
		if (freed >= target || freed == freed_before)
			break;
		if (u > 0)
			target /= 2;
	}
	pfree(rownums);
	pfree(known_dead);
	pfree(removable);
	pax_directory_release(dir);
	pfree(units);
	/*
	 * Only up to the last deletable entry: with none, btree relies on a
	 * count of 0 and writes no deletion record.
	 */
	delstate->ndeltids = final_n;
	return latest_removed;
}
