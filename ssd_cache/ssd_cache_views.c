/*-------------------------------------------------------------------------
 *
 * ssd_cache_views.c
 *	  SQL functions behind ssd_cache_stats, ssd_cache_relations,
 *	  ssd_cache_reset_stats() and ssd_cache_evict().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "portability/instr_time.h"
#include "utils/rel.h"

#include "ssd_cache.h"
#include "ssd_cache_admit.h"
#include "ssd_cache_directory.h"
#include "ssd_cache_fault.h"
#include "ssd_cache_file.h"
#include "ssd_cache_hook.h"
#include "ssd_cache_policy.h"

PG_FUNCTION_INFO_V1(ssd_cache_stats_internal);
PG_FUNCTION_INFO_V1(ssd_cache_relation_blocks);
PG_FUNCTION_INFO_V1(ssd_cache_reset_stats);
PG_FUNCTION_INFO_V1(ssd_cache_evict);
PG_FUNCTION_INFO_V1(ssd_cache_verify_sql);
PG_FUNCTION_INFO_V1(ssd_cache_lookup_cost);

/* One row: configuration, state and every counter. */
Datum
ssd_cache_stats_internal(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[14 + SSD_NCOUNTERS];
	bool		nulls[14 + SSD_NCOUNTERS];
	int64		counters[SSD_NCOUNTERS];
	const char *path = ssd_cache_configured_path();
	const char *mode;
	const char *admission_io = NULL;
	char		problem[512];
	bool		has_problem;
	int			i,
				n = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, 0, sizeof(nulls));

	has_problem = ssd_cache_problem(problem, sizeof(problem));
	if (path == NULL)
		mode = "disabled";
	else if (!ssd_cache_enabled())
		mode = "off";
	else if (ssd_cache_bypassed())
		mode = "pass-through";
	else if (ssd_cache_verifying())
	{
		mode = "verifying";
		if (!has_problem)
		{
			strlcpy(problem, "after a crash, the cache is served once WAL replay covers its pages",
					sizeof(problem));
			has_problem = true;
		}
	}
	else
		mode = "write-through";
	if (ssd_cache_enabled())
		admission_io = ssd_cache_file_admission_io();

	values[n++] = CStringGetTextDatum(mode);
	if (has_problem)
		values[n++] = CStringGetTextDatum(problem);
	else
		nulls[n++] = true;
	values[n++] = CStringGetTextDatum(ssd_cache_policy == SSD_POLICY_TAC ? "tac" : "clock");
	values[n++] = BoolGetDatum(ssd_cache_hook_active());
	if (path)
		values[n++] = CStringGetTextDatum(path);
	else
		nulls[n++] = true;
	values[n++] = Int64GetDatum((int64) ssd_cache_nslots() * BLCKSZ);
	values[n++] = Int64GetDatum((int64) ssd_cache_nslots());
	values[n++] = Int64GetDatum((int64) ssd_cache_used_slots());
	values[n++] = Int64GetDatum((int64) ssd_cache_admit_queue_length());
	values[n++] = Float8GetDatum(ssd_cache_preparation_ms());
	if (admission_io)
		values[n++] = CStringGetTextDatum(admission_io);
	else
		nulls[n++] = true;
	ssd_cache_read_counters(counters);
	for (i = 0; i < SSD_NCOUNTERS; i++)
		values[n++] = Int64GetDatum(counters[i]);
	values[n++] = Int64GetDatum(ssd_cache_enabled() ? ssd_cache_file_header_writes() : 0);
	values[n++] = Int64GetDatum(ssd_cache_error_count());
	values[n++] = Int64GetDatum((int64) ssd_cache_agings());

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* (tablespace, relfilenode, cached_blocks, hits, misses) for this database. */
Datum
ssd_cache_relation_blocks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *counts;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	counts = ssd_cache_relation_counts(MyDatabaseId);
	foreach(lc, counts)
	{
		SsdCacheRelCount *rc = lfirst(lc);
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = ObjectIdGetDatum(rc->rnode.spcNode);
		values[1] = ObjectIdGetDatum(rc->rnode.relNode);
		values[2] = Int64GetDatum(rc->blocks);
		values[3] = Int64GetDatum(rc->hits);
		values[4] = Int64GetDatum(rc->misses);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

Datum
ssd_cache_reset_stats(PG_FUNCTION_ARGS)
{
	ssd_cache_reset_counters();
	PG_RETURN_VOID();
}

/* Drop a relation's pages from the cache; returns how many were dropped. */
Datum
ssd_cache_evict(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	RelFileNode rnode;

	rel = relation_open(relid, AccessShareLock);
	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" has no storage to evict", RelationGetRelationName(rel)),
				 errdetail("Only tables, indexes, sequences, materialized views and TOAST tables are cached.")));
	rnode = rel->rd_node;
	relation_close(rel, AccessShareLock);
	if (!ssd_cache_enabled())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ssd_cache is not enabled"),
				 errhint("Set ssd_cache.path and restart the server.")));
	PG_RETURN_INT64(ssd_cache_evict_relation(rnode));
}

/* ssd_cache_verify(): (checked, mismatched) pages, comparing with disk. */
Datum
ssd_cache_verify_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	int64		checked,
				mismatched;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	ssd_cache_verify(&checked, &mismatched);
	values[0] = Int64GetDatum(checked);
	values[1] = Int64GetDatum(mismatched);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * ssd_cache_lookup_cost(probes): nanoseconds per directory lookup of a page
 * that is not cached, the work every read that misses shared_buffers and
 * the cache adds (hash, partition lock, probe).  The probed pages belong to
 * a relfilenode no relation uses.
 */
Datum
ssd_cache_lookup_cost(PG_FUNCTION_ARGS)
{
	int32		probes = PG_GETARG_INT32(0);
	BufferTag	tag;
	instr_time	start,
				elapsed;
	int32		i,
				found = 0;

	if (probes < 1 || probes > 100000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("probes must be between 1 and 100000000")));
	if (!ssd_cache_enabled())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ssd_cache is not enabled"),
				 errhint("Set ssd_cache.path and restart the server.")));
	memset(&tag, 0, sizeof(tag));
	tag.rnode.spcNode = InvalidOid;
	tag.rnode.dbNode = InvalidOid;
	tag.rnode.relNode = InvalidOid;
	tag.forkNum = MAIN_FORKNUM;
	INSTR_TIME_SET_CURRENT(start);
	for (i = 0; i < probes; i++)
	{
		tag.blockNum = (BlockNumber) i;
		found += ssd_cache_contains(&tag);
	}
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	if (found != 0)
		elog(ERROR, "ssd_cache_lookup_cost: found pages of relfilenode 0");
	PG_RETURN_FLOAT8(INSTR_TIME_GET_DOUBLE(elapsed) * 1e9 / probes);
}
