/* flashscan/flashscan--0.3.sql */

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

-- The pax table access method: CREATE TABLE ... USING pax.
CREATE FUNCTION pax_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'pax_tableam_handler'
LANGUAGE C STRICT;

CREATE ACCESS METHOD pax TYPE TABLE HANDLER pax_tableam_handler;
COMMENT ON ACCESS METHOD pax IS
'PAX storage: rows in groups of blocks, one minipage per column';

CREATE FUNCTION pax_groups(rel regclass,
	OUT first_row bigint,
	OUT nrows bigint,
	OUT first_block bigint,
	OUT nblocks integer,
	OUT minipage_bytes bigint,
	OUT xmin xid,
	OUT frozen boolean,
	OUT aborted boolean,
	OUT stored bigint,
	OUT sparse boolean,
	OUT row_map_blocks integer,
	OUT delta boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pax_groups'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pax_groups(regclass) IS
'the group directory of a pax table: row range, blocks, minipage bytes, writer and its state, rows stored (fewer than nrows in a sparse group VACUUM rewrote), row map blocks (per-row delete/update/lock states), whether it is a delta page of small inserts (rows with their own xmin, shown as NULL)';

CREATE FUNCTION pax_set_group_blocks(rel regclass, group_blocks integer)
RETURNS void
AS 'MODULE_PATHNAME', 'pax_set_group_blocks'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pax_set_group_blocks(regclass, integer) IS
'set the number of blocks of a pax table''s next groups (PostgreSQL 15 has no table access method reloptions)';

CREATE FUNCTION pax_column_sizes(rel regclass,
	OUT column_name text,
	OUT minipage_bytes bigint,
	OUT blocks bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pax_column_sizes'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pax_column_sizes(regclass) IS
'per column of a pax table: bytes of its minipages, and the blocks a scan of that column reads';

-- pax changes are logically decoded only with flashscan preloaded (its WAL
-- resource manager); a publication that would cover a pax table without
-- that is refused when it is created or altered.
CREATE FUNCTION pax_check_publication()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'pax_check_publication'
LANGUAGE C;

CREATE EVENT TRIGGER pax_publication_guard ON ddl_command_end
	WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION')
	EXECUTE FUNCTION pax_check_publication();

-- Shared scans (flashscan.shared_scans): the scan hub's counters and cache,
-- and the scans registered with it.
CREATE FUNCTION flashscan_shared_scan_stats(
	OUT pusher_pid integer,
	OUT scans_registered bigint,
	OUT units bigint,
	OUT units_wanted bigint,
	OUT units_pinned bigint,
	OUT blocks_pinned bigint,
	OUT cache_blocks bigint,
	OUT registrations bigint,
	OUT registrations_refused bigint,
	OUT units_read bigint,
	OUT blocks_read bigint,
	OUT blocks_preread bigint,
	OUT units_evicted bigint,
	OUT groups_from_stream bigint,
	OUT groups_read_alone bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'flashscan_shared_scan_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION flashscan_shared_scan_stats() IS
'the shared scans'' hub: registered scans, groups (units) tracked, wanted and pinned, and what was read, read ahead with io_uring, evicted while still wanted, and delivered since the server started';

CREATE FUNCTION flashscan_shared_scan_registrations(
	OUT pid integer,
	OUT database oid,
	OUT relfilenode oid,
	OUT groups integer,
	OUT delivered integer,
	OUT from_stream integer,
	OUT read_alone integer,
	OUT io_depth integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flashscan_shared_scan_registrations'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION flashscan_shared_scan_registrations() IS
'one row per FlashScan registered with the shared scans'' hub: its groups, how many it has taken, from the shared stream or read alone, and the reads in flight the pusher keeps for them';

CREATE VIEW flashscan_shared_scans AS
	SELECT r.pid, r.database, c.oid::regclass AS relation, r.groups, r.delivered,
		   r.from_stream, r.read_alone, r.io_depth
	FROM flashscan_shared_scan_registrations() r
	LEFT JOIN pg_class c ON c.relfilenode = r.relfilenode AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database());
