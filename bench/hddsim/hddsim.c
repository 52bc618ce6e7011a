/*
 * hddsim: a disk with one head, for the benchmarks' HDD tier.
 *
 * It serves one file, MOUNTPOINT/disk, backed by IMAGE, through FUSE; the
 * tier attaches a loop device with direct I/O to it and puts ext4 on that, so
 * the kernel's page cache, readahead and writeback work above it exactly as
 * they do above a real disk, and only the requests that reach the device get
 * here.
 *
 * Every request, read or write, queues for the same head.  Whenever the head
 * is free, it takes the next request the way Linux's mq-deadline elevator
 * over a disk would hand them out: reads first, but after 32 reads in a row
 * (or when a write has waited 5 s) a batch of up to 16 writes; within the
 * class, the first request at or after the head's position, else the lowest
 * (one-way elevator).  Its service time is
 *   - at most --near-kb ahead of where the head is (the same or the next
 *     track): the gap, capped at --access-us, plus the request at --mbps;
 *     a write there after the head stood idle also waits half a rotation
 *     (--rpm), since no sector waits under a parked head;
 *   - anywhere else, behind the head included: --access-us (seek plus half
 *     a rotation), then the request at --mbps.
 * A request completes when its slot on the head's timeline ends; the copy to
 * or from IMAGE is done meanwhile and takes far less.  Flushes are free, as
 * on a drive whose write cache is off: a write is on the platter when it
 * completes.  Not modelled: seek distance and the drive's own reordering
 * by rotational position (NCQ), so a deep queue gains nothing.
 *
 * What this gives that a blkio throttle cannot: reads and writes share one
 * budget (a write-back storm delays reads, within the elevator's limits, as
 * on a real disk), and sequential runs cost bandwidth, not IOPS.  Counters
 * are in MOUNTPOINT/stats (reads, writes, bytes, random accesses, busy
 * microseconds), readable at any time.
 *
 * Usage: hddsim [--access-us N] [--mbps N] [--near-kb N] [--rpm N] IMAGE MOUNTPOINT
 * It stays in the foreground; unmount with "fusermount3 -u MOUNTPOINT".
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *disk_path = "/disk";
static const char *stats_path = "/stats";

static int image_fd = -1;
static off_t image_size;
static int64_t access_ns = 5000 * 1000L;	/* 200 random accesses a second */
static double ns_per_byte = 1e9 / (150.0 * 1024 * 1024);
static int64_t near_bytes = 1024 * 1024;
static int64_t half_rotation_ns = 30000000000L / 7200;	/* 7,200 rpm */

/* The elevator's limits (mq-deadline's defaults: fifo_batch 16, write_expire 5 s). */
#define READS_BEFORE_WRITES	32
#define WRITE_BATCH			16
#define WRITE_EXPIRE_NS		5000000000L

typedef struct Request
{
	off_t		off;
	size_t		len;
	int			is_write;
	int64_t		arrival;
	int64_t		done_at;		/* set by the head: 0 until scheduled */
	pthread_cond_t scheduled;
	struct Request *next;
} Request;

/* The head and its queue: one owner, this mutex; the head thread decides. */
static pthread_mutex_t head_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static Request *pending;		/* in arrival order */
static int64_t head_free_at;	/* CLOCK_MONOTONIC ns when the head is free */
static int64_t head_pos = -1;	/* byte after the last request */
static int	reads_in_a_row, writes_in_batch;
static uint64_t n_reads, n_writes, bytes_read, bytes_written, n_random;
static int64_t busy_ns;
static int	n_pending, max_pending;	/* queue length now and at most */

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Time the head spends on r, where it stands now; moves it. */
static int64_t
service_time(const Request *r, int64_t start)
{
	int64_t		gap = head_pos < 0 ? -1 : (int64_t) r->off - head_pos;
	int64_t		cost = (int64_t) ((double) r->len * ns_per_byte);

	if (gap >= 0 && gap <= near_bytes)
	{
		int64_t		move = (int64_t) ((double) gap * ns_per_byte);

		cost += move < access_ns ? move : access_ns;
		if (r->is_write && start > head_free_at)
			cost += half_rotation_ns;
	}
	else
	{
		cost += access_ns;
		n_random++;
	}
	head_pos = r->off + r->len;
	return cost;
}

