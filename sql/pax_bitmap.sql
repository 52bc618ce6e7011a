--
-- pax_bitmap: bitmap heap scans over pax tables (btree, GIN), exact and
-- lossy bitmaps, BitmapAnd/Or, parameterized rescans, parallel bitmap scans,
-- rows changed since the bitmap's index entries were made.  The same data
-- in a heap table is the reference for every result.
--
CREATE EXTENSION flashscan;
SET flashscan.group_blocks = 4;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE bh (id int, k int, tag text, arr int[], j jsonb, doc tsvector, pad text);
INSERT INTO bh
SELECT i, i % 1000, 'tag' || (i % 37),
	   ARRAY[i % 50, i % 70, i % 13], jsonb_build_object('k', i % 100, 'even', i % 2 = 0),
	   to_tsvector('simple', 'word' || (i % 97) || ' other' || (i % 5)),
	   CASE WHEN i % 9 = 0 THEN repeat('p', 3000) ELSE 'short' END
FROM generate_series(1, 30000) i;
UPDATE bh SET arr = NULL, j = NULL WHERE id % 17 = 0;
CREATE TABLE bp (LIKE bh) USING pax;
INSERT INTO bp SELECT * FROM bh;

CREATE INDEX bh_k ON bh (k);
CREATE INDEX bp_k ON bp (k);
CREATE INDEX bh_id ON bh (id);
CREATE INDEX bp_id ON bp (id);
CREATE INDEX bh_arr ON bh USING gin (arr);
CREATE INDEX bp_arr ON bp USING gin (arr);
CREATE INDEX bh_j ON bh USING gin (j jsonb_path_ops);
CREATE INDEX bp_j ON bp USING gin (j jsonb_path_ops);
CREATE INDEX bh_doc ON bh USING gin (doc);
CREATE INDEX bp_doc ON bp USING gin (doc);
ANALYZE bh;
ANALYZE bp;

CREATE FUNCTION same_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	extra_pax bigint;
	extra_heap bigint;
	n bigint;
	hq text := replace(replace(q, 'bp', 'bh'), 'lp', 'lh');
BEGIN
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', q, hq) INTO extra_pax;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', hq, q) INTO extra_heap;
	EXECUTE format('SELECT count(*) FROM (%s) x', q) INTO n;
	RETURN CASE WHEN extra_pax = 0 AND extra_heap = 0 THEN 'same ' || n || ' rows'
		ELSE format('DIFFERENT: %s rows only in pax, %s only in heap', extra_pax, extra_heap) END;
END $$;

-- Bitmap scans only (FlashScan and plain index scans off).
SET enable_seqscan = off;
SET enable_indexscan = off;
SET flashscan.enable = off;
EXPLAIN (COSTS OFF) SELECT * FROM bp WHERE k = 7;
EXPLAIN (COSTS OFF) SELECT id FROM bp WHERE arr @> ARRAY[3];
EXPLAIN (COSTS OFF) SELECT id FROM bp WHERE k = 7 OR id < 100;
EXPLAIN (COSTS OFF) SELECT id FROM bp WHERE k < 100 AND arr && ARRAY[3, 4];

CREATE TABLE queries (q text);
INSERT INTO queries VALUES
	('SELECT * FROM bp WHERE k = 7'),
	('SELECT id, pad FROM bp WHERE k BETWEEN 10 AND 40'),
	('SELECT id FROM bp WHERE k = 7 OR id < 100'),
	('SELECT id, tag FROM bp WHERE k < 100 AND arr && ARRAY[3, 4]'),
	('SELECT id FROM bp WHERE arr @> ARRAY[3]'),
	('SELECT id FROM bp WHERE arr @> ARRAY[3, 26]'),
	('SELECT id, j FROM bp WHERE j @> ''{"k": 42}'''),
	('SELECT id FROM bp WHERE j @> ''{"even": true}'' AND k < 20'),
	('SELECT id FROM bp WHERE doc @@ to_tsquery(''simple'', ''word7 & other2'')'),
	('SELECT id FROM bp WHERE doc @@ to_tsquery(''simple'', ''word7 | word8'')'),
	('SELECT count(*) FROM bp WHERE k IN (1, 2, 3, 500, 999)');

-- Exact bitmaps.
SELECT q, same_rows(q) FROM queries;

