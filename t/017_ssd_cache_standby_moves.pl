# A hot standby with its own ssd_cache file keeps no page of a file that WAL
# replay replaced, moved or cut off (issue 20, item 4, and every relation
# lifecycle path on primary and standby): DROP TABLE, TRUNCATE, VACUUM
# truncation, CLUSTER, REINDEX, ALTER TABLE SET TABLESPACE there and back,
# and ALTER DATABASE SET TABLESPACE there and back.  Redo of a database move
# copies and removes directories without the storage manager, and moving
# back brings the very same file names back; pages the standby cached
# before must not be served after.  After each step the standby answers
# like the primary, both answer as computed independently of any table, and
# every page cached on either server equals its disk copy.
use strict;
use warnings;

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
*expected_rows = \&SSDKitTest::expected_rows;

# Sequential detection off: these tests warm caches with scans (see t/011).
# In-place tablespaces: the tablespace lives in pg_tblspc of each server,
# so primary and standby on one host do not share its directory.
my $conf = "shared_buffers = 16MB\nssd_cache.sequential_detection = none\n"
  . "autovacuum = off\nfsync = on\nallow_in_place_tablespaces = on\n";
my $rowsum = 'SELECT count(*), sum(id), sum(hashtext(pad)) FROM';

# The table's rows by a heap scan and, with $index, through its primary key.
sub data_ok
{
	my ($node, $db, $table, $expected, $index, $label) = @_;
	my $who = "$label, " . $node->name;
	is(query($node, "$rowsum $table", $db), $expected, "$who: $db.$table has the expected rows");
	is( query($node,
			"SET enable_seqscan = off; SET enable_bitmapscan = off; $rowsum $table WHERE id > 0", $db),
		$expected, "$who: $db.$table has the expected rows through its index")
	  if $index;
	return;
}

my $primary = SSDKitTest::node('primary', cache => '32MB', conf => $conf,
	init => { allows_streaming => 1 });

# One table per lifecycle path, 5000 rows (about 210 pages) each: [key,
# order of insertion].  CLUSTER has something to reorder.
my %made = (
	d_drop => [ '', 'g' ],
	d_trunc => [ '', 'g' ],
	d_vac => [ '', 'g' ],
	d_clu => [ 'PRIMARY KEY', 'random()' ],
	d_reidx => [ 'PRIMARY KEY', 'g' ],
	d_move => [ '', 'g' ]);
$primary->safe_psql('postgres', 'CREATE EXTENSION ssd_cache; CREATE EXTENSION pg_prewarm;');
for my $table (sort keys %made)
{
	my ($key, $order) = @{ $made{$table} };
	$primary->safe_psql('postgres', qq{
		CREATE TABLE $table (id int $key, pad text);
		INSERT INTO $table SELECT g, repeat('d', 300) FROM generate_series(1, 5000) g ORDER BY $order;
		VACUUM ANALYZE $table;
	});
}
$primary->safe_psql('postgres', 'CREATE DATABASE db2');
$primary->safe_psql('db2', q{
	CREATE EXTENSION ssd_cache;
	CREATE EXTENSION pg_prewarm;
	CREATE TABLE t (id int PRIMARY KEY, pad text);
	INSERT INTO t SELECT g, repeat('t', 300) FROM generate_series(1, 20000) g;
	CREATE TABLE u (id int, pad text);
	INSERT INTO u SELECT g, repeat('u', 300) FROM generate_series(1, 5000) g;
	VACUUM ANALYZE t;
	VACUUM ANALYZE u;
});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf',
	"ssd_cache.path = '" . SSDKitTest::cache_file($standby) . "'\n");
$standby->start;
# Created after the backup, so that the standby makes its own by replay.
$primary->safe_psql('postgres', "SET allow_in_place_tablespaces = on; CREATE TABLESPACE ts LOCATION ''");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT count(*) FROM pg_tablespace WHERE spcname = 'ts'"), '1',
	'the standby replayed the tablespace');

my @rels = (
	(sort keys %made), 'd_clu_pkey', 'd_reidx_pkey',
	[ 'db2', 't' ], [ 'db2', 't_pkey' ], [ 'db2', 'u' ]);
warm($primary, @rels);
warm($standby, @rels);
is(query($standby, 'SELECT mode FROM ssd_cache_stats'), 'write-through',
	'the standby caches with its own file');

