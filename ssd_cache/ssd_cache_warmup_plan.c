/*-------------------------------------------------------------------------
 *
 * ssd_cache_warmup_plan.c
 *	  The warm-up plan: which reads bring the recorded pages back, whether
 *	  they are worth issuing, and in which order (Park's Algorithm 1, the
 *	  unit-corrected Algorithm 2 and the arranger).
 *
 * Per tablespace (one device each, as far as we can know):
 *
 *	- Probe: read the recorded pages' own files with O_DIRECT at queue
 *	  depth 1 (the loader's), each request size from 8 kB up to
 *	  ssd_cache.warmup_max_request for 50 ms at a time, the sizes taking
 *	  turns (about a second in all); keep each size's mean time.  The
 *	  QDTT model has no request-size axis, which is exactly what decides
 *	  here: a disk that seeks, or a volume capped in IOPS, reads 512 kB in
 *	  little more than the time of 8 kB, while an SSD reads 8 kB pages at a
 *	  fraction of a 512 kB read's time.
 *	- I/O planner: for each size s, cluster the tag-ordered pages greedily
 *	  (a chunk opens at the first unplanned page and takes every recorded
 *	  page within s of it in the same segment file, trailing cold blocks
 *	  trimmed: gaps between hot pages are read through, the gap bridging)
 *	  and estimate the time as chunks(s) x time(s); keep the cheapest s.
 *	- Estimator: preloading beats letting queries fault pages in one by one
 *	  iff the hot pages per chunk exceed time(s) / time(8 kB), the
 *	  break-even density.  Chunks at or below it are pruned (they would
 *	  cost more than the reads they save).  Pages already in the SSD cache
 *	  need no disk read and are always worth loading.
 *	- Budget: only the hottest chunks that fit ssd_cache.warmup_pool_fraction
 *	  of shared_buffers are kept.
 *	- Arranger: hottest chunks first (mean usage count, then hot pages, sum
 *	  and maximum of usage), or physical order when connections wait for
 *	  the warm-up (scenario a: everything is loaded anyway, and on a disk
 *	  that seeks physical order is faster, as Park measured).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/pg_prng.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/buf_internals.h"
#include "storage/fd.h"

#include "ssd_cache_directory.h"
#include "ssd_cache_warmup.h"

#define PROBE_SLICE_MS		50
#define PROBE_ROUNDS		3
#define PROBE_ALIGN			4096
#define MAX_SIZES			8

/* Without a probe (no O_DIRECT): a disk that seeks, 4 ms + 150 MB/s. */
#define DEFAULT_SEEK_MS		4.0
#define DEFAULT_MB_PER_S	150.0

typedef struct DeviceRange
{
	uint32		first;			/* pages[first .. end) */
	uint32		end;
	int			nsizes;
	int			sizes[MAX_SIZES];	/* blocks */
	double		ms[MAX_SIZES];
} DeviceRange;

static char *
segment_path(const WarmupPage *p, BlockNumber block)
{
	char	   *base = GetRelationPath(p->dbNode, p->spcNode, p->relNode,
									   InvalidBackendId, (ForkNumber) p->fork);
	BlockNumber seg = block / RELSEG_SIZE;

	if (seg == 0)
		return base;
	return psprintf("%s.%u", base, seg);
}

/* Outcome of one probe read. */
typedef enum ProbeResult
{
	PROBE_OK,
	PROBE_TOO_LARGE,			/* no recorded file found that large */
	PROBE_NO_DIRECT_IO			/* the file system refuses O_DIRECT */
} ProbeResult;

/*
 * One O_DIRECT read of "blocks" blocks at a recorded page (random among the
 * device's pages not on the SSD cache); *ms its time.
 */
