# ssd_cache's buffer-pool warm-up: the state recorded at every checkpoint
# and at shutdown, reloaded after a clean restart and after a crash with the
# recorded usage counts; bad state files ignored with a LOG; relations
# dropped, truncated or rewritten since (or while) loading never loaded;
# piggybacking; connections held until the pool is warm; pages held by the
# SSD cache loaded from it.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use SSDKitTest;

my $conf = "shared_buffers = 32MB\nautovacuum = off\ncheckpoint_timeout = '1h'\n"
  . "restart_after_crash = on\nssd_cache.warmup_io_share = 1\n";
my $node = SSDKitTest::node('warm', preload => ['ssd_cache'], warmup => 1, conf => $conf);
$node->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_buffercache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE t (id int PRIMARY KEY, v int, pad text);
	INSERT INTO t SELECT g, 0, repeat('t', 200) FROM generate_series(1, 40000) g;
	CREATE TABLE dropme AS SELECT g AS id, repeat('d', 200) AS pad FROM generate_series(1, 3000) g;
	CREATE TABLE truncme AS SELECT * FROM dropme;
	CREATE TABLE rewriteme AS SELECT * FROM dropme;
	CREATE TABLE shrinkme AS SELECT * FROM dropme;
});

sub status
{
	my ($col) = @_;
	return SSDKitTest::query($node, "SELECT $col FROM ssd_cache_warmup");
}

sub wait_phase_ended
{
	return SSDKitTest::poll_until($node,
		"SELECT phase IN ('done', 'nothing to load') FROM ssd_cache_warmup", 120);
}

sub buffered
{
	my ($rel) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('$rel') "
		  . "AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())");
}

# Blocks 0..99 of t read six times (usage count 5), the rest once.
sub heat
{
	$node->safe_psql('postgres', "SELECT pg_prewarm(r) FROM unnest(ARRAY['t', 't_pkey', 'dropme', 'truncme', 'rewriteme', 'shrinkme']) r");
	$node->safe_psql('postgres',
		"SELECT count(*) FROM t WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', b)::tid FROM generate_series(0, 99) b))")
	  for 1 .. 5;
	return;
}

sub hot_usage
{
	return $node->safe_psql('postgres',
		"SELECT round(avg(usagecount) FILTER (WHERE relblocknumber < 100), 1) || ' ' || "
		  . "round(avg(usagecount) FILTER (WHERE relblocknumber >= 100), 1) FROM pg_buffercache "
		  . "WHERE relfilenode = pg_relation_filenode('t')");
}

# 1. Recording at a checkpoint, from a pool filled by queries only (the
# shutdown recorded the pool of the loads above).
$node->stop;
unlink $node->data_dir . '/ssd_cache_warmup.state';
$node->start;
wait_phase_ended();
heat();
my $t_before = buffered('t');
cmp_ok($t_before, '>', 500, "t is in shared_buffers ($t_before blocks)");
$node->safe_psql('postgres', 'CHECKPOINT');
ok(SSDKitTest::poll_until($node, 'SELECT last_recorded_pages > 0 FROM ssd_cache_warmup', 30),
	'the warm-up state is recorded after a checkpoint');
ok(-f $node->data_dir . '/ssd_cache_warmup.state', 'the state file is in the data directory');

# 2. A clean restart reloads the pool, usage counts included.
my ($hot_before) = split / /, hot_usage();
$node->restart;
ok(wait_phase_ended(), 'the warm-up ends after a clean restart');
is(status('phase'), 'done', 'it loaded the recorded pages');
my $t_after = buffered('t');
cmp_ok($t_after, '>=', 0.95 * $t_before, "t is back in shared_buffers ($t_after of $t_before blocks)");
my ($hot, $cold) = split / /, hot_usage();
cmp_ok($hot, '>=', 4, "hot pages keep their usage count ($hot; $hot_before before)");
cmp_ok($cold, '<=', 2, "pages read once stay cold ($cold)");
my ($loaded, $reads) = split /\|/, status('pages_loaded || \'|\' || disk_reads');
cmp_ok($reads * 4, '<', $loaded, "chunked reads: $loaded pages in $reads reads");
is(SSDKitTest::query($node, 'SELECT count(*) > 0 AND bool_and(request_kb >= 8) FROM ssd_cache_warmup_devices'),
	't', 'the planner shows its request size per tablespace');
