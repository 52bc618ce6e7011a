/*-------------------------------------------------------------------------
 *
 * ssd_cache_policy.c
 *	  Temperature-aware caching (TAC, Canim et al., VLDB 2010) and the
 *	  clock baseline: which page reads heat which region, which reads are
 *	  sequential, and which pages are worth admitting.
 *
 * Temperature.  Statistics are kept per region of 32 aligned blocks of a
 * relation fork.  Every read that misses shared_buffers (an SSD hit or a
 * disk read) adds the I/O time the SSD saves, or would save, for it:
 *	ΔR = disk random read - SSD random read		for a random read,
 *	ΔS = disk sequential read - SSD random read	for a sequential read,
 * with ΔS clamped to at least 1% of ΔR (on fast disks the paper's premise
 * S_disk > R_ssd fails).  Writes do not heat.  Every "slots" accesses all
 * temperatures are halved, so recent use weighs more.
 *
 * Sequential detection.  Per backend (a global window would mix streams):
 * a read is sequential if its region occurs at least 3 times among this
 * backend's last 20 reads, itself included (the paper's window, in its
 * sliding form, which decides at once).  Optionally also if it reads the
 * block after the previous read of the same fork ("adjacent"), which is how
 * PostgreSQL 15's sequential scans and readahead look from below the buffer
 * manager, where the access strategy is not visible.
 *
 * Admission.  Sequential reads are never admitted.  clock admits every
 * random read.  TAC admits every random read while the cache has free
 * slots; when it is full, the admission worker finds the coldest cached
 * page with a min-heap of slots keyed by temperature, refreshing up to 5
 * stale keys, and admits only pages at least 1% warmer than it.  The worker
 * publishes that bar, so backends do not queue pages that cannot pass.
 *
 * Replacement.  The policy only names candidates (ssd_cache_next_victim);
 * the directory evicts them, or asks again when a candidate is in use.  TAC
 * keeps a min-heap of cached slots keyed by their region's temperature when
 * last looked at ("coldest first"), local to the admission worker, the one
 * process that evicts; clock sweeps a shared hand over the slots' reference
 * bits.
 *
 * Shared state owned here: the region temperatures (a partitioned hash),
 * the access count that drives aging, and the published bar.  The paper's
 * temperatures start from zero after a restart; ours are saved at every
 * checkpoint and at shutdown (ssd_cache_temperatures.c), because a warm
 * cache whose pages all look cold admits the first pages read after the
 * restart in place of the hot ones.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "ssd_cache_policy.h"
#include "ssd_cache_slots.h"

typedef struct SsdRegionKey
{
	RelFileNode rnode;
	ForkNumber	forkNum;
	BlockNumber region;
} SsdRegionKey;

typedef struct SsdRegionEnt
{
	SsdRegionKey key;
	double		temperature;	/* ms of I/O saved, aged */
} SsdRegionEnt;

typedef struct SsdPolicyShared
{
	pg_atomic_uint64 accesses;
	pg_atomic_uint64 next_aging;
	pg_atomic_uint64 agings;
	pg_atomic_uint64 threshold_bits;	/* double: the bar while full */
	pg_atomic_uint64 clock_hand;
	pg_atomic_uint64 foreign_admissions;	/* slots filled by writers, not
											 * yet in the worker's heap */
	uint64		aging_interval;
} SsdPolicyShared;

int			ssd_cache_policy = SSD_POLICY_TAC;
int			ssd_cache_seq_detect = SSD_SEQ_BOTH;
double		ssd_cache_disk_random_ms = 5.0;
double		ssd_cache_disk_seq_ms = 0.04;
double		ssd_cache_ssd_random_ms = 0.03;

static SsdPolicyShared *policy = NULL;
static HTAB *region_hash = NULL;
static LWLockPadded *region_locks = NULL;

/* A process's recent accesses of one kind, for the sequential test. */
typedef struct SeqWindow
{
	SsdRegionKey regions[SSD_TAC_WINDOW];
	int			len;
	int			next;
	BufferTag	last;
} SeqWindow;

/* This process's recent reads, and its recent writes. */
static SeqWindow read_window;
static SeqWindow write_window;

#define REGION_LOCK(h)	(&region_locks[(h) % SSD_POLICY_NUM_PARTITIONS].lock)

static uint64
region_capacity(uint64 nslots)
{
	return nslots / 2 + 4096;
}

