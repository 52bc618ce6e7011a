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

# The caches' size: measured while effective_cache_size is at its default
# (shared_buffers plus what the OS page cache can hold: no more than the
# machine's memory), effective_cache_size once someone sets it.
$plan = $node->safe_psql('postgres', "$forced EXPLAIN (VERBOSE, COSTS OFF) $query");
like($plan, qr/Cache Size: \d+ MB \((MemAvailable|memory cgroup limit)\)/,
	'effective_cache_size at its default: the cache size is measured');
my ($measured_mb) = $plan =~ /Cache Size: (\d+) MB/;
my ($mem_total_kb) = slurp_file('/proc/meminfo') =~ /^MemTotal:\s+(\d+) kB/m;
my $sb_mb = $node->safe_psql('postgres',
	"SELECT setting::bigint * 8192 / 1048576 FROM pg_settings WHERE name = 'shared_buffers'");
cmp_ok($measured_mb, '>=', $sb_mb, 'at least shared_buffers');
cmp_ok($measured_mb, '<=', $sb_mb + $mem_total_kb / 1024,
	'at most shared_buffers and the machine\'s memory');
like($node->safe_psql('postgres',
		"$forced SET effective_cache_size = '1GB'; EXPLAIN (VERBOSE, COSTS OFF) $query"),
	qr/Cache Size: 1024 MB \(effective_cache_size\)/,
	'effective_cache_size set: taken at its word');

# A cache too small to hold the built-in Sort's temp files beside the table:
# its temp pages are device accesses, and SSD Sort's surcharge for them
# (temp pages priced as cached) shrinks.
sub ssd_sort_cost
{
	my ($settings) = @_;
	my $json = $node->safe_psql('postgres',
		"$forced SET qdtt.use_residency = off; $settings "
		  . "EXPLAIN (FORMAT JSON) SELECT * FROM wide ORDER BY k, id");
	like($json, qr/"Custom Plan Provider": "SSD Sort"/, "SSD Sort: $settings");
	return ($json =~ /"Total Cost": ([\d.]+)/)[0];
}
cmp_ok(ssd_sort_cost("SET effective_cache_size = '129MB';"), '<',
	ssd_sort_cost("SET effective_cache_size = '64GB';"),
	'SSD Sort is cheaper where the temp files would not stay in memory');

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

# The pair scan costs what the relation's own seq scan costs: with a model
# and the table counted in memory, qdtt_costing prices the scan under the
# built-in Sort at memory prices, and SSD Sort's pair scan pays the same.
$node->safe_psql('postgres', q{
	INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
	SELECT 'pg_default', b, 1, CASE WHEN b = 1 THEN 10 ELSE 400 END
	  FROM unnest(ARRAY[1, 16, 1000000]) b;
	INSERT INTO qdtt_memory_cost VALUES ('pg_default', 0.4, 0.4, 2, 2, 0.05, 0.05, 1.3, 0);
});
$node->safe_psql('postgres', 'SELECT qdtt_sample_residency()');
sub seqscan_cost
{
	my ($settings, $top) = @_;
	my $json = $node->safe_psql('postgres', "$settings EXPLAIN (FORMAT JSON) $query");
	like($json, $top, "plan: $settings");
	return ($json =~ /"Node Type": "Seq Scan",.*?"Total Cost": ([\d.]+)/s)[0];
}
my $serial = 'SET max_parallel_workers_per_gather = 0;';
my $sort_input = seqscan_cost("$serial SET ssd_sort.enable = off;", qr/"Node Type": "Sort"/);
is(seqscan_cost("$serial SET enable_sort = off;", qr/"Custom Plan Provider": "SSD Sort"/),
	$sort_input, 'the pair scan costs what the Seq Scan under the built-in Sort costs');
isnt(seqscan_cost("$serial SET qdtt.enable = off; SET ssd_sort.enable = off;", qr/"Node Type": "Sort"/),
	$sort_input, 'which is the model\'s price, not stock\'s');
my $gather = 'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; '
  . 'SET min_parallel_table_scan_size = 0;';
is( seqscan_cost("$gather SET enable_sort = off;",
		qr/"Gather Merge".*"Custom Plan Provider": "SSD Sort"/s),
	seqscan_cost("$gather SET ssd_sort.enable = off;", qr/"Gather Merge".*"Node Type": "Sort"/s),
	'in parallel too, at the same degree');
$node->safe_psql('postgres', 'DELETE FROM qdtt_calibration; DELETE FROM qdtt_memory_cost');

# Prefetching leaves long ascending runs to the kernel's readahead: a key
# in the table's physical order prefetches only the run's first pages, a
# random key most pages.  shared_buffers small enough that the pair scan
# reads through its ring, so the fetch finds the pages outside the pool.
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\n");
$node->safe_psql('postgres', q{
	CREATE TABLE wide_ordered AS SELECT * FROM wide ORDER BY k, id;
	VACUUM ANALYZE wide_ordered;
});
$node->restart;
sub prefetches
{
	my ($table) = @_;
	my $out = $node->safe_psql('postgres',
		"$forced SET qdtt.use_residency = off; "
		  . "EXPLAIN (ANALYZE, COSTS OFF) SELECT id, k FROM $table ORDER BY k, id");
	like($out, qr/Custom Scan \(SSD Sort\)/, "$table: SSD Sort");
	return ($out =~ /Prefetches Issued: (\d+)/)[0];
}
cmp_ok(prefetches('wide_ordered'), '<=', 8,
	'pages in ascending order are left to readahead');
cmp_ok(prefetches('wide'), '>', 1000, 'pages in random order are prefetched');

$node->stop;
done_testing();
