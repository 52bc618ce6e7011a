-- After the restart: the SSD cache kept its pages, and the warm-up reloads
-- what shared_buffers held at shutdown (from the SSD cache where it can).
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off;
SELECT used_slots, preparation_ms FROM ssd_cache_stats;
DO $$
BEGIN
	FOR i IN 1..100 LOOP
		EXIT WHEN (SELECT phase IN ('done', 'nothing to load') FROM ssd_cache_warmup);
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
SELECT phase, pages_loaded, pages_from_ssd_cache, disk_reads FROM ssd_cache_warmup;
SELECT count(*), sum(a.balance) FROM (SELECT (random() * 99999)::int + 1 AS k FROM generate_series(1, 20000)) r
JOIN accounts a ON a.id = r.k;
SELECT hits, misses, hit_ratio FROM ssd_cache_stats;

-- Every cached page is byte-identical to its copy on disk.
SELECT * FROM ssd_cache_verify();
