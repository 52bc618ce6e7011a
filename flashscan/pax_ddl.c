/*-------------------------------------------------------------------------
 *
 * pax_ddl.c
 *	  Guards on DDL that reaches a pax table without passing through the
 *	  table access method.
 *
 * ALTER TABLE ADD COLUMN changes a table's shape without calling the access
 * method (no rewrite), so a limit of the on-disk format that depends on the
 * attribute count is checked from the object access hook, which
 * ATExecAddColumn calls for the new attribute once its number is known.
 *
 * ALTER TABLE and RENAME change a table's catalog rows first and may then
 * read the table (a rewrite), which writes the rows this transaction
 * buffered: when logical decoding reads those rows from their groups, they
 * are written before the statement (ProcessUtility hook), so that they are
 * decoded under the catalog they were inserted under, as heap's rows are.
 *
 * Publications: pax changes can be decoded only when flashscan was loaded
 * at server start (pax_decode.c).  Without that, a publication that would
 * cover a pax table (FOR TABLE, FOR TABLES IN SCHEMA, FOR ALL TABLES) is
 * refused by the extension's event trigger, instead of replicating nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_publication_namespace.h"
#include "catalog/pg_publication_rel.h"
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/syscache.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "pax.h"

static object_access_hook_type prev_object_access_hook = NULL;

/* A pax table among relid and its partitions, or in namespace nsp (or anywhere: InvalidOid). */
static Oid
find_pax_table(Oid relid, Oid nsp, Oid pax_am)
{
	Oid			found = InvalidOid;

	if (OidIsValid(relid))
	{
		ListCell   *lc;

		foreach(lc, find_all_inheritors(relid, NoLock, NULL))
			if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_RELATION &&
				!OidIsValid(found))
			{
				Relation	rel = relation_open(lfirst_oid(lc), NoLock);

				if (rel->rd_rel->relam == pax_am)
					found = lfirst_oid(lc);
				relation_close(rel, NoLock);
			}
	}
	else
	{
		Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
		SysScanDesc scan = systable_beginscan(pg_class, InvalidOid, false, NULL, 0, NULL);
		HeapTuple	tup;

		while (!OidIsValid(found) && HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

			if (c->relam == pax_am && c->relkind == RELKIND_RELATION &&
				c->relpersistence == RELPERSISTENCE_PERMANENT &&
				(!OidIsValid(nsp) || c->relnamespace == nsp))
				found = c->oid;
		}
		systable_endscan(scan);
		table_close(pg_class, AccessShareLock);
	}
	return found;
}

/*
 * A pax table among the members (tables, or schemas when by_schema) a
 * publication's rows in catalog name.
 */
static Oid
publication_member_pax_table(Oid catalog, Oid pubid, AttrNumber pubatt, AttrNumber memberatt,
							 bool by_schema, Oid pax_am)
{
	Relation	rel = table_open(catalog, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	Oid			found = InvalidOid;

	while (!OidIsValid(found) && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		pub = heap_getattr(tup, pubatt, RelationGetDescr(rel), &isnull);
		Oid			member;

		if (isnull || DatumGetObjectId(pub) != pubid)
			continue;
		member = DatumGetObjectId(heap_getattr(tup, memberatt, RelationGetDescr(rel), &isnull));
		if (!isnull)
			found = by_schema ? find_pax_table(InvalidOid, member, pax_am) :
				find_pax_table(member, InvalidOid, pax_am);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * The event trigger pax_publication_guard (ddl_command_end of CREATE and
 * ALTER PUBLICATION): refuse a publication that covers a pax table whose
 * changes this server cannot decode.  An event trigger, not a hook: the
 * statement may not have loaded this library yet.
 */
PG_FUNCTION_INFO_V1(pax_check_publication);

Datum
pax_check_publication(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	const char *pubname = NULL;
	Oid			pax_am = get_table_am_oid("pax", true);
	Oid			pubid;
	Oid			found = InvalidOid;
	HeapTuple	tup;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("pax_check_publication() must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;
	if (IsA(trigdata->parsetree, CreatePublicationStmt))
		pubname = ((CreatePublicationStmt *) trigdata->parsetree)->pubname;
	else if (IsA(trigdata->parsetree, AlterPublicationStmt))
		pubname = ((AlterPublicationStmt *) trigdata->parsetree)->pubname;
	if (pubname == NULL || !OidIsValid(pax_am) || pax_logical_decoding_ready())
		PG_RETURN_VOID();
	pubid = get_publication_oid(pubname, true);
	if (!OidIsValid(pubid))
		PG_RETURN_VOID();

	tup = SearchSysCache1(PUBLICATIONOID, ObjectIdGetDatum(pubid));
	if (HeapTupleIsValid(tup))
	{
		if (((Form_pg_publication) GETSTRUCT(tup))->puballtables)
			found = find_pax_table(InvalidOid, InvalidOid, pax_am);
		ReleaseSysCache(tup);
	}
	if (!OidIsValid(found))
		found = publication_member_pax_table(PublicationRelRelationId, pubid,
											 Anum_pg_publication_rel_prpubid,
											 Anum_pg_publication_rel_prrelid, false, pax_am);
	if (!OidIsValid(found))
		found = publication_member_pax_table(PublicationNamespaceRelationId, pubid,
											 Anum_pg_publication_namespace_pnpubid,
											 Anum_pg_publication_namespace_pnnspid, true, pax_am);
	if (OidIsValid(found))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot publish pax table \"%s\"", get_rel_name(found)),
				 errdetail("Changes of pax tables are logically decoded only when flashscan is loaded at server start."),
				 errhint("Add flashscan to shared_preload_libraries and restart the server.")));
	PG_RETURN_VOID();
}

static void
pax_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	/* a new column (subId is its number) of a table with storage */
	if (access == OAT_POST_CREATE && classId == RelationRelationId && subId > 0)
	{
		Relation	rel = relation_open(objectId, NoLock);

		if (rel->rd_tableam == pax_table_am_routine())
			pax_check_column_count(rel, subId);
		relation_close(rel, NoLock);
	}
}

static ProcessUtility_hook_type prev_process_utility = NULL;

static void
pax_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, AlterTableStmt) || IsA(parsetree, RenameStmt))
		pax_flush_decodable_buffers();
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

void
pax_ddl_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = pax_object_access;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = pax_process_utility;
}
