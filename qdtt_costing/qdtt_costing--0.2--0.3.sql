/* qdtt_costing/qdtt_costing--0.2--0.3.sql */

\echo Use "ALTER EXTENSION qdtt_costing UPDATE TO '0.3'" to load this file. \quit

-- qdtt_residency() and its view gain os_cache_gaps: the runs of blocks
-- outside the page cache (the planner's "cached in pieces").
DROP VIEW qdtt_residency;
DROP FUNCTION qdtt_residency();

CREATE FUNCTION qdtt_residency(
	OUT tablespace oid,
	OUT database oid,
	OUT filenode oid,
	OUT fork text,
	OUT blocks bigint,
	OUT shared_buffers_blocks bigint,
	OUT os_cache_blocks bigint,
	OUT sampled_at timestamptz,
	OUT untracked_forks bigint,
	OUT os_cache_gaps bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'qdtt_residency'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION qdtt_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_residency() IS
'the residency sampler''s last counts: every relation fork of the cluster, its blocks, those in shared_buffers and in the OS page cache, and the runs of blocks outside the page cache';

-- The current database's relations (and the shared catalogs).
CREATE VIEW qdtt_residency AS
SELECT pg_filenode_relation(CASE WHEN r.tablespace = d.dattablespace THEN 0 ELSE r.tablespace END,
							r.filenode) AS relation,
	   r.fork, r.blocks, r.shared_buffers_blocks, r.os_cache_blocks,
	   CASE WHEN r.blocks > 0 THEN round(r.shared_buffers_blocks::numeric / r.blocks, 3) END
		 AS shared_buffers_fraction,
	   CASE WHEN r.blocks > 0 THEN round(r.os_cache_blocks::numeric / r.blocks, 3) END
		 AS os_cache_fraction,
	   r.os_cache_gaps,
	   r.sampled_at,
	   r.untracked_forks
FROM qdtt_residency() r, pg_database d
WHERE d.datname = current_database() AND r.database IN (0, d.oid);
REVOKE ALL ON qdtt_residency FROM PUBLIC;

COMMENT ON VIEW qdtt_residency IS
'where each relation fork''s blocks are: shared_buffers, the OS page cache (from the residency sampler)';
