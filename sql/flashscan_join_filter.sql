--
-- flashscan_join_filter: a FlashScan on the probe side of a hash join drops
-- rows whose keys hash to an empty bucket of the join's table, before it
-- reads their other columns.  Every result must equal heap's, in every
-- join type, key shape and hash table shape.
--
CREATE EXTENSION flashscan;
SET max_parallel_workers_per_gather = 0;
SET flashscan.group_blocks = 4;
SET enable_mergejoin = off; SET enable_nestloop = off;
SET enable_seqscan = off;		-- FlashScan wherever it can run

CREATE TABLE fh (id int, k int, k8 bigint, t text, v int, pad text);
INSERT INTO fh SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE g % 2000 END, g % 2000,
	   't' || (g % 300), g, repeat('p', 60)
FROM generate_series(1, 40000) g;
CREATE TABLE fp (LIKE fh) USING pax;
INSERT INTO fp SELECT * FROM fh;
-- the build side: 1 key in 20, some NULL, some duplicated, one text key
CREATE TABLE dim (k int, k8 bigint, t text, name text);
INSERT INTO dim SELECT g, g, 't' || (g % 300), 'n' || g FROM generate_series(0, 1999, 20) g;
INSERT INTO dim VALUES (NULL, NULL, NULL, 'null'), (40, 40, 't40', 'again');
ANALYZE fh, fp, dim;

-- runs a query on fp and, with fp replaced by fh, on heap: same rows?
CREATE FUNCTION same_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n_pax bigint;
	n_diff bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM (%s) s', q) INTO n_pax;
	EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
				   q, replace(q, ' fp ', ' fh '), replace(q, ' fp ', ' fh '), q) INTO n_diff;
	RETURN format('%s rows, %s differ', n_pax, n_diff);
END
$$;

-- the FlashScan under the hash join, and what its filter removed
CREATE FUNCTION join_filter(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	shown text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF line ~ 'Hash .*Join|Join Filter: hash' THEN
			shown := shown || regexp_replace(regexp_replace(line, '^\s*(->\s*)?', ''),
											 ' \(actual.*', '') || E'\n';
		ELSIF line ~ 'Rows Removed by Join Filter: [1-9]' THEN
			shown := shown || E'rows removed by the join filter\n';
		END IF;
	END LOOP;
	RETURN shown;
END
$$;

-- an inner join: most fact rows have no partner and are dropped early
SELECT join_filter('SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k');
SELECT same_rows('SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k');
-- EXPLAIN without ANALYZE shows where the filter would run (and not for a
-- left join, which keeps the rows without a partner)
EXPLAIN (COSTS OFF) SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k;
EXPLAIN (COSTS OFF) SELECT f.id FROM fp f LEFT JOIN dim ON f.k = dim.k;
-- the same without the filter: the same rows
SET flashscan.join_filter = off;
SELECT same_rows('SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k');
RESET flashscan.join_filter;
-- two keys, a bigint key against an int column's partner, a text key
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.k = dim.k AND f.k8 = dim.k8');
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.k8 = dim.k');
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.t = dim.t AND f.k = dim.k');
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.t COLLATE "C" = dim.t');
-- a key that is an expression of the column: no filter, same rows
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.k + 0 = dim.k');
-- with quals on the fact side, and a join qual beyond the keys
SELECT same_rows('SELECT f.id, dim.name FROM fp f JOIN dim ON f.k = dim.k AND f.v > dim.k8 WHERE f.v % 3 = 0');
-- semi and anti joins, outer joins both ways
SELECT same_rows('SELECT f.id FROM fp f WHERE EXISTS (SELECT FROM dim WHERE dim.k = f.k)');
SELECT same_rows('SELECT f.id FROM fp f WHERE f.k IN (SELECT k FROM dim)');
SELECT same_rows('SELECT f.id FROM fp f WHERE NOT EXISTS (SELECT FROM dim WHERE dim.k = f.k)');
SELECT same_rows('SELECT f.id, dim.name FROM fp f LEFT JOIN dim ON f.k = dim.k');
SELECT join_filter('SELECT f.id, dim.name FROM fp f RIGHT JOIN dim ON f.k = dim.k');
SELECT same_rows('SELECT f.id, dim.name FROM fp f RIGHT JOIN dim ON f.k = dim.k');
SELECT join_filter('SELECT f.id, dim.name FROM fp f LEFT JOIN dim ON f.k = dim.k');
SELECT same_rows('SELECT f.id, dim.name FROM fp f FULL JOIN dim ON f.k = dim.k');
-- an empty build side, and one with every key
SELECT same_rows('SELECT f.id FROM fp f JOIN (SELECT * FROM dim WHERE false) d ON f.k = d.k');
SELECT same_rows('SELECT f.id FROM fp f JOIN (SELECT DISTINCT k FROM fh) d ON f.k = d.k');
-- a hash table in batches (their buckets are in files: no filter), and
-- one whose most common keys get skew buckets
SET work_mem = '64kB';
SELECT same_rows('SELECT a.id, b.id FROM fp a JOIN fh b ON a.k = b.k WHERE b.id % 10 = 0');
RESET work_mem;
SELECT same_rows('SELECT a.id, a.pad FROM fp a JOIN (SELECT k FROM dim UNION ALL SELECT 40 FROM generate_series(1, 500)) b ON a.k = b.k');
-- rescans: the hash join on the inner side of a nested loop
RESET enable_nestloop;
SELECT same_rows('SELECT x.i, (SELECT count(*) FROM fp f JOIN dim ON f.k = dim.k WHERE dim.k8 < x.i * 100) FROM generate_series(1, 5) x(i)');
SET enable_nestloop = off;
-- a parallel hash join, its table shared by the workers
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET min_parallel_index_scan_size = 0;
SET enable_hashjoin = on; SET enable_parallel_hash = on;
SELECT join_filter('SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k');
SELECT same_rows('SELECT f.id, f.pad, dim.name FROM fp f JOIN dim ON f.k = dim.k');
SELECT same_rows('SELECT a.id, b.id FROM fp a JOIN fh b ON a.k = b.k WHERE b.id % 10 = 0');
RESET ALL;

DROP FUNCTION same_rows(text), join_filter(text);
DROP TABLE fh, fp, dim;
DROP EXTENSION flashscan;
