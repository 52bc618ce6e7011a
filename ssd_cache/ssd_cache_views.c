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
#include "ssd_cache_writeback.h"

PG_FUNCTION_INFO_V1(ssd_cache_stats_internal);
PG_FUNCTION_INFO_V1(ssd_cache_relation_blocks);
PG_FUNCTION_INFO_V1(ssd_cache_reset_stats);
PG_FUNCTION_INFO_V1(ssd_cache_evict);
PG_FUNCTION_INFO_V1(ssd_cache_verify_sql);
PG_FUNCTION_INFO_V1(ssd_cache_lookup_cost);

/* Names of the counters, as ssd_cache_stats_internal's columns. */
static const char *const counter_names[SSD_NCOUNTERS] = {
	[SSD_HITS] = "hits",
	[SSD_MISSES] = "misses",
	[SSD_ADMISSIONS] = "admissions",
	[SSD_SEQUENTIAL] = "sequential_reads",
	[SSD_REFUSALS] = "refusals",
	[SSD_EVICTIONS] = "evictions",
	[SSD_INVALIDATIONS] = "invalidations",
	[SSD_OVERWRITES] = "overwrites",
	[SSD_SSD_READS] = "ssd_reads",
	[SSD_SSD_WRITES] = "ssd_writes",
	[SSD_DISK_READS] = "disk_reads",
	[SSD_DISK_WRITES] = "disk_writes",
	[SSD_DIR_WRITES] = "directory_writes",
	[SSD_DIR_WRITES_ADMISSION] = "directory_writes_admission",
	[SSD_DIR_WRITES_EVICTION] = "directory_writes_eviction",
	[SSD_DIR_WRITES_FRESHER] = "directory_writes_fresher",
	[SSD_ABSORBED] = "absorbed_writes",
	[SSD_ABSORBED_CHECKPOINT] = "checkpoint_writes_absorbed",
	[SSD_ABSORBED_ADMISSIONS] = "absorbed_admissions",
	[SSD_WRITE_BACKS] = "write_backs",
};

/* One output column by name: its value, or NULL if there is none. */
typedef struct StatColumn
{
	const char *name;
	Datum		value;
	bool		isnull;
} StatColumn;

static void
stat_put(StatColumn *cols, int *n, const char *name, Datum value, bool isnull)
{
	cols[*n].name = name;
	cols[*n].value = value;
	cols[*n].isnull = isnull;
	(*n)++;
}

/*
 * One row: configuration, state and every counter.  Columns are filled by
 * name, so this library serves the SQL definitions of every extension
 * version (0.1 had fewer columns) until ALTER EXTENSION ... UPDATE.
 */
Datum
ssd_cache_stats_internal(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	StatColumn	cols[32 + SSD_NCOUNTERS];
	Datum	   *values;
	bool	   *nulls;
	int64		counters[SSD_NCOUNTERS];
	const char *path = ssd_cache_configured_path();
	const char *mode;
	const char *admission_io = NULL;
	char	   *wb_refused = NULL;
	char		problem[512];
	bool		has_problem;
	int			i,
				j,
				n = 0;

	ssd_cache_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

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
	else if (ssd_cache_write_back_active(&wb_refused))
	{
		mode = ssd_cache_wb_lazy_cleaning() ? "lazy cleaning" : "write-back";
		if (!has_problem && ssd_cache_wb_suspension())
		{
			strlcpy(problem, ssd_cache_wb_suspension(), sizeof(problem));
			has_problem = true;
		}
	}
	else
	{
		mode = "write-through";
		if (wb_refused && !has_problem)
		{
			strlcpy(problem, wb_refused, sizeof(problem));
			has_problem = true;
		}
	}
	if (ssd_cache_enabled())
		admission_io = ssd_cache_file_admission_io();

	stat_put(cols, &n, "mode", CStringGetTextDatum(mode), false);
	stat_put(cols, &n, "problem", has_problem ? CStringGetTextDatum(problem) : (Datum) 0, !has_problem);
	stat_put(cols, &n, "policy",
			 CStringGetTextDatum(ssd_cache_policy == SSD_POLICY_TAC ? "tac" : "clock"), false);
	stat_put(cols, &n, "hook_active", BoolGetDatum(ssd_cache_hook_active()), false);
	stat_put(cols, &n, "path", path ? CStringGetTextDatum(path) : (Datum) 0, path == NULL);
	stat_put(cols, &n, "size_bytes", Int64GetDatum((int64) ssd_cache_nslots() * BLCKSZ), false);
	stat_put(cols, &n, "slots", Int64GetDatum((int64) ssd_cache_nslots()), false);
	stat_put(cols, &n, "used_slots", Int64GetDatum((int64) ssd_cache_used_slots()), false);
	stat_put(cols, &n, "admission_queue", Int64GetDatum((int64) ssd_cache_admit_queue_length()), false);
	stat_put(cols, &n, "preparation_ms", Float8GetDatum(ssd_cache_preparation_ms()), false);
	stat_put(cols, &n, "admission_io",
			 admission_io ? CStringGetTextDatum(admission_io) : (Datum) 0, admission_io == NULL);
	ssd_cache_read_counters(counters);
	for (i = 0; i < SSD_NCOUNTERS; i++)
		stat_put(cols, &n, counter_names[i], Int64GetDatum(counters[i]), false);
	stat_put(cols, &n, "header_writes",
			 Int64GetDatum(ssd_cache_enabled() ? ssd_cache_file_header_writes() : 0), false);
	stat_put(cols, &n, "errors", Int64GetDatum(ssd_cache_error_count()), false);
	stat_put(cols, &n, "agings", Int64GetDatum((int64) ssd_cache_agings()), false);
	stat_put(cols, &n, "fresher_pages", Int64GetDatum(ssd_cache_fresher_pages()), false);
	stat_put(cols, &n, "free_slots", Int64GetDatum((int64) ssd_cache_free_slots()), false);

	values = palloc0(sizeof(Datum) * tupdesc->natts);
	nulls = palloc(sizeof(bool) * tupdesc->natts);
	for (j = 0; j < tupdesc->natts; j++)
	{
		const char *attname = NameStr(TupleDescAttr(tupdesc, j)->attname);

		nulls[j] = true;
		for (i = 0; i < n; i++)
			if (strcmp(cols[i].name, attname) == 0)
			{
				values[j] = cols[i].value;
				nulls[j] = cols[i].isnull;
				break;
			}
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* (tablespace, relfilenode, cached_blocks, hits, misses) for this database. */
Datum
ssd_cache_relation_blocks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *counts;
	ListCell   *lc;

	ssd_cache_require_preload();
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
	ssd_cache_require_preload();
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

	ssd_cache_require_preload();
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

/*
 * ssd_cache_verify(): (checked, mismatched[, fresher]) pages, comparing
 * with disk (0.2 declares the first two).
 */
Datum
ssd_cache_verify_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		checked,
				mismatched,
				fresher;

	ssd_cache_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	ssd_cache_verify(&checked, &mismatched, &fresher);
	values[0] = Int64GetDatum(checked);
	values[1] = Int64GetDatum(mismatched);
	values[2] = Int64GetDatum(fresher);
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

	ssd_cache_require_preload();
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
