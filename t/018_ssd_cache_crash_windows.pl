# ssd_cache at the edges of a crash: the window between a disk write and the
# overwrite of its slot (without full_page_writes redo does not repair the
# slot: the page-LSN check does); checkpoints with nothing to sync are still
# recorded, so a crash after them keeps the cache; a crash-restart cycle of
# the postmaster does not stop later clean shutdowns from being recorded; the
# file lock does not leak into programs the server runs.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use SSDKitTest;

my $node = SSDKitTest::node('windows', cache => '32MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\nautovacuum = off\n"
	  . "full_page_writes = off\ncheckpoint_timeout = '1h'\nbgwriter_lru_maxpages = 0\n"
	  . "restart_after_crash = on\nfsync = on\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE t (id int PRIMARY KEY, v int, pad text);
	INSERT INTO t SELECT g, 0, repeat('t', 300) FROM generate_series(1, 5000) g;
	CREATE TABLE w AS SELECT g AS id, repeat('w', 300) AS pad FROM generate_series(1, 60000) g;
});

sub loaded
{
	my @n = slurp_file($node->logfile) =~ /preparation phase loaded (\d+) of/g;
	return $n[-1];
}

# Warm t into the cache, then push it out of shared_buffers with w.
sub evict_buffers
{
	$node->safe_psql('postgres', "SELECT pg_prewarm('w')") for 1 .. 2;
	return;
}

# 1. The crash window, full_page_writes off.
$node->restart;
$node->safe_psql('postgres', "SELECT pg_prewarm('t')");
SSDKitTest::cache_drain($node);
cmp_ok(SSDKitTest::cached_blocks($node, 't'), '>', 50, 't is cached');
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'UPDATE t SET v = 1');
# A backend reading w (larger than shared_buffers) evicts t's dirty pages,
# writes the first to disk and dies before it updates its slot.
$node->psql('postgres',
	"SET ssd_cache.fault_injection = 'die_before_slot_write'; SELECT pg_prewarm('w'); SELECT pg_prewarm('w')");
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
ok($node->log_contains(qr/server process .* was terminated by signal 9/),
	'a backend died between a disk write and its slot');
$node->poll_query_until('postgres', "SELECT mode = 'write-through' FROM ssd_cache_stats")
  or die 'cache not verified';
evict_buffers();
is($node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE v = 1'), '5000',
	'every committed update is read back, none from a stale slot');
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'no cached page differs from the disk');

# 2. A checkpoint with nothing to sync is recorded: after a crash right
#    after it the cache is kept.
$node->restart;
$node->safe_psql('postgres', "SELECT pg_prewarm('t')");
SSDKitTest::cache_drain($node);
sleep 0.5;								# the admission worker keeps a marker pending
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'CHECKPOINT');	# the second has nothing to sync
my $before = $node->safe_psql('postgres', 'SELECT used_slots FROM ssd_cache_stats');
$node->stop('immediate');
$node->start;
ok(!$node->log_contains(qr/happened without ssd_cache/), 'an idle checkpoint is one the cache saw');
cmp_ok(loaded(), '>=', $before - 5, "the cache is kept through the crash ($before pages)");

# 3. After a crash-restart cycle of the postmaster (a backend killed), a
#    clean shutdown is still recorded: the next start trusts the cache at once.
kill 'KILL', $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
$node->poll_query_until('postgres', "SELECT mode = 'write-through' FROM ssd_cache_stats")
  or die 'cache not verified';
$node->restart;
ok($node->log_contains(qr/preparation phase loaded \d+ of \d+ cached pages in [0-9.]+ ms\n/),
	'after a crash-restart cycle, a clean shutdown is recorded (no verification needed)');
is($node->safe_psql('postgres', 'SELECT mode FROM ssd_cache_stats'), 'write-through',
	'and the cache is served at once');

# 4. The file lock is not inherited by programs the server runs.
$node->safe_psql('postgres', "COPY (SELECT 1) TO PROGRAM 'setsid sleep 20 > /dev/null 2>&1 &'");
$node->restart;
is($node->safe_psql('postgres', 'SELECT mode FROM ssd_cache_stats'), 'write-through',
	'a program started by the server does not keep the cache file locked');

is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM t'), '5000|5000', 'data right');
SSDKitTest::amcheck_ok($node, 'crash windows');
$node->stop;
done_testing();
