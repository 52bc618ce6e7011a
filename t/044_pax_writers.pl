# pax writers in the shapes a bulk load meets: another transaction writing
# to the same table between its statements, and groups (or single rows)
# larger than the buffer pool.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# 2 MB of shared_buffers: 256 buffers, fewer than a group of 4096 blocks.
my $node = SSDKitTest::node('pax_writers', preload => ['flashscan'],
	conf => "shared_buffers = 2MB\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE EXTENSION amcheck;
	CREATE TABLE loads (who text, g int) USING pax;
	CREATE INDEX loads_g ON loads (who, g);
});

# A load in one transaction, 300 statements, each followed by a committed
# insert from another session: every statement of the load reserves its row
# numbers after someone else's.  Each interleaving used to take one of the
# table's 128 reservation entries for good until the load ended, so it
# failed at about the 128th ("has 128 transactions writing to it already").
my $load = $node->background_psql('postgres', on_error_stop => 1);
$load->query_safe('BEGIN');
my $failed = '';
for my $i (1 .. 300)
{
	my ($ok, $err) = (1, '');
	eval { $load->query_safe("INSERT INTO loads SELECT 'load', g FROM generate_series($i * 100, $i * 100 + 99) g"); 1 }
	  or ($ok, $err) = (0, $@);
	if (!$ok) { $failed = "statement $i: $err"; last; }
	$node->safe_psql('postgres', "INSERT INTO loads SELECT 'other', g FROM generate_series($i * 10, $i * 10 + 9) g");
}
is($failed, '', 'a load interleaved 300 times with another writer runs to the end');
$load->query_safe('COMMIT') unless $failed;
$load->quit;
is($node->safe_psql('postgres', q{SELECT who, count(*), count(DISTINCT g) FROM loads GROUP BY who ORDER BY who}),
	"load|30000|30000\nother|3000|3000", 'both writers\' rows are all there');
is($node->safe_psql('postgres', q{SELECT count(*) FROM loads WHERE who = 'load' AND g BETWEEN 100 AND 30099}),
	'30000', 'an index scan finds the load\'s rows');
is($node->safe_psql('postgres', q{SELECT bt_index_check('loads_g', true)}), '', 'amcheck: the index holds every row');

# Groups of up to 4096 blocks (32 MB) and a row of 17 MB with 256 buffers:
# a group's blocks used to be pinned all at once while it was written
# ("no unpinned buffers available").
my ($ret, $out, $err) = $node->psql('postgres', q{
	SET flashscan.group_blocks = 4096;
	CREATE TABLE wide_groups (a int, b text) USING pax;
	INSERT INTO wide_groups SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, 40000) g;
	CREATE TABLE one_big_row (a int, b text) USING pax;
	INSERT INTO one_big_row VALUES (1, repeat('x', 17000000)), (2, 'small');
});
is($err, '', 'groups larger than shared_buffers are written');
is($node->safe_psql('postgres', q{SELECT count(*), sum(length(b)), count(DISTINCT b) FROM wide_groups}),
	'40000|40960000|40000', 'and read back whole');
is($node->safe_psql('postgres', q{SELECT max(nblocks) > 256 FROM pax_groups('wide_groups')}),
	't', 'a group is larger than the buffer pool');
is($node->safe_psql('postgres', q{SELECT a, length(b), md5(b) = md5(repeat('x', 17000000)) FROM one_big_row ORDER BY a}),
	"1|17000000|t\n2|5|f", 'a 17 MB row reads back');

# After a crash, replay writes the same blocks back (full images).
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', q{SELECT count(*), sum(length(b)) FROM wide_groups}),
	'40000|40960000', 'the large groups survive a crash');
is($node->safe_psql('postgres', q{SELECT length(b) FROM one_big_row WHERE a = 1}),
	'17000000', 'so does the large row');

done_testing();