ok(!$node->log_contains(qr/skipped a chunk/), 'no chunk failed to load');

# 3. After a crash: the state of the last checkpoint.
$node->safe_psql('postgres', 'CHECKPOINT');
sleep 2;
SSDKitTest::crash_restart($node);
ok(wait_phase_ended(), 'the warm-up ends after a crash');
is(status('phase'), 'done', 'a crash restart is warmed up too');
cmp_ok(buffered('t'), '>=', 0.95 * $t_before, 't is back after the crash');

# 4. Relations dropped, truncated, rewritten or shrunk since recording.
$node->safe_psql('postgres', 'CHECKPOINT');
sleep 2;
$node->safe_psql('postgres', q{
	DROP TABLE dropme;
	TRUNCATE truncme;
	INSERT INTO truncme SELECT g, 'new' FROM generate_series(1, 10) g;
	VACUUM FULL rewriteme;
	DELETE FROM shrinkme WHERE id > 100;
	VACUUM shrinkme;
});
$node->stop('immediate');
$node->start;
ok(wait_phase_ended(), 'the warm-up ends with changed relations');
cmp_ok(status('chunks_skipped'), '>', 0, 'chunks of dropped and rewritten relations are skipped');
is($node->safe_psql('postgres', 'SELECT count(*), min(pad) FROM truncme'), '10|new',
	'a truncated table shows only its new rows');
is($node->safe_psql('postgres', 'SELECT count(*) FROM shrinkme'), '100', 'a shrunk table reads right');
is($node->safe_psql('postgres', 'SELECT count(*) FROM rewriteme'), '3000', 'a rewritten table reads right');
ok(!$node->log_contains(qr/could not read block|skipped a chunk/), 'nothing past a relation end was read');
SSDKitTest::amcheck_ok($node, 'after the warm-up of changed relations');

# 5. Racing DROP, TRUNCATE and VACUUM FULL while loading (slowed loader).
$node->safe_psql('postgres', q{
	CREATE TABLE race1 AS SELECT g AS id, repeat('r', 200) AS pad FROM generate_series(1, 20000) g;
	CREATE TABLE race2 AS SELECT * FROM race1;
	CREATE TABLE race3 AS SELECT * FROM race1;
	SELECT pg_prewarm('race1'), pg_prewarm('race2'), pg_prewarm('race3');
	CHECKPOINT;
});
sleep 2;
$node->append_conf('postgresql.conf', "ssd_cache.fault_injection = 'warmup_slow_load'\n");
$node->restart;
ok(SSDKitTest::poll_until($node, "SELECT phase = 'loading' FROM ssd_cache_warmup", 30),
	'a slowed warm-up is loading');
$node->safe_psql('postgres', q{
	DROP TABLE race1;
	TRUNCATE race2;
	INSERT INTO race2 VALUES (1, 'after');
	VACUUM FULL race3;
	CREATE TABLE race4 AS SELECT g AS id, 'fresh' AS pad FROM generate_series(1, 5000) g;
});

# 6. Piggybacking: a query's miss on a pending chunk promotes it.
$node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE id % 97 = 0');
cmp_ok(status('chunks_piggybacked'), '>', 0, 'a query missing on a pending chunk piggybacks it');
ok(wait_phase_ended(), 'the slowed warm-up ends');
is($node->safe_psql('postgres', 'SELECT count(*), max(pad) FROM race2'), '1|after',
	'a table truncated while loading shows its new row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM race3'), '20000',
	'a table rewritten while loading reads right');
is($node->safe_psql('postgres', "SELECT count(*) FROM race4 WHERE pad = 'fresh'"), '5000',
	'a table created while loading reads right');
SSDKitTest::amcheck_ok($node, 'after racing the warm-up');

# 6b. A loader never queues behind a lock: a table locked for the whole
# warm-up is skipped, and the warm-up still ends.
$node->safe_psql('postgres', 'SELECT pg_prewarm(\'t\'); CHECKPOINT');
sleep 2;
$node->restart;
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE');
ok(wait_phase_ended(), 'the warm-up ends while a table it planned stays locked');
cmp_ok(status('chunks_skipped'), '>', 0, 'the locked table\'s chunks are skipped');
$locker->query_safe('COMMIT');
$locker->quit;

