/*-------------------------------------------------------------------------
 *
 * flashscan_agg.c
 *	  FlashScan Aggregate: count, sum and avg over a FlashScan of one pax
 *	  table, grouped or not, computed in exact 128-bit decimal arithmetic.
 *
 * A report query over a pax table (TPC-H Q1: eight sums and averages of
 * numeric expressions over six million rows, four groups) spends most of
 * its time not reading the columns, which FlashScan does in a fraction of
 * it, but in the aggregation: each row's expressions and transition
 * functions run as numeric arithmetic on palloc'd values, several hundred
 * nanoseconds a row.  This node takes the rows from its FlashScan child and
 * keeps, per group, each aggregate as a 128-bit integer at the value's
 * display scale (flashscan_decimal.c): a sum is an integer addition, a
 * product an integer multiplication, and the results are the numerics
 * PostgreSQL computes, to the last digit and display scale.
 *
 * What it takes: a query whose only relation is a pax table FlashScan can
 * read, GROUP BY expressions with hash support (no grouping sets), and only
 * count(*), count(x), and sum() and avg() of numeric, bigint, integer and
 * smallint expressions made of columns, constants, +, - and *, and casts of
 * integers to numeric; no DISTINCT, ORDER BY or FILTER in an aggregate.
 * HAVING runs over the node's groups.  A row whose value does not fit in
 * 128 bits, is NaN or infinite, or whose integer arithmetic overflows its
 * type is computed by PostgreSQL's own expression (which raises the errors
 * it raises anywhere) and summed with numeric_add(): the fast path decides
 * nothing about results.
 *
 * Groups are found by the raw bytes of their keys, the cheap test; at the
 * end, groups whose keys differ in bytes but are equal by the type's
 * equality (numeric 1.0 and 1.00, char(n) padding, collations) are merged
 * through a TupleHashTable with the grouping operators' hash and equality
 * functions, so the groups are exactly the ones HashAggregate forms.  All
 * groups stay in memory: the planner offers the path only when its group
 * estimate fits in hash_mem.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "port/atomics.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/ruleutils.h"
#include "utils/selfuncs.h"

#include "flashscan.h"
#include "ssdkit_path.h"

bool		flashscan_enable_aggregate = true;

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/* The aggregates the node computes. */
typedef enum AggKind
{
	AK_COUNT_STAR,
	AK_COUNT,					/* count(x): rows where x is not null */
	AK_SUM_NUMERIC,				/* sum() returning numeric */
	AK_SUM_INT8,				/* sum(int2), sum(int4): bigint */
	AK_AVG						/* avg() of any of the above: numeric */
} AggKind;

/*
 * An argument is compiled to a postfix program of (op, a, b) triples over
 * the child's output columns.  Integer operations carry the bounds of
 * their result type: a result outside them is PostgreSQL's "out of range"
 * error, which the row's slow path raises.
 */
typedef enum AggOp
{
	OP_COLUMN,					/* a = decoded column (see AP_COLUMNS) */
	OP_NOTNULL,					/* a = child column: count(x)'s test */
	OP_CONST,					/* a = index into the constants */
	OP_ADD,						/* b = result bytes (0 for numeric) */
	OP_SUB,
	OP_MUL,
	OP_NEG
} AggOp;

#define MAX_STACK 16

/* What run_program64() made of a row. */
#define RUN_VALUE	0
#define RUN_NULL	1
#define RUN_WIDE	2			/* needs 128 bits: run_program() */
#define RUN_SLOW	3			/* PostgreSQL must compute it */

#define ARG_V64		0
#define ARG_V128	1
#define ARG_NULL	2
#define ARG_NUMERIC	3			/* a numeric only numeric_add() takes */

#define COL_VALUE	0
#define COL_NULL	1
#define COL_SLOW	2

/* custom_private: one list per item, in this order */
enum AggPrivate
{
	AP_KEY_COLUMNS,				/* child columns of the group keys */
	AP_COLUMNS,					/* child columns the programs decode, once a row */
	AP_COLUMN_LENS,				/* their type: 0 numeric, else integer bytes */
	AP_KEY_EQOPS,				/* their equality operators */
	AP_AGG_KINDS,				/* AggKind per aggregate */
	AP_AGG_ARGS,				/* per aggregate, its argument, or -1 */
	AP_COUNT_COLUMNS,			/* per aggregate, count(column)'s column, or -1 */
	AP_PROGRAMS,				/* an integer list per argument */
	AP_CONSTS,					/* Const nodes the programs use */
	AP_SLOW_EXPRS,				/* per argument, the expression on the
								 * child's row (OUTER_VAR) */
	AP_MODE,					/* AggMode */
	AP_PARTIAL_COUNTS,			/* per aggregate, its count's column in a
								 * participant's row */
	AP_PARTIAL_SUMS,			/* ... and its sum's, or -1 */
	AP_COUNT
};

/*
 * Serial, or in parallel: each participant aggregates the rows its
 * Parallel FlashScan claims and returns, per group, the keys and per
 * aggregate the count and (sum, avg) the sum as a numeric; above the
 * Gather, the combining node adds those up and computes the results.
 */
typedef enum AggMode
{
	AGG_FINAL,
	AGG_PARTIAL,
	AGG_COMBINE
} AggMode;

typedef struct AggAcc
{
	int128		sum;			/* the fast part, x * 10^scale */
	int32		scale;			/* -1 before the first fast value */
	int64		count;			/* values counted (non-null inputs) */
	Datum		slow;			/* numeric sum of the values the fast path
								 * could not take, or 0 */
} AggAcc;

typedef struct AggGroup
{
	uint32		hash;
	struct AggGroup *next_in_order;
	Datum	   *keys;
	bool	   *nulls;
	AggAcc		acc[FLEXIBLE_ARRAY_MEMBER];
} AggGroup;

typedef struct AggProgram
{
	int			nsteps;
	int		   *op;
	int		   *a;
	int		   *b;
} AggProgram;

typedef struct FlashAggState
{
	CustomScanState css;
	AggMode		mode;
	PlanState  *child;
	int			nkeys;
	int		   *key_cols;
	int16	   *key_len;
	bool	   *key_byval;
	Oid		   *key_eqops;
	int			naggs;
	AggKind    *kinds;
	int		   *agg_arg;
	int		   *count_col;
	int		   *partial_count;	/* a participant's row: columns per aggregate */
	int		   *partial_sum;
	int			nargs;			/* distinct arguments, computed once a row */
	AggProgram *programs;
	char	   *arg_state;		/* ARG_* */
	int64	   *arg_v64;
	int128	   *arg_v;
	int		   *arg_scale;
	int			ncols;			/* columns decoded once a row */
	int		   *col_child;
	int		   *col_len;
	int128	   *col_v;
	int64	   *col_v64;		/* col_v when it fits in 64 bits */
	bool	   *col_is64;
	int		   *col_scale;
	char	   *col_state;		/* COL_VALUE, COL_NULL or COL_SLOW */
	int			nconsts;
	int128	   *const_v;
	int64	   *const_v64;
	bool	   *const_is64;
	int		   *const_scale;
	ExprState **slow_exprs;
	MemoryContext group_cxt;	/* groups and their keys, until a rescan */
	MemoryContext sum_cxt;		/* numeric sums of the slow path (freed as they grow) */
	Datum	   *row_keys;		/* the current row's keys */
	bool	   *row_nulls;
	Datum	   *arg_datum;		/* slow path: PostgreSQL's value of an argument */
	/* raw groups: open addressing on the raw key bytes */
	AggGroup  **table;
	uint32		table_size;
	uint32		ngroups;
	AggGroup   *first;
	AggGroup  **last_link;
	AggGroup   *last_hit;
	/* the merged groups, returned in order */
	AggGroup  **out;
	uint32		nout;
	uint32		next_out;
	bool		done;
	/* EXPLAIN ANALYZE; a partial node sums all participants' in shared */
	int64		rows_in;
	int64		slow_values;
	int64		groups_out;
	struct AggShared *shared;
} FlashAggState;

typedef struct AggShared
{
	pg_atomic_uint64 rows_in;
	pg_atomic_uint64 slow_values;
	pg_atomic_uint64 groups_out;
} AggShared;

static Plan *agg_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);
static Node *agg_create_state(CustomScan *cscan);
static void agg_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *agg_exec(CustomScanState *node);
static void agg_end(CustomScanState *node);
static void agg_rescan(CustomScanState *node);
static void agg_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void agg_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void agg_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void agg_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void agg_shutdown(CustomScanState *node);

static const CustomPathMethods agg_path_methods = {
	.CustomName = "FlashScan Aggregate",
	.PlanCustomPath = agg_plan_path,
};

