--
-- flashjoin: inner hash joins over pax tables rewritten into narrow joins
-- and a Flash Fetch of the deferred columns.  Every query's rows must equal
-- the ordinary plan's, with either fetch strategy, and the plan must use
-- the fetch where the shape qualifies and not where it does not.
--
CREATE EXTENSION flashscan;
SET max_parallel_workers_per_gather = 0;
SET flashscan.group_blocks = 1;		-- many small groups

CREATE TABLE fact (id int, d1 int, d2 int, k1 int, k2 text, amount numeric,
				   note text, flag bool, ts timestamptz, big text) USING pax;
INSERT INTO fact
SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 100 END, g % 50, g % 30, 'k' || (g % 20),
	   g * 1.5, 'note ' || g, g % 3 = 0, '2026-01-01'::timestamptz + g * interval '1 minute',
	   CASE WHEN g % 500 = 0 THEN repeat(md5(g::text), 300) ELSE 'small' || g END
FROM generate_series(1, 20000) g;
CREATE TABLE dim1 (id int, name text, region text) USING pax;
INSERT INTO dim1 SELECT g, 'name' || g, 'r' || (g % 10) FROM generate_series(0, 99) g;
INSERT INTO dim1 VALUES (5, 'second five', 'r5'), (NULL, 'no id', 'r0');
CREATE TABLE dim2 (id int, label text, w int) USING pax;
INSERT INTO dim2 SELECT g, 'label' || g, g * 10 FROM generate_series(0, 49) g;
CREATE TABLE dim3 (k1 int, k2 text, info text) USING pax;
INSERT INTO dim3 SELECT a, 'k' || b, 'info ' || a || '/' || b
FROM generate_series(0, 29) a, generate_series(0, 19) b WHERE (a + b) % 3 <> 0;
CREATE TABLE hdim (id int, hname text);
INSERT INTO hdim SELECT g, 'heap' || g FROM generate_series(0, 99) g;
-- deleted, updated and newly inserted rows (some on delta pages)
DELETE FROM fact WHERE id % 11 = 0;
UPDATE fact SET note = note || '!' WHERE id % 13 = 0;
INSERT INTO fact SELECT g, g % 100, g % 50, g % 30, 'k' || (g % 20), g, 'late ' || g, true,
	   '2026-06-01', 'late' FROM generate_series(20001, 20100) g;
ANALYZE fact, dim1, dim2, dim3, hdim;