/* The elevator's next request of one class: first at or after the head, else the lowest. */
static Request **
next_of_class(int is_write)
{
	Request   **p,
			  **ahead = NULL,
			  **lowest = NULL;

	for (p = &pending; *p; p = &(*p)->next)
	{
		if ((*p)->is_write != is_write)
			continue;
		if ((*p)->off >= head_pos && (ahead == NULL || (*p)->off < (*ahead)->off))
			ahead = p;
		if (lowest == NULL || (*p)->off < (*lowest)->off)
			lowest = p;
	}
	return ahead ? ahead : lowest;
}

/* Which request the head takes next (the link pointing at it). */
static Request **
pick(int64_t now)
{
	Request   **r = next_of_class(0),
			  **w = next_of_class(1),
			  **p;
	int			write_expired = 0;

	for (p = &pending; *p; p = &(*p)->next)
		if ((*p)->is_write && now - (*p)->arrival > WRITE_EXPIRE_NS)
			write_expired = 1;
	if (w && (r == NULL || write_expired || reads_in_a_row >= READS_BEFORE_WRITES ||
			  (writes_in_batch > 0 && writes_in_batch < WRITE_BATCH)))
	{
		reads_in_a_row = 0;
		writes_in_batch++;
		return w;
	}
	writes_in_batch = 0;
	if (w)
		reads_in_a_row++;
	return r;
}

/* The head: whenever it is free, serve the next pending request. */
static void *
head_main(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&head_lock);
	for (;;)
	{
		int64_t		now;
		Request   **link,
				   *r;

		while (pending == NULL)
			pthread_cond_wait(&work, &head_lock);
		now = now_ns();
		if (now < head_free_at)
		{
			struct timespec ts;

			/* Choose when the head frees up, among all that came by then. */
			ts.tv_sec = head_free_at / 1000000000L;
			ts.tv_nsec = head_free_at % 1000000000L;
			pthread_mutex_unlock(&head_lock);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			pthread_mutex_lock(&head_lock);
			continue;
		}
		link = pick(now);
		r = *link;
		*link = r->next;
		n_pending--;
		{
			int64_t		cost = service_time(r, now);

			head_free_at = now + cost;
			busy_ns += cost;
		}
		if (r->is_write)
		{
			n_writes++;
			bytes_written += r->len;
		}
		else
		{
			n_reads++;
			bytes_read += r->len;
		}
		r->done_at = head_free_at;
		pthread_cond_signal(&r->scheduled);
	}
	return NULL;
}

/* Queue one request for the head; returns when it may complete. */
static int64_t
book_head(off_t off, size_t len, int is_write)
{
	Request		r;
	Request   **p;

	memset(&r, 0, sizeof(r));
	r.off = off;
	r.len = len;
	r.is_write = is_write;
	pthread_cond_init(&r.scheduled, NULL);
	pthread_mutex_lock(&head_lock);
	r.arrival = now_ns();
	for (p = &pending; *p; p = &(*p)->next)
		;
	*p = &r;
	if (++n_pending > max_pending)
		max_pending = n_pending;
	pthread_cond_signal(&work);
	while (r.done_at == 0)
		pthread_cond_wait(&r.scheduled, &head_lock);
	pthread_mutex_unlock(&head_lock);
	pthread_cond_destroy(&r.scheduled);
	return r.done_at;
}

static void
wait_until(int64_t t)
{
	struct timespec ts;

	ts.tv_sec = t / 1000000000L;
	ts.tv_nsec = t % 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int
format_stats(char *buf, size_t size)
{
	int			n;

	pthread_mutex_lock(&head_lock);
	n = snprintf(buf, size,
				 "reads %" PRIu64 "\nwrites %" PRIu64 "\nbytes_read %" PRIu64
				 "\nbytes_written %" PRIu64 "\nrandom %" PRIu64 "\nbusy_us %" PRId64
				 "\nmax_queue %d\n",
				 n_reads, n_writes, bytes_read, bytes_written, n_random,
				 busy_ns / 1000, max_pending);
	pthread_mutex_unlock(&head_lock);
	return n;
}

static void *
sim_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	pthread_t	head;

	/* Let the kernel keep a disk's queue here (NCQ's 32) for the elevator. */
	conn->max_background = 32;
	conn->congestion_threshold = 24;
	if (pthread_create(&head, NULL, head_main, NULL) != 0)
	{
		perror("hddsim: head thread");
		exit(1);
	}
	cfg->direct_io = 1;			/* no page cache here: the loop device's ext4 has one */
	cfg->kernel_cache = 0;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	return NULL;
}

