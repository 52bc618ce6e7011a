-- After the restart: shared_buffers is empty, the SSD cache is not.
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off;
SELECT used_slots, preparation_ms FROM ssd_cache_stats;
SELECT count(*), sum(a.balance) FROM (SELECT (random() * 99999)::int + 1 AS k FROM generate_series(1, 20000)) r
JOIN accounts a ON a.id = r.k;
SELECT hits, misses, hit_ratio FROM ssd_cache_stats;

-- Every cached page is byte-identical to its copy on disk.
SELECT * FROM ssd_cache_verify();
