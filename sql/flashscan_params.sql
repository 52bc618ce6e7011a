--
-- flashscan_params: FlashScan with outer references (LATERAL, correlated
-- subqueries, nestloop parameters) and quals whose operators return NULL.
-- Every result must equal heap's.
--
CREATE EXTENSION flashscan;
SET max_parallel_workers_per_gather = 0;
SET flashscan.group_blocks = 1;
SET enable_seqscan = off;		-- FlashScan wherever it can run

CREATE TABLE k (lo int, hi int);
INSERT INTO k VALUES (1, 10), (2, 20), (3, 30), (NULL, 40);
CREATE TABLE ph (a int, b int, c text);
INSERT INTO ph SELECT g, g % 7, 'c' || g FROM generate_series(1, 3000) g;
CREATE TABLE pp (LIKE ph) USING pax;
INSERT INTO pp SELECT * FROM ph;
ANALYZE k, ph, pp;

-- runs a query on pp and, with pp replaced by ph, on heap: same rows?
CREATE FUNCTION same_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n_pax bigint;
	n_diff bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM (%s) s', q) INTO n_pax;
	EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
				   q, replace(q, ' pp ', ' ph '), replace(q, ' pp ', ' ph '), q) INTO n_diff;
	RETURN format('%s rows, %s differ', n_pax, n_diff);
END
$$;

-- the plans use FlashScan, parameterized by the outer relation
EXPLAIN (COSTS OFF)
SELECT * FROM k LEFT JOIN LATERAL (SELECT k.lo AS x, t.c FROM pp t WHERE t.a < 3) ss ON true;
EXPLAIN (COSTS OFF)
SELECT k.lo, (SELECT max(t.c || k.hi) FROM pp t WHERE t.b = k.lo) FROM k;

-- an outer column in the target list, with the same number as a scanned one
SELECT * FROM k LEFT JOIN LATERAL (SELECT k.lo AS x, t.c FROM pp t WHERE t.a < 3) ss ON true
ORDER BY 1, 2, 4;
SELECT same_rows('SELECT * FROM k LEFT JOIN LATERAL (SELECT k.lo AS x, k.hi AS y, t.c FROM pp t WHERE t.a < 3) ss ON true');
-- in the quals: selection first, simple and residual quals
SELECT same_rows('SELECT * FROM k, LATERAL (SELECT t.c FROM pp t WHERE t.a = k.lo + 1) ss');
SELECT same_rows('SELECT * FROM k, LATERAL (SELECT t.c FROM pp t WHERE t.a = k.lo + 1 OFFSET 0) ss');
SELECT same_rows('SELECT * FROM k, LATERAL (SELECT t.c, k.hi + t.a AS s FROM pp t WHERE t.b = k.lo AND t.a < k.hi OFFSET 0) ss');
SELECT same_rows('SELECT * FROM k LEFT JOIN LATERAL (SELECT count(*) AS n FROM pp t WHERE t.b > k.lo) ss ON true');
-- correlated subqueries (SubPlan parameters), in the target list and quals
SELECT same_rows('SELECT k.lo, (SELECT max(t.c || k.hi) FROM pp t WHERE t.b = k.lo) FROM k');
SELECT same_rows('SELECT k.* FROM k WHERE EXISTS (SELECT 1 FROM pp t WHERE t.a = k.hi AND t.b <> k.lo)');
SELECT same_rows('SELECT t.a FROM pp t WHERE t.a > (SELECT max(hi) FROM k WHERE k.lo = t.b)');
-- nested loop parameters
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT same_rows('SELECT k.lo, t.a FROM k JOIN pp t ON t.a = k.hi');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- An operator that returns NULL for non-null inputs is "not true".
SELECT a FROM pp WHERE ARRAY[a, NULL] = ARRAY[1, 2] ORDER BY a;
CREATE FUNCTION null_eq(int, int) RETURNS bool LANGUAGE sql STRICT IMMUTABLE AS
	'SELECT CASE WHEN $1 = $2 THEN true WHEN $1 % 2 = 0 THEN NULL ELSE false END';
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, PROCEDURE = null_eq);
SELECT a FROM pp WHERE a === 3 ORDER BY a;
SELECT count(*) FROM pp WHERE NOT (a === 3) IS NOT FALSE;
SELECT count(*) FROM ph WHERE NOT (a === 3) IS NOT FALSE;