Size
ssd_cache_policy_shmem_size(uint64 nslots)
{
	return add_size(MAXALIGN(sizeof(SsdPolicyShared)),
					hash_estimate_size(region_capacity(nslots), sizeof(SsdRegionEnt)));
}

void
ssd_cache_policy_shmem_init(uint64 nslots, LWLockPadded *locks)
{
	HASHCTL		info;
	bool		found;

	policy = ShmemInitStruct("ssd_cache policy", sizeof(SsdPolicyShared), &found);
	pg_atomic_init_u64(&policy->accesses, 0);
	pg_atomic_init_u64(&policy->agings, 0);
	pg_atomic_init_u64(&policy->threshold_bits, 0);
	pg_atomic_init_u64(&policy->clock_hand, 0);
	pg_atomic_init_u64(&policy->foreign_admissions, 0);
	policy->aging_interval = Max(nslots, 1024);
	pg_atomic_init_u64(&policy->next_aging, policy->aging_interval);

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SsdRegionKey);
	info.entrysize = sizeof(SsdRegionEnt);
	info.num_partitions = SSD_POLICY_NUM_PARTITIONS;
	/*
	 * Fixed size: a full table refuses new regions (ssd_cache_heat counts
	 * the access alone) instead of taking the spare shared memory that the
	 * lock tables grow into.
	 */
	region_hash = ShmemInitHash("ssd_cache region temperatures",
								region_capacity(nslots), region_capacity(nslots),
								&info, HASH_ELEM | HASH_BLOBS | HASH_PARTITION | HASH_FIXED_SIZE);
	region_locks = locks;
}

double
ssd_cache_delta_random(void)
{
	return Max(ssd_cache_disk_random_ms - ssd_cache_ssd_random_ms, 0.001);
}

double
ssd_cache_delta_seq(void)
{
	double		dr = ssd_cache_delta_random();

	return Max(ssd_cache_disk_seq_ms - ssd_cache_ssd_random_ms, dr * 0.01);
}

uint64
ssd_cache_agings(void)
{
	return policy ? pg_atomic_read_u64(&policy->agings) : 0;
}

static void
region_of(const BufferTag *tag, SsdRegionKey *key)
{
	memset(key, 0, sizeof(*key));
	key->rnode = tag->rnode;
	key->forkNum = tag->forkNum;
	key->region = tag->blockNum / SSD_TAC_REGION_PAGES;
}

/* Record this access in window w; is it sequential? */
static bool
classify(SeqWindow *w, const BufferTag *tag, const SsdRegionKey *key)
{
	bool		adjacent;
	int			i,
				hits = 1;

	adjacent = RelFileNodeEquals(w->last.rnode, tag->rnode) &&
		w->last.forkNum == tag->forkNum &&
		w->last.blockNum + 1 == tag->blockNum;
	w->last = *tag;

	/*
	 * The window is this access and the 19 before it: when the ring is full,
	 * its oldest entry (about to be replaced) does not count.
	 */
	for (i = 0; i < w->len; i++)
	{
		if (w->len == SSD_TAC_WINDOW && i == w->next)
			continue;
		if (memcmp(&w->regions[i], key, sizeof(SsdRegionKey)) == 0)
			hits++;
	}
	w->regions[w->next] = *key;
	w->next = (w->next + 1) % SSD_TAC_WINDOW;
	if (w->len < SSD_TAC_WINDOW)
		w->len++;

	switch ((SsdSeqDetect) ssd_cache_seq_detect)
	{
		case SSD_SEQ_WINDOW:
			return hits >= SSD_TAC_SEQ_THRESHOLD;
		case SSD_SEQ_ADJACENT:
			return adjacent;
		case SSD_SEQ_NONE:
			return false;
		case SSD_SEQ_BOTH:
			break;
	}
	return adjacent || hits >= SSD_TAC_SEQ_THRESHOLD;
}

/*
 * A read missed shared_buffers: classify it, heat its region, and return
 * the region's new temperature.
 */
