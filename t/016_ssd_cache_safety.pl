# ssd_cache serves no page the data directory does not have, and no trouble
# with the cache takes the server down (issue 20).
#
# Stale or foreign pages: a second server configured with the same cache
# file cannot use it (the file is locked) and no server trusts a file
# another one wrote; a data directory restored from a crash-consistent or
# cold copy, or rewound by pg_rewind, under a cache file left as it was,
# starts with an empty cache; a read that bypasses shared_buffers cannot
# admit a page older than a concurrent write.
# Outages: a failed invalidation inside truncation, an ERROR with a slot
# pinned, a failed header write at checkpoint, a missing cache directory, no
# io_uring, a killed admission worker and a server release ssd_cache has not
# verified each leave the server up, with the data right, the cache off or in
# pass-through, a WARNING in the log and the reason in ssd_cache_stats.
# Speed: crash recovery keeps the cache warm, and DROP TABLE / TRUNCATE of a
# cached table write the directory in batches, not once per page.
# Item numbers are the issue's.  Database and tablespace moves on a standby
# are t/017.
use strict;
use warnings;

use Fcntl qw(:flock);
use File::Path qw(rmtree);
use Time::HiRes qw(time sleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# Shared with the other ssd_cache suites (SSDKitTest.pm).
*query = \&SSDKitTest::query;
*poll_until = \&SSDKitTest::poll_until;
*wait_write_through = \&SSDKitTest::wait_write_through;
*verify_ok = \&SSDKitTest::verify_ok;
*nblocks = \&SSDKitTest::nblocks;
*cached_blocks = \&SSDKitTest::cached_blocks;
*warm = \&SSDKitTest::warm;
*expected = \&SSDKitTest::expected;

# Sequential detection off: these tests warm caches with scans (see t/011).
# No timed checkpoints: the restore tests need to know which checkpoints the
# cache saw.
my $conf = "shared_buffers = 16MB\nssd_cache.sequential_detection = none\n"
  . "autovacuum = off\nfsync = on\ncheckpoint_timeout = '1h'\n";
my $rowsum = 'SELECT count(*), sum(id), sum(hashtext(pad)) FROM';

sub stat_of
{
	my ($node, $column) = @_;
	return query($node, "SELECT $column FROM ssd_cache_stats");
}

sub drain_within
{
	my ($node, $secs) = @_;
	return poll_until($node, 'SELECT admission_queue = 0 FROM ssd_cache_stats', $secs);
}

# Sequential scan: a table over shared_buffers / 4 is read through a small
# ring, so every scan reads it through smgr again.
sub scan
{
	my ($node, $table) = @_;
	$node->safe_psql('postgres', "SELECT sum(length(pad)) FROM $table");
	return;
}

# The table's rows by a heap scan and, with index => 1, through its primary
# key, against an expected() value.
sub data_ok
{
	my ($node, $table, $expected, $label, %opt) = @_;
	my $db = $opt{db} // 'postgres';
	is(query($node, "$rowsum $table", $db), $expected, "$label: $table has the expected rows");
	is( query($node,
			"SET enable_seqscan = off; SET enable_bitmapscan = off; $rowsum $table WHERE id > 0", $db),
		$expected, "$label: $table has the expected rows through its index")
	  if $opt{index};
	return;
}

sub log_since
{
	my ($node, $offset) = @_;
	return slurp_file($node->logfile, $offset);
}

# ssd_cache's WARNINGs since $offset, each with its DETAIL and HINT lines.
sub cache_warnings
{
	my ($node, $offset) = @_;
	my $log = log_since($node, $offset);
	my @w;
	push @w, $1
	  while $log =~ /(WARNING:  ssd_cache[^\n]*(?:\n[^\n]*(?:DETAIL|HINT):  [^\n]*)*)/g;
	return @w;
}

sub warning_like
{
	my ($node, $offset, $re, $label) = @_;
	my @w = cache_warnings($node, $offset);
	ok((grep { $_ =~ $re } @w), $label)
	  or diag("ssd_cache WARNINGs in the log:\n" . join("\n", @w));
	return;
}

sub no_panic
{
	my ($node, $offset, $label) = @_;
	unlike(log_since($node, $offset),
		qr/PANIC:|terminated by signal|terminating any other active server processes/,
		"$label: no PANIC, no crash");
	return;
}

# The cache was found untrustworthy at this start (LOG or WARNING).
sub emptied_like
{
	my ($node, $offset, $label) = @_;
	like(log_since($node, $offset), qr/(?:LOG|WARNING):  ssd_cache[^\n]*(?:empty|emptied)/,
		"$label: the cache starts empty");
	return;
}

# Test-only fault points for every process; false if the setting is refused.
sub set_fault
{
	my ($node, $points) = @_;
	my $r = query($node, "ALTER SYSTEM SET ssd_cache.fault_injection = '$points'");
	$node->reload;
	sleep 1;	# the checkpointer and the worker reload at their next wakeup
	return $r eq '';
}

sub clear_fault
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET ssd_cache.fault_injection');
	$node->reload;
	return;
}

