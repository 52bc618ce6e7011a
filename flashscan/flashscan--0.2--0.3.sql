/* flashscan/flashscan--0.2--0.3.sql */

\echo Use "ALTER EXTENSION flashscan UPDATE TO '0.3'" to load this file. \quit

-- 0.3 adds the shared scans' functions and view; the release's other
-- changes are in the library.

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
