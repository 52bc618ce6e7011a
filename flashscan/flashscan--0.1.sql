/* flashscan/flashscan--0.1.sql */

\echo Use "CREATE EXTENSION flashscan" to load this file. \quit

CREATE FUNCTION flashscan_status(
	OUT library_version text,
	OUT preloaded boolean,
	OUT io_uring boolean,
	OUT io_uring_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'flashscan_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION flashscan_status() IS
'flashscan library version, whether it was loaded through shared_preload_libraries, and whether io_uring works in this server';
