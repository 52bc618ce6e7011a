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

-- Settings, with units and bounds.
SELECT name, setting, unit, min_val, max_val, context
FROM pg_settings WHERE name LIKE 'ssd_cache.%' ORDER BY name;
SET ssd_cache.size = '2GB';
SET ssd_cache.path = '/tmp/x';
SET ssd_cache.mode = write_back;
ALTER SYSTEM SET ssd_cache.mode = 'write-back';
ALTER SYSTEM SET ssd_cache.evict_batch = 513;
SET ssd_cache.warmup = off;
ALTER SYSTEM SET ssd_cache.warmup_io_share = 0;
ALTER SYSTEM SET ssd_cache.warmup_preload = 'sometimes';
ALTER SYSTEM SET ssd_cache.warmup_max_request = '2MB';

-- This cluster has no ssd_cache.path: the hook is active, the cache is not.
SELECT mode, policy, hook_active, path, slots, used_slots, hits, misses, hit_ratio
FROM ssd_cache_stats;
SELECT free_slots, fresher_pages, absorbed_writes, write_backs FROM ssd_cache_stats;
SELECT count(*) FROM ssd_cache_relations;
SELECT * FROM ssd_cache_verify();
SELECT ssd_cache_flush();
SELECT ssd_cache_reset_stats();
SELECT ssd_cache_evict('pg_class');
SELECT * FROM ssd_cache_measure_devices('pg_class');
SELECT * FROM ssd_cache_measure_devices('pg_class', 5);
SELECT ssd_cache_lookup_cost(0);
SELECT ssd_cache_lookup_cost(10);

-- The warm-up view: a phase that is known, and no plan without a state.
SELECT phase IN ('starting', 'planning', 'loading', 'done', 'nothing to load') AS known_phase,
       shared_buffers_pages > 0 AS has_pool
FROM ssd_cache_warmup;
SELECT count(*) <= 16 FROM ssd_cache_warmup_devices;

-- Bad arguments.
CREATE VIEW v AS SELECT 1 AS x;
SELECT ssd_cache_evict('v');
SELECT ssd_cache_evict('no_such_table');
DROP VIEW v;

-- Installing twice is an ordinary error, and dropping works.
CREATE EXTENSION ssd_cache;
DROP EXTENSION ssd_cache;

-- Upgrade from 0.1: its ssd_cache_stats works with this library until the
-- update, and the update brings the 0.2 columns, then the 0.3 ones.
CREATE EXTENSION ssd_cache VERSION '0.1';
SELECT mode, policy, used_slots FROM ssd_cache_stats;
ALTER EXTENSION ssd_cache UPDATE TO '0.2';
SELECT mode, problem, admission_io, header_writes, used_slots FROM ssd_cache_stats;
SELECT * FROM ssd_cache_verify();
ALTER EXTENSION ssd_cache UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'ssd_cache';
SELECT mode, fresher_pages, directory_writes_fresher FROM ssd_cache_stats;
SELECT * FROM ssd_cache_verify();
SELECT ssd_cache_flush();
DROP EXTENSION ssd_cache;