# 7. Scenario (a): connections wait until the pool is warm.
$node->append_conf('postgresql.conf', "ssd_cache.warmup_hold_connections = on\n");
$node->restart;
is($node->safe_psql('postgres', 'SELECT phase FROM ssd_cache_warmup'), 'done',
	'the first connection is let in only after the warm-up');
is(status('holding_connections'), 't', 'the view says connections were held');
$node->append_conf('postgresql.conf',
	"ssd_cache.warmup_hold_connections = off\nssd_cache.fault_injection = ''\n");
$node->reload;

# 8. Bad state files are ignored with a LOG, and replaced at the next checkpoint.
my $state = $node->data_dir . '/ssd_cache_warmup.state';
$node->restart;
wait_phase_ended();
$node->safe_psql('postgres', 'CHECKPOINT');
ok(SSDKitTest::poll_until($node, 'SELECT last_recorded_pages > 0 FROM ssd_cache_warmup', 30),
	'recorded again');
$node->stop;
my $good = slurp_file($state);

sub try_state
{
	my ($bytes, $pattern, $label) = @_;
	open(my $fh, '>', $state) or die;
	binmode $fh;
	print $fh $bytes;
	close $fh;
	my $offset = -s $node->logfile;
	$node->start;
	ok(wait_phase_ended(), "$label: the server starts and the warm-up ends");
	is(status('phase'), 'nothing to load', "$label: nothing is loaded");
	ok($node->log_contains($pattern, $offset), "$label: a LOG says why");
	$node->stop;
	return;
}

my $flipped = $good;
substr($flipped, 200, 1) = chr(ord(substr($flipped, 200, 1)) ^ 0xff);
try_state($flipped, qr/ignoring .*checksum does not match/, 'a flipped byte');
try_state(substr($good, 0, length($good) - 7), qr/ignoring .*size does not match/, 'a torn file');
try_state(substr($good, 0, 10), qr/ignoring .*shorter than its header/, 'a stub');
my $old = $good;
substr($old, 4, 4) = pack('L', 0);
try_state($old, qr/ignoring .*has format 0/, 'an old format');
my $foreign = $good;
substr($foreign, 8, 8) = pack('Q', 12345);
try_state($foreign, qr/ignoring .*another cluster/, 'another cluster\'s file');
try_state('garbage' x 100, qr/ignoring .*not a warm-up state file/, 'garbage');

# A file whose checksum matches but whose entry is no valid tag (a fork
# number past the last) is ignored too: CRC-32C recomputed here.
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xffffffff;
	for my $byte (unpack('C*', $data))
	{
		$crc ^= $byte;
		$crc = ($crc & 1) ? (($crc >> 1) ^ 0x82f63b78) : ($crc >> 1) for 1 .. 8;
	}
	return $crc ^ 0xffffffff;
}
my $badfork = $good;
substr($badfork, 48 + 16, 1) = chr(9);
substr($badfork, 40, 4) = pack('L', 0);
substr($badfork, 40, 4) = pack('L', crc32c($badfork));
try_state($badfork, qr/ignoring .*entry 0 is invalid/, 'a valid checksum over an invalid fork');

# 9. A crash while recording leaves the previous file whole.
open(my $fh, '>', $state) or die;
binmode $fh;
print $fh $good;
close $fh;
$node->start;
wait_phase_ended();
is(status('phase'), 'done', 'the restored file loads');
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET ssd_cache.fault_injection = 'warmup_record_crash';
	SELECT pg_reload_conf();
});
sleep 1;
my $offset = -s $node->logfile;
$node->safe_psql('postgres', 'CHECKPOINT');
$node->wait_for_log(qr/fault warmup_record_crash/, $offset);
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET ssd_cache.fault_injection;
	SELECT pg_reload_conf();
});
ok(wait_phase_ended(), 'the server came back from a crash while recording');
is(status('phase'), 'done', 'the previous state file still loads');
is(slurp_file($state), $good, 'the state file is the previous one, whole');

