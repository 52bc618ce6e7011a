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
