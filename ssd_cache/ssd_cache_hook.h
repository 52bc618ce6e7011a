/*-------------------------------------------------------------------------
 *
 * ssd_cache_hook.h
 *	  Load-time wrapping of PostgreSQL's storage-manager and sync dispatch
 *	  tables (see ssd_cache_hook.c for how, and for the audit of bypasses).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_HOOK_H
#define SSD_CACHE_HOOK_H

#include "fmgr.h"

/* The dispatch-table slots ssd_cache wraps, in the order they are shown. */
typedef enum SsdCacheHookSlot
{
	HOOK_SMGR_CREATE,
	HOOK_SMGR_UNLINK,
	HOOK_SMGR_EXTEND,
	HOOK_SMGR_PREFETCH,
	HOOK_SMGR_READ,
	HOOK_SMGR_WRITE,
	HOOK_SMGR_WRITEBACK,
	HOOK_SMGR_TRUNCATE,
	HOOK_SYNC_SYNCFILETAG,
	HOOK_SYNC_UNLINKFILETAG,
	SSD_CACHE_HOOK_NSLOTS
} SsdCacheHookSlot;

extern void ssd_cache_hook_install(void);
extern bool ssd_cache_hook_active(void);
extern const char *ssd_cache_hook_problem(void);
extern Size ssd_cache_hook_shmem_size(void);
extern void ssd_cache_hook_shmem_init(void);

#endif							/* SSD_CACHE_HOOK_H */
