--
-- ssd_sort: the SSD Sort custom scan.
--
CREATE EXTENSION ssd_sort;
SELECT extversion FROM pg_extension WHERE extname = 'ssd_sort';
SELECT library_version, preloaded, io_uring, io_uring_error FROM ssd_sort_status();

-- The "ssd_sort." namespace is reserved: unknown settings are rejected.
SET ssd_sort.no_such_setting = 1;
-- GUC bounds.
SET ssd_sort.prefetch_depth = -1;
SET ssd_sort.prefetch_depth = 1025;
SET ssd_sort.fetch_page_cost = -1;
SHOW ssd_sort.enable;
SHOW ssd_sort.prefetch_depth;
SHOW ssd_sort.fetch_page_cost;

-- A table of every key type the tests sort by, wide enough that a Sort of
-- its rows does not fit in work_mem, with NULLs and duplicates.
SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
-- Plans must not depend on what qdtt_costing's residency sampler (when
-- loaded) has seen of these small tables, nor on the machine's memory
-- (measured where effective_cache_size is left at its default).
SET qdtt.use_residency = off;
SET effective_cache_size = '4GB';
CREATE TABLE st (
	id int,
	i int,
	b bigint,
	n numeric,
	t text,
	ts timestamptz,
	u uuid,
	pad text
);
INSERT INTO st
SELECT g,
	   CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 7919) % 1009 END,
	   (g * 104729)::bigint % 100003 * 1000000007,
	   CASE WHEN g % 13 = 0 THEN NULL ELSE ((g * 31) % 997) / 7.0 END,
	   CASE WHEN g % 11 = 0 THEN NULL
			ELSE (ARRAY['apple', 'Apple', 'banana', 'Banana', 'cherry', 'éclair', 'Zebra', 'zebra', '10', '9'])[1 + g % 10]
				 || (g % 37)::text END,
	   timestamptz '2020-01-01 00:00:00+00' + ((g * 7) % 5003) * interval '1 hour',
	   md5((g % 4001)::text)::uuid,
	   repeat(md5(g::text), 6)
FROM generate_series(1, 6000) g;
ANALYZE st;

