/*-------------------------------------------------------------------------
 *
 * qdtt_calibrate.c
 *	  qdtt_calibrate(): measure a tablespace's device as QDTT(band, queue
 *	  depth) and store the grid as that tablespace's model.
 *
 * Method (Ghodsnia, ch. 3.6): one process keeps exactly q reads in flight.
 * Here that is an io_uring of q page-sized O_DIRECT reads, each re-issued
 * as soon as it completes, into a calibration file that was pre-written
 * with incompressible data (never-written blocks may read back as free
 * zeros).  A point's cost is elapsed time / reads: the amortized cost per
 * page, not the latency.  Queue depths ascend 1, 2, 4, ...; within a queue
 * depth bands descend, and after the largest band at a new queue depth the
 * early-stop rule compares it with the previous queue depth: less than
 * qdtt.stop_threshold improvement ends the measurement, once the deepest
 * queue depth (measured then, for the largest band only) confirms that no
 * gain is left further down the ladder, and the remaining points get a
 * default slightly above the last beneficial cost, so the planner never
 * sees a gain the device does not have.
 *
 * Band 1 is "sequential", and is measured the way PostgreSQL reads
 * sequentially: buffered 8 kB pread()s with kernel readahead, one stream at
 * queue depth 1 (Seq Scan), and at queue depth q, q concurrent streams
 * (threads) that take chunks in file order, of the size a Parallel Seq
 * Scan's participants take from a table as large as the file.  An O_DIRECT
 * 8 kB sequential read would miss readahead and price a Seq Scan several
 * times too high.
 *
 * The file lives in the tablespace's pgsql_tmp directory with the temp-file
 * prefix, so a crash mid-calibration leaves nothing behind after the next
 * start; normally it is removed before the function returns.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_namespace_d.h"
#include "catalog/pg_tablespace_d.h"
#include "commands/extension.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "qdtt_costing.h"
#include "ssdkit_uring.h"

PG_FUNCTION_INFO_V1(qdtt_calibrate);

/*
 * A Parallel Seq Scan hands out chunks of nblocks / 2048 pages rounded up to
 * a power of two, at most 8192 (table_block_parallelscan_startblock_init);
 * the calibration's streams take the chunks a table of the file's size gets.
 */
#define SEQ_SCAN_NCHUNKS	2048
#define SEQ_SCAN_MAX_CHUNK	8192
/* At most this many sequential streams (parallel participants) are modelled. */
#define MAX_SEQ_STREAMS		32
/* Pre-write unit of the calibration file. */
#define PREWRITE_CHUNK		(1024 * 1024)
/*
 * A random run reads at least this many pages: on a throttled device (the
 * HDD tier's blk-throttle grants I/O in 100 ms slices) fewer would measure
 * which slice the run started in.
 */
#define RANDOM_MIN_READS	400
/* Each point is the best of this many runs (see measure_point). */
#define POINT_TRIALS		3
/* A point this many times a neighbour that cannot be cheaper is measured again. */
#define OUTLIER_FACTOR		3.0
#define OUTLIER_RETRIES		2
/* Default for a point skipped by the early stop: "slightly larger". */
#define DEFAULT_MARGIN		1.01

typedef struct Calibration
{
	char		path[MAXPGPATH];
	int			fd_direct;		/* O_DIRECT, for random reads */
	int			seq_fds[MAX_SEQ_STREAMS];	/* buffered, one per stream */
	int			nseq_fds;
	int64		npages;
	double		point_seconds;
	SsdkitUring *ring;
	char	   *bufs;			/* max_qd page buffers */
	char	   *chunk_buf;		/* PREWRITE_CHUNK bytes: pre-write, then settle */
	pg_prng_state prng;
	const char *spcname;
} Calibration;

static double
now_seconds(void)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	return INSTR_TIME_GET_DOUBLE(t);
}

static void
report_progress(const char *spcname, const char *what, double band, int qd)
{
	char		buf[256];

	snprintf(buf, sizeof(buf), "qdtt_calibrate('%s'): %s band %.0f pages, queue depth %d",
			 spcname, what, band, qd);
	pgstat_report_activity(STATE_RUNNING, buf);
}

/*
 * Create the calibration file with O_DIRECT and fill it with incompressible
 * data.  Errors here are the user's to fix (no O_DIRECT, no space), so they
 * get a message that says which.
 */