static const CustomScanMethods agg_scan_methods[] = {
	[AGG_FINAL] = {
		.CustomName = "FlashScan Aggregate",
		.CreateCustomScanState = agg_create_state,
	},
	[AGG_PARTIAL] = {
		.CustomName = "FlashScan Partial Aggregate",
		.CreateCustomScanState = agg_create_state,
	},
	[AGG_COMBINE] = {
		.CustomName = "FlashScan Finalize Aggregate",
		.CreateCustomScanState = agg_create_state,
	},
};

static const CustomExecMethods agg_exec_methods = {
	.CustomName = "FlashScan Aggregate",
	.BeginCustomScan = agg_begin,
	.ExecCustomScan = agg_exec,
	.EndCustomScan = agg_end,
	.ReScanCustomScan = agg_rescan,
	.ExplainCustomScan = agg_explain,
	.EstimateDSMCustomScan = agg_estimate_dsm,
	.InitializeDSMCustomScan = agg_initialize_dsm,
	.ReInitializeDSMCustomScan = agg_reinitialize_dsm,
	.InitializeWorkerCustomScan = agg_initialize_worker,
	.ShutdownCustomScan = agg_shutdown,
};

/* ---------------------------------------------------------------------
 * Planner
 * ---------------------------------------------------------------------
 */

/* Position of an expression equal to expr in exprs (a child's output, ...), or -1. */
static int
expr_position(List *exprs, Expr *expr)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, exprs)
	{
		if (equal(lfirst(lc), expr))
			return i;
		i++;
	}
	return -1;
}

static bool
is_int_type(Oid typid, int *len)
{
	switch (typid)
	{
		case INT2OID:
			*len = 2;
			return true;
		case INT4OID:
			*len = 4;
			return true;
		case INT8OID:
			*len = 8;
			return true;
		default:
			return false;
	}
}

/* Can fsdec take this constant?  (Then the executor decodes it again.) */
static bool
const_fits(Const *c)
{
	int128		v;
	int			scale,
				len;

	if (c->constisnull)
		return false;
	if (c->consttype == NUMERICOID)
		return fsdec_from_numeric(c->constvalue, &v, &scale);
	return is_int_type(c->consttype, &len);
}

typedef struct CompileContext
{
	List	   *child_exprs;
	List	   *columns;		/* child columns decoded */
	List	   *column_lens;
	List	   *program;		/* integer triples */
	List	   *consts;
	int			depth;
	int			max_depth;
} CompileContext;

static int
list_position_int(List *l, int value)
{
	ListCell   *lc;

	foreach(lc, l)
	{
		if (lfirst_int(lc) == value)
			return foreach_current_index(lc);
	}
	return -1;
}

static void
emit(CompileContext *cc, AggOp op, int a, int b, int push)
{
	cc->program = lappend_int(cc->program, op);
	cc->program = lappend_int(cc->program, a);
	cc->program = lappend_int(cc->program, b);
	cc->depth += push;
	cc->max_depth = Max(cc->max_depth, cc->depth);
}

/* Integer operators: function, result bytes, operation. */
static const struct
{
	Oid			funcid;
	int			len;
	AggOp		op;
}			int_operators[] = {
	{F_INT2PL, 2, OP_ADD}, {F_INT2MI, 2, OP_SUB}, {F_INT2MUL, 2, OP_MUL},
	{F_INT4PL, 4, OP_ADD}, {F_INT4MI, 4, OP_SUB}, {F_INT4MUL, 4, OP_MUL},
	{F_INT24PL, 4, OP_ADD}, {F_INT24MI, 4, OP_SUB}, {F_INT24MUL, 4, OP_MUL},
	{F_INT42PL, 4, OP_ADD}, {F_INT42MI, 4, OP_SUB}, {F_INT42MUL, 4, OP_MUL},
	{F_INT8PL, 8, OP_ADD}, {F_INT8MI, 8, OP_SUB}, {F_INT8MUL, 8, OP_MUL},
	{F_INT48PL, 8, OP_ADD}, {F_INT48MI, 8, OP_SUB}, {F_INT48MUL, 8, OP_MUL},
	{F_INT84PL, 8, OP_ADD}, {F_INT84MI, 8, OP_SUB}, {F_INT84MUL, 8, OP_MUL},
	{F_INT28PL, 8, OP_ADD}, {F_INT28MI, 8, OP_SUB}, {F_INT28MUL, 8, OP_MUL},
	{F_INT82PL, 8, OP_ADD}, {F_INT82MI, 8, OP_SUB}, {F_INT82MUL, 8, OP_MUL},
};

/* The integer operator funcid is, as result bytes and op; false if none. */
static bool
int_operator(Oid funcid, int *len, AggOp *op)
{
	int			i;

	for (i = 0; i < lengthof(int_operators); i++)
	{
		if (int_operators[i].funcid == funcid)
		{
			*len = int_operators[i].len;
			*op = int_operators[i].op;
			return true;
		}
	}
	return false;
}

/* Compile expr onto cc's program; false if the fast path cannot compute it. */
static bool
compile_expr(CompileContext *cc, Node *expr)
{
	int			len;
	AggOp		op;

	if (expr == NULL)
		return false;
	if (IsA(expr, Var))
	{
		Oid			typid = exprType(expr);
		int			col = expr_position(cc->child_exprs, (Expr *) expr);
		int			pos;

		if (col < 0)
			return false;
		if (typid == NUMERICOID)
			len = 0;
		else if (!is_int_type(typid, &len))
			return false;
		pos = list_position_int(cc->columns, col);
		if (pos < 0)
		{
			cc->columns = lappend_int(cc->columns, col);
			cc->column_lens = lappend_int(cc->column_lens, len);
			pos = list_length(cc->columns) - 1;
		}
		emit(cc, OP_COLUMN, pos, 0, 1);
		return true;
	}
	if (IsA(expr, Const))
	{
		if (!const_fits((Const *) expr))
			return false;
		cc->consts = lappend(cc->consts, copyObject(expr));
		emit(cc, OP_CONST, list_length(cc->consts) - 1, 0, 1);
		return true;
	}
	if (IsA(expr, OpExpr))
	{
		OpExpr	   *o = (OpExpr *) expr;
		Oid			funcid;

		set_opfuncid(o);
		funcid = o->opfuncid;
		if (list_length(o->args) == 1 && funcid == F_NUMERIC_UMINUS)
		{
			if (!compile_expr(cc, linitial(o->args)))
				return false;
			emit(cc, OP_NEG, 0, 0, 0);
			return true;
		}
		if (list_length(o->args) != 2)
			return false;
		if (funcid == F_NUMERIC_ADD)
			op = OP_ADD, len = 0;
		else if (funcid == F_NUMERIC_SUB)
			op = OP_SUB, len = 0;
		else if (funcid == F_NUMERIC_MUL)
			op = OP_MUL, len = 0;
		else if (!int_operator(funcid, &len, &op))
			return false;
		if (!compile_expr(cc, linitial(o->args)) || !compile_expr(cc, lsecond(o->args)))
			return false;
		emit(cc, op, 0, len, -1);
		return true;
	}
	if (IsA(expr, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) expr;

		/* integer to numeric: the same value at scale 0 */
		if ((f->funcid == F_NUMERIC_INT2 || f->funcid == F_NUMERIC_INT4 ||
			 f->funcid == F_NUMERIC_INT8) && list_length(f->args) == 1)
			return compile_expr(cc, linitial(f->args));
		return false;
	}
	return false;
}

/* The kind of a supported aggregate, or -1. */
static int
aggregate_kind(Aggref *aggref)
{
	if (aggref->aggorder != NIL || aggref->aggdistinct != NIL ||
		aggref->aggfilter != NULL || aggref->aggkind != AGGKIND_NORMAL ||
		aggref->agglevelsup != 0 || aggref->aggsplit != AGGSPLIT_SIMPLE ||
		aggref->aggvariadic)
		return -1;
	switch (aggref->aggfnoid)
	{
		case F_COUNT_:
			return AK_COUNT_STAR;
		case F_COUNT_ANY:
			return AK_COUNT;
		case F_SUM_NUMERIC:
		case F_SUM_INT8:
			return AK_SUM_NUMERIC;
		case F_SUM_INT4:
		case F_SUM_INT2:
			return AK_SUM_INT8;
		case F_AVG_NUMERIC:
		case F_AVG_INT8:
		case F_AVG_INT4:
		case F_AVG_INT2:
			return AK_AVG;
		default:
			return -1;
	}
}

/* Replace the relation's Vars by OUTER_VAR references to the child's columns. */
typedef struct OuterContext
{
	List	   *child_exprs;
	bool		ok;
} OuterContext;

static Node *
to_outer_mutator(Node *node, OuterContext *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		int			col = expr_position(ctx->child_exprs, (Expr *) node);
		Var		   *v;

		if (col < 0)
		{
			ctx->ok = false;
			return node;
		}
		v = (Var *) copyObject(node);
		v->varno = OUTER_VAR;
		v->varattno = col + 1;
		return (Node *) v;
	}
	return expression_tree_mutator(node, to_outer_mutator, (void *) ctx);
}

