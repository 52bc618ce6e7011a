-- The ssdkit demo: run by "make demo" on a scratch cluster.
\pset footer off

-- All four extensions install into one database.
CREATE EXTENSION ssd_cache;
CREATE EXTENSION qdtt_costing;
CREATE EXTENSION ssd_sort;
CREATE EXTENSION flashscan;

SELECT extname, extversion FROM pg_extension
WHERE extname IN ('ssd_cache', 'qdtt_costing', 'ssd_sort', 'flashscan')
ORDER BY extname;

-- Each reports its library version, whether shared_preload_libraries
-- loaded it, and whether the kernel lets it use io_uring.
SELECT 'ssd_cache' AS extension, * FROM ssd_cache_status()
UNION ALL SELECT 'qdtt_costing', * FROM qdtt_costing_status()
UNION ALL SELECT 'ssd_sort', * FROM ssd_sort_status()
UNION ALL SELECT 'flashscan', * FROM flashscan_status();

SHOW shared_preload_libraries;
SHOW data_checksums;

-- Each extension owns its GUC namespace: a misspelt setting is an error.
\set ON_ERROR_STOP 0
SET ssd_cache.sise = '1GB';
\set ON_ERROR_STOP 1

-- ssd_cache: the storage manager is wrapped (fail-closed check at start).
SELECT slot, wraps FROM ssd_cache_hook_status() WHERE slot IN ('smgr_read', 'smgr_write');
SELECT name, setting, unit FROM pg_settings WHERE name LIKE 'ssd_cache.%' AND name <> 'ssd_cache.fault_injection' ORDER BY name;

-- A 40 MB table, larger than shared_buffers (16 MB here), read at random
-- through its key: every read that misses shared_buffers goes to disk and
-- is offered to the cache's admission worker.
CREATE TABLE accounts (id int PRIMARY KEY, balance int, pad text);
INSERT INTO accounts SELECT g, 0, repeat('x', 300) FROM generate_series(1, 100000) g;
VACUUM ANALYZE accounts;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off;
SELECT ssd_cache_reset_stats();
SELECT count(*), sum(a.balance) FROM (SELECT (random() * 99999)::int + 1 AS k FROM generate_series(1, 20000)) r
JOIN accounts a ON a.id = r.k;
SELECT pg_sleep(1);
SELECT policy, used_slots, hits, misses, admissions, sequential_reads, hit_ratio FROM ssd_cache_stats;

-- The same kind of reads again: now most come from the SSD.
SELECT ssd_cache_reset_stats();
SELECT count(*), sum(a.balance) FROM (SELECT (random() * 99999)::int + 1 AS k FROM generate_series(1, 20000)) r
JOIN accounts a ON a.id = r.k;
SELECT hits, misses, hit_ratio, ssd_reads, disk_reads FROM ssd_cache_stats;
SELECT relation, cached_blocks, cached_fraction, hits, misses, hit_ratio FROM ssd_cache_relations
WHERE relation::text LIKE 'accounts%' ORDER BY relation::text;

-- A sequential scan of another 40 MB table is recognised as such and not
-- admitted (TAC): it would only push the accounts out.
CREATE TABLE events AS SELECT g AS id, repeat('e', 300) AS pad FROM generate_series(1, 100000) g;
SELECT ssd_cache_reset_stats();
SELECT count(*) FROM events WHERE pad <> '';
SELECT sequential_reads, admissions FROM ssd_cache_stats;

-- Writes go to disk first, then the cached copy is updated in place.
UPDATE accounts SET balance = balance + 1 WHERE id % 50 = 0;
CHECKPOINT;
SELECT overwrites, invalidations FROM ssd_cache_stats;

-- qdtt_costing: measure this machine's disk as QDTT(band, queue depth).
-- (A short calibration for the demo; the defaults use a 1 GB file.)
SELECT tablespace, device, max_beneficial_queue_depth, points_measured, points_defaulted,
       stopped_at_queue_depth, round(measure_seconds::numeric, 2) AS measure_seconds
FROM qdtt_calibrate('pg_default', file_size_mb => 128, point_seconds => 0.1);
SELECT band_pages, queue_depths, cost_us, page_cost, qd1_over_max_qd FROM qdtt_model;
SELECT qdtt_cost(4096, 1) AS one_read_at_a_time_us, qdtt_cost(4096, 8) AS eight_in_flight_us;

-- Query 3.1 of the thesis over a table of 33 rows per page: what stock
-- PostgreSQL plans, what the QDTT planner plans, and why.
CREATE TABLE t33 (c1 int, c2 int, pad text);
INSERT INTO t33 SELECT (g::bigint * 7919) % 200000, (g::bigint * 104729) % 200000, repeat('x', 204)
FROM generate_series(1, 200000) g;
CREATE INDEX t33_c2 ON t33 (c2);
VACUUM ANALYZE t33;
SET max_parallel_workers_per_gather = 4;
SET qdtt.enable = off;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t33 WHERE c2 BETWEEN 1000 AND 5000;
SET qdtt.enable = on;
EXPLAIN (COSTS OFF) SELECT max(c1) FROM t33 WHERE c2 BETWEEN 1000 AND 5000;
SELECT scan, index, workers, band_pages, queue_depth, round(stock_cost) AS stock_cost,
       round(qdtt_cost) AS qdtt_cost, chosen
