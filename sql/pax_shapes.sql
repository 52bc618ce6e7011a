--
-- pax_shapes: table shapes and values pax must store as heap does, or refuse
-- with a clear error: wide tables, out-of-line, compressed and expanded
-- values.
--
CREATE EXTENSION flashscan;
SET max_parallel_workers_per_gather = 0;

-- The widest pax table: every group's directory entry must fit a page.
-- (the statements \gexec runs are not echoed: ECHO none around them)
\set ECHO none
SELECT format('CREATE TABLE wide (%s) USING pax',
			  string_agg(format('c%s int', g), ', ')) FROM generate_series(1, 1013) g \gexec
\set ECHO all
INSERT INTO wide (c1, c500, c1013) SELECT g, g * 2, g * 3 FROM generate_series(1, 1000) g;
INSERT INTO wide (c1, c1013) VALUES (-1, -3);
SELECT count(*), sum(c1), sum(c500), sum(c1013), count(c2) FROM wide;
-- one more column is refused, however it would come
\set ECHO none
SELECT format('CREATE TABLE wider (%s) USING pax',
			  string_agg(format('c%s int', g), ', ')) FROM generate_series(1, 1014) g \gexec
\set ECHO all
ALTER TABLE wide ADD COLUMN c1014 int;
-- dropped columns still count
ALTER TABLE wide DROP COLUMN c2;
ALTER TABLE wide ADD COLUMN c1014 int;
CREATE TABLE wide_heap USING heap AS SELECT * FROM wide;
ALTER TABLE wide_heap ADD COLUMN extra1 int, ADD COLUMN extra2 int;
ALTER TABLE wide_heap SET ACCESS METHOD pax;
CREATE TABLE wide_copy USING pax AS SELECT *, 1 AS extra1, 2 AS extra2 FROM wide;
-- a partition of a partitioned table gets the column through recursion
CREATE TABLE wide_parted (a int) PARTITION BY RANGE (a);
CREATE TABLE wide_part1 PARTITION OF wide_parted FOR VALUES FROM (0) TO (10) USING pax;
\set ECHO none
SELECT format('ALTER TABLE wide_parted %s',
			  string_agg(format('ADD COLUMN c%s int', g), ', ')) FROM generate_series(2, 1014) g \gexec
\set ECHO all
SELECT count(*) FROM pg_attribute WHERE attrelid = 'wide_part1'::regclass AND attnum > 0;
-- the table is still usable after the refusals
SELECT count(*), sum(c1013) FROM wide;
DROP TABLE wide, wide_heap, wide_parted;

-- Out-of-line values of another table are copied in: pax keeps no TOAST
-- pointer into a relation that may be vacuumed or dropped.
CREATE TABLE toasted (id int, ext text, cmp text, arr int[]);
ALTER TABLE toasted ALTER COLUMN ext SET STORAGE EXTERNAL;
INSERT INTO toasted
SELECT g, (SELECT string_agg(md5(g::text || x::text), '') FROM generate_series(1, 400) x),
	   repeat('compressible ' || g, 2000),
	   (SELECT array_agg(x) FROM generate_series(1, 5000) x)
FROM generate_series(1, 6) g;
SELECT id, pg_column_compression(cmp) IS NOT NULL AS cmp_compressed
FROM toasted ORDER BY id LIMIT 1;
CREATE TABLE toast_ref AS SELECT id, md5(ext) AS ext, md5(cmp) AS cmp, md5(arr::text) AS arr
FROM toasted;
CREATE TABLE pax_toasted (id int, ext text, cmp text, arr int[]) USING pax;
INSERT INTO pax_toasted SELECT * FROM toasted;					-- bulk path
INSERT INTO pax_toasted SELECT * FROM toasted WHERE id = 1;		-- single-row path
UPDATE pax_toasted SET id = id + 100 WHERE id = 2;				-- new version
DELETE FROM toasted WHERE id < 4;
VACUUM toasted;
DROP TABLE toasted;
SELECT count(*) FROM pax_toasted p JOIN toast_ref r ON r.id = p.id % 100
WHERE md5(p.ext) = r.ext AND md5(p.cmp) = r.cmp AND md5(p.arr::text) = r.arr;
SELECT count(*) FROM pax_toasted;
-- no compressed or external value is stored
SELECT count(*) FROM pax_toasted WHERE pg_column_compression(cmp) IS NOT NULL;

