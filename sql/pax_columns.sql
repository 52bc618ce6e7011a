--
-- pax_columns: the plain Seq Scan, Index Scan, Index-Only Scan and Bitmap
-- Heap Scan of a pax table read only the columns their plan node uses, and
-- return what heap returns.
--
CREATE EXTENSION flashscan;
SET flashscan.enable = off;			-- the access method's own scans
SET max_parallel_workers_per_gather = 0;
SET flashscan.group_blocks = 4;

CREATE TABLE ch (id int, a int, b text, c text, d float8, e text);
INSERT INTO ch SELECT g, g % 97, repeat('b', 40) || g, repeat('c', 60) || g, g * 0.5,
	   CASE WHEN g % 5 = 0 THEN NULL ELSE repeat('e', 80) END
FROM generate_series(1, 20000) g;
CREATE TABLE cp (LIKE ch) USING pax;
INSERT INTO cp SELECT * FROM ch;
CREATE INDEX ON ch (id);
CREATE INDEX ON cp (id);
VACUUM ANALYZE ch, cp;

-- shared buffers a query touches (hit or read)
CREATE FUNCTION touched(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint +
		   (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END
$$;

-- rows of q on pax and, with cp replaced by ch, on heap: same?
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	d bigint;
	h text := replace(q, ' cp', ' ch');
BEGIN
	EXECUTE format('SELECT count(*) FROM (%s) s', q) INTO n;
	EXECUTE format('SELECT count(*) FROM (((%s) EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL (%s))) x',
				   q, h, h, q) INTO d;
	RETURN format('%s rows, %s differ', n, d);
END
$$;

-- a Seq Scan reads the minipages of the columns it uses
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT touched('SELECT sum(a) FROM cp') * 3 < touched('SELECT count(b), count(c), count(e) FROM cp')
	AS seq_reads_fewer;
SELECT same('SELECT sum(a), max(d) FROM cp');
SELECT same('SELECT id, b FROM cp WHERE a = 7');
SELECT same('SELECT cp::text FROM cp WHERE a < 3');
SELECT same('SELECT cp.* FROM cp WHERE d > 9990');
SELECT same('SELECT ctid IS NOT NULL, tableoid <> 0, id FROM cp WHERE id % 1000 = 0');
-- an Index Scan fetches only what it uses
SET enable_seqscan = off;
SELECT touched('SELECT a FROM cp WHERE id BETWEEN 100 AND 5000') <
	   touched('SELECT b, c, e FROM cp WHERE id BETWEEN 100 AND 5000') AS index_reads_fewer;
SELECT same('SELECT a FROM cp WHERE id BETWEEN 100 AND 5000');
SELECT same('SELECT id, e FROM cp WHERE id < 300 ORDER BY id DESC');
SELECT same('SELECT cp::text FROM cp WHERE id IN (5, 50, 500, 5000)');
SELECT same('SELECT x.id, y.b FROM generate_series(1, 50) x(id), LATERAL (SELECT b FROM cp WHERE cp.id = x.id * 7) y');
-- probes that come back to groups they met: the minipages' headers, null
-- bits and stride indexes are kept per fetch, so the values must still be
-- each row's own, column by column, in every group
SELECT same('SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT a, b, d, e FROM cp WHERE cp.id = (x.i * 7919) % 20000 + 1) y');
SELECT same('SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT e, id FROM cp WHERE cp.id = (x.i * 13) % 20000 + 1) y');
-- the same probes with a prefix cache of a few kilobytes (hash_mem): it
-- fills, refuses newcomers, and starts again once the probes have moved on
-- (in the table's order, the last query); OFFSET 0 keeps each
-- probe a run of its own
SET work_mem = '128kB'; SET hash_mem_multiplier = 1;
EXPLAIN (COSTS OFF)
SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT a, b, d, e FROM cp WHERE cp.id = (x.i * 7919) % 20000 + 1 OFFSET 0) y;
SELECT same('SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT a, b, d, e FROM cp WHERE cp.id = (x.i * 7919) % 20000 + 1 OFFSET 0) y');
SELECT same('SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT e, id FROM cp WHERE cp.id = (x.i * 13) % 20000 + 1 OFFSET 0) y');
SELECT same('SELECT x.i, y.* FROM generate_series(1, 6000) x(i), LATERAL (SELECT a, b, d, e FROM cp WHERE cp.id IN (x.i * 3, x.i * 3 + 1) OFFSET 0) y');
-- and with a hash_mem of 64 kB, about what the empty cache itself takes
SET work_mem = '64kB';
SELECT same('SELECT x.i, y.* FROM generate_series(1, 3000) x(i), LATERAL (SELECT a, b, d, e FROM cp WHERE cp.id = (x.i * 7919) % 20000 + 1 OFFSET 0) y');
RESET work_mem; RESET hash_mem_multiplier;
-- the inner side of EXISTS reads none of its columns but its quals' (an
-- empty set of columns is not "every column")
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
SET enable_indexonlyscan = off; SET enable_hashagg = off; SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM ch WHERE ch.id % 50 = 0 AND EXISTS (SELECT 1 FROM cp WHERE cp.id = ch.id);
SELECT touched('SELECT count(*) FROM ch WHERE ch.id % 50 = 0 AND EXISTS (SELECT 1 FROM cp WHERE cp.id = ch.id)') * 2 <
	   touched('SELECT count(*) FROM ch WHERE ch.id % 50 = 0 AND EXISTS (SELECT 1 FROM cp WHERE cp.id = ch.id AND cp.b || cp.c || cp.e IS NOT NULL)')
	AS exists_reads_fewer;
-- a merge join whose pax side is only counted, and a join that reads only
-- the pax rows' system columns (DELETE ... USING)
SET enable_nestloop = off; SET enable_mergejoin = on; SET enable_sort = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ch x JOIN cp ON cp.id = x.id WHERE x.id % 7 = 0;
SELECT (SELECT count(*) FROM ch x JOIN cp ON cp.id = x.id WHERE x.id % 7 = 0) =
	   (SELECT count(*) FROM ch WHERE id % 7 = 0) AS merge_join_counts_right;
RESET enable_nestloop;
BEGIN;
WITH d AS (DELETE FROM cp USING ch WHERE cp.id = ch.id AND ch.id % 1000 = 3
		   RETURNING cp.id, cp.a, cp.ctid IS NOT NULL AS has_tid)
SELECT count(*), sum(id), sum(a), bool_and(has_tid) FROM d;
SELECT count(*) FROM cp WHERE id % 1000 = 3;
ROLLBACK;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material; RESET enable_indexonlyscan;
RESET enable_hashagg; RESET enable_sort;
SELECT same('SELECT g FROM generate_series(1, 400) g WHERE EXISTS (SELECT 1 FROM cp WHERE cp.id = g * 37)');
SELECT same('SELECT g FROM generate_series(1, 400) g WHERE EXISTS (SELECT 1 FROM cp WHERE cp.id = g * 37 AND cp.e IS NOT NULL)');
SELECT same('SELECT g FROM generate_series(1, 400) g WHERE NOT EXISTS (SELECT 1 FROM cp WHERE cp.id = g * 37 AND cp.d > 5000)');
SELECT same('SELECT count(*) FROM generate_series(1, 30) g, cp WHERE cp.id = g');
-- a point query's one row too (it comes from the scan's first call), and
-- without the key's column: btree's matches need no recheck on the row
SELECT touched('SELECT a FROM cp WHERE id = 777') < touched('SELECT b, c, e FROM cp WHERE id = 777')
	AS point_reads_fewer;
