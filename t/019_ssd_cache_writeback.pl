# ssd_cache in write-back mode (the thesis's PC): the SSD absorbs writes and
# holds pages newer than the disk.  No acknowledged commit is lost across
# crashes (also with a write cut short), a clean shutdown leaves the data
# directory complete by itself, a server whose cache holds changes the disk
# lacks refuses to start without it, ssd_cache_flush() makes a base backup
# complete, database-level file copies see every change, and write-back is
# refused where it could lose data.
use strict;
use warnings;

use File::Copy qw(move);
use File::Path qw(rmtree);
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $marker = 'pgsql_tmp_ssd_cache.fresher';

# Flip a byte of the first $count directory entries of the cache file that
# are VALID and FRESHER (entries of 32 bytes from offset 8192, flags at byte
# 17), so that their checksums fail; returns their old contents by slot.
sub damage_fresher_entries
{
	my ($cache, $nslots, $count) = @_;
	my %saved;
	open(my $fh, '<:raw', $cache) or die "open $cache: $!";
	for my $i (0 .. $nslots - 1)
	{
		my $entry;
		sysseek($fh, 8192 + 32 * $i, 0) or die;
		sysread($fh, $entry, 32) == 32 or die;
		next unless (ord(substr($entry, 17, 1)) & 0x03) == 0x03;
		$saved{$i} = $entry;
		last if keys %saved == $count;
	}
	close($fh);
	my %bad = map {
		my $e = $saved{$_};
		substr($e, 24, 1) = chr(ord(substr($e, 24, 1)) ^ 0x5a);
		($_ => $e)
	} keys %saved;
	write_entries($cache, %bad);
	return %saved;
}

# Write directory entries (slot => 32 bytes) into the cache file.
sub write_entries
{
	my ($cache, %entries) = @_;
	open(my $fh, '+<:raw', $cache) or die "open $cache: $!";
	for my $i (keys %entries)
	{
		sysseek($fh, 8192 + 32 * $i, 0) or die;
		syswrite($fh, $entries{$i}) == 32 or die;
	}
	close($fh);
	return;
}

# --- A write-back node under a write load, crashed again and again. ---
# Write-back needs wal_level replica (allows_streaming) and fsync.
my $node = SSDKitTest::node('wb', cache => '24MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n"
	  . "checkpoint_timeout = 30s\nrestart_after_crash = on\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
is(SSDKitTest::cache_stat($node, 'mode'), 'write-back', 'mode is write-back');
SSDKitTest::pgbench($node, '-i', '-s', '4', '-q');
$node->safe_psql('postgres', 'VACUUM ANALYZE');
SSDKitTest::ledger_init($node);

my $extra = "\\set aid random(1, 400000)\n"
  . "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;";
my $acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 6, extra_sql => $extra);
SSDKitTest::ledger_check($node, $acked, 'before crashes');
cmp_ok(SSDKitTest::cache_stat($node, 'absorbed_writes'), '>', 0, 'the SSD absorbed writes');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0,
	'the cache holds pages newer than the disk');
ok(-e $node->data_dir . "/$marker", 'the data directory is marked as needing the cache');

for my $round (1 .. 4)
{
	$acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 8,
		extra_sql => $extra, crash_after => 2 + $round);
	SSDKitTest::ledger_check($node, $acked, "crash $round");
	SSDKitTest::balanced($node, "crash $round");
	is(SSDKitTest::query($node, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
		"crash $round: no cached page is older than the disk's, no clean one differs");
}

# PC2 batches of hundreds of victims, written back a segment at a time with
# one sync each: crashes in the middle of such a batch lose nothing either.
$node->safe_psql('postgres', 'ALTER SYSTEM SET ssd_cache.evict_batch = 300');
$node->safe_psql('postgres', 'ALTER SYSTEM SET log_min_messages = debug1');
$node->reload;
my $log_from = -s $node->logfile;
my $before = SSDKitTest::cache_stat($node, 'write_backs');
$acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 8, extra_sql => $extra);
SSDKitTest::ledger_check($node, $acked, 'batches of 300');
cmp_ok(SSDKitTest::cache_stat($node, 'write_backs'), '>', $before,
	'victims were written back with evict_batch = 300');
my ($largest) = sort { $b <=> $a }
  (substr(slurp_file($node->logfile), $log_from) =~ /ssd_cache cleaner: a batch of (\d+) victims/g);
cmp_ok($largest // 0, '>', 32, 'the cleaner took more than 32 victims at once (the old limit)');
$acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 8,
	extra_sql => $extra, crash_after => 4);
SSDKitTest::ledger_check($node, $acked, 'crash during batches of 300');
SSDKitTest::balanced($node, 'crash during batches of 300');
is(SSDKitTest::query($node, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'batches of 300: no cached page is older than the disk\'s');
SSDKitTest::amcheck_ok($node, 'after the crashes');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET ssd_cache.evict_batch');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET log_min_messages');
$node->reload;

