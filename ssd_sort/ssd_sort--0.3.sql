/* ssd_sort/ssd_sort--0.3.sql */

\echo Use "CREATE EXTENSION ssd_sort" to load this file. \quit

CREATE FUNCTION ssd_sort_status(
	OUT library_version text,
	OUT preloaded boolean,
	OUT io_uring boolean,
	OUT io_uring_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'ssd_sort_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION ssd_sort_status() IS
'ssd_sort library version, whether it was loaded through shared_preload_libraries, and whether io_uring works in this server';
