/*-------------------------------------------------------------------------
 *
 * ssdkit_uring.h
 *	  A small io_uring wrapper shared by every ssdkit extension.
 *
 * Each extension compiles this module in (see common/common.mk).  Because
 * PostgreSQL loads libraries with RTLD_GLOBAL, these symbols are hidden so
 * that one extension's copy never interposes on another's.
 *
 * Model: a ring keeps at most "depth" requests queued or in flight.  The
 * caller queues reads or writes (each with a 64-bit tag of its choosing),
 * submits, and reaps completions.  Failures are reported through ereport()
 * with PostgreSQL error codes; an ERROR while requests are in flight is safe,
 * because the ring's memory context drains them before any memory is freed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SSDKIT_URING_H
#define SSDKIT_URING_H

#include "postgres.h"

#include <liburing.h>

#define SSDKIT_INTERNAL __attribute__((visibility("hidden")))

/* Upper bound of a ring's depth; also what the GUCs that size rings allow. */
#define SSDKIT_URING_MAX_DEPTH	256

/* Alignment of buffers for O_DIRECT I/O (covers 512 B and 4 KB sectors). */
#define SSDKIT_IO_ALIGN			4096

typedef struct SsdkitUringCompletion
{
	uint64		tag;			/* the caller's tag for the request */
	int32		res;			/* bytes transferred, or -errno */
} SsdkitUringCompletion;

typedef struct SsdkitUring
{
	struct io_uring ring;
	MemoryContext mcxt;			/* owns this struct and its buffers */
	int			depth;			/* maximum queued + in flight */
	int			queued;			/* prepared, not yet submitted */
	int			inflight;		/* submitted, not yet reaped */
	int			peak_inflight;	/* largest "inflight" seen since create */
	uint64		submitted_total;	/* requests handed to the kernel */
	bool		open;
} SsdkitUring;

extern SSDKIT_INTERNAL SsdkitUring *ssdkit_uring_create(int depth);
extern SSDKIT_INTERNAL void ssdkit_uring_destroy(SsdkitUring *u);
extern SSDKIT_INTERNAL void *ssdkit_uring_alloc_buffer(SsdkitUring *u, Size size);

extern SSDKIT_INTERNAL bool ssdkit_uring_queue_read(SsdkitUring *u, int fd,
													void *buf, Size len,
													off_t offset, uint64 tag);
extern SSDKIT_INTERNAL bool ssdkit_uring_queue_write(SsdkitUring *u, int fd,
													 const void *buf, Size len,
													 off_t offset, uint64 tag);
extern SSDKIT_INTERNAL int ssdkit_uring_submit(SsdkitUring *u);
extern SSDKIT_INTERNAL int ssdkit_uring_submit_and_wait(SsdkitUring *u);
extern SSDKIT_INTERNAL int ssdkit_uring_reap(SsdkitUring *u,
											 SsdkitUringCompletion *out,
											 int max, bool wait);
extern SSDKIT_INTERNAL void ssdkit_uring_check(const SsdkitUringCompletion *c,
											   bool is_write, const char *path,
											   off_t offset, Size expected);

/* Free request slots: how many more requests may be queued right now. */
static inline int
ssdkit_uring_space(const SsdkitUring *u)
{
	return u->depth - u->queued - u->inflight;
}

#endif							/* SSDKIT_URING_H */
