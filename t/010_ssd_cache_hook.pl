# ssd_cache's storage-manager hook: on this server binary every kind of
# storage call goes through the wrapped dispatch tables, results stay
# correct, and a binary whose tables do not match refuses to start.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# fsync = on: with fsync off the checkpointer never calls sync handlers.
my $node = SSDKitTest::node('hook', conf => "shared_buffers = 16MB\nfsync = on\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
ok($node->log_contains(qr/ssd_cache: storage manager hooked/), 'startup logs the hook');

sub calls
{
	my %c = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres', 'SELECT slot, calls FROM ssd_cache_hook_status()');
	return \%c;
}

is( $node->safe_psql('postgres',
		"SELECT string_agg(slot || '=' || wraps, ',' ORDER BY slot) FROM ssd_cache_hook_status()"),
	'smgr_create=mdcreate,smgr_extend=mdextend,smgr_prefetch=mdprefetch,smgr_read=mdread,'
	  . 'smgr_truncate=mdtruncate,smgr_unlink=mdunlink,smgr_write=mdwrite,'
	  . 'smgr_writeback=mdwriteback,sync_syncfiletag=mdsyncfiletag,sync_unlinkfiletag=mdunlinkfiletag',
	'status lists every wrapped slot and the md.c function behind it');

my $c0 = calls();
$node->safe_psql('postgres', q{
	CREATE TABLE h (id int PRIMARY KEY, pad text);
	INSERT INTO h SELECT g, repeat('p', 200) FROM generate_series(1, 50000) g;
	CHECKPOINT;
});
my $nblocks = $node->safe_psql('postgres', "SELECT pg_relation_size('h') / 8192");
my $c1 = calls();
cmp_ok($c1->{smgr_create} - $c0->{smgr_create}, '>=', 2, 'CREATE TABLE creates through the hook');
cmp_ok($c1->{smgr_extend} - $c0->{smgr_extend}, '>=', $nblocks, 'extension goes through the hook');
cmp_ok($c1->{smgr_write} - $c0->{smgr_write}, '>', 0, 'checkpoint writes go through the hook');
cmp_ok($c1->{sync_syncfiletag} - $c0->{sync_syncfiletag}, '>', 0,
	'checkpoint syncs go through the sync handler hook');

# Reads: after a restart shared_buffers is cold, so a sequential scan reads
# every block through smgr_read (the table is larger than shared_buffers).
$node->restart;
my $r0 = calls()->{smgr_read};
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM h'), '50000|1250025000',
	'scan through the hook returns the right rows');
cmp_ok(calls()->{smgr_read} - $r0, '>=', $nblocks, "a cold scan reads all $nblocks blocks through the hook");

# Prefetch: a bitmap heap scan with effective_io_concurrency prefetches.
$node->restart;
my $p0 = calls()->{smgr_prefetch};
$node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_indexscan = off; SET effective_io_concurrency = 16;
	SELECT count(*) FROM h WHERE id % 7 = 0 AND id BETWEEN 1 AND 40000;
});
cmp_ok(calls()->{smgr_prefetch} - $p0, '>', 0, 'prefetches go through the hook');

# Truncation: VACUUM cuts off the empty tail.
my $t0 = calls()->{smgr_truncate};
$node->safe_psql('postgres', 'DELETE FROM h WHERE id > 1000; VACUUM h;');
cmp_ok(calls()->{smgr_truncate} - $t0, '>', 0, 'VACUUM truncation goes through the hook');
cmp_ok($node->safe_psql('postgres', "SELECT pg_relation_size('h') / 8192"), '<', $nblocks,
	'the table really shrank');

# Unlink: DROP TABLE unlinks at commit, the file itself at the next checkpoint.
my $u0 = calls();
$node->safe_psql('postgres', 'DROP TABLE h; CHECKPOINT; CHECKPOINT;');
my $u1 = calls();
cmp_ok($u1->{smgr_unlink} - $u0->{smgr_unlink}, '>', 0, 'DROP TABLE unlinks through the hook');
cmp_ok($u1->{sync_unlinkfiletag} - $u0->{sync_unlinkfiletag}, '>', 0,
	'deferred unlink at checkpoint goes through the sync handler hook');

# Writeback: backend_flush_after makes backends ask the kernel to write back.
my $w0 = calls()->{smgr_writeback};
$node->safe_psql('postgres', q{
	SET backend_flush_after = '64kB';
	CREATE TABLE wb AS SELECT g AS id FROM generate_series(1, 300000) g;
	CHECKPOINT;
});
cmp_ok(calls()->{smgr_writeback} - $w0, '>', 0, 'writeback requests go through the hook');

# The wrapped server survives a crash and is sound afterwards.
SSDKitTest::crash_restart($node);
is($node->safe_psql('postgres', 'SELECT count(*) FROM wb'), '300000', 'data intact after crash');
SSDKitTest::amcheck_ok($node, 'hooked server');
$node->stop;

# Fail safe: on a server whose tables do not match, nothing is hooked and the
# server runs without the cache, saying why.
my $bad = SSDKitTest::node('hook_mismatch', cache => '8MB',
	conf => "ssd_cache.fault_injection = 'hook_layout'\n");
ok($bad->log_contains(qr/WARNING:  ssd_cache is off: found 0 copies of the storage manager table/),
	'mismatched dispatch tables: the WARNING says what was found');
ok($bad->log_contains(qr/HINT:  Fix the cause and restart the server/), 'and what to do');
$bad->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
is($bad->safe_psql('postgres', 'SELECT count(*) FROM ssd_cache_hook_status()'), '0', 'nothing is hooked');
like($bad->safe_psql('postgres', 'SELECT mode || \': \' || problem FROM ssd_cache_stats'),
	qr/^off: found 0 copies/, 'ssd_cache_stats says the cache is off and why');
$bad->safe_psql('postgres', 'CREATE TABLE x AS SELECT g FROM generate_series(1, 1000) g');
is($bad->safe_psql('postgres', 'SELECT sum(g) FROM x'), '500500', 'the server works without the cache');
$bad->stop;

done_testing();