/*
 * The group and aggregate expressions the output needs; false when an
 * expression refers to the relation other than through a group key or a
 * supported aggregate.
 */
static bool
collect_outputs(List *exprs, List *group_exprs, List **aggrefs)
{
	ListCell   *lc;

	foreach(lc, exprs)
	{
		Node	   *e = lfirst(lc);
		List	   *vars;
		ListCell   *lc2;

		if (list_member(group_exprs, e))
			continue;
		vars = pull_var_clause(e, PVC_INCLUDE_AGGREGATES |
							   PVC_INCLUDE_WINDOWFUNCS |
							   PVC_INCLUDE_PLACEHOLDERS);
		foreach(lc2, vars)
		{
			Node	   *v = lfirst(lc2);

			if (IsA(v, Aggref))
			{
				if (aggregate_kind((Aggref *) v) < 0)
					return false;
				if (!list_member(*aggrefs, v))
					*aggrefs = lappend(*aggrefs, v);
			}
			else if (!list_member(group_exprs, v))
				return false;
		}
	}
	return true;
}

/*
 * Bytes a group takes in memory, to check the estimate against hash_mem:
 * its chunk (accumulators, key and null arrays, a generation chunk's
 * header), copies of by-reference keys, its slots in the open-addressing
 * table (at most half full, and the table before the last doubling), its
 * place in the output array, and its entry and key copy in the merging
 * TupleHashTable.
 */
static double
group_bytes(List *group_exprs, int naggs)
{
	const double chunk_header = 24;
	double		bytes = MAXALIGN(offsetof(AggGroup, acc) + naggs * sizeof(AggAcc)) +
		chunk_header + 3 * 2 * sizeof(AggGroup *) + sizeof(AggGroup *) +
		sizeof(TupleHashEntryData) + 2 * chunk_header + MAXALIGN(SizeofMinimalTupleHeader);
	ListCell   *lc;

	foreach(lc, group_exprs)
	{
		Oid			typid = exprType(lfirst(lc));
		int16		typlen;
		bool		typbyval;

		get_typlenbyval(typid, &typlen, &typbyval);
		bytes += sizeof(Datum) + sizeof(bool) + sizeof(Datum);
		if (!typbyval)
			bytes += 2 * (MAXALIGN(get_typavgwidth(typid, exprTypmod(lfirst(lc))) + VARHDRSZ) +
						  chunk_header);
	}
	return bytes;
}

/* A FlashScan Aggregate path of one mode over child; the caller prices it. */
static CustomPath *
make_agg_path(RelOptInfo *output_rel, AggMode mode, Path *child, PathTarget *target,
			  List *core, List *outputs, List *having, List *count_pos, List *sum_pos)
{
	CustomPath *cpath = ssdkit_base_custom_path(output_rel, &agg_path_methods);

	cpath->path.pathtarget = target;
	cpath->flags = 0;
	cpath->custom_paths = list_make1(child);
	cpath->custom_private = list_concat(list_copy(core),
										list_make3(list_make1_int(mode), count_pos, sum_pos));
	/* the node's scan tuple, then HAVING */
	cpath->custom_private = lappend(cpath->custom_private, outputs);
	cpath->custom_private = lappend(cpath->custom_private, having);
	return cpath;
}

/*
 * The columns a participant returns per group: the keys, then per
 * aggregate its count and, for sum and avg, its sum as a numeric, in
 * *count_pos and *sum_pos (-1: none).  Each is labelled by an aggregate of
 * the argument (count(x), sum(x)) for EXPLAIN and for setrefs, which finds
 * a column by its expression: aggregates sharing an argument share its
 * columns, since equal labels are equal values.
 */
static List *
partial_outputs(List *group_exprs, List *aggrefs, List **count_pos, List **sum_pos)
{
	List	   *outputs = list_copy(group_exprs);
	ListCell   *lc;

	*count_pos = *sum_pos = NIL;
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst(lc);
		int			kind = aggregate_kind(aggref);
		Aggref	   *count = aggref,
				   *sum = NULL;
		int			pos;

		if (kind != AK_COUNT_STAR && kind != AK_COUNT)
		{
			count = copyObject(aggref);
			count->aggfnoid = F_COUNT_ANY;
			count->aggtype = INT8OID;
			count->aggtranstype = INT8OID;
			count->aggno = count->aggtransno = -1;
			sum = copyObject(aggref);
			sum->aggfnoid = F_SUM_NUMERIC;
			sum->aggtype = NUMERICOID;
			sum->aggno = sum->aggtransno = -1;
		}
		pos = expr_position(outputs, (Expr *) count);
		if (pos < 0)
		{
			outputs = lappend(outputs, count);
			pos = list_length(outputs) - 1;
		}
		*count_pos = lappend_int(*count_pos, pos);
		pos = -1;
		if (sum != NULL)
		{
			pos = expr_position(outputs, (Expr *) sum);
			if (pos < 0)
			{
				outputs = lappend(outputs, sum);
				pos = list_length(outputs) - 1;
			}
		}
		*sum_pos = lappend_int(*sum_pos, pos);
	}
	return outputs;
}

/*
 * Parallel: Finalize over Gather over Partial over a Parallel FlashScan.
 * The participants share the scan's rows and the per-row work; the Gather
 * carries a row per group and participant.
 */
static void
add_parallel_paths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
				   List *core, List *group_exprs, List *aggrefs, List *having,
				   double ngroups, double rows, Cost per_row, QualCost *having_cost)
{
	CustomPath *scan = flashscan_create_partial_path(root, input_rel, input_rel->reltarget);
	CustomPath *partial,
			   *combine;
	GatherPath *gather;
	PathTarget *partial_target = create_empty_pathtarget();
	List	   *count_pos,
			   *sum_pos;
	List	   *partial_out = partial_outputs(group_exprs, aggrefs, &count_pos, &sum_pos);
	List	   *combine_core;
	List	   *key_cols = NIL;
	ListCell   *lc;
	double		gathered;
	int			k;

	if (scan == NULL)
		return;
	foreach(lc, partial_out)
		add_column_to_pathtarget(partial_target, lfirst(lc), 0);
	set_pathtarget_cost_width(root, partial_target);

	partial = make_agg_path(output_rel, AGG_PARTIAL, &scan->path, partial_target,
							core, partial_out, NIL, count_pos, sum_pos);
	partial->path.parallel_safe = true;
	/* parallel-aware only to add up the participants' EXPLAIN ANALYZE counters */
	partial->path.parallel_aware = true;
	partial->path.parallel_workers = scan->path.parallel_workers;
	partial->path.rows = ngroups;
	partial->path.startup_cost = scan->path.total_cost + scan->path.rows * per_row;
	partial->path.total_cost = partial->path.startup_cost + ngroups * cpu_tuple_cost;

	gathered = ngroups * (scan->path.parallel_workers + 1);
	gather = create_gather_path(root, output_rel, &partial->path, partial_target, NULL,
								&gathered);

	/* the combining node reads the keys first, then the partial columns */
	for (k = 0; k < list_length(group_exprs); k++)
		key_cols = lappend_int(key_cols, k);
	combine_core = list_copy(core);
	list_nth_cell(combine_core, AP_KEY_COLUMNS)->ptr_value = key_cols;
	list_nth_cell(combine_core, AP_COLUMNS)->ptr_value = NIL;
	list_nth_cell(combine_core, AP_COLUMN_LENS)->ptr_value = NIL;
	list_nth_cell(combine_core, AP_PROGRAMS)->ptr_value = NIL;
	list_nth_cell(combine_core, AP_CONSTS)->ptr_value = NIL;
	list_nth_cell(combine_core, AP_SLOW_EXPRS)->ptr_value = NIL;
	combine = make_agg_path(output_rel, AGG_COMBINE, &gather->path, output_rel->reltarget,
							combine_core, list_concat(list_copy(group_exprs), aggrefs),
							having, count_pos, sum_pos);
	combine->path.rows = rows;
	combine->path.startup_cost = gather->path.total_cost +
		gathered * cpu_operator_cost * (list_length(group_exprs) + list_length(aggrefs)) +
		having_cost->startup;
	combine->path.total_cost = combine->path.startup_cost +
		ngroups * (cpu_tuple_cost + having_cost->per_tuple) +
		rows * output_rel->reltarget->cost.per_tuple;
	add_path(output_rel, (Path *) combine);
}

