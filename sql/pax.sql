--
-- pax: the PAX table access method of flashscan.  The same data in a heap
-- table is the reference for every result.
--
CREATE EXTENSION flashscan;
SET flashscan.group_blocks = 4;		-- small groups: many of them
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ht (id int, i2 int2, i8 int8, f4 float4, f8 float8, n numeric,
				 b bool, d date, ts timestamptz, t text, vc varchar(20),
				 c char(5), u uuid, j jsonb, arr int[], by bytea);
INSERT INTO ht
SELECT i, (i % 30000)::int2, i::int8 * 1000003, i / 7.0, i * 1.25, i / 3.0,
	   i % 2 = 0, date '2000-01-01' + i, timestamptz '2020-01-01 00:00+00' + i * interval '1 minute',
	   CASE WHEN i % 5 = 0 THEN repeat('long text ' || i, 30) ELSE 'text ' || i END,
	   'vc' || (i % 100), 'c' || (i % 10),
	   md5(i::text)::uuid, jsonb_build_object('k', i, 'odd', i % 2 = 1),
	   ARRAY[i, i + 1, i + 2], decode(md5(i::text), 'hex')
FROM generate_series(1, 20000) i;
-- NULLs in every column, in different rows
UPDATE ht SET i2 = NULL, t = NULL WHERE id % 7 = 0;
UPDATE ht SET f8 = NULL, j = NULL, arr = NULL WHERE id % 11 = 0;
UPDATE ht SET id = NULL, n = NULL, u = NULL, by = NULL, d = NULL, ts = NULL,
			  b = NULL, i8 = NULL, f4 = NULL, vc = NULL, c = NULL WHERE id % 13 = 0;

CREATE TABLE pt (LIKE ht) USING pax;
INSERT INTO pt SELECT * FROM ht;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'pt';

-- The layout: many groups of at most 4 blocks, every row in one of them
-- (the statement's first rows, up to half a page, in the delta page).
SELECT count(*) > 10 AS many_groups, sum(stored) AS rows, bool_and(nblocks <= 4) AS within_group_blocks,
	   bool_or(frozen) AS any_frozen, bool_or(aborted) AS any_aborted
FROM pax_groups('pt');
-- Per column: minipage bytes, and blocks a scan of the column reads.
SELECT count(*) AS columns, bool_and(blocks > 0) AS every_column_has_blocks,
	   sum(minipage_bytes) = (SELECT sum(minipage_bytes) FROM pax_groups('pt')) AS bytes_add_up
FROM pax_column_sizes('pt');
-- Smaller than the heap table: no per-row headers or line pointers.
SELECT pg_relation_size('pt') < pg_relation_size('ht') AS smaller;

-- Results equal the heap table's: each query runs over both, and the two
-- row multisets must match.
CREATE FUNCTION same_result(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	extra_pax bigint;
	extra_heap bigint;
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
				   q, replace(q, 'pt', 'ht')) INTO extra_pax;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
				   replace(q, 'pt', 'ht'), q) INTO extra_heap;
	EXECUTE format('SELECT count(*) FROM (%s) x', q) INTO n;
	RETURN CASE WHEN extra_pax = 0 AND extra_heap = 0 THEN 'same ' || n || ' rows'
		ELSE format('DIFFERENT: %s rows only in pax, %s only in heap', extra_pax, extra_heap) END;
END $$;

SELECT q, same_result(q) FROM (VALUES
	('SELECT * FROM pt'),
	('SELECT id, t, j, arr FROM pt WHERE id BETWEEN 100 AND 300'),
	('SELECT * FROM pt WHERE t IS NULL OR f8 IS NULL'),
	('SELECT * FROM pt WHERE t LIKE ''long%'''),
	('SELECT count(*), count(id), count(t), sum(i8), sum(n), min(ts), max(d), max(vc), bool_and(b) FROM pt'),
	('SELECT id % 10, count(*), sum(f8), avg(i2), max(t) FROM pt GROUP BY 1'),
	('SELECT a.id, b.vc FROM pt a JOIN pt b ON a.id = b.id + 1 WHERE a.id < 2000'),
	('SELECT c, count(*) FROM pt WHERE j ->> ''odd'' = ''true'' GROUP BY c'),
	('SELECT id, rank() OVER (PARTITION BY c ORDER BY f8) FROM pt WHERE id < 500'),
	('SELECT * FROM pt WHERE by = decode(md5(''777''), ''hex'')')
) v(q);

-- The same through the access method's own sequential scan, and through
-- FlashScan without selection first.
SET flashscan.enable = off;
SELECT same_result('SELECT * FROM pt WHERE t IS NULL OR f8 IS NULL'),
	   same_result('SELECT id % 10, count(*), sum(f8), avg(i2), max(t) FROM pt GROUP BY 1');
EXPLAIN (COSTS OFF) SELECT id FROM pt WHERE i8 > 0;
RESET flashscan.enable;
SET flashscan.selection_first = off;
SELECT same_result('SELECT * FROM pt WHERE t IS NULL OR f8 IS NULL'),
	   same_result('SELECT id, c FROM pt WHERE id BETWEEN 100 AND 300');
RESET flashscan.selection_first;

-- FlashScan: what it reads and skips.
EXPLAIN (COSTS OFF) SELECT sum(f8) FROM pt WHERE id = 4242;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id + 1, t FROM pt WHERE c = 'c3' AND b;
CREATE FUNCTION flashscan_counters(q text, OUT scanned bigint, OUT skipped bigint,
								   OUT blocks_read bigint, OUT table_blocks bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
	node json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) ' || q INTO plan;
	node := plan -> 0 -> 'Plan';
	WHILE node IS NOT NULL AND node ->> 'Custom Plan Provider' IS DISTINCT FROM 'FlashScan' LOOP
		node := node -> 'Plans' -> 0;
	END LOOP;
	IF node IS NULL THEN
		RAISE EXCEPTION 'no FlashScan in the plan of %', q;
	END IF;
	scanned := node ->> 'Groups Scanned';
	skipped := node ->> 'Groups Skipped';
	blocks_read := node ->> 'Blocks Read';
	table_blocks := node ->> 'Table Blocks';
END $$;
-- a selective predicate: nearly every group skipped after reading one
-- column (the id minipage of a 4-block group fits in one block)
SELECT scanned > 10 AS many, skipped = scanned - 1 AS all_but_one_skipped,
	   blocks_read < table_blocks / 3 AS under_a_third
FROM flashscan_counters('SELECT sum(f8) FROM pt WHERE id = 4242');
-- without selection first the projected column is read everywhere
SET flashscan.selection_first = off;
CREATE TEMP TABLE plain_flashscan AS
SELECT * FROM flashscan_counters('SELECT max(t) FROM pt WHERE id = 4242');
RESET flashscan.selection_first;
SELECT p.blocks_read > 1.5 * o.blocks_read AS plain_reads_more
FROM plain_flashscan p, flashscan_counters('SELECT max(t) FROM pt WHERE id = 4242') o;
-- reading every column reads nearly every block of the table (the
-- planner prefers the plain scan then: no column to save)
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE i8 IS NOT NULL;
SET enable_seqscan = off;
SELECT skipped = 0 AS none_skipped, blocks_read >= table_blocks * 0.9 AS nearly_all
FROM flashscan_counters('SELECT * FROM pt WHERE i8 IS NOT NULL');
RESET enable_seqscan;

