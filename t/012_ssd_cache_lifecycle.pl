# Relation lifecycle under ssd_cache: whatever replaces, shrinks or removes a
# relation's files, the cache forgets the old pages first, so a stale page is
# never served, also when the same file names come back.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# These tests warm the cache with sequential scans; TAC would rightly not
# admit those, so every read counts as random here (t/014 tests admission).
my $node = SSDKitTest::node('lifecycle', cache => '64MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\nautovacuum = off\n");
$node->safe_psql('postgres', 'CREATE EXTENSION ssd_cache');

# Read a table with shared_buffers emptied, so its pages are offered, and
# wait for the worker.
sub warm
{
	my ($db, $table) = @_;
	$node->restart;
	$node->safe_psql($db, "SELECT sum(length(pad)) FROM $table");
	SSDKitTest::cache_drain($node);
	return;
}

sub cached_blocks
{
	my ($db, $table) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce(sum(cached_blocks), 0) FROM ssd_cache_relations WHERE relation = '$table'::regclass");
}

sub verify_ok
{
	my ($label) = @_;
	is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
		"$label: every cached page equals its disk copy");
	return;
}

sub filenode
{
	my ($db, $table) = @_;
	return $node->safe_psql($db, "SELECT pg_relation_filenode('$table')");
}

$node->safe_psql('postgres', q{
	CREATE TABLE a (id int, pad text);
	INSERT INTO a SELECT g, repeat('a', 300) FROM generate_series(1, 20000) g;
});
warm('postgres', 'a');
cmp_ok(cached_blocks('postgres', 'a'), '>', 100, 'table a is cached');

# TRUNCATE gives the table a new file and drops the old one.
my $old = filenode('postgres', 'a');
$node->safe_psql('postgres', q{
	TRUNCATE a;
	INSERT INTO a SELECT g, repeat('b', 300) FROM generate_series(1, 20000) g;
});
isnt(filenode('postgres', 'a'), $old, 'TRUNCATE made a new file');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ssd_cache_relation_blocks() WHERE relfilenode = $old"),
	'0', 'nothing of the truncated file stays cached');
warm('postgres', 'a');
is($node->safe_psql('postgres', "SELECT count(*) FROM a WHERE pad LIKE 'a%'"), '0',
	'no old row comes back after TRUNCATE');
verify_ok('TRUNCATE');

# VACUUM FULL rewrites into a new file.
$old = filenode('postgres', 'a');
$node->safe_psql('postgres', 'DELETE FROM a WHERE id % 2 = 0; VACUUM FULL a;');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ssd_cache_relation_blocks() WHERE relfilenode = $old"),
	'0', 'VACUUM FULL: the old file is forgotten');
warm('postgres', 'a');
is($node->safe_psql('postgres', 'SELECT count(*), min(id) FROM a'), '10000|1',
	'VACUUM FULL: right rows');
verify_ok('VACUUM FULL');

# VACUUM cuts the empty tail off; the file grows again afterwards, and the
# regrown blocks must not be the old cached ones.
$node->safe_psql('postgres', 'DELETE FROM a WHERE id > 2000; VACUUM a;');
cmp_ok($node->safe_psql('postgres', "SELECT pg_relation_size('a') / 8192"), '<', 300,
	'VACUUM truncated the file');
# ssd_cache_verify() reports any cached block beyond the end of its file.
verify_ok('VACUUM truncation, before the file regrows');
$node->safe_psql('postgres',
	"INSERT INTO a SELECT g, repeat('c', 300) FROM generate_series(100001, 120000) g");
warm('postgres', 'a');
is( $node->safe_psql('postgres', "SELECT count(*) FROM a WHERE id > 2000 AND id <= 20000"),
	'0', 'VACUUM truncation: deleted rows do not come back when the file regrows');
verify_ok('VACUUM truncation');

# DROP TABLE: forgotten before the file goes.
$old = filenode('postgres', 'a');
$node->safe_psql('postgres', 'DROP TABLE a');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM ssd_cache_relation_blocks() WHERE relfilenode = $old"),
	'0', 'DROP TABLE: its pages are forgotten');
verify_ok('DROP TABLE');

# DROP DATABASE removes directories without smgr; CREATE DATABASE with
# FILE_COPY copies them.
$node->safe_psql('postgres', 'CREATE DATABASE d1');
$node->safe_psql('d1', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE b (id int, pad text);
	INSERT INTO b SELECT g, repeat('d', 300) FROM generate_series(1, 20000) g;
});
warm('d1', 'b');
cmp_ok(cached_blocks('d1', 'b'), '>', 100, 'database d1 is cached');
my $d1 = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'd1'");
$node->safe_psql('postgres', 'DROP DATABASE d1');
verify_ok('DROP DATABASE');
$node->safe_psql('postgres', 'CREATE DATABASE d2 STRATEGY FILE_COPY');
verify_ok('CREATE DATABASE FILE_COPY');

# ALTER DATABASE SET TABLESPACE, there and back: pages cached before the
# first move must not be served after the second.
my $tsdir = $node->basedir . '/ts1';
mkdir $tsdir or die "mkdir $tsdir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$tsdir'");
$node->safe_psql('postgres', 'CREATE DATABASE d3');
$node->safe_psql('d3', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE c (id int, pad text);
	INSERT INTO c SELECT g, repeat('e', 300) FROM generate_series(1, 20000) g;
});
warm('d3', 'c');
cmp_ok(cached_blocks('d3', 'c'), '>', 100, 'database d3 is cached');
$node->safe_psql('postgres', 'ALTER DATABASE d3 SET TABLESPACE ts1');
$node->safe_psql('d3', "UPDATE c SET pad = repeat('f', 300)");
warm('d3', 'c');
$node->safe_psql('postgres', 'ALTER DATABASE d3 SET TABLESPACE pg_default');
warm('d3', 'c');
is($node->safe_psql('d3', "SELECT count(*) FROM c WHERE pad LIKE 'e%'"), '0',
	'SET TABLESPACE round trip: no page from before the move comes back');
is($node->safe_psql('d3', "SELECT count(*) FROM c WHERE pad LIKE 'f%'"), '20000',
	'SET TABLESPACE round trip: every row as last written');
verify_ok('SET TABLESPACE round trip');

SSDKitTest::amcheck_ok($node, 'lifecycle');
$node->stop;
done_testing();