sub problem_reported
{
	my ($node) = @_;
	return query($node, "SELECT coalesce(problem, '') <> '' FROM ssd_cache_stats");
}

my $node = SSDKitTest::node('safety', cache => '32MB', conf => $conf);
$node->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE t (id int PRIMARY KEY, pad text);
	INSERT INTO t SELECT g, repeat('t', 300) FROM generate_series(1, 20000) g;
	CREATE TABLE w (id int PRIMARY KEY, pad text);
	INSERT INTO w SELECT g, repeat('w', 300) FROM generate_series(1, 5000) g;
	VACUUM ANALYZE t;
	VACUUM ANALYZE w;
});
is(stat_of($node, 'mode'), 'write-through', 'the cache is on, write-through');
is(query($node, 'SELECT problem IS NULL FROM ssd_cache_stats'), 't', 'no problem is reported');
my @t_changes;
my $T = expected($node, 20000, 't');
data_ok($node, 't', $T, 'start', index => 1);

#
# 12. Crash recovery keeps the cache: redo changes a few pages, and the
#     rest stays cached and is served at once.
#
warm($node, 't', 't_pkey', 'w');
my $before_crash = stat_of($node, 'used_slots');
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', "UPDATE t SET pad = repeat('c', 300) WHERE id <= 100");
push @t_changes, ['g <= 100', "repeat('c', 300)"];
$T = expected($node, 20000, 't', @t_changes);
$node->stop('immediate');
$node->start;
ok(wait_write_through($node), 'after crash recovery the cache serves again');
my $after_crash = stat_of($node, 'used_slots');
cmp_ok($after_crash, '>=', 0.95 * $before_crash,
	"crash recovery kept the cache ($after_crash of $before_crash slots)");
$node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id = 1');	# catalogs
$node->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
data_ok($node, 't', $T, 'after crash recovery', index => 1);
my $ratio = stat_of($node, 'hit_ratio');
cmp_ok($ratio, '>', 0.9, "reads right after crash recovery are hits (hit ratio $ratio)");
verify_ok($node, 'after crash recovery');

# A crash loop over writes to cached pages.
SSDKitTest::ledger_init($node);
my $t_cached = cached_blocks($node, 't');
for my $round (1 .. 3)
{
	my $acked = SSDKitTest::ledger_pgbench($node,
		clients => 4, seconds => 30, crash_after => 2,
		extra_sql => "UPDATE w SET pad = md5(random()::text) WHERE id = (random() * 4999)::int + 1;\n"
		  . "SELECT pad FROM t WHERE id = (random() * 19999)::int + 1;");
	SSDKitTest::ledger_check($node, $acked, "crash $round");
	ok(wait_write_through($node), "crash $round: the cache serves again");
	SSDKitTest::cache_drain($node);
	verify_ok($node, "crash $round");
	cmp_ok(cached_blocks($node, 't'), '>=', 0.95 * $t_cached, "crash $round: t stays cached");
}
data_ok($node, 't', $T, 'after the crash loop', index => 1);
is(query($node, 'SELECT count(*) FROM w'), '5000', 'after the crash loop: w has all its rows');