-- Rows a statement inserts are not seen by its own scan (no Halloween).
INSERT INTO pt SELECT * FROM pt WHERE id <= 10;
INSERT INTO ht SELECT * FROM ht WHERE id <= 10;
SELECT count(*) FROM pt WHERE id <= 10;
SELECT same_result('SELECT * FROM pt');

-- COPY and single-row inserts.
COPY pt (id, t, f8) FROM STDIN;
900001	copied one	1.5
900002	\N	2.5
900003	copied three	\N
\.
INSERT INTO pt (id, t) VALUES (900004, 'single row');
SELECT id, t, f8 FROM pt WHERE id > 900000 ORDER BY id;

-- Transactions: rolled back rows vanish, savepoints keep what they should,
-- a transaction sees its own rows, other snapshots do not.
BEGIN;
INSERT INTO pt (id, t) VALUES (910001, 'kept');
SAVEPOINT s1;
INSERT INTO pt (id, t) VALUES (910002, 'rolled back to savepoint');
SELECT id, t FROM pt WHERE id > 910000 ORDER BY id;
ROLLBACK TO s1;
INSERT INTO pt (id, t) VALUES (910003, 'after savepoint');
SAVEPOINT s2;
INSERT INTO pt (id, t) VALUES (910004, 'released');
RELEASE s2;
COMMIT;
BEGIN;
INSERT INTO pt (id, t) VALUES (910005, 'rolled back');
ROLLBACK;
BEGIN;
INSERT INTO pt (id, t) SELECT 920000 + g, 'rolled back ' || g FROM generate_series(1, 500) g;
ROLLBACK;
SELECT id, t FROM pt WHERE id > 910000 ORDER BY id;
-- the reference table gets the same rows
INSERT INTO ht SELECT * FROM pt WHERE id > 900000;
SELECT same_result('SELECT * FROM pt');
-- A rolled-back group stays in the directory until VACUUM drops it (and its index entries).
SELECT count(*) FILTER (WHERE aborted) AS aborted_before FROM pax_groups('pt');
VACUUM pt;
SELECT count(*) FILTER (WHERE aborted) AS aborted_after FROM pax_groups('pt');

-- Scroll cursors read backward and forward.
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id FROM pt WHERE id BETWEEN 1 AND 2000 AND id % 500 = 0;
FETCH ALL FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH FIRST FROM cur;
FETCH LAST FROM cur;
COMMIT;

-- Indexes: btree (unique, expression, partial), hash.  Fetches by TID.
CREATE INDEX pt_id ON pt (id);
CREATE UNIQUE INDEX pt_u ON pt (u) WHERE id > 20;
CREATE INDEX pt_lower ON pt (lower(t));
CREATE INDEX pt_vc_hash ON pt USING hash (vc);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE id = 4242;
SELECT id, t, arr FROM pt WHERE id = 4242;
SELECT count(*) FROM pt WHERE lower(t) = 'text 4243';
SELECT count(*) FROM pt WHERE vc = 'vc7';
SELECT same_result('SELECT * FROM pt WHERE id BETWEEN 5000 AND 5100');
-- single-row fetches from many groups (each reads just its row), every type, NULLs
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT pt.* FROM generate_series(1, 20000, 97) g JOIN pt ON pt.id = g;
SELECT same_result('SELECT pt.* FROM generate_series(1, 20000, 97) g JOIN pt ON pt.id = g');
RESET enable_hashjoin;
RESET enable_mergejoin;
EXPLAIN (COSTS OFF) SELECT u FROM pt WHERE u = md5('4244')::uuid AND id > 20;
SELECT u FROM pt WHERE u = md5('4244')::uuid AND id > 20;
-- the unique index sees committed rows, and the transaction's own
INSERT INTO pt (id, u) VALUES (920001, md5('4244')::uuid);
BEGIN;
INSERT INTO pt (id, u) VALUES (920002, '00000000-0000-0000-0000-000000000001');
INSERT INTO pt (id, u) VALUES (920003, '00000000-0000-0000-0000-000000000001');
ROLLBACK;
-- and the rows of its own statement, still in the writer's memory
INSERT INTO pt (id, u) VALUES (920004, '00000000-0000-0000-0000-000000000002'),
							  (920005, '00000000-0000-0000-0000-000000000002');
SELECT count(*) FROM pt WHERE id IN (920004, 920005);
RESET enable_seqscan;
RESET enable_bitmapscan;
-- BRIN is refused (bitmap scans and GIN: pax_bitmap)
CREATE INDEX pt_brin ON pt USING brin (id);

-- ANALYZE: with every row sampled, the statistics equal the heap table's.
ANALYZE pt;
ANALYZE ht;
SELECT p.attname, p.null_frac = h.null_frac AS null_frac, p.n_distinct = h.n_distinct AS n_distinct,
	   p.avg_width = h.avg_width AS avg_width
FROM pg_stats p JOIN pg_stats h ON h.attname = p.attname AND h.tablename = 'ht'
WHERE p.tablename = 'pt' ORDER BY p.attname;
SELECT reltuples FROM pg_class WHERE relname = 'pt';

-- VACUUM (FREEZE) freezes every group and advances relfrozenxid.
VACUUM (FREEZE) pt;
SELECT bool_and(frozen OR aborted) AS all_frozen FROM pax_groups('pt');
SELECT age(relfrozenxid) < 100 AS young_relfrozenxid FROM pg_class WHERE relname = 'pt';
SELECT same_result('SELECT * FROM pt');

-- Parallel scans return every row once.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i8) FROM pt;
SELECT count(*) = (SELECT count(*) FROM ht) AS same_count, sum(i8) = (SELECT sum(i8) FROM ht) AS same_sum FROM pt;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Schema changes: added columns read their default in old groups, dropped
-- ones disappear, a type change rewrites the table.
ALTER TABLE pt ADD COLUMN extra int DEFAULT 42;
ALTER TABLE ht ADD COLUMN extra int DEFAULT 42;
INSERT INTO pt (id, extra) VALUES (930001, 7);
INSERT INTO ht (id, extra) VALUES (930001, 7);
SELECT extra, count(*) FROM pt GROUP BY extra ORDER BY extra;
ALTER TABLE pt DROP COLUMN vc;
ALTER TABLE ht DROP COLUMN vc;
ALTER TABLE pt ALTER COLUMN i2 TYPE int4;
ALTER TABLE ht ALTER COLUMN i2 TYPE int4;
SELECT same_result('SELECT * FROM pt');
SELECT count(*) FROM pt WHERE id = 4242;

-- Moving between access methods, and CREATE TABLE AS.
CREATE TABLE pt2 USING pax AS SELECT * FROM ht WHERE id < 1000;
SELECT count(*) AS differences FROM
	((TABLE pt2 EXCEPT ALL SELECT * FROM ht WHERE id < 1000) UNION ALL
	 (SELECT * FROM ht WHERE id < 1000 EXCEPT ALL TABLE pt2)) d;
ALTER TABLE pt2 SET ACCESS METHOD heap;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'pt2';
ALTER TABLE pt2 SET ACCESS METHOD pax;
SELECT amname, (SELECT count(*) FROM pt2) AS rows FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'pt2';

