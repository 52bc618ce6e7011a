/*-------------------------------------------------------------------------
 *
 * ssd_cache_slots.h
 *	  The slot descriptors of the cache file, shared by the directory (which
 *	  owns them and decides what happens to a slot) and the policy (which
 *	  reads them to pick victims), as bufmgr.c and freelist.c share
 *	  buf_internals.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_SLOTS_H
#define SSD_CACHE_SLOTS_H

#include "port/atomics.h"
#include "storage/buf_internals.h"

typedef struct SsdSlot
{
	BufferTag	tag;			/* valid while in_use */
	pg_atomic_uint32 pins;		/* readers and writers using the slot */
	pg_atomic_uint32 writes;	/* odd while a write of the slot's page is
								 * under way (to the slot or to the disk);
								 * bumped twice per write */
	uint8		usage;			/* clock reference bit */
	bool		in_use;
	int32		free_next;
	uint32		gen;			/* bumped whenever the slot changes page */
} SsdSlot;

/* In shared memory; written only by ssd_cache_directory.c. */
extern SsdSlot *ssd_cache_slot_array;
extern uint64 ssd_cache_slot_count;

#endif							/* SSD_CACHE_SLOTS_H */