# A process killed between marking a cached page fresher and writing it: the
# transaction did not commit, WAL replay repairs the page.
my $sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
my ($rc) = $node->psql('postgres', q{
	SET ssd_cache.fault_injection = 'die_before_slot_write';
	UPDATE pgbench_accounts SET abalance = abalance + 1000;
});
isnt($rc, 0, 'the writer died in the middle of an in-place SSD write');
$node->poll_query_until('postgres', 'SELECT true') or die 'no restart';
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'after the crash the uncommitted update is gone and nothing else changed');
SSDKitTest::balanced($node, 'killed writer');
SSDKitTest::amcheck_ok($node, 'killed writer');

# --- Clean shutdown: every fresher page written back, the marker removed. ---
$node->stop;
ok(!-e $node->data_dir . "/$marker", 'a clean shutdown removes the marker');
ok($node->log_contains(qr/ssd_cache: wrote back \d+ pages newer than the disk at shutdown/),
	'the shutdown wrote the fresher pages back');
$node->command_ok([ 'pg_checksums', '--check', '-D', $node->data_dir ],
	'the data directory alone passes pg_checksums');

# The data directory is complete by itself: run it without the cache.
$node->append_conf('postgresql.conf', "ssd_cache.path = ''\n");
$node->start;
is(SSDKitTest::cache_stat($node, 'mode'), 'disabled', 'running without the cache');
SSDKitTest::balanced($node, 'without the cache');
SSDKitTest::ledger_check($node, $acked, 'without the cache');
SSDKitTest::amcheck_ok($node, 'without the cache');
$node->stop;
$node->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($node) . "'\n");
$node->start;

# --- A cache holding changes the disk lacks must not be left behind. ---
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
$node->safe_psql('postgres', 'CHECKPOINT');
my $fresher = SSDKitTest::cache_stat($node, 'fresher_pages');
cmp_ok($fresher, '>', 0, "fresher pages again ($fresher)");
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');

my $cache = SSDKitTest::cache_file($node);
move($cache, "$cache.away") or die "move: $!";
ok(!$node->start(fail_ok => 1), 'without its cache file the server refuses to start');
ok($node->log_contains(qr/SSD cache holds changes that are not in the data files, and it cannot be used: the cache file .* does not exist/),
	'and says why');
ok($node->log_contains(qr/HINT:  Make the cache usable again .* remove ".*$marker"/),
	'and what the choices are');
ok(!-e $cache, 'no empty cache file was created in its place');
move("$cache.away", $cache) or die "move back: $!";

$node->append_conf('postgresql.conf', "ssd_cache.size = '32MB'\n");
ok(!$node->start(fail_ok => 1), 'with another cache size it refuses too');
$node->append_conf('postgresql.conf', "ssd_cache.size = '24MB'\n");
$node->start;
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'with the cache back every committed change is there');
SSDKitTest::balanced($node, 'cache back');

# --- The data directory moved after a crash (or its file system came back
# under another device number): the same files, another device or inode.
# Its marker says it needs the cache, and nothing tells a move from a copy:
# the server refuses until the DBA says it moved.  (It used to take the
# cache for another directory's and start empty, losing the changes.)
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
$node->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages before the move');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');
my $datadir = $node->data_dir;
system('cp', '-a', $datadir, "$datadir.moving") == 0 or die "cp -a: $?";
rmtree($datadir);
move("$datadir.moving", $datadir) or die "move: $!";
my $off = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'moved after a crash: the server refuses to start');
like(substr(slurp_file($node->logfile), $off),
	qr/expects changes that only the SSD cache holds, but it is not where they were written.*HINT:  If it is the same data directory.*ssd_cache.data_directory_moved = on/s,
	'and says why and what to do');
ok(-e "$datadir/$marker", 'the marker stays');
$node->append_conf('postgresql.conf', "ssd_cache.data_directory_moved = on\n");
$node->start;
ok($node->log_contains(qr/ssd_cache: the data directory was moved/), 'told it moved, it starts');
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'every committed change is there after the move');
SSDKitTest::balanced($node, 'after the move');
is(SSDKitTest::query($node, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'after the move: no cached page older than the disk\'s');
$node->append_conf('postgresql.conf', "ssd_cache.data_directory_moved = off\n");
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$node->safe_psql('postgres', 'CHECKPOINT');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'the marker was rewritten: the next crash restarts without the setting');

