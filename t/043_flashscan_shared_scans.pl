# Shared scans (flashscan.shared_scans) in the states a server meets:
# many concurrent scans, a scan terminated or cancelled half way, the
# pusher stopped or killed, a page that fails its checksum, and DROP /
# TRUNCATE right after scans whose groups the pusher had pinned, and
# ssd_cache holding a table.  Every scan returns what heap returns; nothing
# stays registered or pinned.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SSDKitTest;

my $node = SSDKitTest::node('shared_scans',
	preload => ['flashscan', 'qdtt_costing'],
	conf => "flashscan.shared_scans = on\n"
	  . "flashscan.group_blocks = 4\n"
	  . "flashscan.shared_scan_cache = 2MB\n"    # evictions, with four clients
	  . "max_parallel_workers_per_gather = 0\n"
	  . "enable_seqscan = off\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE TABLE sp (id int, k int, v float8, t text) USING pax;
	INSERT INTO sp SELECT g, g % 100, g * 0.5, md5(g::text) FROM generate_series(1, 200000) g;
	CREATE TABLE sh AS SELECT * FROM sp;
	ANALYZE sp, sh;
	CREATE FUNCTION gate(int) RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
		IF $1 = 150000 THEN
			PERFORM pg_advisory_lock_shared(7);
			PERFORM pg_advisory_unlock_shared(7);
		END IF;
		RETURN $1;
	END $$;
});

my $q = 'SELECT count(*), sum(v), sum(length(t)) FROM %s WHERE k < 60';
my $expected = $node->safe_psql('postgres', sprintf($q, 'sh'));

sub hub_idle
{
	return SSDKitTest::poll_until($node,
		'SELECT scans_registered = 0 AND units = 0 AND blocks_pinned = 0 FROM flashscan_shared_scan_stats()',
		30);
}

# A session holding a NO SCROLL cursor over $query half way (one row
# fetched): a registration that stays, its window pinned.  @set: settings
# made first.
sub cursor_half_way
{
	my ($query, @set) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->query_safe($_) for @set;
	$s->query_safe('BEGIN');
	$s->query_safe("DECLARE c NO SCROLL CURSOR FOR $query");
	$s->query_safe('FETCH 1 FROM c');
	return $s;
}

# --- many scans at once, different columns and predicates ---
my $script = $node->basedir . '/scans.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set c random(1, 99)
SELECT count(*), sum(v) FROM sp WHERE k < :c;
SELECT count(*), sum(length(t)) FROM sp WHERE k > :c;
SELECT max(id) FROM sp WHERE v > :c;
});
my ($ok, $out, $err) = SSDKitTest::pgbench($node, '-n', '-c', '4', '-j', '2', '-T', '8', '-f', $script);
ok($ok, 'four clients scanned for 8 s without an error') or diag($err);
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected, 'a scan after them returns what heap returns');
ok(hub_idle(), 'nothing registered or pinned once the scans ended');
my ($stream, $regs, $evictions) = split /\|/, $node->safe_psql('postgres',
	'SELECT groups_from_stream, registrations, blocks_read FROM flashscan_shared_scan_stats()');
cmp_ok($stream, '>', 0, "groups came from the shared stream ($stream)");
cmp_ok($regs, '>', 10, "scans registered ($regs)");

# --- a scan stopped half way: terminated, cancelled ---
my $locker = $node->background_psql('postgres');
$locker->query_safe('SELECT pg_advisory_lock(7)');
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, "\\echo started\nSELECT sum(gate(id)) FROM sp WHERE k < 60;\n");
ok(SSDKitTest::poll_until($node, 'SELECT count(*) = 1 FROM flashscan_shared_scans', 30),
	'a scan waiting half way is registered');
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected,
	'another scan runs beside it and returns what heap returns');
$node->safe_psql('postgres',
	'SELECT pg_terminate_backend(pid) FROM flashscan_shared_scans');
ok(hub_idle(), 'terminating the waiting scan unregistered it');
eval { $bg->quit };    # its backend is gone

$bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, "SET statement_timeout = '1s';\n\\echo started\nSELECT sum(gate(id)) FROM sp WHERE k < 60;\n");
usleep(1_500_000);
ok(hub_idle(), 'a cancelled scan (statement_timeout) unregistered');
$bg->quit;
$locker->query_safe('SELECT pg_advisory_unlock(7)');
$locker->quit;