static ProbeResult
probe_read(const WarmupPage *pages, const bool *on_ssd, const DeviceRange *dev,
		   int blocks, char *buf, double *ms)
{
	uint32		n = dev->end - dev->first;

	for (int attempt = 0; attempt < 8; attempt++)
	{
		uint32		i = dev->first + (uint32) pg_prng_uint64_range(&pg_global_prng_state, 0, n - 1);
		const WarmupPage *p = &pages[i];
		char	   *path;
		int			fd;
		off_t		off;
		off_t		size;
		ssize_t		got;
		instr_time	start,
					elapsed;

		if (on_ssd[i])
			continue;
		CHECK_FOR_INTERRUPTS();
		path = segment_path(p, p->block);
		fd = open(path, O_RDONLY | PG_BINARY | O_DIRECT);
		pfree(path);
		if (fd < 0)
		{
			if (errno == EINVAL)
				return PROBE_NO_DIRECT_IO;
			continue;			/* dropped meanwhile */
		}
		size = lseek(fd, 0, SEEK_END);
		if (size < (off_t) blocks * BLCKSZ)
		{
			close(fd);
			continue;
		}
		off = (off_t) (p->block % RELSEG_SIZE) * BLCKSZ;
		if (off + (off_t) blocks * BLCKSZ > size)
			off = size - (off_t) blocks * BLCKSZ;
		off -= off % PROBE_ALIGN;
		INSTR_TIME_SET_CURRENT(start);
		got = pread(fd, buf, (size_t) blocks * BLCKSZ, off);
		INSTR_TIME_SET_CURRENT(elapsed);
		close(fd);
		if (got < 0 && errno == EINVAL)
			return PROBE_NO_DIRECT_IO;
		if (got != (ssize_t) blocks * BLCKSZ)
			continue;
		INSTR_TIME_SUBTRACT(elapsed, start);
		*ms = INSTR_TIME_GET_MILLISEC(elapsed);
		return PROBE_OK;
	}
	return PROBE_TOO_LARGE;
}

/*
 * Mean time of one read of each candidate size, each read back to back at
 * queue depth 1 for PROBE_SLICE_MS, the sizes taking turns, three rounds
 * of which the first is not counted.  Time slices rather than counts of
 * reads: a volume capped in IOPS (cloud volumes' credits, the kernel's
 * throttle slices) serves a burst at the device's own speed and then makes
 * some read wait for the next slice, and timing a few reads per size
 * charged those waits to whichever size came first.  Each size running for
 * a slice of its own measures what the loader will get: its sustained
 * rate.  Sizes larger than every recorded file are dropped (no chunk can
 * be larger than its file).  False when nothing could be measured.
 */
static bool
probe_device(const WarmupPage *pages, const bool *on_ssd, DeviceRange *dev)
{
	char	   *raw = palloc(dev->sizes[dev->nsizes - 1] * BLCKSZ + PROBE_ALIGN);
	char	   *buf = (char *) TYPEALIGN(PROBE_ALIGN, raw);
	double		total[MAX_SIZES] = {0};
	int			count[MAX_SIZES] = {0};

	for (int round = 0; round < PROBE_ROUNDS; round++)
	{
		for (int s = 0; s < dev->nsizes; s++)
		{
			instr_time	start,
						now;
			double		ms;

			INSTR_TIME_SET_CURRENT(start);
			do
			{
				ProbeResult r = probe_read(pages, on_ssd, dev, dev->sizes[s], buf, &ms);

				if (r == PROBE_NO_DIRECT_IO)
				{
					pfree(raw);
					return false;
				}
				if (r == PROBE_TOO_LARGE)
				{
					dev->nsizes = s;	/* this size and the larger ones */
					break;
				}
				if (round > 0)
				{
					total[s] += ms;
					count[s]++;
				}
				INSTR_TIME_SET_CURRENT(now);
				INSTR_TIME_SUBTRACT(now, start);
			} while (INSTR_TIME_GET_MILLISEC(now) < PROBE_SLICE_MS);
		}
	}
	pfree(raw);
	for (int s = 0; s < dev->nsizes; s++)
	{
		if (count[s] == 0)
		{
			dev->nsizes = s;
			break;
		}
		dev->ms[s] = total[s] / count[s];
	}
	return dev->nsizes > 0;
}

