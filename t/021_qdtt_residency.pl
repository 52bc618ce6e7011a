# The QDTT residency sampler: a background worker that counts, for every
# relation fork, its blocks in shared_buffers and in the OS page cache.  It
# finds new relations, forgets dropped ones and old TRUNCATE files, keeps
# its bound on the OS pages a pass examines (and goes on from there next
# pass), and stops with the server; without the preload its view says why.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $node = SSDKitTest::node('residency', preload => ['qdtt_costing'],
	conf => "qdtt.residency_interval = 1\nshared_buffers = 64MB\n");
$node->safe_psql('postgres', 'CREATE EXTENSION qdtt_costing');

# The worker runs and publishes on its own.
$node->safe_psql('postgres', q{
	CREATE TABLE res (id int, pad text);
	INSERT INTO res SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
});
ok($node->poll_query_until('postgres', q{
	SELECT shared_buffers_blocks = blocks AND blocks > 100
	  FROM qdtt_residency WHERE relation = 'res'::regclass AND fork = 'main'}),
	'the sampler finds a new table, all of it in shared_buffers');
ok($node->poll_query_until('postgres', q{
	SELECT os_cache_blocks IS NOT NULL AND sampled_at IS NOT NULL
	  FROM qdtt_residency WHERE relation = 'res'::regclass AND fork = 'main'}),
	'its OS page cache count arrives');

# TRUNCATE: the new file replaces the old one; DROP: the fork leaves (the
# old files stay, empty, until the next checkpoint unlinks them).
my $old = $node->safe_psql('postgres', q{SELECT relfilenode FROM pg_class WHERE relname = 'res'});
$node->safe_psql('postgres', 'TRUNCATE res');
$node->safe_psql('postgres', 'CHECKPOINT');
ok($node->poll_query_until('postgres', qq{
	SELECT (SELECT count(*) FROM qdtt_residency() WHERE filenode = $old) = 0
	   AND (SELECT blocks FROM qdtt_residency WHERE relation = 'res'::regclass AND fork = 'main') = 0}),
	'after TRUNCATE the old file is forgotten and the table has 0 blocks');
my $new = $node->safe_psql('postgres', q{SELECT relfilenode FROM pg_class WHERE relname = 'res'});
$node->safe_psql('postgres', 'DROP TABLE res');
$node->safe_psql('postgres', 'CHECKPOINT');
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM qdtt_residency() WHERE filenode = $new"),
	'a dropped table leaves the sampler\'s table');

# The bound: one pass examines at most qdtt.residency_max_pages OS pages
# (and at least one fork), and the next goes on where it stopped.
$node->safe_psql('postgres', q{
	CREATE TABLE big (pad text);
	INSERT INTO big SELECT repeat('y', 500) FROM generate_series(1, 20000) g;
	CREATE TABLE small (a int);
	INSERT INTO small VALUES (1);
});
$node->append_conf('postgresql.conf', "qdtt.residency_interval = 0\n");
$node->reload;
sleep 2;
my $all = $node->safe_psql('postgres', 'SELECT qdtt_sample_residency()');
my $bigpages = $node->safe_psql('postgres', q{
	SELECT blocks * current_setting('block_size')::int / 4096 FROM qdtt_residency
	 WHERE relation = 'big'::regclass AND fork = 'main'});
cmp_ok($all, '>', $bigpages, "an unbounded pass examines every file ($all OS pages)");
my $t0 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my @passes = map {
	$node->safe_psql('postgres',
		'SET qdtt.residency_max_pages = 1; SELECT qdtt_sample_residency()')
} 1 .. 3;
cmp_ok((sort { $b <=> $a } @passes)[0], '<=', $bigpages,
	'with qdtt.residency_max_pages = 1 a pass examines one fork at most (' . join(', ', @passes) . ')');
is($node->safe_psql('postgres', "SELECT count(*) FROM qdtt_residency() WHERE sampled_at > '$t0'"),
	'3', 'three bounded passes counted three different forks');