double
ssd_cache_heat(const BufferTag *tag, bool *sequential)
{
	SsdRegionKey key;
	uint32		hash;
	SsdRegionEnt *ent;
	bool		found;
	double		delta,
				temperature;

	region_of(tag, &key);
	*sequential = classify(&read_window, tag, &key);
	delta = *sequential ? ssd_cache_delta_seq() : ssd_cache_delta_random();

	hash = get_hash_value(region_hash, &key);
	LWLockAcquire(REGION_LOCK(hash), LW_EXCLUSIVE);
	ent = hash_search_with_hash_value(region_hash, &key, hash, HASH_ENTER_NULL, &found);
	if (ent == NULL)
		temperature = delta;	/* table full: only this access counts */
	else
	{
		if (!found)
			ent->temperature = 0;
		ent->temperature += delta;
		temperature = ent->temperature;
	}
	LWLockRelease(REGION_LOCK(hash));
	pg_atomic_fetch_add_u64(&policy->accesses, 1);
	return temperature;
}

/*
 * A write of a dirty page, below the buffer manager: is it part of a
 * sequential pattern (a bulk-write or vacuum ring writing in block order, a
 * scan's ring flushing hint-bit pages), by the same test as reads?  Writes
 * do not heat.
 */
bool
ssd_cache_write_sequential(const BufferTag *tag)
{
	SsdRegionKey key;

	region_of(tag, &key);
	return classify(&write_window, tag, &key);
}

/*
 * A writer (write-back) put a page into a free slot.  TAC's heap is the
 * admission worker's; it is rebuilt once such slots are a noticeable share
 * of the cache, so they become candidates for eviction too.
 */
void
ssd_cache_note_foreign_admission(void)
{
	if (policy)
		pg_atomic_fetch_add_u64(&policy->foreign_admissions, 1);
}

/*
 * A copy of every region's temperature, for saving, palloc'd in the
 * caller's context; NULL if that memory is not available.  The hash is held
 * shared only while copying (readers that heat a region wait that long,
 * about a millisecond per 50,000 regions).
 */