CREATE INDEX cp_c ON cp (c);
SELECT touched($$SELECT a FROM cp WHERE c = repeat('c', 60) || '777'$$) <
	   touched($$SELECT a, c FROM cp WHERE c = repeat('c', 60) || '777'$$) AS point_skips_key;
DROP INDEX cp_c;
SELECT same('SELECT a FROM cp WHERE id = 777');
SELECT same('SELECT a, e FROM cp WHERE id = (SELECT 15555)');
SELECT same('SELECT b FROM cp WHERE id = ANY (ARRAY(SELECT g * 3 FROM generate_series(1, 9) g))');
-- a hash index rechecks its quals on the row: the key's column is read
CREATE INDEX cp_id_hash ON cp USING hash (id);
CREATE INDEX ch_id_hash ON ch USING hash (id);
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT a FROM cp WHERE id = 777;
SELECT same('SELECT a FROM cp WHERE id = 777');
SELECT same('SELECT x.id, y.a FROM generate_series(1, 50) x(id), LATERAL (SELECT a FROM cp WHERE cp.id = x.id * 7) y');
RESET enable_bitmapscan;
DROP INDEX cp_id_hash, ch_id_hash;
-- a Limit WITH TIES over an index scan compares the ORDER BY column, which
-- the join above does not read
CREATE TABLE tie (id int, grp int) USING pax;
INSERT INTO tie SELECT i, i / 100 FROM generate_series(1, 10000) i;
CREATE INDEX ON tie (grp);
CREATE TABLE single (x int);
INSERT INTO single VALUES (1);
ANALYZE tie, single;
EXPLAIN (COSTS OFF)
SELECT t.id FROM (SELECT id, grp FROM tie ORDER BY grp FETCH FIRST 1 ROW WITH TIES) t, single;
SELECT count(*), sum(id) FROM
	(SELECT t.id FROM (SELECT id, grp FROM tie ORDER BY grp FETCH FIRST 1 ROW WITH TIES) t, single) s;
