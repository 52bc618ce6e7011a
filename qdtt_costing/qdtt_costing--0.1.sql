/* qdtt_costing/qdtt_costing--0.1.sql */

\echo Use "CREATE EXTENSION qdtt_costing" to load this file. \quit

CREATE FUNCTION qdtt_costing_status(
	OUT library_version text,
	OUT preloaded boolean,
	OUT io_uring boolean,
	OUT io_uring_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'qdtt_costing_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION qdtt_costing_status() IS
'qdtt_costing library version, whether it was loaded through shared_preload_libraries, and whether io_uring works in this server';
