/* qdtt_costing/qdtt_costing--0.1--0.2.sql */

\echo Use "ALTER EXTENSION qdtt_costing UPDATE TO '0.2'" to load this file. \quit

-- qdtt_calibrate() also returns the recommended effective_io_concurrency;
-- qdtt_apply_prefetch() sets it on the tablespace.
DROP FUNCTION qdtt_calibrate(name, integer, float8, boolean);

CREATE FUNCTION qdtt_calibrate(
	tablespace name DEFAULT 'pg_default',
	file_size_mb integer DEFAULT 1024,
	point_seconds float8 DEFAULT 0.25,
	early_stop boolean DEFAULT true,
	OUT tablespace name,
	OUT device text,
	OUT max_beneficial_queue_depth integer,
	OUT points_measured integer,
	OUT points_defaulted integer,
	OUT stopped_at_queue_depth integer,
	OUT prepare_seconds float8,
	OUT measure_seconds float8,
	OUT recommended_io_concurrency integer)
RETURNS record
AS 'MODULE_PATHNAME', 'qdtt_calibrate'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION qdtt_calibrate(name, integer, float8, boolean) FROM PUBLIC;

COMMENT ON FUNCTION qdtt_calibrate(name, integer, float8, boolean) IS
'measure the device of a tablespace as QDTT(band, queue depth) and store it as the tablespace''s model';

CREATE FUNCTION qdtt_apply_prefetch(tablespace name DEFAULT 'pg_default')
RETURNS integer
AS 'MODULE_PATHNAME', 'qdtt_apply_prefetch'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION qdtt_apply_prefetch(name) IS
'set the tablespace''s effective_io_concurrency and maintenance_io_concurrency to its model''s maximum beneficial queue depth (ALTER TABLESPACE)';

CREATE FUNCTION qdtt_residency(
	OUT tablespace oid,
	OUT database oid,
	OUT filenode oid,
	OUT fork text,
	OUT blocks bigint,
	OUT shared_buffers_blocks bigint,
	OUT os_cache_blocks bigint,
	OUT sampled_at timestamptz,
	OUT untracked_forks bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'qdtt_residency'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION qdtt_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_residency() IS
'the residency sampler''s last counts: every relation fork of the cluster, its blocks, those in shared_buffers and in the OS page cache';

CREATE FUNCTION qdtt_sample_residency()
RETURNS bigint
AS 'MODULE_PATHNAME', 'qdtt_sample_residency'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION qdtt_sample_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_sample_residency() IS
'run one residency pass now; returns the OS pages it examined';

-- The current database's relations (and the shared catalogs).
CREATE VIEW qdtt_residency AS
SELECT pg_filenode_relation(CASE WHEN r.tablespace = d.dattablespace THEN 0 ELSE r.tablespace END,
							r.filenode) AS relation,
	   r.fork, r.blocks, r.shared_buffers_blocks, r.os_cache_blocks,
	   CASE WHEN r.blocks > 0 THEN round(r.shared_buffers_blocks::numeric / r.blocks, 3) END
		 AS shared_buffers_fraction,
	   CASE WHEN r.blocks > 0 THEN round(r.os_cache_blocks::numeric / r.blocks, 3) END
		 AS os_cache_fraction,
	   r.sampled_at,
	   r.untracked_forks
FROM qdtt_residency() r, pg_database d
WHERE d.datname = current_database() AND r.database IN (0, d.oid);
REVOKE ALL ON qdtt_residency FROM PUBLIC;

COMMENT ON VIEW qdtt_residency IS
'where each relation fork''s blocks are: shared_buffers, the OS page cache (from the residency sampler)';
