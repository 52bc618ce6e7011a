--
-- qdtt_costing: installation, GUCs, the model (interpolation, view, errors)
-- and the planner with hand-made models.
--
CREATE EXTENSION qdtt_costing;
SELECT extversion FROM pg_extension WHERE extname = 'qdtt_costing';
SELECT library_version, preloaded, io_uring, io_uring_error FROM qdtt_costing_status();

-- The "qdtt_costing." and "qdtt." namespaces are reserved.
SET qdtt_costing.no_such_setting = 1;
SET qdtt.no_such_setting = 1;

-- GUC bounds.
SET qdtt.max_queue_depth = 0;
SET qdtt.max_queue_depth = 1024;
SET qdtt.stop_threshold = 1.5;
SET qdtt.queue_depth_budget = -1;
SHOW qdtt.enable;
SHOW qdtt.max_queue_depth;
SHOW qdtt.stop_threshold;
SHOW qdtt.queue_depth_budget;

-- No model yet; bad arguments.
SELECT qdtt_cost(1, 1);
SELECT qdtt_cost(16, 1, 'no_such_tablespace');
SELECT qdtt_cost(0.5, 1);
SELECT qdtt_cost(16, 0);
SELECT qdtt_cost('Infinity', 1);
SELECT * FROM qdtt_calibrate('pg_global');
SELECT * FROM qdtt_calibrate('no_such_tablespace');
SELECT * FROM qdtt_calibrate('pg_default', 4);
SELECT * FROM qdtt_calibrate('pg_default', 64, 0);

-- Only superusers calibrate.
CREATE ROLE qdtt_nobody;
SET ROLE qdtt_nobody;
SELECT * FROM qdtt_calibrate();
RESET ROLE;

-- qdtt_explain() checks privileges as EXPLAIN does: no plan, no estimates
-- of a table the caller may not read.
CREATE TABLE qdtt_secret (id int);
SET ROLE qdtt_nobody;
SELECT count(*) FROM qdtt_explain('SELECT * FROM qdtt_secret WHERE id < 10');
RESET ROLE;
GRANT SELECT ON qdtt_secret TO qdtt_nobody;
SET ROLE qdtt_nobody;
SELECT count(*) > 0 AS planned FROM qdtt_explain('SELECT * FROM qdtt_secret WHERE id < 10');
RESET ROLE;
DROP TABLE qdtt_secret;
DROP ROLE qdtt_nobody;

--
-- A model inserted by hand: bands 1, 16, 1024 pages; queue depths 1, 2, 4, 8.
--
INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
SELECT 'pg_default', b, q,
	   CASE WHEN b = 1 THEN 10 - q				-- sequential: 9, 8, 6, 2
			ELSE (CASE b WHEN 16 THEN 30 ELSE 40 END) / q	-- random: c / q
	   END
FROM unnest(ARRAY[1, 16, 1024]) b, unnest(ARRAY[1, 2, 4, 8]) q;

-- Exact at every calibrated point.
SELECT band_pages, queue_depth, cost_us,
	   qdtt_cost(band_pages, queue_depth) = cost_us AS exact
FROM qdtt_calibration ORDER BY band_pages, queue_depth;

-- Linear in band at a calibrated queue depth: halfway between bands 16 and
-- 1024 at QD 1 is halfway between 30 and 40.
SELECT qdtt_cost(520, 1) AS band_520_qd_1, qdtt_cost(8.5, 2) AS band_8_5_qd_2;
-- Then linear in queue depth: QD 3 is halfway between QD 2 and QD 4, QD 6
-- halfway between 4 and 8, at an interpolated band too.
SELECT qdtt_cost(16, 3) AS band_16_qd_3,
	   qdtt_cost(1024, 6) AS band_1024_qd_6,
	   qdtt_cost(520, 3) AS band_520_qd_3,
	   (qdtt_cost(520, 2) + qdtt_cost(520, 4)) / 2 AS check_520_qd_3;
