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
 * Publications: pax changes can be decoded only when flashscan was loaded
 * at server start (pax_decode.c).  Without that, a publication that would
 * cover a pax table (FOR TABLE, FOR TABLES IN SCHEMA, FOR ALL TABLES) is
 * refused when its catalog row is made, instead of replicating nothing.
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
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "pax.h"

static object_access_hook_type prev_object_access_hook = NULL;

/*
 * A column of the catalog row with this oid, read with SnapshotSelf: the
 * hook runs before the command that made the row ends.
 */
static Oid
new_catalog_oid_column(Oid catalog, Oid index, Oid objectId, AttrNumber attnum, bool *isnull)
{
	Relation	rel = table_open(catalog, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			result = InvalidOid;

	*isnull = true;
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objectId));
	scan = systable_beginscan(rel, index, true, SnapshotSelf, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Datum		d = heap_getattr(tup, attnum, RelationGetDescr(rel), isnull);

		if (!*isnull)
			result = (attnum == Anum_pg_publication_puballtables) ?
				(Oid) DatumGetBool(d) : DatumGetObjectId(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

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

/* Refuse a publication object that covers a pax table whose changes cannot be decoded. */
static void
check_publication_object(Oid classId, Oid objectId)
{
	Oid			pax_am = get_table_am_oid("pax", true);
	Oid			found = InvalidOid;
	bool		isnull;

	if (!OidIsValid(pax_am) || pax_logical_decoding_ready())
		return;
	if (classId == PublicationRelRelationId)
	{
		Oid			relid = new_catalog_oid_column(PublicationRelRelationId,
												   PublicationRelObjectIndexId, objectId,
												   Anum_pg_publication_rel_prrelid, &isnull);

		if (!isnull)
			found = find_pax_table(relid, InvalidOid, pax_am);
	}
	else if (classId == PublicationNamespaceRelationId)
	{
		Oid			nsp = new_catalog_oid_column(PublicationNamespaceRelationId,
												 PublicationNamespaceObjectIndexId, objectId,
												 Anum_pg_publication_namespace_pnnspid, &isnull);

		if (!isnull)
			found = find_pax_table(InvalidOid, nsp, pax_am);
	}
	else if (classId == PublicationRelationId)
	{
		bool		alltables = new_catalog_oid_column(PublicationRelationId,
													   PublicationObjectIndexId, objectId,
													   Anum_pg_publication_puballtables, &isnull);

		if (!isnull && alltables)
			found = find_pax_table(InvalidOid, InvalidOid, pax_am);
	}
	if (OidIsValid(found))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot publish pax table \"%s\"", get_rel_name(found)),
				 errdetail("Changes of pax tables are logically decoded only when flashscan is loaded at server start."),
				 errhint("Add flashscan to shared_preload_libraries and restart the server.")));
}

static void
pax_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_POST_CREATE &&
		(classId == PublicationRelRelationId || classId == PublicationNamespaceRelationId ||
		 classId == PublicationRelationId))
		check_publication_object(classId, objectId);

	/* a new column (subId is its number) of a table with storage */
	if (access == OAT_POST_CREATE && classId == RelationRelationId && subId > 0)
	{
		Relation	rel = relation_open(objectId, NoLock);

		if (rel->rd_tableam == pax_table_am_routine())
			pax_check_column_count(rel, subId);
		relation_close(rel, NoLock);
	}
}

void
pax_ddl_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = pax_object_access;
}
