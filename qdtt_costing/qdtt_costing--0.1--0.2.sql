/* qdtt_costing/qdtt_costing--0.1--0.2.sql */

\echo Use "ALTER EXTENSION qdtt_costing UPDATE TO '0.2'" to load this file. \quit

-- qdtt_calibrate() also returns the recommended effective_io_concurrency
-- (qdtt_apply_prefetch() sets it on the tablespace) and times pages in
-- memory (qdtt_memory_cost, below).
DROP FUNCTION qdtt_calibrate(name, integer, float8, boolean);

CREATE FUNCTION qdtt_calibrate(
	tablespace name DEFAULT 'pg_default',
	file_size_mb integer DEFAULT 1024,
	point_seconds float8 DEFAULT 0.25,
	early_stop boolean DEFAULT true,
	OUT tablespace name,
	OUT device text,
	OUT max_beneficial_queue_depth integer,
	OUT points_measured integer,
	OUT points_defaulted integer,
	OUT stopped_at_queue_depth integer,
	OUT prepare_seconds float8,
	OUT measure_seconds float8,
	OUT recommended_io_concurrency integer,
	OUT shared_buffers_random_us float8,
	OUT shared_buffers_seq_us float8,
	OUT os_cache_random_us float8,
	OUT os_cache_seq_us float8,
	OUT seq_tuple_us float8,
	OUT bitmap_tuple_us float8,
	OUT bitmap_page_us float8,
	OUT index_tuple_us float8)
RETURNS record
AS 'MODULE_PATHNAME', 'qdtt_calibrate'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION qdtt_calibrate(name, integer, float8, boolean) FROM PUBLIC;

COMMENT ON FUNCTION qdtt_calibrate(name, integer, float8, boolean) IS
'measure the device of a tablespace as QDTT(band, queue depth) and store it as the tablespace''s model';

CREATE FUNCTION qdtt_apply_prefetch(tablespace name DEFAULT 'pg_default')
RETURNS integer
AS 'MODULE_PATHNAME', 'qdtt_apply_prefetch'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION qdtt_apply_prefetch(name) IS
'set the tablespace''s effective_io_concurrency and maintenance_io_concurrency to its model''s maximum beneficial queue depth (ALTER TABLESPACE)';