my %filenode =
  map { $_ => $primary->safe_psql('postgres', "SELECT pg_relation_filenode('$_')") } keys %made;

# After a step on the primary: replay it, make both servers' disks current
# (a checkpoint, replayed as a restartpoint), and check each table on both
# servers and every cached page on both.
sub pair_ok
{
	my ($label, @checks) = @_;
	$primary->safe_psql('postgres', 'CHECKPOINT');
	$primary->wait_for_catchup($standby);
	$standby->safe_psql('postgres', 'CHECKPOINT');
	for my $c (@checks)
	{
		my ($db, $table, $expected, $index) = @$c;
		data_ok($_, $db, $table, $expected, $index, $label) for ($primary, $standby);
	}
	verify_ok($_, $label) for ($primary, $standby);
	return;
}

# Nothing of a replaced file stays cached on either server.
sub forgotten_ok
{
	my ($label, $table) = @_;
	for my $node ($primary, $standby)
	{
		is( query($node,
				"SELECT count(*) FROM ssd_cache_relation_blocks() WHERE relfilenode = $filenode{$table}"),
			'0', "$label: nothing of the old file stays cached on the " . $node->name);
	}
	return;
}

my %expect;

# DROP TABLE
$primary->safe_psql('postgres', 'DROP TABLE d_drop');
pair_ok('DROP TABLE');
is($standby->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'd_drop'"), '0',
	'DROP TABLE: gone on the standby');
forgotten_ok('DROP TABLE', 'd_drop');

# TRUNCATE, then new rows in the new file
$primary->safe_psql('postgres', q{
	TRUNCATE d_trunc;
	INSERT INTO d_trunc SELECT g, repeat('n', 300) FROM generate_series(1, 3000) g;
});
$expect{d_trunc} = expected($primary, 3000, 'n');
pair_ok('TRUNCATE', [ 'postgres', 'd_trunc', $expect{d_trunc} ]);
forgotten_ok('TRUNCATE', 'd_trunc');

# VACUUM cuts the empty tail off; the file grows again: the regrown blocks
# must not be the old cached ones.
$primary->safe_psql('postgres', 'DELETE FROM d_vac WHERE id > 1000; VACUUM d_vac;');
cmp_ok(nblocks($primary, 'd_vac'), '<', 100, 'VACUUM truncated d_vac');
$primary->wait_for_catchup($standby);
cmp_ok(nblocks($standby, 'd_vac'), '<', 100, 'and the standby replayed the truncation');
$primary->safe_psql('postgres',
	"INSERT INTO d_vac SELECT g, repeat('r', 300) FROM generate_series(10001, 14000) g");
$expect{d_vac} = expected_rows($primary,
	"SELECT g, repeat('d', 300) FROM generate_series(1, 1000) g "
	  . "UNION ALL SELECT g, repeat('r', 300) FROM generate_series(10001, 14000) g");
pair_ok('VACUUM truncation and regrowth', [ 'postgres', 'd_vac', $expect{d_vac} ]);

# CLUSTER rewrites into a new file
$primary->safe_psql('postgres', q{
	UPDATE d_clu SET pad = repeat('c', 300) WHERE id % 4 = 0;
	CLUSTER d_clu USING d_clu_pkey;
});
$expect{d_clu} = expected($primary, 5000, 'd', [ 'g % 4 = 0', "repeat('c', 300)" ]);
pair_ok('CLUSTER', [ 'postgres', 'd_clu', $expect{d_clu}, 1 ]);
forgotten_ok('CLUSTER', 'd_clu');

# REINDEX builds new index files
my $old_index = $primary->safe_psql('postgres', "SELECT pg_relation_filenode('d_reidx_pkey')");
$primary->safe_psql('postgres', q{
	UPDATE d_reidx SET pad = repeat('i', 300) WHERE id % 6 = 0;
	REINDEX TABLE d_reidx;
});
$expect{d_reidx} = expected($primary, 5000, 'd', [ 'g % 6 = 0', "repeat('i', 300)" ]);
pair_ok('REINDEX', [ 'postgres', 'd_reidx', $expect{d_reidx}, 1 ]);
for my $node ($primary, $standby)
{
	is( query($node,
			"SELECT count(*) FROM ssd_cache_relation_blocks() WHERE relfilenode = $old_index"),
		'0', 'REINDEX: nothing of the old index stays cached on the ' . $node->name);
}

