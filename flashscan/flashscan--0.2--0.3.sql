/* flashscan/flashscan--0.2--0.3.sql */

\echo Use "ALTER EXTENSION flashscan UPDATE TO '0.3'" to load this file. \quit

-- 0.3 changes no SQL object of flashscan: the release's changes are in the
-- library (and in ssd_cache's SQL).
