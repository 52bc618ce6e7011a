--
-- flashscan_shared: shared scans (flashscan.shared_scans).  FlashScans of a
-- pax table register with the scan hub and take their groups from the
-- pusher's stream, in any order; every row is returned once, as heap
-- returns it, whatever the order.
--
CREATE EXTENSION flashscan;
SET flashscan.group_blocks = 4;
CREATE TABLE sh (id int, k int, v float8, t text, pad text);
INSERT INTO sh SELECT g, g % 101, g * 0.25, 't' || (g % 777), repeat('p', 50)
FROM generate_series(1, 60000) g;
CREATE TABLE sp (LIKE sh) USING pax;
INSERT INTO sp SELECT * FROM sh;
DELETE FROM sh WHERE id % 17 = 0;
DELETE FROM sp WHERE id % 17 = 0;
UPDATE sh SET v = -v WHERE id % 23 = 0;
UPDATE sp SET v = -v WHERE id % 23 = 0;
INSERT INTO sh VALUES (60001, 1, 1, 'single', 'row');
INSERT INTO sp VALUES (60001, 1, 1, 'single', 'row');	-- a delta page
ANALYZE sh, sp;

SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;		-- FlashScan wherever it can run
SET flashscan.shared_scans = on;

SELECT pusher_pid IS NOT NULL AS pusher_running FROM flashscan_shared_scan_stats();
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM sp WHERE k < 50;
SELECT count(*), sum(v), sum(id) FROM sp WHERE k < 50;
SELECT count(*), sum(v), sum(id) FROM sh WHERE k < 50;
SELECT count(*), sum(length(t)) FROM sp;
SELECT count(*), sum(length(t)) FROM sh;
-- every row once, whatever order the groups came in
SELECT count(*) FROM ((SELECT id, v, t FROM sp WHERE k % 3 = 0 EXCEPT ALL SELECT id, v, t FROM sh WHERE k % 3 = 0)
	UNION ALL (SELECT id, v, t FROM sh WHERE k % 3 = 0 EXCEPT ALL SELECT id, v, t FROM sp WHERE k % 3 = 0)) d;

-- EXPLAIN ANALYZE: each group came from the stream or was read alone
CREATE FUNCTION shared_counts(q text) RETURNS TABLE (delivered_all boolean, delivered_some boolean)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
	n json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF) ' || q INTO plan;
	n := plan->0->'Plan';
	WHILE n->>'Node Type' <> 'Custom Scan' LOOP
		n := n->'Plans'->0;
	END LOOP;
	delivered_all := (n->>'Groups From Shared Stream')::int + (n->>'Groups Read Alone')::int =
		(n->>'Groups Scanned')::int + (n->>'Groups Not Visible')::int;
	-- (from the stream, or alone where the pusher stalled on a busy machine)
	delivered_some := (n->>'Groups From Shared Stream')::int + (n->>'Groups Read Alone')::int > 0;
	RETURN NEXT;
END $$;
SELECT * FROM shared_counts('SELECT sum(v) FROM sp WHERE k < 10');

-- a cursor that stops half way holds its registration until it closes
BEGIN;
DECLARE c NO SCROLL CURSOR FOR SELECT id, v FROM sp WHERE k < 50;
MOVE FORWARD 1000 IN c;
SELECT r.groups > 0 AS registered, r.delivered > 0 AS delivering
FROM flashscan_shared_scans r WHERE r.relation = 'sp'::regclass;
MOVE FORWARD ALL IN c;
CLOSE c;
SELECT count(*) FROM flashscan_shared_scans;
COMMIT;
-- a scrollable cursor reads in group order, alone
BEGIN;
DECLARE s SCROLL CURSOR FOR SELECT id FROM sp WHERE k = 7;
FETCH 2 FROM s;
FETCH BACKWARD 1 FROM s;
CLOSE s;
COMMIT;

-- an error in a subtransaction unregisters its scan; the next one works
BEGIN;
SAVEPOINT a;
SELECT count(*) FROM sp WHERE 1 / (id - 30000) > 5 AND k < 90;
ROLLBACK TO a;
SELECT count(*) FROM flashscan_shared_scans;
SELECT count(*), sum(v) FROM sp WHERE k < 50;
COMMIT;
-- a cursor opened outside a subtransaction goes on after ROLLBACK TO
CREATE FUNCTION rows_left(c refcursor) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n bigint := 0;
BEGIN
	LOOP
		FETCH c INTO r;
		EXIT WHEN NOT FOUND;
		n := n + 1;
	END LOOP;
	RETURN n;