-- TRUNCATE, also in the transaction that created the table.
TRUNCATE pt2;
SELECT count(*) FROM pt2;
INSERT INTO pt2 SELECT * FROM ht WHERE id < 100;
SELECT count(*) FROM pt2;
BEGIN;
CREATE TABLE pt3 (a int, b text) USING pax;
INSERT INTO pt3 SELECT i, 'x' || i FROM generate_series(1, 5000) i;
TRUNCATE pt3;
INSERT INTO pt3 VALUES (1, 'after truncate');
SELECT * FROM pt3;
COMMIT;
SELECT * FROM pt3;
-- a column added while the transaction still holds rows in memory
BEGIN;
INSERT INTO pt3 VALUES (5001, 'before add column');
ALTER TABLE pt3 ADD COLUMN added text DEFAULT 'default';
INSERT INTO pt3 VALUES (5002, 'after add column', 'given');
COMMIT;
SELECT * FROM pt3 WHERE a > 5000 ORDER BY a;

-- Temporary and unlogged tables.
CREATE TEMP TABLE ptt (a int, b text) USING pax;
INSERT INTO ptt SELECT i, 'tmp' || i FROM generate_series(1, 3000) i;
SELECT count(*), max(b) FROM ptt;
CREATE UNLOGGED TABLE ptu (a int, b text) USING pax;
INSERT INTO ptu SELECT i, 'unlogged' || i FROM generate_series(1, 3000) i;
SELECT count(*), max(b) FROM ptu;

-- Group size: per table, for its next groups.
SELECT pax_set_group_blocks('pt3', 1);
INSERT INTO pt3 SELECT i, 'small groups' FROM generate_series(1, 3000) i;
SELECT max(nblocks) FROM pax_groups('pt3');

-- A row larger than the 1-block groups gets a group of its own.
INSERT INTO pt3 VALUES (-2, repeat('y', 20000));
SELECT count(*), max(length(b)) FROM pt3 WHERE a = -2;
SELECT max(nblocks) FROM pax_groups('pt3');
-- Bad input: clear errors, nothing half-written.
SELECT pax_set_group_blocks('pt3', 0);
SELECT pax_set_group_blocks('ht', 8);
SELECT * FROM pax_groups('ht');
SET flashscan.group_blocks = 100000;

-- A pax table referencing a heap table, with row and statement triggers
-- (they fetch the new rows by TID, some still in the writer's memory).
CREATE TABLE fk_heap_parent (id int PRIMARY KEY);
INSERT INTO fk_heap_parent SELECT generate_series(1, 10);
CREATE TABLE pax_child (a int REFERENCES fk_heap_parent (id), note text) USING pax;
CREATE TABLE trigger_log (kind text, n bigint);
CREATE FUNCTION log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO trigger_log VALUES ('row ' || NEW.note, NEW.a); RETURN NULL; END $$;
CREATE FUNCTION log_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO trigger_log SELECT 'statement', count(*) FROM new_rows; RETURN NULL; END $$;
CREATE TRIGGER pax_child_row AFTER INSERT ON pax_child FOR EACH ROW
	WHEN (NEW.note = 'watched') EXECUTE FUNCTION log_row();
CREATE TRIGGER pax_child_stmt AFTER INSERT ON pax_child REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION log_stmt();
INSERT INTO pax_child SELECT i % 10 + 1, CASE WHEN i = 7 THEN 'watched' ELSE 'bulk' END
FROM generate_series(1, 1000) i;
INSERT INTO pax_child VALUES (11, 'no parent');
SELECT count(*) FROM pax_child;
SELECT * FROM trigger_log ORDER BY kind;

-- DML: the same UPDATEs and DELETEs on heap and pax, results compared
-- through FlashScan, the AM's seq scan and index scans.
CREATE TABLE dh (id int, grp int, v text, n numeric);
INSERT INTO dh SELECT i, i % 10, 'v' || i, i * 1.5 FROM generate_series(1, 5000) i;
CREATE TABLE dp (LIKE dh) USING pax;
INSERT INTO dp SELECT * FROM dh;
CREATE UNIQUE INDEX dp_id ON dp (id);
CREATE INDEX dp_v ON dp (v);
CREATE FUNCTION dml_both(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE nh bigint; np bigint;
BEGIN
	EXECUTE replace(stmt, 'dx', 'dh'); GET DIAGNOSTICS nh = ROW_COUNT;
	EXECUTE replace(stmt, 'dx', 'dp'); GET DIAGNOSTICS np = ROW_COUNT;
	RETURN format('heap %s, pax %s rows', nh, np);
END $$;
CREATE FUNCTION same_dml(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, 'dx', 'dp'), replace(q, 'dx', 'dh')) INTO a;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, 'dx', 'dh'), replace(q, 'dx', 'dp')) INTO b;
	RETURN CASE WHEN a = 0 AND b = 0 THEN 'same' ELSE format('DIFFERENT: %s only in pax, %s only in heap', a, b) END;
END $$;
SELECT dml_both(s) FROM (VALUES
	('DELETE FROM dx WHERE id % 7 = 0'),
	('UPDATE dx SET v = v || ''!'', n = n * 2 WHERE grp = 3'),
	('UPDATE dx SET id = id + 100000 WHERE id BETWEEN 100 AND 120'),
	('DELETE FROM dx WHERE v LIKE ''%!'' AND id % 2 = 0'),
	('UPDATE dx SET grp = NULL WHERE id = 5')) t(s);
-- in one transaction: later commands see earlier ones, savepoints undo
BEGIN;
SELECT dml_both('UPDATE dx SET n = -1 WHERE id = 1');
SELECT dml_both('UPDATE dx SET n = n - 1 WHERE id = 1');
SAVEPOINT sp;
SELECT dml_both('DELETE FROM dx WHERE id <= 10');
ROLLBACK TO sp;
SELECT dml_both('DELETE FROM dx WHERE id = 2');
INSERT INTO dp VALUES (900001, 1, 'new', 1);
INSERT INTO dh VALUES (900001, 1, 'new', 1);
SELECT dml_both('UPDATE dx SET v = ''newer'' WHERE id = 900001');
COMMIT;
SELECT q, same_dml(q) FROM (VALUES
	('SELECT * FROM dx'),
	('SELECT id, v FROM dx WHERE grp = 3'),
	('SELECT grp, count(*), sum(n) FROM dx GROUP BY grp')) t(q);
SET flashscan.enable = off;
SELECT same_dml('SELECT * FROM dx') AS seq_scan;
SET enable_seqscan = off;
SELECT same_dml('SELECT * FROM dx WHERE id BETWEEN 1 AND 200') AS index_scan,
	   same_dml('SELECT id FROM dx WHERE v = ''v33!''') AS index_scan_v;
