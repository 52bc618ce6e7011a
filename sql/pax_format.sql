--
-- pax_format: variable-width minipages carry a stride index (format 5), so
-- a single-row fetch reads its row's stride instead of walking the whole
-- minipage, and delta pages keep their rows' states (format 6); tables
-- written in format 4 (flashscan.write_format = 4, what
-- earlier libraries read) stay readable and writable, and a table holding
-- groups of both formats reads right.
--
CREATE EXTENSION flashscan;
CREATE EXTENSION pageinspect;
SET max_parallel_workers_per_gather = 0;
SET flashscan.group_blocks = 4;

-- the format version in a pax table's metapage
CREATE FUNCTION pax_format(r regclass) RETURNS int LANGUAGE sql AS
$$ SELECT get_byte(get_raw_page(r::text, 0), 28) $$;

-- variable-width shapes: short and 4-byte headers, int- and double-aligned,
-- empty values, NULLs (whole strides of them too), numerics, arrays, jsonb
CREATE TABLE fh (id int, t text, c char(12), n numeric, a float8[], j jsonb, v varchar(300));
INSERT INTO fh SELECT g,
	CASE WHEN g % 7 = 0 THEN NULL WHEN g % 11 = 0 THEN '' WHEN g % 5 = 0
		 THEN repeat(md5(g::text), 3 + g % 9) ELSE 'v' || g END,
	CASE WHEN g % 3 = 0 THEN NULL ELSE 'c' || g END,
	CASE WHEN g % 13 = 0 THEN NULL ELSE g * 1.5 END,
	CASE WHEN g BETWEEN 1601 AND 1700 THEN NULL
		 ELSE ARRAY(SELECT (g + x)::float8 FROM generate_series(1, 1 + g % 23) x) END,
	CASE WHEN g % 4 = 0 THEN NULL ELSE jsonb_build_object('g', g, 'p', repeat('p', g % 200)) END,
	CASE WHEN g BETWEEN 2001 AND 2032 THEN NULL ELSE repeat('w', g % 300) END
FROM generate_series(1, 4000) g;
SET flashscan.write_format = 4;
CREATE TABLE f4 (LIKE fh) USING pax;
INSERT INTO f4 SELECT * FROM fh WHERE id <= 2000;
SELECT pax_format('f4') AS format_4_table;
RESET flashscan.write_format;
INSERT INTO f4 SELECT * FROM fh WHERE id > 2000;
SELECT pax_format('f4') AS after_a_default_write;
CREATE TABLE f5 (LIKE fh) USING pax;
INSERT INTO f5 SELECT * FROM fh;
SELECT pax_format('f5') AS new_table;
CREATE INDEX ON fh (id);
CREATE INDEX ON f4 (id);
CREATE INDEX ON f5 (id);
VACUUM ANALYZE fh, f4, f5;