#
# 13. DROP TABLE and TRUNCATE of a table with about 2500 cached pages write
#     the directory in batches: far fewer directory writes than pages.
#
$node->safe_psql('postgres',
	"SELECT ssd_cache_evict(c) FROM unnest('{t,t_pkey,w,w_pkey,ssdkit_ledger,ssdkit_ledger_pkey}'::regclass[]) c"
);
for my $case (['DROP TABLE', 'DROP TABLE big'], ['TRUNCATE', 'TRUNCATE big'])
{
	my ($what, $sql) = @$case;
	$node->safe_psql('postgres', q{
		CREATE TABLE big (id int, pad text);
		INSERT INTO big SELECT g, repeat('b', 300) FROM generate_series(1, 60000) g;
		VACUUM big;
	});
	warm($node, 'big');
	my $cached = cached_blocks($node, 'big');
	my $used0 = stat_of($node, 'used_slots');
	my $dw0 = stat_of($node, 'directory_writes');
	my $start = time;
	$node->safe_psql('postgres', $sql);
	my $secs = sprintf('%.2f', time - $start);
	SSDKitTest::cache_drain($node);
	my $dropped = $used0 - stat_of($node, 'used_slots');
	my $dw = stat_of($node, 'directory_writes') - $dw0;
	cmp_ok($dw, '<', $cached / 8,
		"$what of $cached cached pages: $dw directory writes (took $secs s)");
	cmp_ok($dropped, '>=', $cached - 20, "$what: the cache forgot the table's pages ($dropped)");
	cmp_ok($dropped, '<=', $cached, "$what: and nothing else");
	verify_ok($node, $what);
	$node->safe_psql('postgres', 'DROP TABLE IF EXISTS big');
}

#
# 3. A read that bypasses shared_buffers (pg_prewarm 'read') pauses between
#    its disk read and its offer to the cache; meanwhile a DELETE of the
#    block's rows commits and is checkpointed.  The old image must not be
#    admitted.  226 rows of (int, int) fill one page.
#
$node->safe_psql('postgres', q{
	CREATE TABLE r (id int, v int);
	INSERT INTO r SELECT g, g FROM generate_series(1, 4520) g;
	VACUUM r;
	CHECKPOINT;
});
is($node->safe_psql('postgres', "SELECT min(id), max(id), count(*) FROM r WHERE ctid < '(1,0)'"),
	'1|226|226', 'block 0 of r holds ids 1..226, block 1 ids 227..452');