RESET enable_seqscan;
RESET flashscan.enable;
-- a unique index accepts a key again once its row is deleted or moved
INSERT INTO dp VALUES (7, 0, 'reused key', 0);
INSERT INTO dp VALUES (100, 0, 'reused key', 0);
INSERT INTO dp VALUES (1, 0, 'duplicate', 0);
DELETE FROM dp WHERE v = 'reused key';
-- row locks of every strength (NOWAIT, SKIP LOCKED and sharing in the isolation tests)
BEGIN;
SELECT id, v FROM dp WHERE id = 3 FOR UPDATE;
SELECT id, v FROM dp WHERE id = 3 FOR NO KEY UPDATE;
UPDATE dp SET v = 'locked then updated' WHERE id = 3;
ROLLBACK;
SELECT id FROM dp WHERE id = 3 FOR SHARE;
SELECT id FROM dp WHERE id = 3 FOR KEY SHARE;
-- UPDATE ... RETURNING, DELETE ... RETURNING, WHERE CURRENT OF
UPDATE dp SET n = 0 WHERE id = 4 RETURNING id, v, n;
DELETE FROM dp WHERE id = 6 RETURNING id, v;
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM dp WHERE id = 8 FOR UPDATE;
FETCH c;
UPDATE dp SET v = 'via cursor' WHERE CURRENT OF c;
COMMIT;
SELECT id, v FROM dp WHERE id = 8;
DELETE FROM dh WHERE id IN (6); UPDATE dh SET n = 0 WHERE id = 4; UPDATE dh SET v = 'via cursor' WHERE id = 8;

-- VACUUM: dead rows leave the indexes, mostly-dead groups are rewritten
-- (keeping their TIDs), ANALYZE counts match the heap's.
SELECT dml_both('DELETE FROM dx WHERE id > 1000');
VACUUM dp;
VACUUM dh;
SELECT same_dml('SELECT * FROM dx') AS after_vacuum;
SET enable_seqscan = off;
SET flashscan.enable = off;
SELECT same_dml('SELECT * FROM dx WHERE id BETWEEN 1 AND 2000') AS index_after_vacuum;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT same_dml('SELECT dx.* FROM generate_series(1, 3000, 37) g JOIN dx ON dx.id = g') AS sparse_single_rows;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_seqscan;
RESET flashscan.enable;
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_check('dp_id', true), bt_index_check('dp_v', true);
SELECT count(*) FILTER (WHERE sparse) > 0 AS some_sparse, sum(stored) = (SELECT count(*) FROM dh) AS stored_rows_live
FROM pax_groups('dp');
SELECT reltuples = (SELECT count(*) FROM dh) AS reltuples_exact FROM pg_class WHERE relname = 'dp';
-- A few scattered deletes: VACUUM replaces the row maps of the groups they
-- touched (16 bytes a row) by one-block dead-row bitmaps; a later delete,
-- update or lock in such a group makes a full map from its bitmap again.
-- autovacuum off: its ANALYZE racing the test's would change the counts below
CREATE TABLE rm (id int, a int, t text) USING pax WITH (autovacuum_enabled = false);
CREATE TABLE rmh (id int, a int, t text) WITH (autovacuum_enabled = false);
INSERT INTO rm SELECT g, g % 7, 'row ' || g FROM generate_series(1, 20000) g;
INSERT INTO rmh SELECT * FROM rm;
CREATE INDEX rm_id ON rm (id);
VACUUM rm;
SELECT count(*) AS groups, sum(row_map_blocks) AS map_blocks FROM pax_groups('rm');
DELETE FROM rm WHERE id % 1000 = 7;
DELETE FROM rmh WHERE id % 1000 = 7;
SELECT count(*) FILTER (WHERE row_map_blocks > 1) AS full_maps FROM pax_groups('rm');
-- this backend's pending counts (the INSERT, the DELETE) go out first: sent
-- after VACUUM or ANALYZE set theirs, they would add to them
SELECT pg_stat_force_next_flush();
VACUUM rm;
SELECT count(*) FILTER (WHERE row_map_blocks = 1) AS bitmaps, count(*) FILTER (WHERE row_map_blocks > 1) AS full_maps,
	   bool_or(sparse) AS rewritten FROM pax_groups('rm');