# ALTER TABLE SET TABLESPACE there and back, with writes in each place
$primary->safe_psql('postgres', q{
	ALTER TABLE d_move SET TABLESPACE ts;
	UPDATE d_move SET pad = repeat('x', 300) WHERE id % 3 = 0;
});
pair_ok('SET TABLESPACE ts',
	[ 'postgres', 'd_move', expected($primary, 5000, 'd', [ 'g % 3 = 0', "repeat('x', 300)" ]) ]);
forgotten_ok('SET TABLESPACE ts', 'd_move');
$primary->safe_psql('postgres', q{
	ALTER TABLE d_move SET TABLESPACE pg_default;
	UPDATE d_move SET pad = repeat('y', 300) WHERE id % 5 = 0;
});
$expect{d_move} = expected($primary, 5000, 'd',
	[ 'g % 3 = 0', "repeat('x', 300)" ], [ 'g % 5 = 0', "repeat('y', 300)" ]);
pair_ok('SET TABLESPACE back', [ 'postgres', 'd_move', $expect{d_move} ]);

# Every table again with the standby's shared_buffers empty: read through
# its cache.
$standby->restart;
ok(wait_write_through($standby), 'standby restarted: write-through');
for my $table (sort keys %expect)
{
	data_ok($standby, 'postgres', $table, $expect{$table}, ($table =~ /clu|reidx/ ? 1 : 0),
		'standby restarted');
}
verify_ok($standby, 'standby restarted');

#
# 4. ALTER DATABASE SET TABLESPACE there and back.  The standby cached db2
#    in pg_default (above) and in ts; after the move back its files have
#    the same names as before the first move.  u is not written after the
#    move back, so only the move's redo can forget the standby's old pages.
#
cmp_ok(cached_blocks($standby, 'u', 'db2'), '>', 150, "the standby has cached db2's u");
$primary->safe_psql('postgres', 'ALTER DATABASE db2 SET TABLESPACE ts');
$primary->safe_psql('db2', q{
	UPDATE t SET pad = repeat('x', 300) WHERE id % 3 = 0;
	UPDATE u SET pad = repeat('x', 300) WHERE id % 3 = 0;
});
# A checkpoint, so that the standby's restart below does not replay these
# updates into its shared_buffers (it reads the pages through its cache).
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres',
		"SELECT spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = d.dattablespace WHERE datname = 'db2'"),
	'ts', 'the standby replayed the move to ts');
warm($standby, [ 'db2', 't' ], [ 'db2', 'u' ]);
$primary->safe_psql('postgres', 'ALTER DATABASE db2 SET TABLESPACE pg_default');
$primary->safe_psql('db2', "UPDATE t SET pad = repeat('y', 300) WHERE id % 5 = 0");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres',
		"SELECT spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = d.dattablespace WHERE datname = 'db2'"),
	'pg_default', 'the standby replayed the move back');
$standby->restart;
ok(wait_write_through($standby), 'database moved there and back: the standby caches');
my $db2_t = expected($primary, 20000, 't',
	[ 'g % 3 = 0', "repeat('x', 300)" ], [ 'g % 5 = 0', "repeat('y', 300)" ]);
my $db2_u = expected($primary, 5000, 'u', [ 'g % 3 = 0', "repeat('x', 300)" ]);
for my $node ($standby, $primary)
{
	data_ok($node, 'db2', 't', $db2_t, 1, 'database moved there and back');
	data_ok($node, 'db2', 'u', $db2_u, 0, 'database moved there and back');
}
is(query($standby, "$rowsum u", 'db2'), query($primary, "$rowsum u", 'db2'),
	'database moved there and back: the standby answers like the primary');
is(query($standby, "SELECT count(*) FROM u WHERE pad = repeat('u', 300) AND id % 3 = 0", 'db2'), '0',
	'database moved there and back: no row from before the move comes back');
verify_ok($standby, 'database moved there and back');
verify_ok($primary, 'database moved there and back');

SSDKitTest::amcheck_ok($primary, 'primary');
$primary->wait_for_catchup($standby);
# A standby cannot install amcheck; the primary did, and it replicated.
$standby->command_ok(
	[ 'pg_amcheck', '--heapallindexed', '--all', '-h', $standby->host, '-p', $standby->port ],
	'standby: pg_amcheck finds no corruption');
$standby->stop;
$primary->stop;
done_testing();
