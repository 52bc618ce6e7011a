-- bench/workloads/synthetic.sql: the synthetic tables of the seeds.
SET client_min_messages = warning;

-- QDTT's T_k (thesis 3.4): c1 and c2 are independent random permutations of
-- 1..n, the physical order is random with respect to both, a padding column
-- makes k rows fill a page, and c2 has a btree.  Where even an empty pad is
-- too wide for k rows a page (k > 226 with 8 kB pages), fillfactor brings the
-- count down to about k instead.
CREATE OR REPLACE FUNCTION bench_make_tk(tab text, k int, n bigint)
RETURNS TABLE (rows_per_page numeric, pages bigint, size text)
LANGUAGE plpgsql AS $$
DECLARE
	usable int := current_setting('block_size')::int - 24;	-- page header
	tuple int := ((usable / k - 4) / 8) * 8;				-- line pointer, MAXALIGN
	pad int := tuple - 24 - 8 - 4;							-- header, c1 c2, varlena
	ff int := 100;
BEGIN
	IF pad <= 126 - 3 AND pad > 0 THEN
		pad := tuple - 24 - 8 - 1;							-- 1-byte varlena header
	END IF;
	IF pad <= 0 THEN
		pad := NULL;
		WHILE ff > 10 AND (usable - current_setting('block_size')::int * (100 - ff) / 100) / 36 > k LOOP
			ff := ff - 1;
		END LOOP;
	END IF;
	SET LOCAL work_mem = '1GB';
	SET LOCAL client_min_messages = warning;
	SET LOCAL maintenance_work_mem = '1GB';
	EXECUTE format('DROP TABLE IF EXISTS %I', tab);
	EXECUTE format('CREATE TABLE %I (c1 int NOT NULL, c2 int NOT NULL, pad text) WITH (fillfactor = %s, autovacuum_enabled = off)', tab, ff);
	EXECUTE format('ALTER TABLE %I ALTER pad SET STORAGE PLAIN', tab);
	EXECUTE format($q$
		INSERT INTO %I
		SELECT a.c1, b.c2, CASE WHEN %s IS NOT NULL THEN repeat('x', %s) END
		FROM (SELECT i::int AS c1, row_number() OVER (ORDER BY random()) AS rn FROM generate_series(1, %s) i) a
		JOIN (SELECT i::int AS c2, row_number() OVER (ORDER BY random()) AS rn FROM generate_series(1, %s) i) b
		USING (rn)
		ORDER BY rn$q$, tab, coalesce(pad::text, 'NULL'), coalesce(pad, 0), n, n);
	EXECUTE format('CREATE INDEX %I ON %I (c2)', tab || '_c2', tab);
	EXECUTE format('ANALYZE %I', tab);
	RETURN QUERY EXECUTE format(
		'SELECT round(%s::numeric / greatest(pg_relation_size(%L) / current_setting(''block_size'')::int, 1), 1),
				pg_relation_size(%L) / current_setting(''block_size'')::int,
				pg_size_pretty(pg_relation_size(%L))', n, tab, tab, tab);
END
$$;

-- (VACUUM cannot run inside a function: loaders run VACUUM (FREEZE) after.)

-- SSD-sort's tables (thesis 4.5): n rows of about row_bytes bytes each, an
-- int key that is a permutation of 1..n in random physical order (or, with
-- row_order 'key', in key order), and
-- an uncompressed, untoasted padding column.
CREATE OR REPLACE FUNCTION bench_make_sort_table(tab text, row_bytes int, n bigint,
												 row_order text DEFAULT 'random')
RETURNS TABLE (tuple_bytes int, pages bigint, size text)
LANGUAGE plpgsql AS $$
DECLARE
	pad int := greatest(row_bytes - 24 - 4 - 4, 0);
BEGIN
	IF row_order NOT IN ('random', 'key') THEN
		RAISE EXCEPTION 'row_order must be "random" or "key", not "%"', row_order;
	END IF;
	SET LOCAL work_mem = '1GB';
	SET LOCAL client_min_messages = warning;
	EXECUTE format('DROP TABLE IF EXISTS %I', tab);
	EXECUTE format('CREATE TABLE %I (key int NOT NULL, pad text) WITH (autovacuum_enabled = off)', tab);
	EXECUTE format('ALTER TABLE %I ALTER pad SET STORAGE PLAIN', tab);
	EXECUTE format($q$
		INSERT INTO %I
		SELECT i::int, repeat('y', %s)
		FROM generate_series(1, %s) i ORDER BY %s$q$, tab, pad, n,
		CASE row_order WHEN 'key' THEN 'i' ELSE 'random()' END);
	EXECUTE format('ANALYZE %I', tab);
	RETURN QUERY EXECUTE format(
		'SELECT (SELECT pg_column_size(t.*) FROM %I t LIMIT 1),
				pg_relation_size(%L) / current_setting(''block_size'')::int,
				pg_size_pretty(pg_relation_size(%L))', tab, tab, tab);
END
$$;