-- rows VACUUM removed are not dead tuples any more (heap's unused line pointers)
SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'rm';
ANALYZE rm;
SELECT n_dead_tup, n_live_tup FROM pg_stat_user_tables WHERE relname = 'rm';
CREATE FUNCTION rm_same() RETURNS text LANGUAGE sql AS $$
	SELECT format('%s rows, %s differ', (SELECT count(*) FROM rm),
				  (SELECT count(*) FROM ((TABLE rm EXCEPT ALL TABLE rmh) UNION ALL (TABLE rmh EXCEPT ALL TABLE rm)) x))
$$;
SELECT rm_same() AS scan;
SET enable_seqscan = off; SET flashscan.enable = off;
SELECT count(*), sum(id) FROM rm WHERE id BETWEEN 1 AND 20000;	-- bitmap or index scan
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM rm WHERE id BETWEEN 5000 AND 9000;
SELECT id FROM rm WHERE id IN (7, 1007, 1008);
RESET enable_seqscan; RESET enable_bitmapscan; RESET flashscan.enable;
SELECT bt_index_check('rm_id', true);
-- a delete, an update and a lock in groups with bitmaps: full maps again,
-- the dead rows still dead
DELETE FROM rm WHERE id = 2008; DELETE FROM rmh WHERE id = 2008;
UPDATE rm SET t = 'updated' WHERE id = 12008; UPDATE rmh SET t = 'updated' WHERE id = 12008;
BEGIN; SELECT id FROM rm WHERE id = 18008 FOR UPDATE; COMMIT;
SELECT count(*) FILTER (WHERE row_map_blocks > 1) > 0 AS full_maps_again FROM pax_groups('rm');
SELECT rm_same() AS after_changes;
VACUUM rm;
SELECT count(*) FILTER (WHERE row_map_blocks > 1) AS full_maps_after_vacuum FROM pax_groups('rm');
SELECT rm_same() AS after_second_vacuum;
-- VACUUM FULL keeps every live row
VACUUM FULL rm;
SELECT rm_same() AS after_vacuum_full;
-- while standbys may run a library that reads format 4 only, no bitmaps
DELETE FROM rm WHERE id % 1000 = 9; DELETE FROM rmh WHERE id % 1000 = 9;
SET flashscan.write_format = 4;
VACUUM rm;
RESET flashscan.write_format;
SELECT count(*) FILTER (WHERE row_map_blocks = 1) AS bitmaps_under_format_4 FROM pax_groups('rm');
SELECT rm_same() AS format_4_vacuum;
DROP TABLE rm, rmh;
DROP FUNCTION rm_same();
-- The next VACUUM moves a group with a bitmap into the blocks the maps
-- left: the rewritten group has no bitmap and keeps every live row.
SET flashscan.group_blocks = 128;
CREATE TABLE rl (id int, a int, t text) USING pax;
SET flashscan.group_blocks = 4;
INSERT INTO rl SELECT g, g % 7, 'row ' || g FROM generate_series(1, 60000) g;
VACUUM rl;
DELETE FROM rl WHERE id % 1000 = 7;
VACUUM rl;
SELECT count(*) FILTER (WHERE row_map_blocks = 1) AS bitmaps, bool_or(sparse) AS rewritten FROM pax_groups('rl');
VACUUM rl;
SELECT count(*) FILTER (WHERE row_map_blocks = 1) AS bitmaps, count(*) FILTER (WHERE sparse) AS rewritten
FROM pax_groups('rl');
SELECT count(*), sum(id), count(*) FILTER (WHERE id % 1000 = 7) AS deleted_seen FROM rl;
DROP TABLE rl;
-- A group of more rows than a bitmap block holds (65,536 narrow rows) is
-- rewritten without its map instead.
SET flashscan.group_blocks = 128;
CREATE TABLE n2 (id int, a int) USING pax;
SET flashscan.group_blocks = 4;
INSERT INTO n2 SELECT g, g FROM generate_series(1, 100000) g;
VACUUM n2;
DELETE FROM n2 WHERE id % 1000 = 7;
VACUUM n2;
SELECT max(nrows) AS largest_group, sum(row_map_blocks) AS map_blocks FROM pax_groups('n2');
SELECT count(*), sum(id) FROM n2;
DROP TABLE n2;
-- Single-row updates of 15% of the rows (small transactions: delta pages
-- and their row maps), then one VACUUM: groups at least
-- flashscan.vacuum_rewrite_fraction dead are rewritten into the space the
-- earlier rewrites left, the directory pages made meanwhile move down, and
-- the file comes back to about its loaded size, every row as in heap.
SET flashscan.group_blocks = 128;
CREATE TABLE cu (id int PRIMARY KEY, k int, c text) USING pax;
SET flashscan.group_blocks = 4;
CREATE TABLE cuh (id int PRIMARY KEY, k int, c text);
INSERT INTO cu SELECT g, g % 100, repeat('c', 100) || g FROM generate_series(1, 30000) g;
INSERT INTO cuh SELECT * FROM cu;
VACUUM cu;
SELECT pg_relation_size('cu') AS cu_loaded \gset
DO $$ BEGIN FOR i IN 1..4500 LOOP UPDATE cu SET c = 'u' || c WHERE id = (i * 7919) % 30000 + 1; COMMIT; END LOOP; END $$;
UPDATE cuh SET c = 'u' || c WHERE id IN (SELECT (i * 7919) % 30000 + 1 FROM generate_series(1, 4500) i);
SELECT pg_relation_size('cu') > :cu_loaded * 1.2 AS grew;
VACUUM cu;
SELECT pg_relation_size('cu') <= :cu_loaded * 1.1 AS back_to_loaded_size,
	   count(*) FILTER (WHERE row_map_blocks > 0) AS maps, count(*) FILTER (WHERE delta) AS deltas
FROM pax_groups('cu');
SELECT count(*) AS differ FROM ((TABLE cu EXCEPT ALL TABLE cuh) UNION ALL (TABLE cuh EXCEPT ALL TABLE cu)) x;
SET enable_seqscan = off; SET flashscan.enable = off;
SELECT count(*), sum(k), sum(length(c)) FROM cu WHERE id BETWEEN 1 AND 30000;
RESET enable_seqscan; RESET flashscan.enable;
SELECT bt_index_check('cu_pkey', true);
-- the space is reused: the same updates again, VACUUM, and the file stays
DO $$ BEGIN FOR i IN 1..4500 LOOP UPDATE cu SET k = k + 1 WHERE id = (i * 7919) % 30000 + 1; COMMIT; END LOOP; END $$;
UPDATE cuh SET k = k + 1 WHERE id IN (SELECT (i * 7919) % 30000 + 1 FROM generate_series(1, 4500) i);
VACUUM cu;
SELECT pg_relation_size('cu') <= :cu_loaded * 1.1 AS still_loaded_size;
SELECT count(*) AS differ FROM ((TABLE cu EXCEPT ALL TABLE cuh) UNION ALL (TABLE cuh EXCEPT ALL TABLE cu)) x;
-- at a fraction of 1 only groups with no live row are rewritten: 15% dead
-- rows stay, marked in bitmaps
SET flashscan.vacuum_rewrite_fraction = 1;
DELETE FROM cu WHERE id % 7 = 0; DELETE FROM cuh WHERE id % 7 = 0;
VACUUM cu;
SELECT count(*) FILTER (WHERE row_map_blocks = 1) > 0 AS bitmaps, sum(stored) > 30000 - 30000 / 7 AS dead_rows_kept
FROM pax_groups('cu');
RESET flashscan.vacuum_rewrite_fraction;
VACUUM cu;
SELECT sum(stored) = 30000 - 30000 / 7 AS dead_rows_gone FROM pax_groups('cu');
SELECT count(*) AS differ FROM ((TABLE cu EXCEPT ALL TABLE cuh) UNION ALL (TABLE cuh EXCEPT ALL TABLE cu)) x;
SET flashscan.vacuum_rewrite_fraction = 1.5;
DROP TABLE cu, cuh;
-- VACUUM after ADD COLUMN drops a rolled-back group whose directory entry
-- has fewer columns than the table now has: the directory stays readable.
CREATE TABLE ac (id int, t text) USING pax;
INSERT INTO ac SELECT g, 'row ' || g FROM generate_series(1, 5000) g;
BEGIN; INSERT INTO ac SELECT g, 'gone' FROM generate_series(10001, 13000) g; ROLLBACK;
INSERT INTO ac SELECT g, 'more ' || g FROM generate_series(20001, 21000) g;
ALTER TABLE ac ADD COLUMN extra int DEFAULT 5;
VACUUM ac;
SELECT count(*), sum(id), sum(extra) FROM ac;
VACUUM ac;
SELECT count(*), sum(id), sum(extra), count(*) FILTER (WHERE aborted) AS aborted_groups
FROM ac, LATERAL (SELECT bool_or(aborted) AS aborted FROM pax_groups('ac')) g;
DROP TABLE ac;
-- REINDEX of the vacuumed table, and updates after it
REINDEX TABLE dp;
SELECT dml_both('UPDATE dx SET v = v || ''+'' WHERE id < 50');
SELECT same_dml('SELECT * FROM dx') AS after_reindex;

-- Single-row INSERTs, one transaction each, share the delta page (rows with
-- their own xmin) instead of writing a group each; every reader sees them,
-- and VACUUM rewrites the delta into a group.  The blocks it frees are reused.
CREATE TABLE single (id int, t text) USING pax;
CREATE INDEX single_id ON single (id);
DO $$ BEGIN FOR i IN 1..100 LOOP INSERT INTO single VALUES (i, 'row ' || i); COMMIT; END LOOP; END $$;
SELECT count(*) AS groups, sum(stored) AS rows, bool_and(delta) AS all_delta,
	   pg_relation_size('single') / 8192 AS blocks
FROM pax_groups('single');
-- rolled back and savepoint-rolled-back rows stay invisible
BEGIN;
INSERT INTO single VALUES (1001, 'rolled back');
ROLLBACK;
BEGIN;
INSERT INTO single VALUES (1002, 'kept');
SAVEPOINT s;
INSERT INTO single VALUES (1003, 'rolled back to savepoint');
ROLLBACK TO s;
INSERT INTO single VALUES (1004, 'kept too');
-- our own rows, by command
SELECT id, t FROM single WHERE id > 1000 ORDER BY id;
COMMIT;
SELECT count(*), sum(id) FROM single;
SELECT count(*), sum(id) FROM single WHERE id BETWEEN 1 AND 2000;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET flashscan.enable = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM single WHERE id BETWEEN 1 AND 2000;
SELECT count(*), sum(id) FROM single WHERE id BETWEEN 1 AND 2000;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT count(*), sum(id) FROM single;
RESET flashscan.enable;
-- deletes, updates and row locks of delta rows
DELETE FROM single WHERE id % 10 = 0;
UPDATE single SET t = t || ' updated' WHERE id % 10 = 1;
BEGIN;
SELECT id FROM single WHERE id = 2 FOR UPDATE;
COMMIT;
SELECT count(*), sum(id), count(*) FILTER (WHERE t LIKE '%updated') AS updated FROM single;
-- a unique index checks delta rows
CREATE UNIQUE INDEX single_u ON single (id);
INSERT INTO single VALUES (5, 'duplicate');
-- a column added later reads its default in delta rows
ALTER TABLE single ADD COLUMN extra int DEFAULT 7;
INSERT INTO single VALUES (2001, 'after add column', 8);
SELECT extra, count(*) FROM single GROUP BY extra ORDER BY extra;
-- a few rows of a delta page fetched through an index are read alone (not
-- the whole page): long text, a dropped column, a column added later
CREATE TABLE single2 (id int, d text, t text) USING pax;
CREATE INDEX single2_id ON single2 (id);
DO $$ BEGIN FOR i IN 1..30 LOOP INSERT INTO single2 VALUES (i, 'drop me', repeat('v' || i, i * 40)); COMMIT; END LOOP; END $$;
ALTER TABLE single2 DROP COLUMN d;
ALTER TABLE single2 ADD COLUMN extra text DEFAULT 'added later';
SELECT bool_and(delta) AS all_delta FROM pax_groups('single2');
SET enable_seqscan = off; SET flashscan.enable = off;
SELECT id, length(t), t = repeat('v' || id, id * 40) AS same, extra
FROM single2 WHERE id IN (3, 17, 29) ORDER BY id;
SELECT s.id, s.t = repeat('v' || s.id, s.id * 40) AS same, s.extra
FROM generate_series(2, 30, 7) g, LATERAL (SELECT * FROM single2 WHERE id = g) s ORDER BY 1;
RESET enable_seqscan; RESET flashscan.enable;
DROP TABLE single2;
ANALYZE single;
SELECT reltuples FROM pg_class WHERE relname = 'single';
SELECT count(*) AS delta_pages_before FROM pax_groups('single') WHERE delta;
VACUUM single;
SELECT count(*) FILTER (WHERE delta) AS delta_pages_after, sum(stored) AS rows
FROM pax_groups('single');
SELECT count(*), sum(id), count(*) FILTER (WHERE t LIKE '%updated') AS updated FROM single;
SET enable_seqscan = off;
SET flashscan.enable = off;
SELECT count(*), sum(id) FROM single WHERE id BETWEEN 1 AND 3000;
RESET enable_seqscan;
RESET flashscan.enable;
SELECT bt_index_check('single_id', true), bt_index_check('single_u', true);
SELECT pg_relation_size('single') AS size_then \gset
DO $$ BEGIN FOR i IN 101..150 LOOP INSERT INTO single VALUES (i, 'row ' || i); COMMIT; END LOOP; END $$;
SELECT pg_relation_size('single') <= :size_then + 8192 * 2 AS freed_blocks_reused;
SELECT count(*), sum(id) FROM single;
-- more rows than one delta page spans: the next inserter starts a new page
INSERT INTO single SELECT g, 'bulk ' || g FROM generate_series(3001, 3400) g;
DO $$ BEGIN FOR i IN 4001..4400 LOOP INSERT INTO single VALUES (i, 'row ' || i); COMMIT; END LOOP; END $$;
SELECT count(*) FILTER (WHERE delta) > 1 AS several_delta_pages FROM pax_groups('single');
SELECT count(*), sum(id) FROM single;
VACUUM single;
SELECT count(*) FILTER (WHERE delta) AS delta_pages, count(*) AS groups FROM pax_groups('single');
SELECT count(*), sum(id) FROM single;

-- TABLESAMPLE: blocks are runs of row numbers; every visible row once at 100%
SELECT (SELECT count(*) FROM pt TABLESAMPLE SYSTEM (100)) = (SELECT count(*) FROM pt) AS system_all,
	   (SELECT count(*) FROM pt TABLESAMPLE BERNOULLI (100)) = (SELECT count(*) FROM pt) AS bernoulli_all,
	   (SELECT count(*) FROM pt TABLESAMPLE SYSTEM (0)) AS system_none;
SELECT count(*) BETWEEN 1000 AND 3000 AS about_a_tenth,
	   count(*) = (SELECT count(*) FROM pt TABLESAMPLE BERNOULLI (10) REPEATABLE (42)) AS repeatable
FROM pt TABLESAMPLE BERNOULLI (10) REPEATABLE (42);

-- INSERT ... ON CONFLICT (concurrent upserts in the isolation tests)
CREATE TABLE ups (k int PRIMARY KEY, v text, n int DEFAULT 0) USING pax;
INSERT INTO ups VALUES (1, 'a'), (2, 'b');
INSERT INTO ups VALUES (1, 'x'), (3, 'c') ON CONFLICT (k) DO NOTHING;
INSERT INTO ups VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = ups.n + 1;
INSERT INTO ups VALUES (2, 'y'), (4, 'd') ON CONFLICT (k)
	DO UPDATE SET v = excluded.v || ups.v, n = ups.n + 1 RETURNING *;
INSERT INTO ups VALUES (5, 'p'), (5, 'q') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO ups VALUES (2, 'z') ON CONFLICT (k) DO UPDATE SET v = 'w' WHERE ups.n > 5;
SELECT * FROM ups ORDER BY k;
SET enable_seqscan = off;
SELECT * FROM ups WHERE k IN (1, 5);
RESET enable_seqscan;
VACUUM ups;
SELECT count(*), sum(n) FROM ups;
DROP TABLE ups;

-- VACUUM FULL and CLUSTER compact the table and keep every row some
-- snapshot may see (concurrent snapshots in the isolation tests)
CREATE TABLE vf (id int PRIMARY KEY, k int, t text) USING pax;
INSERT INTO vf SELECT g, g % 97, repeat('v', 50) FROM generate_series(1, 5000) g;
CREATE INDEX vf_k ON vf (k);
DELETE FROM vf WHERE id % 3 = 0;
UPDATE vf SET t = 'updated' WHERE id % 7 = 0;
SELECT pg_relation_size('vf') AS vf_size \gset
SELECT count(*), sum(id), sum(k), count(*) FILTER (WHERE t = 'updated') FROM vf;
VACUUM FULL vf;
SELECT pg_relation_size('vf') < :vf_size AS smaller,
	   count(*), sum(id), sum(k), count(*) FILTER (WHERE t = 'updated') FROM vf;
CLUSTER vf USING vf_k;
SELECT count(*), sum(id), sum(k), count(*) FILTER (WHERE t = 'updated') FROM vf;
SELECT array_agg(k) FROM (SELECT k FROM vf LIMIT 5) s;	-- physical order is the index's
SET enable_seqscan = off;
SELECT id, k, t FROM vf WHERE id IN (7, 8, 9) ORDER BY id;
RESET enable_seqscan;
DROP TABLE vf;

-- a foreign key referencing a pax table (FOR KEY SHARE checks)
CREATE TABLE fk_parent (a int PRIMARY KEY) USING pax;
INSERT INTO fk_parent VALUES (1), (2);
CREATE TABLE fk_child (a int REFERENCES fk_parent (a));
INSERT INTO fk_child VALUES (1);
INSERT INTO fk_child VALUES (3);
DELETE FROM fk_parent WHERE a = 1;
DELETE FROM fk_parent WHERE a = 2;
SELECT * FROM fk_parent;
SELECT count(*) FROM pt;

DROP TABLE pt, ht, pt2, pt3, ptt, ptu, fk_child, fk_parent, plain_flashscan, pax_child,
	fk_heap_parent, trigger_log, dh, dp, single;
DROP FUNCTION log_row(), log_stmt(), dml_both(text), same_dml(text);
DROP FUNCTION same_result(text);
DROP FUNCTION flashscan_counters(text);
-- VACUUM (PARALLEL n) of a temporary table warns as heap's does
CREATE TEMPORARY TABLE tmpv (a int PRIMARY KEY) USING pax;
CREATE INDEX ON tmpv (a);
VACUUM (PARALLEL 1) tmpv;
VACUUM (PARALLEL 1, INDEX_CLEANUP off) tmpv;
DROP TABLE tmpv;
-- VACUUM gives a pax file's free tail back, unless TRUNCATE false or the
-- vacuum_truncate reloption says not to; an emptied table keeps its metapage
CREATE TABLE vtr (a int PRIMARY KEY, b text) USING pax WITH (autovacuum_enabled = false);
INSERT INTO vtr SELECT g, repeat('v', 40) FROM generate_series(1, 20000) g;
SELECT pg_relation_size('vtr') > 100 * 8192 AS big;
DELETE FROM vtr WHERE a > 10;
VACUUM (TRUNCATE false) vtr;
VACUUM (TRUNCATE false) vtr;
SELECT pg_relation_size('vtr') > 100 * 8192 AS still_big;
ALTER TABLE vtr SET (vacuum_truncate = false);
VACUUM vtr;
SELECT pg_relation_size('vtr') > 100 * 8192 AS kept_by_reloption;
ALTER TABLE vtr RESET (vacuum_truncate);
VACUUM vtr;
SELECT pg_relation_size('vtr') < 10 * 8192 AS truncated, count(*), sum(a) FROM vtr;
SET enable_seqscan = off;
SELECT a, b = repeat('v', 40) AS b_ok FROM vtr WHERE a = 7;
RESET enable_seqscan;
INSERT INTO vtr SELECT g, 'new' FROM generate_series(11, 5000) g;
SELECT count(*), sum(a), count(*) FILTER (WHERE b = 'new') FROM vtr;
DELETE FROM vtr;
VACUUM vtr;
SELECT pg_relation_size('vtr') AS emptied_size, count(*) FROM vtr;
INSERT INTO vtr VALUES (1, 'again');
SELECT * FROM vtr;
DROP TABLE vtr;

-- TRUNCATE rolled back to a savepoint keeps the rows the transaction
-- inserted before it (buffered ones included), and their index entries.
CREATE TABLE trs (a int PRIMARY KEY, b text) USING pax;
BEGIN;
INSERT INTO trs SELECT g, 'c' FROM generate_series(1, 3000) g;
SAVEPOINT s;
TRUNCATE trs;
INSERT INTO trs VALUES (1, 'after truncate');
ROLLBACK TO s;
COMMIT;
SELECT count(*), sum(a), count(*) FILTER (WHERE b = 'c') FROM trs;
SET enable_seqscan = off;
SELECT a, b FROM trs WHERE a = 2999;
RESET enable_seqscan;
BEGIN;
INSERT INTO trs SELECT g, 'd' FROM generate_series(3001, 4000) g;
TRUNCATE trs;
INSERT INTO trs VALUES (5, 'kept');
COMMIT;
SELECT * FROM trs;
DROP TABLE trs;

-- A statement that inserts and updates (MERGE, a data-modifying CTE) fills
-- whole groups, not one group per row.
CREATE TABLE mrg (id int PRIMARY KEY, v text) USING pax;
INSERT INTO mrg SELECT g * 2, 'x' FROM generate_series(1, 10000) g;
MERGE INTO mrg USING (SELECT g AS id FROM generate_series(1, 20000) g) s ON mrg.id = s.id
  WHEN MATCHED THEN UPDATE SET v = 'u' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n');
SELECT count(*) < 20 AS few_groups FROM pax_groups('mrg');
WITH u AS (UPDATE mrg SET v = 'w' WHERE id <= 5000 RETURNING id)
INSERT INTO mrg SELECT id + 100000, 'c' FROM u;
SELECT count(*) < 30 AS still_few_groups FROM pax_groups('mrg');
SELECT v, count(*) FROM mrg GROUP BY v ORDER BY v;
DROP TABLE mrg;

-- The write buffer and DDL in the same transaction.
-- ALTER COLUMN TYPE rewrites: buffered rows are written as they were typed.
CREATE TABLE wb1 (id int PRIMARY KEY, b text, c int) USING pax;
BEGIN;
INSERT INTO wb1 SELECT g, 'x' || g, g FROM generate_series(1, 3000) g;
ALTER TABLE wb1 ALTER COLUMN c TYPE bigint;
COMMIT;
SELECT sum(c), count(*) FROM wb1;
BEGIN;
INSERT INTO wb1 SELECT g, 'y' || g, g FROM generate_series(3001, 6000) g;
ALTER TABLE wb1 ALTER COLUMN c TYPE text;
COMMIT;
SELECT count(*), max(c::int) FROM wb1 WHERE b LIKE 'y%';
DROP TABLE wb1;
-- A column added after rows were buffered reads as its default, also
-- through an index and in an UPDATE of such a row.
CREATE TABLE wb2 (id int PRIMARY KEY, b text) USING pax;
BEGIN;
INSERT INTO wb2 SELECT g, 'x' || g FROM generate_series(1, 3000) g;
ALTER TABLE wb2 ADD COLUMN c int DEFAULT 7;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT id, c FROM wb2 WHERE id = 2000;
UPDATE wb2 SET b = 'u' WHERE id = 2000;
COMMIT;
SELECT id, b, c FROM wb2 WHERE id = 2000;
SELECT count(*) FILTER (WHERE c = 7) FROM wb2;
DROP TABLE wb2;
-- A row locked through an index while it is still buffered (the lock
-- writes the buffer).
CREATE TABLE wb3 (id int PRIMARY KEY, b text) USING pax;
BEGIN;
INSERT INTO wb3 SELECT g, repeat('b', 20) || g FROM generate_series(1, 20000) g;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT id, b FROM wb3 WHERE id = 19999 FOR UPDATE;
COMMIT;
DROP TABLE wb3;
-- A unique index built after an aborted transaction's rows were written.
CREATE TABLE wb4 (id int PRIMARY KEY, b text) USING pax;
BEGIN;
INSERT INTO wb4 SELECT g, 'x' FROM generate_series(1, 3000) g;
SELECT count(*) FROM wb4;
ROLLBACK;
INSERT INTO wb4 SELECT g, 'y' FROM generate_series(1, 3000) g;
REINDEX TABLE wb4;
CREATE UNIQUE INDEX wb4_b ON wb4 (id, b);
SELECT count(*) FROM wb4;
DROP TABLE wb4;
-- CLUSTER in the transaction that buffered rows: the rows inserted after it
-- get row numbers of the new file (none shared), and an UPDATE meets them all.
CREATE TABLE wb5 (id int PRIMARY KEY, k int) USING pax;
BEGIN;
INSERT INTO wb5 SELECT g, g FROM generate_series(1, 3000) g;
DELETE FROM wb5 WHERE id % 2 = 0;
CLUSTER wb5 USING wb5_pkey;
INSERT INTO wb5 SELECT g, g FROM generate_series(3001, 6000) g;
UPDATE wb5 SET k = -k;
COMMIT;
SELECT count(*), count(*) FILTER (WHERE k > 0) AS not_updated, count(DISTINCT ctid) FROM wb5;
SET enable_seqscan = off;
SELECT count(*) FROM wb5 WHERE id > 0;
RESET enable_seqscan;
DROP TABLE wb5;
-- Parallel workers see the rows the leader's transaction buffered.
CREATE TABLE wb6 (id int, b text) USING pax;
BEGIN;
INSERT INTO wb6 SELECT g, 'x' FROM generate_series(1, 3000) g;
SET LOCAL force_parallel_mode = on;
SET LOCAL flashscan.enable = off;
SELECT count(*) FROM wb6;
COMMIT;
DROP TABLE wb6;
-- Index and bitmap fetches of a run of rows (a range) read a window of rows
-- at a time: a stride's, doubling while the run goes on.  Every column
-- shape, nulls, sparse groups (after VACUUM), format 4, dropped and added
-- columns, windows across strides and group ends: rows as heap's.
CREATE TABLE runs_h (id int, i int, t text, n name, u uuid, iv interval, c char(5));
INSERT INTO runs_h SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE g END,
  CASE WHEN g % 5 = 0 THEN NULL ELSE repeat('x', g % 50) || g END, 'n' || g,
  md5(g::text)::uuid, make_interval(secs => g),
  CASE WHEN g % 3 = 0 THEN NULL ELSE 'c' || (g % 1000) END
FROM generate_series(1, 20000) g;
CREATE TABLE runs_p USING pax AS SELECT * FROM runs_h;
SET flashscan.write_format = 4;
CREATE TABLE runs_p4 USING pax AS SELECT * FROM runs_h;
RESET flashscan.write_format;
CREATE INDEX ON runs_h (id);
CREATE INDEX ON runs_p (id);
CREATE INDEX ON runs_p4 (id);
CREATE FUNCTION runs_digest(tab regclass, lo int, hi int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE d text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(r::text, '','' ORDER BY r.id)) FROM %s r WHERE id BETWEEN %s AND %s',
                 tab, lo, hi) INTO d;
  RETURN d;