-- Linearity checked across a sweep: equal steps give equal differences.
SELECT count(DISTINCT round((qdtt_cost(16 + 101 * (i + 1), 1) - qdtt_cost(16 + 101 * i, 1))::numeric, 9))
	   AS distinct_band_steps,
	   count(DISTINCT round((qdtt_cost(16, 4 + 0.5 * (i % 8 + 1)) - qdtt_cost(16, 4 + 0.5 * (i % 8)))::numeric, 9))
	   AS distinct_qd_steps
FROM generate_series(0, 7) i;
-- Clamped outside the calibrated ranges.
SELECT qdtt_cost(1e9, 1) AS huge_band, qdtt_cost(16, 256) AS deep_queue;

-- The view: one row per band.
SELECT tablespace, band_pages, queue_depths, cost_us, page_cost, measured,
	   qd1_over_max_qd, max_beneficial_queue_depth
FROM qdtt_model;

-- An incomplete model is reported and not used.
DELETE FROM qdtt_calibration WHERE band_pages = 16 AND queue_depth = 4;
SELECT qdtt_cost(16, 1);
SELECT max_beneficial_queue_depth FROM qdtt_model LIMIT 1;
DELETE FROM qdtt_calibration;
-- So is one whose points span more than any device does (hand-edited):
-- its page costs would overflow.
INSERT INTO qdtt_calibration VALUES ('pg_default', 1, 1, 1e-300, true), ('pg_default', 1, 2, 1e-300, true),
	('pg_default', 1000000000000, 1, 1e300, true), ('pg_default', 1000000000000, 2, 1e300, true);
SELECT qdtt_cost(16, 1);
DELETE FROM qdtt_calibration;

--
-- The planner.  T: Query 3.1's table, 33 rows per page, c1 and c2
-- independent permutations, a btree on c2.
--
CREATE TABLE t (c1 int, c2 int, pad text);
ALTER TABLE t ALTER pad SET STORAGE plain;
INSERT INTO t
SELECT (i::bigint * 7919) % 100000, (i::bigint * 104729) % 100000, repeat('x', 204)
FROM generate_series(1, 100000) i;
CREATE INDEX t_c2 ON t (c2);
CREATE TABLE small (k int, v text);
INSERT INTO small SELECT i * 50, repeat('y', 100) FROM generate_series(1, 400) i;
SET default_statistics_target = 1000;	-- ANALYZE reads every row: stable estimates
VACUUM ANALYZE t, small;
RESET default_statistics_target;
SELECT relpages > 2900 AS t_is_big, (SELECT relpages FROM pg_class WHERE relname = 'small') > 2 AS small_has_pages
FROM pg_class WHERE relname = 't';

SET max_parallel_workers_per_gather = 4;
SET enable_bitmapscan = off;	-- Query 3.1 as the thesis ran it: IS vs FTS

