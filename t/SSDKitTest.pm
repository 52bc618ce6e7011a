# t/SSDKitTest.pm: what every ssdkit TAP suite needs, on top of
# PostgreSQL::Test::Cluster.
#
#   my $node = SSDKitTest::node('primary', conf => "ssd_cache.size = '64MB'");
#   SSDKitTest::ledger_init($node);
#   my $acked = SSDKitTest::ledger_pgbench($node, clients => 4, seconds => 30,
#                                          crash_after => 3);
#   SSDKitTest::ledger_check($node, $acked);
#   SSDKitTest::amcheck_ok($node);
#   SSDKitTest::checksums_ok($node);
#
# The ledger proves that no committed transaction was lost: each pgbench
# client numbers its own transactions 1, 2, 3, ... in the table, and pgbench's
# per-transaction log (-l) lists what the server acknowledged.  After a crash
# every client's highest number must be at least the count pgbench logged for
# it (one more is allowed: a commit whose acknowledgement the crash ate).
package SSDKitTest;

use strict;
use warnings;

use File::Temp qw(tempdir);
use IPC::Run ();
use Time::HiRes qw(sleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXTENSIONS = qw(ssd_cache qdtt_costing ssd_sort flashscan);

# A node with data checksums and the ssdkit extensions preloaded, started.
# Options: preload => [list] (default: all four), conf => extra lines,
# cache => size (e.g. '64MB'): an ssd_cache file of that size in the node's
# directory, start => 0 to leave it stopped, init => { extra init arguments }.
sub node
{
	my ($name, %opt) = @_;
	my $preload = $opt{preload} // \@EXTENSIONS;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(extra => ['--data-checksums'], %{ $opt{init} // {} });
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '" . join(',', @$preload) . "'\n"
		  . "log_min_messages = info\n"
		  . (defined $opt{cache}
			? "ssd_cache.path = '" . cache_file($node) . "'\nssd_cache.size = '$opt{cache}'\n"
			: '')
		  . ($opt{conf} // ''));
	$node->start unless defined $opt{start} && !$opt{start};
	return $node;
}

# Where node() puts a node's ssd_cache file.
sub cache_file
{
	my ($node) = @_;
	return $node->basedir . '/ssd_cache.dat';
}

# Wait until the ssd_cache admission queue is empty (the worker caught up).
sub cache_drain
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		'SELECT admission_queue = 0 FROM ssd_cache_stats')
	  or die 'ssd_cache admission queue did not drain';
	return;
}

# A column of ssd_cache_stats.
sub cache_stat
{
	my ($node, $column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM ssd_cache_stats");
}

# kill -9 semantics: stop('immediate') sends SIGQUIT to the postmaster, which
# exits without a checkpoint, so the next start runs crash recovery.
sub crash_restart
{
	my ($node) = @_;
	$node->stop('immediate');
	$node->start;
	return;
}

# Run pgbench against the node; returns (exit status, stdout, stderr).
sub pgbench
{
	my ($node, @args) = @_;
	my ($out, $err);
	my $ok = IPC::Run::run(
		[
			'pgbench', '-h', $node->host, '-p', $node->port,
			@args, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return ($ok, $out, $err);
}

sub ledger_init
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE TABLE IF NOT EXISTS ssdkit_ledger (
			client int NOT NULL,
			n bigint NOT NULL,
			payload text,
			PRIMARY KEY (client, n));
	});
	return;
}

# Run the ledger workload with pgbench; returns { client => n } where n is
# the sequence number every client must have reached: its maximum before
# the run plus what pgbench logged as acknowledged in this run.
# Options: clients, seconds, payload (bytes per row), extra_sql (statements
# appended to each transaction), and crash_after: kill
# the server (immediate stop) that many seconds into the run, wait for
# pgbench to notice, and start the server again, which runs crash recovery.
sub ledger_pgbench
{
	my ($node, %opt) = @_;
	my $clients = $opt{clients} // 4;
	my $seconds = $opt{seconds} // 5;
	my $payload = $opt{payload} // 200;
	my $dir = tempdir(CLEANUP => 1);
	my $script = "$dir/ledger.sql";

	open my $fh, '>', $script or die "could not write $script: $!";
	my $extra = $opt{extra_sql} // '';
	my %acked = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres',
		'SELECT client, max(n) FROM ssdkit_ledger GROUP BY client');
	print $fh <<"SQL";
BEGIN;
INSERT INTO ssdkit_ledger (client, n, payload)
SELECT :client_id, coalesce(max(n), 0) + 1, repeat('x', $payload)
FROM ssdkit_ledger WHERE client = :client_id;
$extra
COMMIT;
SQL
	close $fh;

	my ($out, $err) = ('', '');
	my $run = IPC::Run::start(
		[
			'pgbench', '-h', $node->host, '-p', $node->port,
			'-n', '-c', $clients, '-j', 1, '-T', $seconds,
			'-f', $script, '-l', "--log-prefix=$dir/log", 'postgres'
		],
		'>', \$out, '2>', \$err);
	if (defined $opt{crash_after})
	{
		sleep($opt{crash_after});
		$node->stop('immediate');
		$run->finish;
		$node->start;
	}
	else
	{
		$run->finish or die "pgbench failed:\n$err";
	}

	for my $log (glob("$dir/log*"))
	{
		open my $lf, '<', $log or die "could not read $log: $!";
		while (<$lf>)
		{
			# client_id transaction_no time ...; a failed transaction has
			# a word instead of its time.
			my ($client, undef, $time) = split;
			$acked{$client}++ if $time =~ /^\d+$/;
		}
		close $lf;
	}
	return \%acked;
}

# Every acknowledged transaction is in the ledger, and nothing beyond one
# unacknowledged commit per client.  $acked comes from ledger_pgbench.
sub ledger_check
{
	my ($node, $acked, $label) = @_;
	$label //= 'ledger';
	my %have = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres',
		'SELECT client, max(n) FROM ssdkit_ledger GROUP BY client');
	my @lost;
	for my $client (sort keys %$acked)
	{
		my $max = $have{$client} // 0;
		push @lost, "client $client: acknowledged $acked->{$client}, ledger has $max"
		  if $max < $acked->{$client} || $max > $acked->{$client} + 1;
	}
	my $gaps = $node->safe_psql('postgres',
		'SELECT count(*) FROM (SELECT client FROM ssdkit_ledger GROUP BY client '
		  . 'HAVING count(*) <> max(n)) g');
	is(join("\n", @lost), '', "$label: every acknowledged commit present");
	is($gaps, '0', "$label: no gaps in any client's sequence");
	return;
}

# pg_amcheck over every database: heap and btree checks, with heapallindexed.
sub amcheck_ok
{
	my ($node, $label) = @_;
	$node->command_ok(
		[
			'pg_amcheck', '--install-missing', '--heapallindexed',
			'--all', '-h', $node->host, '-p', $node->port
		],
		($label // 'amcheck') . ': pg_amcheck finds no corruption');
	return;
}

# Offline checksum verification of every page; the node is restarted after.
sub checksums_ok
{
	my ($node, $label) = @_;
	$node->stop;
	$node->command_ok([ 'pg_checksums', '--check', '-D', $node->data_dir ],
		($label // 'checksums') . ': pg_checksums --check passes');
	$node->start;
	return;
}

1;
