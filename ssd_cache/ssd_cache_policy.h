/*-------------------------------------------------------------------------
 *
 * ssd_cache_policy.h
 *	  Admission and replacement policies of ssd_cache: TAC and clock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSD_CACHE_POLICY_H
#define SSD_CACHE_POLICY_H

#include "storage/buf_internals.h"

typedef enum SsdCachePolicy
{
	SSD_POLICY_TAC,
	SSD_POLICY_CLOCK
} SsdCachePolicy;

typedef enum SsdSeqDetect
{
	SSD_SEQ_WINDOW,				/* the paper's 20-request window */
	SSD_SEQ_ADJACENT,			/* block = previous block of the fork + 1 */
	SSD_SEQ_BOTH,
	SSD_SEQ_NONE				/* every read is random (experiments, tests) */
} SsdSeqDetect;

/* GUCs (ssd_cache.c defines them). */
extern int	ssd_cache_policy;
extern int	ssd_cache_seq_detect;
extern double ssd_cache_disk_random_ms;
extern double ssd_cache_disk_seq_ms;
extern double ssd_cache_ssd_random_ms;

#define SSD_TAC_REGION_PAGES	32
#define SSD_TAC_WINDOW			20
#define SSD_TAC_SEQ_THRESHOLD	3	/* "more than 2" occurrences in the window */
#define SSD_TAC_MARGIN			1.01
#define SSD_TAC_REFRESH_STEPS	5
#define SSD_POLICY_NUM_PARTITIONS 16

extern Size ssd_cache_policy_shmem_size(uint64 nslots);
extern void ssd_cache_policy_shmem_init(uint64 nslots, LWLockPadded *locks);

/* Reader side. */
extern double ssd_cache_heat(const BufferTag *tag, bool *sequential);
extern bool ssd_cache_should_offer(double temperature, bool sequential, bool full);

/* Writers (write-back). */
extern bool ssd_cache_write_sequential(const BufferTag *tag);
extern void ssd_cache_note_foreign_admission(void);

/* Admission worker side. */
extern double ssd_cache_region_temperature(const BufferTag *tag);
extern void ssd_cache_age_if_due(void);
extern void ssd_cache_publish_threshold(double threshold);
extern double ssd_cache_delta_random(void);
extern double ssd_cache_delta_seq(void);
extern uint64 ssd_cache_agings(void);

/*
 * A region's temperature as ssd_cache_temperatures.c saves it (32 bytes,
 * no padding left to chance: the file is read back by the same build's
 * layout only, checked by its format number).
 */
typedef struct SsdSavedRegion
{
	RelFileNode rnode;
	int32		forkNum;
	uint32		region;
	uint32		unused;
	double		temperature;
} SsdSavedRegion;

extern SsdSavedRegion *ssd_cache_copy_temperatures(uint64 *n);
extern uint64 ssd_cache_restore_temperatures(const SsdSavedRegion *saved, uint64 n);

/* Replacement (the admission worker's): candidates for eviction. */
extern int32 ssd_cache_next_victim(double t_new);
extern void ssd_cache_victim_admitted(int32 slot, double temperature);
extern void ssd_cache_refresh_admission_bar(bool full);

#endif							/* SSD_CACHE_POLICY_H */
