--
-- flashscan_aggregate: FlashScan Aggregate computes count, sum and avg over
-- a FlashScan in 128-bit decimals.  Every answer must be heap's, to the
-- last digit and display scale, in serial and in parallel plans, and the
-- errors PostgreSQL raises must still be raised.
--
CREATE EXTENSION IF NOT EXISTS flashscan;
SET flashscan.group_blocks = 4;
CREATE TABLE agh (id int, g int, flag char(2), k text, nk numeric,
				  q numeric(15,2), d numeric(15,2), n numeric,
				  s int2, i int4, b int8);
INSERT INTO agh
SELECT x, x % 5,
	   CASE WHEN x % 3 = 0 THEN 'A' ELSE 'B ' END,		-- char(2): 'A' and 'A ' are equal
	   CASE WHEN x % 11 = 0 THEN NULL ELSE 'k' || (x % 4) END,
	   CASE x % 3 WHEN 0 THEN 1.0 WHEN 1 THEN 1.00 ELSE 2 END,	-- equal keys, other bytes
	   (x % 97) + 0.25, ((x % 10) / 100.0)::numeric(15,2),
	   CASE WHEN x % 1009 = 0 THEN NULL
			WHEN x % 501 = 0 THEN x::numeric / 7				-- 16-digit fractions
			WHEN x % 707 = 0 THEN 123456789012345678901234567890.5	-- past 64 bits
			ELSE x::numeric / 8 END,
	   (x % 300)::int2, x, x::int8 * 1000003
FROM generate_series(1, 30000) x;
CREATE TABLE agp (LIKE agh) USING pax;
INSERT INTO agp SELECT * FROM agh;
ANALYZE agh, agp;

-- Same rows, compared as text (display scale included), both ways.
CREATE FUNCTION agg_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	missing bigint;
	extra bigint;
	used bool := false;
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, 'TBL', 'agp') LOOP
		used := used OR line LIKE '%FlashScan%Aggregate%';
	END LOOP;
	EXECUTE format('SELECT count(*) FROM (SELECT r::text FROM (%s) r EXCEPT ALL SELECT r::text FROM (%s) r) x',
				   replace(q, 'TBL', 'agh'), replace(q, 'TBL', 'agp')) INTO missing;
	EXECUTE format('SELECT count(*) FROM (SELECT r::text FROM (%s) r EXCEPT ALL SELECT r::text FROM (%s) r) x',
				   replace(q, 'TBL', 'agp'), replace(q, 'TBL', 'agh')) INTO extra;
	RETURN CASE WHEN missing = 0 AND extra = 0 THEN 'same' ELSE format('DIFFERENT: %s missing, %s extra', missing, extra) END
		|| CASE WHEN used THEN '' ELSE ' (not FlashScan Aggregate)' END;
END $$;

CREATE TABLE agg_queries (q text);
INSERT INTO agg_queries VALUES
  ('SELECT g, flag, sum(q), avg(q), sum(q * (1 - d)), sum(q * (1 - d) * (1 + d)), avg(d), count(*) FROM TBL WHERE id > 10 GROUP BY g, flag'),
  ('SELECT k, count(k), count(*), sum(-q), avg(-d), sum(n), avg(n), count(n) FROM TBL GROUP BY k'),
  ('SELECT nk, count(*), sum(q) FROM TBL GROUP BY nk'),
  ('SELECT flag, count(*), sum(n * q), sum(n * n) FROM TBL GROUP BY flag'),
  ('SELECT g, sum(s), avg(s), sum(i), avg(i), sum(b), avg(b), sum(i * 2), sum(b * 3), sum(i::numeric * 5) FROM TBL GROUP BY g'),
  ('SELECT sum(q * 100000000000000000000), sum(q * q * q * q * q * q * q * q) FROM TBL'),
  ('SELECT count(*), sum(q), avg(n) FROM TBL WHERE id < 0'),
  ('SELECT g, count(*) FROM TBL WHERE id < 0 GROUP BY g'),
  ('SELECT g + 1, sum(q) / count(*), avg(q) * 2 FROM TBL GROUP BY g + 1'),
  ('SELECT g, sum(q) FROM TBL GROUP BY g HAVING count(*) > 5999'),
  ('SELECT g, sum(q) FROM TBL GROUP BY g HAVING avg(d) > 0.045'),
  ('SELECT id / 1000, sum(q), count(k) FROM TBL GROUP BY id / 1000');

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT agg_same(q), q FROM agg_queries;
EXPLAIN (COSTS OFF)
SELECT g, flag, sum(q), avg(d), count(*) FROM agp WHERE id > 10 GROUP BY g, flag ORDER BY g, flag;
SELECT g, flag, sum(q), avg(d), count(*) FROM agp WHERE id > 10 GROUP BY g, flag ORDER BY g, flag;

