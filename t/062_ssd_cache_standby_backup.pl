# pg_basebackup of a write-back standby.  It starts from the standby's last
# restartpoint, and makes none of its own while no new checkpoint has been
# replayed; so every restartpoint leaves the standby's data files holding
# every change made before its redo point, writing back the fresher pages
# last changed before it (a page changed after it is restored whole from
# the full-page image its first change since then logged).  The edge: a
# page whose last change is the record right before the redo point (its LSN
# equals it).  The table lives in a tablespace, which pg_basebackup sends
# first, before the cache's worker would drain fresher pages for the backup.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# pg_basebackup of source into a new node, the tablespace moved from one
# directory to another (the test library's copy of a backup does not follow
# tablespace links).
sub clone
{
	my ($source, $name, $from, $to, @options) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	PostgreSQL::Test::Utils::system_or_bail('pg_basebackup', '-D', $node->data_dir,
		'-h', $source->host, '-p', $source->port, '--checkpoint', 'fast', '--no-sync',
		'-X', 'stream', '-T', "$from=$to", @options);
	chmod(0700, $node->data_dir);
	$node->append_conf('postgresql.conf',
		"port = " . $node->port . "\nunix_socket_directories = '" . $node->host
		  . "'\nlisten_addresses = ''\n");
	return $node;
}

my $ts_primary = PostgreSQL::Test::Utils::tempdir_short();
my $ts_standby = PostgreSQL::Test::Utils::tempdir_short();
my $ts_copy = PostgreSQL::Test::Utils::tempdir_short();

my $primary = SSDKitTest::node('sbprimary', cache => '16MB', init => { allows_streaming => 1 },
	conf => "ssd_cache.mode = write_back\nfsync = on\ncheckpoint_timeout = 1h\nautovacuum = off\n");
$primary->safe_psql('postgres', qq{
	CREATE EXTENSION ssd_cache;
	CREATE TABLESPACE ts1 LOCATION '$ts_primary';
	CREATE TABLE t (id int PRIMARY KEY, v int) TABLESPACE ts1;
	INSERT INTO t VALUES (1, 0);
	CHECKPOINT;
});
my $standby = clone($primary, 'sbstandby', $ts_primary, $ts_standby);
$standby->enable_streaming($primary);
$standby->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($standby) . "'\n");
$standby->start;
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');

# The update is the last record before the checkpoint's redo point: its
# transaction commits after the checkpoint started.
my $session = $primary->background_psql('postgres');
$session->query_safe('BEGIN');
$session->query_safe('UPDATE t SET v = 1 WHERE id = 1');
$primary->safe_psql('postgres', 'CHECKPOINT');
$session->query_safe('COMMIT');
$session->quit;
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');    # the restartpoint at that redo point
is($standby->safe_psql('postgres', 'SELECT v FROM t'), '1', 'the standby has the update');

# No checkpoint on the primary since: the backup starts from that restartpoint.
my $copy = clone($standby, 'sbcopy', $ts_standby, $ts_copy);
unlink($copy->data_dir . '/standby.signal');    # a server of its own
$copy->append_conf('postgresql.conf', "ssd_cache.path = ''\nprimary_conninfo = ''\n");
$copy->start;
is($copy->safe_psql('postgres', 'SELECT v FROM t'), '1',
	'a base backup of the standby has the update made just before its restartpoint');
SSDKitTest::amcheck_ok($copy, 'base backup of the standby');
$copy->stop;
$standby->stop;
$primary->stop;

# Data checksums off, wal_log_hints off on the primary and on on the standby
# (often set for pg_rewind after a failover): replaying a visibility record
# raises the heap page's LSN on the standby, where the primary logged no
# full-page image of it, so the LSN rule must not leave that page in the
# cache: every fresher page is written back at such a standby's restartpoints.
my $ts2_primary = PostgreSQL::Test::Utils::tempdir_short();
my $ts2_standby = PostgreSQL::Test::Utils::tempdir_short();
my $ts2_copy = PostgreSQL::Test::Utils::tempdir_short();
my $p2 = PostgreSQL::Test::Cluster->new('hintsprimary');
$p2->init(allows_streaming => 1);    # no data checksums
my $wb_conf = "shared_preload_libraries = 'ssd_cache'\nssd_cache.warmup = off\n"
  . "ssd_cache.mode = write_back\nssd_cache.size = '16MB'\nshared_buffers = 128kB\n"
  . "fsync = on\ncheckpoint_timeout = 1h\nautovacuum = off\n";
$p2->append_conf('postgresql.conf',
	$wb_conf . "ssd_cache.path = '" . SSDKitTest::cache_file($p2) . "'\nwal_log_hints = off\n");
$p2->start;
$p2->safe_psql('postgres', qq{
	CREATE EXTENSION ssd_cache;
	CREATE TABLESPACE ts2 LOCATION '$ts2_primary';
	CREATE TABLE h (id int, v text) TABLESPACE ts2;
	INSERT INTO h SELECT g, repeat('x', 100) FROM generate_series(1, 3000) g;
	DELETE FROM h WHERE id % 2 = 0;
	VACUUM h;
});
my $s2 = clone($p2, 'hintsstandby', $ts2_primary, $ts2_standby);
$s2->enable_streaming($p2);
$s2->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($s2) . "'\nwal_log_hints = on\n");
$s2->start;
$p2->safe_psql('postgres', q{INSERT INTO h SELECT g, repeat('y', 100) FROM generate_series(3001, 6000) g});
$p2->safe_psql('postgres', 'CHECKPOINT');
$p2->safe_psql('postgres', 'VACUUM h');    # after the redo point: visibility records only
$p2->wait_for_catchup($s2);
$s2->safe_psql('postgres', 'CHECKPOINT');
my $c2 = clone($s2, 'hintscopy', $ts2_standby, $ts2_copy);
unlink($c2->data_dir . '/standby.signal');
$c2->append_conf('postgresql.conf', "ssd_cache.path = ''\nprimary_conninfo = ''\n");
ok($c2->start(fail_ok => 1), 'a backup of a standby with wal_log_hints on alone starts');
my $hq = q{SELECT count(*), sum(id) FROM h};
is($c2->safe_psql('postgres', $hq), $p2->safe_psql('postgres', $hq),
	'and has every row the primary has');
$c2->stop;
$s2->stop;
$p2->stop;
done_testing();