DROP TABLE tie, single;
-- Bitmap Heap Scans too
SET enable_indexscan = off; SET enable_bitmapscan = on;
SELECT same('SELECT c, d FROM cp WHERE id < 900 OR id > 19900');
SELECT same('SELECT cp::text FROM cp WHERE id < 30');
RESET enable_indexscan;
-- a scrollable cursor over an index scan, both ways
SET enable_bitmapscan = off;
BEGIN;
DECLARE k SCROLL CURSOR FOR SELECT id, c FROM cp WHERE id BETWEEN 10 AND 20 ORDER BY id;
FETCH 3 FROM k;
FETCH BACKWARD 2 FROM k;
FETCH LAST FROM k;
COMMIT;

-- writes through index scans: the rows are re-read whole
UPDATE cp SET a = a + 1000 WHERE id BETWEEN 10 AND 30;
UPDATE ch SET a = a + 1000 WHERE id BETWEEN 10 AND 30;
UPDATE cp SET e = 'changed' WHERE id = 40 RETURNING id, a, b, c, d, e;
UPDATE ch SET e = 'changed' WHERE id = 40;
DELETE FROM cp WHERE id BETWEEN 41 AND 45;
DELETE FROM ch WHERE id BETWEEN 41 AND 45;
SELECT id, b FROM cp WHERE id BETWEEN 44 AND 47 FOR UPDATE;
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT same('SELECT * FROM cp');
-- a parallel Seq Scan
RESET max_parallel_workers_per_gather;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT same('SELECT a, count(*), max(c) FROM cp GROUP BY a');
RESET ALL;

-- ANALYZE learns each column's correlation with the table's order as on
-- heap (a sample smaller than the table is sorted by TID), so an index
-- range scan over rows stored in key order is priced as one (within 1.2-2.2x
-- of heap's cost across samples; 10-15x when pax columns read as
-- uncorrelated)
SET default_statistics_target = 10;
ANALYZE ch, cp;
-- (a, cycling every 97 rows, reads as uncorrelated: near 0 but not exactly,
-- the sample is random; id a little below 1 on pax when the sample holds
-- rows the UPDATEs above moved to the end)
SELECT tablename, attname,
	   CASE WHEN correlation > 0.9 THEN 'ordered'
			WHEN abs(correlation) < 0.5 THEN 'uncorrelated'
			ELSE correlation::text END AS correlation
