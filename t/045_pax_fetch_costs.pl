# The planner's price of pax index probes follows shared_buffers: a row
# fetched alone visits a block per needed column, and where those blocks
# outgrow shared_buffers the visits that miss cost a page read each, as a
# FlashScan's blocks do.  The same join of 100 outer rows with ten pax rows
# each runs as a nested loop of index probes when the table fits in
# shared_buffers and as a FlashScan hash join when it does not, with the
# same answer both ways.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $node = SSDKitTest::node('pax_fetch_costs',
	preload => ['flashscan'],
	conf => "shared_buffers = '128MB'\nmax_parallel_workers_per_gather = 0\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE TABLE f (id int, k int, a int, b int, c text) USING pax;
	INSERT INTO f SELECT g, (g * 7919) % 20000, g % 100, g % 1000, repeat('x', 20) || g
	FROM generate_series(1, 200000) g;
	CREATE INDEX ON f (k);
	CREATE TABLE o AS SELECT g * 97 AS k FROM generate_series(1, 200) g;
	VACUUM ANALYZE f, o;
});
my $query = 'SELECT sum(f.a + f.b + length(f.c)) FROM o JOIN f ON f.k = o.k WHERE o.k <= 9700';
my $expected = $node->safe_psql('postgres', q{
	SET flashscan.enable = off; SET enable_indexscan = off; SET enable_bitmapscan = off;
	SELECT sum(f.a + f.b + length(f.c)) FROM o JOIN f ON f.k = o.k WHERE o.k <= 9700});

# The needed columns' blocks (about 1,000) fit in 128 MB: probes are cheap.
my $plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $query");
like($plan, qr/Nested Loop.*Index Scan using f_k_idx on f/s,
	'shared_buffers holds the needed columns: index probes');
unlike($plan, qr/FlashScan/, 'and no FlashScan');
is($node->safe_psql('postgres', $query), $expected, 'the probes return the right sum');

# In 1 MB most visits miss: the FlashScan hash join reads each block once.
$node->append_conf('postgresql.conf', "shared_buffers = '1MB'\n");
$node->restart;
$plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $query");
like($plan, qr/Hash Join.*Custom Scan \(FlashScan\) on f/s,
	'shared_buffers far smaller than the needed columns: a FlashScan hash join');
unlike($plan, qr/Index Scan using f_k_idx/, 'and no index probes');
is($node->safe_psql('postgres', $query), $expected, 'the hash join returns the right sum');

# A point query has no cheaper plan: it still probes.
like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT a, b, c FROM f WHERE k = 4242'),
	qr/Index Scan using f_k_idx on f|Bitmap Heap Scan on f/,
	'a point query in 1 MB still uses the index');

$node->stop;
done_testing();