-- Cursors move backward over a FlashScan as over a Seq Scan (without SCROLL
-- too: the plan says it can).
BEGIN;
EXPLAIN (COSTS OFF) SELECT a FROM pp WHERE a % 100 = 7 AND b < 5;
DECLARE cp CURSOR FOR SELECT a FROM pp WHERE a % 100 = 7 AND b < 5;
DECLARE ch CURSOR FOR SELECT a FROM ph WHERE a % 100 = 7 AND b < 5;
FETCH 3 FROM cp;
FETCH 3 FROM ch;
FETCH BACKWARD 2 FROM cp;
FETCH BACKWARD 2 FROM ch;
FETCH ALL FROM cp;
FETCH ALL FROM ch;
FETCH BACKWARD 3 FROM cp;
FETCH BACKWARD 3 FROM ch;
FETCH ABSOLUTE 1 FROM cp;
FETCH ABSOLUTE 1 FROM ch;
FETCH PRIOR FROM cp;
FETCH PRIOR FROM ch;
FETCH NEXT FROM cp;
FETCH NEXT FROM ch;
FETCH LAST FROM cp;
FETCH LAST FROM ch;
COMMIT;

-- pg_stat_user_tables counts FlashScan's scans and rows like a Seq Scan's,
-- and pax's inserts, updates and deletes like heap's
UPDATE pp SET c = 'u' WHERE a <= 10;
DELETE FROM pp WHERE a > 2990;
SELECT pg_stat_force_next_flush();
SELECT relname, seq_scan > 0 AS scanned, seq_tup_read > 0 AS read_rows,
	   n_tup_ins, n_tup_upd, n_tup_del
FROM pg_stat_user_tables WHERE relname = 'pp';

-- The quals keep the planner's cost order: a "column op constant" qual runs
-- on the column arrays ahead of the others only if it costs less than
-- they do.  An expensive one stays behind the cheap qual guarding it, as on
-- heap (it used to run first and raise "odd value 1").
CREATE FUNCTION even_eq(int, int) RETURNS bool LANGUAGE plpgsql STRICT IMMUTABLE COST 1000
	AS $$BEGIN IF $1 % 2 = 1 THEN RAISE EXCEPTION 'odd value %', $1; END IF; RETURN $1 = $2; END$$;
CREATE OPERATOR ==== (PROCEDURE = even_eq, LEFTARG = int, RIGHTARG = int);
SET flashscan.enable = on;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT a FROM pp WHERE a % 2 = 0 AND a ==== 10;
SELECT a FROM pp WHERE a % 2 = 0 AND a ==== 10;
RESET enable_seqscan;
-- Quals of equal cost run in the order written, as on heap: the first one
-- guards the second's error (LIKE's pattern check) or raises its own before
-- the second is tested.
CREATE TABLE ah (id int, a int, b int, t text) USING pax;
INSERT INTO ah SELECT i, i, i + 1, CASE WHEN i % 100 = 0 THEN 'abcX' ELSE 'zzz' END
FROM generate_series(1, 10000) i;
ANALYZE ah;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ah WHERE a >= b AND t LIKE 'abc\';
SELECT count(*) FROM ah WHERE a >= b AND t LIKE 'abc\';
CREATE FUNCTION ratio_ok(int, int) RETURNS bool LANGUAGE plpgsql STRICT COST 1
	AS $$BEGIN RETURN $1 / ($2 - $1 - 1) > 0; END$$;
SELECT count(*) FROM ah WHERE ratio_ok(a, b) AND t = 'never';
RESET enable_seqscan;
DROP FUNCTION ratio_ok(int, int);

-- A qual that may raise an error on some row or has an effect runs row by
-- row, when the row is asked for, as on heap: a LIMIT, an EXISTS or a
-- cursor stops it before the rows it would fail on, a volatile function
-- runs once a row examined, and an UPDATE's qual that reads the table sees
-- the rows updated so far.  (FlashScan used to run every qual over the
-- whole group first.)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT a FROM ah WHERE 1 / (a - 30) <> 7 LIMIT 1;
SELECT a FROM ah WHERE 1 / (a - 30) <> 7 LIMIT 1;
SELECT EXISTS (SELECT 1 FROM ah WHERE 1 / (a - 3000) <> 7);
SELECT a FROM ah WHERE b > 5 AND 1 / (a - 3000) <> 7 LIMIT 1 OFFSET 100;
BEGIN;
DECLARE cur CURSOR FOR SELECT a FROM ah WHERE 1 / (a - 50) <> 7;
FETCH 3 FROM cur;
COMMIT;
-- a pattern read from a column may be invalid on one row; a
-- multidimensional array of columns may not line up on one row
CREATE TABLE pat (id int, s text, p text, x int[], y int[]) USING pax;
INSERT INTO pat SELECT g, 'abc' || g, CASE WHEN g = 3 THEN 'ab\' ELSE 'ab%' END,
	   ARRAY[g, 1], CASE WHEN g = 4 THEN ARRAY[1, 2, 3] ELSE ARRAY[g, 2] END
