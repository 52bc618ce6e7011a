/*-------------------------------------------------------------------------
 *
 * ssd_cache_measure.c
 *	  ssd_cache_measure_devices(): measure the three device costs TAC uses,
 *	  so a DBA can set them from this machine instead of from defaults.
 *
 * With O_DIRECT through the shared io_uring helper, one read in flight:
 *	- disk random read: random 8 kB reads of the given relation's first
 *	  segment file (its tablespace's device);
 *	- disk sequential read: 1 MB reads through the same file, per 8 kB;
 *	- SSD random read: random 8 kB reads of the cache file's slots.
 * O_DIRECT keeps the OS cache out of it.  The relation must have at least
 * 1024 blocks so that random reads are spread over a real range.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "common/pg_prng.h"
#include "common/relpath.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "ssd_cache.h"
#include "ssd_cache_directory.h"
#include "ssdkit_uring.h"

PG_FUNCTION_INFO_V1(ssd_cache_measure_devices);

#define MEASURE_MIN_BLOCKS	1024
#define SEQ_CHUNK			(1024 * 1024)

/*
 * Average milliseconds per read of "len" bytes at the given offsets, one
 * read in flight.
 */
static double
timed_reads(SsdkitUring *u, int fd, const char *path, char *buf, Size len,
			const off_t *offsets, int n)
{
	instr_time	start,
				elapsed;
	int			i;

	INSTR_TIME_SET_CURRENT(start);
	for (i = 0; i < n; i++)
	{
		SsdkitUringCompletion c;

		CHECK_FOR_INTERRUPTS();
		if (!ssdkit_uring_queue_read(u, fd, buf, len, offsets[i], i))
			elog(ERROR, "io_uring refused a read with an empty ring");
		ssdkit_uring_submit(u);
		while (ssdkit_uring_reap(u, &c, 1, true) == 0)
			;
		ssdkit_uring_check(&c, false, path, offsets[i], len);
	}
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	return INSTR_TIME_GET_MILLISEC(elapsed) / n;
}

static int
open_direct(const char *path)
{
	int			fd = OpenTransientFile(path, O_RDONLY | O_DIRECT | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	return fd;
}

Datum
ssd_cache_measure_devices(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int			samples = PG_GETARG_INT32(1);
	TupleDesc	tupdesc;
	Relation	rel;
	char	   *relpath;
	const char *cachepath = ssd_cache_configured_path();
	BlockNumber nblocks;
	SsdkitUring *u;
	char	   *buf;
	off_t	   *offsets;
	int			fd,
				i,
				nseq;
	double		disk_random,
				disk_seq,
				ssd_random;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	pg_prng_state rng;

	ssd_cache_require_preload();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (samples < 10 || samples > 100000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("samples must be between 10 and 100000")));
	if (!ssd_cache_enabled() || cachepath == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ssd_cache is not enabled"),
				 errhint("Set ssd_cache.path and restart the server.")));

	rel = relation_open(relid, AccessShareLock);
	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" has no storage to measure", RelationGetRelationName(rel))));
	nblocks = Min(RelationGetNumberOfBlocks(rel), RELSEG_SIZE);
	if (nblocks < MEASURE_MIN_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("relation \"%s\" is too small to measure its device", RelationGetRelationName(rel)),
				 errdetail("It has %u blocks; at least %d are needed.", nblocks, MEASURE_MIN_BLOCKS),
				 errhint("Measure with a larger table on the same tablespace.")));
	relpath = relpathperm(rel->rd_node, MAIN_FORKNUM);
	relation_close(rel, AccessShareLock);

	pg_prng_seed(&rng, (uint64) MyProcPid ^ (uint64) time(NULL));
	u = ssdkit_uring_create(1);
	buf = ssdkit_uring_alloc_buffer(u, SEQ_CHUNK);
	offsets = palloc(sizeof(off_t) * Max(samples, nblocks / (SEQ_CHUNK / BLCKSZ) + 1));

	/* Disk: random 8 kB reads, then the file in 1 MB reads. */
	fd = open_direct(relpath);
	for (i = 0; i < samples; i++)
		offsets[i] = (off_t) pg_prng_uint64_range(&rng, 0, nblocks - 1) * BLCKSZ;
	disk_random = timed_reads(u, fd, relpath, buf, BLCKSZ, offsets, samples);
	nseq = nblocks / (SEQ_CHUNK / BLCKSZ);
	for (i = 0; i < nseq; i++)
		offsets[i] = (off_t) i * SEQ_CHUNK;
	disk_seq = timed_reads(u, fd, relpath, buf, SEQ_CHUNK, offsets, nseq) / (SEQ_CHUNK / BLCKSZ);
	CloseTransientFile(fd);

	/* SSD: random 8 kB reads of slots. */
	fd = open_direct(cachepath);
	for (i = 0; i < samples; i++)
	{
		uint64		slot = pg_prng_uint64_range(&rng, 0, ssd_cache_nslots() - 1);
		SsdCacheLayout layout;

		ssd_cache_layout(ssd_cache_nslots(), &layout);
		offsets[i] = (off_t) (layout.slots_offset + slot * BLCKSZ);
	}
	ssd_random = timed_reads(u, fd, cachepath, buf, BLCKSZ, offsets, samples);
	CloseTransientFile(fd);
	ssdkit_uring_destroy(u);

	values[0] = Float8GetDatum(disk_random);
	values[1] = Float8GetDatum(disk_seq);
	values[2] = Float8GetDatum(ssd_random);
	values[3] = CStringGetTextDatum(psprintf("ALTER SYSTEM SET ssd_cache.disk_random_read_time = '%.4fms'; "
											 "ALTER SYSTEM SET ssd_cache.disk_sequential_read_time = '%.4fms'; "
											 "ALTER SYSTEM SET ssd_cache.ssd_random_read_time = '%.4fms'; "
											 "SELECT pg_reload_conf();",
											 disk_random, disk_seq, ssd_random));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
