/*-------------------------------------------------------------------------
 *
 * ssd_cache_cleaner.h
 *	  The cleaner process: writes pages newer than the disk back.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_CLEANER_H
#define SSD_CACHE_CLEANER_H

PGDLLEXPORT void ssd_cache_cleaner_main(Datum arg);

#endif							/* SSD_CACHE_CLEANER_H */
