--
-- ssd_cache: installation, status and GUC namespace.
--
CREATE EXTENSION ssd_cache;
SELECT extversion FROM pg_extension WHERE extname = 'ssd_cache';
SELECT library_version, preloaded, io_uring, io_uring_error FROM ssd_cache_status();

-- The "ssd_cache." namespace is reserved: unknown settings are rejected.
SET ssd_cache.no_such_setting = 1;

-- Installing twice is an ordinary error, and dropping works.
CREATE EXTENSION ssd_cache;
DROP EXTENSION ssd_cache;
