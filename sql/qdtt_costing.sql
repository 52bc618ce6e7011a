--
-- qdtt_costing: installation, status and GUC namespace.
--
CREATE EXTENSION qdtt_costing;
SELECT extversion FROM pg_extension WHERE extname = 'qdtt_costing';
SELECT library_version, preloaded, io_uring, io_uring_error FROM qdtt_costing_status();

-- The "qdtt_costing." namespace is reserved: unknown settings are rejected.
SET qdtt_costing.no_such_setting = 1;

DROP EXTENSION qdtt_costing;