# --- A damaged directory entry while pages are fresher: which page it named
# is unknown, so starting would risk a silent loss.  (Such entries used to
# be dropped without a word.)
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 3, extra_sql => $extra);
$node->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages before the damage');
$sum = $node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts');
my $nslots = SSDKitTest::query($node, 'SELECT slots FROM ssd_cache_stats');
$node->stop('immediate');
my %saved = damage_fresher_entries($cache, $nslots, 3);
is(scalar keys %saved, 3, 'three fresher entries found in the cache file');
$off = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'damaged entries with fresher pages: the server refuses to start');
like(substr(slurp_file($node->logfile), $off),
	qr/3 entries of the cache directory in .* are damaged, and the cache holds changes that are not in the data files.*HINT:  Check the SSD.*ssd_cache.drop_damaged_entries = on/s,
	'and says why');
write_entries($cache, %saved);
$node->start;
is($node->safe_psql('postgres', 'SELECT sum(abalance) FROM pgbench_accounts'), $sum,
	'entries repaired: every committed change is there');

# --- ssd_cache_flush() and a base backup. ---
$node->safe_psql('postgres',
	"ALTER SYSTEM SET ssd_cache.mode = write_through; SELECT pg_reload_conf();");
$node->poll_query_until('postgres',
	"SELECT mode = 'write-through' FROM ssd_cache_stats") or die 'mode did not change';
ok($node->poll_query_until('postgres', 'SELECT fresher_pages = 0 FROM ssd_cache_stats'),
	'in write-through mode the worker writes every fresher page back by itself');
ok($node->wait_for_log(qr/every page newer than the disk was written back; the data directory is complete by itself/),
	'and says so');
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
is($node->safe_psql('postgres', 'SELECT ssd_cache_flush()'), '0',
	'ssd_cache_flush() then finds nothing to write back');
is(SSDKitTest::cache_stat($node, 'fresher_pages'), '0', 'none is left');
ok(!-e $node->data_dir . "/$marker", 'the marker is gone');
is(SSDKitTest::query($node, 'SELECT mismatched, fresher FROM ssd_cache_verify()'), '0|0',
	'every cached page equals its disk copy again');

SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$node->backup('flushed');
$node->command_ok([ 'pg_verifybackup', '-n', $node->backup_dir . '/flushed' ],
	'pg_verifybackup accepts the backup');
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($node, 'flushed');
$restored->append_conf('postgresql.conf', "ssd_cache.path = ''\n");
$restored->start;
SSDKitTest::balanced($restored, 'restored backup');
SSDKitTest::amcheck_ok($restored, 'restored backup');
$restored->stop;

$node->safe_psql('postgres',
	"ALTER SYSTEM SET ssd_cache.mode = write_back; SELECT pg_reload_conf();");
$node->poll_query_until('postgres',
	"SELECT mode = 'write-back' FROM ssd_cache_stats") or die 'mode did not change back';

# Giving up the changes on purpose: remove the marker.
SSDKitTest::ledger_pgbench($node, clients => 2, seconds => 2, extra_sql => $extra);
$node->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', 0, 'fresher pages once more');
$node->stop('immediate');
unlink $node->data_dir . "/$marker";
$node->start;
ok($node->log_contains(qr/starting with an empty cache .* because it holds pages newer than the data files that this data directory does not expect/),
	'without the marker the cache is emptied, and the log says why');
$node->stop;

# --- Database-level commands that copy files behind smgr's back, and
# relation lifecycle, with pages newer than the disk.  A fresh node whose
# cache has never filled: checkpoints write every page to the SSD. ---
$node = SSDKitTest::node('life', cache => '64MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
my $ts = $node->basedir . '/ts';
mkdir $ts or die "mkdir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE ts LOCATION '$ts'");
$node->safe_psql('postgres', 'CREATE DATABASE moved');
$node->safe_psql('moved', q{
	CREATE TABLE m (id int PRIMARY KEY, v int);
	INSERT INTO m SELECT g, 0 FROM generate_series(1, 20000) g;
});
$node->safe_psql('moved', 'CHECKPOINT');
my $f0 = SSDKitTest::cache_stat($node, 'fresher_pages');
$node->safe_psql('moved', 'UPDATE m SET v = 1');
$node->safe_psql('moved', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', $f0 + 50,
	'the checkpoint put the updated pages on the SSD only');
$node->safe_psql('postgres', 'CREATE DATABASE copied TEMPLATE moved STRATEGY FILE_COPY');
is($node->safe_psql('copied', 'SELECT count(*), sum(v) FROM m'), '20000|20000',
	'CREATE DATABASE ... STRATEGY FILE_COPY copies the newest pages');
$node->safe_psql('postgres', 'CREATE DATABASE walcopied TEMPLATE moved');
$node->restart;
is($node->safe_psql('walcopied', 'SELECT count(*), sum(v) FROM m'), '20000|20000',
	'CREATE DATABASE (WAL_LOG) copies the newest pages, and keeps them after a restart');
