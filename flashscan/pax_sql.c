/*-------------------------------------------------------------------------
 *
 * pax_sql.c
 *	  SQL-callable views into pax tables: pax_groups(regclass) lists the
 *	  group directory (what a DBA checks after a load, and what the tests
 *	  assert on).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pax.h"

static Relation open_pax_table(Oid relid, LOCKMODE lockmode, const char *caller);

PG_FUNCTION_INFO_V1(pax_groups);
PG_FUNCTION_INFO_V1(pax_set_group_blocks);

/*
 * Open a pax table for one of the functions below (checking that the
 * caller may read it) and read its directory, this backend's pending rows
 * included.
 */
static Relation
open_pax_directory(Oid relid, const char *caller, PaxDirectory **dir)
{
	Relation	rel = open_pax_table(relid, AccessShareLock, caller);
	AclResult	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);

	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, RelationGetRelationName(rel));
	pax_flush_relation(rel);
	*dir = pax_read_directory(rel, CurrentMemoryContext);
	return rel;
}

/* Open a relation that must be a pax table. */
static Relation
open_pax_table(Oid relid, LOCKMODE lockmode, const char *caller)
{
	Relation	rel = table_open(relid, lockmode);

	if (rel->rd_tableam != pax_table_am_routine())
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a pax table", RelationGetRelationName(rel)),
				 errhint("%s() takes tables created with USING pax.", caller)));
	return rel;
}

/* pax_groups(rel regclass): one row per directory entry, in row-number order. */
Datum
pax_groups(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	PaxDirectory *dir;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	rel = open_pax_directory(relid, "pax_groups", &dir);
	for (i = 0; i < dir->ngroups; i++)
	{
		PaxGroupEntry *g = dir->groups[i];
		Datum		values[12];
		bool		nulls[12] = {0};
		uint64		stored = g->nstored;
		uint64		bytes = 0;
		int			c;

		for (c = 0; c < g->ncols; c++)
			bytes += g->cols[c].nbytes;
		values[0] = Int64GetDatum((int64) g->first_rownum);
		values[1] = Int64GetDatum((int64) g->nrows);
		values[2] = Int64GetDatum((int64) g->first_block);
		values[3] = Int32GetDatum((int32) g->nblocks);
		values[4] = Int64GetDatum((int64) bytes);
		values[5] = TransactionIdGetDatum(g->xmin);
		values[6] = BoolGetDatum((g->flags & PAX_GROUP_FROZEN) != 0);
		values[7] = BoolGetDatum((g->flags & PAX_GROUP_ABORTED) != 0);
		if (PaxGroupIsDelta(g))
		{
			stored = pax_delta_nrows(rel, g);
			nulls[5] = true;	/* per row */
		}
		values[8] = Int64GetDatum((int64) stored);
		values[9] = BoolGetDatum(PaxGroupIsSparse(g));
		values[10] = Int32GetDatum(g->row_map == InvalidBlockNumber ? 0 :
								   (int32) pax_row_map_blocks(g));
		values[11] = BoolGetDatum(PaxGroupIsDelta(g));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * pax_set_group_blocks(rel regclass, group_blocks int): the group size of
 * the table's next groups (existing groups keep theirs).  Needs the
 * table's owner, like ALTER TABLE ... SET would.
 */
Datum
pax_set_group_blocks(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int32		group_blocks = PG_GETARG_INT32(1);
	Relation	rel;

	if (group_blocks < PAX_MIN_GROUP_BLOCKS || group_blocks > PAX_MAX_GROUP_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("group_blocks must be between %d and %d, got %d",
						PAX_MIN_GROUP_BLOCKS, PAX_MAX_GROUP_BLOCKS, group_blocks),
				 errhint("A group of %d blocks holds %d kB of minipages.",
						 PAX_DEFAULT_GROUP_BLOCKS, PAX_DEFAULT_GROUP_BLOCKS * BLCKSZ / 1024)));
	rel = open_pax_table(relid, ShareUpdateExclusiveLock, "pax_set_group_blocks");
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	pax_flush_relation(rel);
	pax_set_relation_group_blocks(rel, group_blocks);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(pax_column_sizes);

/*
 * pax_column_sizes(rel regclass): per column, the bytes of its minipages
 * over all groups and the blocks a scan of the column reads (each minipage
 * rounded out to the blocks it touches).
 */
Datum
pax_column_sizes(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	TupleDesc	desc;
	PaxDirectory *dir;
	int			att;

	InitMaterializedSRF(fcinfo, 0);
	rel = open_pax_directory(relid, "pax_column_sizes", &dir);
	desc = RelationGetDescr(rel);
	for (att = 0; att < desc->natts; att++)
	{
		Datum		values[3];
		bool		nulls[3] = {0};
		uint64		bytes = 0,
					blocks = 0;
		int			i;

		if (TupleDescAttr(desc, att)->attisdropped)
			continue;
		for (i = 0; i < dir->ngroups; i++)
		{
			PaxGroupEntry *g = dir->groups[i];
			uint64		first,
						end;

			if (att >= g->ncols || (g->flags & PAX_GROUP_ABORTED))
				continue;
			bytes += g->cols[att].nbytes;
			first = g->cols[att].offset / PAX_BLOCK_PAYLOAD;
			end = ((uint64) g->cols[att].offset + Max(g->cols[att].nbytes, 1) +
				   PAX_BLOCK_PAYLOAD - 1) / PAX_BLOCK_PAYLOAD;
			blocks += end - first;
		}
		values[0] = CStringGetTextDatum(NameStr(TupleDescAttr(desc, att)->attname));
		values[1] = Int64GetDatum((int64) bytes);
		values[2] = Int64GetDatum((int64) blocks);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}
