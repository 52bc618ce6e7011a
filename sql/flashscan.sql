--
-- flashscan: installation, status and GUC namespace.
--
CREATE EXTENSION flashscan;
SELECT extversion FROM pg_extension WHERE extname = 'flashscan';
SELECT library_version, preloaded, io_uring, io_uring_error FROM flashscan_status();

-- The "flashscan." namespace is reserved: unknown settings are rejected.
SET flashscan.no_such_setting = 1;

DROP EXTENSION flashscan;