# --- parallel queries: one registration per query, its workers take from it ---
$node->safe_psql('postgres', q{
	CREATE FUNCTION slow(int) RETURNS int LANGUAGE plpgsql PARALLEL SAFE AS $$
	BEGIN
		IF $1 % 10000 = 0 THEN
			PERFORM pg_sleep(0.3);
		END IF;
		RETURN $1;
	END $$;
});
my $par = "SET max_parallel_workers_per_gather = 2;\nSET parallel_setup_cost = 0;\n"
  . "SET parallel_tuple_cost = 0;\nSET min_parallel_table_scan_size = 0;\n";
$script = $node->basedir . '/parallel.sql';
PostgreSQL::Test::Utils::append_to_file($script, $par . q{
\set c random(1, 99)
SELECT count(*), sum(v) FROM sp WHERE k < :c;
SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(length(t)) FROM sp WHERE k > :c;
});
($ok, $out, $err) = SSDKitTest::pgbench($node, '-n', '-c', '3', '-j', '2', '-T', '6', '-f', $script);
ok($ok, 'parallel and serial scans side by side for 6 s without an error') or diag($err);
my $regs_before = $node->safe_psql('postgres', 'SELECT registrations FROM flashscan_shared_scan_stats()');
is($node->safe_psql('postgres', $par . sprintf($q, 'sp')), $expected,
	'a parallel scan returns what heap returns');
is($node->safe_psql('postgres', 'SELECT registrations FROM flashscan_shared_scan_stats()'), $regs_before + 1,
	'and registered once for all its participants');
ok(hub_idle(), 'nothing registered or pinned once the parallel scans ended');

# a parallel scan stopped half way: cancelled, its leader terminated
foreach my $how ('cancel', 'terminate')
{
	$bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/started/, $par . "\\echo started\nSELECT sum(slow(id)) FROM sp WHERE k < 60;\n");
	ok(SSDKitTest::poll_until($node, 'SELECT count(*) = 1 FROM flashscan_shared_scans', 30),
		"a parallel scan half way is registered once ($how)");
	# (one statement: the scan cannot end between finding it and stopping it)
	is($node->safe_psql('postgres', "SELECT count(*) FILTER (WHERE pg_${how}_backend(pid)) FROM flashscan_shared_scans"), '1',
		"its leader got pg_${how}_backend");
	ok(hub_idle(), "and it left the hub ($how)");
	if ($how eq 'cancel')
	{
		$bg->query('SELECT 1');    # waits for the scan's end
		like($bg->{stderr}, qr/canceling statement due to user request/, 'the scan was cancelled');
	}
	eval { $bg->quit };
}
is($node->safe_psql('postgres', $par . sprintf($q, 'sp')), $expected, 'parallel scans after that are right');

# --- a cursor left open with a window that fills the hub's cache ---
# (the starvation bound: a scan beside it waits a second at most for the
# pusher, which waits for room the cursor will not free, and reads alone)
my $holder = cursor_half_way('SELECT id, t FROM sp WHERE k < 99', 'SET flashscan.shared_scan_window = 64');
ok(SSDKitTest::poll_until($node,
		'SELECT blocks_pinned > 0 FROM flashscan_shared_scan_stats()', 30),
	'the cursor has the pusher pin its window');
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected,
	'a scan beside a cursor holding the cache finishes, every row once');
$holder->query_safe('COMMIT');
$holder->quit;
ok(hub_idle(), 'and the cursor let go of the hub');

# --- the hub full: scans read alone, serial and parallel alike ---
$node->safe_psql('postgres', 'ALTER SYSTEM SET flashscan.shared_scan_slots = 1');
$node->restart;
$holder = cursor_half_way('SELECT id FROM sp WHERE k < 60');
is($node->safe_psql('postgres', 'SELECT scans_registered FROM flashscan_shared_scan_stats()'), '1',
	'a cursor half way holds the only slot');