$node->safe_psql('postgres', 'ALTER DATABASE moved SET TABLESPACE ts');
is($node->safe_psql('moved', 'SELECT count(*), sum(v) FROM m'), '20000|20000',
	'ALTER DATABASE ... SET TABLESPACE moves the newest pages');
$node->restart;
is($node->safe_psql('moved', 'SELECT count(*), sum(v) FROM m'), '20000|20000',
	'and they are there after a restart');

# Truncation and eviction with fresher pages: nothing comes back, nothing is lost.
$node->safe_psql('moved', 'UPDATE m SET v = 2; CHECKPOINT;');
$node->safe_psql('postgres', 'CREATE TABLE e AS SELECT g AS id, 0 AS v FROM generate_series(1, 20000) g');
$node->safe_psql('postgres', 'CHECKPOINT');
$f0 = SSDKitTest::cache_stat($node, 'fresher_pages');
$node->safe_psql('postgres', 'UPDATE e SET v = 3');
$node->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($node, 'fresher_pages'), '>', $f0 + 50, 'e has fresher pages');
$node->safe_psql('postgres', "SELECT ssd_cache_evict('e')");
is($node->safe_psql('postgres', 'SELECT sum(v) FROM e'), '60000',
	'ssd_cache_evict() writes fresher pages back before dropping them');
$node->safe_psql('postgres', 'DELETE FROM e WHERE id > 100; VACUUM e;');
$node->safe_psql('postgres', 'INSERT INTO e SELECT g, 4 FROM generate_series(101, 20000) g');
is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM e'), '20000|79900',
	'a relation truncated with fresher pages does not get them back');
SSDKitTest::crash_restart($node);
is($node->safe_psql('postgres', 'SELECT count(*), sum(v) FROM e'), '20000|79900',
	'nor after a crash');
is($node->safe_psql('moved', 'SELECT sum(v) FROM m'), '40000', 'and the moved database is intact');
# ssd_cache_flush() in write-back mode, on a quiet server.
$node->safe_psql('postgres', 'UPDATE e SET v = v + 0; CHECKPOINT;');
cmp_ok($node->safe_psql('postgres', 'SELECT ssd_cache_flush()'), '>', 0,
	'ssd_cache_flush() writes fresher pages back in write-back mode');
is(SSDKitTest::cache_stat($node, 'fresher_pages'), '0', 'and none is left on a quiet server');
ok(!-e $node->data_dir . "/$marker", 'nor the marker');

# A DROP DATABASE refused (another session is connected) keeps every page.
$node->safe_psql('postgres', 'CREATE DATABASE kept');
$node->safe_psql('kept', q{
	CREATE TABLE k (id int PRIMARY KEY, v int);
	INSERT INTO k SELECT g, 0 FROM generate_series(1, 20000) g;
	CHECKPOINT;
	UPDATE k SET v = 5;
	CHECKPOINT;
});
my $session = $node->background_psql('kept');
$session->query_until(qr/ready/, "\\echo ready\n");
my ($drop_rc, $drop_out, $drop_err) = $node->psql('postgres', 'DROP DATABASE kept');
like($drop_err, qr/is being accessed by other users/, 'DROP DATABASE is refused');
$session->quit;
$node->restart;
is($node->safe_psql('kept', 'SELECT count(*), sum(v) FROM k'), '20000|100000',
	'after a refused DROP DATABASE and a restart every change is there');
$node->safe_psql('postgres', 'DROP DATABASE kept');

# Unlogged relations: recovery resets them behind the cache; nothing of
# their old pages may come back (an index's metapage would).
$node->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE u (id int PRIMARY KEY, v int, pad text);
	INSERT INTO u SELECT g, 0, repeat('u', 500) FROM generate_series(1, 40000) g;
});
$node->safe_psql('postgres', q{
	UPDATE u SET v = v + 1 WHERE id % 13 = 0;
	UPDATE u SET v = v + 1 WHERE id % 7 = 0;
	CHECKPOINT;
});
is(SSDKitTest::cached_blocks($node, 'u'), '0', 'an unlogged table is never absorbed');
is(SSDKitTest::cached_blocks($node, 'u_pkey'), '0', 'nor its index');
SSDKitTest::crash_restart($node);
is($node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM u WHERE id BETWEEN 1 AND 1000'),
	'0', 'after a crash an unlogged table is empty, also through its index');
$node->safe_psql('postgres', "INSERT INTO u SELECT g, 1, 'n' FROM generate_series(1, 500) g");
is($node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*), sum(v) FROM u WHERE id <= 1000'),
	'500|500', 'and refilled it answers from its new pages only');