static void
prepare_file(Calibration *c, Oid spcoid, int file_size_mb)
{
	char		dir[MAXPGPATH];
	struct statvfs vfs;
	char	   *buf;
	uint64		need = (uint64) file_size_mb * 1024 * 1024;
	uint64		done;

	TempTablespacePath(dir, spcoid);
	if (MakePGDirectory(dir) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", dir)));

	if (statvfs(dir, &vfs) == 0 &&
		(uint64) vfs.f_bavail * vfs.f_frsize < need + need / 10 + 64 * 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("not enough free space in tablespace \"%s\" for a %d MB calibration file",
						c->spcname, file_size_mb),
				 errdetail("%llu MB are free; the file needs %d MB plus a 10%% and 64 MB margin.",
						   (unsigned long long) ((uint64) vfs.f_bavail * vfs.f_frsize / (1024 * 1024)),
						   file_size_mb),
				 errhint("Pass a smaller file_size_mb, or free space on the device.")));

	snprintf(c->path, sizeof(c->path), "%s/%sqdtt_calibration.%d",
			 dir, PG_TEMP_FILE_PREFIX, MyProcPid);
	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not open calibration file: too many open files")));
	c->fd_direct = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | PG_BINARY, 0600);
	if (c->fd_direct < 0)
	{
		int			save_errno = errno;

		ReleaseExternalFD();
		errno = save_errno;
		if (errno == EINVAL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the file system of tablespace \"%s\" does not support O_DIRECT", c->spcname),
					 errdetail("Opening \"%s\" with O_DIRECT failed: %m.", c->path),
					 errhint("Calibration must bypass the page cache to measure the device; tmpfs and some network file systems cannot.")));
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create calibration file \"%s\": %m", c->path)));
	}

	buf = c->chunk_buf = ssdkit_uring_alloc_buffer(c->ring, PREWRITE_CHUNK);
	for (done = 0; done < need; done += PREWRITE_CHUNK)
	{
		uint64	   *words = (uint64 *) buf;
		int			i;
		ssize_t		n;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < PREWRITE_CHUNK / sizeof(uint64); i++)
			words[i] = pg_prng_uint64(&c->prng);
		n = pwrite(c->fd_direct, buf, PREWRITE_CHUNK, done);
		if (n != PREWRITE_CHUNK)
		{
			if (n >= 0)
				errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write calibration file \"%s\": %m", c->path)));
		}
	}
	if (fdatasync(c->fd_direct) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync calibration file \"%s\": %m", c->path)));
	c->npages = need / BLCKSZ;
}

/*
 * Read the freshly written file once, in large direct reads, and discard
 * the result.  A virtual disk (and a drive's write cache) may still be
 * writing the data back when fdatasync() returns, and reads of data still
 * being written back can run at a fraction of their speed (a quarter has
 * been seen on cloud block devices, see bench/results), which would price
 * the first points (queue depth 1) far too high.  The pass also pages in
 * the device's own mapping of the file.
 */
static void
settle_file(Calibration *c)
{
	off_t		off;

	for (off = 0; off < (off_t) c->npages * BLCKSZ; off += PREWRITE_CHUNK)
	{
		CHECK_FOR_INTERRUPTS();
		if (pg_pread(c->fd_direct, c->chunk_buf, PREWRITE_CHUNK, off) < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read calibration file \"%s\": %m", c->path)));
	}
}

/* Close and remove the calibration file; safe to call more than once. */
static void
remove_file(Calibration *c)
{
	int			i;

	for (i = 0; i < c->nseq_fds; i++)
	{
		close(c->seq_fds[i]);
		ReleaseExternalFD();
	}
	c->nseq_fds = 0;
	if (c->fd_direct >= 0)
	{
		close(c->fd_direct);
		ReleaseExternalFD();
		c->fd_direct = -1;
	}
	if (c->path[0] != '\0')
	{
		if (unlink(c->path) != 0 && errno != ENOENT)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not remove calibration file \"%s\": %m", c->path)));
		c->path[0] = '\0';
	}
}

/* Random reads: uniformly within one band of the file. */
typedef struct RandomBand
{
	int64		start;
	int64		band;
} RandomBand;

static void
queue_random(Calibration *c, const RandomBand *r, int slot)
{
	int64		page = r->start + (int64) pg_prng_uint64_range(&c->prng, 0, r->band - 1);

	ssdkit_uring_queue_read(c->ring, c->fd_direct, c->bufs + (Size) slot * BLCKSZ,
							BLCKSZ, (off_t) page * BLCKSZ, slot);
}

/*
 * Random single-page O_DIRECT reads within one band of "band" pages, with
 * exactly "qd" of them in flight: each is re-issued as soon as it
 * completes, until point_seconds have passed and a minimum of reads are
 * done; then the last reads drain.  Returns elapsed microseconds per read
 * from the first submission: the amortized cost, not the latency.
 */