static int
sim_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void) fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0)
	{
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	}
	else if (strcmp(path, disk_path) == 0)
	{
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = image_size;
	}
	else if (strcmp(path, stats_path) == 0)
	{
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;
	}
	else
		return -ENOENT;
	return 0;
}

static int
sim_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void) off;
	(void) fi;
	(void) flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, disk_path + 1, NULL, 0, 0);
	fill(buf, stats_path + 1, NULL, 0, 0);
	return 0;
}

static int
sim_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, disk_path) != 0 && strcmp(path, stats_path) != 0)
		return -ENOENT;
	if (strcmp(path, stats_path) == 0 && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fi->direct_io = 1;
	return 0;
}

/* Clamp a request to the image, book the head, copy, complete on time. */
static int
serve(void *buf, size_t len, off_t off, int is_write)
{
	int64_t		done_at;
	ssize_t		n;

	if ((off_t) len > image_size - off)
		len = image_size - off;
	done_at = book_head(off, len, is_write);
	n = is_write ? pwrite(image_fd, buf, len, off) : pread(image_fd, buf, len, off);
	if (n < 0)
		return -errno;
	wait_until(done_at);
	return n;
}

static int
sim_read(const char *path, char *buf, size_t len, off_t off,
		 struct fuse_file_info *fi)
{
	(void) fi;
	if (strcmp(path, stats_path) == 0)
	{
		char		text[512];
		int			tl = format_stats(text, sizeof(text));

		if (off >= tl)
			return 0;
		if ((off_t) len > tl - off)
			len = tl - off;
		memcpy(buf, text + off, len);
		return len;
	}
	if (off >= image_size)
		return 0;
	return serve(buf, len, off, 0);
}

static int
sim_write(const char *path, const char *buf, size_t len, off_t off,
		  struct fuse_file_info *fi)
{
	(void) fi;
	if (strcmp(path, disk_path) != 0)
		return -EACCES;
	if (off >= image_size)
		return -ENOSPC;
	return serve((void *) buf, len, off, 1);
}

static int
sim_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void) path;
	(void) datasync;
	(void) fi;
	/* Written requests are on the platter already (write cache off). */
	return 0;
}

static const struct fuse_operations sim_ops = {
	.init = sim_init,
	.getattr = sim_getattr,
	.readdir = sim_readdir,
	.open = sim_open,
	.read = sim_read,
	.write = sim_write,
	.fsync = sim_fsync,
};

static void
usage(void)
{
	fprintf(stderr, "usage: hddsim [--access-us N] [--mbps N] [--near-kb N] [--rpm N] IMAGE MOUNTPOINT\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	int			i = 1;
	struct stat st;
	char	   *fargv[8];
	int			fargc = 0;

	for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2)
	{
		double		v = atof(argv[i + 1]);

		if (v <= 0)
			usage();
		if (strcmp(argv[i], "--access-us") == 0)
			access_ns = (int64_t) (v * 1000);
		else if (strcmp(argv[i], "--mbps") == 0)
			ns_per_byte = 1e9 / (v * 1024 * 1024);
		else if (strcmp(argv[i], "--near-kb") == 0)
			near_bytes = (int64_t) (v * 1024);
		else if (strcmp(argv[i], "--rpm") == 0)
			half_rotation_ns = (int64_t) (30e9 / v);
		else
			usage();
	}
	if (argc - i != 2)
		usage();
	image_fd = open(argv[i], O_RDWR);
	if (image_fd < 0 || fstat(image_fd, &st) != 0)
	{
		perror(argv[i]);
		return 1;
	}
	image_size = st.st_size;

	/*
	 * A loop device's I/O waits on this process: it must not be the one the
	 * OOM killer picks, nor be throttled as a writer of dirty pages.
	 */
	(void) prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0);

	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=hddsim,max_threads=64";
	fargv[fargc++] = argv[i + 1];
	return fuse_main(fargc, fargv, &sim_ops, NULL);
}
