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

#endif							/* SSD_CACHE_TEMPERATURES_H */