# Plans priced by residency.  A hand-made model of a disk (random reads 40x
# a sequential page) with memory points; a table that sits in
# shared_buffers gets the memory-priced plan (an index or bitmap scan for
# 0.5% of its rows), the same table priced as device reads (residency off,
# a table the sampler has not seen, a model without memory points) the
# device-priced one (a seq scan).
$node->safe_psql('postgres', q{
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, 1, CASE WHEN b = 1 THEN 10 ELSE 400 END
	  FROM unnest(ARRAY[1, 16, 1000000]) b;
	INSERT INTO qdtt_memory_cost VALUES ('pg_default', 0.4, 0.4, 2, 2, 0.05, 0.05, 1.3, 0);
	CREATE TABLE hot (c1 int, c2 int, pad text);
	INSERT INTO hot SELECT g, (g * 7919) % 200000, repeat('h', 60) FROM generate_series(1, 200000) g;
	CREATE INDEX ON hot (c2);
	ANALYZE hot;
});
$node->safe_psql('postgres', 'SELECT qdtt_sample_residency()');
my $q = 'SELECT max(c1) FROM hot WHERE c2 BETWEEN 5000 AND 5999';
my $set = 'SET qdtt.cost_unit_us = 10; SET max_parallel_workers_per_gather = 0;';
sub scan_of
{
	my ($settings) = @_;
	my $plan = $node->safe_psql('postgres', "$set $settings EXPLAIN (COSTS OFF) $q");
	return ($plan =~ /((Bitmap Heap|Index|Index Only|Seq) Scan)/)[0] // $plan;
}
is( $node->safe_psql('postgres', q{
		SELECT shared_buffers_fraction > 0.9 FROM qdtt_residency
		 WHERE relation = 'hot'::regclass AND fork = 'main'}),
	't', 'the new table sits in shared_buffers');
like(scan_of(''), qr/^(Index|Bitmap Heap) Scan$/, 'resident: the memory-priced plan reads 0.5% through the index');
is(scan_of('SET qdtt.use_residency = off;'), 'Seq Scan',
	'qdtt.use_residency = off: every page a device read, the seq scan');
is( $node->safe_psql('postgres', qq{$set SELECT bool_and(shared_buffers_fraction > 0.9 AND io_cost_device = 0
		AND io_cost_memory > 0) FROM qdtt_explain('$q')}),
	't', 'qdtt_explain shows the residency used and the I/O cost all in memory');
is( $node->safe_psql('postgres', qq{$set SET qdtt.use_residency = off;
		SELECT bool_and(shared_buffers_fraction IS NULL AND io_cost_memory = 0 AND io_cost_device > 0)
		FROM qdtt_explain('$q')}),
	't', 'and without residency, no fractions and all of it on the device');

# A parallel index scan of the resident table: its participants share the
# heap page reads from memory as they share its tuples (core charges every
# read in full), and its path is not pruned by the parallel bitmap path
# before either is charged for its work in memory.  Sharing needs a second
# CPU (participants beyond the CPUs share nothing).
my $par = 'SET qdtt.cost_unit_us = 10; SET max_parallel_workers_per_gather = 2;
	SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;';
SKIP:
{
	chomp(my $cpus = `getconf _NPROCESSORS_ONLN`);
	skip 'the parallel hand-back needs 2 CPUs or more', 3 if $cpus < 2;
	is( $node->safe_psql('postgres', qq{$par
			SELECT count(*) FILTER (WHERE scan = 'Parallel Index Scan' AND memory_work_cost < 0) = 1
			   AND count(*) FILTER (WHERE scan = 'Parallel Bitmap Heap Scan') = 1
			FROM qdtt_explain('$q')}),
		't', 'resident: a parallel index scan and a parallel bitmap heap scan are both candidates, the index scan\'s page reads shared');
	# core's own heuristic gives a scan of a few index pages no worker;
	# stock_cost is still core's price of the path, at the path's degree
	is( $node->safe_psql('postgres', qq{$par
			SELECT bool_and(stock_cost > 0 AND stock_cost <> qdtt_cost)
			FROM qdtt_explain('$q') WHERE scan = 'Parallel Index Scan'}),
		't', 'the parallel index scan\'s stock_cost is core\'s price, not the model\'s');
	# device-priced there is one round, where the bitmap path can prune
	# the index path: the bitmap path is disabled, a worker forced
	is( $node->safe_psql('postgres', qq{$par SET qdtt.use_residency = off; SET enable_bitmapscan = off;
			BEGIN; ALTER TABLE hot SET (parallel_workers = 1);
			SELECT count(*) FILTER (WHERE scan = 'Parallel Index Scan') = 1
			   AND bool_and(memory_work_cost = 0)
			FROM qdtt_explain('$q');
			ROLLBACK}),
		't', 'device-priced: the parallel index scan is a candidate, with nothing handed back');
}

