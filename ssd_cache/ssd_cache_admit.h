/*-------------------------------------------------------------------------
 *
 * ssd_cache_admit.h
 *	  The admission queue and the background worker that fills the cache.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_ADMIT_H
#define SSD_CACHE_ADMIT_H

#include "storage/buf_internals.h"

/* Page copies waiting to be written to the SSD (4 MB of shared memory). */
#define SSD_ADMIT_QUEUE_MAX		512

extern Size ssd_cache_admit_shmem_size(void);
extern void ssd_cache_admit_shmem_init(void);
extern int	ssd_cache_offer_reserve(const BufferTag *tag);
extern void ssd_cache_offer_fill(int item, const char *page);
extern void ssd_cache_offer_withdraw(int item, const BufferTag *tag);
extern int	ssd_cache_admit_queued_tags(BufferTag *out);
extern bool ssd_cache_admit_has_relation(RelFileNode rnode);
extern uint32 ssd_cache_admit_queue_length(void);
extern void ssd_cache_admit_wake_worker(void);

/* Directory-side halves of an offer (ssd_cache_directory.c). */
extern bool ssd_cache_offer_begin(const BufferTag *tag);
extern void ssd_cache_offer_abandon(const BufferTag *tag);

PGDLLEXPORT void ssd_cache_admit_main(Datum arg);

#endif							/* SSD_CACHE_ADMIT_H */
