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