# A prefetching bitmap heap scan asks for each page on its own, so its pages
# cost random reads however dense the bitmap, also on a device (this model)
# that gains nothing from the queue; without prefetch, readahead serves a
# dense bitmap and core's interpolation toward sequential pages holds.
my $dense = 'SELECT max(c1) FROM hot WHERE c2 BETWEEN 0 AND 60000';
my %bhs;
for my $eic (0, 1)
{
	$bhs{$eic} = $node->safe_psql('postgres', qq{$set SET qdtt.use_residency = off;
		SET effective_io_concurrency = $eic;
		SELECT qdtt_cost FROM qdtt_explain('$dense') WHERE scan = 'Bitmap Heap Scan'});
}
ok($bhs{1} > 5 * $bhs{0},
	"a dense prefetching bitmap scan is priced as random reads ($bhs{1}), without prefetch as core interpolates ($bhs{0})");

# A table the page cache holds in pieces (every other MB): a serial seq
# scan's readahead starts again at every uncached MB, so a Parallel Seq
# Scan's participants overlap their reads with each other's work, and its
# path is priced at the longer of the two (the shorter handed back as a
# negative memory_work_cost); on a device that gains from the queue its
# streams cost one stream's reads.  Cached whole, or cached in one piece
# (the uncached half one long run), nothing changes.
$node->safe_psql('postgres', q{
	CREATE TABLE pieces (c1 int, c2 int, pad text) WITH (autovacuum_enabled = off);
	INSERT INTO pieces SELECT g, g % 1000, repeat('p', 80) FROM generate_series(1, 200000) g;
	VACUUM (FREEZE, ANALYZE) pieces;
	CHECKPOINT;
});
my $pieces_file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('pieces')");
my $pieces_mb = int((-s $pieces_file) / (1024 * 1024));
$node->restart;		# nothing of it in shared_buffers

# dd's nocache drops the pages it has read from the page cache, clean ones
# only: the test nodes run with fsync off, so sync the file first
sub page_cache
{
	my ($keep) = @_;
	system('sync', $pieces_file) == 0 or die "sync: $?";
	system('dd', "if=$pieces_file", 'of=/dev/null', 'bs=1M', 'status=none') == 0
	  or die "dd: $?";
	for my $mb (0 .. $pieces_mb)
	{
		next if $keep->($mb);
		system('dd', "if=$pieces_file", 'of=/dev/null', 'bs=1M', "skip=$mb", 'count=1',
			'iflag=nocache', 'status=none') == 0
		  or die "dd: $?";
	}
	$node->safe_psql('postgres', 'SELECT qdtt_sample_residency()');
	return split /\|/, $node->safe_psql('postgres', q{
		SELECT round(os_cache_fraction::numeric, 1), os_cache_gaps FROM qdtt_residency
		 WHERE relation = 'pieces'::regclass AND fork = 'main'});
}
my $pfts = qq{$par SELECT memory_work_cost FROM qdtt_explain('SELECT max(c1) FROM pieces')
	WHERE scan = 'Parallel Seq Scan' ORDER BY workers LIMIT 1};
# the Parallel Seq Scan with one worker against the Seq Scan
my $cheaper = qq{$par SET max_parallel_workers_per_gather = 1;
	SELECT (SELECT qdtt_cost FROM qdtt_explain('SELECT max(c1) FROM pieces') WHERE scan = 'Parallel Seq Scan')
	     < (SELECT qdtt_cost FROM qdtt_explain('SELECT max(c1) FROM pieces') WHERE scan = 'Seq Scan')};
# a model whose random reads gain from the queue and whose concurrent
# sequential streams are slower than one (an SSD's under memory pressure)
my $gaining = q{
	DELETE FROM qdtt_calibration;
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, q, CASE WHEN b = 1 THEN (CASE WHEN q = 1 THEN 10 ELSE 30 END)
								ELSE 400 / q END
	  FROM unnest(ARRAY[1, 16, 1000000]) b, unnest(ARRAY[1, 2, 4]) q};
my $flat = q{
	DELETE FROM qdtt_calibration;
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, 1, CASE WHEN b = 1 THEN 10 ELSE 400 END
	  FROM unnest(ARRAY[1, 16, 1000000]) b};