static bool
same_segment_file(const WarmupPage *a, const WarmupPage *b)
{
	return a->spcNode == b->spcNode && a->dbNode == b->dbNode &&
		a->relNode == b->relNode && a->fork == b->fork &&
		a->block / RELSEG_SIZE == b->block / RELSEG_SIZE;
}

/*
 * Greedy clustering of pages[first..end) of one kind (on the SSD or not)
 * into chunks of at most "blocks" blocks.  With emit, the chunks and their
 * hot pages are appended to the shared plan; returns the chunk count.
 */
static uint32
cluster(const WarmupPage *pages, const bool *on_ssd, uint32 first, uint32 end,
		bool ssd, int blocks, int device, bool emit)
{
	uint32		nchunks = 0;
	uint32		i = first;

	while (i < end)
	{
		const WarmupPage *head;
		uint32		j;
		WarmupChunk *c = NULL;
		BlockNumber last;

		if (on_ssd[i] != ssd)
		{
			i++;
			continue;
		}
		head = &pages[i];
		last = head->block;
		if (emit)
		{
			c = &warmup_chunks[warmup_shared->nchunks++];
			c->node.spcNode = head->spcNode;
			c->node.dbNode = head->dbNode;
			c->node.relNode = head->relNode;
			c->fork = head->fork;
			c->start = head->block;
			c->from_ssd = ssd;
			c->device = (uint8) device;
			c->first_hot = warmup_shared->nhot;
			c->nhot = 0;
			c->usage_sum = 0;
			c->max_usage = 0;
			pg_atomic_init_u32(&c->status, CHUNK_PENDING);
		}
		for (j = i; j < end && same_segment_file(head, &pages[j]) &&
			 pages[j].block < head->block + blocks; j++)
		{
			if (on_ssd[j] != ssd)
				continue;
			last = pages[j].block;
			if (emit)
			{
				WarmupHot  *h = &warmup_hot[warmup_shared->nhot++];

				h->offset = (uint16) (pages[j].block - head->block);
				h->usage = pages[j].usage;
				c->nhot++;
				c->usage_sum += pages[j].usage;
				c->max_usage = Max(c->max_usage, pages[j].usage);
			}
		}
		if (emit)
			c->span = (uint16) (last - head->block + 1);
		nchunks++;
		i = j;
	}
	return nchunks;
}

/* Arranger: hotter first. */
static int
hotness_cmp(const void *a, const void *b)
{
	const WarmupChunk *x = &warmup_chunks[*(const uint32 *) a];
	const WarmupChunk *y = &warmup_chunks[*(const uint32 *) b];
	double		mx = (double) x->usage_sum / x->nhot;
	double		my = (double) y->usage_sum / y->nhot;

	if (mx != my)
		return mx > my ? -1 : 1;
	if (x->nhot != y->nhot)
		return x->nhot > y->nhot ? -1 : 1;
	if (x->usage_sum != y->usage_sum)
		return x->usage_sum > y->usage_sum ? -1 : 1;
	if (x->max_usage != y->max_usage)
		return x->max_usage > y->max_usage ? -1 : 1;
	return *(const uint32 *) a < *(const uint32 *) b ? -1 : 1;
}

/* Candidate request sizes: powers of two from one block to the maximum. */
static void
candidate_sizes(DeviceRange *dev)
{
	int			max_blocks = Max(1, ssd_cache_warmup_max_request_kb * 1024 / BLCKSZ);

	dev->nsizes = 0;
	for (int b = 1; b <= max_blocks && dev->nsizes < MAX_SIZES; b *= 2)
		dev->sizes[dev->nsizes++] = b;
}

