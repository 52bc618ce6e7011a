# ssd_cache keeps its pages across a clean restart and across crashes, serves
# them at once, and never loses a committed transaction or serves a page
# that differs from the disk.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# These tests warm the cache with sequential scans; TAC would rightly not
# admit those, so every read counts as random here (t/014 tests admission).
my $node = SSDKitTest::node('cache', cache => '64MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\nfsync = on\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
is(SSDKitTest::cache_stat($node, 'mode'), 'write-through', 'cache is on, write-through');
ok($node->log_contains(qr/ssd_cache: starting with an empty cache .* because the cache file did not exist/),
	'first start says why the cache is empty');

# About 25 MB of table and index, more than shared_buffers.
$node->safe_psql('postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, pad text);
	INSERT INTO t SELECT g, repeat('p', 200) FROM generate_series(1, 100000) g;
	VACUUM ANALYZE t;
});
# Pages are offered when read from disk; pages that stay in shared_buffers
# are not read again, and the admission queue (512 pages) refuses what it
# cannot hold.  Restarting empties shared_buffers, so a few rounds of
# restart and scan cache the whole table.
for my $pass (1 .. 6)
{
	$node->restart;
	# Must read the heap (count(*) would be an index-only scan).
	$node->safe_psql('postgres', 'SELECT sum(length(pad)) FROM t');
	SSDKitTest::cache_drain($node);
}
my $used = SSDKitTest::cache_stat($node, 'used_slots');
cmp_ok($used, '>=', 2900, "the table's pages were admitted ($used slots used)");
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'every cached page equals its disk copy');

# Clean restart: the directory is reloaded before anything reads a page, and
# the first reads are hits.
$node->restart;
ok($node->log_contains(qr/ssd_cache: preparation phase loaded (\d+) of 8192 cached pages/),
	'restart logs the preparation phase');
my ($loaded) = slurp_file($node->logfile) =~ /.*preparation phase loaded (\d+) of/s;
cmp_ok($loaded, '>=', $used - 16, "restart reloaded $loaded of $used cached pages");
$node->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
is( $node->safe_psql('postgres',
		'SELECT count(*), sum(length(pad)) FROM t WHERE id % 97 = 0'),
	'1030|206000', 'results right after restart');
my $hits = SSDKitTest::cache_stat($node, 'hits');
my $disk = SSDKitTest::cache_stat($node, 'disk_reads');
cmp_ok($hits, '>', 2000, "warm after restart: $hits hits");
cmp_ok($disk, '<', $hits / 10, "and few disk reads ($disk)");

# In-place overwrites keep the cache equal to the disk.
$node->safe_psql('postgres', "UPDATE t SET pad = repeat('q', 200) WHERE id % 10 = 0; CHECKPOINT;");
cmp_ok(SSDKitTest::cache_stat($node, 'overwrites'), '>', 0, 'updates overwrite cached pages');
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'cache equals disk after updates');

# Crash loop: a write load (inserts and in-place updates of cached pages),
# killed repeatedly.  After each recovery: every acknowledged commit, no
# page differing from the disk, and a warm cache.
SSDKitTest::ledger_init($node);
for my $round (1 .. 8)
{
	my $acked = SSDKitTest::ledger_pgbench($node,
		clients => 4, seconds => 30, crash_after => 2,
		extra_sql => "UPDATE t SET pad = md5(random()::text) WHERE id = (random() * 99999)::int + 1;");
	SSDKitTest::ledger_check($node, $acked, "crash $round");
	SSDKitTest::cache_drain($node);
	my $log = slurp_file($node->logfile);
	my @loads = $log =~ /preparation phase loaded (\d+) of/g;
	cmp_ok($loads[-1], '>', 1000, "crash $round: warm after recovery ($loads[-1] pages)");
	is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
		"crash $round: cache equals disk");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '100000', 't intact');

# The miss-lookup diagnostic measures something (its value is reported by
# the benchmarks, never judged here).
like($node->safe_psql('postgres', 'SELECT ssd_cache_lookup_cost(10000)'), qr/^\d+(\.\d+)?(e[-+]?\d+)?$/,
	'ssd_cache_lookup_cost() returns nanoseconds per lookup');
SSDKitTest::amcheck_ok($node, 'after crash loop');
SSDKitTest::checksums_ok($node, 'after crash loop');
$node->stop;

# A cache file made by a start that failed in recovery before writing any
# slot (here: a recovery target past the end of the WAL): no page depends
# on any WAL, so the next start serves it at once, without a warning about
# WAL it cannot reach.
unlink(SSDKitTest::cache_file($node));
$node->append_conf('postgresql.conf',
	"restore_command = 'false'\nrecovery_target_lsn = 'FFFF/0'\n");
open(my $signal, '>', $node->data_dir . '/recovery.signal') or die;
close($signal);
ok(!$node->start(fail_ok => 1), 'a start that fails in recovery');
unlink($node->data_dir . '/recovery.signal');
$node->append_conf('postgresql.conf', "restore_command = ''\nrecovery_target_lsn = ''\n");
my $before = -s $node->logfile;
$node->start;
$node->safe_psql('postgres', 'SELECT count(*) FROM t');
unlike(substr(slurp_file($node->logfile), $before), qr/emptying the cache/,
	'after a start that failed before any slot write, the cache is not emptied');
$node->stop;
done_testing();