static void
flashscan_agg_upper_paths(PlannerInfo *root, UpperRelationKind stage,
						  RelOptInfo *input_rel, RelOptInfo *output_rel,
						  void *extra)
{
	GroupPathExtraData *gextra = (GroupPathExtraData *) extra;
	Query	   *parse = root->parse;
	RangeTblEntry *rte;
	CustomPath *child,
			   *cpath;
	List	   *group_exprs,
			   *aggrefs = NIL,
			   *key_cols = NIL,
			   *key_eqops = NIL,
			   *kinds = NIL,
			   *programs = NIL,
			   *slow_exprs = NIL,
			   *args = NIL,
			   *agg_args = NIL,
			   *count_cols = NIL,
			   *having;
	CompileContext cc = {0};
	ListCell   *lc;
	List	   *core,
			   *outputs;
	double		ngroups,
				rows,
				input_rows,
				nsteps = 0;
	Cost		per_row;
	QualCost	having_cost;

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || !flashscan_enable || !flashscan_enable_aggregate)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL || input_rel->rtekind != RTE_RELATION ||
		!bms_is_empty(input_rel->lateral_relids))
		return;
	rte = planner_rt_fetch(input_rel->relid, root);
	if (!flashscan_is_pax_relation(rte))
		return;
	if (parse->groupingSets != NIL || parse->hasTargetSRFs || !parse->hasAggs)
		return;

	child = flashscan_create_path(root, input_rel, input_rel->reltarget);
	if (child == NULL)
		return;
	cc.child_exprs = child->path.pathtarget->exprs;

	/* group keys: hashable, and produced by the scan */
	group_exprs = get_sortgrouplist_exprs(parse->groupClause, gextra->targetList);
	foreach(lc, parse->groupClause)
	{
		SortGroupClause *sgc = lfirst(lc);
		Expr	   *e = (Expr *) get_sortgroupclause_expr(sgc, gextra->targetList);
		int			col = expr_position(cc.child_exprs, e);

		if (!sgc->hashable || col < 0)
			return;
		key_cols = lappend_int(key_cols, col);
		key_eqops = lappend_oid(key_eqops, sgc->eqop);
	}

	having = (List *) gextra->havingQual;
	if (!collect_outputs(output_rel->reltarget->exprs, group_exprs, &aggrefs) ||
		!collect_outputs(having, group_exprs, &aggrefs) || aggrefs == NIL)
		return;

	/*
	 * Each distinct argument is compiled once and computed once a row
	 * (sum(x) and avg(x) share x); count(column) only tests the column's
	 * null bit.
	 */
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst(lc);
		int			kind = aggregate_kind(aggref);
		Node	   *arg;
		OuterContext oc = {cc.child_exprs, true};
		int			argno;

		kinds = lappend_int(kinds, kind);
		if (kind == AK_COUNT_STAR)
		{
			agg_args = lappend_int(agg_args, -1);
			count_cols = lappend_int(count_cols, -1);
			continue;
		}
		arg = (Node *) ((TargetEntry *) linitial(aggref->args))->expr;
		if (kind == AK_COUNT && IsA(arg, Var) && expr_position(cc.child_exprs, (Expr *) arg) >= 0)
		{
			agg_args = lappend_int(agg_args, -1);
			count_cols = lappend_int(count_cols, expr_position(cc.child_exprs, (Expr *) arg));
			continue;
		}
		count_cols = lappend_int(count_cols, -1);
		argno = expr_position(args, (Expr *) arg);
		if (argno >= 0)
		{
			agg_args = lappend_int(agg_args, argno);
			continue;
		}
		cc.program = NIL;
		cc.depth = 0;
		if (!compile_expr(&cc, arg) || cc.max_depth > MAX_STACK)
			return;
		nsteps += list_length(cc.program) / 3;
		programs = lappend(programs, cc.program);
		args = lappend(args, arg);
		agg_args = lappend_int(agg_args, list_length(args) - 1);
		arg = to_outer_mutator(arg, &oc);
		if (!oc.ok)
			return;
		fix_opfuncids(arg);
		slow_exprs = lappend(slow_exprs, arg);
	}

	/* every group in memory: only when the estimate fits in hash_mem */
	input_rows = child->path.rows;
	ngroups = group_exprs == NIL ? 1.0 :
		estimate_num_groups(root, group_exprs, input_rows, NULL, NULL);
	if (ngroups * group_bytes(group_exprs, list_length(aggrefs)) > get_hash_memory_limit())
		return;

	/*
	 * Per input row: a raw-key hash probe, then per program step and per
	 * aggregate a few integer instructions, where HashAggregate pays a hash
	 * function call per key and a function call on palloc'd numerics per
	 * operator and transition (cpu_operator_cost each).  Measured on TPC-H
	 * Q1 (2 keys, 8 aggregates, 17 steps), the node aggregates a row in
	 * about 0.45 of HashAggregate's time; priced at half a
	 * cpu_operator_cost per key and a quarter per step and aggregate.
	 */
	per_row = cpu_operator_cost * (0.5 * list_length(group_exprs) +
								   0.25 * (nsteps + list_length(aggrefs)));
	cost_qual_eval(&having_cost, having, root);

	core = list_make4(key_cols, cc.columns, cc.column_lens, key_eqops);
	core = lappend(core, kinds);
	core = lappend(core, agg_args);
	core = lappend(core, count_cols);
	core = lappend(core, programs);
	core = lappend(core, cc.consts);
	core = lappend(core, slow_exprs);
	outputs = list_concat(list_copy(group_exprs), aggrefs);
	rows = clamp_row_est(ngroups * clauselist_selectivity(root, having, 0, JOIN_INNER, NULL));

	cpath = make_agg_path(output_rel, AGG_FINAL, &child->path, output_rel->reltarget,
						  core, outputs, having, NIL, NIL);
	cpath->path.rows = rows;
	cpath->path.startup_cost = child->path.total_cost + input_rows * per_row +
		having_cost.startup;
	cpath->path.total_cost = cpath->path.startup_cost +
		ngroups * (cpu_tuple_cost + having_cost.per_tuple) +
		rows * output_rel->reltarget->cost.per_tuple;
	add_path(output_rel, (Path *) cpath);

	if (output_rel->consider_parallel && max_parallel_workers_per_gather > 0)
		add_parallel_paths(root, input_rel, output_rel, core, group_exprs, aggrefs,
						   having, ngroups, rows, per_row, &having_cost);
}

static Plan *
agg_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *outputs = list_nth(best_path->custom_private, AP_COUNT);
	List	   *having = list_nth(best_path->custom_private, AP_COUNT + 1);
	List	   *scan_tlist = NIL;
	ListCell   *lc;

	foreach(lc, outputs)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));
	cscan->scan.plan.targetlist = tlist;
	/* HAVING, over the final groups (setrefs points its aggregates at them) */
	cscan->scan.plan.qual = copyObject(having);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_truncate(list_copy(best_path->custom_private), AP_COUNT);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &agg_scan_methods[linitial_int(list_nth(best_path->custom_private, AP_MODE))];
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Executor
 * ---------------------------------------------------------------------
 */

static Node *
agg_create_state(CustomScan *cscan)
{
	FlashAggState *fa = (FlashAggState *) newNode(sizeof(FlashAggState), T_CustomScanState);

	fa->css.methods = &agg_exec_methods;
	return (Node *) fa;
}

static int *
int_array(List *l)
{
	int		   *a = palloc0(sizeof(int) * Max(1, list_length(l)));
	ListCell   *lc;
	int			i = 0;

	foreach(lc, l)
		a[i++] = lfirst_int(lc);
	return a;
}

static void
reset_groups(FlashAggState *fa)
{
	MemoryContextReset(fa->group_cxt);
	MemoryContextReset(fa->sum_cxt);
	fa->table_size = 64;
	fa->table = MemoryContextAllocZero(fa->group_cxt, sizeof(AggGroup *) * fa->table_size);
	fa->ngroups = 0;
	fa->first = NULL;
	fa->last_link = &fa->first;
	fa->last_hit = NULL;
	fa->out = NULL;
	fa->nout = fa->next_out = 0;
	fa->done = false;
	fa->rows_in = 0;
	fa->slow_values = 0;
	fa->groups_out = 0;
}

