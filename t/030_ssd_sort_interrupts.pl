# SSD Sort interrupted mid-query: an error raised while fetching, a backend
# terminated with a cursor open in the fetch phase, and a server crash in
# the same place.  Each time the sort's temp files go with the query, the
# server keeps serving, and the next SSD Sort returns what the built-in
# Sort returns.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $node = SSDKitTest::node('ssd_sort_interrupts',
	conf => "work_mem = '64kB'\nenable_sort = off\nrestart_after_crash = on\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION ssd_sort;
});
SSDKitTest::wide_sort_table($node);

my $query = 'SELECT id, k FROM wide ORDER BY k, id';
my $expected = $node->safe_psql('postgres',
	"SET ssd_sort.enable = off; SET enable_sort = on; SELECT md5(string_agg(id || ':' || k, ',')) FROM ($query) s");

# The plan (enable_sort is off so the node under test runs whatever the
# cost model thinks of this small table) and the answer it gives.
sub ssd_sort_result
{
	my ($label) = @_;
	like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $query"),
		qr/Custom Scan \(SSD Sort\)/, "$label: the plan is SSD Sort");
	is( $node->safe_psql('postgres',
			"SELECT md5(string_agg(id || ':' || k, ',')) FROM ($query) s"),
		$expected, "$label: SSD Sort returns what the built-in Sort returns");
	return;
}

sub temp_files
{
	return $node->safe_psql('postgres',
		'SELECT count(*) FROM pg_ls_tmpdir()');
}

ssd_sort_result('before');
is(temp_files(), '0', 'no temp files at rest');

# An error raised while rows are being fetched (the target list divides by
# zero at one row): the query fails with that error, the session goes on.
my $failing = 'SELECT id, 1 / (k - 12345) FROM wide ORDER BY k, id';
like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $failing"),
	qr/Custom Scan \(SSD Sort\)/, 'the failing query runs SSD Sort');
my ($ret, $out, $err) = $node->psql('postgres', $failing);
isnt($ret, 0, 'an error during the fetch fails the query');
like($err, qr/division by zero/, 'with the error the fetch raised');
is(temp_files(), '0', 'the failed sort left no temp files');

# A cursor stopped in the fetch phase holds its sorted pairs on disk.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_safe('BEGIN');
$bg->query_safe("DECLARE c NO SCROLL CURSOR FOR $query");
is( $bg->query_safe('FETCH 3 FROM c'),
	$node->safe_psql('postgres',
		"SET ssd_sort.enable = off; SET enable_sort = on; $query LIMIT 3"),
	'cursor: first rows in key order');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
cmp_ok(temp_files(), '>', 0, 'cursor in the fetch phase: pairs spilled to temp files');

# Terminated there: the backend's exit removes them.
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
  or die 'terminated backend did not exit';
$bg->quit;
is(temp_files(), '0', 'terminated backend: temp files removed');
ssd_sort_result('after a terminated backend');

# A crash with the cursor in the same place: the restart removes the temp
# files, and the table is intact.
$bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_safe('BEGIN');
$bg->query_safe("DECLARE c NO SCROLL CURSOR FOR $query");
$bg->query_safe('FETCH 100 FROM c');
cmp_ok(temp_files(), '>', 0, 'second cursor holds temp files');
$node->stop('immediate');
$bg->quit;
$node->start;
is(temp_files(), '0', 'after the crash: no temp files');
ssd_sort_result('after a crash');
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM verify_heapam('wide')"),
	'0', 'after the crash: verify_heapam finds nothing');

$node->stop;
done_testing();
