/*-------------------------------------------------------------------------
 *
 * flashscan.h
 *	  Declarations shared by the flashscan module's files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLASHSCAN_H
#define FLASHSCAN_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

/* flashscan_quals.c */
#define FLASHSCAN_EARLY_NO				0
#define FLASHSCAN_EARLY_YES				1
#define FLASHSCAN_EARLY_UNLESS_FETCHED	2
extern int	flashscan_early_flag(PlannerInfo *root, Node *qual);
extern List *flashscan_early_flags(PlannerInfo *root, List *quals);

/* flashscan_scan.c */
extern bool flashscan_enable;
extern bool flashscan_selection_first;
extern bool flashscan_join_filter;
extern void flashscan_attach_hash_join(PlanState *scan, HashJoinState *hj);
extern void flashscan_explain_hash_join(PlanState *scan, HashJoinState *hj);
extern void flashscan_scan_init(void);
extern bool flashscan_is_pax_relation(RangeTblEntry *rte);
extern CustomPath *flashscan_create_path(PlannerInfo *root, RelOptInfo *rel,
										 PathTarget *target);
extern CustomPath *flashscan_create_partial_path(PlannerInfo *root, RelOptInfo *rel,
												PathTarget *target);
extern bool flashscan_is_path(Path *path);
extern int32 flashscan_column_width(Oid relid, AttrNumber attnum, Oid typid, int32 typmod);
extern double flashscan_column_blocks(Oid relid, TupleDesc desc, List *atts,
									  double rows_per_group);

/* flashscan_decimal.c: x * 10^scale in 128 bits */
#define FSDEC_MAX_DIGITS	38
#define FSDEC_MAX_SCALE		32
#define FSDEC_MAX_DIGITS64	18	/* 10^18 < 2^63 */
extern const int64 fsdec_pow10_64[FSDEC_MAX_DIGITS64 + 1];

static inline bool
fsdec_fits_int64(int128 v)
{
	return v >= PG_INT64_MIN && v <= PG_INT64_MAX;
}

extern bool fsdec_scale_up(int128 *v, int by);
extern bool fsdec_from_numeric(Datum d, int128 *v, int *scale);
extern bool fsdec_add(int128 a, int sa, int128 b, int sb, int128 *r, int *sr);
extern bool fsdec_mul(int128 a, int sa, int128 b, int sb, int128 *r, int *sr);
extern Datum fsdec_to_numeric(int128 v, int scale);

/* flashscan_agg.c */
extern bool flashscan_enable_aggregate;
extern void flashscan_agg_init(void);

/* flashjoin_plan.c */
typedef enum FlashJoinMode
{
	FLASHJOIN_OFF,
	FLASHJOIN_REWRITE,
	FLASHJOIN_COST
} FlashJoinMode;

typedef enum FlashFetchMode
{
	FLASHFETCH_AUTO,
	FLASHFETCH_NAIVE,
	FLASHFETCH_SORTED
} FlashFetchMode;

extern int	flashjoin_mode;
extern int	flashjoin_fetch_mode;
extern void flashjoin_plan_init(void);

/* flashjoin_fetch.c */
extern const CustomScanMethods *flashjoin_fetch_scan_methods(void);

#endif							/* FLASHSCAN_H */
