/* ssd_sort/ssd_sort--0.1--0.2.sql */

\echo Use "ALTER EXTENSION ssd_sort UPDATE TO '0.2'" to load this file. \quit

-- 0.2 changes no SQL object of ssd_sort: the version moves with the ssdkit
-- release (VERSION), so every extension of the set updates the same way.
