/* ssd_cache/ssd_cache--0.3.sql */

\echo Use "CREATE EXTENSION ssd_cache" to load this file. \quit

CREATE FUNCTION ssd_cache_status(
	OUT library_version text,
	OUT preloaded boolean,
	OUT io_uring boolean,
	OUT io_uring_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_cache_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION ssd_cache_status() IS
'ssd_cache library version, whether it was loaded through shared_preload_libraries, and whether io_uring works in this server';

-- ssd_cache hooks the storage manager when the postmaster starts; loaded
-- later it caches nothing.  The extension installs anyway (a dump of a
-- database that had it restores on any server), says so, and its functions
-- other than ssd_cache_status() refuse to run.
DO $$
BEGIN
	IF NOT (SELECT preloaded FROM @extschema@.ssd_cache_status()) THEN
		RAISE WARNING 'ssd_cache must be loaded via shared_preload_libraries: it caches nothing in this server'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The library was loaded after server start, so it cannot wrap the storage manager; its functions and views will raise errors.',
				  HINT = 'Add ssd_cache to shared_preload_libraries in postgresql.conf and restart the server.';
	END IF;
END
$$;

-- One row per storage-manager or sync-handler slot ssd_cache wraps, with the
-- md.c function it wraps and the calls made through it since server start.
CREATE FUNCTION ssd_cache_hook_status(
	OUT slot text,
	OUT wraps text,
	OUT calls bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ssd_cache_hook_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION ssd_cache_hook_status() IS
'storage-manager and sync-handler slots wrapped by ssd_cache, with calls since server start';

CREATE FUNCTION ssd_cache_stats_internal(
	OUT mode text,
	OUT problem text,
	OUT policy text,
	OUT hook_active boolean,
	OUT path text,
	OUT size_bytes bigint,
	OUT slots bigint,
	OUT used_slots bigint,
	OUT free_slots bigint,
	OUT fresher_pages bigint,
	OUT admission_queue bigint,
	OUT preparation_ms double precision,
	OUT admission_io text,
	OUT hits bigint,
	OUT misses bigint,
	OUT admissions bigint,
	OUT sequential_reads bigint,
	OUT refusals bigint,
	OUT evictions bigint,
	OUT invalidations bigint,
	OUT overwrites bigint,
	OUT absorbed_writes bigint,
	OUT checkpoint_writes_absorbed bigint,
	OUT absorbed_admissions bigint,
	OUT write_backs bigint,
	OUT ssd_reads bigint,
	OUT ssd_writes bigint,
	OUT disk_reads bigint,
	OUT disk_writes bigint,
	OUT directory_writes bigint,
	OUT directory_writes_admission bigint,
	OUT directory_writes_eviction bigint,
	OUT directory_writes_fresher bigint,
	OUT header_writes bigint,
	OUT errors bigint,
	OUT agings bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_cache_stats_internal'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Cluster-wide cache state and counters since start or the last
-- ssd_cache_reset_stats(); page counts come with their byte totals.
-- mode: disabled (no ssd_cache.path), off (configured but not running; see
-- problem), verifying (after a crash, until WAL replay covers the cached
-- pages; pages fresher than the disk are served all along), write-through,
-- write-back, pass-through (gave up during this run; see problem).
-- fresher_pages: pages whose newest copy is only in the cache (write-back).
-- absorbed_writes: writes the SSD took instead of the disk, of them
-- checkpoint_writes_absorbed by the checkpointer and absorbed_admissions
-- into new slots; write_backs: fresher pages written to the disk (evictions,
-- ssd_cache_flush()).  directory_writes by occasion: admission, eviction,
-- a cached page first made fresher (the thesis's three); the rest are
-- invalidations and write-backs.
CREATE VIEW ssd_cache_stats AS
SELECT mode, problem, policy, hook_active, path, size_bytes, slots, used_slots, free_slots,
	   fresher_pages, admission_queue, preparation_ms, admission_io, hits, misses,
	   round(hits::numeric / nullif(hits + misses, 0), 4) AS hit_ratio,
	   admissions, sequential_reads, refusals, evictions, invalidations, overwrites,
	   absorbed_writes, checkpoint_writes_absorbed, absorbed_admissions, write_backs,
	   ssd_reads, ssd_writes,
	   ssd_reads * current_setting('block_size')::bigint AS ssd_read_bytes,
	   ssd_writes * current_setting('block_size')::bigint AS ssd_write_bytes,
	   disk_reads, disk_writes,
	   disk_reads * current_setting('block_size')::bigint AS disk_read_bytes,
	   disk_writes * current_setting('block_size')::bigint AS disk_write_bytes,
	   directory_writes, directory_writes_admission, directory_writes_eviction,
	   directory_writes_fresher, header_writes, errors, agings
FROM ssd_cache_stats_internal();

CREATE FUNCTION ssd_cache_relation_blocks(
	OUT reltablespace oid,
	OUT relfilenode oid,
	OUT cached_blocks bigint,
	OUT hits bigint,
	OUT misses bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ssd_cache_relation_blocks'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Per relation of the current database with cached blocks: how much of it
-- is cached, and how the reads that missed shared_buffers were served
-- (since start or ssd_cache_reset_stats()).
CREATE VIEW ssd_cache_relations AS
SELECT r.relation, b.cached_blocks,
	   round(b.cached_blocks::numeric /
			 nullif(pg_relation_size(r.relation) / current_setting('block_size')::bigint, 0), 4)
		   AS cached_fraction,
	   b.hits, b.misses,
	   round(b.hits::numeric / nullif(b.hits + b.misses, 0), 4) AS hit_ratio
FROM ssd_cache_relation_blocks() b
	 CROSS JOIN pg_database d
	 CROSS JOIN LATERAL pg_filenode_relation(
		 CASE WHEN b.reltablespace = d.dattablespace THEN 0 ELSE b.reltablespace END,
		 b.relfilenode) AS r(relation)
WHERE d.datname = current_database();

CREATE FUNCTION ssd_cache_reset_stats()
RETURNS void
AS 'MODULE_PATHNAME', 'ssd_cache_reset_stats'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION ssd_cache_evict(relation regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ssd_cache_evict'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION ssd_cache_reset_stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION ssd_cache_evict(regclass) FROM PUBLIC;

-- Compare every cached page with its copy on disk: a clean one must be
-- identical on a quiet server, a fresher one (write-back) at least as new
-- (page LSN); mismatches are also logged.
CREATE FUNCTION ssd_cache_verify(OUT checked bigint, OUT mismatched bigint, OUT fresher bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_cache_verify_sql'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION ssd_cache_verify() FROM PUBLIC;

-- Write every page fresher than the disk back to it (write-back); once none
-- is left the data directory is complete without the cache.  Returns how
-- many pages were written.
CREATE FUNCTION ssd_cache_flush()
RETURNS bigint
AS 'MODULE_PATHNAME', 'ssd_cache_flush'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION ssd_cache_flush() FROM PUBLIC;

-- Measure the device costs TAC uses: random and sequential 8 kB reads of
-- the disk holding "relation", random reads of the cache file (O_DIRECT,
-- one read in flight).  Returns the times and the statements that set them.
CREATE FUNCTION ssd_cache_measure_devices(
	relation regclass,
	samples int DEFAULT 200,
	OUT disk_random_read_ms double precision,
	OUT disk_sequential_read_ms double precision,
	OUT ssd_random_read_ms double precision,
	OUT settings text)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_cache_measure_devices'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION ssd_cache_measure_devices(regclass, int) FROM PUBLIC;

-- Nanoseconds per directory lookup of a page that is not cached: what a read
-- that misses shared_buffers and the cache pays for the cache.
CREATE FUNCTION ssd_cache_lookup_cost(probes int DEFAULT 1000000)
RETURNS double precision
AS 'MODULE_PATHNAME', 'ssd_cache_lookup_cost'
LANGUAGE C STRICT VOLATILE;

-- Buffer-pool warm-up: what the last start loaded and what the recorder
-- last wrote (one row).
CREATE FUNCTION ssd_cache_warmup_status(
	OUT phase text,
	OUT reason text,
	OUT holding_connections boolean,
	OUT started_at timestamptz,
	OUT loading_at timestamptz,
	OUT finished_at timestamptz,
	OUT state_recorded_at timestamptz,
	OUT state_pages bigint,
	OUT planned_chunks bigint,
	OUT pages_loaded bigint,
	OUT pages_from_ssd_cache bigint,
	OUT disk_reads bigint,
	OUT cold_pages_read bigint,
	OUT chunks_loaded bigint,
	OUT chunks_piggybacked bigint,
	OUT chunks_skipped bigint,
	OUT last_recorded_at timestamptz,
	OUT last_recorded_redo pg_lsn,
	OUT last_recorded_pages bigint,
	OUT last_record_ms double precision,
	OUT shared_buffers_pages bigint,
	OUT loader_queue_depth int)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_cache_warmup_status'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW ssd_cache_warmup AS SELECT * FROM ssd_cache_warmup_status();

-- Per tablespace: the request size the warm-up planner chose, what it
-- measured, and the estimator's answer.
CREATE FUNCTION ssd_cache_warmup_devices(
	OUT tablespace oid,
	OUT request_kb int,
	OUT measured boolean,
	OUT page_read_ms double precision,
	OUT request_read_ms double precision,
	OUT disk_pages bigint,
	OUT chunks bigint,
	OUT pages_per_chunk double precision,
	OUT break_even_pages double precision,
	OUT preload boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'ssd_cache_warmup_devices'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW ssd_cache_warmup_devices AS SELECT * FROM ssd_cache_warmup_devices();
