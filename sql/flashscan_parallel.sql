--
-- flashscan_parallel: Parallel FlashScan.  Workers and the leader claim
-- groups by row number; every row is returned once, as heap returns it.
--
CREATE EXTENSION flashscan;
SET flashscan.group_blocks = 4;
CREATE TABLE ph (id int, k int, v float8, t text, pad text);
INSERT INTO ph SELECT g, g % 101, g * 0.25, 't' || (g % 777), repeat('p', 50)
FROM generate_series(1, 60000) g;
CREATE TABLE pp (LIKE ph) USING pax;
INSERT INTO pp SELECT * FROM ph;
DELETE FROM ph WHERE id % 17 = 0;
DELETE FROM pp WHERE id % 17 = 0;
UPDATE ph SET v = -v WHERE id % 23 = 0;
UPDATE pp SET v = -v WHERE id % 23 = 0;
VACUUM ANALYZE ph, pp;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_seqscan = off;		-- FlashScan wherever it can run

EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM pp WHERE k < 50;
SELECT count(*), sum(v), sum(id) FROM pp WHERE k < 50;
SELECT count(*), sum(v), sum(id) FROM ph WHERE k < 50;
SELECT count(*), sum(length(t)) FROM pp;
SELECT count(*), sum(length(t)) FROM ph;
-- rows gathered, each once
SELECT count(*) FROM ((SELECT id, v, t FROM pp WHERE k % 3 = 0 EXCEPT ALL SELECT id, v, t FROM ph WHERE k % 3 = 0)
	UNION ALL (SELECT id, v, t FROM ph WHERE k % 3 = 0 EXCEPT ALL SELECT id, v, t FROM pp WHERE k % 3 = 0)) d;
-- a parallel join and grouping
SELECT k, count(*), round(sum(v)::numeric, 2) FROM pp WHERE id > 100 GROUP BY k ORDER BY k LIMIT 5;
SELECT k, count(*), round(sum(v)::numeric, 2) FROM ph WHERE id > 100 GROUP BY k ORDER BY k LIMIT 5;
-- the Gather rescanned for each outer row: each rescan claims from zero
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT x.g, count(*) FROM generate_series(1, 3) x(g), pp WHERE pp.k < 10 AND x.g > 0 GROUP BY x.g;
SELECT x.g, count(*) FROM generate_series(1, 3) x(g), pp WHERE pp.k < 10 AND x.g > 0 GROUP BY x.g ORDER BY 1;
SELECT x.g, count(*) FROM generate_series(1, 3) x(g), ph WHERE ph.k < 10 AND x.g > 0 GROUP BY x.g ORDER BY 1;
RESET enable_material; RESET enable_hashjoin; RESET enable_mergejoin;
-- force_parallel_mode: the whole query in one worker
SET force_parallel_mode = on;
SELECT count(*), sum(id) FROM pp WHERE t = 't5';
SELECT count(*), sum(id) FROM ph WHERE t = 't5';
RESET ALL;
DROP TABLE ph, pp;
DROP EXTENSION flashscan;
