/*-------------------------------------------------------------------------
 *
 * ssdkit_uring.c
 *	  io_uring wrapper shared by the ssdkit extensions.
 *
 * Lifetime and errors.  The ring and every buffer handed out by
 * ssdkit_uring_alloc_buffer() live in one memory context created for the
 * ring.  A reset callback on that context waits for all in-flight requests
 * and closes the ring.  PostgreSQL runs reset callbacks before it frees a
 * context's memory, so when a transaction aborts with reads in flight the
 * kernel has finished with the buffers before they are released; without
 * this an ERROR (or a query cancel) during I/O would let the kernel write
 * into freed memory.
 *
 * The ring's file descriptor is accounted with fd.c's external-FD budget so
 * that the backend's file-descriptor limit stays honest.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "ssdkit_uring.h"

/* How long a blocking reap sleeps before checking for interrupts. */
#define SSDKIT_URING_WAIT_USEC	100000

static void ssdkit_uring_release(void *arg);

/*
 * Wait for every submitted request and close the ring.  Runs from the
 * memory-context reset callback, possibly during abort: it must not
 * ereport(ERROR), and it ignores request results (the caller is gone).
 */
static void
ssdkit_uring_release(void *arg)
{
	SsdkitUring *u = (SsdkitUring *) arg;

	if (!u->open)
		return;

	while (u->inflight > 0)
	{
		struct io_uring_cqe *cqe;
		int			ret = io_uring_wait_cqe(&u->ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret < 0)
		{
			/*
			 * The ring is unusable.  Closing it makes the kernel cancel what
			 * is left; there is nothing better to do from here.
			 */
			elog(WARNING, "io_uring: could not wait for %d in-flight requests: %s",
				 u->inflight, strerror(-ret));
			break;
		}
		io_uring_cqe_seen(&u->ring, cqe);
		u->inflight--;
	}
	io_uring_queue_exit(&u->ring);
	ReleaseExternalFD();
	u->open = false;
}

/*
 * Create a ring that keeps up to "depth" requests outstanding.  Its memory
 * context is a child of CurrentMemoryContext, so it goes away with the
 * caller's context at the latest.
 */
SsdkitUring *
ssdkit_uring_create(int depth)
{
	MemoryContext mcxt;
	MemoryContextCallback *cb;
	SsdkitUring *u;
	int			ret;

	if (depth < 1 || depth > SSDKIT_URING_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("io_uring queue depth %d is out of range", depth),
				 errdetail("The queue depth must be between 1 and %d.",
						   SSDKIT_URING_MAX_DEPTH)));

	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not create io_uring: too many open files in this backend"),
				 errhint("Raise max_files_per_process or the operating system's file limit.")));

	mcxt = AllocSetContextCreate(CurrentMemoryContext, "ssdkit io_uring",
								 ALLOCSET_DEFAULT_SIZES);
	u = MemoryContextAllocZero(mcxt, sizeof(SsdkitUring));
	u->mcxt = mcxt;
	u->depth = depth;

	ret = io_uring_queue_init(depth, &u->ring, 0);
	if (ret < 0)
	{
		int			err = -ret;

		ReleaseExternalFD();
		MemoryContextDelete(mcxt);
		errno = err;
		if (err == ENOSYS || err == EPERM)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("io_uring is not available: %m"),
					 errdetail("The kernel refused to create an io_uring instance."),
					 errhint("Check the kernel.io_uring_disabled sysctl and any seccomp "
							 "profile the server runs under; a Linux 5.6 or newer kernel is required.")));
		else if (err == ENOMEM)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not create io_uring with %d entries: %m", depth),
					 errhint("Lower the queue depth, or raise the locked-memory limit "
							 "(ulimit -l) of the server on kernels older than 5.12.")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not create io_uring with %d entries: %m", depth)));
	}
	u->open = true;

	cb = MemoryContextAlloc(mcxt, sizeof(MemoryContextCallback));
	cb->func = ssdkit_uring_release;
	cb->arg = u;
	MemoryContextRegisterResetCallback(mcxt, cb);

	return u;
}

/* Wait for outstanding requests, close the ring and free its buffers. */
void
ssdkit_uring_destroy(SsdkitUring *u)
{
	MemoryContextDelete(u->mcxt);
}

/*
 * A buffer aligned for O_DIRECT that lives exactly as long as the ring, so a
 * request can never outlive its buffer.
 */
void *
ssdkit_uring_alloc_buffer(SsdkitUring *u, Size size)
{
	char	   *raw = MemoryContextAlloc(u->mcxt, size + SSDKIT_IO_ALIGN);

	return (void *) TYPEALIGN(SSDKIT_IO_ALIGN, raw);
}

static struct io_uring_sqe *
ssdkit_uring_get_sqe(SsdkitUring *u)
{
	struct io_uring_sqe *sqe;

	Assert(u->open);
	if (ssdkit_uring_space(u) <= 0)
		return NULL;
	sqe = io_uring_get_sqe(&u->ring);
	/* The submission queue holds at least "depth" entries. */
	if (sqe == NULL)
		elog(ERROR, "io_uring submission queue full with %d queued", u->queued);
	u->queued++;
	return sqe;
}

