/* flashscan/flashscan--0.1--0.2.sql */

\echo Use "ALTER EXTENSION flashscan UPDATE TO '0.2'" to load this file. \quit

-- The version moves with the ssdkit release (VERSION), so every extension of
-- the set updates the same way; 0.2 adds the publication guard.

-- pax changes are logically decoded only with flashscan preloaded (its WAL
-- resource manager); a publication that would cover a pax table without
-- that is refused when it is created or altered.
CREATE FUNCTION pax_check_publication()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'pax_check_publication'
LANGUAGE C;

CREATE EVENT TRIGGER pax_publication_guard ON ddl_command_end
	WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION')
	EXECUTE FUNCTION pax_check_publication();
