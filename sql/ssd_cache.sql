--
-- ssd_cache: installation, status and GUC namespace.
--
CREATE EXTENSION ssd_cache;
SELECT extversion FROM pg_extension WHERE extname = 'ssd_cache';
SELECT library_version, preloaded, io_uring, io_uring_error FROM ssd_cache_status();

-- The "ssd_cache." namespace is reserved: unknown settings are rejected.
SET ssd_cache.no_such_setting = 1;

-- The storage-manager hook is active and shows what it wraps.
SELECT slot, wraps, calls >= 0 AS counted FROM ssd_cache_hook_status() ORDER BY slot;

-- The test-only fault injection GUC accepts only known fault points.
SET ssd_cache.fault_injection = 'no_such_point';
SET ssd_cache.fault_injection = 'hook_layout, no_such_point';
SET ssd_cache.fault_injection = 'hook_layout';
SHOW ssd_cache.fault_injection;
RESET ssd_cache.fault_injection;

-- Installing twice is an ordinary error, and dropping works.
CREATE EXTENSION ssd_cache;
DROP EXTENSION ssd_cache;