sub bypass_race
{
	my ($block, $lo, $hi, $label) = @_;
	my $reader = $node->background_psql('postgres', on_error_stop => 0);
	my $start = time;
	$reader->query_until(qr/reading/,
		"SET ssd_cache.fault_injection = 'read_pause';\n\\echo reading\n"
		  . "SELECT pg_prewarm('r', 'read', 'main', $block, $block);\n");
	poll_until($node,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_prewarm(%'",
		5);
	sleep 0.5;	# the disk read is done; the offer waits
	$node->safe_psql('postgres', "DELETE FROM r WHERE id BETWEEN $lo AND $hi; CHECKPOINT;");
	my $written = time - $start;
	$reader->query('SELECT 1');	# returns once pg_prewarm has
	my $paused = time - $start;
	$reader->quit;
	cmp_ok($paused, '>=', 2.5, "$label: the bypass read paused between disk and cache");
	cmp_ok($written, '<', 3, "$label: the DELETE and CHECKPOINT committed during the pause");
	SSDKitTest::cache_drain($node);
	$node->restart;
	wait_write_through($node);
	is(query($node, "SELECT count(*) FROM r WHERE id BETWEEN $lo AND $hi"), '0',
		"$label: the deleted rows stay deleted after a restart");
	verify_ok($node, $label);
	return;
}

# The block in shared_buffers but not in the cache: the DELETE reads
# nothing, and the checkpoint writes a block the cache does not know.
$node->safe_psql('postgres', "SELECT ssd_cache_evict('r')");
is(cached_blocks($node, 'r'), '0', 'r is not cached');
bypass_race(0, 1, 226, 'bypass read racing a write (block in shared_buffers)');
# Cold shared_buffers: the DELETE reads the block too.
$node->safe_psql('postgres', "SELECT ssd_cache_evict('r')");
$node->restart;
wait_write_through($node);
bypass_race(1, 227, 452, 'bypass read racing a write (cold shared_buffers)');
is( query($node, 'SELECT count(*), sum(id) FROM r'),
	$node->safe_psql('postgres', 'SELECT count(*), sum(g) FROM generate_series(453, 4520) g'),
	'bypass reads: r has the expected rows');

#
# 6. Opening the cache file fails in a backend that reads cached pages: the
#    query is answered from the disk, no slot stays pinned (the admission
#    worker reuses the slots, fast shutdown completes).
#
# The fault is set in the session, so the backend must not have opened the
# file before: a first session brings the catalogs into shared_buffers (t
# itself is read through a ring and stays out), and the restart before it
# empties shared_buffers of what warm() read.
warm($node, 't', 't_pkey');
$node->restart;
wait_write_through($node);
$node->safe_psql('postgres', "$rowsum t");
$node->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
my ($rc, $out, $err) = $node->psql('postgres',
	"SET ssd_cache.fault_injection = 'cache_open_error'; $rowsum t");
is($rc, 0, 'cache file open error: the query succeeds');
is($out, $T, 'cache file open error: the rows come right from the disk');
cmp_ok(stat_of($node, 'hits'), '<', nblocks($node, 't') / 2,
	'cache file open error: the backend could not read the cache');
# The slots those reads looked up are freed and reused by admissions.
$node->safe_psql('postgres', "SELECT ssd_cache_evict('t')");
scan($node, 't');
ok(drain_within($node, 60), 'cache file open error: the admission worker is not stuck on a pinned slot');
{
	local $ENV{PGCTLTIMEOUT} = 60;
	ok($node->stop('fast', fail_ok => 1), 'cache file open error: fast shutdown completes');
}
$node->stop('immediate', fail_ok => 1);	# only if the fast one hung
$node->start;
ok(wait_write_through($node), 'cache file open error: the server restarts with the cache');
data_ok($node, 't', $T, 'cache file open error, after restart', index => 1);

#
# 10. SIGTERM to the admission worker: a new one starts and admits.
#
$node->restart;
wait_write_through($node);

# The worker's pid: from pg_stat_activity if it is listed there (a worker
# that does not connect to a database is not), else the postmaster's child
# with that process title.
sub admission_worker_pid
{
	my $pid = query($node,
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'ssd_cache admission'");
	return $pid if $pid =~ /^\d+$/;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		my ($child) = $stat =~ m{/proc/(\d+)/stat};
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		next unless defined $line && $line =~ /\) \S+ (\d+) / && $1 == $postmaster;
		open $fh, '<', "/proc/$child/cmdline" or next;
		my $title = <$fh> // '';
		close $fh;
		return $child if $title =~ /ssd_cache admission/;
	}
	return '';
}

my $pid = '';
my $deadline = time + 10;
while ($pid eq '' && time < $deadline)
{
	$pid = admission_worker_pid();
	sleep 0.1 if $pid eq '';
}
like($pid, qr/^\d+$/, 'the admission worker runs');
my $respawned = 0;
if ($pid =~ /^\d+$/)
{
	kill 'TERM', $pid;
	$deadline = time + 15;
	while (!$respawned && time < $deadline)
	{
		my $new = admission_worker_pid();
		$respawned = $new ne '' && $new != $pid;
		sleep 0.1;
	}
}
ok($respawned, 'a new admission worker runs within 15 s of a SIGTERM');
SKIP:
{
	skip 'no new admission worker', 2 unless $respawned;
	$node->safe_psql('postgres', "SELECT ssd_cache_evict('t')");
	my $used = stat_of($node, 'used_slots');
	for (1 .. 2)
	{
		scan($node, 't');
		SSDKitTest::cache_drain($node);
	}
	my $grown = stat_of($node, 'used_slots') - $used;
	cmp_ok($grown, '>', 300, "the new worker admits pages ($grown)");
	verify_ok($node, 'after the worker restart');
}

