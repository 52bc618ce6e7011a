/*-------------------------------------------------------------------------
 *
 * ssd_cache_writeback.h
 *	  Write-back (PC): which writes the SSD absorbs instead of the disk.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_WRITEBACK_H
#define SSD_CACHE_WRITEBACK_H

#include "storage/buf_internals.h"

typedef enum SsdCacheMode
{
	SSD_MODE_WRITE_THROUGH,
	SSD_MODE_WRITE_BACK,
	SSD_MODE_LAZY_CLEANING
} SsdCacheMode;

/* Lazy cleaning writes back once this share of the cache is fresher. */
#define SSD_LC_DIRTY_SHARE	0.5

/* GUCs (ssd_cache.c defines them). */
extern int	ssd_cache_mode;
extern int	ssd_cache_evict_batch;

extern Size ssd_cache_writeback_shmem_size(void);
extern void ssd_cache_writeback_shmem_init(void);

extern bool ssd_cache_write_back_active(char **why_not);
extern bool ssd_cache_wb_lazy_cleaning(void);
extern void ssd_cache_wb_publish_mode(void);
extern bool ssd_cache_wb_absorb(const BufferTag *tag, const char *page);
extern void ssd_cache_wb_worker_duties(bool reloaded);
extern void ssd_cache_wb_note_loaded(void);
extern void ssd_cache_wb_at_checkpoint(void);
extern void ssd_cache_wb_install_hooks(void);
extern const char *ssd_cache_wb_suspension(void);

/* Files about to be copied behind smgr's back (database-level commands). */
extern void ssd_cache_wb_suspend_database(Oid dbNode);
extern void ssd_cache_wb_resume_database(Oid dbNode);

#endif							/* SSD_CACHE_WRITEBACK_H */
