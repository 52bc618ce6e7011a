/* qdtt_costing/qdtt_costing--0.3.sql */

\echo Use "CREATE EXTENSION qdtt_costing" to load this file. \quit

CREATE FUNCTION qdtt_costing_status(
	OUT library_version text,
	OUT preloaded boolean,
	OUT io_uring boolean,
	OUT io_uring_error text)
RETURNS record
AS 'MODULE_PATHNAME', 'qdtt_costing_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION qdtt_costing_status() IS
'qdtt_costing library version, whether it was loaded through shared_preload_libraries, and whether io_uring works in this server';

-- The calibrated models: one grid of (band, queue depth) points per
-- tablespace, in microseconds per BLCKSZ page.  qdtt_calibrate() fills it;
-- a DBA may also edit it (every change reaches all sessions at commit).
CREATE TABLE qdtt_calibration (
	tablespace	name NOT NULL,
	band_pages	bigint NOT NULL CHECK (band_pages >= 1),
	queue_depth integer NOT NULL CHECK (queue_depth BETWEEN 1 AND 256),
	cost_us		float8 NOT NULL CHECK (cost_us > 0 AND cost_us < 'Infinity'),
	measured	boolean NOT NULL DEFAULT true,
	PRIMARY KEY (tablespace, band_pages, queue_depth)
);
COMMENT ON TABLE qdtt_calibration IS
'QDTT models: amortized cost per page (microseconds) of random reads within band_pages at queue_depth; band 1 is sequential; measured = false marks points the early stop filled in';

-- How each model was made.
CREATE TABLE qdtt_calibration_run (
	tablespace	name PRIMARY KEY,
	calibrated_at timestamptz NOT NULL DEFAULT now(),
	device		text,
	file_size_mb integer,
	max_queue_depth integer,
	early_stop	boolean,
	stopped_at_queue_depth integer,
	max_beneficial_queue_depth integer,
	points_measured integer,
	points_defaulted integer,
	prepare_seconds float8,
	measure_seconds float8
);
COMMENT ON TABLE qdtt_calibration_run IS
'the last qdtt_calibrate() run of each tablespace: device, settings, early stop, timings';

SELECT pg_catalog.pg_extension_config_dump('qdtt_calibration', '');
SELECT pg_catalog.pg_extension_config_dump('qdtt_calibration_run', '');

CREATE FUNCTION qdtt_model_changed() RETURNS trigger
AS 'MODULE_PATHNAME', 'qdtt_model_changed'
LANGUAGE C;

CREATE TRIGGER qdtt_calibration_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON qdtt_calibration
	FOR EACH STATEMENT EXECUTE FUNCTION qdtt_model_changed();

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

CREATE FUNCTION qdtt_cost(band float8, queue_depth float8,
						  tablespace name DEFAULT 'pg_default')
RETURNS float8
AS 'MODULE_PATHNAME', 'qdtt_cost'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION qdtt_cost(float8, float8, name) IS
'QDTT cost per page (microseconds) of a tablespace''s model, interpolated bilinearly (band, then queue depth)';

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

-- One row per tablespace and band: the costs across queue depths, what the
-- planner charges (page_cost, in seq_page_cost units), and the gain.
CREATE FUNCTION qdtt_max_beneficial_queue_depth(tablespace name)
RETURNS integer
AS 'MODULE_PATHNAME', 'qdtt_max_beneficial_queue_depth'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION qdtt_max_beneficial_queue_depth(name) IS
'smallest queue depth within qdtt.stop_threshold of the best random-read cost of a tablespace''s model (NULL without a complete model)';

CREATE VIEW qdtt_model AS
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

CREATE FUNCTION qdtt_residency(
	OUT tablespace oid,
	OUT database oid,
	OUT filenode oid,
	OUT fork text,
	OUT blocks bigint,
	OUT shared_buffers_blocks bigint,
	OUT os_cache_blocks bigint,
	OUT sampled_at timestamptz,
	OUT untracked_forks bigint,
	OUT os_cache_gaps bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'qdtt_residency'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION qdtt_residency() FROM PUBLIC;

COMMENT ON FUNCTION qdtt_residency() IS
'the residency sampler''s last counts: every relation fork of the cluster, its blocks, those in shared_buffers and in the OS page cache, and the runs of blocks outside the page cache';

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
	   r.os_cache_gaps,
	   r.sampled_at,
	   r.untracked_forks
FROM qdtt_residency() r, pg_database d
WHERE d.datname = current_database() AND r.database IN (0, d.oid);
REVOKE ALL ON qdtt_residency FROM PUBLIC;

COMMENT ON VIEW qdtt_residency IS
'where each relation fork''s blocks are: shared_buffers, the OS page cache (from the residency sampler)';
