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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "utils/rel.h"

#include "pax.h"

static object_access_hook_type prev_object_access_hook = NULL;

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

void
pax_ddl_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = pax_object_access;
}
