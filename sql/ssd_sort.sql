--
-- ssd_sort: installation, status and GUC namespace.
--
CREATE EXTENSION ssd_sort;
SELECT extversion FROM pg_extension WHERE extname = 'ssd_sort';
SELECT library_version, preloaded, io_uring, io_uring_error FROM ssd_sort_status();

-- The "ssd_sort." namespace is reserved: unknown settings are rejected.
SET ssd_sort.no_such_setting = 1;

DROP EXTENSION ssd_sort;
