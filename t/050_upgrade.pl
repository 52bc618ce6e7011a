# ALTER EXTENSION ... UPDATE from 0.1 with data in place: every extension of
# the set installed at 0.1 keeps working with the new libraries, updates to
# the current version, and keeps its data: a pax table (rows, index, FlashScan
# plans), a hand-made QDTT model, a warm SSD cache (ssd_cache_stats gains its
# current columns).  After a restart all of it is still there.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $version = slurp_file("$ENV{SSDKIT_ROOT}/VERSION");
chomp $version;
(my $extversion = $version) =~ s/^(\d+\.\d+).*/$1/;

my $node = SSDKitTest::node('upgrade', cache => '32MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\n");
for my $ext (@SSDKitTest::EXTENSIONS)
{
	$node->safe_psql('postgres', "CREATE EXTENSION $ext VERSION '0.1'");
}
is($node->safe_psql('postgres',
		"SELECT string_agg(extname || ' ' || extversion, ', ' ORDER BY extname) FROM pg_extension WHERE extname <> 'plpgsql'"),
	'flashscan 0.1, qdtt_costing 0.1, ssd_cache 0.1, ssd_sort 0.1', 'every extension installed at 0.1');

# Data in place at 0.1.
$node->safe_psql('postgres', q{
	CREATE TABLE p (id int, k int, pad text) USING pax;
	INSERT INTO p SELECT g, g % 100, repeat('p', 100) FROM generate_series(1, 20000) g;
	CREATE INDEX p_k ON p (k);
	ANALYZE p;
	CREATE TABLE h AS SELECT g AS id, repeat('h', 300) AS pad FROM generate_series(1, 20000) g;
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, q, CASE WHEN b = 1 THEN 10 - q ELSE 30.0 / q END
	FROM unnest(ARRAY[1, 16]) b, unnest(ARRAY[1, 2, 4, 8]) q;
});
my $pax_q = 'SELECT count(*), sum(id), sum(length(pad)) FROM p WHERE k < 10';
my $pax_rows = $node->safe_psql('postgres',
	"SELECT count(*), sum(g), sum(100) FROM generate_series(1, 20000) g WHERE g % 100 < 10");
is($node->safe_psql('postgres', $pax_q), $pax_rows, 'pax rows at 0.1');
$node->restart;
$node->safe_psql('postgres', 'SELECT sum(length(pad)) FROM h');
SSDKitTest::cache_drain($node);
my $cached = $node->safe_psql('postgres', 'SELECT used_slots FROM ssd_cache_stats');
cmp_ok($cached, '>', 500, "the cache is warm at 0.1 ($cached pages)");
is($node->safe_psql('postgres', 'SELECT mode FROM ssd_cache_stats'), 'write-through',
	'0.1 SQL works with the new library');

# The update.
for my $ext (@SSDKitTest::EXTENSIONS)
{
	$node->safe_psql('postgres', "ALTER EXTENSION $ext UPDATE");
}
is($node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT extversion, ',') FROM pg_extension WHERE extname <> 'plpgsql'"),
	$extversion, "every extension updated to $extversion (VERSION $version)");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension e, pg_available_extensions a "
		  . "WHERE a.name = e.extname AND a.default_version <> e.extversion"),
	'0', 'installed versions are the default versions');
is($node->safe_psql('postgres',
		"SELECT pg_get_function_arguments('qdtt_calibrate'::regproc) LIKE '%recommended_io_concurrency%', "
		  . "to_regprocedure('qdtt_apply_prefetch(name)') IS NOT NULL"),
	't|t', 'qdtt_costing 0.2: qdtt_calibrate() recommends a prefetch depth, qdtt_apply_prefetch() exists');

sub still_there
{
	my ($label) = @_;
	is($node->safe_psql('postgres', $pax_q), $pax_rows, "$label: pax rows");
	is($node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; $pax_q"),
		$pax_rows, "$label: pax rows through the index");
	is($node->safe_psql('postgres',
			'SELECT count(*) FROM qdtt_calibration WHERE tablespace = \'pg_default\''),
		'8', "$label: the QDTT model's points");
	is($node->safe_psql('postgres',
			'SELECT count(*) FROM qdtt_model WHERE tablespace = \'pg_default\''),
		'2', "$label: the QDTT model's bands");
	is($node->safe_psql('postgres', 'SELECT qdtt_cost(16, 2)'), '15', "$label: the model prices");
	is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM h'), '20000|200010000',
		"$label: heap rows");
	is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
		"$label: every cached page equals the disk");
	return;
}
still_there('after the update');
cmp_ok($node->safe_psql('postgres', 'SELECT used_slots FROM ssd_cache_stats'), '>=', $cached,
	'after the update: the cache is as warm');
is($node->safe_psql('postgres', "SELECT mode || ' ' || coalesce(problem, '-') || ' ' || admission_io FROM ssd_cache_stats"),
	'write-through - io_uring', 'after the update: ssd_cache_stats has its new columns');

$node->restart;
still_there('after a restart');

# The documented path across a pax format change: through heap and back,
# with the index and the rows kept.
$node->safe_psql('postgres', 'ALTER TABLE p SET ACCESS METHOD heap');
is($node->safe_psql('postgres', "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'p'"),
	'heap', 'pax table rewritten as heap');
is($node->safe_psql('postgres', $pax_q), $pax_rows, 'the rows, in heap');
$node->safe_psql('postgres', 'ALTER TABLE p SET ACCESS METHOD pax');
is($node->safe_psql('postgres', "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'p'"),
	'pax', 'and back to pax');
still_there('after the rewrite through heap');
SSDKitTest::amcheck_ok($node, 'upgrade');
$node->stop;
done_testing();
