/*-------------------------------------------------------------------------
 *
 * ssdkit_cache.h
 *	  What ssd_cache tells the other ssdkit extensions: whether it holds a
 *	  block.  ssd_cache publishes the API through a rendezvous variable
 *	  when it is preloaded (ssd_cache.c); another extension looks it up
 *	  without linking against it.
 *
 * flashscan's shared-scan pusher reads groups ahead with io_uring straight
 * from the data files: a block the SSD cache holds would be read from the
 * slow disk for nothing, since the buffer manager's read that follows is
 * served from the cache.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_CACHE_H
#define SSDKIT_CACHE_H

#include "fmgr.h"
#include "storage/buf_internals.h"

#define SSDKIT_CACHE_RENDEZVOUS	"ssdkit_cache_api"
#define SSDKIT_CACHE_API_VERSION 1

typedef struct SsdkitCacheApi
{
	int			version;		/* SSDKIT_CACHE_API_VERSION */

	/* Does the cache hold a valid copy of this block (false while it is off)? */
	bool		(*contains) (const BufferTag *tag);
} SsdkitCacheApi;

/* The API ssd_cache published, if it is preloaded; else NULL. */
static inline SsdkitCacheApi *
ssdkit_cache_api(void)
{
	static SsdkitCacheApi **api = NULL;

	if (api == NULL)
		api = (SsdkitCacheApi **) find_rendezvous_variable(SSDKIT_CACHE_RENDEZVOUS);
	return *api;
}

#endif							/* SSDKIT_CACHE_H */
