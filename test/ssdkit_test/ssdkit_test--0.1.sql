/* test/ssdkit_test/ssdkit_test--0.1.sql */

\echo Use "CREATE EXTENSION ssdkit_test" to load this file. \quit

-- Read the given 8 kB blocks of a file through the io_uring helper with at
-- most queue_depth reads in flight; one row per block, in the order given.
CREATE FUNCTION ssdkit_test_uring_read(
	path text,
	blocks int[],
	queue_depth int,
	direct boolean DEFAULT true)
RETURNS TABLE (block int, md5 text, peak_inflight int)
AS 'MODULE_PATHNAME', 'ssdkit_test_uring_read'
LANGUAGE C STRICT VOLATILE;

-- Create (or overwrite) a file and write the given 8 kB blocks through the
-- helper, each filled with the byte (block % 251); returns bytes written.
CREATE FUNCTION ssdkit_test_uring_write(
	path text,
	blocks int[],
	queue_depth int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ssdkit_test_uring_write'
LANGUAGE C STRICT VOLATILE;

-- Start reads of the given blocks and raise an ERROR while they are in
-- flight: the abort must drain them before their buffers are freed.
CREATE FUNCTION ssdkit_test_uring_error_in_flight(
	path text,
	blocks int[],
	queue_depth int)
RETURNS void
AS 'MODULE_PATHNAME', 'ssdkit_test_uring_error_in_flight'
LANGUAGE C STRICT VOLATILE;

REVOKE ALL ON FUNCTION ssdkit_test_uring_read(text, int[], int, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION ssdkit_test_uring_write(text, int[], int) FROM PUBLIC;
REVOKE ALL ON FUNCTION ssdkit_test_uring_error_in_flight(text, int[], int) FROM PUBLIC;
