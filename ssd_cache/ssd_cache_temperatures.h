/*-------------------------------------------------------------------------
 *
 * ssd_cache_temperatures.h
 *	  TAC's region temperatures saved across restarts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_TEMPERATURES_H
#define SSD_CACHE_TEMPERATURES_H

extern void ssd_cache_save_temperatures(void);
extern void ssd_cache_save_temperatures_if_due(void);
extern void ssd_cache_load_temperatures(void);

/* write(2) or read(2) all of it or fail (EINTR retried; a short write is ENOSPC) */
extern bool ssd_cache_write_all(int fd, const void *buf, Size len);
extern bool ssd_cache_read_all(int fd, void *buf, Size len);

#endif							/* SSD_CACHE_TEMPERATURES_H */
