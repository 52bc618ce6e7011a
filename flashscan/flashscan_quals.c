/*-------------------------------------------------------------------------
 *
 * flashscan_quals.c
 *	  Which of a FlashScan's quals may run over a whole group of rows before
 *	  the group's first row is returned.
 *
 * Heap runs a scan's quals row by row, as the rows are asked for: a LIMIT,
 * an EXISTS or a cursor stops it early, and an UPDATE's qual that reads the
 * table sees the rows updated so far.  FlashScan's selection first runs the
 * quals over the predicate columns of a group at once, before reading the
 * other columns of the rows that pass.  Running a qual on more rows than
 * heap would, or sooner, is invisible only when evaluating it on any row
 * can neither fail nor have an effect.  That is decided here, at plan time
 * (an initplan's output is known only to the planner); the executor runs
 * the quals up to the first one that is not safe over the group, and that
 * one and the rest row by row, as ExecScan's qual.
 *
 * Safe: columns, constants, parameters of the statement (values, not
 * PL/pgSQL's fetched ones) or of an outer row, AND/OR/NOT, CASE, COALESCE,
 * IS [NOT] NULL, IS TRUE..., relabelings, rows and field selection,
 * one-dimensional ARRAY[], CURRENT_DATE and the clock's other values;
 * leakproof functions and operators (no error on any input, no effect);
 * comparisons of PostgreSQL's own btree families over its own scalar types
 * (total over valid values: numeric, text, timestamps, ...), which are not
 * all marked leakproof; LIKE with a constant pattern that does not end in
 * its escape character.  Text operations only with a collation, and a
 * nondeterministic one only for btree comparisons.
 *
 * Like any stable expression in PostgreSQL, an early qual that reads a
 * setting (TimeZone for date against timestamptz) sees its value when the
 * group is read, not when each row is returned: a cursor whose fetches are
 * separated by SET may see the earlier value for the rest of a group.
 *
 * Not safe: anything volatile; functions and operators that may raise an
 * error on some rows (1 / (a - 30), a + b overflowing, casts, domain
 * checks, subscripts); comparisons of arrays, records, ranges and enums
 * (they call their elements' comparisons, which may be a user's or
 * missing); LIKE against a pattern read from a column, ILIKE and regular
 * expressions; sub-selects, and parameters set by an initplan (evaluating
 * one runs its query, which heap may never do: "a = 1 OR a > (SELECT
 * nextval('s'))").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_type_d.h"
#include "nodes/nodeFuncs.h"
#include "nodes/params.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "flashscan.h"

/* One of PostgreSQL's own scalar base types (not an array or pseudo-type). */
static bool
builtin_scalar_type(Oid typid)
{
	return OidIsValid(typid) && typid < FirstNormalObjectId &&
		get_typtype(typid) == TYPTYPE_BASE && !OidIsValid(get_element_type(typid));
}

/* A LIKE whose pattern cannot make it fail: constant, no trailing escape. */
static bool
safe_like(Oid funcid, Oid collid, Node *pattern)
{
	Const	   *c = (Const *) pattern;
	text	   *t;
	const char *p;
	int			len,
				backslashes = 0;

	if (funcid != F_TEXTLIKE && funcid != F_TEXTNLIKE &&
		funcid != F_BPCHARLIKE && funcid != F_BPCHARNLIKE)
		return false;
	/* LIKE refuses nondeterministic collations, on every row it tests */
	if (!OidIsValid(collid) || !get_collation_isdeterministic(collid))
		return false;
	if (!IsA(c, Const) || c->constisnull || c->consttype != TEXTOID)
		return false;
	t = DatumGetTextPP(c->constvalue);
	p = VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);
	while (len > 0 && p[len - 1] == '\\')
	{
		backslashes++;
		len--;
	}
	return backslashes % 2 == 0;
}

/*
 * Is opno a comparison of one of PostgreSQL's own btree families?  (Anyone
 * may put another operator, a regular expression match, into a family of
 * their own.)
 */
static bool
builtin_btree_comparison(Oid opno)
{
	ListCell   *lc;

	foreach(lc, get_op_btree_interpretation(opno))
		if (((OpBtreeInterpretation *) lfirst(lc))->opfamily_id < FirstNormalObjectId)
			return true;
	return false;
}

/*
 * Would the call fail for its collation on any row it is run on?  Text
 * comparisons need one (two columns of different implicit collations give
 * none), and only btree comparisons accept a nondeterministic one
 * (starts_with(), leakproof, refuses it).
 */
static bool
collation_fails(Oid collid, List *args, bool btree_comparison)
{
	ListCell   *lc;
	bool		collatable = false;

	foreach(lc, args)
		collatable = collatable || type_is_collatable(exprType(lfirst(lc)));
	if (!collatable)
		return false;
	if (!OidIsValid(collid))
		return true;
	return !btree_comparison && !get_collation_isdeterministic(collid);
}