static double
measure_random(Calibration *c, int64 band, int qd)
{
	SsdkitUringCompletion done[QDTT_MAX_QUEUE_DEPTH_LIMIT];
	RandomBand r;
	int64		min_reads = Max(RANDOM_MIN_READS, 4 * qd);
	int64		reads = 0;
	int			inflight = 0;
	bool		issuing = true;
	double		t0 = now_seconds();
	int			i;

	r.band = Min(band, c->npages);
	r.start = (r.band >= c->npages) ? 0 :
		(int64) pg_prng_uint64_range(&c->prng, 0, c->npages - r.band);

	for (i = 0; i < qd; i++, inflight++)
		queue_random(c, &r, i);
	while (inflight > 0)
	{
		int			n;

		ssdkit_uring_submit_and_wait(c->ring);
		n = ssdkit_uring_reap(c->ring, done, qd, true);
		for (i = 0; i < n; i++)
		{
			ssdkit_uring_check(&done[i], false, c->path, 0, BLCKSZ);
			reads++;
			inflight--;
			if (issuing)
			{
				queue_random(c, &r, (int) done[i].tag);
				inflight++;
			}
		}
		if (issuing && reads >= min_reads &&
			now_seconds() - t0 >= c->point_seconds)
			issuing = false;
		CHECK_FOR_INTERRUPTS();
	}
	return (now_seconds() - t0) * 1e6 / reads;
}

/*
 * Sequential streams, read the way PostgreSQL's participants read a table:
 * each stream is a thread with its own open file (so its own readahead
 * state) calling pread() for 8 kB after 8 kB, and the streams take chunks
 * in file order from one shared counter, as Parallel Seq Scan participants
 * take them from table_block_parallelscan_nextpage().  One stream reads the
 * file in order.  The chunks of one pass are handed out once, so every
 * read comes from the device.
 *
 * Real concurrent readers matter.  The HDD tier under the benchmarks'
 * memory cap ran 2, 3 and 5 such readers at 1.2-1.5x, 1.5-3.3x and 3.3x the
 * time of one (threads and processes alike; PostgreSQL's parallel seq scans
 * ran 1.2-1.8x, 1.4-2.8x and 3x), while one process keeping the same
 * streams going through io_uring saw 1-15%: page-cache charges fail under
 * the cap and cut readahead short, which the io_uring streams did not
 * provoke.
 *
 * A point times the second half of one cold pass over the file, so that it
 * sees the page cache in the state a scan of a table that large works in:
 * full, where memory is short.  The HDD and SSD tiers under the
 * benchmarks' cap (shared_buffers + 128 MB) ran 2 streams as fast as one
 * over the first 128 MB of a pass and 1.2-2x slower over a whole 512 MB
 * pass; without the cap, as fast throughout.
 *
 * The threads call nothing of PostgreSQL's and run with every signal
 * blocked; the calling backend waits on its latch, stays cancellable, and
 * always stops and joins them before leaving.
 */
typedef struct SeqStreams
{
	int			nstreams;
	int64		npages;
	int64		chunk_pages;
	int64		nchunks;
	int64		first_chunk;
	pg_atomic_uint64 next_chunk;	/* chunks handed out */
	pg_atomic_uint64 reads;		/* pages read by all streams */
	pg_atomic_uint32 finished;	/* streams that have returned */
	double		t_half;			/* when the pass was half done */
	double		t_end;			/* when the last stream returned */
	pg_atomic_uint32 stop;		/* the backend's request to stop */
	pg_atomic_uint32 read_errno;	/* first failed read's errno */
} SeqStreams;

typedef struct SeqStream
{
	SeqStreams *shared;
	int			fd;
	char	   *buf;
} SeqStream;

static void *
seq_stream_main(void *arg)
{
	SeqStream  *me = (SeqStream *) arg;
	SeqStreams *s = me->shared;
	uint64		half = (uint64) s->npages / 2;

	while (pg_atomic_read_u32(&s->stop) == 0)
	{
		uint64		n = pg_atomic_fetch_add_u64(&s->next_chunk, 1);
		int64		page,
					end;

		if (n >= (uint64) s->nchunks)
			break;
		page = ((s->first_chunk + (int64) n) % s->nchunks) * s->chunk_pages;
		end = Min(page + s->chunk_pages, s->npages);
		for (; page < end && pg_atomic_read_u32(&s->stop) == 0; page++)
		{
			if (pg_pread(me->fd, me->buf, BLCKSZ, (off_t) page * BLCKSZ) != BLCKSZ)
			{
				uint32		expected = 0;

				(void) pg_atomic_compare_exchange_u32(&s->read_errno, &expected,
													  (errno != 0) ? errno : EIO);
				pg_atomic_write_u32(&s->stop, 1);
				break;
			}
			/* Exactly one read is the pass's half-way read. */
			if (pg_atomic_add_fetch_u64(&s->reads, 1) == half)
				s->t_half = now_seconds();
		}
	}
	if (pg_atomic_add_fetch_u32(&s->finished, 1) == (uint32) s->nstreams)
		s->t_end = now_seconds();
	return NULL;
}

/* Open buffered file descriptors for the first "n" streams. */
static void
open_stream_files(Calibration *c, int n)
{
	while (c->nseq_fds < n)
	{
		int			fd;

		if (!AcquireExternalFD())
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("could not open calibration file: too many open files")));
		fd = open(c->path, O_RDONLY | PG_BINARY);
		if (fd < 0)
		{
			ReleaseExternalFD();
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open calibration file \"%s\": %m", c->path)));
		}
		c->seq_fds[c->nseq_fds++] = fd;
	}
}

