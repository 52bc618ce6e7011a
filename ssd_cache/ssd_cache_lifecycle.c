/*-------------------------------------------------------------------------
 *
 * ssd_cache_lifecycle.c
 *	  Work that changes data files without going through smgr, caught at
 *	  the SQL level so that the cache never keeps pages of files that were
 *	  removed or replaced behind its back.
 *
 *	DROP DATABASE			removes the database's directories without
 *							per-relation smgr calls.  The object-access hook
 *							sees the drop before its last checks (another
 *							session connected, a template), which may still
 *							refuse it: it forgets the clean pages only.
 *							Once the command succeeded (its buffers were
 *							dropped, so nothing can write the database any
 *							more) every page goes, fresher ones too.
 *	ALTER DATABASE ... SET TABLESPACE
 *							copies the files to the new tablespace and
 *							removes the old ones: suspend write-back for the
 *							database and write back its fresher pages, so
 *							the files copied are complete, then invalidate
 *							the database (its pages are cached under the old
 *							tablespace, and would come back if the database
 *							ever moved back).
 *	CREATE DATABASE			with STRATEGY FILE_COPY copies the template's
 *							files: the same for the template, for the time
 *							of the command.  The new database's OID may have
 *							belonged to a database dropped while its drop
 *							could not be seen (WAL replay on a standby), so
 *							its pages are forgotten when the new database's
 *							catalog row is created, before anything is
 *							copied.
 *
 * Each invalidation scans the slot array; these are rare, heavyweight
 * commands already.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"

#include "commands/defrem.h"

#include "ssd_cache_directory.h"
#include "ssd_cache_lifecycle.h"
#include "ssd_cache_writeback.h"

static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_ProcessUtility_hook = NULL;

static void
ssd_cache_object_access(ObjectAccessType access, Oid classId, Oid objectId,
						int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (classId != DatabaseRelationId)
		return;
	if (access == OAT_DROP)
		ssd_cache_invalidate_database(objectId, true);

	/*
	 * A new database's OID: whatever is cached under it is an older
	 * database's.  Its pages go now, before CREATE DATABASE fills it:
	 * afterwards the new pages may be in the cache already (WAL_LOG copies
	 * through shared buffers, whose writes the cache may absorb).
	 */
	if (access == OAT_POST_CREATE)
		ssd_cache_invalidate_database(objectId, false);
}

/* The value of option "name" of a database statement, or NULL. */
static DefElem *
db_option(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
		if (strcmp(((DefElem *) lfirst(lc))->defname, name) == 0)
			return (DefElem *) lfirst(lc);
	return NULL;
}

static void
ssd_cache_process_utility(PlannedStmt *pstmt, const char *queryString,
						  bool readOnlyTree, ProcessUtilityContext context,
						  ParamListInfo params, QueryEnvironment *queryEnv,
						  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	Oid			copied = InvalidOid;	/* a database whose files get copied */
	Oid			dropped = InvalidOid;

	if (IsA(parsetree, DropdbStmt))
		dropped = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);

	if (IsA(parsetree, AlterDatabaseStmt) &&
		db_option(((AlterDatabaseStmt *) parsetree)->options, "tablespace"))
		copied = get_database_oid(((AlterDatabaseStmt *) parsetree)->dbname, true);
	else if (IsA(parsetree, CreatedbStmt))
	{
		DefElem    *tmpl = db_option(((CreatedbStmt *) parsetree)->options, "template");

		/* WAL_LOG reads through shared buffers; FILE_COPY reads the files. */
		copied = get_database_oid(tmpl ? defGetString(tmpl) : "template1", true);
	}

	if (OidIsValid(copied))
	{
		ssd_cache_wb_suspend_database(copied);
		if (IsA(parsetree, AlterDatabaseStmt))
			ssd_cache_invalidate_database(copied, true);
	}
	PG_TRY();
	{
		if (prev_ProcessUtility_hook)
			prev_ProcessUtility_hook(pstmt, queryString, readOnlyTree, context,
									 params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		if (OidIsValid(copied))
			ssd_cache_wb_resume_database(copied);
	}
	PG_END_TRY();

	if (OidIsValid(dropped))
		ssd_cache_invalidate_database(dropped, false);
}

void
ssd_cache_lifecycle_install(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = ssd_cache_object_access;
	prev_ProcessUtility_hook = ProcessUtility_hook;
	ProcessUtility_hook = ssd_cache_process_utility;
}
