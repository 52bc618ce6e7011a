# SSD Sort's costs with qdtt_costing's residency sampler: the cache shares
# come from the sampler once it has counted the table (and from
# effective_cache_size before, or with qdtt.use_residency off), a table the
# sampler finds in memory is fetched without prefetching, and a parallel SSD
# Sort reports each worker's share.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $node = SSDKitTest::node('ssd_sort_costs',
	preload => [ 'qdtt_costing', 'ssd_sort' ],
	conf => "work_mem = '64kB'\nqdtt.residency_interval = 0\n"
	  . "max_parallel_workers_per_gather = 2\nmax_worker_processes = 8\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION qdtt_costing;
	CREATE EXTENSION ssd_sort;
});
SSDKitTest::wide_sort_table($node);
my $forced = 'SET enable_sort = off; SET max_parallel_workers_per_gather = 0;';
my $query = 'SELECT id, k FROM wide ORDER BY k, id';

# Not counted yet: effective_cache_size, and the fetch prefetches.
my $plan = $node->safe_psql('postgres', "$forced EXPLAIN (VERBOSE, COSTS OFF) $query");
like($plan, qr/Cache Estimate Source: effective_cache_size/,
	'before the sampler counts the table, effective_cache_size');
like($plan, qr/Prefetch Depth: 32/, 'and the fetch prefetches');

# Counted (the table was just written, so it is in memory): the sampler's
# shares, and no prefetching.
$node->safe_psql('postgres', 'SELECT qdtt_sample_residency()');
$plan = $node->safe_psql('postgres', "$forced EXPLAIN (VERBOSE, COSTS OFF) $query");
like($plan,
	qr/Cache Estimate Source: residency sampler \(shared_buffers \d+%, OS page cache \d+%\)/,
	'once counted, the residency sampler');
like($plan, qr/Prefetch: off, relation in memory/,
	'a table in memory is fetched without prefetching');
like($node->safe_psql('postgres', "$forced EXPLAIN (ANALYZE, COSTS OFF) $query"),
	qr/Prefetches Issued: 0/, 'nothing is prefetched');

# qdtt.use_residency = off: back to effective_cache_size and prefetching.
$plan = $node->safe_psql('postgres',
	"$forced SET qdtt.use_residency = off; EXPLAIN (VERBOSE, COSTS OFF) $query");
like($plan, qr/Cache Estimate Source: effective_cache_size/,
	'qdtt.use_residency = off: effective_cache_size');
like($plan, qr/Prefetch Depth: 32/, 'qdtt.use_residency = off: prefetching');

# Parallel SSD Sort: per-worker counters, and every row sorted once.
my $parallel = 'SET enable_sort = off; SET parallel_setup_cost = 0; '
  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;';
my $analyzed = $node->safe_psql('postgres',
	"$parallel EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) $query");
like($analyzed, qr/"Custom Plan Provider": "SSD Sort"/, 'parallel plan is SSD Sort');
like($analyzed, qr/"Parallel Aware": true/, 'and parallel aware');
my $total = 0;
$total += $1 while $analyzed =~ /"Pairs Sorted": (\d+)/g;
is($total, 20000, 'leader and workers sorted every pair once');
like($node->safe_psql('postgres', "$parallel EXPLAIN (ANALYZE, COSTS OFF) $query"),
	qr/Worker \d:  Pairs Sorted: \d+ .*Rows Fetched: \d+/,
	'text EXPLAIN ANALYZE shows each worker');
is( $node->safe_psql('postgres',
		"$parallel SELECT md5(string_agg(id || ':' || k, ',')) FROM ($query) s"),
	$node->safe_psql('postgres',
		"SET ssd_sort.enable = off; SELECT md5(string_agg(id || ':' || k, ',')) FROM ($query) s"),
	'parallel SSD Sort returns what the built-in Sort returns');

# Leader not participating: the workers' counters still show.
like($node->safe_psql('postgres',
		"$parallel SET parallel_leader_participation = off; EXPLAIN (ANALYZE, COSTS OFF) $query"),
	qr/Worker \d:  Pairs Sorted: \d+/,
	'without the leader, the workers are shown');

$node->stop;
done_testing();