-- Runs a query (whose ORDER BY ends in the listed key columns) with SSD Sort
-- and with the built-in Sort; both must give the same sequence of keys and
-- the same multiset of rows (ties may come in any order).
CREATE FUNCTION sort_check(q text, keys text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
	keys_ssd text[];
	rows_ssd text[];
	keys_builtin text[];
	rows_builtin text[];
	keyq text := format('SELECT array_agg(ROW(%s)::text) FROM (%s) s', keys, q);
	rowq text := format('SELECT array_agg(s::text ORDER BY s::text) FROM (%s) s', q);
BEGIN
	PERFORM set_config('enable_sort', 'off', true);
	PERFORM set_config('ssd_sort.enable', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || keyq LOOP
		plan := plan || line;
	END LOOP;
	IF plan NOT LIKE '%SSD Sort%' THEN
		RETURN 'SSD Sort not chosen: ' || plan;
	END IF;
	EXECUTE keyq INTO keys_ssd;
	EXECUTE rowq INTO rows_ssd;
	PERFORM set_config('enable_sort', 'on', true);
	PERFORM set_config('ssd_sort.enable', 'off', true);
	EXECUTE keyq INTO keys_builtin;
	EXECUTE rowq INTO rows_builtin;
	PERFORM set_config('ssd_sort.enable', 'on', true);
	IF keys_ssd IS DISTINCT FROM keys_builtin THEN
		RETURN 'key order differs';
	END IF;
	IF rows_ssd IS DISTINCT FROM rows_builtin THEN
		RETURN 'rows differ';
	END IF;
	RETURN 'same (' || coalesce(array_length(keys_ssd, 1), 0) || ' rows)';
END
$$;

-- Every key type, directions, NULL placement, multiple keys, collations,
-- expressions.
SELECT q, sort_check(q, k) FROM (VALUES
	('SELECT * FROM st ORDER BY i', 'i'),
	('SELECT * FROM st ORDER BY i DESC', 'i'),
	('SELECT * FROM st ORDER BY i NULLS FIRST', 'i'),
	('SELECT * FROM st ORDER BY i DESC NULLS LAST', 'i'),
	('SELECT * FROM st ORDER BY b', 'b'),
	('SELECT * FROM st ORDER BY n DESC, i', 'n, i'),
	('SELECT * FROM st ORDER BY t', 't'),
	('SELECT * FROM st ORDER BY t COLLATE "C"', 't'),
	('SELECT * FROM st ORDER BY t COLLATE "und-x-icu" DESC', 't'),
	('SELECT * FROM st ORDER BY ts DESC', 'ts'),
	('SELECT * FROM st ORDER BY u', 'u'),
	('SELECT * FROM st ORDER BY i, t DESC NULLS LAST, id', 'i, t, id'),
	('SELECT lower(t) AS lt, * FROM st ORDER BY lower(t), id', 'lt, id'),
	('SELECT i % 7 AS m, * FROM st ORDER BY i % 7 DESC, b', 'm, b'),
	('SELECT id, t FROM st WHERE i > 500 ORDER BY t, id', 't, id')
) AS v(q, k);

-- EXPLAIN shows the keys as a Sort would, the pair width and the prefetch depth.
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i DESC NULLS LAST, t COLLATE "C", lower(t);
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM st WHERE b > 0 ORDER BY n;

-- EXPLAIN ANALYZE: pairs sorted and rows fetched, runs and merge passes,
-- temp written far below the built-in Sort's, prefetch depth within bounds.
CREATE FUNCTION plan_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
	RETURN (j -> 0 -> 'Plan')::jsonb;
END
$$;
SELECT p ->> 'Node Type' AS node, p ->> 'Custom Plan Provider' AS provider,
	   p ->> 'Sort Method' AS method, p ->> 'Sort Space Type' AS space,
	   (p ->> 'Pairs Sorted')::int AS pairs, (p ->> 'Rows Fetched')::int AS fetched,
	   (p ->> 'Sorted Runs')::int > 1 AS several_runs,
	   (p ->> 'Merge Passes')::int >= 1 AS merged,
	   (p ->> 'Prefetch Depth Reached')::int <= 32 AS depth_bounded,
	   (p ->> 'Heap Page Visits')::int <= 6000 AS visits_bounded,
	   p ? 'Time To First Row' AS has_ttfr
FROM plan_json('SELECT * FROM st ORDER BY u') p;
SELECT (p ->> 'Temp Written Blocks')::int AS ssd_temp
FROM plan_json('SELECT * FROM st ORDER BY u') p \gset
SET enable_sort = on;
SET ssd_sort.enable = off;
SELECT (p ->> 'Temp Written Blocks')::int AS builtin_temp
FROM plan_json('SELECT * FROM st ORDER BY u') p \gset
SELECT :ssd_temp > 0 AS ssd_spilled, :ssd_temp * 5 < :builtin_temp AS temp_far_smaller;
RESET enable_sort;
RESET ssd_sort.enable;

-- With prefetching off nothing is prefetched; the results are the same.
SET ssd_sort.prefetch_depth = 0;
SET enable_sort = off;
SELECT (p ->> 'Prefetches Issued')::int AS prefetches, (p ->> 'Prefetch Depth') AS depth
FROM plan_json('SELECT * FROM st ORDER BY b') p;
SELECT sort_check('SELECT * FROM st ORDER BY b, id', 'b, id');
RESET ssd_sort.prefetch_depth;
RESET enable_sort;

-- Where the planner does not offer SSD Sort.
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i LIMIT 10;          -- top-N
PREPARE top_n(int) AS SELECT * FROM st ORDER BY i LIMIT $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE top_n(10);                             -- a limit known at run time
RESET plan_cache_mode;
DEALLOCATE top_n;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i FOR UPDATE;        -- row locks
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY random();            -- volatile key
-- keys the plan above the fetch would compute again: a stable function (a
-- cursor's later fetches could see another value), a user's function
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i * length(current_setting('work_mem')), id;
CREATE FUNCTION st_key(int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN $1 % 10; END';
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY st_key(i), id;
DROP FUNCTION st_key(int);
-- a subquery (runs again; a volatile function inside it is not seen as one),
-- a conversion through an output function (float8out reads extra_float_digits)
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY (SELECT random() WHERE st.i > -1), id;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY (i / 7.0)::float8::text, id;
-- (a built-in immutable expression gives the same value again: offered)
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i % 10, id;
SET work_mem = '64MB';
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i;                   -- fits in memory
SET work_mem = '64kB';
SET ssd_sort.enable = off;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i;                   -- switched off
RESET ssd_sort.enable;

-- A merge join can take its input from SSD Sort.
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM st a JOIN st b ON a.i = b.id;
SELECT count(*), sum(a.id::bigint * b.id) FROM st a JOIN st b ON a.i = b.id;
RESET enable_hashjoin;
RESET enable_nestloop;
SET ssd_sort.enable = off;
SELECT count(*), sum(a.id::bigint * b.id) FROM st a JOIN st b ON a.i = b.id;
RESET ssd_sort.enable;

-- Cursors: forward, backward and scroll.  SSD Sort runs backward as Sort
-- does, so a SCROLL cursor needs no Materialize and a cursor declared
-- without SCROLL scrolls as it would over Sort.
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id, i FROM st ORDER BY i, id;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, i FROM st ORDER BY i, id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH ABSOLUTE 100 FROM c;
MOVE FORWARD ALL IN c;
FETCH BACKWARD 1 FROM c;
COMMIT;
BEGIN;
DECLARE f CURSOR FOR SELECT id, i FROM st ORDER BY i, id;
EXPLAIN (COSTS OFF) DECLARE f2 CURSOR FOR SELECT id, i FROM st ORDER BY i, id;
FETCH 2 FROM f;
MOVE 5000 IN f;
FETCH 2 FROM f;
FETCH BACKWARD 3 FROM f;
FETCH PRIOR FROM f;
FETCH FIRST FROM f;
FETCH PRIOR FROM f;
FETCH NEXT FROM f;
COMMIT;

-- Every way of moving a cursor, over pairs sorted in memory and on disk,
-- against the built-in Sort: the same rows in the same order.
CREATE FUNCTION cursor_walk(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	out text := '';
	moves text[] := ARRAY['FETCH 3', 'FETCH BACKWARD 2', 'MOVE 40', 'FETCH PRIOR',
		'MOVE FORWARD ALL', 'FETCH BACKWARD 1', 'FETCH NEXT', 'FETCH PRIOR',
		'MOVE BACKWARD ALL', 'FETCH NEXT', 'FETCH PRIOR', 'FETCH LAST',
		'FETCH ABSOLUTE 100', 'FETCH RELATIVE -33', 'FETCH ABSOLUTE -2',
		'FETCH FIRST', 'MOVE 5000', 'FETCH BACKWARD 40', 'FETCH 70',
		'FETCH ABSOLUTE -3', 'FETCH PRIOR', 'FETCH LAST', 'FETCH PRIOR',
		'MOVE FORWARD ALL', 'MOVE BACKWARD 5', 'FETCH 10', 'FETCH PRIOR'];
	m text;
BEGIN
	EXECUTE format('DECLARE walk CURSOR FOR %s', q);
	FOREACH m IN ARRAY moves LOOP
		IF m LIKE 'MOVE%' THEN
			EXECUTE m || ' IN walk';
		ELSE
			FOR r IN EXECUTE m || ' FROM walk' LOOP
				out := out || coalesce(r.id::text, '-') || ',';
			END LOOP;
		END IF;
		out := out || '|';
	END LOOP;
	EXECUTE 'CLOSE walk';
	RETURN md5(out);
END $$;
-- Rows of 400 bytes: at 1MB the pairs fit in memory, the rows do not.
CREATE TABLE walk_t AS SELECT id, i, lpad(t, 400, 'x') AS pad FROM st;
ANALYZE walk_t;
EXPLAIN (COSTS OFF) SELECT id, i, pad FROM walk_t ORDER BY i, id;
CREATE TEMP TABLE walks AS SELECT 'ssd, disk' AS how, cursor_walk('SELECT id, i, pad FROM walk_t ORDER BY i, id') AS walk;
SET work_mem = '1MB';
INSERT INTO walks SELECT 'ssd, memory', cursor_walk('SELECT id, i, pad FROM walk_t ORDER BY i, id');
SET ssd_sort.enable = off;
INSERT INTO walks SELECT 'built-in', cursor_walk('SELECT id, i, pad FROM walk_t ORDER BY i, id');
RESET ssd_sort.enable;
SET work_mem = '64kB';
SELECT how, walk = (SELECT walk FROM walks WHERE how = 'built-in') AS same_rows FROM walks ORDER BY how;
DROP TABLE walk_t;

-- Rescans: a correlated subquery (changed parameter: sorted afresh) and an
-- uncorrelated one re-read for each outer row (the kept pairs are re-read).
EXPLAIN (COSTS OFF)
SELECT v, (SELECT md5(string_agg(id::text, ',')) FROM
			(SELECT id FROM st WHERE st.i > v.v * 100 ORDER BY t, id) s) AS ids
FROM (VALUES (1), (2), (3)) v(v);
CREATE TEMP TABLE rescan_results AS
SELECT 'ssd' AS how, v, (SELECT md5(string_agg(id::text, ',')) FROM
			(SELECT id FROM st WHERE st.i > v.v * 100 ORDER BY t, id) s) AS ids
FROM (VALUES (1), (2), (3)) v(v);
EXPLAIN (COSTS OFF)
SELECT v, (SELECT sum(id) FROM (SELECT id, row_number() OVER () AS rn
		   FROM (SELECT id FROM st WHERE i < 1000 ORDER BY u, id) o) s
		   WHERE rn = v.v * 10) AS id_at_rank
FROM (VALUES (1), (2), (3)) v(v);
INSERT INTO rescan_results
SELECT 'ssd', -v, (SELECT sum(id) FROM (SELECT id, row_number() OVER () AS rn
		   FROM (SELECT id FROM st WHERE i < 1000 ORDER BY u, id) o) s
		   WHERE rn = v.v * 10)::text AS id_at_rank
FROM (VALUES (1), (2), (3)) v(v);
SET ssd_sort.enable = off;
SET enable_sort = on;
INSERT INTO rescan_results
SELECT 'builtin' AS how, v, (SELECT md5(string_agg(id::text, ',')) FROM
			(SELECT id FROM st WHERE st.i > v.v * 100 ORDER BY t, id) s) AS ids
FROM (VALUES (1), (2), (3)) v(v);
INSERT INTO rescan_results
SELECT 'builtin', -v, (SELECT sum(id) FROM (SELECT id, row_number() OVER () AS rn
		   FROM (SELECT id FROM st WHERE i < 1000 ORDER BY u, id) o) s
		   WHERE rn = v.v * 10)::text AS id_at_rank
FROM (VALUES (1), (2), (3)) v(v);
SELECT v, count(DISTINCT ids) AS distinct_results, count(*) AS runs
FROM rescan_results GROUP BY v ORDER BY v;
RESET enable_sort;
RESET ssd_sort.enable;

-- Costs: the fetch pays a visit per row, cached or not.  Many compressed
-- rows a page (the whole-row Sort is narrow too): the built-in Sort wins.
-- The same number of rows 2 kB wide, stored plain: SSD Sort wins.  Cache
-- shares from effective_cache_size here (qdtt.use_residency is off).
CREATE TABLE narrow AS
SELECT g AS id, (g * 7919) % 100003 AS k, repeat(md5((g % 10)::text), 70) AS pad
FROM generate_series(1, 20000) g;
ANALYZE narrow;
SELECT relpages < 20000 / 20 AS many_rows_a_page FROM pg_class WHERE relname = 'narrow';
EXPLAIN (COSTS OFF) SELECT * FROM narrow ORDER BY k;
CREATE TABLE wide (id int, k int, pad text);
ALTER TABLE wide ALTER pad SET STORAGE PLAIN;
INSERT INTO wide SELECT id, k, left(pad, 2000) FROM narrow;
ANALYZE wide;
EXPLAIN (COSTS OFF) SELECT * FROM wide ORDER BY k;
DROP TABLE wide;
RESET ssd_sort.page_visit_cost;
SET ssd_sort.page_visit_cost = -1;
SET enable_sort = off;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id FROM narrow ORDER BY k;
-- With page costs set for data in memory (below a cached page's price) the
-- costs stay positive and ordered.
SET seq_page_cost = 0.1;
SET random_page_cost = 0.1;
CREATE FUNCTION plan_costs(q text, OUT startup float8, OUT total float8)
LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
	startup := (j -> 0 -> 'Plan' ->> 'Startup Cost')::float8;
	total := (j -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
SELECT startup >= 0 AS startup_ok, total >= startup AS total_ok
FROM plan_costs('SELECT * FROM narrow ORDER BY k');
DROP FUNCTION plan_costs(text);
RESET seq_page_cost;
RESET random_page_cost;
SET enable_sort = on;
DROP TABLE narrow;

-- Parallel SSD Sort: each participant sorts and fetches the rows of its
-- share of a Parallel Seq Scan; Gather Merge merges them.  Same results as
-- the built-in sort.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM st ORDER BY i, id;
SELECT q, sort_check(q, k) FROM (VALUES
	('SELECT * FROM st ORDER BY i, id', 'i, id'),
	('SELECT * FROM st ORDER BY t COLLATE "C" DESC, id', 't, id'),
	('SELECT id, n FROM st WHERE i > 500 ORDER BY n NULLS FIRST, id', 'n, id')
) AS v(q, k);
-- Every row is sorted and fetched once, by the leader or a worker.
SELECT g ->> 'Node Type' AS top, p ->> 'Custom Plan Provider' AS provider,
	   (p ->> 'Pairs Sorted')::int +
	   coalesce((SELECT sum((w ->> 'Pairs Sorted')::int)
				 FROM jsonb_array_elements(p -> 'SSD Sort Workers') w), 0) AS pairs,
	   (p ->> 'Rows Fetched')::int +
	   coalesce((SELECT sum((w ->> 'Rows Fetched')::int)
				 FROM jsonb_array_elements(p -> 'SSD Sort Workers') w), 0) AS fetched
FROM plan_json('SELECT * FROM st ORDER BY i') g, LATERAL (SELECT g -> 'Plans' -> 0) x(p);
-- A key only the leader may compute (parallel restricted) is never sorted
-- in a worker: a user's function, it gets no SSD Sort at all (the plan
-- above the fetch would call it again).
CREATE TEMP TABLE key_offset AS SELECT 7 AS o;
CREATE FUNCTION restricted_key(int) RETURNS int LANGUAGE plpgsql STABLE
PARALLEL RESTRICTED AS $$ BEGIN RETURN $1 + (SELECT o FROM key_offset); END $$;
EXPLAIN (COSTS OFF) SELECT id FROM st ORDER BY restricted_key(i), id;
DROP FUNCTION restricted_key(int);
DROP TABLE key_offset;
-- A rescanned Gather Merge (in a subplan run once per outer row) sorts
-- afresh: each run gives every row once.
EXPLAIN (COSTS OFF)
SELECT o, (SELECT count(*) FROM (SELECT id FROM st ORDER BY i, id OFFSET 0) x
		   WHERE x.id % 3 = o % 3)
FROM generate_series(1, 3) o;
SELECT o, (SELECT count(*) FROM (SELECT id FROM st ORDER BY i, id OFFSET 0) x
		   WHERE x.id % 3 = o % 3)
FROM generate_series(1, 3) o;
SET enable_sort = on;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Dead and HOT-updated tuples: fetches follow the visible versions.
UPDATE st SET pad = upper(pad) WHERE id % 3 = 0;      -- HOT (no index)
DELETE FROM st WHERE id % 5 = 0;
SELECT sort_check('SELECT * FROM st ORDER BY ts, id', 'ts, id');
-- Still estimated large, but one row and then no row left.
DELETE FROM st WHERE id <> 7;
SELECT sort_check('SELECT * FROM st ORDER BY t', 't');
DELETE FROM st;
SELECT sort_check('SELECT * FROM st ORDER BY t', 't');

-- Cancellation in the sort phase (a slow qual in the pair scan) and in the
-- fetch phase (a slow function in the output); the session carries on and
-- trace_sort is left as it was.
CREATE TABLE slow AS SELECT g AS id, (g * 7) % 1000 AS k, repeat('x', 300) AS pad
FROM generate_series(1, 2000) g;
ANALYZE slow;
CREATE FUNCTION slow_true(int) RETURNS bool LANGUAGE sql AS 'SELECT pg_sleep(0.01) IS NOT NULL';
CREATE FUNCTION slow_id(int) RETURNS int LANGUAGE sql AS 'SELECT $1 FROM pg_sleep(0.01)';
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM slow WHERE slow_true(k) ORDER BY k;
EXPLAIN (COSTS OFF) SELECT slow_id(id), pad FROM slow ORDER BY k;
SET statement_timeout = '300ms';
SELECT count(*) FROM (SELECT * FROM slow WHERE slow_true(k) ORDER BY k) s;
SELECT count(*) FROM (SELECT slow_id(id), pad FROM slow ORDER BY k) s;
RESET statement_timeout;
SHOW trace_sort;
SELECT count(*) FROM (SELECT * FROM slow ORDER BY k) s;
-- The events trace_sort turns on, tuplesort's and the abbreviated keys' of a
-- text sort, stay out of the log and away from the client.
CREATE TABLE abbrev AS SELECT g AS id, md5(g::text) AS t, repeat('x', 300) AS pad
FROM generate_series(1, 3000) g;
ANALYZE abbrev;
EXPLAIN (COSTS OFF) SELECT * FROM abbrev ORDER BY t COLLATE "C";
SET client_min_messages = log;
SELECT count(*) FROM (SELECT * FROM abbrev ORDER BY t COLLATE "C") s;
RESET client_min_messages;
DROP TABLE abbrev;
RESET enable_sort;

DROP TABLE st, slow;
DROP FUNCTION sort_check(text, text), plan_json(text), slow_true(int), slow_id(int);
RESET work_mem;
RESET max_parallel_workers_per_gather;
RESET qdtt.use_residency;
RESET effective_cache_size;
DROP EXTENSION ssd_sort;