SKIP:
{
	my ($every_other, $gaps) = page_cache(sub { $_[0] % 2 == 0 });
	# tmpfs keeps what dd asks to drop (its pages are the files)
	chomp(my $fs = `stat -f -c %T '$pieces_file'`);
	skip "the data directory is on $fs", 8 if $fs eq 'tmpfs';
	ok($every_other >= 0.3 && $every_other <= 0.7 && $gaps >= $pieces_mb / 2 - 1,
		"every other MB cached: fraction $every_other, $gaps uncached runs of $pieces_mb MB");
	my $back = $node->safe_psql('postgres', $pfts);
	ok($back ne '' && $back < 0,
		"every other MB cached: the parallel seq scan overlaps reads and work ($back)");
	is($node->safe_psql('postgres', "SET parallel_leader_participation = off; $pfts"), '0',
		'one participant (the leader not taking part): nothing handed back');
	$node->safe_psql('postgres', $gaining);
	is($node->safe_psql('postgres', $cheaper), 't',
		'in pieces, a queue-gaining model prices the parallel streams as one: the parallel seq scan is cheaper');
	my ($whole) = page_cache(sub { 1 });
	my $kept = $node->safe_psql('postgres', $pfts);
	ok($kept ne '' && $kept >= 0, "cached whole ($whole): nothing handed back ($kept)");
	my ($half, $one) = page_cache(sub { $_[0] < $pieces_mb / 2 });
	is($one, '1', "the first half cached in one piece ($half): one uncached run");
	is($node->safe_psql('postgres', $cheaper), 'f',
		'in one piece the same model prices the streams as calibrated: the serial seq scan is cheaper');
	$node->safe_psql('postgres', $flat);
	$kept = $node->safe_psql('postgres', $pfts);
	ok($kept ne '' && $kept >= 0, "the first half cached in one piece: nothing handed back ($kept)");
}
$node->safe_psql('postgres', "$flat; DROP TABLE pieces");

# A relation the sampler has not seen yet is priced as before.
$node->safe_psql('postgres', q{
	CREATE TABLE fresh AS SELECT * FROM hot;
	CREATE INDEX ON fresh (c2);
	ANALYZE fresh;
});
(my $qf = $q) =~ s/hot/fresh/;
is( $node->safe_psql('postgres', "$set EXPLAIN (COSTS OFF) $qf") =~ /Seq Scan/ ? 'seq' : 'other',
	'seq', 'a table the sampler has not counted yet: device-priced, as without residency');

# A model without memory points (calibrated before they existed).
$node->safe_psql('postgres', 'DELETE FROM qdtt_memory_cost');
is(scan_of(''), 'Seq Scan', 'a model without memory points prices every page on the device');
$node->safe_psql('postgres', 'DELETE FROM qdtt_calibration; DROP TABLE hot, fresh');

# A database still at 0.2 (no os_cache_gaps) reads the sampler through the
# 0.3 library, and the update adds the column.
$node->safe_psql('postgres', 'CREATE DATABASE old_sql');
$node->safe_psql('old_sql', q{CREATE EXTENSION qdtt_costing VERSION '0.2'; SELECT qdtt_sample_residency()});
is($node->safe_psql('old_sql', q{SELECT count(*) > 0 AND bool_and(blocks >= 0) FROM qdtt_residency}),
	't', 'the 0.2 view reads the counts through the new library');
$node->safe_psql('old_sql', 'ALTER EXTENSION qdtt_costing UPDATE');
is($node->safe_psql('old_sql', q{SELECT count(*) > 0 AND bool_and(os_cache_gaps >= 0) FROM qdtt_residency
	WHERE os_cache_blocks IS NOT NULL}),
	't', 'after ALTER EXTENSION ... UPDATE the view has os_cache_gaps');

# Without the preload: a clear error.
my $bare = SSDKitTest::node('residency_bare', preload => []);
$bare->safe_psql('postgres', 'CREATE EXTENSION qdtt_costing');
my ($ret, $out, $err) = $bare->psql('postgres', 'SELECT * FROM qdtt_residency');
like($err, qr/the QDTT residency sampler is not running.*shared_preload_libraries/s,
	'without the preload the view says the sampler is not running and why');
$bare->stop;

# It stops with the server, fast and cleanly.
$node->append_conf('postgresql.conf', "qdtt.residency_interval = 1\n");
$node->reload;
my $stop_t0 = time;
$node->stop('fast');
cmp_ok(time - $stop_t0, '<', 30, 'the server stops promptly with the sampler running');
unlike(slurp_file($node->logfile), qr/residency sampler.*(terminated by signal|exited with exit code [2-9])/,
	'the sampler never crashed');

done_testing();