-- every row fetched alone by its index, in an order that jumps between
-- groups, against heap
CREATE FUNCTION fetch_diff(tab text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT f.* FROM (SELECT i FROM generate_series(1, 4000) i ORDER BY hashint4(i)) k, '
			  'LATERAL (SELECT * FROM %s x WHERE x.id = k.i) f';
	n bigint;
	d bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM (' || q || ') s', tab) INTO n;
	EXECUTE format('SELECT count(*) FROM (((' || q || ') EXCEPT ALL (' || q || ')) UNION ALL ((' ||
				   q || ') EXCEPT ALL (' || q || '))) x', tab, 'fh', 'fh', tab) INTO d;
	RETURN format('%s rows, %s differ', n, d);
END
$$;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT f.* FROM generate_series(1, 10) i,
	LATERAL (SELECT * FROM f5 x WHERE x.id = i) f;
SELECT fetch_diff('f5') AS format_5;
SELECT fetch_diff('f4') AS formats_4_and_5;
-- whole-group reads (a scan) agree too
RESET enable_seqscan; RESET enable_bitmapscan; SET enable_indexscan = off;
SELECT (SELECT count(*) FROM (TABLE f5 EXCEPT ALL TABLE fh) s) +
	   (SELECT count(*) FROM (TABLE f4 EXCEPT ALL TABLE fh) s) AS scan_differ;
RESET enable_indexscan; SET enable_seqscan = off; SET enable_bitmapscan = off;

-- sparse groups (VACUUM merged the survivors of a delete) fetch right
DELETE FROM fh WHERE id % 10 <> 3 AND id BETWEEN 500 AND 3500;
DELETE FROM f5 WHERE id % 10 <> 3 AND id BETWEEN 500 AND 3500;
DELETE FROM f4 WHERE id % 10 <> 3 AND id BETWEEN 500 AND 3500;
VACUUM fh, f4, f5;
SELECT fetch_diff('f5') AS sparse_format_5;
SELECT fetch_diff('f4') AS sparse_mixed;

-- a fetch of one long value reads its stride, not the whole minipage
SET flashscan.group_blocks = 128;
CREATE TABLE wide4 (id int, pad text);
SET flashscan.write_format = 4;
ALTER TABLE wide4 SET ACCESS METHOD pax;
RESET flashscan.write_format;
CREATE TABLE wide5 (id int, pad text) USING pax;
SELECT pax_format('wide4') AS wide4, pax_format('wide5') AS wide5;
SET flashscan.write_format = 4;
INSERT INTO wide4 SELECT g, repeat('x', 100) || g FROM generate_series(1, 8000) g;
RESET flashscan.write_format;
INSERT INTO wide5 SELECT g, repeat('x', 100) || g FROM generate_series(1, 8000) g;
CREATE INDEX ON wide4 (id);
CREATE INDEX ON wide5 (id);
ANALYZE wide4, wide5;
SET flashscan.enable = off;
CREATE FUNCTION touched(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint +
		   (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END
$$;
SELECT touched('SELECT pad FROM wide5 WHERE id = 3999') * 4 <
	   touched('SELECT pad FROM wide4 WHERE id = 3999') AS stride_reads_fewer;
SELECT (SELECT pad FROM wide5 WHERE id = 3999) = (SELECT pad FROM wide4 WHERE id = 3999) AS same;

-- only a group written in format 5 raises a table's format: not a row map
-- (a delete), nor rows a function inserted under format 4 and its caller's
-- commit wrote out
SET flashscan.write_format = 4;
CREATE TABLE still4 (id int, t text) USING pax;
INSERT INTO still4 SELECT g, 'x' || g FROM generate_series(1, 3000) g;
RESET flashscan.write_format;
DELETE FROM still4 WHERE id = 5;
CREATE FUNCTION ins4(n int) RETURNS void LANGUAGE sql SET flashscan.write_format = 4
	AS $$ INSERT INTO still4 SELECT g, 'y' || g FROM generate_series(10001, 10000 + n) g $$;
SELECT ins4(5000);
SELECT pax_format('still4') AS still_format_4, count(*) FROM still4;
INSERT INTO still4 SELECT g, 'z' || g FROM generate_series(20001, 23000) g;
SELECT pax_format('still4') AS now_default_format, count(*) FROM still4;
DROP TABLE still4;
DROP FUNCTION ins4(int);

-- format 6: a delta page keeps its rows' states in its items, so updating
-- rows that live on it takes no row map block; a format 5 delta page keeps
-- its map, and a table holding both kinds reads and changes right
CREATE PROCEDURE ins_each(t regclass, a int, b int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN a..b LOOP
		EXECUTE format('INSERT INTO %s VALUES ($1, $2)', t) USING i, 'r' || i;
		COMMIT;
	END LOOP;
END
$$;
SET flashscan.write_format = 5;
CREATE TABLE d5 (id int PRIMARY KEY, v text) USING pax;
CALL ins_each('d5', 1, 200);
UPDATE d5 SET v = 'b2' WHERE id = 2;
SELECT pax_format('d5') AS format_5,
	   (SELECT sum(row_map_blocks) FROM pax_groups('d5') WHERE delta) AS delta_map_blocks;
RESET flashscan.write_format;
CREATE TABLE d6 (id int PRIMARY KEY, v text) USING pax;
INSERT INTO d6 VALUES (1, 'a');
INSERT INTO d6 VALUES (2, 'b');
INSERT INTO d6 VALUES (3, 'c');
INSERT INTO d6 VALUES (4, 'd');
UPDATE d6 SET v = 'b2' WHERE id = 2;
SELECT pax_format('d6') AS format_6,
	   (SELECT sum(row_map_blocks) FROM pax_groups('d6') WHERE delta) AS delta_map_blocks;
-- deletes, chains of updates, row locks and rolled-back subtransactions
DELETE FROM d6 WHERE id = 3;
UPDATE d6 SET v = v || '3' WHERE id = 2;
BEGIN;
SELECT id, v FROM d6 WHERE id = 1 FOR UPDATE;
SAVEPOINT s;
UPDATE d6 SET v = 'rolled back' WHERE id = 4;
DELETE FROM d6 WHERE id = 1;
ROLLBACK TO s;
UPDATE d6 SET v = 'd2' WHERE id = 4;
COMMIT;
SELECT id, v FROM d6 ORDER BY id;
SELECT ctid > '(0,0)' AS has_tid, id, v FROM d6 WHERE id = 2;
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT id, v FROM d6 ORDER BY id;
RESET enable_indexscan; RESET enable_bitmapscan;
-- an aborted insert: VACUUM counts it dead once, however often it runs
BEGIN;
INSERT INTO d6 VALUES (5, 'aborted');
ROLLBACK;
VACUUM d6;
-- VACUUM rewrites the delta page into a group, with its states
SELECT id, v FROM d6 ORDER BY id;
SELECT count(*) FILTER (WHERE delta) AS delta_pages, sum(stored) AS stored FROM pax_groups('d6');
SELECT reltuples FROM pg_class WHERE relname = 'd6';
UPDATE d6 SET v = 'after vacuum' WHERE id = 1;
SELECT id, v FROM d6 ORDER BY id;
-- the format 5 table goes on on its format 5 delta page, then on format 6
-- ones: deletes and updates of rows on both kinds
CALL ins_each('d5', 201, 400);
SELECT pax_format('d5') AS now_format_6;
UPDATE d5 SET v = v || '!' WHERE id IN (3, 180, 250, 399);
DELETE FROM d5 WHERE id IN (4, 181, 300, 400);
SELECT row_map_blocks, count(*) AS delta_pages FROM pax_groups('d5') WHERE delta
GROUP BY 1 ORDER BY 1;
SELECT count(*), sum(id), string_agg(id || v, ',' ORDER BY id) FILTER (WHERE v NOT LIKE 'r%')
FROM d5;
SET enable_seqscan = off;
SELECT id, v FROM d5 WHERE id IN (2, 3, 4, 180, 181, 250, 300, 399, 400) ORDER BY id;
RESET enable_seqscan;
VACUUM d5;
SELECT count(*) FILTER (WHERE delta) AS delta_pages FROM pax_groups('d5');
SELECT count(*), sum(id), string_agg(id || v, ',' ORDER BY id) FILTER (WHERE v NOT LIKE 'r%')
FROM d5;
DROP TABLE d5, d6;
DROP PROCEDURE ins_each(regclass, int, int);

-- the setting: a superuser's, in range
SET flashscan.write_format = 3;
SET flashscan.write_format = 7;
CREATE ROLE pax_format_user;
SET ROLE pax_format_user;
SET flashscan.write_format = 4;
RESET ROLE;
DROP ROLE pax_format_user;

RESET ALL;
DROP TABLE fh, f4, f5, wide4, wide5;
DROP FUNCTION pax_format(regclass), fetch_diff(text), touched(text);
DROP EXTENSION pageinspect;
DROP EXTENSION flashscan;
