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