/* Prepare one read or write; false when the ring is full. */
static bool
ssdkit_uring_queue_rw(SsdkitUring *u, bool write, int fd, void *buf, Size len,
					  off_t offset, uint64 tag)
{
	struct io_uring_sqe *sqe = ssdkit_uring_get_sqe(u);

	if (sqe == NULL)
		return false;
	if (write)
		io_uring_prep_write(sqe, fd, buf, len, offset);
	else
		io_uring_prep_read(sqe, fd, buf, len, offset);
	io_uring_sqe_set_data64(sqe, tag);
	return true;
}

/*
 * Queue a read of "len" bytes at "offset" into "buf".  Returns false, queuing
 * nothing, when the ring already holds "depth" requests: reap first.
 */
bool
ssdkit_uring_queue_read(SsdkitUring *u, int fd, void *buf, Size len,
						off_t offset, uint64 tag)
{
	return ssdkit_uring_queue_rw(u, false, fd, buf, len, offset, tag);
}

/* As ssdkit_uring_queue_read(), for a write of "buf". */
bool
ssdkit_uring_queue_write(SsdkitUring *u, int fd, const void *buf, Size len,
						 off_t offset, uint64 tag)
{
	return ssdkit_uring_queue_rw(u, true, fd, unconstify(void *, buf), len, offset, tag);
}

/*
 * Hand every queued request to the kernel; with "wait", also wait in the
 * same system call until at least one request has completed.  Returns how
 * many requests were submitted.
 */
static int
ssdkit_uring_submit_queued(SsdkitUring *u, bool wait)
{
	int			done = 0;

	while (u->queued > 0)
	{
		int			ret = wait ? io_uring_submit_and_wait(&u->ring, 1) :
			io_uring_submit(&u->ring);

		if (ret == -EINTR || ret == -EAGAIN)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		if (ret < 0)
		{
			errno = -ret;
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not submit %d io_uring requests: %m", u->queued)));
		}
		u->queued -= ret;
		u->inflight += ret;
		u->submitted_total += ret;
		done += ret;
		wait = false;
	}
	u->peak_inflight = Max(u->peak_inflight, u->inflight);
	return done;
}

/* Hand every queued request to the kernel; returns how many were submitted. */
int
ssdkit_uring_submit(SsdkitUring *u)
{
	return ssdkit_uring_submit_queued(u, false);
}

/*
 * Submit what is queued and wait, in the same system call, until at least
 * one request has completed (reap it with ssdkit_uring_reap).  For loops
 * that keep a fixed number of requests in flight and are timed, such as
 * device calibration, where a separate submit and wait would double the
 * system calls per request.  The wait has no timeout: it ends when the
 * device answers.
 */
int
ssdkit_uring_submit_and_wait(SsdkitUring *u)
{
	return ssdkit_uring_submit_queued(u, true);
}

/*
 * Collect up to "max" completions into "out".  With "wait", block until at
 * least one request completes (checking for interrupts while waiting) unless
 * nothing is in flight.  Results are not checked here: see
 * ssdkit_uring_check().
 */
int
ssdkit_uring_reap(SsdkitUring *u, SsdkitUringCompletion *out, int max, bool wait)
{
	int			n = 0;

	while (n < max && u->inflight > 0)
	{
		struct io_uring_cqe *cqe;
		int			ret;

		if (n == 0 && wait)
		{
			struct __kernel_timespec ts = {0, SSDKIT_URING_WAIT_USEC * 1000};

			ret = io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
			if (ret == -ETIME || ret == -EINTR)
			{
				CHECK_FOR_INTERRUPTS();
				continue;
			}
		}
		else
		{
			ret = io_uring_peek_cqe(&u->ring, &cqe);
			if (ret == -EAGAIN)
				break;
		}
		if (ret < 0)
		{
			errno = -ret;
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not wait for io_uring completions: %m")));
		}
		out[n].tag = io_uring_cqe_get_data64(cqe);
		out[n].res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		u->inflight--;
		n++;
	}
	return n;
}

/*
 * Raise the error a failed or short request deserves, worded like md.c's.
 * A negative result is an errno from the kernel; a short transfer of a read
 * means the file ended early, and of a write that the device is full.
 */
void
ssdkit_uring_check(const SsdkitUringCompletion *c, bool is_write,
				   const char *path, off_t offset, Size expected)
{
	if (c->res < 0)
	{
		errno = -c->res;
		ereport(ERROR,
				(errcode_for_file_access(),
				 is_write ?
				 errmsg("could not write %zu bytes at offset %lld in file \"%s\": %m",
						expected, (long long) offset, path) :
				 errmsg("could not read %zu bytes at offset %lld in file \"%s\": %m",
						expected, (long long) offset, path)));
	}
	if ((Size) c->res != expected)
	{
		if (is_write)
			ereport(ERROR,
					(errcode(ERRCODE_DISK_FULL),
					 errmsg("could not write %zu bytes at offset %lld in file \"%s\": wrote only %d",
							expected, (long long) offset, path, c->res),
					 errhint("Check free disk space.")));
		else
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("could not read %zu bytes at offset %lld in file \"%s\": read only %d",
							expected, (long long) offset, path, c->res)));
	}
}