#
# 7. The cache header cannot be written at a checkpoint: the checkpoint
#    completes, the cache goes pass-through and starts empty next time.
#
my $off = -s $node->logfile;
ok(set_fault($node, 'header_write_error'), 'fault point header_write_error is accepted');
$node->safe_psql('postgres', "UPDATE w SET pad = repeat('h', 300) WHERE id <= 500");
($rc) = $node->psql('postgres', 'CHECKPOINT');
is($rc, 0, 'header write error: CHECKPOINT succeeds');
is(query($node, 'SELECT 1'), '1', 'header write error: the server is up');
is(stat_of($node, 'mode'), 'pass-through', 'header write error: pass-through');
like(stat_of($node, 'problem'), qr/header/i, 'header write error: the problem names the header');
no_panic($node, $off, 'header write error');
clear_fault($node);
$off = -s $node->logfile;
$node->restart;
emptied_like($node, $off, 'after a header write error');
ok(wait_write_through($node), 'after a header write error: write-through again');
verify_ok($node, 'after a header write error');
data_ok($node, 't', $T, 'after a header write error', index => 1);

#
# 5. Directory writes fail while truncation invalidates cached pages (15.20
#    truncates inside a critical section): no PANIC, pass-through, the
#    truncation done, an empty cache after a restart.
#
for my $v (qw(v_trunc v_vac v_drop))
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $v (id int, pad text);
		INSERT INTO $v SELECT g, repeat('v', 300) FROM generate_series(1, 5000) g;
		VACUUM $v;
	});
}
for my $case (
	[ 'TRUNCATE', 'v_trunc', 'TRUNCATE v_trunc', 'SELECT count(*) FROM v_trunc', '0' ],
	[
		'VACUUM truncation', 'v_vac', 'DELETE FROM v_vac WHERE id > 1000; VACUUM v_vac',
		"SELECT count(*), max(id), pg_relation_size('v_vac') / 8192 < 100 FROM v_vac", '1000|1000|t'
	],
	[
		'DROP TABLE', 'v_drop', 'DROP TABLE v_drop',
		"SELECT count(*) FROM pg_class WHERE relname = 'v_drop'", '0'
	])
{
	my ($what, $rel, $sql, $check, $want) = @$case;
	warm($node, $rel);
	$off = -s $node->logfile;
	ok(set_fault($node, 'dir_write_error'), "$what: directory writes fail");
	($rc, $out, $err) = $node->psql('postgres', $sql);
	is($rc, 0, "$what with failing directory writes succeeds") or diag($err);
	is(query($node, 'SELECT 1'), '1', "$what with failing directory writes: the server is up");
	no_panic($node, $off, "$what with failing directory writes");
	is(stat_of($node, 'mode'), 'pass-through', "$what with failing directory writes: pass-through");
	is(problem_reported($node), 't', "$what with failing directory writes: the problem is reported");
	is(query($node, $check), $want, "$what with failing directory writes: done");
	data_ok($node, 't', $T, "$what with failing directory writes");
	clear_fault($node);
	$off = -s $node->logfile;
	$node->restart;
	emptied_like($node, $off, "$what with failing directory writes, restarted");
	ok(wait_write_through($node), "$what with failing directory writes, restarted: write-through");
	verify_ok($node, "$what with failing directory writes, restarted");
	is(query($node, $check), $want, "$what with failing directory writes, restarted: still done");
}