END $$;
BEGIN;
DECLARE c2 NO SCROLL CURSOR FOR SELECT id FROM sp WHERE k < 50;
SAVEPOINT b;
MOVE FORWARD 10 IN c2;
ROLLBACK TO b;
SELECT count(*) AS still_registered FROM flashscan_shared_scans;
SELECT rows_left('c2');		-- 27960 - 10
COMMIT;
-- the same in PL/pgSQL: the first FETCH inside a block that fails
CREATE FUNCTION fetch_across_exception() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
BEGIN
	OPEN c NO SCROLL FOR SELECT id FROM sp WHERE k < 50;
	BEGIN
		FETCH c INTO r;
		RAISE EXCEPTION 'rolled back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	RETURN 1 + rows_left(c);
END $$;
SELECT fetch_across_exception();
-- a column added later has no block in the old groups
ALTER TABLE sp ADD COLUMN z int;
SELECT count(z), count(*) FROM sp;
ALTER TABLE sp DROP COLUMN z;
-- the hub keeps nothing once no scan is registered
SELECT scans_registered, units, blocks_pinned FROM flashscan_shared_scan_stats();

-- Parallel FlashScan: the query registers once, and its participants take
-- groups from that one registration
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM sp WHERE k < 50;
SELECT registrations AS regs_before FROM flashscan_shared_scan_stats() \gset
SELECT count(*), sum(v), sum(id) FROM sp WHERE k < 50;
SELECT registrations - :regs_before AS registrations_made FROM flashscan_shared_scan_stats();
SET parallel_leader_participation = off;
SELECT count(*), sum(v), sum(id) FROM sp WHERE k < 50;
RESET parallel_leader_participation;
-- a Gather rescanned under a nested loop: each loop registers anew
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
CREATE TEMP TABLE loops AS SELECT g FROM generate_series(1, 3) g;
ANALYZE loops;
EXPLAIN (COSTS OFF) SELECT count(*), sum(sp.v) FROM loops, sp WHERE sp.id % 1000 = loops.g;
SELECT registrations AS regs_before FROM flashscan_shared_scan_stats() \gset
SELECT count(*), sum(sp.v) FROM loops, sp WHERE sp.id % 1000 = loops.g;
SELECT registrations - :regs_before AS registrations_made FROM flashscan_shared_scan_stats();
SELECT count(*), sum(sh.v) FROM loops, sh WHERE sh.id % 1000 = loops.g;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SELECT count(*) FROM ((SELECT id, v, t FROM sp WHERE k % 5 = 0 EXCEPT ALL SELECT id, v, t FROM sh WHERE k % 5 = 0)
	UNION ALL (SELECT id, v, t FROM sh WHERE k % 5 = 0 EXCEPT ALL SELECT id, v, t FROM sp WHERE k % 5 = 0)) d;
SELECT * FROM shared_counts('SELECT sum(v) FROM sp WHERE k < 10');
SET max_parallel_workers_per_gather = 0;

-- a rescanned FlashScan (inner side of a nested loop) registers again
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*), sum(sp.v) FROM (VALUES (1), (2), (3)) x(n) JOIN sp ON sp.k = x.n;
SELECT count(*), sum(sh.v) FROM (VALUES (1), (2), (3)) x(n) JOIN sh ON sh.k = x.n;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- where the hub does not serve, EXPLAIN says why
CREATE TEMP TABLE stemp (a int, b int) USING pax;
INSERT INTO stemp SELECT g, g FROM generate_series(1, 1000) g;
EXPLAIN (COSTS OFF) SELECT sum(a) FROM stemp WHERE b > 10;
SELECT sum(a) FROM stemp WHERE b > 10;
SET flashscan.shared_scans = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM sp WHERE k < 50;

-- settings
SET flashscan.shared_scan_window = 0;
SET flashscan.shared_scan_window = 65;
SET flashscan.shared_scan_io_depth = 8;	-- the pusher's: a server setting
SELECT count(*) FROM flashscan_shared_scans;

RESET ALL;
DROP FUNCTION shared_counts(text), fetch_across_exception(), rows_left(refcursor);
DROP TABLE sh, sp, stemp, loops;
DROP EXTENSION flashscan;
