/*-------------------------------------------------------------------------
 *
 * ssdkit_test_uring.c
 *	  SQL-callable drivers of the shared io_uring helper, for the tests.
 *
 * They exercise what every extension relies on: keeping a given number of
 * requests in flight, matching completions to requests by tag, reporting
 * failed and short requests as PostgreSQL errors, and surviving an ERROR
 * raised while requests are in flight.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/md5.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "ssdkit_uring.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(ssdkit_test_uring_read);
PG_FUNCTION_INFO_V1(ssdkit_test_uring_write);
PG_FUNCTION_INFO_V1(ssdkit_test_uring_error_in_flight);

/* A tag carries the request's position in the block array and its buffer. */
#define TAG(pos, buf)	(((uint64) (pos) << 16) | (uint64) (buf))
#define TAG_POS(tag)	((int) ((tag) >> 16))
#define TAG_BUF(tag)	((int) ((tag) & 0xFFFF))

typedef struct TestIo
{
	const char *path;
	int			fd;
	int		   *blocks;
	int			nblocks;
	SsdkitUring *ring;
	char	  **bufs;			/* one BLCKSZ buffer per ring slot */
	int		   *free_bufs;		/* stack of unused buffer numbers */
	int			nfree;
	int			peak_inflight;	/* the ring's peak, kept after it closes */
} TestIo;

static void
test_io_begin(TestIo *io, text *path, ArrayType *blocks, int queue_depth,
			  int flags)
{
	int			i;

	io->path = text_to_cstring(path);
	if (ARR_NDIM(blocks) > 1 || array_contains_nulls(blocks))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("blocks must be a one-dimensional array without nulls")));
	io->blocks = (int *) ARR_DATA_PTR(blocks);
	io->nblocks = ArrayGetNItems(ARR_NDIM(blocks), ARR_DIMS(blocks));
	for (i = 0; i < io->nblocks; i++)
		if (io->blocks[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("block number %d is negative", io->blocks[i])));

	/* The ring checks the depth; create it before opening the file. */
	io->ring = ssdkit_uring_create(queue_depth);

	io->fd = OpenTransientFile(io->path, flags | PG_BINARY);
	if (io->fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", io->path)));

	io->bufs = palloc(sizeof(char *) * queue_depth);
	io->free_bufs = palloc(sizeof(int) * queue_depth);
	for (i = 0; i < queue_depth; i++)
	{
		io->bufs[i] = ssdkit_uring_alloc_buffer(io->ring, BLCKSZ);
		io->free_bufs[i] = i;
	}
	io->nfree = queue_depth;
}

/* Queue requests for blocks[*next ...] while the ring has room. */
static void
test_io_fill(TestIo *io, int *next, bool is_write)
{
	while (*next < io->nblocks && ssdkit_uring_space(io->ring) > 0)
	{
		int			b = io->free_bufs[--io->nfree];
		int			blk = io->blocks[*next];
		off_t		off = (off_t) blk * BLCKSZ;
		bool		ok;

		if (is_write)
		{
			memset(io->bufs[b], blk % 251, BLCKSZ);
			ok = ssdkit_uring_queue_write(io->ring, io->fd, io->bufs[b],
										  BLCKSZ, off, TAG(*next, b));
		}
		else
			ok = ssdkit_uring_queue_read(io->ring, io->fd, io->bufs[b],
										 BLCKSZ, off, TAG(*next, b));
		if (!ok)
			elog(ERROR, "io_uring refused a request although it reported free space");
		(*next)++;
	}
	ssdkit_uring_submit(io->ring);
}

/*
 * Run every request; for reads, store each block's md5 at its position in
 * "md5s" (may be NULL for writes).
 */
static void
test_io_run(TestIo *io, bool is_write, char (*md5s)[33])
{
	SsdkitUringCompletion *done = palloc(sizeof(SsdkitUringCompletion) * io->ring->depth);
	int			next = 0;
	int			completed = 0;

	while (completed < io->nblocks)
	{
		int			n,
					i;

		test_io_fill(io, &next, is_write);
		n = ssdkit_uring_reap(io->ring, done, io->ring->depth, true);
		for (i = 0; i < n; i++)
		{
			int			pos = TAG_POS(done[i].tag);
			int			b = TAG_BUF(done[i].tag);
			const char *errstr = NULL;

			ssdkit_uring_check(&done[i], is_write, io->path,
							   (off_t) io->blocks[pos] * BLCKSZ, BLCKSZ);
			if (!is_write &&
				!pg_md5_hash(io->bufs[b], BLCKSZ, md5s[pos], &errstr))
				elog(ERROR, "could not compute md5: %s", errstr);
			io->free_bufs[io->nfree++] = b;
			completed++;
		}
	}
}

static void
test_io_end(TestIo *io)
{
	io->peak_inflight = io->ring->peak_inflight;
	if (CloseTransientFile(io->fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", io->path)));
	ssdkit_uring_destroy(io->ring);
	io->ring = NULL;
}

Datum
ssdkit_test_uring_read(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		direct = PG_GETARG_BOOL(3);
	TestIo		io;
	char		(*md5s)[33];
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	test_io_begin(&io, PG_GETARG_TEXT_PP(0), PG_GETARG_ARRAYTYPE_P(1),
				  PG_GETARG_INT32(2), O_RDONLY | (direct ? O_DIRECT : 0));
	md5s = palloc0(sizeof(*md5s) * Max(io.nblocks, 1));
	test_io_run(&io, false, md5s);
	test_io_end(&io);

	for (i = 0; i < io.nblocks; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(io.blocks[i]);
		values[1] = CStringGetTextDatum(md5s[i]);
		values[2] = Int32GetDatum(io.peak_inflight);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

Datum
ssdkit_test_uring_write(PG_FUNCTION_ARGS)
{
	TestIo		io;

	test_io_begin(&io, PG_GETARG_TEXT_PP(0), PG_GETARG_ARRAYTYPE_P(1),
				  PG_GETARG_INT32(2), O_WRONLY | O_CREAT | O_DIRECT);
	test_io_run(&io, true, NULL);
	if (pg_fsync(io.fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", io.path)));
	test_io_end(&io);
	PG_RETURN_INT64((int64) io.nblocks * BLCKSZ);
}

Datum
ssdkit_test_uring_error_in_flight(PG_FUNCTION_ARGS)
{
	TestIo		io;
	int			next = 0;
	int			inflight;

	test_io_begin(&io, PG_GETARG_TEXT_PP(0), PG_GETARG_ARRAYTYPE_P(1),
				  PG_GETARG_INT32(2), O_RDONLY | O_DIRECT);
	test_io_fill(&io, &next, false);
	inflight = io.ring->inflight;
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("aborting with %d reads submitted", inflight)));
	PG_RETURN_VOID();
}