#
# 9. No io_uring: admission writes synchronously; no crash loop.
#
$node->append_conf('postgresql.conf', "ssd_cache.fault_injection = 'io_uring_unavailable'");
$off = -s $node->logfile;
$node->restart;
ok(wait_write_through($node), 'without io_uring: the cache is write-through');
$node->safe_psql('postgres', "SELECT ssd_cache_evict('t')");
my $used = stat_of($node, 'used_slots');
for (1 .. 3)
{
	scan($node, 't');
	drain_within($node, 60);
}
my $grown = stat_of($node, 'used_slots') - $used;
cmp_ok($grown, '>=', nblocks($node, 't') / 2, "without io_uring: pages are admitted ($grown)");
is(stat_of($node, 'admission_io'), 'synchronous', 'without io_uring: admission_io says synchronous');
is(stat_of($node, 'mode'), 'write-through', 'without io_uring: still write-through');
verify_ok($node, 'without io_uring');
my $exits = () = log_since($node, $off)
  =~ /background worker "ssd_cache admission" \(PID \d+\) exited with exit code/g;
cmp_ok($exits, '<=', 1, "without io_uring: the admission worker does not crash-loop ($exits exits)");
$node->adjust_conf('postgresql.conf', 'ssd_cache.fault_injection', "''");
$node->restart;
wait_write_through($node);
SKIP:
{
	skip 'io_uring does not work here', 1
	  unless query($node, 'SELECT io_uring FROM ssd_cache_status()') eq 't';
	$node->safe_psql('postgres', "SELECT ssd_cache_evict('t')");
	scan($node, 't');
	SSDKitTest::cache_drain($node);
	is(stat_of($node, 'admission_io'), 'io_uring', 'with io_uring back: admission_io says io_uring');
}

#
# 11. A server release ssd_cache has not verified: it starts, without the
#     hook and the cache, and says so.
#
$node->adjust_conf('postgresql.conf', 'ssd_cache.fault_injection', "'server_release'");
$off = -s $node->logfile;
$node->restart;
warning_like($node, $off, qr/release|version/i, 'unverified server release: a WARNING says so');
is(stat_of($node, 'mode'), 'off', 'unverified server release: the cache is off');
is(problem_reported($node), 't', 'unverified server release: the problem is reported');
is(query($node, 'SELECT count(*) FROM ssd_cache_hook_status()'), '0',
	'unverified server release: the storage manager is not hooked');
data_ok($node, 't', $T, 'unverified server release', index => 1);
$node->adjust_conf('postgresql.conf', 'ssd_cache.fault_injection', "''");
$node->restart;
ok(wait_write_through($node), 'release check passed again: the cache is back');
cmp_ok(query($node, 'SELECT count(*) FROM ssd_cache_hook_status()'), '>', 0,
	'release check passed again: hooked');

#
# 8. The cache directory does not exist at startup (SSD not mounted): the
#    server starts without the cache.
#
my $missing = $node->basedir . '/ssd_not_mounted/ssd_cache.dat';
$node->stop;
$node->adjust_conf('postgresql.conf', 'ssd_cache.path', "'$missing'");
$off = -s $node->logfile;
my $started = $node->start(fail_ok => 1);
ok($started, 'SSD not mounted: the server starts');
SKIP:
{
	skip 'the server did not start', 5 unless $started;
	warning_like($node, $off, qr/No such file|not exist|missing|mount/i,
		'SSD not mounted: a WARNING says why the cache is off');
	is(stat_of($node, 'mode'), 'off', 'SSD not mounted: the cache is off');
	is(problem_reported($node), 't', 'SSD not mounted: the problem is reported');
	data_ok($node, 't', $T, 'SSD not mounted', index => 1);
}
$node->stop;
$node->adjust_conf('postgresql.conf', 'ssd_cache.path', "'" . SSDKitTest::cache_file($node) . "'");
$node->start;
ok(wait_write_through($node), 'SSD back: the cache is on');

#
# 2. A data directory restored under a cache file left as it was.
#
sub restore_copy
{
	my ($copy) = @_;
	rmtree($node->data_dir);
	system('cp', '-a', $copy, $node->data_dir) == 0 or die "cp -a $copy: $?";
	return;
}

