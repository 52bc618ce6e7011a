/*-------------------------------------------------------------------------
 *
 * ssdkit_memory.h
 *	  How much the OS page cache can hold for this server, measured.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_MEMORY_H
#define SSDKIT_MEMORY_H

#include "postgres.h"

#include "ssdkit_uring.h"

/*
 * The caches a plan's pages and temp files can stay in, in pages:
 * shared_buffers and the OS page cache together, and the OS page cache
 * alone (temp files do not go through shared_buffers).  From
 * effective_cache_size when the DBA set it, else measured (see
 * ssdkit_memory.c), else effective_cache_size's default.
 */
typedef struct SsdkitCacheSize
{
	double		total_pages;	/* shared_buffers + OS page cache */
	double		os_pages;		/* the OS page cache */
	const char *source;			/* "effective_cache_size", "memory cgroup
								 * limit" or "MemAvailable" */
	bool		guessed;		/* effective_cache_size at its default, no
								 * measurement: a guess, not a limit */
} SsdkitCacheSize;

extern SSDKIT_INTERNAL void ssdkit_cache_size(SsdkitCacheSize *size);

#endif							/* SSDKIT_MEMORY_H */