FROM generate_series(1, 100) g;
SELECT id FROM pat WHERE s LIKE p LIMIT 1;
SELECT id FROM pat WHERE s ~ replace(p, '%', '') AND id < 50 LIMIT 1;
SELECT id FROM pat WHERE ARRAY[x, y] IS NOT NULL LIMIT 1;
-- LIKE fails on a pattern ending in its escape only where the text matches
-- up to it; array and record comparisons fail on some values only
SELECT id FROM pat WHERE s NOT LIKE 'abc3\' LIMIT 1;
CREATE TYPE pat_pair AS (a int, b int);
CREATE TABLE pat2 (id int, j json[], c pat_pair) USING pax;
INSERT INTO pat2 VALUES (1, '{"{}","{}"}', '(2,5)'), (2, '{"{}"}', '(1,5)');
SELECT id FROM pat2 WHERE j <> ARRAY['{}']::json[] LIMIT 1;
SELECT id FROM pat2 WHERE c <> ROW(1) LIMIT 1;
-- an initplan runs only when a row reaches it
CREATE SEQUENCE pat_seq;
SELECT id FROM pat WHERE id = 1 OR id > (SELECT nextval('pat_seq')) LIMIT 1;
SELECT id FROM pat WHERE id = 1 OR id > (SELECT 1 / min(id - id) FROM pat2) LIMIT 1;
SELECT last_value, is_called FROM pat_seq;
-- text operations that fail for their collation: none (two columns of
-- different implicit collations), or a nondeterministic one where only
-- comparisons accept it (starts_with)
CREATE TABLE coll (id int, a text COLLATE "C", b text COLLATE "POSIX") USING pax;
INSERT INTO coll SELECT g, 'x' || g, 'y' || g FROM generate_series(1, 100) g;
SELECT id FROM coll WHERE id = 1 OR a < b LIMIT 1;
SELECT id FROM coll WHERE id = 1 OR a IN (b, 'q') LIMIT 1;
SELECT id FROM coll WHERE id = 1 OR GREATEST(a, b) IS NULL LIMIT 1;
CREATE COLLATION pat_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE collnd (id int, a text COLLATE pat_nd) USING pax;
INSERT INTO collnd SELECT g, 'x' || g FROM generate_series(1, 100) g;
SELECT id FROM collnd WHERE id = 1 OR a ^@ 'x' LIMIT 1;
SELECT count(*) FROM collnd WHERE a = 'X7';
DROP TABLE coll, collnd;
DROP COLLATION pat_nd;
-- an operator put into a user's btree family is not a comparison of ours
CREATE OPERATOR FAMILY pat_fam USING btree;
ALTER OPERATOR FAMILY pat_fam USING btree ADD OPERATOR 3 ~ (text, text);
SELECT id FROM pat WHERE id = 1 OR s ~ p LIMIT 1;
DROP OPERATOR FAMILY pat_fam USING btree;
-- PL/pgSQL fetches its variables as the qual reads them: a record field
-- whose type changed fails where it is read
CREATE FUNCTION pat_fetch() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r record; n int;
BEGIN
	FOR i IN 1..2 LOOP
		IF i = 1 THEN SELECT 5::int AS x INTO r; ELSE SELECT 7::bigint AS x INTO r; END IF;
		SELECT id INTO n FROM pat WHERE id = 1 OR id = r.x LIMIT 1;
	END LOOP;
	RETURN n;
END$$;
SELECT pat_fetch();
DROP FUNCTION pat_fetch();
-- comparisons and constant LIKE patterns still run over the group first
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(x) FROM pat WHERE id < 3 AND s LIKE 'abc%' AND p >= 'a';
DROP SEQUENCE pat_seq;
DROP TABLE pat, pat2;
DROP TYPE pat_pair;
CREATE SEQUENCE ah_seq;
SELECT a FROM ah WHERE b > 0 AND nextval('ah_seq') > 0 LIMIT 3;
SELECT currval('ah_seq') AS qual_calls;
DROP SEQUENCE ah_seq;
CREATE TABLE flags (id int, flag bool, pad text) USING pax;
INSERT INTO flags SELECT g, false, 'x' FROM generate_series(1, 1000) g;
ANALYZE flags;
CREATE FUNCTION flagged() RETURNS bigint LANGUAGE sql VOLATILE
	AS 'SELECT count(*) FROM flags WHERE flag';
EXPLAIN (COSTS OFF) UPDATE flags SET flag = true WHERE NOT flag AND id > 0 AND flagged() < 5;
UPDATE flags SET flag = true WHERE NOT flag AND id > 0 AND flagged() < 5;
SELECT count(*) AS updated FROM flags WHERE flag;
-- still selection first for quals that cannot fail: a group without a
-- match is skipped before its other columns are read
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(id) FROM ah WHERE a < 3 AND t LIKE 'z%';
RESET enable_seqscan;
DROP FUNCTION flagged();
DROP TABLE flags, ah;

DROP OPERATOR ==== (int, int);
DROP FUNCTION even_eq(int, int);
DROP OPERATOR === (int, int);
DROP FUNCTION null_eq(int, int), same_rows(text);
DROP TABLE k, ph, pp;
DROP EXTENSION flashscan;