# A crash-consistent copy taken right after a checkpoint; the server then
# runs on, changes cached pages, and crashes; the copy comes back.
warm($node, 't', 't_pkey');
data_ok($node, 't', $T, 'before the crash-consistent copy', index => 1);
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop('immediate');
my $copy = $node->basedir . '/copy_crash';
system('cp', '-a', $node->data_dir, $copy) == 0 or die "cp -a: $?";
$node->start;
wait_write_through($node);
$node->safe_psql('postgres', q{
	UPDATE t SET pad = repeat('n', 300) WHERE id % 2 = 0;
	DELETE FROM t WHERE id % 5 = 0;
	CHECKPOINT;
});
for (1 .. 2)
{
	scan($node, 't');
	SSDKitTest::cache_drain($node);
}
verify_ok($node, 'after the changes the copy lacks');
$node->stop('immediate');
restore_copy($copy);
$off = -s $node->logfile;
ok($node->start(fail_ok => 1), 'restored crash-consistent copy: the server starts');
emptied_like($node, $off, 'restored crash-consistent copy');
ok(wait_write_through($node), 'restored crash-consistent copy: write-through');
data_ok($node, 't', $T, 'restored crash-consistent copy', index => 1);
verify_ok($node, 'restored crash-consistent copy');
SSDKitTest::amcheck_ok($node, 'restored crash-consistent copy');

# A cold copy of a cleanly stopped server, restored after the server ran,
# changed cached pages and was cleanly stopped again.
warm($node, 't', 't_pkey');
$node->stop;
$copy = $node->basedir . '/copy_cold';
system('cp', '-a', $node->data_dir, $copy) == 0 or die "cp -a: $?";
$node->start;
wait_write_through($node);
$node->safe_psql('postgres', q{
	UPDATE t SET pad = repeat('k', 300) WHERE id % 3 = 0;
	DELETE FROM t WHERE id % 7 = 0;
});
for (1 .. 2)
{
	scan($node, 't');
	SSDKitTest::cache_drain($node);
}
$node->stop;
restore_copy($copy);
$off = -s $node->logfile;
ok($node->start(fail_ok => 1), 'restored cold copy: the server starts');
emptied_like($node, $off, 'restored cold copy');
ok(wait_write_through($node), 'restored cold copy: write-through');
data_ok($node, 't', $T, 'restored cold copy', index => 1);
verify_ok($node, 'restored cold copy');
SSDKitTest::amcheck_ok($node, 'restored cold copy');
$node->stop;

#
# 1. Two servers, one cache file: a same-host standby made from a base
#    backup carries the primary's postgresql.conf, so the same
#    ssd_cache.path.
#
my $primary = SSDKitTest::node('primary', cache => '32MB', conf => $conf,
	init => { allows_streaming => 1 });
my $pfile = SSDKitTest::cache_file($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE t (id int PRIMARY KEY, pad text);
	INSERT INTO t SELECT g, repeat('t', 300) FROM generate_series(1, 10000) g;
	VACUUM ANALYZE t;
});
warm($primary, 't', 't_pkey');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
like(slurp_file($standby->data_dir . '/postgresql.conf'), qr/ssd_cache\.path = '\Q$pfile\E'/,
	"the standby is configured with the primary's cache file");
$standby->start;
warning_like($standby, 0, qr/in use|lock|another (?:server|postmaster)/i,
	'standby: a WARNING says the cache file is in use by another server');
is(stat_of($standby, 'mode'), 'off', 'standby: the cache is off');
is(problem_reported($standby), 't', 'standby: the problem is reported');
{
	open my $fh, '<', $pfile or die "open $pfile: $!";
	ok(!flock($fh, LOCK_EX | LOCK_NB), 'the running primary holds a lock on its cache file');
	close $fh;
}
is(stat_of($primary, 'mode'), 'write-through', 'primary: still write-through');
verify_ok($primary, 'primary, standby started');