END $$;
-- groups that store every row
SET flashscan.enable = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT lo, hi, runs_digest('runs_p', lo, hi) = runs_digest('runs_h', lo, hi) AS pax5,
       runs_digest('runs_p4', lo, hi) = runs_digest('runs_h', lo, hi) AS pax4
FROM (VALUES (1, 1), (15, 18), (1, 100), (250, 1300), (9990, 20000)) v(lo, hi);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET flashscan.enable;
DELETE FROM runs_h WHERE id % 9 = 0;
DELETE FROM runs_p WHERE id % 9 = 0;
DELETE FROM runs_p4 WHERE id % 9 = 0;
VACUUM runs_p;
VACUUM runs_p4;
ALTER TABLE runs_h DROP COLUMN c, ADD COLUMN extra text DEFAULT 'added';
ALTER TABLE runs_p DROP COLUMN c, ADD COLUMN extra text DEFAULT 'added';
ALTER TABLE runs_p4 DROP COLUMN c, ADD COLUMN extra text DEFAULT 'added';
SELECT bool_and(sparse) AS all_sparse FROM pax_groups('runs_p');
SET flashscan.enable = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM runs_p WHERE id BETWEEN 1 AND 3;
SELECT lo, hi, runs_digest('runs_p', lo, hi) = runs_digest('runs_h', lo, hi) AS pax5,
       runs_digest('runs_p4', lo, hi) = runs_digest('runs_h', lo, hi) AS pax4
