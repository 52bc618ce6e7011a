/*-------------------------------------------------------------------------
 *
 * ssd_cache_disk.h
 *	  Writing fresher-than-disk pages back to the data files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_DISK_H
#define SSD_CACHE_DISK_H

#include "storage/buf_internals.h"

/* Running processes: through md.c, errors are ERRORs (fsync: PANIC). */
extern bool ssd_cache_disk_write(const BufferTag *tag, const char *page);
extern void ssd_cache_disk_sync(int n, const BufferTag *tags, const bool *skip);
extern bool ssd_cache_disk_relation_removed(const BufferTag *tag);
extern bool ssd_cache_disk_relation_unlogged(RelFileNode rnode);

/* The exiting postmaster: plain system calls, one segment open at a time. */
typedef struct SsdDiskPlainFile
{
	int			fd;				/* -1: none open */
	char		path[MAXPGPATH];
} SsdDiskPlainFile;

extern bool ssd_cache_disk_plain_write(SsdDiskPlainFile *file, const BufferTag *tag,
									   const char *page);
extern bool ssd_cache_disk_plain_close(SsdDiskPlainFile *file);

#endif							/* SSD_CACHE_DISK_H */