FROM qdtt_explain('SELECT max(c1) FROM t33 WHERE c2 BETWEEN 1000 AND 5000') ORDER BY qdtt_cost;
-- The table was just written: it is in memory.  With the residency
-- sampler's count (its background worker passes every 10 s; here one pass
-- now) its pages are priced as memory, with the calibration's memory points.
SELECT qdtt_sample_residency() > 0 AS sampled;
SELECT shared_buffers_fraction, os_cache_fraction FROM qdtt_residency
WHERE relation = 't33'::regclass AND fork = 'main';
SELECT scan, round(qdtt_cost) AS qdtt_cost, round(io_cost_memory) AS memory_io,
       round(io_cost_device) AS device_io, chosen
FROM qdtt_explain('SELECT max(c1) FROM t33 WHERE c2 BETWEEN 1000 AND 5000') ORDER BY qdtt_cost;

-- ssd_sort: ORDER BY over a table of wide (2 KB) rows with 1 MB of work_mem.
-- The built-in Sort spills whole rows; SSD Sort sorts (key, TID) pairs and
-- fetches the rows in key order with 32 page reads in flight.
CREATE TABLE wide (key int, pad text);
ALTER TABLE wide ALTER pad SET STORAGE PLAIN;
INSERT INTO wide SELECT (g::bigint * 7919) % 20011, repeat('w', 2000) FROM generate_series(1, 20000) g;
VACUUM ANALYZE wide;
SET work_mem = '1MB';
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM wide ORDER BY key;
CREATE FUNCTION sort_plan(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO j;
	RETURN j -> 0 -> 'Plan';
END $$;
SELECT 'SSD Sort' AS plan, p -> 'Actual Total Time' AS total_ms,
       p -> 'Time To First Row' AS first_row_ms, (p ->> 'Temp Written Blocks')::int * 8 AS temp_kb,
       p -> 'Sorted Runs' AS runs, p -> 'Merge Passes' AS merge_passes
FROM sort_plan('SELECT * FROM wide ORDER BY key') p;
SET ssd_sort.enable = off;
SELECT 'built-in Sort' AS plan, p -> 'Actual Total Time' AS total_ms,
       p -> 'Actual Startup Time' AS first_row_ms, (p ->> 'Temp Written Blocks')::int * 8 AS temp_kb
FROM sort_plan('SELECT * FROM wide ORDER BY key') p;
RESET ssd_sort.enable;
RESET work_mem;

-- flashscan: a 16-column table stored as pax (groups of column minipages)
-- next to the same data in heap.  A selective query on two of the sixteen
-- columns: FlashScan reads the predicate column, skips every group without
-- a match, and reads the projected column only where one matched.
CREATE TABLE facts_heap (id int, region int, amount float8, day date, qty int, price numeric,
                         c7 int, c8 int, c9 float8, c10 float8, c11 text, c12 text,
                         c13 int, c14 int, c15 date, c16 text);
INSERT INTO facts_heap
SELECT i, i % 1000, i * 0.25, date '2024-01-01' + i % 365, i % 50, i % 997 + 0.99,
       i, i, i, i, md5(i::text), md5((i + 1)::text), i, i, date '2024-01-01' + i % 30, 'note ' || i
FROM generate_series(1, 300000) i;
CREATE TABLE facts (LIKE facts_heap) USING pax;
INSERT INTO facts SELECT * FROM facts_heap;
VACUUM ANALYZE facts_heap;
VACUUM ANALYZE facts;
SELECT pg_size_pretty(pg_relation_size('facts_heap')) AS heap_size,
       pg_size_pretty(pg_relation_size('facts')) AS pax_size,
       (SELECT count(*) FROM pax_groups('facts')) AS pax_groups;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT sum(amount) FROM facts WHERE id = 123456;
SELECT (SELECT sum(amount) FROM facts WHERE id = 123456) AS pax_sum,
       (SELECT sum(amount) FROM facts_heap WHERE id = 123456) AS heap_sum;
-- A report over the pax table: count, sum and avg of numeric and integer
-- expressions run in FlashScan Aggregate, exact 128-bit sums with numeric's
-- digits and scales (here in parallel: partial per participant, combined
-- above the Gather).
EXPLAIN (COSTS OFF)
SELECT region % 10 AS r, count(*), sum(price * qty), avg(price) FROM facts GROUP BY 1;
SELECT (SELECT string_agg(x::text, ' ' ORDER BY x::text)
        FROM (SELECT region % 10 AS r, count(*), sum(price * qty), avg(price) FROM facts GROUP BY 1) x) =
       (SELECT string_agg(x::text, ' ' ORDER BY x::text)
        FROM (SELECT region % 10 AS r, count(*), sum(price * qty), avg(price) FROM facts_heap GROUP BY 1) x)
       AS same_as_heap;