static void
agg_begin(CustomScanState *node, EState *estate, int eflags)
{
	FlashAggState *fa = (FlashAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	TupleDesc	scandesc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	ListCell   *lc;
	int			i;

	fa->mode = linitial_int(list_nth(priv, AP_MODE));
	fa->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(fa->child);

	fa->nkeys = list_length(list_nth(priv, AP_KEY_COLUMNS));
	fa->key_cols = int_array(list_nth(priv, AP_KEY_COLUMNS));
	fa->key_eqops = palloc0(sizeof(Oid) * Max(1, fa->nkeys));
	fa->key_len = palloc0(sizeof(int16) * Max(1, fa->nkeys));
	fa->key_byval = palloc0(sizeof(bool) * Max(1, fa->nkeys));
	i = 0;
	foreach(lc, (List *) list_nth(priv, AP_KEY_EQOPS))
	{
		Form_pg_attribute att = TupleDescAttr(scandesc, i);

		fa->key_eqops[i] = lfirst_oid(lc);
		fa->key_len[i] = att->attlen;
		fa->key_byval[i] = att->attbyval;
		i++;
	}

	fa->naggs = list_length(list_nth(priv, AP_AGG_KINDS));
	fa->kinds = (AggKind *) int_array(list_nth(priv, AP_AGG_KINDS));
	fa->agg_arg = int_array(list_nth(priv, AP_AGG_ARGS));
	fa->partial_count = int_array(list_nth(priv, AP_PARTIAL_COUNTS));
	fa->partial_sum = int_array(list_nth(priv, AP_PARTIAL_SUMS));
	fa->count_col = int_array(list_nth(priv, AP_COUNT_COLUMNS));
	fa->nargs = list_length(list_nth(priv, AP_PROGRAMS));
	fa->programs = palloc0(sizeof(AggProgram) * Max(1, fa->nargs));
	fa->slow_exprs = palloc0(sizeof(ExprState *) * Max(1, fa->nargs));
	fa->arg_state = palloc0(Max(1, fa->nargs));
	fa->arg_v64 = palloc0(sizeof(int64) * Max(1, fa->nargs));
	fa->arg_v = palloc0(sizeof(int128) * Max(1, fa->nargs));
	fa->arg_scale = palloc0(sizeof(int) * Max(1, fa->nargs));
	i = 0;
	foreach(lc, (List *) list_nth(priv, AP_PROGRAMS))
	{
		List	   *prog = lfirst(lc);
		AggProgram *p = &fa->programs[i];
		int			j;

		p->nsteps = list_length(prog) / 3;
		p->op = palloc(sizeof(int) * Max(1, p->nsteps));
		p->a = palloc(sizeof(int) * Max(1, p->nsteps));
		p->b = palloc(sizeof(int) * Max(1, p->nsteps));
		for (j = 0; j < p->nsteps; j++)
		{
			p->op[j] = list_nth_int(prog, 3 * j);
			p->a[j] = list_nth_int(prog, 3 * j + 1);
			p->b[j] = list_nth_int(prog, 3 * j + 2);
		}
		i++;
	}
	i = 0;
	foreach(lc, (List *) list_nth(priv, AP_SLOW_EXPRS))
	{
		fa->slow_exprs[i] = ExecInitExpr(lfirst(lc), &node->ss.ps);
		i++;
	}
	fa->ncols = list_length(list_nth(priv, AP_COLUMNS));
	fa->col_child = int_array(list_nth(priv, AP_COLUMNS));
	fa->col_len = int_array(list_nth(priv, AP_COLUMN_LENS));
	fa->col_v = palloc0(sizeof(int128) * Max(1, fa->ncols));
	fa->col_v64 = palloc0(sizeof(int64) * Max(1, fa->ncols));
	fa->col_is64 = palloc0(sizeof(bool) * Max(1, fa->ncols));
	fa->col_scale = palloc0(sizeof(int) * Max(1, fa->ncols));
	fa->col_state = palloc0(Max(1, fa->ncols));
	fa->nconsts = list_length(list_nth(priv, AP_CONSTS));
	fa->const_v = palloc0(sizeof(int128) * Max(1, fa->nconsts));
	fa->const_scale = palloc0(sizeof(int) * Max(1, fa->nconsts));
	fa->const_v64 = palloc0(sizeof(int64) * Max(1, fa->nconsts));
	fa->const_is64 = palloc0(sizeof(bool) * Max(1, fa->nconsts));
	i = 0;
	foreach(lc, (List *) list_nth(priv, AP_CONSTS))
	{
		Const	   *c = lfirst(lc);

		if (c->consttype == NUMERICOID)
		{
			if (!fsdec_from_numeric(c->constvalue, &fa->const_v[i], &fa->const_scale[i]))
				elog(ERROR, "FlashScan Aggregate: constant does not fit");
		}
		else if (c->consttype == INT2OID)
			fa->const_v[i] = DatumGetInt16(c->constvalue);
		else if (c->consttype == INT4OID)
			fa->const_v[i] = DatumGetInt32(c->constvalue);
		else
			fa->const_v[i] = DatumGetInt64(c->constvalue);
		fa->const_is64[i] = fsdec_fits_int64(fa->const_v[i]);
		if (fa->const_is64[i])
			fa->const_v64[i] = (int64) fa->const_v[i];
		i++;
	}
	fa->group_cxt = GenerationContextCreate(estate->es_query_cxt,
											"FlashScan Aggregate groups",
											0, 8 * 1024, ALLOCSET_DEFAULT_MAXSIZE);
	fa->sum_cxt = AllocSetContextCreate(estate->es_query_cxt,
										"FlashScan Aggregate sums",
										ALLOCSET_DEFAULT_SIZES);
	fa->row_keys = palloc0(sizeof(Datum) * Max(1, fa->nkeys));
	fa->row_nulls = palloc0(sizeof(bool) * Max(1, fa->nkeys));
	fa->arg_datum = palloc0(sizeof(Datum) * Max(1, fa->nargs));
	reset_groups(fa);
}

/* ---- raw keys ---- */

/* Pointer and length of a by-reference key's bytes (detoasted). */
static const char *
key_bytes(FlashAggState *fa, int k, Datum d, Size *len)
{
	if (fa->key_len[k] > 0)
	{
		*len = fa->key_len[k];
		return DatumGetPointer(d);
	}
	if (fa->key_len[k] == -2)
	{
		*len = strlen(DatumGetCString(d));
		return DatumGetPointer(d);
	}
	else
	{
		struct varlena *p = (struct varlena *) DatumGetPointer(d);

		if (VARATT_IS_EXTENDED(p) && !VARATT_IS_SHORT(p))
			p = pg_detoast_datum_packed(p);
		*len = VARSIZE_ANY_EXHDR(p);
		return VARDATA_ANY(p);
	}
}

static uint32
raw_hash(FlashAggState *fa, const Datum *values, const bool *nulls)
{
	uint32		h = 0;
	int			k;

	for (k = 0; k < fa->nkeys; k++)
	{
		uint32		kh;

		if (nulls[k])
			kh = 0x9e3779b9;
		else if (fa->key_byval[k])
			kh = hash_bytes_uint32((uint32) values[k]) ^
				hash_bytes_uint32((uint32) ((uint64) values[k] >> 32));
		else
		{
			Size		len;
			const char *p = key_bytes(fa, k, values[k], &len);

			kh = hash_bytes((const unsigned char *) p, (int) len);
		}
		h = hash_combine(h, kh);
	}
	return h;
}

static bool
raw_equal(FlashAggState *fa, AggGroup *g, const Datum *values, const bool *nulls)
{
	int			k;

	for (k = 0; k < fa->nkeys; k++)
	{
		if (g->nulls[k] != nulls[k])
			return false;
		if (nulls[k])
			continue;
		if (fa->key_byval[k])
		{
			if (g->keys[k] != values[k])
				return false;
		}
		else
		{
			Size		l1,
						l2;
			const char *p1 = key_bytes(fa, k, g->keys[k], &l1);
			const char *p2 = key_bytes(fa, k, values[k], &l2);

			if (l1 != l2 || memcmp(p1, p2, l1) != 0)
				return false;
		}
	}
	return true;
}

static AggGroup *
new_group(FlashAggState *fa, uint32 hash, const Datum *values, const bool *nulls)
{
	MemoryContext old = MemoryContextSwitchTo(fa->group_cxt);
	Size		accs = MAXALIGN(offsetof(AggGroup, acc) + sizeof(AggAcc) * fa->naggs);
	AggGroup   *g = palloc0(accs + (sizeof(Datum) + sizeof(bool)) * fa->nkeys);
	int			k;

	g->hash = hash;
	g->keys = (Datum *) ((char *) g + accs);
	g->nulls = (bool *) (g->keys + fa->nkeys);
	for (k = 0; k < fa->nkeys; k++)
	{
		g->nulls[k] = nulls[k];
		if (nulls[k])
			continue;
		if (fa->key_len[k] == -1)
			g->keys[k] = PointerGetDatum(PG_DETOAST_DATUM_COPY(values[k]));
		else
			g->keys[k] = datumCopy(values[k], fa->key_byval[k], fa->key_len[k]);
	}
	for (k = 0; k < fa->naggs; k++)
		g->acc[k].scale = -1;
	MemoryContextSwitchTo(old);
	*fa->last_link = g;
	fa->last_link = &g->next_in_order;
	fa->ngroups++;
	return g;
}

static void
grow_table(FlashAggState *fa)
{
	uint32		size = fa->table_size * 2;
	AggGroup  **table = MemoryContextAllocZero(fa->group_cxt, sizeof(AggGroup *) * size);
	AggGroup   *g;

	for (g = fa->first; g != NULL; g = g->next_in_order)
	{
		uint32		i = g->hash & (size - 1);

		while (table[i] != NULL)
			i = (i + 1) & (size - 1);
		table[i] = g;
	}
	pfree(fa->table);
	fa->table = table;
	fa->table_size = size;
}

static AggGroup *
find_group(FlashAggState *fa, const Datum *values, const bool *nulls)
{
	uint32		hash,
				i;

	if (fa->nkeys == 0)
		return fa->first ? fa->first : new_group(fa, 0, values, nulls);
	if (fa->last_hit && raw_equal(fa, fa->last_hit, values, nulls))
		return fa->last_hit;
	hash = raw_hash(fa, values, nulls);
	for (i = hash & (fa->table_size - 1);; i = (i + 1) & (fa->table_size - 1))
	{
		AggGroup   *g = fa->table[i];

		if (g == NULL)
			break;
		if (g->hash == hash && raw_equal(fa, g, values, nulls))
			return fa->last_hit = g;
	}
	fa->table[i] = new_group(fa, hash, values, nulls);
	fa->last_hit = fa->table[i];
	if (fa->ngroups * 2 > fa->table_size)
		grow_table(fa);
	return fa->last_hit;
}

/* ---- accumulation ---- */

/* Add v at scale s to the fast part; false when it does not fit there. */
static inline bool
acc_add_fast(AggAcc *acc, int128 v, int s)
{
	int128		sum;
	int			scale;

	if (acc->scale < 0)
	{
		acc->sum = v;
		acc->scale = s;
		return true;
	}
	if (!fsdec_add(acc->sum, acc->scale, v, s, &sum, &scale))
		return false;
	acc->sum = sum;
	acc->scale = scale;
	return true;
}

/* Add a numeric value to the slow part, in the groups' memory. */
static void
acc_add_slow(FlashAggState *fa, AggAcc *acc, Datum num)
{
	MemoryContext old = MemoryContextSwitchTo(fa->sum_cxt);

	if (acc->slow == (Datum) 0)
		acc->slow = datumCopy(num, false, -1);
	else
	{
		Datum		sum = DirectFunctionCall2(numeric_add, acc->slow, num);

		pfree(DatumGetPointer(acc->slow));
		acc->slow = sum;
	}
	MemoryContextSwitchTo(old);
}

/* Add v at scale s, to the fast part if it fits, else to the slow part. */
static void
acc_add(FlashAggState *fa, AggAcc *acc, int128 v, int s)
{
	if (!acc_add_fast(acc, v, s))
		acc_add_slow(fa, acc, fsdec_to_numeric(v, s));
}

/*
 * Run a program over the child's row; false when the fast path cannot
 * compute it (then the row's value comes from the slow path).  *isnull
 * when an input is null (every operator here is strict).
 */
static bool
run_program(FlashAggState *fa, AggProgram *p, TupleTableSlot *slot,
			int128 *result, int *scale, bool *isnull)
{
	int128		v[MAX_STACK];
	int			s[MAX_STACK];
	bool		nul[MAX_STACK];
	int			sp = 0;
	int			j;

	for (j = 0; j < p->nsteps; j++)
	{
		int			a = p->a[j];

		switch ((AggOp) p->op[j])
		{
			case OP_COLUMN:
				if (fa->col_state[a] == COL_SLOW)
					return false;
				nul[sp] = (fa->col_state[a] == COL_NULL);
				v[sp] = fa->col_v[a];
				s[sp++] = fa->col_scale[a];
				break;
			case OP_NOTNULL:
				Assert(false);
				return false;
			case OP_CONST:
				nul[sp] = false;
				v[sp] = fa->const_v[a];
				s[sp++] = fa->const_scale[a];
				break;
			case OP_NEG:
				v[sp - 1] = -v[sp - 1];
				break;
			case OP_ADD:
			case OP_SUB:
			case OP_MUL:
				{
					int128		r;
					int			rs;
					int128		rhs = v[sp - 1];
					bool		ok;

					sp--;
					/* a strict operator: null in, null out, nothing computed */
					if (nul[sp - 1] || nul[sp])
					{
						nul[sp - 1] = true;
						break;
					}
					if (p->op[j] == OP_SUB)
						rhs = -rhs;
					if (p->op[j] == OP_MUL)
						ok = fsdec_mul(v[sp - 1], s[sp - 1], rhs, s[sp], &r, &rs);
					else
						ok = fsdec_add(v[sp - 1], s[sp - 1], rhs, s[sp], &r, &rs);
					if (!ok)
						return false;
					/* integer operators: out of their type's range is an error */
					if (p->b[j] == 2 && (r < PG_INT16_MIN || r > PG_INT16_MAX))
						return false;
					if (p->b[j] == 4 && (r < PG_INT32_MIN || r > PG_INT32_MAX))
						return false;
					if (p->b[j] == 8 && (r < PG_INT64_MIN || r > PG_INT64_MAX))
						return false;
					v[sp - 1] = r;
					s[sp - 1] = rs;
					break;
				}
		}
	}
	Assert(sp == 1);
	*isnull = nul[0];
	*result = v[0];
	*scale = s[0];
	return true;
}

/*
 * run_program() in 64-bit integers, the common case: values of up to 18
 * digits, products of two such.  Anything that overflows here is run again
 * in 128 bits (RUN_WIDE), where integer operators also find their errors.
 */
static inline int
run_program64(FlashAggState *fa, AggProgram *p, int64 *result, int *scale)
{
	int64		v[MAX_STACK];
	int			s[MAX_STACK];
	bool		nul[MAX_STACK];
	int			sp = 0;
	int			j;

	/*
	 * Nulls flow through as PostgreSQL's strict operators pass them: an
	 * operator with a null operand is not computed and gives null, but the
	 * operators beside it still are, and still raise their errors.
	 */
	for (j = 0; j < p->nsteps; j++)
	{
		int			a = p->a[j];

		switch ((AggOp) p->op[j])
		{
			case OP_COLUMN:
				if (unlikely(fa->col_state[a] == COL_SLOW))
					return RUN_SLOW;
				nul[sp] = (fa->col_state[a] == COL_NULL);
				if (unlikely(!nul[sp] && !fa->col_is64[a]))
					return RUN_WIDE;
				v[sp] = fa->col_v64[a];
				s[sp++] = fa->col_scale[a];
				break;
			case OP_CONST:
				if (unlikely(!fa->const_is64[a]))
					return RUN_WIDE;
				nul[sp] = false;
				v[sp] = fa->const_v64[a];
				s[sp++] = fa->const_scale[a];
				break;
			case OP_NEG:
				if (unlikely(v[sp - 1] == PG_INT64_MIN))
					return RUN_WIDE;
				v[sp - 1] = -v[sp - 1];
				break;
			case OP_ADD:
			case OP_SUB:
			case OP_MUL:
				{
					int64		lhs = v[sp - 2],
								rhs = v[sp - 1];
					int			ls = s[sp - 2],
								rs = s[sp - 1];
					bool		overflow;

					sp--;
					if (nul[sp - 1] || nul[sp])
					{
						nul[sp - 1] = true;
						break;
					}
					if (p->b[j] != 0)
						return RUN_WIDE;	/* integer operators: bounds checked there */
					if (p->op[j] == OP_MUL)
					{
						overflow = __builtin_mul_overflow(lhs, rhs, &v[sp - 1]);
						s[sp - 1] = ls + rs;
						if (unlikely(s[sp - 1] > FSDEC_MAX_SCALE))
							return RUN_WIDE;
					}
					else
					{
						if (ls != rs)
						{
							int			diff = ls < rs ? rs - ls : ls - rs;

							if (diff > FSDEC_MAX_DIGITS64 ||
								__builtin_mul_overflow(ls < rs ? lhs : rhs, fsdec_pow10_64[diff],
													   ls < rs ? &lhs : &rhs))
								return RUN_WIDE;
						}
						s[sp - 1] = Max(ls, rs);
						if (p->op[j] == OP_SUB)
							overflow = __builtin_sub_overflow(lhs, rhs, &v[sp - 1]);
						else
							overflow = __builtin_add_overflow(lhs, rhs, &v[sp - 1]);
					}
					if (unlikely(overflow))
						return RUN_WIDE;
					break;
				}
			case OP_NOTNULL:
				return RUN_WIDE;
		}
	}
	if (nul[0])
		return RUN_NULL;
	*result = v[0];
	*scale = s[0];
	return RUN_VALUE;
}

/*
 * The slow path: PostgreSQL evaluates argument k of the row (once, however
 * many aggregates share it), raising the errors it raises anywhere.
 */
static void
eval_slow(FlashAggState *fa, int k, TupleTableSlot *slot)
{
	ExprContext *econtext = fa->css.ss.ps.ps_ExprContext;
	bool		isnull;
	Datum		d;

	econtext->ecxt_outertuple = slot;
	d = ExecEvalExprSwitchContext(fa->slow_exprs[k], econtext, &isnull);
	fa->slow_values++;
	fa->arg_scale[k] = 0;
	if (isnull)
	{
		fa->arg_state[k] = ARG_NULL;
		return;
	}
	fa->arg_state[k] = ARG_V128;
	switch (exprType((Node *) fa->slow_exprs[k]->expr))
	{
		case NUMERICOID:
			if (!fsdec_from_numeric(d, &fa->arg_v[k], &fa->arg_scale[k]))
			{
				fa->arg_state[k] = ARG_NUMERIC;
				fa->arg_datum[k] = d;
			}
			break;
		case INT2OID:
			fa->arg_v[k] = DatumGetInt16(d);
			break;
		case INT4OID:
			fa->arg_v[k] = DatumGetInt32(d);
			break;
		default:
			fa->arg_v[k] = DatumGetInt64(d);
			break;
	}
}

/*
 * Decode the row's columns the programs use, once each: a null is null
 * for every program that reads it; a value the fast path cannot hold
 * sends those programs to the slow path.
 */
static void
decode_columns(FlashAggState *fa, TupleTableSlot *slot)
{
	int			c;

	for (c = 0; c < fa->ncols; c++)
	{
		int			a = fa->col_child[c];

		if (slot->tts_isnull[a])
		{
			fa->col_state[c] = COL_NULL;
			continue;
		}
		fa->col_state[c] = COL_VALUE;
		fa->col_scale[c] = 0;
		switch (fa->col_len[c])
		{
			case 0:
				if (!fsdec_from_numeric(slot->tts_values[a], &fa->col_v[c], &fa->col_scale[c]))
					fa->col_state[c] = COL_SLOW;
				else if ((fa->col_is64[c] = fsdec_fits_int64(fa->col_v[c])))
					fa->col_v64[c] = (int64) fa->col_v[c];
				continue;
			case 2:
				fa->col_v[c] = DatumGetInt16(slot->tts_values[a]);
				break;
			case 4:
				fa->col_v[c] = DatumGetInt32(slot->tts_values[a]);
				break;
			default:
				fa->col_v[c] = DatumGetInt64(slot->tts_values[a]);
				break;
		}
		fa->col_is64[c] = true;
		fa->col_v64[c] = (int64) fa->col_v[c];
	}
}

/* Compute each distinct argument of the row once. */
static void
eval_arguments(FlashAggState *fa, TupleTableSlot *slot)
{
	int			k;

	decode_columns(fa, slot);
	for (k = 0; k < fa->nargs; k++)
	{
		AggProgram *p = &fa->programs[k];
		bool		isnull;

		/* a bare column, the usual argument: no program to run */
		if (p->nsteps == 1 && p->op[0] == OP_COLUMN)
		{
			int			c = p->a[0];

			if (fa->col_state[c] == COL_NULL)
				fa->arg_state[k] = ARG_NULL;
			else if (fa->col_state[c] == COL_SLOW)
				eval_slow(fa, k, slot);
			else if (fa->col_is64[c])
			{
				fa->arg_state[k] = ARG_V64;
				fa->arg_v64[k] = fa->col_v64[c];
				fa->arg_scale[k] = fa->col_scale[c];
			}
			else
			{
				fa->arg_state[k] = ARG_V128;
				fa->arg_v[k] = fa->col_v[c];
				fa->arg_scale[k] = fa->col_scale[c];
			}
			continue;
		}
		switch (run_program64(fa, p, &fa->arg_v64[k], &fa->arg_scale[k]))
		{
			case RUN_VALUE:
				fa->arg_state[k] = ARG_V64;
				break;
			case RUN_NULL:
				fa->arg_state[k] = ARG_NULL;
				break;
			case RUN_SLOW:
				eval_slow(fa, k, slot);
				break;
			case RUN_WIDE:
				if (!run_program(fa, p, slot, &fa->arg_v[k], &fa->arg_scale[k], &isnull))
					eval_slow(fa, k, slot);
				else
					fa->arg_state[k] = isnull ? ARG_NULL : ARG_V128;
				break;
		}
	}
}

static void
accumulate(FlashAggState *fa, AggGroup *g, TupleTableSlot *slot)
{
	int			i;

	eval_arguments(fa, slot);
	for (i = 0; i < fa->naggs; i++)
	{
		AggAcc	   *acc = &g->acc[i];
		int			k = fa->agg_arg[i];
		int128		sum;

		if (k < 0)
		{
			/* count(*), or count(column) */
			if (fa->count_col[i] < 0 || !slot->tts_isnull[fa->count_col[i]])
				acc->count++;
			continue;
		}
		switch (fa->arg_state[k])
		{
			case ARG_V64:
				acc->count++;
				if (fa->kinds[i] == AK_COUNT)
					break;
				if (likely(acc->scale == fa->arg_scale[k]) &&
					!__builtin_add_overflow(acc->sum, (int128) fa->arg_v64[k], &sum))
					acc->sum = sum;
				else
					acc_add(fa, acc, fa->arg_v64[k], fa->arg_scale[k]);
				break;
			case ARG_V128:
				acc->count++;
				if (fa->kinds[i] != AK_COUNT)
					acc_add(fa, acc, fa->arg_v[k], fa->arg_scale[k]);
				break;
			case ARG_NULL:
				break;
			case ARG_NUMERIC:
				acc->count++;
				if (fa->kinds[i] != AK_COUNT)
					acc_add_slow(fa, acc, fa->arg_datum[k]);
				break;
		}
	}
}

/* Fold group b's accumulators into a's. */
static void
merge_group(FlashAggState *fa, AggGroup *a, AggGroup *b)
{
	int			i;

	for (i = 0; i < fa->naggs; i++)
	{
		a->acc[i].count += b->acc[i].count;
		if (b->acc[i].scale >= 0)
			acc_add(fa, &a->acc[i], b->acc[i].sum, b->acc[i].scale);
		if (b->acc[i].slow != (Datum) 0)
			acc_add_slow(fa, &a->acc[i], b->acc[i].slow);
	}
}

/*
 * Groups whose raw keys differ but are equal by the grouping operators
 * become one, the first met standing for it.
 */
static void
merge_equal_groups(FlashAggState *fa)
{
	TupleDesc	scandesc = fa->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	TupleDesc	keydesc;
	TupleTableSlot *keyslot;
	TupleHashTable ht;
	AttrNumber *cols;
	Oid		   *eqfuncs;
	FmgrInfo   *hashfuncs;
	Oid		   *collations;
	MemoryContext tmp,
				old;
	AggGroup   *g;
	int			k;

	fa->out = MemoryContextAlloc(fa->group_cxt, sizeof(AggGroup *) * Max(1, fa->ngroups));
	fa->nout = 0;
	if (fa->nkeys == 0 || fa->ngroups <= 1)
	{
		for (g = fa->first; g != NULL; g = g->next_in_order)
			fa->out[fa->nout++] = g;
		return;
	}
	tmp = AllocSetContextCreate(CurrentMemoryContext, "FlashScan Aggregate merge",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	keydesc = CreateTemplateTupleDesc(fa->nkeys);
	cols = palloc(sizeof(AttrNumber) * fa->nkeys);
	collations = palloc(sizeof(Oid) * fa->nkeys);
	for (k = 0; k < fa->nkeys; k++)
	{
		TupleDescCopyEntry(keydesc, k + 1, scandesc, k + 1);
		cols[k] = k + 1;
		collations[k] = TupleDescAttr(scandesc, k)->attcollation;
	}
	execTuplesHashPrepare(fa->nkeys, fa->key_eqops, &eqfuncs, &hashfuncs);
	keyslot = MakeSingleTupleTableSlot(keydesc, &TTSOpsVirtual);
	ht = BuildTupleHashTableExt(&fa->css.ss.ps, keydesc, fa->nkeys, cols, eqfuncs,
								hashfuncs, collations, fa->ngroups, 0,
								tmp, tmp, tmp, false);
	for (g = fa->first; g != NULL; g = g->next_in_order)
	{
		TupleHashEntry entry;
		bool		isnew;

		ExecClearTuple(keyslot);
		memcpy(keyslot->tts_values, g->keys, sizeof(Datum) * fa->nkeys);
		memcpy(keyslot->tts_isnull, g->nulls, sizeof(bool) * fa->nkeys);
		ExecStoreVirtualTuple(keyslot);
		entry = LookupTupleHashEntry(ht, keyslot, &isnew, NULL);
		if (isnew)
		{
			entry->additional = g;
			fa->out[fa->nout++] = g;
		}
		else
			merge_group(fa, (AggGroup *) entry->additional, g);
	}
	ExecDropSingleTupleTableSlot(keyslot);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/* ---- output ---- */

static Datum
acc_numeric(AggAcc *acc)
{
	Datum		d = (Datum) 0;

	if (acc->scale >= 0)
		d = fsdec_to_numeric(acc->sum, acc->scale);
	if (acc->slow != (Datum) 0)
		d = (d == (Datum) 0) ? acc->slow : DirectFunctionCall2(numeric_add, d, acc->slow);
	return d;
}

static Datum
acc_result(AggKind kind, AggAcc *acc, bool *isnull)
{
	*isnull = false;
	switch (kind)
	{
		case AK_COUNT_STAR:
		case AK_COUNT:
			return Int64GetDatum(acc->count);
		default:
			break;
	}
	if (acc->count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (kind == AK_SUM_NUMERIC)
		return acc_numeric(acc);
	if (kind == AK_SUM_INT8)
	{
		/* sum(int4) adds in bigint: int8pl's error where it overflows */
		if (acc->slow != (Datum) 0 || acc->sum < PG_INT64_MIN || acc->sum > PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("bigint out of range")));
		return Int64GetDatum((int64) acc->sum);
	}
	/* avg: numeric_avg()'s sum / count, with numeric_div()'s scale */
	return DirectFunctionCall2(numeric_div, acc_numeric(acc),
							   NumericGetDatum(int64_to_numeric(acc->count)));
}

/*
 * The next group's row: the keys, then per aggregate its result, or, from
 * a participant (AGG_PARTIAL), its count and, for sum and avg, its sum
 * (NULL when nothing was summed) in the columns the plan gave it.  The
 * values live until the next row is asked for, as a projection's.
 */
static TupleTableSlot *
next_output(FlashAggState *fa)
{
	TupleTableSlot *slot = fa->css.ss.ss_ScanTupleSlot;
	AggGroup   *g;
	int			k;
	MemoryContext old;

	ExecClearTuple(slot);
	if (fa->next_out >= fa->nout)
		return NULL;
	g = fa->out[fa->next_out++];
	for (k = 0; k < fa->nkeys; k++)
	{
		slot->tts_values[k] = g->keys[k];
		slot->tts_isnull[k] = g->nulls[k];
	}
	old = MemoryContextSwitchTo(fa->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	for (k = 0; k < fa->naggs; k++)
	{
		AggAcc	   *acc = &g->acc[k];
		int			col;

		if (fa->mode != AGG_PARTIAL)
		{
			slot->tts_values[fa->nkeys + k] =
				acc_result(fa->kinds[k], acc, &slot->tts_isnull[fa->nkeys + k]);
			continue;
		}
		/* aggregates sharing an argument write the same values to the same columns */
		col = fa->partial_count[k];
		slot->tts_values[col] = Int64GetDatum(acc->count);
		slot->tts_isnull[col] = false;
		col = fa->partial_sum[k];
		if (col < 0)
			continue;
		slot->tts_isnull[col] = (acc->count == 0);
		slot->tts_values[col] = acc->count == 0 ? (Datum) 0 : acc_numeric(acc);
	}
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}

/* Above the Gather: add up the participants' counts and sums. */
static void
combine_partial(FlashAggState *fa, AggGroup *g, TupleTableSlot *slot)
{
	int			k;

	for (k = 0; k < fa->naggs; k++)
	{
		AggAcc	   *acc = &g->acc[k];
		int			col = fa->partial_sum[k];
		int128		v;
		int			s;

		acc->count += DatumGetInt64(slot->tts_values[fa->partial_count[k]]);
		if (col < 0 || slot->tts_isnull[col])
			continue;
		if (fsdec_from_numeric(slot->tts_values[col], &v, &s))
			acc_add(fa, acc, v, s);
		else
			acc_add_slow(fa, acc, slot->tts_values[col]);
	}
}

static void
consume_child(FlashAggState *fa)
{
	Datum	   *values = fa->row_keys;
	bool	   *nulls = fa->row_nulls;
	ExprContext *econtext = fa->css.ss.ps.ps_ExprContext;
	MemoryContext old = CurrentMemoryContext;

	/* a plain aggregate returns one row, over no rows too */
	if (fa->nkeys == 0 && fa->mode != AGG_PARTIAL)
		find_group(fa, values, nulls);
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(fa->child);
		AggGroup   *g;
		int			k;

		CHECK_FOR_INTERRUPTS();
		if (TupIsNull(slot))
			break;
		MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		slot_getallattrs(slot);
		for (k = 0; k < fa->nkeys; k++)
		{
			values[k] = slot->tts_values[fa->key_cols[k]];
			nulls[k] = slot->tts_isnull[fa->key_cols[k]];
		}
		g = find_group(fa, values, nulls);
		if (fa->mode == AGG_COMBINE)
			combine_partial(fa, g, slot);
		else
			accumulate(fa, g, slot);
		MemoryContextSwitchTo(old);
		fa->rows_in++;
		ResetExprContext(econtext);
	}
	merge_equal_groups(fa);
	fa->groups_out = fa->nout;
	fa->done = true;
}

static TupleTableSlot *
agg_exec(CustomScanState *node)
{
	FlashAggState *fa = (FlashAggState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *qual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	if (!fa->done)
		consume_child(fa);
	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		ResetExprContext(econtext);
		slot = next_output(fa);
		if (slot == NULL)
			return NULL;
		econtext->ecxt_scantuple = slot;
		if (qual != NULL && !ExecQual(qual, econtext))
		{
			InstrCountFiltered1(node, 1);
			continue;
		}
		return proj ? ExecProject(proj) : slot;
	}
}

static void
agg_end(CustomScanState *node)
{
	FlashAggState *fa = (FlashAggState *) node;

	ExecEndNode(fa->child);
	MemoryContextDelete(fa->group_cxt);
	MemoryContextDelete(fa->sum_cxt);
}

static void
agg_rescan(CustomScanState *node)
{
	FlashAggState *fa = (FlashAggState *) node;

	/* the same rows again: keep the groups unless a parameter changed */
	if (fa->done && node->ss.ps.chgParam == NULL)
	{
		fa->next_out = 0;
		return;
	}
	reset_groups(fa);
	/* the child is not our lefttree: pass the changed parameters on */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(fa->child, node->ss.ps.chgParam);
	if (fa->child->chgParam == NULL)
		ExecReScan(fa->child);
}

static void
agg_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	FlashAggState *fa = (FlashAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	if (fa->nkeys > 0)
	{
		List	   *context = set_deparse_context_plan(es->deparse_cxt,
													   (Plan *) cscan, ancestors);
		List	   *keys = NIL;
		ListCell   *lc;
		int			k = 0;
		/* as Agg's Group Key: qualified when the query has other relations */
		bool		useprefix = list_length(es->rtable) > 1 || es->verbose;

		foreach(lc, cscan->custom_scan_tlist)
		{
			if (k++ >= fa->nkeys)
				break;
			keys = lappend(keys,
						   deparse_expression((Node *) ((TargetEntry *) lfirst(lc))->expr,
											  context, useprefix, false));
		}
		ExplainPropertyList("Group Key", keys, es);
	}
	if (es->analyze)
	{
		ExplainPropertyInteger(fa->mode == AGG_COMBINE ? "Partial Rows" : "Rows Aggregated",
							   NULL, fa->rows_in, es);
		ExplainPropertyInteger("Groups", NULL, fa->groups_out, es);
		ExplainPropertyInteger("Values Computed by PostgreSQL", NULL, fa->slow_values, es);
	}
}

/* ---- parallel: the participants' counters, for EXPLAIN ANALYZE ---- */

static Size
agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return sizeof(AggShared);
}

static void
agg_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	FlashAggState *fa = (FlashAggState *) node;

	fa->shared = (AggShared *) coordinate;
	pg_atomic_init_u64(&fa->shared->rows_in, 0);
	pg_atomic_init_u64(&fa->shared->slow_values, 0);
	pg_atomic_init_u64(&fa->shared->groups_out, 0);
}

static void
agg_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	agg_initialize_dsm(node, pcxt, coordinate);
}

