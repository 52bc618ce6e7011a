/*-------------------------------------------------------------------------
 *
 * ssd_cache_lifecycle.h
 *	  SQL-level hooks for file operations that bypass smgr.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_LIFECYCLE_H
#define SSD_CACHE_LIFECYCLE_H

extern void ssd_cache_lifecycle_install(void);

#endif							/* SSD_CACHE_LIFECYCLE_H */
