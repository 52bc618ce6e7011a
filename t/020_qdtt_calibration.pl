# qdtt_calibrate() on real devices: the machine's disk (the SSD tier) must
# show a queue-depth gain; the HDD tier (a loop device throttled to 200 IOPS
# at any queue depth, set up by scripts/check.sh) must stop early and show
# none.  Also: cancellation keeps the old model, the file never stays
# behind, too little space is a clear error.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use SSDKitTest;

my $node = SSDKitTest::node('qdtt', preload => ['qdtt_costing'],
	conf => "max_parallel_workers_per_gather = 4\n");
$node->safe_psql('postgres', 'CREATE EXTENSION qdtt_costing');

# Calibration files live in the tablespace's pgsql_tmp with the temp prefix.
sub leftover_files
{
	my ($dir) = @_;
	return 0 unless -d $dir;
	opendir(my $dh, $dir) or die "opendir $dir: $!";
	my @f = grep { /qdtt_calibration/ } readdir($dh);
	closedir($dh);
	return scalar @f;
}
my $default_tmp = $node->data_dir . '/base/pgsql_tmp';

sub calibrate
{
	my ($spc, $mb, $secs, $early) = @_;
	return $node->safe_psql('postgres',
		"SELECT max_beneficial_queue_depth, points_measured, points_defaulted, "
		  . "coalesce(stopped_at_queue_depth, 0) FROM qdtt_calibrate('$spc', $mb, $secs, $early)");
}

# --- The machine's disk (SSD tier) -----------------------------------------
# Every point measured (a shared virtual disk is noisy; one unlucky QD-2
# point must not end the test's calibration early).
my ($beneficial, $measured, $defaulted, $stopped) =
  split /\|/, calibrate('pg_default', 128, 0.1, 'false');
cmp_ok($beneficial, '>', 1, "SSD tier: a queue-depth gain is found (max beneficial QD $beneficial)");
is("$measured|$defaulted|$stopped", '30|0|0', 'early_stop => false measures all 5 x 6 points');
is(leftover_files($default_tmp), 0, 'the calibration file is removed');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM qdtt_model WHERE tablespace = 'pg_default'"),
	'5', 'the model has the five bands of a 128 MB file (1, 16, 256, 4096, 16384 pages)');
is( $node->safe_psql('postgres',
		q{SELECT qdtt_cost(16384, 1) > qdtt_cost(16384, 32) AND qdtt_cost(1, 1) < qdtt_cost(16384, 1)}),
	't', 'random reads cost less at a deeper queue, and sequential reads least');

# The memory points: pages found in shared_buffers, pages read from the OS
# page cache, per-tuple work; timed on probe tables that are gone after.
is( $node->safe_psql('postgres', q{
		SELECT shared_buffers_random_us > 0 AND shared_buffers_seq_us > 0
		   AND os_cache_random_us > shared_buffers_random_us
		   AND os_cache_seq_us > 0 AND bitmap_page_us >= 0
		   AND seq_tuple_us >= 0 AND bitmap_tuple_us >= 0 AND index_tuple_us >= 0
		  FROM qdtt_memory_cost WHERE tablespace = 'pg_default'}),
	't', 'memory points stored: a page from the OS page cache costs more than one in shared_buffers');
is( $node->safe_psql('postgres',
		q{SELECT count(DISTINCT shared_buffers_random_us) FROM qdtt_model WHERE tablespace = 'pg_default'}),
	'1', 'qdtt_model shows the memory points');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_class WHERE relname ~ '^qdtt_(memory|tuple)_probe'}),
	'0', 'the probe tables are gone');

# With the early stop the grid is still complete: skipped points get defaults.
($beneficial, $measured, $defaulted, $stopped) =
  split /\|/, calibrate('pg_default', 64, 0.05, 'true');
# (The point that fails the stop test is measured, then replaced by a default,
# and so is the look-ahead point at the deepest queue depth that confirms it.)
is($measured + $defaulted, $stopped ? ($stopped < 32 ? 32 : 31) : 30,
	"early stop: $measured points measured, $defaulted defaulted");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM qdtt_calibration WHERE tablespace = 'pg_default'"),
	'30', 'a new calibration replaces the old model');

# --- Cancellation keeps the old model --------------------------------------
my $before = $node->safe_psql('postgres',
	"SELECT calibrated_at, (SELECT sum(cost_us) FROM qdtt_calibration) FROM qdtt_calibration_run");
my ($stdout, $stderr) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c',
	  "SELECT * FROM qdtt_calibrate('pg_default', 64, 30, false)" ],
	'>', \$stdout, '2>', \$stderr);
my $pid = '';
for (1 .. 200)
{
	$pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE query LIKE 'qdtt_calibrate(''pg_default''): measuring%'");
	last if $pid ne '';
	sleep 0.1;
}
isnt($pid, '', 'pg_stat_activity shows the calibration\'s progress')
  or diag("psql: $stderr");
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$h->finish;
like($stderr, qr/canceling statement due to user request/, 'the calibration obeys cancellation');
is( $node->safe_psql('postgres',
		"SELECT calibrated_at, (SELECT sum(cost_us) FROM qdtt_calibration) FROM qdtt_calibration_run"),
	$before, 'a cancelled calibration leaves the old model in place');