SsdSavedRegion *
ssd_cache_copy_temperatures(uint64 *n)
{
	HASH_SEQ_STATUS seq;
	SsdRegionEnt *ent;
	SsdSavedRegion *out;
	uint64		cap,
				count = 0;
	int			i;

	for (i = 0; i < SSD_POLICY_NUM_PARTITIONS; i++)
		LWLockAcquire(&region_locks[i].lock, LW_SHARED);
	cap = hash_get_num_entries(region_hash);
	out = MemoryContextAllocExtended(CurrentMemoryContext,
									 Max(cap, 1) * sizeof(SsdSavedRegion),
									 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (out != NULL)
	{
		hash_seq_init(&seq, region_hash);
		while ((ent = hash_seq_search(&seq)) != NULL)
		{
			if (count == cap)
			{
				hash_seq_term(&seq);
				break;
			}
			memset(&out[count], 0, sizeof(SsdSavedRegion));
			out[count].rnode = ent->key.rnode;
			out[count].forkNum = ent->key.forkNum;
			out[count].region = ent->key.region;
			out[count].temperature = ent->temperature;
			count++;
		}
	}
	for (i = SSD_POLICY_NUM_PARTITIONS; i-- > 0;)
		LWLockRelease(&region_locks[i].lock);
	*n = count;
	return out;
}

/*
 * Put saved temperatures back (the postmaster, before any process reads).
 * Returns how many fit in the fixed-size table (a file saved by a larger
 * cache holds more); the rest are dropped, since a temperature is only a
 * hint.
 */
uint64
ssd_cache_restore_temperatures(const SsdSavedRegion *saved, uint64 n)
{
	uint64		i,
				restored = 0;

	for (i = 0; i < n; i++)
	{
		SsdRegionKey key;
		SsdRegionEnt *ent;
		bool		found;

		if (saved[i].forkNum < 0 || saved[i].forkNum > MAX_FORKNUM ||
			!(saved[i].temperature > 0))
			continue;
		memset(&key, 0, sizeof(key));
		key.rnode = saved[i].rnode;
		key.forkNum = (ForkNumber) saved[i].forkNum;
		key.region = saved[i].region;
		ent = hash_search(region_hash, &key, HASH_ENTER_NULL, &found);
		if (ent == NULL)
			break;
		ent->temperature = saved[i].temperature;
		restored++;
	}
	return restored;
}

/* Should a backend queue this page for admission? */
bool
ssd_cache_should_offer(double temperature, bool sequential, bool full)
{
	double		bar;
	uint64		bits;

	if (sequential)
		return false;
	if (ssd_cache_policy == SSD_POLICY_CLOCK || !full)
		return true;
	bits = pg_atomic_read_u64(&policy->threshold_bits);
	memcpy(&bar, &bits, sizeof(bar));
	return temperature >= bar;
}

void
ssd_cache_publish_threshold(double threshold)
{
	uint64		bits;

	memcpy(&bits, &threshold, sizeof(bits));
	pg_atomic_write_u64(&policy->threshold_bits, bits);
}

/* Current temperature of a page's region (0 if never seen). */
double
ssd_cache_region_temperature(const BufferTag *tag)
{
	SsdRegionKey key;
	uint32		hash;
	SsdRegionEnt *ent;
	double		t;

	region_of(tag, &key);
	hash = get_hash_value(region_hash, &key);
	LWLockAcquire(REGION_LOCK(hash), LW_SHARED);
	ent = hash_search_with_hash_value(region_hash, &key, hash, HASH_FIND, NULL);
	t = ent ? ent->temperature : 0;
	LWLockRelease(REGION_LOCK(hash));
	return t;
}

/*
 * Halve every temperature once "slots" accesses have passed since the last
 * aging; forget regions that cooled to nothing, so the table keeps room.
 * Only the admission worker calls this.
 */
void
ssd_cache_age_if_due(void)
{
	HASH_SEQ_STATUS seq;
	SsdRegionEnt *ent;
	int			i;
	double		floor = ssd_cache_delta_seq() / 64;

	if (pg_atomic_read_u64(&policy->accesses) < pg_atomic_read_u64(&policy->next_aging))
		return;
	pg_atomic_write_u64(&policy->next_aging,
						pg_atomic_read_u64(&policy->accesses) + policy->aging_interval);

	for (i = 0; i < SSD_POLICY_NUM_PARTITIONS; i++)
		LWLockAcquire(&region_locks[i].lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, region_hash);
	while ((ent = hash_seq_search(&seq)) != NULL)
	{
		ent->temperature /= 2;
		if (ent->temperature < floor)
			hash_search(region_hash, &ent->key, HASH_REMOVE, NULL);
	}
	for (i = SSD_POLICY_NUM_PARTITIONS; i-- > 0;)
		LWLockRelease(&region_locks[i].lock);

	/* The admission bar is a temperature too. */
	{
		uint64		bits = pg_atomic_read_u64(&policy->threshold_bits);
		double		bar;

		memcpy(&bar, &bits, sizeof(bar));
		ssd_cache_publish_threshold(bar / 2);
	}
	pg_atomic_fetch_add_u64(&policy->agings, 1);
}

/*
 * Clock: the next slot in use whose reference bit is clear, clearing the
 * bits the hand passes.
 */
static int32
clock_candidate(void)
{
	uint64		tries;

	for (tries = 0; tries < 2 * ssd_cache_slot_count; tries++)
	{
		uint64		s = pg_atomic_fetch_add_u64(&policy->clock_hand, 1) % ssd_cache_slot_count;
		SsdSlot    *slot = &ssd_cache_slot_array[s];

		if (!slot->in_use)
			continue;
		if (slot->usage)
		{
			slot->usage = 0;
			continue;
		}
		return (int32) s;
	}
	return -1;
}

/*
 * TAC's coldest-first queue: a binary min-heap of (temperature, slot,
 * generation), in the admission worker's memory.  Items of slots that
 * changed page since they were pushed (gen) are dropped when they surface.
 */
typedef struct ColdItem
{
	double		temperature;
	int32		slot;
	uint32		gen;
} ColdItem;

static ColdItem *coldest = NULL;
static int64 ncold = 0;
static bool cold_built = false;

static void cold_rebuild(void);

static void
cold_sift_down(int64 i)
{
	for (;;)
	{
		int64		l = 2 * i + 1,
					m = i;
		ColdItem	tmp;

		if (l < ncold && coldest[l].temperature < coldest[m].temperature)
			m = l;
		if (l + 1 < ncold && coldest[l + 1].temperature < coldest[m].temperature)
			m = l + 1;
		if (m == i)
			return;
		tmp = coldest[i];
		coldest[i] = coldest[m];
		coldest[m] = tmp;
		i = m;
	}
}

static void
cold_push(double temperature, int32 slot)
{
	int64		i;

	if (coldest == NULL)
		coldest = MemoryContextAllocHuge(TopMemoryContext,
										 sizeof(ColdItem) * (ssd_cache_slot_count + 1));
	if (ncold > (int64) ssd_cache_slot_count)
	{
		/*
		 * Full of items of slots that changed page since: rebuild from the
		 * live slots (this slot is among them), or new pages would never
		 * become victims.
		 */
		cold_rebuild();
		return;
	}
	i = ncold++;
	coldest[i].temperature = temperature;
	coldest[i].slot = slot;
	coldest[i].gen = ssd_cache_slot_array[slot].gen;
	while (i > 0 && coldest[(i - 1) / 2].temperature > coldest[i].temperature)
	{
		ColdItem	tmp = coldest[i];

		coldest[i] = coldest[(i - 1) / 2];
		coldest[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static void
cold_pop(void)
{
	coldest[0] = coldest[--ncold];
	cold_sift_down(0);
}

/* Drop items of slots that changed page or were freed. */
static void
cold_drop_stale_top(void)
{
	while (ncold > 0 &&
		   (!ssd_cache_slot_array[coldest[0].slot].in_use ||
			ssd_cache_slot_array[coldest[0].slot].gen != coldest[0].gen))
		cold_pop();
}

/* After a restart or a switch from clock: every cached slot, current keys. */
static void
cold_rebuild(void)
{
	uint64		s;

	if (coldest == NULL)
		coldest = MemoryContextAllocHuge(TopMemoryContext,
										 sizeof(ColdItem) * (ssd_cache_slot_count + 1));
	ncold = 0;
	for (s = 0; s < ssd_cache_slot_count; s++)
		if (ssd_cache_slot_array[s].in_use)
			cold_push(ssd_cache_region_temperature(&ssd_cache_slot_array[s].tag), (int32) s);
	cold_built = true;
}

/* Refresh up to 5 stale keys at the top of the heap (the paper's rule). */
static void
cold_refresh_top(void)
{
	int			step;

	if (!cold_built)
		cold_rebuild();
	for (step = 0; step < SSD_TAC_REFRESH_STEPS; step++)
	{
		double		current;

		cold_drop_stale_top();
		if (ncold == 0)
			return;
		current = ssd_cache_region_temperature(&ssd_cache_slot_array[coldest[0].slot].tag);
		if (current == coldest[0].temperature)
			break;
		coldest[0].temperature = current;
		cold_sift_down(0);
	}
	cold_drop_stale_top();
}

/*
 * A candidate for eviction to make room for a page whose region has
 * temperature t_new, or -1 if the policy refuses the page.  TAC names the
 * coldest cached page, after refreshing up to 5 stale keys, if the
 * newcomer is at least 1% warmer, and publishes that bar for the backends.
 * A candidate the directory cannot evict leads to another call.
 */
int32
ssd_cache_next_victim(double t_new)
{
	ColdItem	top;

	if (ssd_cache_policy == SSD_POLICY_CLOCK)
	{
		cold_built = false;		/* rebuilt if TAC comes back */
		return clock_candidate();
	}
	if (pg_atomic_read_u64(&policy->foreign_admissions) >=
		Max(64, ssd_cache_slot_count / 64))
	{
		pg_atomic_write_u64(&policy->foreign_admissions, 0);
		cold_built = false;
	}
	cold_refresh_top();
	if (ncold == 0)
		return -1;
	top = coldest[0];
	ssd_cache_publish_threshold(top.temperature * SSD_TAC_MARGIN);
	if (t_new < top.temperature * SSD_TAC_MARGIN)
		return -1;
	cold_pop();
	return top.slot;
}

/* A page was admitted into slot: TAC queues it by its temperature. */
void
ssd_cache_victim_admitted(int32 slot, double temperature)
{
	if (ssd_cache_policy == SSD_POLICY_TAC && cold_built)
		cold_push(temperature, slot);
}

/*
 * The admission worker, idle with a full cache: publish the bar from the
 * current coldest page, so that a bar set before temperatures changed
 * cannot keep refusing pages that would now pass.
 */
void
ssd_cache_refresh_admission_bar(bool full)
{
	if (ssd_cache_policy != SSD_POLICY_TAC || !full)
		return;
	cold_refresh_top();
	if (ncold > 0)
		ssd_cache_publish_threshold(coldest[0].temperature * SSD_TAC_MARGIN);
}
