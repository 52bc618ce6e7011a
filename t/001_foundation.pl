# The foundation every suite stands on: the four extensions load through
# shared_preload_libraries into a checksummed cluster, install, report their
# status, refuse what they must refuse, and the cluster survives crashes
# under a write load with no acknowledged commit lost.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $node = SSDKitTest::node('foundation', warmup => 1);

is($node->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'checksums on');

for my $ext (@SSDKitTest::EXTENSIONS)
{
	$node->safe_psql('postgres', "CREATE EXTENSION $ext");
	is( $node->safe_psql('postgres', "SELECT preloaded, io_uring FROM ${ext}_status()"),
		't|t', "$ext: preloaded, io_uring available");
}

# A background worker or another backend sees the same: status is per
# library load, and every backend inherits it from the postmaster.
is( $node->safe_psql('postgres',
		'SELECT count(*) FROM pg_extension WHERE extname IN '
		  . "('ssd_cache','qdtt_costing','ssd_sort','flashscan')"),
	'4', 'all four installed in one database');

# Crash loop: three kill -9 style stops during a write load; after each
# recovery every acknowledged commit is there, and the data is sound.
SSDKitTest::ledger_init($node);
for my $round (1 .. 3)
{
	my $acked = SSDKitTest::ledger_pgbench($node,
		clients => 4, seconds => 30, crash_after => 2);
	my $n = 0;
	$n += $_ for values %$acked;
	cmp_ok($n, '>', 0, "round $round: pgbench committed $n transactions before the crash");
	SSDKitTest::ledger_check($node, $acked, "round $round");
	$node->safe_psql('postgres', 'TRUNCATE ssdkit_ledger');
}
SSDKitTest::amcheck_ok($node, 'after crashes');
SSDKitTest::checksums_ok($node, 'after crashes');

# Without shared_preload_libraries, ssd_cache installs with a warning that
# says how to fix it (a dump of a database that had it restores on any
# server), and its functions refuse to run; the other extensions install.
my $plain = SSDKitTest::node('no_preload', preload => []);
my ($ret, $out, $err) = $plain->psql('postgres', 'CREATE EXTENSION ssd_cache');
is($ret, 0, 'ssd_cache installs when not preloaded');
like($err, qr/WARNING:\s+ssd_cache must be loaded via shared_preload_libraries/, 'a warning says why');
like($err, qr/HINT:\s+Add ssd_cache to shared_preload_libraries/, 'hint says how');
is($plain->safe_psql('postgres', 'SELECT preloaded FROM ssd_cache_status()'), 'f',
	'ssd_cache_status() reports preloaded = false');
for my $q ('SELECT * FROM ssd_cache_stats', 'SELECT ssd_cache_flush()',
	'SELECT * FROM ssd_cache_warmup', 'SELECT ssd_cache_reset_stats()')
{
	($ret, $out, $err) = $plain->psql('postgres', $q);
	like($err, qr/ERROR:\s+ssd_cache is not loaded through shared_preload_libraries/,
		"$q: refused with the reason");
}
$plain->safe_psql('postgres', 'DROP EXTENSION ssd_cache');
$plain->safe_psql('postgres', 'CREATE EXTENSION qdtt_costing');
is($plain->safe_psql('postgres', 'SELECT preloaded FROM qdtt_costing_status()'),
	'f', 'qdtt_costing loaded on demand reports preloaded = false');
is($plain->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');

$plain->stop;
$node->stop;
done_testing();
