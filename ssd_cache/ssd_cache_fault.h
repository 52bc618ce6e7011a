/*-------------------------------------------------------------------------
 *
 * ssd_cache_fault.h
 *	  What ssd_cache does when the cache itself is in trouble.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_FAULT_H
#define SSD_CACHE_FAULT_H

#include "storage/buf_internals.h"

/* After this many SSD errors within a minute the cache stops serving. */
#define SSD_ERRORS_TO_GIVE_UP	8
#define SSD_ERROR_WINDOW_SECS	60

extern Size ssd_cache_fault_shmem_size(void);
extern void ssd_cache_fault_shmem_init(void);

extern void ssd_cache_set_off(const char *reason);
extern void ssd_cache_give_up(const char *why);
extern void ssd_cache_fault_watch_fresher(int64 (*count) (void));
extern void ssd_cache_io_error(const char *what, const BufferTag *tag);
extern bool ssd_cache_bypassed(void);
extern bool ssd_cache_problem(char *buf, Size len);
extern int64 ssd_cache_error_count(void);
extern void ssd_cache_reset_error_count(void);

#endif							/* SSD_CACHE_FAULT_H */