SSDKitTest::amcheck_ok($node, 'after the lifecycle commands');
is(SSDKitTest::query($node, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'no cached page is older than the disk');

$node->stop;

# --- A streaming standby with its own write-back cache: replay, a crash,
# promotion, a crash of the promoted server. ---
my $primary = SSDKitTest::node('wbprimary', cache => '16MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n");
$primary->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
SSDKitTest::pgbench($primary, '-i', '-s', '2', '-q');
SSDKitTest::ledger_init($primary);
$extra = "\\set aid random(1, 200000)\n"
  . "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;";
SSDKitTest::ledger_pgbench($primary, clients => 2, seconds => 2, extra_sql => $extra);
$primary->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($primary, 'fresher_pages'), '>', 0, 'the primary has fresher pages');
# pg_basebackup with fresher pages and nothing done by hand: the primary sees
# the backup's checkpoint, writes them back and writes through until the end.
$primary->backup('for_standby');
ok($primary->log_contains(qr/ssd_cache: a base backup is starting: write-back is suspended until it ends, and \d+ pages newer than the disk are written back/),
	'the primary saw the base backup start');
ok($primary->poll_query_until('postgres', 'SELECT problem IS NULL FROM ssd_cache_stats'),
	'and resumed write-back when it ended');
my $standby = PostgreSQL::Test::Cluster->new('wbstandby');
$standby->init_from_backup($primary, 'for_standby', has_streaming => 1);
ok(!-e $standby->data_dir . "/$marker", 'the base backup left the primary\'s marker out');
$standby->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($standby) . "'\n");
$standby->start;
my $q = 'SELECT sum(abalance), count(*), sum(hashtext(filler)) FROM pgbench_accounts';
SSDKitTest::ledger_pgbench($primary, clients => 2, seconds => 4, extra_sql => $extra);
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
cmp_ok(SSDKitTest::cache_stat($standby, 'absorbed_writes'), '>', 0,
	'the standby\'s own cache absorbed replayed pages');
# A restartpoint writes back what was fresher before it, so that a base
# backup of the standby starting from it is complete.  pg_basebackup right
# after it makes none of its own (no checkpoint replayed since) and is not
# seen until it copies files.
my $wb_before = SSDKitTest::cache_stat($standby, 'write_backs');
$standby->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($standby, 'write_backs'), '>', $wb_before,
	'the restartpoint wrote the standby\'s fresher pages back');
$standby->backup('of_standby');
my $standby_copy = PostgreSQL::Test::Cluster->new('wbstandbycopy');
$standby_copy->init_from_backup($standby, 'of_standby');
$standby_copy->append_conf('postgresql.conf', "ssd_cache.path = ''\nprimary_conninfo = ''\n");
unlink($standby_copy->data_dir . '/standby.signal');    # a server of its own, not a standby
$standby_copy->start;
is($standby_copy->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'a base backup of the standby (no restartpoint of its own) has every change');
SSDKitTest::amcheck_ok($standby_copy, 'base backup of the standby');
$standby_copy->stop;
is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'the standby answers like the primary');
$standby->stop('immediate');
$standby->start;
SSDKitTest::ledger_pgbench($primary, clients => 2, seconds => 2, extra_sql => $extra);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
	'after a crash the standby replays on from its cache and answers like the primary');

# A standby replays again from its last restartpoint after every restart:
# redo writes an older version of a page into the page's slot (fresher),
# then brings the buffer past the disk's copy again.  Until that buffer is
# written, the slot is older than the disk and the buffer is the page:
# ssd_cache_verify() says so in a NOTICE instead of counting a mismatch.
$standby->append_conf('postgresql.conf', "ssd_cache.policy = clock\n");
$standby->reload;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION IF NOT EXISTS pg_prewarm;
	CREATE TABLE big AS SELECT g, repeat('x', 500) AS f FROM generate_series(1, 40000) g;
});
my $blk_q = "SELECT (ctid::text::point)[0]::int FROM pgbench_accounts WHERE aid = 50001";
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');    # the restartpoint replay restarts from
$primary->safe_psql('postgres', 'UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 50001');
$primary->safe_psql('postgres', 'UPDATE big SET g = g');    # pushes the page out of the standby's buffers
# (back by one: the balances must still add up to pgbench's history)
$primary->safe_psql('postgres', 'UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid = 50001');
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', q{
	SELECT count(*) FROM big; SELECT pg_prewarm('big'); SELECT ssd_cache_flush();
	SELECT abalance FROM pgbench_accounts WHERE aid = 50001;
});
$standby->safe_psql('postgres', "SELECT pg_prewarm('big')") for 1 .. 2;
$standby->safe_psql('postgres', 'SELECT ssd_cache_flush()');
$standby->stop('immediate');
$standby->start;
my ($verify_out, $verify_err) = ('', '');
$standby->psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()',
	stdout => \$verify_out, stderr => \$verify_err);
is($verify_out, '0', 'standby restarted in the middle of replay: no mismatch');
like($verify_err, qr/marked fresher than the disk (is|are) older than the disk's, but shared_buffers holds a newer unwritten copy/,
	'pages whose newest copy waits in shared_buffers are reported as such');
