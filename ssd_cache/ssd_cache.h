/*-------------------------------------------------------------------------
 *
 * ssd_cache.h
 *	  Declarations shared by the modules of ssd_cache.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_H
#define SSD_CACHE_H

/*
 * Test-only fault injection (ssd_cache.fault_injection): whether the named
 * fault point is enabled.  Known points are listed in ssd_cache.c.
 */
extern bool ssd_cache_fault_enabled(const char *point);

extern const char *ssd_cache_configured_path(void);

/* ERROR unless the library was preloaded (for the SQL functions). */
extern void ssd_cache_require_preload(void);

#endif							/* SSD_CACHE_H */