static void
plan_device(const WarmupPage *pages, const bool *on_ssd, DeviceRange *dev,
			WarmupDevice *out, int device, bool load_all)
{
	uint32		disk_pages = 0;
	int			best = 0;
	double		best_cost = -1;
	uint32		first_chunk;

	for (uint32 i = dev->first; i < dev->end; i++)
		disk_pages += on_ssd[i] ? 0 : 1;

	memset(out, 0, sizeof(*out));
	out->spcNode = pages[dev->first].spcNode;
	candidate_sizes(dev);
	if (disk_pages > 0 && ssd_cache_warmup_preload != WARMUP_PRELOAD_NEVER)
		out->measured = probe_device(pages, on_ssd, dev);
	if (!out->measured)
	{
		candidate_sizes(dev);
		for (int s = 0; s < dev->nsizes; s++)
			dev->ms[s] = DEFAULT_SEEK_MS +
				dev->sizes[s] * (double) BLCKSZ / (DEFAULT_MB_PER_S * 1000.0);
	}

	/* Algorithm 1: the request size with the least estimated time */
	for (int s = 0; s < dev->nsizes; s++)
	{
		double		cost = cluster(pages, on_ssd, dev->first, dev->end, false,
								   dev->sizes[s], device, false) * dev->ms[s];

		if (best_cost < 0 || cost < best_cost)
		{
			best_cost = cost;
			best = s;
		}
	}
	out->request_blocks = dev->sizes[best];
	out->page_ms = dev->ms[0];
	out->request_ms = dev->ms[best];
	out->break_even = dev->ms[0] > 0 ? dev->ms[best] / dev->ms[0] : 1;

	first_chunk = warmup_shared->nchunks;
	out->chunks = cluster(pages, on_ssd, dev->first, dev->end, false,
						  out->request_blocks, device, true);
	out->hot_pages = disk_pages;
	out->density = out->chunks > 0 ? (double) disk_pages / out->chunks : 0;

	/* Algorithm 2, with the page size put back in B */
	if (ssd_cache_warmup_preload == WARMUP_PRELOAD_NEVER)
		out->preload = false;
	else if (load_all || ssd_cache_warmup_preload == WARMUP_PRELOAD_ALWAYS)
		out->preload = true;
	else
		out->preload = out->density > out->break_even;

	/* early pruning: a chunk that costs more than its pages' own reads */
	for (uint32 c = first_chunk; c < warmup_shared->nchunks; c++)
		if (!out->preload ||
			(!load_all && ssd_cache_warmup_preload != WARMUP_PRELOAD_ALWAYS &&
			 warmup_chunks[c].nhot <= out->break_even && out->request_blocks > 1))
			pg_atomic_write_u32(&warmup_chunks[c].status, CHUNK_SKIPPED);

	/* pages on the SSD: no disk read, chunked only to be tracked */
	(void) cluster(pages, on_ssd, dev->first, dev->end, true,
				   out->request_blocks, device, true);
}

static int
chunk_tag_cmp(const void *a, const void *b)
{
	const WarmupChunk *x = a;
	const WarmupChunk *y = b;

	return warmup_chunk_compare_key(&x->node, x->fork, x->start, y) < 0 ? -1 :
		(warmup_chunk_compare_key(&x->node, x->fork, x->start, y) > 0 ? 1 : 0);
}

/*
 * Plan the warm-up of pages (tag order) into the shared arrays.  The
 * caller publishes the plan (phase LOADING) afterwards.
 */
