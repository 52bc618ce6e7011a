/*-------------------------------------------------------------------------
 *
 * ssdkit_path.h
 *	  A CustomPath over one base relation, as the ssdkit custom scans
 *	  (SSD Sort, FlashScan) offer them from set_rel_pathlist_hook.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_PATH_H
#define SSDKIT_PATH_H

#include "postgres.h"

#include "access/transam.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"

/*
 * A new CustomPath scanning rel and producing its reltarget: unparameterized,
 * not parallel, rel->rows rows; the caller sets costs, pathkeys, flags and
 * its private data.
 */
static inline CustomPath *
ssdkit_base_custom_path(RelOptInfo *rel, const CustomPathMethods *methods)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = rel->rows;
	cpath->path.pathkeys = NIL;
	cpath->methods = methods;
	return cpath;
}

static inline bool
ssdkit_user_defined(Oid funcid, void *context)
{
	return funcid >= FirstNormalObjectId;
}

/*
 * Does the expression call a function (or an operator's) that a user
 * defined?  Such a call may be costly, or say it ran (RAISE, track_functions):
 * an executor node that evaluates an expression a second time, where the
 * plain plan evaluates it once, must not do so with one of these.
 */
static inline bool
ssdkit_calls_user_functions(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, ssdkit_user_defined, context))
		return true;
	return expression_tree_walker(node, ssdkit_calls_user_functions, context);
}

#endif							/* SSDKIT_PATH_H */