-- Lossy bitmaps: every row number of a TID block is a candidate, the quals
-- are rechecked.  64 kB of work_mem holds about 1,000 exact TID blocks.
CREATE TABLE lh (id int, k int);
INSERT INTO lh SELECT i, i % 1000 FROM generate_series(1, 1000000) i;
DELETE FROM lh WHERE id % 7 = 0;
CREATE TABLE lp USING pax AS SELECT * FROM lh ORDER BY id;
DELETE FROM lp WHERE id % 11 = 0;
DELETE FROM lh WHERE id % 11 = 0;
CREATE INDEX ON lh (k);
CREATE INDEX ON lp (k);
ANALYZE lh;
ANALYZE lp;
SET work_mem = '64kB';
CREATE FUNCTION lossy_blocks(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Lossy Heap Blocks')::bigint;
END $$;
EXPLAIN (COSTS OFF) SELECT count(*) FROM lp WHERE k BETWEEN 10 AND 400;
SELECT lossy_blocks('SELECT count(*) FROM lp WHERE k BETWEEN 10 AND 400') > 100 AS lossy;
SELECT same_rows('SELECT id FROM lp WHERE k BETWEEN 10 AND 400');
SELECT same_rows('SELECT id, k FROM lp WHERE k IN (3, 333, 999) OR k > 990');
RESET work_mem;
DROP TABLE lh, lp;
DROP FUNCTION lossy_blocks(text);

-- Rows changed after their index entries were made: deleted rows, updated
-- rows (the old version's TID is in the bitmap too), an aborted insert,
-- rows of this transaction still in its write buffer, a savepoint.
DELETE FROM bp WHERE id % 10 = 3;
DELETE FROM bh WHERE id % 10 = 3;
UPDATE bp SET k = k + 1, arr = arr || 3 WHERE id % 10 = 4;
UPDATE bh SET k = k + 1, arr = arr || 3 WHERE id % 10 = 4;
BEGIN;
INSERT INTO bp SELECT i, 7, 'aborted', ARRAY[3], NULL, NULL, 'x' FROM generate_series(40001, 40100) i;
ROLLBACK;
BEGIN;
INSERT INTO bp SELECT i, 7, 'mine', ARRAY[3], '{"k": 42}', NULL, 'x' FROM generate_series(50001, 50010) i;
INSERT INTO bh SELECT i, 7, 'mine', ARRAY[3], '{"k": 42}', NULL, 'x' FROM generate_series(50001, 50010) i;
SAVEPOINT s;
UPDATE bp SET k = 7 WHERE id BETWEEN 20001 AND 20005;
UPDATE bh SET k = 7 WHERE id BETWEEN 20001 AND 20005;
ROLLBACK TO s;
SELECT q, same_rows(q) FROM queries;
COMMIT;

-- After VACUUM removed the dead rows and their index entries.
VACUUM bp;
VACUUM bh;
SELECT q, same_rows(q) FROM queries;

-- Parameterized bitmap scans, rescanned for every outer row.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT g, count(b.id) FROM generate_series(1, 30) g
	LEFT JOIN LATERAL (SELECT id FROM bp WHERE k = g * 3 AND arr && ARRAY[g]) b ON true GROUP BY g;
SELECT same_rows('SELECT g, count(b.id) FROM generate_series(1, 30) g
	LEFT JOIN LATERAL (SELECT id FROM bp WHERE k = g * 3 AND arr && ARRAY[g]) b ON true GROUP BY g');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Parallel bitmap heap scans return every row once.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET min_parallel_index_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT id, tag FROM bp WHERE k < 30;
SELECT same_rows('SELECT id, tag FROM bp WHERE k < 30');
SELECT same_rows('SELECT id FROM bp WHERE arr && ARRAY[1, 2, 3]');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET min_parallel_index_scan_size;

-- Bitmap fetches count in pg_stat like heap's (idx_tup_fetch).
SELECT pg_stat_force_next_flush();
SELECT idx_tup_fetch AS fetches_before FROM pg_stat_user_tables WHERE relname = 'bp' \gset
SELECT count(*) FROM bp WHERE k = 11;
SELECT pg_stat_force_next_flush();
SELECT idx_tup_fetch - :fetches_before AS fetched FROM pg_stat_user_tables WHERE relname = 'bp';

-- BRIN's block ranges are physical; pax refuses it with a reason.
CREATE INDEX bp_brin ON bp USING brin (id);

-- TID blocks past the file's first segment (row numbers used up by aborted
-- inserts, then VACUUM): a SELECT may use a bitmap scan (its prefetching is
-- off), a statement EvalPlanQual may re-run does not (EvalPlanQual's copy
-- of the plan would prefetch TID blocks as physical blocks, and md.c fails
-- a prefetch past the last segment).
SET flashscan.group_blocks = 32;
CREATE TABLE big_p (k int) USING pax;
DO $$
BEGIN
	FOR i IN 1 .. 5 LOOP
		BEGIN
			INSERT INTO big_p SELECT 1 FROM generate_series(1, 8000000);
			RAISE EXCEPTION 'undo';
		EXCEPTION WHEN raise_exception THEN
		END;
	END LOOP;
END $$;
VACUUM big_p;
INSERT INTO big_p SELECT i % 100 FROM generate_series(1, 100000) i;
CREATE INDEX ON big_p (k);
ANALYZE big_p;
SELECT pg_relation_size('big_p') / 8192 < 131072 AS one_segment,
	   (SELECT max(ctid) FROM big_p) > '(131072,1)'::tid AS tids_past_it;
CREATE TABLE a1 (id int PRIMARY KEY, v int);
INSERT INTO a1 VALUES (1, 5);
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big_p WHERE k = 7;
SELECT count(*) FROM big_p WHERE k = 7;
-- and in parallel workers, if the planner goes parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT count(*) FROM big_p WHERE k BETWEEN 7 AND 9;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
EXPLAIN (COSTS OFF) UPDATE a1 SET v = v + 100
	WHERE id = 1 AND (v < 0 OR (SELECT count(*) FROM big_p b WHERE b.k = a1.v % 100) > 0);
UPDATE a1 SET v = v + 100
	WHERE id = 1 AND (v < 0 OR (SELECT count(*) FROM big_p b WHERE b.k = a1.v % 100) > 0);
EXPLAIN (COSTS OFF) SELECT * FROM big_p WHERE k = 7 FOR UPDATE;
DROP TABLE big_p, a1;
RESET flashscan.group_blocks;

RESET enable_seqscan;
RESET enable_indexscan;
RESET flashscan.enable;
DROP TABLE bp, bh, queries;
DROP FUNCTION same_rows(text);
DROP EXTENSION flashscan;