is($standby->safe_psql('postgres', 'SELECT abalance FROM pgbench_accounts WHERE aid = 50001'),
	$primary->safe_psql('postgres', 'SELECT abalance FROM pgbench_accounts WHERE aid = 50001'),
	'and the page reads as on the primary');
$standby->append_conf('postgresql.conf', "ssd_cache.policy = tac\n");
$standby->reload;
$primary->stop;
$standby->promote;
$acked = SSDKitTest::ledger_pgbench($standby, clients => 2, seconds => 6, extra_sql => $extra,
	crash_after => 3);
SSDKitTest::ledger_check($standby, $acked, 'promoted standby after a crash');
SSDKitTest::balanced($standby, 'promoted standby after a crash');
SSDKitTest::amcheck_ok($standby, 'promoted standby');
is(SSDKitTest::query($standby, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'promoted standby: no cached page older than the disk');

# Accepting the loss of what damaged entries named (this node's last use).
$standby->safe_psql('postgres', 'UPDATE pgbench_accounts SET filler = filler WHERE aid % 50 = 0; CHECKPOINT;');
my $sb_slots = SSDKitTest::query($standby, 'SELECT slots FROM ssd_cache_stats');
cmp_ok(SSDKitTest::cache_stat($standby, 'fresher_pages'), '>', 0, 'fresher pages on the promoted standby');
$standby->stop('immediate');
my %damaged = damage_fresher_entries(SSDKitTest::cache_file($standby), $sb_slots, 2);
ok(!$standby->start(fail_ok => 1), 'two damaged fresher entries: refused');
$standby->append_conf('postgresql.conf', "ssd_cache.drop_damaged_entries = on\n");
$standby->start;
ok($standby->log_contains(qr/WARNING:  ssd_cache: dropped 2 damaged entries of the cache directory/),
	'with ssd_cache.drop_damaged_entries the start drops them and warns');
cmp_ok(SSDKitTest::cache_stat($standby, 'fresher_pages'), '>', 0, 'and keeps the other fresher pages');
$standby->stop;

# --- A point-in-time restore (archive recovery ending on a new timeline) in
# write-back, then a crash before the next checkpoint: the end-of-recovery
# checkpoint is the cache's too, and the next start has every commit (it was
# recorded on the replayed timeline, and the start refused as if the cache
# had missed it). ---
my $arch = SSDKitTest::node('wbarch', cache => '16MB',
	init => { allows_streaming => 1, has_archiving => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n");
$arch->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE pitr (id int PRIMARY KEY, v int);
	INSERT INTO pitr SELECT g, 0 FROM generate_series(1, 20000) g;
	CHECKPOINT;
});
$arch->backup('pitr_base');
$arch->safe_psql('postgres', q{
	UPDATE pitr SET v = 1;
	SELECT pg_create_restore_point('before_five');
	UPDATE pitr SET v = 5;
});
my $last_wal = $arch->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$arch->safe_psql('postgres', 'SELECT pg_switch_wal()');
$arch->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$last_wal' FROM pg_stat_archiver")
  or die 'WAL not archived';
$arch->stop;
my $pitr = PostgreSQL::Test::Cluster->new('wbpitr');
$pitr->init_from_backup($arch, 'pitr_base', has_restoring => 1);
$pitr->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($pitr) . "'\n"
	  . "recovery_target_name = 'before_five'\nrecovery_target_action = 'promote'\n");
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'no promotion';
is($pitr->safe_psql('postgres', 'SELECT sum(v) FROM pitr'), '20000', 'restored to the named point');
$pitr->safe_psql('postgres', 'UPDATE pitr SET v = v + 1 WHERE id <= 1000');
is(SSDKitTest::cache_stat($pitr, 'mode'), 'write-back', 'the restored server runs write-back');
$pitr->stop('immediate');
ok($pitr->start(fail_ok => 1),
	'after a crash before its first checkpoint on the new timeline, the restored server starts');
is($pitr->safe_psql('postgres', 'SELECT sum(v) FROM pitr'), '21000', 'with the commit made after the restore');
SSDKitTest::amcheck_ok($pitr, 'restored and crashed');
$pitr->stop;