FROM (VALUES (1, 1), (15, 18), (1, 100), (250, 1300), (9990, 20000)) v(lo, hi);
SET enable_bitmapscan = on;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM runs_p WHERE id BETWEEN 1 AND 3;
SELECT lo, hi, runs_digest('runs_p', lo, hi) = runs_digest('runs_h', lo, hi) AS pax5,
       runs_digest('runs_p4', lo, hi) = runs_digest('runs_h', lo, hi) AS pax4
FROM (VALUES (1, 1), (15, 18), (1, 100), (250, 1300), (9990, 20000)) v(lo, hi);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET flashscan.enable;
DROP FUNCTION runs_digest;
DROP TABLE runs_h, runs_p, runs_p4;
-- An UPDATE gives the new version an entry in every index, also where it
-- changed no indexed column.  The entries of versions no snapshot can see
-- go before an index page splits (the index asks the table: bottom-up
-- deletion), and an index scan marks the ones it meets dead, as for heap's
-- non-HOT updates.  3,000 updates of 10 rows leave each index a few pages
-- (30,010 entries would be about 10).
CREATE EXTENSION pageinspect;
CREATE TABLE churn (id int PRIMARY KEY, k int, c text) USING pax
  WITH (autovacuum_enabled = false);
CREATE INDEX churn_k ON churn (k);
INSERT INTO churn SELECT g, g, 'x' FROM generate_series(1, 10) g;
\set ECHO none
SELECT format('UPDATE churn SET c = %L WHERE id = %s', 'v' || i, i % 10 + 1)
FROM generate_series(1, 3000) i \gexec
\set ECHO all
SELECT pg_relation_size('churn_pkey') / 8192 <= 4 AS pkey_small,
       pg_relation_size('churn_k') / 8192 <= 4 AS k_small;