-- rows of q without FlashJoin, and with each fetch strategy: same?
CREATE FUNCTION fj(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	agg text := 'SELECT count(*) || '' '' || md5(coalesce(string_agg(s::text, ''|'' ORDER BY s::text), '''')) FROM (%s) s';
	ref text;
	got text;
	line text;
	used bool;
	mode text;
	result text := '';
BEGIN
	PERFORM set_config('flashscan.flashjoin', 'off', true);
	EXECUTE format(agg, q) INTO ref;
	FOREACH mode IN ARRAY ARRAY['naive', 'sorted'] LOOP
		PERFORM set_config('flashscan.flashjoin', 'rewrite', true);
		PERFORM set_config('flashscan.flashjoin_fetch', mode, true);
		used := false;
		FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
			used := used OR line LIKE '%Flash Fetch%';
		END LOOP;
		EXECUTE format(agg, q) INTO got;
		result := result || format(' %s:%s%s', mode,
								   CASE WHEN got = ref THEN 'same' ELSE 'DIFFERENT' END,
								   CASE WHEN used THEN '' ELSE ' (no fetch)' END);
	END LOOP;
	-- and whether the default (flashscan.flashjoin = cost) chooses it, with the same rows
	PERFORM set_config('flashscan.flashjoin', 'cost', true);
	PERFORM set_config('flashscan.flashjoin_fetch', 'auto', true);
	used := false;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		used := used OR line LIKE '%Flash Fetch%';
	END LOOP;
	EXECUTE format(agg, q) INTO got;
	RETURN split_part(ref, ' ', 1) || ' rows;' || result ||
		CASE WHEN used THEN ' cost:fetch' ELSE ' cost:ordinary' END ||
		CASE WHEN got = ref THEN '' ELSE ' DIFFERENT' END;
END
$$;

-- the plan: narrow FlashScans, PostgreSQL's hash joins, one fetch on top
SET flashscan.flashjoin = rewrite;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT f.note, f.amount, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE d.region = 'r3';
RESET flashscan.flashjoin;

-- join shapes
SELECT fj('SELECT f.id, f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id');
SELECT fj('SELECT f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE d.region = ''r1'' AND f.amount > 100');
SELECT fj('SELECT f.id, f.note, d1.name, d2.label FROM fact f JOIN dim1 d1 ON f.d1 = d1.id JOIN dim2 d2 ON f.d2 = d2.id');
SELECT fj('SELECT f.id, f.ts, d1.region, d2.w, d3.info FROM fact f JOIN dim1 d1 ON f.d1 = d1.id
		   JOIN dim2 d2 ON f.d2 = d2.id JOIN dim3 d3 ON f.k1 = d3.k1 AND f.k2 = d3.k2');
SELECT fj('SELECT a.id, a.note, b.note FROM fact a JOIN fact b ON a.id = b.d1 * 7');
SELECT fj('SELECT f.id, f.amount, d.info FROM fact f JOIN dim3 d ON f.k1 = d.k1 AND f.k2 = d.k2');
SELECT fj('SELECT upper(f.note) || d.name AS x, f.amount * 2, f.flag FROM fact f JOIN dim1 d ON f.d1 = d.id');
SELECT fj('SELECT f.id, f.note FROM fact f JOIN dim1 d ON f.d1 = d.id AND f.amount > d.id * 100');
SELECT fj('SELECT f.id, length(f.big), md5(f.big), d.name FROM fact f JOIN dim1 d ON f.d1 = d.id');
SELECT fj('SELECT f.note, h.hname FROM fact f JOIN hdim h ON f.d1 = h.id WHERE h.id < 40');
-- grouping, ordering and limits above the join
SELECT fj('SELECT d.region, count(*), sum(f.amount), max(f.note) FROM fact f JOIN dim1 d ON f.d1 = d.id GROUP BY d.region');
SELECT fj('SELECT * FROM (SELECT f.id, f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id ORDER BY f.id DESC LIMIT 50) s');
SELECT fj('SELECT DISTINCT f.k2, d.region FROM fact f JOIN dim1 d ON f.d1 = d.id');
SELECT fj('SELECT f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE f.id < 300
		   UNION ALL SELECT f.note, d.label FROM fact f JOIN dim2 d ON f.d2 = d.id WHERE f.id > 19900');
-- not offered: outer and semi joins keep the ordinary plan
SELECT fj('SELECT f.id, f.note, d.name FROM fact f LEFT JOIN dim1 d ON f.d1 = d.id');
SELECT fj('SELECT f.id, f.note FROM fact f WHERE f.d1 IN (SELECT id FROM dim1 WHERE region = ''r2'')');

-- a join rescanned for each outer row (a correlated subquery)
SELECT fj('SELECT x, (SELECT max(f.note) || max(d.name) FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE d.region = ''r'' || x) FROM generate_series(1, 5) x');

-- spilling: hash joins in batches, fetch sorts on disk
SET work_mem = '64kB';
SELECT fj('SELECT f.id, f.note, d1.name, d2.label FROM fact f JOIN dim1 d1 ON f.d1 = d1.id JOIN dim2 d2 ON f.d2 = d2.id');
SELECT fj('SELECT a.id, a.note, b.note, b.amount FROM fact a JOIN fact b ON a.id = b.id');
SET flashscan.flashjoin = rewrite;
SET flashscan.flashjoin_fetch = sorted;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(a.note), count(b.note) FROM fact a JOIN fact b ON a.id = b.id;
RESET work_mem;

-- a scrollable cursor moves both ways over the fetch's output
BEGIN;
DECLARE c SCROLL CURSOR FOR
	SELECT f.id, f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE f.id < 40 ORDER BY f.id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
COMMIT;
BEGIN;
DECLARE c2 SCROLL CURSOR FOR
	SELECT f.id, f.note FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE f.id < 40;
MOVE FORWARD ALL IN c2;
FETCH BACKWARD 2 FROM c2;
COMMIT;

-- a generic plan of a prepared statement
PREPARE q(int) AS SELECT count(*), max(f.note) FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE d.id < $1;
EXECUTE q(10); EXECUTE q(10); EXECUTE q(10); EXECUTE q(10); EXECUTE q(10); EXECUTE q(20);
DEALLOCATE q;

-- the rows the fetch reads are the query's snapshot's, inside a transaction too
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT fj('SELECT f.id, f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id');
UPDATE fact SET note = 'changed' WHERE id < 100;
SELECT fj('SELECT f.id, f.note, d.name FROM fact f JOIN dim1 d ON f.d1 = d.id WHERE f.id < 200');
ROLLBACK;

-- a parallel worker may run the plan's top, but no Gather goes above a fetch
SET flashscan.flashjoin = rewrite;
SET max_parallel_workers_per_gather = 2;
SET force_parallel_mode = on;
SELECT count(*), max(f.note), max(h.hname) FROM fact f JOIN hdim h ON f.d1 = h.id;
SELECT f.note, h.hname FROM fact f JOIN hdim h ON f.d1 = h.id ORDER BY 1 LIMIT 2;
RESET force_parallel_mode;
RESET max_parallel_workers_per_gather;

-- row-level security: the policy's qual sees each row before a leaky qual
CREATE TABLE sec (id int, owner text, secret text) USING pax;
INSERT INTO sec SELECT g, CASE WHEN g % 2 = 0 THEN 'regress_fj_alice' ELSE 'regress_fj_bob' END, 'secret' || g
FROM generate_series(1, 6) g;
ALTER TABLE sec ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON sec USING (owner = current_user);
CREATE FUNCTION leak(text, text) RETURNS bool LANGUAGE plpgsql STRICT COST 0.0001
	AS $$BEGIN RAISE NOTICE 'leak: %', $1; RETURN true; END$$;
CREATE OPERATOR <<< (PROCEDURE = leak, LEFTARG = text, RIGHTARG = text);
CREATE ROLE regress_fj_alice;
GRANT SELECT ON sec, dim1 TO regress_fj_alice;
SET ROLE regress_fj_alice;
SELECT sec.owner, d.name FROM sec JOIN dim1 d ON sec.id = d.id WHERE sec.secret <<< 'x' ORDER BY 2;
SET enable_seqscan = off;
SELECT id FROM sec WHERE secret <<< 'x' ORDER BY 1;
RESET enable_seqscan;
RESET ROLE;
DROP TABLE sec;
DROP OPERATOR <<< (text, text);
DROP FUNCTION leak(text, text);
REVOKE ALL ON dim1 FROM regress_fj_alice;
DROP ROLE regress_fj_alice;

-- flashjoin = cost: a FlashJoin path for each join relation, kept where it
-- is estimated cheaper, so a Flash Fetch may sit below other joins and the
-- joins above choose their order with it.  A wide fact table whose few
-- matching rows are fetched late.
SET flashscan.group_blocks = 8;
CREATE TABLE wf (id int, d int, e int, a text, b text, c text) USING pax;
INSERT INTO wf SELECT g, g % 1000, g % 7, repeat(md5(g::text), 4), repeat(md5((g + 1)::text), 4),
	   repeat(md5((g + 2)::text), 4) FROM generate_series(1, 40000) g;
CREATE TABLE wd (id int, name text, sel int) USING pax;
INSERT INTO wd SELECT g, 'n' || g, g % 100 FROM generate_series(0, 999) g;
CREATE TABLE we (id int, label text) USING pax;
INSERT INTO we SELECT g, 'l' || g FROM generate_series(0, 6) g;
CREATE TABLE wh (id int, hname text);
INSERT INTO wh SELECT g, 'h' || g FROM generate_series(0, 999) g;
ANALYZE wf, wd, we, wh;
-- the fetch below an outer join with the heap table, under its Hash
EXPLAIN (COSTS OFF)
SELECT f.a, d.name, h.hname FROM wf f JOIN wd d ON f.d = d.id LEFT JOIN wh h ON h.id = f.id % 1000
WHERE d.name = 'n3';
SELECT fj('SELECT f.a, d.name, h.hname FROM wf f JOIN wd d ON f.d = d.id JOIN wh h ON h.id = f.id % 1000 WHERE d.name = ''n3''');
SELECT fj('SELECT f.a, d.name, h.hname FROM wf f JOIN wd d ON f.d = d.id LEFT JOIN wh h ON h.id = f.id % 1000 WHERE d.name = ''n3''');
SELECT fj('SELECT f.a, f.b, f.c, d.name, e.label FROM wf f JOIN wd d ON f.d = d.id JOIN we e ON f.e = e.id WHERE d.name = ''n3''');
SELECT fj('SELECT f.id, f.c, d.name, e.label, h.hname FROM wf f JOIN wd d ON f.d = d.id JOIN we e ON f.e = e.id
		   JOIN wh h ON h.id = d.id WHERE d.sel = 7 AND e.label > ''l2''');
-- many matching rows: the fetch would read what the scan reads, the ordinary join stays
SELECT fj('SELECT f.a, f.b, d.name FROM wf f JOIN wd d ON f.d = d.id WHERE d.sel < 50');
-- rescanned in a correlated subquery; under a nested loop
SELECT fj('SELECT x, (SELECT max(f.c) || max(d.name) FROM wf f JOIN wd d ON f.d = d.id WHERE d.name = ''n'' || x)
		   FROM generate_series(1, 4) x');
SET enable_material = off;
SELECT fj('SELECT f.a, d.name, h.hname FROM wh h JOIN (wf f JOIN wd d ON f.d = d.id) ON f.d BETWEEN h.id AND h.id + 2
		   WHERE d.name = ''n3'' AND h.id < 10');
RESET enable_material;
-- the fetch's reads priced by the tablespace's QDTT model when there is one:
-- a device whose random reads cost a thousand sequential ones keeps the
-- ordinary join
CREATE EXTENSION qdtt_costing;
INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
SELECT 'pg_default', b, q, CASE WHEN b = 1 THEN 10 ELSE 10000 END
FROM unnest(ARRAY[1, 16, 4096]) b, unnest(ARRAY[1, 2, 4, 8]) q;
SELECT fj('SELECT f.a, f.b, f.c, d.name, e.label FROM wf f JOIN wd d ON f.d = d.id JOIN we e ON f.e = e.id WHERE d.name = ''n3''');
DROP EXTENSION qdtt_costing;
SELECT fj('SELECT f.a, f.b, f.c, d.name, e.label FROM wf f JOIN wd d ON f.d = d.id JOIN we e ON f.e = e.id WHERE d.name = ''n3''');
DROP TABLE wf, wd, we, wh;
RESET flashscan.group_blocks;

-- settings
SET flashscan.flashjoin = bogus;
SET flashscan.flashjoin_fetch = bogus;
RESET ALL;
DROP TABLE fact, dim1, dim2, dim3, hdim;
DROP FUNCTION fj(text);
DROP EXTENSION flashscan;