is(leftover_files($default_tmp), 0, 'and removes its file');

# --- Models follow tablespace names, within a session too ------------------
# A session maps each model's name to an OID when it loads the models; a
# tablespace renamed or created later must change that map at once.
{
	my $tsdir = PostgreSQL::Test::Utils::tempdir();
	chmod 0700, $tsdir;
	$node->safe_psql('postgres', "CREATE TABLESPACE qts LOCATION '$tsdir'");
	$node->safe_psql('postgres', q{
		INSERT INTO qdtt_calibration (tablespace, band_pages, queue_depth, cost_us)
		SELECT 'qts', b, q, CASE WHEN b = 1 THEN 10 ELSE 50 END
		FROM unnest(ARRAY[1, 16, 1024]) b, unnest(ARRAY[1, 2, 4]) q});
	my ($ret, $out, $err) = $node->psql('postgres', q{
		SELECT qdtt_cost(16, 1, 'qts');
		ALTER TABLESPACE qts RENAME TO qts_renamed;
		SELECT qdtt_cost(16, 1, 'qts_renamed') IS NULL AS renamed_has_model;});
	like($err, qr/tablespace "qts_renamed" has no QDTT model|no QDTT model/,
		'after a rename in the same session the model no longer applies to the renamed tablespace');
	unlike($out, qr/^f$/m, 'and is not still served under the new name');
	($ret, $out, $err) = $node->psql('postgres', q{
		SELECT qdtt_cost(16, 1, 'qts_renamed');
		ALTER TABLESPACE qts_renamed RENAME TO qts;
		SELECT qdtt_cost(16, 1, 'qts');}, on_error_stop => 0);
	is((split /\n/, $out)[-1], '50', 'renamed back in the same session: the model applies again');
	$node->safe_psql('postgres', "DELETE FROM qdtt_calibration WHERE tablespace = 'qts'; DROP TABLESPACE qts");
}

# --- The HDD tier ----------------------------------------------------------
SKIP:
{
	my $dir = $ENV{SSDKIT_HDD_DIR} // '';
	my $cg = $ENV{SSDKIT_HDD_CGROUP} // '';
	skip 'HDD tier not available (needs root for a loop device and a cgroup-v1 blkio throttle; '
	  . 'scripts/check.sh sets it up)', 8
	  unless $dir ne '' && -d $dir && $cg ne '' && -w "$cg/cgroup.procs";

	# Backends forked from now on inherit the throttle for the loop device.
	my $pm = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	open(my $fh, '>', "$cg/cgroup.procs") or die "cgroup: $!";
	print $fh "$pm\n";
	close($fh);

	mkdir "$dir/ts";
	$node->safe_psql('postgres', "CREATE TABLESPACE hdd LOCATION '$dir/ts'");

	my $r = calibrate('hdd', 64, 0.15, 'true');
	($beneficial, $measured, $defaulted, $stopped) = split /\|/, $r;
	is($stopped, 2, 'HDD tier: the calibration stops early at queue depth 2');
	is($beneficial, 1, 'and finds no beneficial queue depth beyond 1');
	is( $node->safe_psql('postgres',
			"SELECT bool_and(qd1_over_max_qd < 1.25) FROM qdtt_model WHERE tablespace = 'hdd' AND band_pages > 1"),
		't', 'random reads gain nothing from queue depth in the model');
	is( $node->safe_psql('postgres',
			"SELECT bool_and(measured) FILTER (WHERE queue_depth > 2) IS FALSE FROM qdtt_calibration WHERE tablespace = 'hdd'"),
		't', 'points past the stop are defaults, not measurements');
	# Sequential streams past the stop: the loss per doubling measured at
	# the stopping depth repeats (a parallel seq scan must not look cheap
	# because its depth was not measured).
	is( $node->safe_psql('postgres',
			"SELECT qdtt_cost(1, 4, 'hdd') >= 0.999 * qdtt_cost(1, 2, 'hdd') * "
			  . "greatest(qdtt_cost(1, 2, 'hdd') / qdtt_cost(1, 1, 'hdd'), 1.0)"),
		't', 'band 1 past the stop continues the measured per-doubling loss');

	my ($b2, $m2, $d2, $s2) = split /\|/, calibrate('hdd', 64, 0.15, 'false');
	cmp_ok($m2, '>=', 3 * $measured,
		"without the early stop it measures $m2 points instead of $measured");
	is(leftover_files("$dir/ts/" . $node->safe_psql('postgres',
		"SELECT 'PG_' || current_setting('server_version_num')::int / 10000 || '_' || "
		  . "(SELECT catalog_version_no FROM pg_control_system())") . '/pgsql_tmp'), 0,
		'no file is left in the HDD tablespace');

	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM qdtt_calibrate('hdd', 4096)");
	like($err, qr/not enough free space in tablespace "hdd"/, 'too little space is a clear error');
}

$node->stop;
done_testing();
