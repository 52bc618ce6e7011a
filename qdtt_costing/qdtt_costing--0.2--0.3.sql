/* qdtt_costing/qdtt_costing--0.2--0.3.sql */

\echo Use "ALTER EXTENSION qdtt_costing UPDATE TO '0.3'" to load this file. \quit

-- 0.3 changes no SQL object of qdtt_costing: the release's changes are in the
-- library (and in ssd_cache's SQL).