# 10. ssd_cache.warmup = off records nothing.
$node->append_conf('postgresql.conf', "ssd_cache.warmup = off\n");
$node->stop;
unlink $state;
$node->start;
is(status('phase'), 'off', 'the view says the warm-up is off');
$node->safe_psql('postgres', 'SELECT pg_prewarm(\'t\'); CHECKPOINT');
sleep 2;
$node->stop;
ok(!-f $state, 'with ssd_cache.warmup = off no state is recorded');
$node->append_conf('postgresql.conf', "ssd_cache.warmup = on\n");
$node->start;
is(status('phase'), 'nothing to load', 'and nothing is loaded');
$node->stop;

# 11. With the SSD cache: pages it holds are loaded from it.
my $cached = SSDKitTest::node('warm_ssd', preload => ['ssd_cache'], cache => '64MB', warmup => 1,
	conf => $conf . "ssd_cache.policy = clock\nssd_cache.sequential_detection = none\n");
$cached->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE c AS SELECT g AS id, repeat('c', 200) AS pad FROM generate_series(1, 20000) g;
});
$cached->restart;
ok(SSDKitTest::poll_until($cached, "SELECT phase IN ('done', 'nothing to load') FROM ssd_cache_warmup", 60),
	'SSD cache node: the first warm-up ends');
$cached->safe_psql('postgres', "SELECT pg_prewarm('c')");
SSDKitTest::cache_drain($cached);
$cached->safe_psql('postgres', 'CHECKPOINT');
ok(SSDKitTest::poll_until($cached, 'SELECT last_recorded_pages > 0 FROM ssd_cache_warmup', 30),
	'SSD cache node: recorded');
$cached->restart;
ok(SSDKitTest::poll_until($cached, "SELECT phase = 'done' FROM ssd_cache_warmup", 60),
	'SSD cache node: warmed up');
cmp_ok(SSDKitTest::query($cached, 'SELECT pages_from_ssd_cache FROM ssd_cache_warmup'), '>', 100,
	'pages held by the SSD cache are loaded from it');
is(SSDKitTest::query($cached, 'SELECT count(*) FROM c'), '20000', 'and read right');
$cached->append_conf('postgresql.conf', "ssd_cache.warmup_preload = never\n");
$cached->restart;
ok(SSDKitTest::poll_until($cached, "SELECT phase = 'done' FROM ssd_cache_warmup", 60),
	'warmup_preload = never: warmed up');
is(SSDKitTest::query($cached, 'SELECT pages_from_ssd_cache > 100 AND disk_reads = 0 FROM ssd_cache_warmup'), 't',
	'warmup_preload = never: pages come from the SSD cache only, no disk read');
SSDKitTest::verify_ok($cached, 'after the warm-up from the SSD cache');
$cached->stop;

# 12. Connections held: the loader keeps as many reads in flight as the
# tablespace's QDTT model says pay (a hand-made model whose cost per page
# stops falling at queue depth 8); one without a model.
my $qd = SSDKitTest::node('warm_qd', preload => [ 'ssd_cache', 'qdtt_costing' ], warmup => 1,
	conf => $conf . "ssd_cache.warmup_hold_connections = on\n");
$qd->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION qdtt_costing;
	CREATE TABLE q AS SELECT g AS id, repeat('q', 200) AS pad FROM generate_series(1, 20000) g;
});
$qd->restart;
is($qd->safe_psql('postgres', 'SELECT loader_queue_depth FROM ssd_cache_warmup'), '1',
	'without a QDTT model the loader keeps one read in flight');
$qd->safe_psql('postgres', q{
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, d,
	       CASE WHEN b = 1 THEN 10 ELSE greatest(100.0 / d, 12.5) END
	  FROM unnest(ARRAY[1, 16, 1000000]) b, unnest(ARRAY[1, 2, 4, 8, 16, 32]) d;
	SELECT count(*) FROM q;
	CHECKPOINT;
});
sleep 2;
$qd->restart;
is($qd->safe_psql('postgres', 'SELECT phase || \' \' || loader_queue_depth FROM ssd_cache_warmup'), 'done 8',
	'with the model the held warm-up keeps 8 reads in flight');
is($qd->safe_psql('postgres', 'SELECT count(*) FROM q'), '20000', 'and the table reads right');
$qd->stop;

done_testing();