my @p_changes = ([ 'g % 10 = 0', "repeat('p', 300)" ], [ 'g % 97 = 0', undef ]);
$primary->safe_psql('postgres', q{
	UPDATE t SET pad = repeat('p', 300) WHERE id % 10 = 0;
	DELETE FROM t WHERE id % 97 = 0;
});
$primary->wait_for_catchup($standby);
my $P = expected($primary, 10000, 't', @p_changes);
data_ok($primary, 't', $P, 'two servers, one file: primary', index => 1);
data_ok($standby, 't', $P, 'two servers, one file: standby', index => 1);
verify_ok($primary, 'two servers, one file: primary');

# The primary stops; the standby restarts and gets the file, which the
# primary wrote: not to be trusted.
$primary->stop;
$off = -s $standby->logfile;
$standby->restart;
like(log_since($standby, $off), qr/starting with an empty cache .* because/,
	"standby with the primary's cache file: starts it empty");
ok(wait_write_through($standby), "standby with the primary's cache file: write-through");
data_ok($standby, 't', $P, "standby with the primary's cache file", index => 1);
$standby->stop;

# And the primary must not trust what the standby wrote.
$off = -s $primary->logfile;
$primary->start;
like(log_since($primary, $off), qr/starting with an empty cache/,
	'primary after the standby used its cache file: starts it empty');
ok(wait_write_through($primary), 'primary after the standby used its cache file: write-through');
data_ok($primary, 't', $P, 'primary after the standby used its cache file', index => 1);
verify_ok($primary, 'primary after the standby used its cache file');

# 2, pg_rewind: the standby, now with its own cache file, is promoted; the
# old primary diverges, is rewound from the new one and follows it.  Its
# cache holds pages of the abandoned timeline.
$standby->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($standby) . "'");
$standby->start;
$primary->wait_for_catchup($standby);
warm($standby, 't', 't_pkey');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
$standby->safe_psql('postgres', 'CHECKPOINT');	# pg_control names the new timeline
$primary->safe_psql('postgres', q{
	UPDATE t SET pad = repeat('z', 300) WHERE id <= 3000;
	CHECKPOINT;
});
scan($primary, 't');
SSDKitTest::cache_drain($primary);
$primary->stop;
my @s_changes = (@p_changes, [ 'g % 7 = 0', "repeat('s', 300)" ]);
$standby->safe_psql('postgres', q{
	UPDATE t SET pad = repeat('s', 300) WHERE id % 7 = 0;
	CHECKPOINT;
});
my $S = expected($standby, 10000, 't', @s_changes);

# pg_rewind copies the source's configuration files; keep the old
# primary's own (port, cache file).
my %saved = map { $_ => slurp_file($primary->data_dir . "/$_") } qw(postgresql.conf postgresql.auto.conf);
command_ok(
	[
		'pg_rewind', '--no-sync',
		'--target-pgdata', $primary->data_dir,
		'--source-server', $standby->connstr('postgres')
	],
	'pg_rewind the old primary from the new one');
for my $f (keys %saved)
{
	open my $fh, '>', $primary->data_dir . "/$f" or die "write $f: $!";
	print $fh $saved{$f};
	close $fh;
}
$primary->enable_streaming($standby);
$off = -s $primary->logfile;
$primary->start;
emptied_like($primary, $off, 'rewound old primary');
$standby->wait_for_catchup($primary);
ok(wait_write_through($primary), 'rewound old primary: write-through');
data_ok($primary, 't', $S, 'rewound old primary, following the new one', index => 1);
data_ok($standby, 't', $S, 'new primary', index => 1);
$primary->safe_psql('postgres', 'CHECKPOINT');	# a restartpoint
verify_ok($primary, 'rewound old primary');
verify_ok($standby, 'new primary');
$primary->restart;
wait_write_through($primary);
data_ok($primary, 't', $S, 'rewound old primary, restarted', index => 1);

SSDKitTest::amcheck_ok($standby, 'new primary');
$standby->wait_for_catchup($primary);
# A standby cannot install amcheck; the new primary did, and it replicated.
$primary->command_ok(
	[
		'pg_amcheck', '--heapallindexed', '--all',
		'-h', $primary->host, '-p', $primary->port
	],
	'rewound old primary (a standby): pg_amcheck finds no corruption');
$primary->stop;
$standby->stop;
done_testing();
