/* ssd_cache/ssd_cache--0.1--0.2.sql */

\echo Use "ALTER EXTENSION ssd_cache UPDATE TO '0.2'" to load this file. \quit

-- 0.2: ssd_cache_stats gains problem, admission_io and header_writes, and
-- mode can be off or verifying.
DROP VIEW ssd_cache_stats;
DROP FUNCTION ssd_cache_stats_internal();

CREATE FUNCTION ssd_cache_stats_internal(
	OUT mode text,
	OUT problem text,
	OUT policy text,
	OUT hook_active boolean,
	OUT path text,
	OUT size_bytes bigint,
	OUT slots bigint,
	OUT used_slots bigint,
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
	OUT ssd_reads bigint,
	OUT ssd_writes bigint,
	OUT disk_reads bigint,
	OUT disk_writes bigint,
	OUT directory_writes bigint,
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
-- pages), write-through, pass-through (gave up during this run; see
-- problem).
CREATE VIEW ssd_cache_stats AS
SELECT mode, problem, policy, hook_active, path, size_bytes, slots, used_slots, admission_queue,
	   preparation_ms, admission_io, hits, misses,
	   round(hits::numeric / nullif(hits + misses, 0), 4) AS hit_ratio,
	   admissions, sequential_reads, refusals, evictions, invalidations, overwrites,
	   ssd_reads, ssd_writes,
	   ssd_reads * current_setting('block_size')::bigint AS ssd_read_bytes,
	   ssd_writes * current_setting('block_size')::bigint AS ssd_write_bytes,
	   disk_reads, disk_writes,
	   disk_reads * current_setting('block_size')::bigint AS disk_read_bytes,
	   disk_writes * current_setting('block_size')::bigint AS disk_write_bytes,
	   directory_writes, header_writes, errors, agings
FROM ssd_cache_stats_internal();
