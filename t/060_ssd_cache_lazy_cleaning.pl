# ssd_cache.mode = lazy_cleaning (the thesis's LC, the baseline write-back is
# measured against): the SSD absorbs writes, every checkpoint writes back
# what was absorbed before it, so the data directory never depends on the
# cache.  No acknowledged commit is lost across crashes, the cache starts
# empty after a restart, the server starts without its cache file, a base
# backup needs no flush, and switching to and from write-back keeps the
# marker right.
use strict;
use warnings;

use File::Copy qw(move);
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $marker = 'pgsql_tmp_ssd_cache.fresher';

# Checkpoints only when asked, and no writer but the test's (autovacuum, the
# bgwriter): the test decides what lies before a checkpoint.
my $node = SSDKitTest::node('lc', cache => '24MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = lazy_cleaning\nfsync = on\n"
	  . "checkpoint_timeout = 1h\nmax_wal_size = 1GB\nrestart_after_crash = on\n"
	  . "autovacuum = off\nbgwriter_lru_maxpages = 0\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
is(SSDKitTest::cache_stat($node, 'mode'), 'lazy cleaning', 'mode is lazy cleaning');
# The process titles of the postmaster's children, from /proc.
sub child_titles
{
	my ($pm) = @_;
	my @titles;
	for my $stat (glob('/proc/[0-9]*/stat'))
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		next unless defined $line && $line =~ /\) \S+ (\d+)/ && $1 == $pm;
		(my $cmd = $stat) =~ s/stat$/cmdline/;
		open $fh, '<', $cmd or next;
		local $/;
		my $title = <$fh> // '';
		close $fh;
		push @titles, $title;
	}
	return join("\n", @titles);
}
like(child_titles($node->{_pid}), qr/ssd_cache cleaner/, 'the cleaner process runs');
SSDKitTest::pgbench($node, '-i', '-s', '4', '-q');
$node->safe_psql('postgres', 'VACUUM ANALYZE; CHECKPOINT');
SSDKitTest::ledger_init($node);

my $extra = "\\set aid random(1, 400000)\n"
  . "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;";
my $acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 6, extra_sql => $extra);
SSDKitTest::ledger_check($node, $acked, 'under load');
cmp_ok(SSDKitTest::cache_stat($node, 'absorbed_writes'), '>', 0, 'the SSD absorbed writes');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0,
	'the cache holds pages newer than the disk');
ok(!-e $node->data_dir . "/$marker",
	'the data directory is not marked as needing the cache');

# --- A checkpoint writes back everything absorbed before it. ---
my $wb = SSDKitTest::cache_stat($node, 'write_backs');
$node->safe_psql('postgres', 'CHECKPOINT');
is(SSDKitTest::cache_stat($node, 'fresher_pages'), '0',
	'after a checkpoint no page is newer on the SSD than on the disk');
cmp_ok(SSDKitTest::cache_stat($node, 'write_backs'), '>', $wb, 'the checkpoint wrote them back');
is(SSDKitTest::query($node, 'SELECT mismatched, fresher FROM ssd_cache_verify()'), '0|0',
	'every cached page equals its disk copy');

# --- Crashes: the cache starts empty, WAL replay redoes the rest. ---
for my $round (1 .. 3)
{
	$acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 8,
		extra_sql => $extra, crash_after => 2 + $round);
	SSDKitTest::ledger_check($node, $acked, "crash $round");
	SSDKitTest::balanced($node, "crash $round");
	$node->safe_psql('postgres', 'CHECKPOINT') if $round == 2;
}
ok($node->log_contains(qr/starting with an empty cache in .* because ssd_cache.mode = lazy_cleaning keeps no page across restarts/),
	'after a crash the cache starts empty, and the log says why');
SSDKitTest::amcheck_ok($node, 'after the crashes');

# --- Pages absorbed since the last checkpoint, then the cache file lost. ---
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages again');
my $sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');
my $cache = SSDKitTest::cache_file($node);
move($cache, "$cache.away") or die "move: $!";
ok($node->start(fail_ok => 1), 'without its cache file the server starts (nothing depends on it)');
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'and WAL replay made every committed change');
SSDKitTest::balanced($node, 'cache file lost');
SSDKitTest::amcheck_ok($node, 'cache file lost');
$node->stop;
unlink "$cache.away";