/*
 * May the operator fail on some row, or have an effect?  pattern: the
 * argument a LIKE would take its pattern from, or NULL.
 */
static bool
unsafe_operator(Oid opno, Oid funcid, Oid collid, List *args, Node *pattern)
{
	bool		btree = builtin_btree_comparison(opno);
	bool		safe = get_func_leakproof(funcid);

	if (!safe && opno < FirstNormalObjectId)
	{
		Oid			left,
					right;

		op_input_types(opno, &left, &right);
		safe = (btree && builtin_scalar_type(left) && builtin_scalar_type(right)) ||
			(pattern != NULL && safe_like(funcid, collid, pattern));
	}
	return !safe || collation_fails(collid, args, btree);
}

/* Is paramid the output of an initplan of this query level or one above? */
static bool
initplan_param(PlannerInfo *root, int paramid)
{
	for (; root != NULL; root = root->parent_root)
	{
		ListCell   *lc;

		foreach(lc, root->init_plans)
			if (list_member_int(((SubPlan *) lfirst(lc))->setParam, paramid))
				return true;
	}
	return false;
}

typedef struct EarlyContext
{
	PlannerInfo *root;
	bool		extern_params;	/* reads a parameter of the statement */
} EarlyContext;

static bool
unsafe_walker(Node *node, EarlyContext *cxt)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
		case T_List:
		case T_BoolExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_RelabelType:
		case T_CaseExpr:
		case T_CaseWhen:
		case T_CaseTestExpr:
		case T_CoalesceExpr:
		case T_RowExpr:
		case T_FieldSelect:
			break;
		case T_SQLValueFunction:
			/* the clock's; the user's name fails once the role is dropped */
			switch (((SQLValueFunction *) node)->op)
			{
				case SVFOP_CURRENT_DATE:
				case SVFOP_CURRENT_TIME:
				case SVFOP_CURRENT_TIME_N:
				case SVFOP_CURRENT_TIMESTAMP:
				case SVFOP_CURRENT_TIMESTAMP_N:
				case SVFOP_LOCALTIME:
				case SVFOP_LOCALTIME_N:
				case SVFOP_LOCALTIMESTAMP:
				case SVFOP_LOCALTIMESTAMP_N:
					break;
				default:
					return true;
			}
			break;
		case T_Param:
			if (((Param *) node)->paramkind == PARAM_EXTERN)
				cxt->extern_params = true;
			else if (((Param *) node)->paramkind == PARAM_EXEC &&
					 initplan_param(cxt->root, ((Param *) node)->paramid))
				return true;
			break;
		case T_ArrayExpr:
			/* sub-arrays of different dimensions are an error */
			if (((ArrayExpr *) node)->multidims)
				return true;
			break;
		case T_MinMaxExpr:
			if (!builtin_scalar_type(((MinMaxExpr *) node)->minmaxtype) ||
				collation_fails(((MinMaxExpr *) node)->inputcollid,
								((MinMaxExpr *) node)->args, true))
				return true;
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			{
				OpExpr	   *op = (OpExpr *) node;

				set_opfuncid(op);
				if (unsafe_operator(op->opno, op->opfuncid, op->inputcollid, op->args,
									list_length(op->args) == 2 ? lsecond(op->args) : NULL))
					return true;
			}
			break;
		case T_ScalarArrayOpExpr:
			{
				ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) node;

				set_sa_opfuncid(op);
				if (unsafe_operator(op->opno, op->opfuncid, op->inputcollid, op->args, NULL))
					return true;
			}
			break;
		case T_FuncExpr:
			if (!get_func_leakproof(((FuncExpr *) node)->funcid) ||
				collation_fails(((FuncExpr *) node)->inputcollid,
								((FuncExpr *) node)->args, false))
				return true;
			break;
		default:
			return true;		/* sub-selects, casts through text, domains, ... */
	}
	return expression_tree_walker(node, unsafe_walker, cxt);
}

/*
 * May the qual run over a whole group ahead of the rows?
 * FLASHSCAN_EARLY_NO, _YES, or _UNLESS_FETCHED: yes if the statement's
 * parameters are values, no if they are fetched as they are read
 * (PL/pgSQL's, whose fetch may fail on a row: a record field whose type
 * changed, a record not assigned yet).
 */
int
flashscan_early_flag(PlannerInfo *root, Node *qual)
{
	EarlyContext cxt = {root, false};

	if (contain_volatile_functions(qual) || unsafe_walker(qual, &cxt))
		return FLASHSCAN_EARLY_NO;
	return cxt.extern_params ? FLASHSCAN_EARLY_UNLESS_FETCHED : FLASHSCAN_EARLY_YES;
}

/* flashscan_early_flag() of each clause of quals, in order. */
List *
flashscan_early_flags(PlannerInfo *root, List *quals)
{
	List	   *flags = NIL;
	ListCell   *lc;

	foreach(lc, quals)
		flags = lappend_int(flags, flashscan_early_flag(root, lfirst(lc)));
	return flags;
}