void
warmup_plan(WarmupPage *pages, uint32 npages, bool physical_order)
{
	bool	   *on_ssd = palloc0(sizeof(bool) * Max(npages, 1));
	bool		cache = ssd_cache_enabled();
	uint32		i = 0;
	int			ndevices = 0;

	for (uint32 k = 0; k < npages && cache; k++)
	{
		BufferTag	tag;

		tag.rnode.spcNode = pages[k].spcNode;
		tag.rnode.dbNode = pages[k].dbNode;
		tag.rnode.relNode = pages[k].relNode;
		tag.forkNum = (ForkNumber) pages[k].fork;
		tag.blockNum = pages[k].block;
		on_ssd[k] = pages[k].fork == MAIN_FORKNUM && ssd_cache_contains(&tag);
	}

	warmup_shared->nchunks = 0;
	warmup_shared->nhot = 0;
	while (i < npages)
	{
		DeviceRange dev;
		WarmupDevice out;

		dev.first = i;
		while (i < npages && pages[i].spcNode == pages[dev.first].spcNode)
			i++;
		dev.end = i;
		if (ndevices == WARMUP_MAX_DEVICES)
		{
			ereport(LOG,
					(errmsg("ssd_cache warm-up: tablespace %u not planned: more than %d tablespaces",
							pages[dev.first].spcNode, WARMUP_MAX_DEVICES)));
			continue;
		}
		plan_device(pages, on_ssd, &dev, &out, ndevices, physical_order);
		SpinLockAcquire(&warmup_shared->mutex);
		warmup_shared->devices[ndevices] = out;
		warmup_shared->ndevices = ++ndevices;
		SpinLockRelease(&warmup_shared->mutex);
		ereport(LOG,
				(errmsg("ssd_cache warm-up: tablespace %u: %u pages from disk in %u reads of %d kB (%.1f pages each, break-even %.1f; 8 kB %.3f ms, %d kB %.3f ms%s): %s",
						out.spcNode, out.hot_pages, out.chunks,
						out.request_blocks * BLCKSZ / 1024, out.density, out.break_even,
						out.page_ms, out.request_blocks * BLCKSZ / 1024, out.request_ms,
						out.measured ? "" : ", not measured",
						out.preload ? "preloading" : "left to queries")));
	}
	pfree(on_ssd);

	/* the chunks went in per device, disk before SSD: put them in tag order */
	{
		WarmupHot  *hot = palloc(sizeof(WarmupHot) * Max(warmup_shared->nhot, 1));
		uint32		nhot = 0;

		/* sort the chunks, then rebuild hot[] in their new order */
		qsort(warmup_chunks, warmup_shared->nchunks, sizeof(WarmupChunk), chunk_tag_cmp);
		for (uint32 c = 0; c < warmup_shared->nchunks; c++)
		{
			WarmupChunk *ch = &warmup_chunks[c];

			memcpy(&hot[nhot], &warmup_hot[ch->first_hot], sizeof(WarmupHot) * ch->nhot);
			ch->first_hot = nhot;
			nhot += ch->nhot;
		}
		memcpy(warmup_hot, hot, sizeof(WarmupHot) * nhot);
		pfree(hot);
	}

	for (uint32 c = 0; c < warmup_shared->nchunks; c++)
		warmup_order[c] = c;
	if (warmup_shared->nchunks > 1)
		qsort(warmup_order, warmup_shared->nchunks, sizeof(uint32), hotness_cmp);

	/*
	 * Keep the hottest chunks that fit ssd_cache.warmup_pool_fraction of
	 * the pool, over every database: loaders run one database at a time,
	 * and the first one must not fill the pool with its coldest pages
	 * while another's hottest wait.
	 */
	{
		uint64		budget = (uint64) (ssd_cache_warmup_pool_fraction * NBuffers);
		uint64		planned = 0;

		for (uint32 k = 0; k < warmup_shared->nchunks; k++)
		{
			WarmupChunk *c = &warmup_chunks[warmup_order[k]];

			if (pg_atomic_read_u32(&c->status) == CHUNK_SKIPPED)
				continue;
			if (planned + c->nhot > budget)
				pg_atomic_write_u32(&c->status, CHUNK_SKIPPED);
			else
				planned += c->nhot;
		}
	}
	if (physical_order)
		for (uint32 c = 0; c < warmup_shared->nchunks; c++)
			warmup_order[c] = c;
}
