/*-------------------------------------------------------------------------
 *
 * pax_visibility.c
 *	  Visibility of a pax group's insertion: heap's xmin rules for a group
 *	  (or a delta row), and the horizon of groups VACUUM rewrote.
 *
 * A group's insertion is one command of one (sub)transaction; its entry
 * records the xid and command id, and its flags say whether it is frozen
 * or aborted.  Per-row states (deletes, updates, locks) are pax_rowstate.c's.
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

/*
 * A snapshot older than a group's horizon may need rows VACUUM removed from
 * it.  On the primary no such snapshot exists (the horizon is VACUUM's
 * oldest xmin); on a hot standby the query is cancelled, as heap's recovery
 * conflicts cancel it.
 */
void
pax_check_horizon(PaxGroupEntry *g, Snapshot snapshot)
{
	/*
	 * Only a hot standby's snapshot can be older than what VACUUM removed:
	 * on the primary VACUUM's horizon covers every snapshot of this
	 * database, and a snapshot held in another database (which holds
	 * back the global xmin a fresh snapshot gets) cannot read this table.
	 */
	if (snapshot->snapshot_type == SNAPSHOT_MVCC && TransactionIdIsValid(g->horizon) &&
		TransactionIdPrecedes(snapshot->xmin, g->horizon) && RecoveryInProgress())
		pax_recovery_conflict();
}

void
pax_recovery_conflict(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("canceling statement due to conflict with recovery"),
				 errdetail("User query might have needed to see rows of a pax table that VACUUM removed or moved.")));
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent VACUUM of a pax table"),
			 errdetail("A snapshot older than the VACUUM read rows it removed or moved."),
			 errhint("Retry the transaction.")));
}

/*
 * Is an insertion by xmin (command cmin) visible to the snapshot?  heap's
 * rules for a tuple's xmin (heapam_visibility.c); for a dirty snapshot an
 * insert in progress is reported in snapshot->xmin.
 */
bool
pax_xmin_visible(TransactionId xmin, CommandId cmin, Snapshot snapshot)
{
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(xmin))
				return cmin < snapshot->curcid;
			if (XidInMVCCSnapshot(xmin, snapshot))
				return false;
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_SELF:
			if (TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
				return false;
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_DIRTY:
			snapshot->xmin = snapshot->xmax = InvalidTransactionId;
			snapshot->speculativeToken = 0;
			if (TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
			{
				snapshot->xmin = xmin;
				return true;
			}
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_ANY:
		case SNAPSHOT_TOAST:
			return true;
		case SNAPSHOT_NON_VACUUMABLE:
			return TransactionIdIsCurrentTransactionId(xmin) ||
				TransactionIdIsInProgress(xmin) || TransactionIdDidCommit(xmin);
		case SNAPSHOT_HISTORIC_MVCC:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pax tables cannot be read with a historic snapshot")));
	return false;				/* keep compiler quiet */
}

/*
 * Is a group's insertion visible to the snapshot?  pax_xmin_visible() for
 * the whole group.  A frozen group keeps its xmin, so that a snapshot on a
 * standby that still sees the writer as running does not see it either.
 * A delta page's rows each have their own xmin: the page as a whole is
 * visible, and pax_visible_rows() / pax_row_visible() decide per row.
 */
bool
pax_group_visible(PaxGroupEntry *g, Snapshot snapshot)
{
	/*
	 * A dirty snapshot reports the writers it met; every path below that
	 * returns without asking pax_xmin_visible() must not leave those of an
	 * earlier call (a unique check would wait for a long-finished writer,
	 * over and over).
	 */
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}
	if (g->flags & (PAX_GROUP_ABORTED | PAX_GROUP_EMPTY))
		return false;
	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
		pax_check_horizon(g, snapshot);
	if (PaxGroupIsDelta(g))
		return true;
	if (g->flags & PAX_GROUP_FROZEN)
		return snapshot->snapshot_type != SNAPSHOT_MVCC ||
			!XidInMVCCSnapshot(g->xmin, snapshot);
	return pax_xmin_visible(g->xmin, g->cmin, snapshot);
}