# --- A base backup needs no flush. ---
$node->start;
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages before the backup');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->backup('lazy');
$node->command_ok([ 'pg_verifybackup', '-n', $node->backup_dir . '/lazy' ],
	'pg_verifybackup accepts the backup');
my $restored = PostgreSQL::Test::Cluster->new('lc_restored');
$restored->init_from_backup($node, 'lazy');
$restored->append_conf('postgresql.conf', "ssd_cache.path = ''\nport = " . $restored->port . "\n");
$restored->start;
is($restored->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'the restored backup has every change made before it');
SSDKitTest::balanced($restored, 'restored backup');
SSDKitTest::amcheck_ok($restored, 'restored backup');
$restored->stop;

# --- Switching modes: write-back arms the marker at its first absorption
# (and a checkpoint arms it for pages lazy cleaning left fresher), lazy
# cleaning's next checkpoint drops it. ---
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$node->safe_psql('postgres',
	"ALTER SYSTEM SET ssd_cache.mode = write_back; SELECT pg_reload_conf();");
$node->poll_query_until('postgres', "SELECT mode = 'write-back' FROM ssd_cache_stats")
  or die 'mode did not change';
$node->safe_psql('postgres', 'CHECKPOINT');
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'write-back: fresher pages');
ok(-e $node->data_dir . "/$marker", 'write-back: the data directory is marked');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'write-back after lazy cleaning: every committed change survives a crash');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0,
	'and the fresher pages were kept (the server is in write-back mode)');

$node->safe_psql('postgres',
	"ALTER SYSTEM SET ssd_cache.mode = lazy_cleaning; SELECT pg_reload_conf();");
$node->poll_query_until('postgres', "SELECT mode = 'lazy cleaning' FROM ssd_cache_stats")
  or die 'mode did not change';
$node->safe_psql('postgres', 'CHECKPOINT');
ok(!-e $node->data_dir . "/$marker", 'lazy cleaning: its checkpoint removed the marker');
is(SSDKitTest::cache_stat($node, 'fresher_pages'), '0', 'and wrote every fresher page back');
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'back to lazy cleaning: every committed change survives a crash');
SSDKitTest::balanced($node, 'after switching back');
SSDKitTest::amcheck_ok($node, 'after switching back');

# --- A clean shutdown leaves the data directory complete, the cache empty. ---
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$node->stop;
$node->command_ok([ 'pg_checksums', '--check', '-D', $node->data_dir ],
	'after a clean shutdown the data directory passes pg_checksums');
my $offset = -s $node->logfile;
$node->start;
ok($node->wait_for_log(qr/starting with an empty cache in .* because ssd_cache.mode = lazy_cleaning/, $offset),
	'lazy cleaning starts empty after a clean restart too');
SSDKitTest::balanced($node, 'after restart');

# --- SSD trouble while pages are newer on it: a PANIC, never the disk's
# older copies; the restart starts empty and WAL replay redoes them. ---
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages before the SSD fails');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$offset = -s $node->logfile;
for my $try (1 .. 12)
{
	$node->psql('postgres', q{
		SET ssd_cache.fault_injection = 'slot_write_error';
		UPDATE pgbench_accounts SET abalance = abalance + 1000000;
	});
	last if $node->log_contains(qr/PANIC:  ssd_cache: .* holds changes that are not in the data files/, $offset);
}
ok($node->log_contains(qr/PANIC:  ssd_cache: .* holds changes that are not in the data files/, $offset),
	'failing SSD writes make the server PANIC instead of passing reads to the disk');
$node->poll_query_until('postgres', 'SELECT true') or die 'no restart';
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'after the restart every committed change is there, no failed one');
SSDKitTest::balanced($node, 'after the SSD failed');
SSDKitTest::amcheck_ok($node, 'after the SSD failed');

done_testing();
