/* ssd_cache/ssd_cache--0.1.sql */

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
-- later it cannot cache anything, so refuse to install rather than pretend.
DO $$
BEGIN
	IF NOT (SELECT preloaded FROM @extschema@.ssd_cache_status()) THEN
		RAISE EXCEPTION 'ssd_cache must be loaded via shared_preload_libraries'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The library was loaded after server start, so it cannot wrap the storage manager.',
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
