--
-- The shared io_uring helper (common/ssdkit_uring.c), driven through the
-- test-only ssdkit_test extension.
--
CREATE EXTENSION ssdkit_test;

-- A table of 200 blocks (two rows a page); its file is the reference.
CREATE TABLE uring_src (id int, pad text) WITH (fillfactor = 10);
INSERT INTO uring_src SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 400) g;
CHECKPOINT;
SELECT pg_relation_size('uring_src') / 8192 AS nblocks;
SELECT pg_relation_filepath('uring_src') AS src \gset

-- Every block read through io_uring, in a shuffled order and at several
-- queue depths, has the same bytes as a plain read of the file.
CREATE TEMP TABLE order_given AS
SELECT array_agg(b ORDER BY (b * 17) % 41) AS blocks FROM generate_series(0, 39) b;
SELECT qd, count(*) AS blocks,
       count(*) FILTER (WHERE r.md5 = md5(pg_read_binary_file(:'src', r.block * 8192::bigint, 8192))) AS matching,
       max(peak_inflight) AS peak_inflight
FROM unnest(ARRAY[1, 4, 32, 256]) qd,
     order_given,
     LATERAL ssdkit_test_uring_read(:'src', blocks, qd) r
GROUP BY qd ORDER BY qd;

-- Rows come back in the order asked for, whatever the completion order.
SELECT array_agg(block) = (SELECT blocks FROM order_given) AS same_order
FROM ssdkit_test_uring_read(:'src', (SELECT blocks FROM order_given), 16);

-- Buffered (not O_DIRECT) reads work too, and the same block may repeat.
SELECT count(DISTINCT md5) AS distinct_md5, count(*) AS rows
FROM ssdkit_test_uring_read(:'src', ARRAY[3, 3, 3, 5], 2, direct => false);

-- Writes: 64 blocks at queue depth 8, each filled with (block % 251).
SELECT ssdkit_test_uring_write('ssdkit_uring_test.dat',
                               ARRAY(SELECT g FROM generate_series(63, 0, -1) g), 8);
SELECT count(*) AS blocks_ok
FROM generate_series(0, 63) b
WHERE pg_read_binary_file('ssdkit_uring_test.dat', b * 8192::bigint, 8192)
      = decode(repeat(lpad(to_hex(b % 251), 2, '0'), 8192), 'hex');

-- Errors are PostgreSQL errors.
\set VERBOSITY default
SELECT * FROM ssdkit_test_uring_read(:'src', ARRAY[0], 0);
SELECT * FROM ssdkit_test_uring_read(:'src', ARRAY[0], 257);
SELECT * FROM ssdkit_test_uring_read('no/such/file', ARRAY[0], 1);
-- a read past the end of the 64-block file is a short read
SELECT * FROM ssdkit_test_uring_read('ssdkit_uring_test.dat', ARRAY[0, 1000], 2);
SELECT * FROM ssdkit_test_uring_read(:'src', ARRAY[-1], 2);
SELECT * FROM ssdkit_test_uring_read(:'src', ARRAY[1, NULL], 2);

-- An ERROR raised while reads are in flight drains them and releases the
-- ring's file descriptor: repeated 400 times (more than the backend's
-- external-FD budget), the backend neither leaks nor crashes.
SELECT ssdkit_test_uring_error_in_flight(:'src', ARRAY[0, 1, 2, 3, 4, 5, 6, 7], 8);
DO $$
DECLARE
	caught int := 0;
BEGIN
	FOR i IN 1..400 LOOP
		BEGIN
			PERFORM ssdkit_test_uring_error_in_flight(
				pg_relation_filepath('uring_src'), ARRAY[0, 1, 2, 3, 4, 5, 6, 7], 8);
		EXCEPTION WHEN query_canceled THEN
			caught := caught + 1;
		END;
	END LOOP;
	RAISE NOTICE 'caught % errors', caught;
END
$$;
SELECT count(*) AS still_reads
FROM ssdkit_test_uring_read(:'src', ARRAY[0, 1, 2, 3], 4);

DROP TABLE uring_src;
DROP EXTENSION ssdkit_test;