-- A function that returns EXPLAIN's text with qdtt.enable on or off.
CREATE FUNCTION plan_of(query text, qdtt boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	result text := '';
BEGIN
	PERFORM set_config('qdtt.enable', qdtt::text, true);
	FOR line IN EXECUTE 'EXPLAIN ' || query LOOP
		result := result || line || E'\n';
	END LOOP;
	RETURN result;
END $$;

-- Without a model, nothing changes.
SELECT plan_of('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999', true) =
	   plan_of('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999', false) AS same_without_model;

-- A model of a device that gains from queue depth: random reads cost
-- 8 x a sequential page at QD 1 and 1 x at QD 8.
INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
SELECT 'pg_default', b, q, CASE WHEN b = 1 THEN 10 ELSE 80 / q END
FROM unnest(ARRAY[1, 16, 1000000]) b, unnest(ARRAY[1, 2, 4, 8]) q;
SELECT max_beneficial_queue_depth FROM qdtt_model LIMIT 1;

-- qdtt_apply_prefetch() sets the model's depth as the tablespace's prefetch
-- depth, through ALTER TABLESPACE and its privilege checks.
SELECT qdtt_apply_prefetch('pg_default');
SELECT spcoptions FROM pg_tablespace WHERE spcname = 'pg_default';
ALTER TABLESPACE pg_default RESET (effective_io_concurrency, maintenance_io_concurrency);
SELECT qdtt_apply_prefetch('pg_global');
SELECT qdtt_apply_prefetch('no_such_tablespace');
CREATE ROLE qdtt_prefetch_nobody;
GRANT USAGE ON SCHEMA public TO qdtt_prefetch_nobody;
SET ROLE qdtt_prefetch_nobody;
SELECT qdtt_apply_prefetch('pg_default');
RESET ROLE;
REVOKE USAGE ON SCHEMA public FROM qdtt_prefetch_nobody;
DROP ROLE qdtt_prefetch_nobody;
SELECT spcoptions FROM pg_tablespace WHERE spcname = 'pg_default';

-- Query 3.1 at 2%: stock picks a (parallel) seq scan, QDTT a parallel
-- index scan with the model's degree (beneficial QD 8, capped at 4 workers).
SET qdtt.enable = off;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
SET qdtt.enable = on;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
-- The same answer either way.
SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;

-- A model measured on another device (a restore on other hardware, a
-- tablespace created again elsewhere) is not used: stock's plan, a note in
-- qdtt_explain, an error from the functions that need the model.  The
-- model table's trigger makes every session reload the models.
INSERT INTO qdtt_calibration_run (tablespace, device) VALUES ('pg_default', 'sdz (8:240)');
UPDATE qdtt_calibration SET cost_us = cost_us WHERE false;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
SELECT DISTINCT note FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999');
\set VERBOSITY terse
SELECT qdtt_cost(16, 1);
\set VERBOSITY default
-- Measured where it is now (a file system with no device number of its own
-- is not compared): used again.
UPDATE qdtt_calibration_run SET device = 'tmpfs (0:45)' WHERE tablespace = 'pg_default';
UPDATE qdtt_calibration SET cost_us = cost_us WHERE false;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
DELETE FROM qdtt_calibration_run;
UPDATE qdtt_calibration SET cost_us = cost_us WHERE false;

-- At 50% the seq scan stays (random reads never beat reading it all).
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 50000;

-- qdtt_explain shows the candidates with both costs and marks the plan's.
-- (A parallel seq scan's degree follows the CPU count, so it is not shown.)
SELECT relation, scan, index,
	   CASE WHEN scan LIKE '%Seq Scan' THEN NULL ELSE workers END AS workers,
	   band_pages, CASE WHEN scan LIKE '%Seq Scan' THEN NULL ELSE queue_depth END AS queue_depth,
	   qdtt_cost < stock_cost AS cheaper_with_qdtt, chosen
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999')
ORDER BY scan;
SELECT count(*) FILTER (WHERE chosen) AS chosen_rows FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999');
SELECT * FROM qdtt_explain('UPDATE t SET c1 = 0');
SELECT * FROM qdtt_explain('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d');
SELECT * FROM qdtt_explain('SELECT 1; SELECT 2');
-- a rule may rewrite a statement into none: an error, not a crash
CREATE TEMP TABLE qdtt_ruled (a int);
CREATE RULE qdtt_nothing AS ON INSERT TO qdtt_ruled DO INSTEAD NOTHING;
SELECT * FROM qdtt_explain('INSERT INTO qdtt_ruled VALUES (1)');
DROP TABLE qdtt_ruled;
-- Every query level is listed and marked: UNION branches, a CTE, a
-- correlated subquery (each level numbers its relations from 1).
SELECT relation, scan, index, chosen
FROM qdtt_explain('SELECT c1 FROM t WHERE c2 = 5 UNION ALL SELECT k FROM small WHERE k = 100')
WHERE chosen ORDER BY relation;
SELECT relation, scan, index, chosen
FROM qdtt_explain('WITH c AS MATERIALIZED (SELECT * FROM small WHERE k < 500)
  SELECT (SELECT max(c1) FROM t WHERE t.c2 = c.k) FROM c')
WHERE chosen ORDER BY relation;

-- A model without memory points prices every page on the device: no
-- residency, all I/O on the device, nothing added for work in memory.
SELECT bool_and(shared_buffers_fraction IS NULL AND os_cache_fraction IS NULL) AS no_residency,
	   bool_and(io_cost_memory = 0 AND io_cost_device > 0) AS all_on_device,
	   bool_and(memory_work_cost = 0) AS no_memory_work
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999');
-- Memory points are checked like the device's.
INSERT INTO qdtt_memory_cost VALUES ('pg_default', -1, 0.4, 2, 2, 0.05, 0.05, 1.3, 0);
INSERT INTO qdtt_memory_cost VALUES ('pg_default', 0.4, 0.4, 'Infinity', 2, 0.05, 0.05, 1.3, 0);
INSERT INTO qdtt_memory_cost (tablespace, shared_buffers_random_us) VALUES ('pg_default', 0.4);
-- A memory cost beyond any device's (hand-entered) leaves the model unused,
-- as a device point would: its page costs would be infinite or NaN.
INSERT INTO qdtt_memory_cost VALUES ('pg_default', 1e300, 1e300, 1e300, 1e300, 0.05, 0.05, 1.3, 0);
SELECT qdtt_cost(16, 1);
SELECT count(*) FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999') WHERE qdtt_cost = 'NaN' OR qdtt_cost = 'Infinity';
DELETE FROM qdtt_memory_cost;
-- An error in the query text points into it.
SELECT count(*) FROM qdtt_explain('SELECT nosuchcol FROM t');
SELECT count(*) FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 = 1 / 0');

-- Bitmap heap scans are costed at the prefetch distance
-- (effective_io_concurrency), and, on a device that gains from it, every
-- page at the random price: cheaper than at queue depth 1.
SET enable_bitmapscan = on;
SET effective_io_concurrency = 1;
SELECT queue_depth AS qd_eic_1, qdtt_cost AS cost_eic_1
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 1199') WHERE scan = 'Bitmap Heap Scan' \gset
SET effective_io_concurrency = 8;
SELECT :qd_eic_1 AS qd_eic_1, queue_depth AS qd_eic_8, qdtt_cost < :cost_eic_1 AS cheaper_with_prefetch
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 1199') WHERE scan = 'Bitmap Heap Scan';
RESET effective_io_concurrency;
SET enable_bitmapscan = off;

-- The queue-depth budget caps the degree: a budget of 2 leaves one worker
-- (plus the leader), and at budget 1 no parallel index scan is assumed.
SET qdtt.queue_depth_budget = 2;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
SET qdtt.queue_depth_budget = 1;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
RESET qdtt.queue_depth_budget;

-- The table's parallel_workers bounds the degree too.
ALTER TABLE t SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
ALTER TABLE t SET (parallel_workers = 0);
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999;
ALTER TABLE t RESET (parallel_workers);

-- A parallel seq scan is priced at the participants' sequential cost only
-- where the model has a gain of at least qdtt.stop_threshold (20%) there:
-- a smaller gain counts as none, a loss always counts.
CREATE TEMP TABLE pfts_cost (label text, workers int, cost float8);
INSERT INTO pfts_cost SELECT 'none', workers, qdtt_cost
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 50000') WHERE scan = 'Parallel Seq Scan';
UPDATE qdtt_calibration SET cost_us = 9 WHERE band_pages = 1 AND queue_depth > 1;
INSERT INTO pfts_cost SELECT 'gain 10%', workers, qdtt_cost
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 50000') WHERE scan = 'Parallel Seq Scan';
UPDATE qdtt_calibration SET cost_us = 5 WHERE band_pages = 1 AND queue_depth > 1;
INSERT INTO pfts_cost SELECT 'gain 50%', workers, qdtt_cost
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 50000') WHERE scan = 'Parallel Seq Scan';
UPDATE qdtt_calibration SET cost_us = 12 WHERE band_pages = 1 AND queue_depth > 1;
INSERT INTO pfts_cost SELECT 'loss 20%', workers, qdtt_cost
FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 50000') WHERE scan = 'Parallel Seq Scan';
UPDATE qdtt_calibration SET cost_us = 10 WHERE band_pages = 1;
SELECT p.label, count(*) > 0 AS has_parallel_seq_scans,
	   bool_and(p.cost = n.cost) AS priced_as_serial_io,
	   bool_and(p.cost < n.cost) AS cheaper, bool_and(p.cost > n.cost) AS dearer
FROM pfts_cost p JOIN pfts_cost n ON n.label = 'none' AND n.workers = p.workers
WHERE p.label <> 'none' GROUP BY p.label ORDER BY p.label;

-- A tablespace-level random_page_cost wins: stock costing for it.
ALTER TABLESPACE pg_default SET (random_page_cost = 3);
SELECT plan_of('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999', true) =
	   plan_of('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999', false) AS stock_with_tablespace_costs;
SELECT DISTINCT note FROM qdtt_explain('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 2999');
ALTER TABLESPACE pg_default RESET (random_page_cost);

--
-- A flat model (no queue-depth gain) priced like stock (random = 4 x
-- sequential): plans AND costs are exactly stock's, for scans, index-only
-- scans, ordered scans, bitmap scans, parallel plans and parameterized
-- nested loops, where bitmap scans do not prefetch (with prefetch, below,
-- each bitmap page is a random read, which core's prices do not say).
--
SET effective_io_concurrency = 0;
DELETE FROM qdtt_calibration;
INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
SELECT 'pg_default', b, q, CASE WHEN b = 1 THEN 10 ELSE 40 END
FROM unnest(ARRAY[1, 2, 1000000]) b, unnest(ARRAY[1, 2, 4, 8, 16, 32]) q;
RESET enable_bitmapscan;
CREATE TEMP TABLE queries (q text);
INSERT INTO queries VALUES
	('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 1009'),
	('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 1999'),
	('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 9999'),
	('SELECT max(c1) FROM t WHERE c2 BETWEEN 1 AND 60000'),
	('SELECT c2 FROM t WHERE c2 < 500'),
	('SELECT * FROM t ORDER BY c2 LIMIT 10'),
	('SELECT * FROM t WHERE c2 = 42 OR c2 = 4242'),
	('SELECT * FROM small JOIN t ON t.c2 = small.k WHERE small.v LIKE ''y%'''),
	('SELECT count(*) FROM t'),
	('SELECT count(*) FROM t WHERE ctid < ''(10,0)''');
SELECT q, plan_of(q, true) = plan_of(q, false) AS same_plan_and_costs FROM queries;
SET enable_bitmapscan = off;
SELECT q, plan_of(q, true) = plan_of(q, false) AS same_plan_and_costs FROM queries;
RESET enable_bitmapscan;
-- Prefetching bitmap scans: each page a random read, dearer than stock's
-- price once the bitmap holds more than a page.
RESET effective_io_concurrency;
SELECT q, (SELECT qdtt_cost > stock_cost FROM qdtt_explain(q) WHERE scan = 'Bitmap Heap Scan') AS bitmap_dearer
FROM (VALUES ('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 1999'),
			 ('SELECT max(c1) FROM t WHERE c2 BETWEEN 1000 AND 9999')) v(q);

DROP TABLE t, small;
DROP FUNCTION plan_of(text, boolean);
DROP EXTENSION qdtt_costing;