SET enable_seqscan = off;
SELECT id, k, c FROM churn WHERE id BETWEEN 1 AND 10 ORDER BY id;
SELECT count(*) FROM churn WHERE k > 0;
RESET enable_seqscan;
SELECT bt_index_check('churn_pkey', true), bt_index_check('churn_k', true);
-- 50 updates of one row fit in the index page: an index scan marks the 50
-- old versions' entries dead (retried while another session's snapshot may
-- still see them)
CREATE TABLE churn2 (id int PRIMARY KEY, c text) USING pax
  WITH (autovacuum_enabled = false);
INSERT INTO churn2 SELECT g, 'x' FROM generate_series(1, 10) g;
\set ECHO none
SELECT format('UPDATE churn2 SET c = %L WHERE id = 1', 'v' || i)
FROM generate_series(1, 50) i \gexec
\set ECHO all
-- (an index scan of id, repeated until the index page has dead entries)
CREATE FUNCTION churn2_scan(key int, dead int) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET enable_bitmapscan = off AS $$
BEGIN
  FOR i IN 1..100 LOOP
    PERFORM c FROM churn2 WHERE id = key;
    EXIT WHEN (SELECT count(*) FROM bt_page_items('churn2_pkey', 1) WHERE bt_page_items.dead) = churn2_scan.dead;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RETURN (SELECT count(*) FROM churn2 WHERE id = key);
END $$;
SELECT churn2_scan(1, 50) AS rows_of_1;
SELECT count(*) FILTER (WHERE dead) AS dead, count(*) AS entries
FROM bt_page_items('churn2_pkey', 1);
-- a DELETE's row, once no snapshot sees it, goes the same way
DELETE FROM churn2 WHERE id = 2;
SELECT churn2_scan(2, 51) AS rows_of_2;
SELECT count(*) FILTER (WHERE dead) AS dead FROM bt_page_items('churn2_pkey', 1);
DROP FUNCTION churn2_scan;
DROP TABLE churn, churn2;
DROP EXTENSION pageinspect;
DROP EXTENSION flashscan;