-- Rows larger than a group get a group of their own, up to 4096 blocks.
CREATE TABLE pax_big (id int, t text) USING pax;
INSERT INTO pax_big VALUES (1, repeat('a', 1048576)), (2, 'small'), (3, repeat('b', 3000000));
INSERT INTO pax_big SELECT g, repeat(md5(g::text), 40000) FROM generate_series(4, 6) g;
SELECT id, length(t), t = repeat(left(t, length(t) / greatest(length(t) / 32, 1)), greatest(length(t) / 32, 1)) AS intact
FROM pax_big ORDER BY id;
SELECT max(nblocks) > 128 AS own_group FROM pax_groups('pax_big');
INSERT INTO pax_big VALUES (7, repeat('z', 34000000));
DROP TABLE pax_big;

-- Expanded objects (a PL/pgSQL array variable) are flattened.
DO $$
DECLARE
	a int[] := '{}';
BEGIN
	FOR i IN 1..2000 LOOP
		a[i] := i;
	END LOOP;
	INSERT INTO pax_toasted (id, arr) VALUES (1000, a);
END
$$;
SELECT array_length(arr, 1), arr[2000] FROM pax_toasted WHERE id = 1000;
DROP TABLE pax_toasted, toast_ref;

-- A rewrite that drops a column reads it for a USING expression of the
-- same ALTER TABLE.
CREATE TABLE drop_rewrite (f1 int, f2 text, f3 text) USING pax;
INSERT INTO drop_rewrite VALUES (1, 'one', 'uno'), (2, 'two', NULL);
ALTER TABLE drop_rewrite ALTER f1 TYPE text USING f2 || coalesce(f3, '-'), DROP COLUMN f3;
SELECT * FROM drop_rewrite ORDER BY f2;
DROP TABLE drop_rewrite;

-- System columns: xmin/cmin from the row's insertion, xmax/cmax from its
-- row map, through scans and index fetches, as heap answers them.
CREATE TABLE sys (a int, b text) USING pax;
INSERT INTO sys VALUES (1, 'delta row');
INSERT INTO sys SELECT g, 'group row' FROM generate_series(2, 2000) g;
CREATE INDEX ON sys (a);
BEGIN;
UPDATE sys SET b = 'updated' WHERE a = 2;
INSERT INTO sys VALUES (3000, 'later command');
SELECT a, b, xmin = pg_current_xact_id()::xid AS xmin_mine, cmin, xmax = '0'::xid AS no_xmax
FROM sys WHERE a IN (1, 2, 3, 3000) ORDER BY a;
SET LOCAL enable_seqscan = off;
SET LOCAL flashscan.enable = off;
SELECT a, xmin = pg_current_xact_id()::xid AS xmin_mine, cmin FROM sys WHERE a IN (2, 3000) ORDER BY a;
COMMIT;
-- RETURNING of a row just inserted (still in the write buffer) or updated
INSERT INTO sys VALUES (4000, 'returned') RETURNING a, xmin = pg_current_xact_id()::xid AS xmin_mine, cmin, xmax;
UPDATE sys SET b = 'updated again' WHERE a IN (1, 2)
RETURNING a, xmin = pg_current_xact_id()::xid AS xmin_mine, xmax;
BEGIN;
SELECT a FROM sys WHERE a = 5 FOR UPDATE;
SELECT a, xmax = pg_current_xact_id()::xid AS locked_by_me FROM sys WHERE a IN (4, 5) ORDER BY a;
COMMIT;
DROP TABLE sys;

DROP EXTENSION flashscan;
