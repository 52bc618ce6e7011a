/*-------------------------------------------------------------------------
 *
 * flashscan.c
 *	  Module entry point of flashscan: GUC namespace and status.
 *
 * The pax table access method loads the library on first use; the FlashScan
 * planner hook needs it in shared_preload_libraries.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "flashscan.h"
#include "pax.h"
#include "ssdkit_status.h"

PG_MODULE_MAGIC;

/* Whether the library came in through shared_preload_libraries. */
static bool loaded_at_startup = false;

int			pax_default_group_blocks = PAX_DEFAULT_GROUP_BLOCKS;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(flashscan_status);

void
_PG_init(void)
{
	loaded_at_startup = process_shared_preload_libraries_in_progress;

	/* Unknown "flashscan.*" settings are errors, so a typo cannot go unnoticed. */

	/*
	 * PostgreSQL 15 gives table access methods no reloptions of their own
	 * (heap's parser rejects unknown ones), so a table's group size comes
	 * from this setting when it is created and is kept in its metapage;
	 * pax_set_group_blocks() changes it for later groups.
	 */
	DefineCustomIntVariable("flashscan.group_blocks",
							"Blocks per group of pax tables created from now on.",
							"A group holds the rows of one range column by column; the scan of a column reads its minipage's blocks only.",
							&pax_default_group_blocks, PAX_DEFAULT_GROUP_BLOCKS,
							PAX_MIN_GROUP_BLOCKS, PAX_MAX_GROUP_BLOCKS,
							PGC_USERSET, 0, NULL, NULL, NULL);

	/*
	 * A standby replays the primary's pages with its own library: while
	 * some standby's library is older, the primary must write a format it
	 * reads (the metapage records the newest format a table holds).
	 */
	DefineCustomIntVariable("flashscan.write_format",
							"Format version new pax tables and groups are written in.",
							"6 keeps delta pages' row states in the page; 5 gives variable-width minipages a stride index (fast single-row fetches); 4 is the format earlier libraries read.",
							&pax_write_format, PAX_FORMAT_VERSION,
							PAX_MIN_FORMAT_VERSION, PAX_FORMAT_VERSION,
							PGC_SUSET, 0, NULL, NULL, NULL);
	/*
	 * A dead row costs a pax scan what a live one does until VACUUM
	 * rewrites its group; a rewrite costs writing the live rows again.
	 * Greenplum's append-optimized tables compact at 10% by default too.
	 */
	DefineCustomRealVariable("flashscan.vacuum_rewrite_fraction",
							 "Share of a pax group's rows that must be dead for VACUUM to rewrite the group without them.",
							 "Groups with fewer dead rows keep them, marked in a dead-row bitmap; 1 rewrites only groups with no live row.",
							 &pax_vacuum_rewrite_fraction, 0.1, 0.0, 1.0,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	flashscan_scan_init();
	flashjoin_plan_init();
	flashscan_agg_init();
	MarkGUCPrefixReserved("flashscan");
	pax_writer_init();
	pax_ddl_init();
	pax_bitmap_init();
	pax_decode_init();
	pax_exec_init();
}

/* flashscan_status(): library version, how it was loaded, io_uring support. */
Datum
flashscan_status(PG_FUNCTION_ARGS)
{
	return ssdkit_status_record(fcinfo, loaded_at_startup);
}