my $refused0 = $node->safe_psql('postgres', 'SELECT registrations_refused FROM flashscan_shared_scan_stats()');
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected, 'a serial scan then reads alone, every row once');
like($node->safe_psql('postgres', 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' . sprintf($q, 'sp')),
	qr/Shared Scan: on, hub full: groups read alone/, 'EXPLAIN ANALYZE says the hub was full');
is($node->safe_psql('postgres', $par . sprintf($q, 'sp')), $expected, 'and a parallel one');
like($node->safe_psql('postgres', $par . 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' . sprintf($q, 'sp')),
	qr/Workers Launched: [1-9]/, '(which ran with workers)');
cmp_ok($node->safe_psql('postgres', 'SELECT registrations_refused FROM flashscan_shared_scan_stats()'), '>=', $refused0 + 4,
	'the hub refused them');
$holder->query_safe('COMMIT');
$holder->quit;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET flashscan.shared_scan_slots');
$node->restart;

# --- the pusher stopped (it restarts) and killed (crash restart) ---
my $pusher = $node->safe_psql('postgres', 'SELECT pusher_pid FROM flashscan_shared_scan_stats()');
ok($pusher, "the pusher runs (pid $pusher)");
$bg = $node->background_psql('postgres');
$bg->query_until(qr/started/, "\\echo started\n" . sprintf($q, 'sp') . ";\n");
kill 'TERM', $pusher;
like($bg->query_safe('SELECT 1'), qr/^\Q$expected\E/m, 'a scan running while the pusher stopped returns what heap returns')
  or note('scan output differs');
$bg->quit;
ok(SSDKitTest::poll_until($node,
		"SELECT pusher_pid IS NOT NULL AND pusher_pid <> $pusher FROM flashscan_shared_scan_stats()", 30),
	'the pusher is back');
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected, 'and serves scans');

my $old_pusher = $pusher;
$pusher = $node->safe_psql('postgres', 'SELECT pusher_pid FROM flashscan_shared_scan_stats()');
isnt($pusher, $old_pusher, "a new pusher runs (pid $pusher)");
# a crash with a scan registered and its window pinned: a cursor half way
$holder = cursor_half_way('SELECT id FROM sp WHERE k < 60');
ok(SSDKitTest::poll_until($node,
		'SELECT scans_registered = 1 AND blocks_pinned > 0 FROM flashscan_shared_scan_stats()', 30),
	'a cursor half way is registered and its groups pinned');
kill 'KILL', $pusher;
# the postmaster resets shared memory (these tests run with restart_after_crash off)
usleep(100_000) while -f $node->data_dir . '/postmaster.pid' && kill(0, $node->{_pid});
eval { $holder->quit };
$node->stop('immediate', fail_ok => 1);
$node->start;
ok(SSDKitTest::poll_until($node, 'SELECT pusher_pid IS NOT NULL FROM flashscan_shared_scan_stats()', 60),
	'after the pusher was killed (kill -9) and the crash restart, a pusher runs');
is($node->safe_psql('postgres', 'SELECT scans_registered, units, blocks_pinned FROM flashscan_shared_scan_stats()'),
	'0|0|0', 'the crash left no registration and no pin behind');
is($node->safe_psql('postgres', sprintf($q, 'sp')), $expected, 'scans after the crash restart are right');
$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS pg_buffercache');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_buffercache WHERE pinning_backends > 0'),
	'0', 'and no buffer stays pinned once they ended');
ok(hub_idle(), 'the hub starts empty');

# --- reads in flight: the setting, else the tablespace's QDTT model, else 32 ---
sub registered_depth
{
	my $cur = $node->background_psql('postgres');
	$cur->query_safe('BEGIN');
	$cur->query_safe('DECLARE c NO SCROLL CURSOR FOR SELECT id FROM sp WHERE k < 60');
	$cur->query_safe('FETCH 1 FROM c');
	my $depth = $node->safe_psql('postgres', 'SELECT io_depth FROM flashscan_shared_scans');
	$cur->query_safe('COMMIT');
	$cur->quit;
	return $depth;
}
$node->safe_psql('postgres', 'CREATE EXTENSION qdtt_costing');
is(registered_depth(), '32', 'without a model the pusher keeps 32 reads in flight');
# a hand-made model of a device that serves 8 reads at once and gains
# nothing beyond
$node->safe_psql('postgres', q{
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, qd, CASE WHEN b = 1 THEN 10 WHEN qd = 1 THEN 400 WHEN qd = 8 THEN 60 ELSE 58 END
	  FROM unnest(ARRAY[1, 16, 1000000]) b, unnest(ARRAY[1, 8, 64]) qd;
});
is(registered_depth(), '8', "with the tablespace's QDTT model, the depth it serves best");
$node->safe_psql('postgres', 'ALTER SYSTEM SET flashscan.shared_scan_io_depth = 4; SELECT pg_reload_conf()');
ok(SSDKitTest::poll_until($node, q{SELECT current_setting('flashscan.shared_scan_io_depth') = '4'}, 30),
	'the setting reloaded');