# --- A crashed owner's cache file given to another server (a same-host
# copy made with pg_basebackup brings postgresql.conf, ssd_cache.path
# included): the other server leaves the file and its changes alone; the
# owner's refused start (the file locked meanwhile) changes nothing, and
# its next start has every commit. ---
my $owner = SSDKitTest::node('wbowner', cache => '16MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n");
$owner->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
SSDKitTest::pgbench($owner, '-i', '-s', '2', '-q');
SSDKitTest::ledger_init($owner);
$owner->backup('copy');
my $other = PostgreSQL::Test::Cluster->new('wbother');
$other->init_from_backup($owner, 'copy');
$acked = SSDKitTest::ledger_pgbench($owner, clients => 2, seconds => 3, extra_sql => $extra);
$owner->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($owner, 'fresher_pages'), '>', 0, 'the owner has fresher pages');
$owner->stop('immediate');
$other->start;
ok($other->log_contains(qr/WARNING:  ssd_cache is off: the cache file .* holds changes of another data directory/),
	'another server given the file runs without it, and says why');
$other->stop;
open(my $lock_fh, '<', SSDKitTest::cache_file($owner)) or die "open: $!";
flock($lock_fh, 6) or die "flock: $!";    # LOCK_EX | LOCK_NB
ok(!$owner->start(fail_ok => 1), 'the owner refuses to start while the file is locked');
close($lock_fh);
ok(-e $owner->data_dir . '/ssd_cache.token', 'and its refused start kept the token');
$owner->start;
SSDKitTest::ledger_check($owner, $acked, 'owner after another server had its cache file');
SSDKitTest::balanced($owner, 'owner after another server had its cache file');
SSDKitTest::amcheck_ok($owner, 'owner after another server had its cache file');

# A low-level backup (pg_backup_start(), a copy of the files, pg_backup_stop())
# with fresher pages and nothing done by hand: the session that starts it
# writes them back first, so the copy has every commit made before.
$acked = SSDKitTest::ledger_pgbench($owner, clients => 2, seconds => 3, extra_sql => $extra);
$owner->safe_psql('postgres', 'CHECKPOINT');
cmp_ok(SSDKitTest::cache_stat($owner, 'fresher_pages'), '>', 0, 'fresher pages before a low-level backup');
my $copy = PostgreSQL::Test::Cluster->new('wbcopy');
my $copy_dir = $copy->data_dir;
my $owner_dir = $owner->data_dir;
my @steps = (
	"SELECT pg_backup_start('by hand', true);",
	'\! cp -a ' . "$owner_dir $copy_dir",
	'SELECT labelfile FROM pg_backup_stop() \gset',
	'\o ' . "$copy_dir/backup_label",
	'\qecho -n :labelfile',
	'\o',
	'\! cp -a ' . "$owner_dir/pg_wal/. $copy_dir/pg_wal/");
$owner->safe_psql('postgres', join("\n", @steps) . "\n");
ok($owner->log_contains(qr/ssd_cache: a base backup is starting \(pg_backup_start\)/),
	'the session\'s pg_backup_start() was seen');
ok(!-e "$copy_dir/$marker", 'the copy did not take the marker along (nothing was fresher)');
unlink("$copy_dir/postmaster.pid");
$copy->append_conf('postgresql.conf',
	"port = " . $copy->port . "\nssd_cache.path = '" . $copy->basedir . "/ssd_cache.dat'\n");
$copy->start;
SSDKitTest::ledger_check($copy, $acked, 'a low-level backup taken without a flush');
SSDKitTest::amcheck_ok($copy, 'a low-level backup taken without a flush');
$copy->stop;
ok($owner->poll_query_until('postgres', 'SELECT problem IS NULL FROM ssd_cache_stats'),
	'write-back resumes after pg_backup_stop()');

# A pg_backup_start() that fails (a role without the privilege; a label
# computed by a function that runs a query of its own) leaves write-back
# suspended no longer than its transaction.
$owner->safe_psql('postgres', q{
	CREATE ROLE no_backup LOGIN;
	CREATE FUNCTION backup_label() RETURNS text LANGUAGE plpgsql
		AS $$BEGIN RETURN (SELECT 'label ' || count(*) FROM pg_class); END$$;
});
my ($out, $err) = ('', '');
$owner->psql('postgres', "SELECT pg_backup_start('denied')", extra_params => [ '-U', 'no_backup' ],
	stdout => \$out, stderr => \$err);
like($err, qr/permission denied for function pg_backup_start/, 'pg_backup_start() denied');
ok($owner->poll_query_until('postgres', 'SELECT problem IS NULL FROM ssd_cache_stats'),
	'a denied pg_backup_start() leaves write-back in force');
$owner->safe_psql('postgres',
	"SELECT pg_backup_start(backup_label(), true); SELECT pg_sleep(0.5); SELECT problem IS NOT NULL FROM ssd_cache_stats; SELECT lsn FROM pg_backup_stop()");
ok($owner->log_contains(qr/ssd_cache: a base backup is starting \(pg_backup_start\).*\n(.*\n)*.*ssd_cache: a base backup is starting \(pg_backup_start\)/),
	'a pg_backup_start() whose label runs a query is seen too');
ok($owner->poll_query_until('postgres', 'SELECT problem IS NULL FROM ssd_cache_stats'),
	'and write-back resumes after its pg_backup_stop()');