FROM pg_stats WHERE tablename IN ('ch', 'cp') AND attname IN ('id', 'a') ORDER BY 1, 2;
RESET default_statistics_target;
CREATE FUNCTION plan_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END
$$;
SET enable_bitmapscan = off; SET enable_seqscan = off;
SELECT plan_cost('SELECT b FROM cp WHERE id BETWEEN 5000 AND 5500') <
	   4 * plan_cost('SELECT b FROM ch WHERE id BETWEEN 5000 AND 5500') AS range_priced_like_heap;
-- rows fetched in the table's order cost a decode per group, not a lone
-- fetch each: a long range over the loading order is priced, against the
-- same number of rows scattered (a column uncorrelated with the order), as
-- heap's prices say (0.40 and heap's 0.42; 0.67 when each row was priced as
-- a lone fetch)
SET flashscan.enable = off;
SET flashscan.group_blocks = 4;
CREATE TABLE oh (id int, r int, b text);
INSERT INTO oh SELECT g, (g * 7919) % 20011, repeat('b', 40) || g FROM generate_series(1, 20000) g;
CREATE TABLE op (LIKE oh) USING pax;
INSERT INTO op SELECT * FROM oh;
CREATE INDEX ON oh (id); CREATE INDEX ON oh (r);
CREATE INDEX ON op (id); CREATE INDEX ON op (r);
ANALYZE oh, op;
SELECT plan_cost('SELECT b FROM op WHERE id BETWEEN 2000 AND 14000') /
	   plan_cost('SELECT b FROM op WHERE r BETWEEN 2000 AND 14000') <=
	   1.25 * plan_cost('SELECT b FROM oh WHERE id BETWEEN 2000 AND 14000') /
	   plan_cost('SELECT b FROM oh WHERE r BETWEEN 2000 AND 14000') AS ordered_range_priced_as_heap;
-- and such a range reads only its needed minipages in order, where heap
-- reads every page: one narrow column is priced below heap's pages
SELECT plan_cost('SELECT r FROM op WHERE id BETWEEN 2000 AND 14000') <
	   plan_cost('SELECT r FROM oh WHERE id BETWEEN 2000 AND 14000') AS ordered_narrow_range_reads_less;