CREATE FUNCTION qdtt_residency(
	OUT tablespace oid,
	OUT database oid,
	OUT filenode oid,
	OUT fork text,
	OUT blocks bigint,
	OUT shared_buffers_blocks bigint,
	OUT os_cache_blocks bigint,
	OUT sampled_at timestamptz,
	OUT untracked_forks bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'qdtt_residency'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION qdtt_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_residency() IS
'the residency sampler''s last counts: every relation fork of the cluster, its blocks, those in shared_buffers and in the OS page cache';

CREATE FUNCTION qdtt_sample_residency()
RETURNS bigint
AS 'MODULE_PATHNAME', 'qdtt_sample_residency'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION qdtt_sample_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_sample_residency() IS
'run one residency pass now; returns the OS pages it examined';

-- The current database's relations (and the shared catalogs).
CREATE VIEW qdtt_residency AS
SELECT pg_filenode_relation(CASE WHEN r.tablespace = d.dattablespace THEN 0 ELSE r.tablespace END,
							r.filenode) AS relation,
	   r.fork, r.blocks, r.shared_buffers_blocks, r.os_cache_blocks,
	   CASE WHEN r.blocks > 0 THEN round(r.shared_buffers_blocks::numeric / r.blocks, 3) END
		 AS shared_buffers_fraction,
	   CASE WHEN r.blocks > 0 THEN round(r.os_cache_blocks::numeric / r.blocks, 3) END
		 AS os_cache_fraction,
	   r.sampled_at,
	   r.untracked_forks
FROM qdtt_residency() r, pg_database d
WHERE d.datname = current_database() AND r.database IN (0, d.oid);
REVOKE ALL ON qdtt_residency FROM PUBLIC;

COMMENT ON VIEW qdtt_residency IS
'where each relation fork''s blocks are: shared_buffers, the OS page cache (from the residency sampler)';

-- The memory points of each model, in microseconds: a page of an index
-- scan (random) and of a seq scan, found in shared_buffers and read from
-- the OS page cache, and what each scan type spends per tuple beyond its
-- pages.  qdtt_calibrate() fills it; the planner prices the pages the
-- residency sampler finds in memory with them (without a row, every page
-- is priced as a device read and core's CPU costs stand).
CREATE TABLE qdtt_memory_cost (
	tablespace	name PRIMARY KEY,
	shared_buffers_random_us float8 NOT NULL
		CHECK (shared_buffers_random_us > 0 AND shared_buffers_random_us < 'Infinity'),
	shared_buffers_seq_us float8 NOT NULL
		CHECK (shared_buffers_seq_us > 0 AND shared_buffers_seq_us < 'Infinity'),
	os_cache_random_us float8 NOT NULL
		CHECK (os_cache_random_us > 0 AND os_cache_random_us < 'Infinity'),
	os_cache_seq_us float8 NOT NULL
		CHECK (os_cache_seq_us > 0 AND os_cache_seq_us < 'Infinity'),
	seq_tuple_us float8 NOT NULL CHECK (seq_tuple_us >= 0 AND seq_tuple_us < 'Infinity'),
	bitmap_tuple_us float8 NOT NULL CHECK (bitmap_tuple_us >= 0 AND bitmap_tuple_us < 'Infinity'),
	bitmap_page_us float8 NOT NULL CHECK (bitmap_page_us >= 0 AND bitmap_page_us < 'Infinity'),
	index_tuple_us float8 NOT NULL CHECK (index_tuple_us >= 0 AND index_tuple_us < 'Infinity')
);
COMMENT ON TABLE qdtt_memory_cost IS
'QDTT models'' memory points: cost (microseconds) of a page in shared_buffers and of one read from the OS page cache, at random (index scans) and in sequence (seq scans), and per tuple of each scan type beyond its pages';

SELECT pg_catalog.pg_extension_config_dump('qdtt_memory_cost', '');

CREATE TRIGGER qdtt_memory_cost_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON qdtt_memory_cost
	FOR EACH STATEMENT EXECUTE FUNCTION qdtt_model_changed();

-- qdtt_model shows the memory points.
CREATE OR REPLACE VIEW qdtt_model AS
WITH pts AS (
	SELECT c.*,
		   c.cost_us / first_value(c.cost_us) OVER (PARTITION BY c.tablespace
					ORDER BY c.band_pages, c.queue_depth) AS rel_seq
	FROM qdtt_calibration c
)
SELECT p.tablespace,
	   p.band_pages,
	   array_agg(p.queue_depth ORDER BY p.queue_depth) AS queue_depths,
	   array_agg(round(p.cost_us::numeric, 3)::float8 ORDER BY p.queue_depth) AS cost_us,
	   array_agg(round((p.rel_seq * current_setting('seq_page_cost')::float8)::numeric, 4)::float8
				 ORDER BY p.queue_depth) AS page_cost,
	   array_agg(p.measured ORDER BY p.queue_depth) AS measured,
	   round(((array_agg(p.cost_us ORDER BY p.queue_depth))[1] /
			  (array_agg(p.cost_us ORDER BY p.queue_depth DESC))[1])::numeric, 2)::float8
		   AS qd1_over_max_qd,
	   qdtt_max_beneficial_queue_depth(p.tablespace) AS max_beneficial_queue_depth,
	   r.calibrated_at,
	   r.device,
	   m.shared_buffers_random_us,
	   m.shared_buffers_seq_us,
	   m.os_cache_random_us,
	   m.os_cache_seq_us,
	   m.seq_tuple_us,
	   m.bitmap_tuple_us,
	   m.bitmap_page_us,
	   m.index_tuple_us
FROM pts p
LEFT JOIN qdtt_calibration_run r USING (tablespace)
LEFT JOIN qdtt_memory_cost m USING (tablespace)
GROUP BY p.tablespace, p.band_pages, r.calibrated_at, r.device, m.shared_buffers_random_us,
		 m.shared_buffers_seq_us, m.os_cache_random_us, m.os_cache_seq_us,
		 m.seq_tuple_us, m.bitmap_tuple_us, m.bitmap_page_us, m.index_tuple_us
ORDER BY p.tablespace, p.band_pages;

COMMENT ON VIEW qdtt_model IS
'QDTT models per tablespace and band: cost per page at each queue depth, planner page cost, QDTT(band,1)/QDTT(band,max), maximum beneficial queue depth, and the memory points (microseconds a page in shared_buffers and from the OS page cache)';

-- qdtt_explain() shows each candidate's residency and the split of its I/O cost.
DROP FUNCTION qdtt_explain(text);

CREATE FUNCTION qdtt_explain(query text,
	OUT relation regclass,
	OUT scan text,
	OUT index regclass,
	OUT workers integer,
	OUT band_pages float8,
	OUT queue_depth float8,
	OUT heap_pages float8,
	OUT stock_cost float8,
	OUT qdtt_cost float8,
	OUT chosen boolean,
	OUT note text,
	OUT shared_buffers_fraction float8,
	OUT os_cache_fraction float8,
	OUT io_cost_memory float8,
	OUT io_cost_device float8,
	OUT memory_work_cost float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'qdtt_explain'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION qdtt_explain(text) IS
'the scan paths the planner weighed for each base relation of a SELECT, with stock and QDTT costs, the residency used and how the I/O cost splits between memory and the device, and which ones the plan uses';
