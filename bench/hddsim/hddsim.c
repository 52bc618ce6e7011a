/*
 * hddsim: a disk with one head, for the benchmarks' HDD tier.
 *
 * It serves one file, MOUNTPOINT/disk, backed by IMAGE, through FUSE; the
 * tier attaches a loop device with direct I/O to it and puts ext4 on that, so
 * the kernel's page cache, readahead and writeback work above it exactly as
 * they do above a real disk, and only the requests that reach the device get
 * here.
 *
 * Every request, read or write, queues for the same head, in arrival order
 * (a drive without command reordering).  Its service time is
 *   - near the end of the previous request (within --near-kb, either way:
 *     the same or the next track, or the drive's track buffer): the gap and
 *     the request at --mbps;
 *   - anywhere else: --access-us (seek plus half a rotation), then the
 *     request at --mbps.
 * A request completes when its slot on the head's timeline ends; the copy to
 * or from IMAGE is done meanwhile and takes far less.  Flushes are free, as
 * on a drive whose write cache is off: a write is on the platter when it
 * completes.
 *
 * What this gives that a blkio throttle cannot: reads and writes share one
 * budget (a write-back storm slows the reads queued behind it, as a real
 * head does), sequential runs cost bandwidth not IOPS, and queue depth buys
 * nothing.  Counters are in MOUNTPOINT/stats (reads, writes, bytes, random
 * accesses, busy microseconds), readable at any time.
 *
 * Usage: hddsim [--access-us N] [--mbps N] [--near-kb N] IMAGE MOUNTPOINT
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

/* The head: one owner, this mutex. */
static pthread_mutex_t head_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t head_free_at;	/* CLOCK_MONOTONIC ns when the queue drains */
static int64_t head_pos = -1;	/* byte after the last request */
static uint64_t n_reads, n_writes, bytes_read, bytes_written, n_random;
static int64_t busy_ns;

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Book the head for one request; returns when the request may complete. */
static int64_t
book_head(off_t off, size_t len, int is_write)
{
	int64_t		cost,
				start,
				gap;

	pthread_mutex_lock(&head_lock);
	gap = head_pos < 0 ? INT64_MAX : (int64_t) off - head_pos;
	if (gap < 0)
		gap = -gap;
	if (gap <= near_bytes)
		cost = (int64_t) ((double) (gap + len) * ns_per_byte);
	else
	{
		cost = access_ns + (int64_t) ((double) len * ns_per_byte);
		n_random++;
	}
	start = now_ns();
	if (start < head_free_at)
		start = head_free_at;
	head_free_at = start + cost;
	head_pos = off + len;
	busy_ns += cost;
	if (is_write)
	{
		n_writes++;
		bytes_written += len;
	}
	else
	{
		n_reads++;
		bytes_read += len;
	}
	pthread_mutex_unlock(&head_lock);
	return start + cost;
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
				 "\nbytes_written %" PRIu64 "\nrandom %" PRIu64 "\nbusy_us %" PRId64 "\n",
				 n_reads, n_writes, bytes_read, bytes_written, n_random,
				 busy_ns / 1000);
	pthread_mutex_unlock(&head_lock);
	return n;
}

static void *
sim_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void) conn;
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

static int
sim_read(const char *path, char *buf, size_t len, off_t off,
		 struct fuse_file_info *fi)
{
	int64_t		done_at;
	ssize_t		n;

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
	if ((off_t) len > image_size - off)
		len = image_size - off;
	done_at = book_head(off, len, 0);
	n = pread(image_fd, buf, len, off);
	if (n < 0)
		return -errno;
	wait_until(done_at);
	return n;
}

static int
sim_write(const char *path, const char *buf, size_t len, off_t off,
		  struct fuse_file_info *fi)
{
	int64_t		done_at;
	ssize_t		n;

	(void) fi;
	if (strcmp(path, disk_path) != 0)
		return -EACCES;
	if (off >= image_size)
		return -ENOSPC;
	if ((off_t) len > image_size - off)
		len = image_size - off;
	done_at = book_head(off, len, 1);
	n = pwrite(image_fd, buf, len, off);
	if (n < 0)
		return -errno;
	wait_until(done_at);
	return n;
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
	fprintf(stderr, "usage: hddsim [--access-us N] [--mbps N] [--near-kb N] IMAGE MOUNTPOINT\n");
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

	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=hddsim,max_threads=64";
	fargv[fargc++] = argv[i + 1];
	return fuse_main(fargc, fargv, &sim_ops, NULL);
}