-- parallel: partial per participant, combined above the Gather
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT agg_same(q), q FROM agg_queries;
EXPLAIN (COSTS OFF)
SELECT g, flag, sum(q), avg(d), count(*) FROM agp WHERE id > 10 GROUP BY g, flag ORDER BY g, flag;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- numeric NaN and infinities are PostgreSQL's to add up
CREATE TABLE agsh (g int, n numeric);
INSERT INTO agsh VALUES (1, 1.5), (1, 'NaN'), (2, 'Infinity'), (2, 2), (3, 'Infinity'),
	(3, '-Infinity'), (4, NULL), (5, 1e-20), (5, 99999999999999999999999999999999999999);
CREATE TABLE ags USING pax AS SELECT * FROM agsh;
ANALYZE ags, agsh;
EXPLAIN (COSTS OFF) SELECT g, sum(n), avg(n), count(n), count(*) FROM ags GROUP BY g;
SELECT g, sum(n), avg(n), count(n), count(*) FROM ags GROUP BY g ORDER BY g;
SELECT count(*) AS differ FROM (
	(SELECT g, sum(n)::text, avg(n)::text, count(n), count(*) FROM ags GROUP BY g
	 EXCEPT ALL SELECT g, sum(n)::text, avg(n)::text, count(n), count(*) FROM agsh GROUP BY g)
	UNION ALL
	(SELECT g, sum(n)::text, avg(n)::text, count(n), count(*) FROM agsh GROUP BY g
	 EXCEPT ALL SELECT g, sum(n)::text, avg(n)::text, count(n), count(*) FROM ags GROUP BY g)) x;
-- a plain aggregate over no rows is one row
SELECT count(*), sum(q), avg(n) FROM agp WHERE id % 7 = 10;

-- integer operators keep their errors; sum(int4) stays a bigint
SELECT sum(i * 100000) FROM agp;
SELECT sum(b * b) FROM agp;
SELECT sum(i), pg_typeof(sum(i)), pg_typeof(sum(b)), pg_typeof(avg(s)) FROM agp;
-- a null operand does not spare the operators beside it their errors
CREATE TABLE agn (x int4, y int4, z int4) USING pax;
INSERT INTO agn VALUES (100000, 100000, NULL);
SELECT sum(z + x * y) FROM agn;
SELECT count(z * (x * y)) FROM agn;
SELECT sum(z + x), count(z * x), sum(z::numeric * 2) FROM agn;
DROP TABLE agn;

-- what it does not take goes to PostgreSQL's own aggregation
EXPLAIN (COSTS OFF) SELECT g, sum(DISTINCT q) FROM agp GROUP BY g;
EXPLAIN (COSTS OFF) SELECT g, max(q), sum(q) FROM agp GROUP BY g;
EXPLAIN (COSTS OFF) SELECT g, sum(q) FILTER (WHERE g > 2) FROM agp GROUP BY g;
EXPLAIN (COSTS OFF) SELECT sum(q / 3) FROM agp;
EXPLAIN (COSTS OFF) SELECT g, sum(q) FROM agp GROUP BY ROLLUP (g);
SET flashscan.enable_aggregate = off;
EXPLAIN (COSTS OFF) SELECT g, sum(q) FROM agp GROUP BY g;
RESET flashscan.enable_aggregate;

-- rescans: a correlated subquery and LATERAL, parameters changing (g = 5
-- matches no row: one row of count 0)
EXPLAIN (COSTS OFF) SELECT o.x, s.* FROM generate_series(0, 5) o(x),
	LATERAL (SELECT count(*), sum(q), avg(d) FROM agp WHERE g = o.x) s ORDER BY 1;
SELECT o.x, s.* FROM generate_series(0, 5) o(x),
	LATERAL (SELECT count(*), sum(q), avg(d) FROM agp WHERE g = o.x) s ORDER BY 1;
SELECT o.x, (SELECT sum(q) FROM agp WHERE g = o.x AND id > o.x * 1000) FROM generate_series(0, 3) o(x);

-- a scrollable cursor reads the groups backward too
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT g, sum(q) FROM agp WHERE g < 3 GROUP BY g;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
COMMIT;

-- the table changing under a prepared statement
PREPARE p AS SELECT g, count(*), sum(q) FROM agp WHERE g < 2 GROUP BY g ORDER BY g;
EXECUTE p;
DELETE FROM agp WHERE id % 2 = 0 AND g = 1;
UPDATE agp SET q = q + 1 WHERE g = 0;
EXECUTE p;

DROP TABLE agh, agp, ags, agsh, agg_queries;
DROP FUNCTION agg_same(text);