$owner->stop;

# Another directory's marker copied in (pg_rewind copies it from its source):
# the refusal says so, and does not suggest that this directory moved.
open(my $fake, '>', $owner->data_dir . "/$marker") or die;
print $fake "0123456789abcdef 1 2\n";
close($fake);
ok(!$owner->start(fail_ok => 1), 'another directory\'s marker: refused');
ok($owner->log_contains(qr/FATAL:  ssd_cache: this data directory has another data directory's write-back marker/),
	'saying the marker came from another data directory');
unlink($owner->data_dir . "/$marker");
$owner->start;
$owner->stop;

# --- A crash with fresher pages, then a start without ssd_cache that
# checkpoints (documented as undetectable then): the next start with it
# says the directory ran without the cache, not to preload it. ---
my $nolib = SSDKitTest::node('wbnolib', cache => '16MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\n");
$nolib->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
SSDKitTest::pgbench($nolib, '-i', '-s', '2', '-q');
$nolib->safe_psql('postgres', 'UPDATE pgbench_accounts SET filler = filler WHERE aid % 20 = 0; CHECKPOINT;');
cmp_ok(SSDKitTest::cache_stat($nolib, 'fresher_pages'), '>', 0, 'fresher pages before the crash');
$nolib->stop('immediate');
$nolib->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$nolib->start;
$nolib->safe_psql('postgres', 'CHECKPOINT');
$nolib->stop;
$nolib->append_conf('postgresql.conf', "shared_preload_libraries = 'ssd_cache'\n");
ok(!$nolib->start(fail_ok => 1), 'after running without the cache: refused');
ok($nolib->log_contains(qr/FATAL:  ssd_cache: this data directory ran without the SSD cache while the cache held changes/),
	'saying it ran without the cache');

# --- A DROP DATABASE that removed the database's files and crashed before
# the cache heard of it (PostgreSQL marks the database invalid first; only
# dropping it again is allowed).  Its fresher pages are removed data: they
# are forgotten, where writing them back used to fail with "its directory
# does not exist" in every flush, clean-up and shutdown from then on. ---
my $dd = SSDKitTest::node('dropdb', cache => '64MB', preload => ['ssd_cache'],
	init => { allows_streaming => 1 },
	conf => "ssd_cache.mode = write_back\nfsync = on\n");
$dd->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
$dd->safe_psql('postgres', 'CREATE DATABASE victim');
$dd->safe_psql('victim',
	"CREATE TABLE t AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 20000) g; CHECKPOINT;");
$dd->safe_psql('victim', "UPDATE t SET pad = pad || 'y' WHERE g % 10 = 0; CHECKPOINT;");
cmp_ok(SSDKitTest::cache_stat($dd, 'fresher_pages'), '>', 0, 'the doomed database has fresher pages');
my $victim_oid = $dd->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'victim'");
$dd->safe_psql('postgres', "UPDATE pg_database SET datconnlimit = -2 WHERE datname = 'victim'");
$dd->stop('immediate');
File::Path::rmtree($dd->data_dir . "/base/$victim_oid");
$dd->start;
my ($rc, $out, $err) = $dd->psql('postgres', 'SELECT ssd_cache_flush()');
is($rc, 0, 'after the crash, ssd_cache_flush() succeeds') or diag($err);
is(SSDKitTest::cache_stat($dd, 'fresher_pages'), '0', 'and no fresher page is left');
$dd->safe_psql('postgres', 'DROP DATABASE victim');
$dd->stop;
ok(!$dd->log_contains(qr/its directory does not exist/), 'no write-back error about the removed directory');
$dd->start;
SSDKitTest::amcheck_ok($dd, 'after the dropped database');
$dd->stop;

# --- Where write-back could lose data it is refused. ---
my $minimal = SSDKitTest::node('minimal', cache => '8MB',
	conf => "ssd_cache.mode = write_back\nfsync = on\nwal_level = minimal\nmax_wal_senders = 0\n");
$minimal->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');
is(SSDKitTest::query($minimal, 'SELECT mode, problem FROM ssd_cache_stats'),
	'write-through|write-back needs wal_level replica or logical; running write-through',
	'wal_level = minimal: write-through, and the view says why');
$minimal->safe_psql('postgres',
	"ALTER SYSTEM SET wal_level = replica; ALTER SYSTEM SET full_page_writes = off;");
$minimal->restart;
is(SSDKitTest::query($minimal, 'SELECT mode, problem FROM ssd_cache_stats'),
	'write-through|write-back needs full_page_writes = on; running write-through',
	'full_page_writes = off: write-through, and the view says why');
ok($minimal->log_contains(qr/WARNING:  ssd_cache: write-back needs/), 'with a WARNING in the log');
$minimal->stop;

done_testing();