DROP TABLE oh, op;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- Selection first: an Index Scan or Bitmap Heap Scan of pax tests its
-- filter's columns before it reads the others, and only for rows that pass
-- reads those.  The rows, the errors and the counts are heap's.
SET flashscan.enable = off; SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off;
CREATE INDEX ch_a ON ch (a); CREATE INDEX cp_a ON cp (a);
ANALYZE ch, cp;
CREATE FUNCTION removed(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Node Type') || ', ' ||
		   (plan -> 0 -> 'Plan' ->> 'Actual Rows') || ' rows, ' ||
		   (plan -> 0 -> 'Plan' ->> 'Rows Removed by Filter') || ' removed';
END
$$;
SET flashscan.fetch_selection_first = off;
SELECT touched('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') AS unfiltered_reads \gset
SELECT removed('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') AS unfiltered_counts \gset
RESET flashscan.fetch_selection_first;
SELECT touched('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') * 2 < :unfiltered_reads
	AS filter_reads_fewer;
SELECT removed('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') AS counts,
	   removed('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') = :'unfiltered_counts'
	   AS counts_as_without;
SELECT same('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000');
-- and the planner prices the fetch so: the rows the filter drops cost
-- their filter columns alone
SET flashscan.fetch_selection_first = off;
SELECT plan_cost('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') AS unfiltered_cost \gset
RESET flashscan.fetch_selection_first;
SELECT plan_cost('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') < :unfiltered_cost
	AS filter_priced;
-- but not where a clause is one the fetch leaves to the node (a user's
-- function): those rows are read whole
CREATE FUNCTION high(float8) RETURNS bool LANGUAGE plpgsql IMMUTABLE
	AS $$ BEGIN RETURN $1 > 9000; END $$;
SET flashscan.fetch_selection_first = off;
SELECT plan_cost('SELECT b, c, e FROM cp WHERE a = 7 AND high(d)') AS unfiltered_cost \gset
RESET flashscan.fetch_selection_first;
SELECT plan_cost('SELECT b, c, e FROM cp WHERE a = 7 AND high(d)') = :unfiltered_cost
	AS left_to_node_priced_whole;
DROP FUNCTION high(float8);
-- two stages (each clause needing a column of its own), NULLs, a filter
-- that passes every row (it stops testing early), a volatile clause (not
-- run early)
SELECT same('SELECT id, b FROM cp WHERE a = 7 AND e IS NULL AND b LIKE ''%5''');
SELECT same('SELECT id, c FROM cp WHERE a < 40 AND d > 0');
SELECT same('SELECT id FROM cp WHERE a = 7 AND random() < 2 AND d > 9000');
-- a function a user defined is left to the node: each row calls it once
CREATE FUNCTION noisy(float8) RETURNS bool LANGUAGE plpgsql STABLE
	AS $$ BEGIN RAISE NOTICE 'noisy(%)', $1; RETURN $1 > 9950; END $$;
SELECT id FROM cp WHERE a = 7 AND d > 9900 AND noisy(d) ORDER BY id;
DROP FUNCTION noisy(float8);
-- the filter's parameters change with each outer row
SELECT same('SELECT x.i, y.* FROM generate_series(0, 96) x(i), LATERAL (SELECT id, c FROM cp WHERE cp.a = x.i AND cp.d > x.i * 100) y');
-- a clause that would fail runs only on rows the clauses before it passed
SELECT count(*) FROM cp WHERE a = 7 AND d > 1e9 AND 1 / (a - 7) > 0;
SELECT count(*) FROM cp WHERE a = 7 AND 1 / (a - 7) > 0;
-- the index's fetch count counts the rows the filter dropped, as heap's
-- (the backend's pending counts, not yet reported: differences of them)
BEGIN;
SELECT pg_stat_get_xact_tuples_fetched('cp_a'::regclass) AS fetched0 \gset
SET LOCAL flashscan.fetch_selection_first = off;
SELECT count(b) FROM cp WHERE a = 7 AND d > 9000;
SELECT pg_stat_get_xact_tuples_fetched('cp_a'::regclass) AS fetched1 \gset
SET LOCAL flashscan.fetch_selection_first = on;
SELECT count(b) FROM cp WHERE a = 7 AND d > 9000;
SELECT pg_stat_get_xact_tuples_fetched('cp_a'::regclass) - :fetched1 AS fetched_with_filter,
	   :fetched1 - :fetched0 AS fetched_without;
COMMIT;
-- a Bitmap Heap Scan's fetches: the same
SET enable_indexscan = off; SET enable_bitmapscan = on;
SELECT removed('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000') AS bitmap_counts;
SELECT same('SELECT b, c, e FROM cp WHERE a = 7 AND d > 9000');
SELECT same('SELECT id, b FROM cp WHERE a IN (3, 7, 11) AND e IS NULL AND b LIKE ''%5''');
SELECT count(*) FROM cp WHERE a = 7 AND d > 1e9 AND 1 / (a - 7) > 0;
-- lossy pages: the node rechecks their rows, and the filter waits for it
SET work_mem = '64kB';
SELECT same('SELECT id, c FROM cp WHERE a < 60 AND d > 3000');
RESET work_mem;
RESET ALL;
DROP FUNCTION removed(text);

DROP TABLE ch, cp;
DROP FUNCTION touched(text), same(text), plan_cost(text);
DROP EXTENSION flashscan;
