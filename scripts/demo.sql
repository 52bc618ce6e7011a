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
