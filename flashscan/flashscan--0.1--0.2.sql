/* flashscan/flashscan--0.1--0.2.sql */

\echo Use "ALTER EXTENSION flashscan UPDATE TO '0.2'" to load this file. \quit

-- 0.2 changes no SQL object of flashscan: the version moves with the ssdkit
-- release (VERSION), so every extension of the set updates the same way.