is(registered_depth(), '4', 'the setting overrides the model');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET flashscan.shared_scan_io_depth; SELECT pg_reload_conf()');

# --- DROP and TRUNCATE right after scans the pusher served ---
$node->safe_psql('postgres', q{
	CREATE TABLE sp2 (a int, b int) USING pax;
	INSERT INTO sp2 SELECT g, g FROM generate_series(1, 100000) g;
});
for my $cmd ('TRUNCATE sp2', 'DROP TABLE sp2')
{
	my ($rc, $o, $e) = $node->psql('postgres',
		"SELECT sum(a) FROM sp2 WHERE b > 10; SELECT sum(b) FROM sp2 WHERE a > 10; $cmd;",
		timeout => 60);
	is($rc, 0, "$cmd right after two scans does not wait on the pusher's pins") or diag($e);
}

# --- a page that fails its checksum ---
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('sp')});
$node->stop;
open my $fh, '+<', $file or die "open $file: $!";
binmode $fh;
seek $fh, 40 * 8192 + 4000, 0;
print $fh ('X' x 64);
close $fh;
$node->start;
my ($rc, $o, $e) = $node->psql('postgres', sprintf($q, 'sp'));
like($e, qr/invalid page in block 40/, 'a damaged page fails the query that reads it');
ok(hub_idle(), 'and leaves nothing registered or pinned');
ok(SSDKitTest::poll_until($node, 'SELECT pusher_pid IS NOT NULL FROM flashscan_shared_scan_stats()', 30),
	'the pusher still runs');
is($node->safe_psql('postgres', 'SELECT count(*) FROM sh WHERE k < 60'), '120000', 'the server still serves');

# --- the hub's cache: the setting, within half of shared_buffers ---
$node->append_conf('postgresql.conf', "shared_buffers = 2MB\n");
$node->restart;
is($node->safe_psql('postgres', 'SELECT cache_blocks FROM flashscan_shared_scan_stats()'),
	'128', 'a 2 MB setting in a 2 MB pool: half of the pool');
$node->append_conf('postgresql.conf', "flashscan.shared_scan_cache = 512kB\n");
$node->reload;
ok(SSDKitTest::poll_until($node,
		'SELECT cache_blocks = 64 FROM flashscan_shared_scan_stats()', 30),
	'a setting below half of the pool: the setting');

$node->stop;

# --- with ssd_cache: blocks the SSD cache holds are not read ahead from the disk ---
my $cnode = SSDKitTest::node('shared_scans_cache', cache => '64MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\n"
	  . "flashscan.shared_scans = on\nflashscan.group_blocks = 4\n"
	  . "max_parallel_workers_per_gather = 0\nenable_seqscan = off\n");
$cnode->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION flashscan;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE cached (id int, k int, v float8, t text) USING pax;
	CREATE TABLE uncached (LIKE cached) USING pax;
	INSERT INTO cached SELECT g, g % 100, g * 0.5, md5(g::text) FROM generate_series(1, 100000) g;
	INSERT INTO uncached SELECT * FROM cached;
	CHECKPOINT;
});
SSDKitTest::warm($cnode, 'cached');
my $cq = 'SELECT count(*), sum(v), sum(length(t)) FROM %s WHERE k < 60';
sub preread_by
{
	my ($table) = @_;
	$cnode->restart;    # shared_buffers empty; the cache keeps its blocks
	SSDKitTest::wait_write_through($cnode);
	my $before = $cnode->safe_psql('postgres', 'SELECT blocks_preread FROM flashscan_shared_scan_stats()');
	my $result = $cnode->safe_psql('postgres', sprintf($cq, $table));
	my ($after, $stream) = split /\|/, $cnode->safe_psql('postgres',
		'SELECT blocks_preread, groups_from_stream FROM flashscan_shared_scan_stats()');
	return ($after - $before, $stream, $result);
}
my ($pc, $sc, $res_cached) = preread_by('cached');
my ($pu, $su, $ru) = preread_by('uncached');
is($res_cached, $ru, 'the cached and the uncached table return the same rows');
cmp_ok($su, '>', 0, 'groups came from the shared stream');
cmp_ok($pu, '>', 0, "the pusher read ahead the uncached table's blocks ($pu)");
cmp_ok($pc, '<', $pu / 10, "and hardly any of the table the SSD cache holds ($pc)");
$cnode->stop;
done_testing();