/*
 * "qd" sequential streams (above) reading the file once, cold; microseconds
 * per page over all streams from the moment half the file is read and every
 * stream's first read has returned (the first request waits for the
 * device's first answer, a throttle's time slice or a disk's seek, which a
 * long scan pays once) until the pass ends.
 */
static double
measure_sequential(Calibration *c, int qd)
{
	int			nstreams = Min(qd, MAX_SEQ_STREAMS);
	SeqStreams	s;
	SeqStream	streams[MAX_SEQ_STREAMS];
	pthread_t	threads[MAX_SEQ_STREAMS];
	int			nthreads = 0;
	uint32		read_errno;
	int			i;

	open_stream_files(c, nstreams);
	s.nstreams = nstreams;
	s.npages = c->npages;
	s.chunk_pages = Min((int64) pg_nextpower2_64((uint64) Max(c->npages / SEQ_SCAN_NCHUNKS, 1)),
						SEQ_SCAN_MAX_CHUNK);
	s.nchunks = (c->npages + s.chunk_pages - 1) / s.chunk_pages;
	s.first_chunk = (int64) pg_prng_uint64_range(&c->prng, 0, s.nchunks - 1);
	pg_atomic_init_u64(&s.next_chunk, 0);
	pg_atomic_init_u64(&s.reads, 0);
	pg_atomic_init_u32(&s.finished, 0);
	pg_atomic_init_u32(&s.stop, 0);
	pg_atomic_init_u32(&s.read_errno, 0);
	s.t_half = s.t_end = 0;
	for (i = 0; i < nstreams; i++)
	{
		streams[i].shared = &s;
		streams[i].fd = c->seq_fds[i];
		streams[i].buf = palloc(BLCKSZ);
	}

	/* Start and leave cold: the measurement must come from the device. */
	(void) posix_fadvise(c->seq_fds[0], 0, 0, POSIX_FADV_DONTNEED);
	PG_TRY();
	{
		sigset_t	all,
					saved;
		int			err = 0;

		/* Threads inherit the mask: no signal handler ever runs in one. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		for (i = 0; i < nstreams && err == 0; i++)
		{
			err = pthread_create(&threads[i], NULL, seq_stream_main, &streams[i]);
			if (err == 0)
				nthreads++;
		}
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
		if (err != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("could not start calibration reader thread: %s", strerror(err))));

		while (pg_atomic_read_u32(&s.finished) < (uint32) nthreads)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 1L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		pg_atomic_write_u32(&s.stop, 1);
		for (i = 0; i < nthreads; i++)
			pthread_join(threads[i], NULL);
	}
	PG_END_TRY();
	(void) posix_fadvise(c->seq_fds[0], 0, 0, POSIX_FADV_DONTNEED);
	for (i = 0; i < nstreams; i++)
		pfree(streams[i].buf);

	read_errno = pg_atomic_read_u32(&s.read_errno);
	if (read_errno != 0)
	{
		errno = (int) read_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read calibration file \"%s\": %m", c->path)));
	}
	/* The second half of the pass: npages - npages / 2 reads. */
	return (s.t_end - s.t_half) * 1e6 / (double) (c->npages - c->npages / 2);
}

/*
 * One grid point: the best of POINT_TRIALS short runs.  The devices we
 * calibrate are shared (virtual disks, other tenants, the kernel's own
 * writeback), and interference only ever makes a run slower, so the
 * minimum is the steadiest estimate of what the device can do.
 */
static double
measure_point(Calibration *c, int64 band, int qd)
{
	double		total = c->point_seconds;
	double		best = -1;
	double		sum = 0;
	bool		mean;
	int			trials,
				min_trials;
	int			i;

	report_progress(c->spcname, "measuring", (double) band, qd);

	/*
	 * Sequential runs too: they are long (a pass over the file) but not immune.
	 * Devices that detect streams (virtual disks, drives with read-ahead
	 * heuristics) can serve the first 8 kB stream after random reads at a
	 * fraction of its speed for 100 MB and more, so a sequential point
	 * always gets a second run, even where the first was slow enough to
	 * count as a slow device's one run.
	 */
	trials = POINT_TRIALS;
	min_trials = (band == 1) ? 2 : 1;

	/*
	 * Concurrent sequential streams are the exception to "best of": the
	 * readahead they cut short for one another under memory pressure is the
	 * device's behaviour, not interference, and it comes and goes from pass
	 * to pass (within one calibration the HDD tier's 2 streams measured
	 * 1.08x and 1.77x one stream; PostgreSQL's 2-participant parallel seq
	 * scans ran 1.13-1.45x a serial one).  The best pass would promise the
	 * planner a parallel scan's lucky case; such a point is the mean of all
	 * its runs.
	 */
	mean = (band == 1 && qd > 1);
	if (mean)
		min_trials = trials;
	c->point_seconds = total / trials;
	for (i = 0; i < trials; i++)
	{
		double		t0 = now_seconds();
		double		cost = (band == 1) ? measure_sequential(c, qd) :
			measure_random(c, band, qd);

		if (mean)
			sum += cost;
		else if (best < 0 || cost < best)
			best = cost;

		/*
		 * A device so slow that one run's minimum of reads took twice its
		 * share of the time gets that one long run: splitting it would only
		 * multiply the time, and picking the best of short runs on a
		 * throttled device picks the luckiest burst.
		 */
		if (i + 1 >= min_trials && now_seconds() - t0 > 2 * c->point_seconds)
			break;
	}
	c->point_seconds = total;
	return mean ? sum / trials : best;
}

/*
 * A random-read point far above a neighbour that cannot be cheaper than it
 * (the same band at half the queue depth, or a larger band at the same
 * queue depth) is a stall of the shared device, not a property of it: on a
 * virtual disk a host hiccup can outlast all of a point's short trials.
 * Measure such points again (up to OUTLIER_RETRIES times, keeping the best)
 * before the planner sees them.  Returns how many were measured again.
 */
static int
remeasure_outliers(Calibration *c, int64 *bands, int nbands, int *qds, int nqds,
				   double *cost, bool *measured)
{
	int			n = 0;
	int			bi,
				qi,
				retry;

	for (retry = 0; retry < OUTLIER_RETRIES; retry++)
	{
		bool		any = false;

		for (qi = 0; qi < nqds; qi++)
			for (bi = 1; bi < nbands; bi++)
			{
				double	   *pt = &cost[bi * nqds + qi];
				double		bound = -1;

				if (!measured[bi * nqds + qi])
					continue;
				if (qi > 0 && measured[bi * nqds + qi - 1])
					bound = cost[bi * nqds + qi - 1];
				if (bi + 1 < nbands && measured[(bi + 1) * nqds + qi] &&
					(bound < 0 || cost[(bi + 1) * nqds + qi] < bound))
					bound = cost[(bi + 1) * nqds + qi];
				if (bound > 0 && *pt > OUTLIER_FACTOR * bound)
				{
					*pt = Min(*pt, measure_point(c, bands[bi], qds[qi]));
					n++;
					any = true;
				}
			}
		if (!any)
			break;
	}
	return n;
}

/* Store the grid as the tablespace's model, replacing the old one. */
static void
store_model(const char *spcname, int64 *bands, int nbands, int *qds, int nqds,
			double *cost, bool *measured, const char *device, int file_size_mb,
			bool early_stop, int stopped_at, int beneficial, double prep_s,
			double measure_s, int npoints, int ndefaulted,
			const QdttMemoryCosts *mem)
{
	const char *schema = quote_identifier(get_namespace_name(qdtt_extension_schema()));
	char	   *sql;
	Oid			types[5] = {NAMEOID, INT8OID, INT4OID, FLOAT8OID, BOOLOID};
	Datum		values[5];
	int			bi,
				qi;

	SPI_connect();
	sql = psprintf("DELETE FROM %s.qdtt_calibration WHERE tablespace = $1", schema);
	values[0] = DirectFunctionCall1(namein, CStringGetDatum(spcname));
	if (SPI_execute_with_args(sql, 1, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the old QDTT model");

	sql = psprintf("INSERT INTO %s.qdtt_calibration (tablespace, band_pages, queue_depth, cost_us, measured) "
				   "VALUES ($1, $2, $3, $4, $5)", schema);
	for (bi = 0; bi < nbands; bi++)
		for (qi = 0; qi < nqds; qi++)
		{
			values[1] = Int64GetDatum(bands[bi]);
			values[2] = Int32GetDatum(qds[qi]);
			values[3] = Float8GetDatum(cost[bi * nqds + qi]);
			values[4] = BoolGetDatum(measured[bi * nqds + qi]);
			if (SPI_execute_with_args(sql, 5, types, values, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not store the QDTT model");
		}

	{
		Oid			rtypes[11] = {NAMEOID, TEXTOID, INT4OID, BOOLOID, INT4OID, INT4OID,
		INT4OID, INT4OID, FLOAT8OID, FLOAT8OID, INT4OID};
		Datum		rv[11];
		char		rn[11];

		memset(rn, ' ', sizeof(rn));
		rv[0] = values[0];
		rv[1] = CStringGetTextDatum(device);
		rv[2] = Int32GetDatum(file_size_mb);
		rv[3] = BoolGetDatum(early_stop);
		rv[4] = Int32GetDatum(stopped_at);
		if (stopped_at == 0)
			rn[4] = 'n';
		rv[5] = Int32GetDatum(beneficial);
		rv[6] = Int32GetDatum(npoints);
		rv[7] = Int32GetDatum(ndefaulted);
		rv[8] = Float8GetDatum(prep_s);
		rv[9] = Float8GetDatum(measure_s);
		rv[10] = Int32GetDatum(qds[nqds - 1]);
		sql = psprintf("INSERT INTO %s.qdtt_calibration_run AS r (tablespace, device, file_size_mb, early_stop, "
					   "stopped_at_queue_depth, max_beneficial_queue_depth, points_measured, points_defaulted, "
					   "prepare_seconds, measure_seconds, max_queue_depth) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
					   "ON CONFLICT (tablespace) DO UPDATE SET calibrated_at = now(), device = EXCLUDED.device, "
					   "file_size_mb = EXCLUDED.file_size_mb, early_stop = EXCLUDED.early_stop, "
					   "stopped_at_queue_depth = EXCLUDED.stopped_at_queue_depth, "
					   "max_beneficial_queue_depth = EXCLUDED.max_beneficial_queue_depth, "
					   "points_measured = EXCLUDED.points_measured, points_defaulted = EXCLUDED.points_defaulted, "
					   "prepare_seconds = EXCLUDED.prepare_seconds, measure_seconds = EXCLUDED.measure_seconds, "
					   "max_queue_depth = EXCLUDED.max_queue_depth", schema);
		if (SPI_execute_with_args(sql, 11, rtypes, rv, rn, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the QDTT calibration run");
	}
	{
		Oid			mtypes[9] = {NAMEOID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
		FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID};
		Datum		mv[9];

		mv[0] = values[0];
		mv[1] = Float8GetDatum(mem->shared_buffers_random_us);
		mv[2] = Float8GetDatum(mem->shared_buffers_seq_us);
		mv[3] = Float8GetDatum(mem->os_cache_random_us);
		mv[4] = Float8GetDatum(mem->os_cache_seq_us);
		mv[5] = Float8GetDatum(mem->seq_tuple_us);
		mv[6] = Float8GetDatum(mem->bitmap_tuple_us);
		mv[7] = Float8GetDatum(mem->bitmap_page_us);
		mv[8] = Float8GetDatum(mem->index_tuple_us);
		sql = psprintf("DELETE FROM %s.qdtt_memory_cost WHERE tablespace = $1", schema);
		if (SPI_execute_with_args(sql, 1, mtypes, mv, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not delete the old QDTT memory costs");
		sql = psprintf("INSERT INTO %s.qdtt_memory_cost (tablespace, shared_buffers_random_us, "
					   "shared_buffers_seq_us, os_cache_random_us, os_cache_seq_us, seq_tuple_us, "
					   "bitmap_tuple_us, bitmap_page_us, index_tuple_us) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", schema);
		if (SPI_execute_with_args(sql, 9, mtypes, mv, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the QDTT memory costs");
	}
	SPI_finish();
}

/*
 * qdtt_calibrate(tablespace name, file_size_mb int, point_seconds float8,
 *				  early_stop bool)
 */
Datum
qdtt_calibrate(PG_FUNCTION_ARGS)
{
	char	   *spcname = NameStr(*PG_GETARG_NAME(0));
	int			file_size_mb = PG_GETARG_INT32(1);
	double		point_seconds = PG_GETARG_FLOAT8(2);
	bool		early_stop = PG_GETARG_BOOL(3);
	Oid			spcoid;
	Calibration c;
	int64		bands[64];
	int			qds[16];
	int			nbands = 0,
				nqds = 0;
	double	   *cost;
	bool	   *measured;
	int			stopped_at = 0;
	int			last_good_qi = 0;
	int			big;			/* offset of the largest band's row */
	int			npoints = 0,
				ndefaulted = 0,
				nremeasured = 0;
	double		t_start,
				t_prepared,
				t_done;
	QdttMemoryCosts mem = {0};
	char	   *device;
	TupleDesc	tupdesc;
	Datum		values[17];
	bool		nulls[17] = {0};
	int			bi,
				qi,
				q;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to calibrate a tablespace"),
				 errdetail("qdtt_calibrate() writes a file into the tablespace and changes plans of every session."),
				 errhint("Run it as a superuser.")));
	(void) qdtt_model_table(false);
	if (RecoveryInProgress() || XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot calibrate in a read-only transaction"),
				 errdetail("qdtt_calibrate() stores the model and creates probe tables."),
				 errhint("Calibrate on the primary; the model reaches standbys with the extension's tables.")));
	if (qdtt_extension_schema() == PG_CATALOG_NAMESPACE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot calibrate with qdtt_costing installed in pg_catalog"),
				 errdetail("The memory points are measured on probe tables created in the extension's schema."),
				 errhint("Install the extension in another schema.")));
	spcoid = qdtt_tablespace_oid(spcname);
	if (spcoid == GLOBALTABLESPACE_OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot calibrate tablespace \"%s\"", spcname),
				 errdetail("pg_global holds only shared catalogs.")));
	if (file_size_mb < 16 || file_size_mb > 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("file_size_mb must be between 16 and 1048576, got %d", file_size_mb),
				 errhint("Use a file larger than the device's caches; 1024 MB suits most SSDs.")));
	if (!(point_seconds >= 0.01 && point_seconds <= 60.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("point_seconds must be between 0.01 and 60, got %g", point_seconds)));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* The ladders: QD 1, 2, 4, ... up to qdtt.max_queue_depth; bands x16. */
	for (q = 1; q < qdtt_max_queue_depth; q *= 2)
		qds[nqds++] = q;
	qds[nqds++] = qdtt_max_queue_depth;

	memset(&c, 0, sizeof(c));
	c.fd_direct = -1;
	c.spcname = spcname;
	c.point_seconds = point_seconds;
	pg_prng_seed(&c.prng, (uint64) MyProcPid ^ (uint64) GetCurrentTimestamp());
	c.ring = ssdkit_uring_create(qdtt_max_queue_depth);
	c.bufs = ssdkit_uring_alloc_buffer(c.ring, (Size) qdtt_max_queue_depth * BLCKSZ);

	PG_TRY();
	{
		int64		b;

		t_start = now_seconds();
		report_progress(spcname, "writing the calibration file,", 0, 0);
		prepare_file(&c, spcoid, file_size_mb);
		device = qdtt_device_name(c.path);
		/* Let the device settle after the writes (see settle_file). */
		report_progress(spcname, "warming up,", (double) c.npages, 1);
		settle_file(&c);
		t_prepared = now_seconds();

		for (b = 1; b < c.npages && nbands < 63; b *= QDTT_BAND_FACTOR)
			bands[nbands++] = b;
		bands[nbands++] = c.npages;

		cost = palloc0(sizeof(double) * nbands * nqds);
		measured = palloc0(sizeof(bool) * nbands * nqds);

		big = (nbands - 1) * nqds;
		for (qi = 0; qi < nqds; qi++)
		{
			for (bi = nbands - 1; bi >= 0; bi--)
			{
				/* The largest band may have been measured as a look-ahead. */
				if (!measured[bi * nqds + qi])
				{
					cost[bi * nqds + qi] = measure_point(&c, bands[bi], qds[qi]);
					measured[bi * nqds + qi] = true;
					npoints++;
				}

				/* The early-stop test, right after the largest band. */
				if (qi > 0 && bi == nbands - 1 && stopped_at == 0)
				{
					double		gain = 1.0 - cost[big + qi] / cost[big + qi - 1];
					bool		stop = gain < qdtt_stop_threshold;

					/*
					 * Before stopping, look at the deepest queue depth: a
					 * device can gain little from each of a few doublings and
					 * much from them together (10-15% from 2 to 4 and from 4
					 * to 8, then half the cost at 32, as devices that spread
					 * requests over many internal queues do), and one noisy
					 * point must not end the calibration
					 * either.  The stop stands if the deepest queue depth
					 * does not improve on both earlier ones by the threshold.
					 * It costs one point, measured once.
					 */
					if (stop && early_stop && qi + 1 < nqds)
					{
						int			deep = big + nqds - 1;

						if (!measured[deep])
						{
							cost[deep] = measure_point(&c, bands[bi], qds[nqds - 1]);
							measured[deep] = true;
							npoints++;
						}
						stop = 1.0 - cost[deep] / Min(cost[big + qi], cost[big + qi - 1]) <
							qdtt_stop_threshold;
						if (!stop)
							ereport(NOTICE,
									(errmsg("qdtt_calibrate: queue depth %d gained %.0f%% over %d, but %d gains more: going on",
											qds[qi], gain * 100, qds[qi - 1], qds[nqds - 1])));
					}
					if (!stop)
						last_good_qi = qi;
					else if (early_stop)
					{
						stopped_at = qds[qi];
						break;
					}
				}
			}

			/*
			 * Sequential streams at the stopping depth are still measured:
			 * a parallel seq scan can be slower than a serial one.  Their
			 * loss per doubling is extrapolated below.
			 */
			if (stopped_at != 0 && !measured[qi])
			{
				cost[qi] = measure_point(&c, 1, qds[qi]);
				measured[qi] = true;
				npoints++;
			}
			ereport(NOTICE,
					(errmsg("qdtt_calibrate: queue depth %d: largest band %.2f us/page, sequential %.2f us/page",
							qds[qi], cost[(nbands - 1) * nqds + qi], cost[qi])));
			if (stopped_at != 0)
				break;
		}

		if (stopped_at != 0)
		{
			int			stop_qi = qi;
			double		seq_step;

			seq_step = Max(cost[stop_qi] / cost[stop_qi - 1], 1.0);
			for (qi = stop_qi; qi < nqds; qi++)
				for (bi = 0; bi < nbands; bi++)
				{
					double		dflt = DEFAULT_MARGIN * cost[bi * nqds + last_good_qi];

					/*
					 * Band 1 beyond the stopping depth: more streams than
					 * were measured.  A loss per doubling seen at the
					 * stopping depth is assumed to repeat with every further
					 * doubling (on a disk, each stream adds seeks between
					 * the others' chunks: on the HDD tier 2 streams cost
					 * 1.4x one, 4 streams 5x, and a 5-participant parallel
					 * seq scan ran 3x a serial one); a gain is not
					 * extrapolated.
					 */
					if (bi == 0)
					{
						if (qi == stop_qi)
							continue;
						dflt = Max(dflt, cost[qi - 1] *
								   pow(seq_step, log2((double) qds[qi] / qds[qi - 1])));
					}
					cost[bi * nqds + qi] = dflt;
					measured[bi * nqds + qi] = false;
					ndefaulted++;
				}
			ereport(NOTICE,
					(errmsg("qdtt_calibrate: stopped early at queue depth %d: the largest band improved by less than %.0f%% over queue depth %d",
							stopped_at, qdtt_stop_threshold * 100, qds[stop_qi - 1])));
		}
		nremeasured = remeasure_outliers(&c, bands, nbands, qds, nqds, cost, measured);
		if (nremeasured > 0)
			ereport(NOTICE,
					(errmsg("qdtt_calibrate: measured %d point(s) again that cost more than %.1f times a neighbour that cannot be cheaper",
							nremeasured, OUTLIER_FACTOR)));

		t_done = now_seconds();

		/* last: the probes' writes must not disturb the device's points */
		pgstat_report_activity(STATE_RUNNING, "qdtt_calibrate: timing pages in memory");
		qdtt_measure_memory(spcname, &mem);
		ereport(NOTICE,
				(errmsg("qdtt_calibrate: a page in shared_buffers costs %.3f us at random, %.3f us in sequence; from the OS page cache %.3f us and %.3f us; a tuple %.3f us in a seq scan, %.3f us in a bitmap heap scan (and %.3f us a page), %.3f us in an index scan",
						mem.shared_buffers_random_us, mem.shared_buffers_seq_us,
						mem.os_cache_random_us, mem.os_cache_seq_us, mem.seq_tuple_us,
						mem.bitmap_tuple_us, mem.bitmap_page_us, mem.index_tuple_us)));
	}
	PG_FINALLY();
	{
		remove_file(&c);
	}
	PG_END_TRY();

	pgstat_report_activity(STATE_RUNNING, "qdtt_calibrate: storing the model");
	{
		QdttModel	m = {0};
		double	   *fb = palloc(sizeof(double) * nbands);
		int			beneficial;

		for (bi = 0; bi < nbands; bi++)
			fb[bi] = (double) bands[bi];
		m.nbands = nbands;
		m.nqds = nqds;
		m.bands = fb;
		m.qds = qds;
		m.cost_us = cost;
		beneficial = qdtt_model_beneficial_qd(&m, qdtt_stop_threshold);
		store_model(spcname, bands, nbands, qds, nqds, cost, measured, device,
					file_size_mb, early_stop, stopped_at, beneficial,
					t_prepared - t_start, t_done - t_prepared, npoints, ndefaulted,
					&mem);

		ereport(NOTICE,
				(errmsg("qdtt_calibrate: measured %d points in %.2f s (file preparation %.2f s), %d defaulted",
						npoints, t_done - t_prepared, t_prepared - t_start, ndefaulted)));

		values[0] = DirectFunctionCall1(namein, CStringGetDatum(spcname));
		values[1] = CStringGetTextDatum(device);
		values[2] = Int32GetDatum(beneficial);
		values[3] = Int32GetDatum(npoints);
		values[4] = Int32GetDatum(ndefaulted);
		values[5] = Int32GetDatum(stopped_at);
		nulls[5] = (stopped_at == 0);
		values[6] = Float8GetDatum(t_prepared - t_start);
		values[7] = Float8GetDatum(t_done - t_prepared);
		/* what qdtt_apply_prefetch() would set */
		values[8] = Int32GetDatum(qdtt_model_prefetch_depth(&m));
		values[9] = Float8GetDatum(mem.shared_buffers_random_us);
		values[10] = Float8GetDatum(mem.shared_buffers_seq_us);
		values[11] = Float8GetDatum(mem.os_cache_random_us);
		values[12] = Float8GetDatum(mem.os_cache_seq_us);
		values[13] = Float8GetDatum(mem.seq_tuple_us);
		values[14] = Float8GetDatum(mem.bitmap_tuple_us);
		values[15] = Float8GetDatum(mem.bitmap_page_us);
		values[16] = Float8GetDatum(mem.index_tuple_us);
	}
	ssdkit_uring_destroy(c.ring);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
