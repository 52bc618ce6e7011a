# A streaming standby with its own ssd_cache: WAL replay reads and writes
# through the cache, so the standby's cache stays equal to its disk through
# a write workload, relation drops and a promotion, and the promoted server
# keeps its data through a crash.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# Sequential detection off: these tests warm caches with scans (see t/011).
my $conf = "shared_buffers = 16MB\nssd_cache.sequential_detection = none\nfsync = on\n";
my $primary = SSDKitTest::node('primary', cache => '32MB', conf => $conf,
	init => { allows_streaming => 1 });
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE t (id int PRIMARY KEY, pad text);
	INSERT INTO t SELECT g, repeat('a', 300) FROM generate_series(1, 20000) g;
	CREATE TABLE doomed (id int, pad text);
	INSERT INTO doomed SELECT g, repeat('d', 300) FROM generate_series(1, 20000) g;
});
$primary->backup('b');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
# The backup carries the primary's settings: the standby needs its own file.
$standby->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($standby) . "'\n");
$standby->start;
ok($standby->log_contains(qr/ssd_cache: starting with an empty cache .* because the cache file did not exist/),
	'the standby starts its own, empty cache');

# Warm the standby's cache with both tables.
$standby->safe_psql('postgres', 'SELECT sum(length(pad)) FROM t; SELECT sum(length(pad)) FROM doomed;');
SSDKitTest::cache_drain($standby);
cmp_ok(SSDKitTest::cache_stat($standby, 'used_slots'), '>', 500, 'the standby caches pages');

# Writes on the primary, replayed on the standby through its cache.
SSDKitTest::ledger_init($primary);
SSDKitTest::ledger_pgbench($primary, clients => 2, seconds => 5,
	extra_sql => "UPDATE t SET pad = md5(random()::text) WHERE id = (random() * 19999)::int + 1;");
$primary->safe_psql('postgres', "UPDATE t SET pad = repeat('b', 300) WHERE id % 7 = 0; DROP TABLE doomed;");
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');	# a restartpoint: replayed pages reach disk
is($standby->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'standby: every cached page equals its disk copy after replay');
my $q = 'SELECT count(*), sum(hashtext(pad)) FROM t';
is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'standby answers like the primary');
is($standby->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'doomed'"), '0',
	'the dropped table is gone on the standby');
SSDKitTest::cache_drain($standby);
is($standby->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'standby: the dropped table left nothing stale in the cache');

# Promotion, writes, and a crash of the promoted server.
$primary->stop;
$standby->promote;
$standby->safe_psql('postgres', "UPDATE t SET pad = repeat('c', 300) WHERE id % 5 = 0");
is($standby->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'promoted: cache equals disk');
my $before = $standby->safe_psql('postgres', $q);
SSDKitTest::crash_restart($standby);
is($standby->safe_psql('postgres', $q), $before, 'promoted server keeps its data through a crash');
is($standby->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'promoted, after the crash: cache equals disk');
SSDKitTest::amcheck_ok($standby, 'promoted standby');
$standby->stop;
done_testing();