static void
agg_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((FlashAggState *) node)->shared = (AggShared *) coordinate;
}

/*
 * Each participant adds its counters as it shuts down; the leader's
 * shutdown comes after the workers' (the Gather has read them to the end)
 * and before the Gather's, which takes the shared memory away.
 */
static void
agg_shutdown(CustomScanState *node)
{
	FlashAggState *fa = (FlashAggState *) node;
	AggShared  *sh = fa->shared;

	if (sh == NULL)
		return;
	pg_atomic_fetch_add_u64(&sh->rows_in, fa->rows_in);
	pg_atomic_fetch_add_u64(&sh->slow_values, fa->slow_values);
	pg_atomic_fetch_add_u64(&sh->groups_out, fa->groups_out);
	if (!IsParallelWorker())
	{
		fa->rows_in = pg_atomic_read_u64(&sh->rows_in);
		fa->slow_values = pg_atomic_read_u64(&sh->slow_values);
		fa->groups_out = pg_atomic_read_u64(&sh->groups_out);
	}
	fa->shared = NULL;
}

void
flashscan_agg_init(void)
{
	DefineCustomBoolVariable("flashscan.enable_aggregate",
							 "Offers FlashScan Aggregate: count, sum and avg over a FlashScan in exact 128-bit arithmetic.",
							 "Off: aggregates over pax tables run in HashAggregate or GroupAggregate.",
							 &flashscan_enable_aggregate, true, PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&agg_scan_methods[AGG_FINAL]);
	RegisterCustomScanMethods(&agg_scan_methods[AGG_PARTIAL]);
	RegisterCustomScanMethods(&agg_scan_methods[AGG_COMBINE]);
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = flashscan_agg_upper_paths;
}
