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
use Time::HiRes qw(sleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXTENSIONS = qw(ssd_cache qdtt_costing ssd_sort flashscan);

# A node with data checksums and the ssdkit extensions preloaded, started.
# Options: preload => [list] (default: all four), conf => extra lines,
# cache => size (e.g. '64MB'): an ssd_cache file of that size in the node's
# directory, start => 0 to leave it stopped, init => { extra init arguments },
# warmup => 1 to keep ssd_cache's buffer-pool warm-up on (the suites of the
# cache itself expect shared_buffers to be cold after a restart, so that
# reads reach the cache; they run with ssd_cache.warmup = off).
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
		  . ((grep { $_ eq 'ssd_cache' } @$preload) && !$opt{warmup}
			? "ssd_cache.warmup = off\n" : '')
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

# The ledger workload's consistency (ledger_pgbench with the pgbench_accounts
# update of t/019 and t/060): every committed transaction inserted one ledger
# row and added 1 to one account.
sub balanced
{
	my ($node, $label) = @_;
	Test::More::is(
		$node->safe_psql('postgres',
			'SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT count(*) FROM ssdkit_ledger)'),
		't', "$label: every committed transaction is whole");
	return;
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

# --- Helpers of the ssd_cache safety suites (t/016, t/017). ---

# Output of a query, or "ERROR: ..." (a failed query fails one check
# instead of ending the file).
sub query
{
	my ($node, $sql, $db) = @_;
	my ($rc, $out, $err) = $node->psql($db // 'postgres', $sql);
	return $rc == 0 ? $out : "ERROR: $err";
}

sub poll_until
{
	my ($node, $sql, $secs) = @_;
	my $deadline = time + $secs;
	while (time < $deadline)
	{
		return 1 if query($node, $sql) eq 't';
		sleep 0.1;
	}
	return 0;
}

# After a start the cache may be verifying for a moment (until WAL replay
# has covered its newest page).
sub wait_write_through
{
	my ($node) = @_;
	return poll_until($node, "SELECT mode = 'write-through' FROM ssd_cache_stats", 60);
}

sub verify_ok
{
	my ($node, $label) = @_;
	is(query($node, 'SELECT mismatched FROM ssd_cache_verify()'), '0',
		"$label: every page cached on the " . $node->name . ' equals its disk copy');
	return;
}

sub nblocks
{
	my ($node, $rel, $db) = @_;
	return $node->safe_psql($db // 'postgres', "SELECT pg_relation_size('$rel') / 8192");
}

sub cached_blocks
{
	my ($node, $rel, $db) = @_;
	return query($node,
		"SELECT coalesce(sum(cached_blocks), 0) FROM ssd_cache_relations WHERE relation = '$rel'::regclass",
		$db);
}

# Restart (empties shared_buffers), then read every block of each relation
# ('name' or [db, 'name']) through shared_buffers in chunks the admission
# queue (512 pages) can hold, waiting for the worker after each chunk.
sub warm
{
	my ($node, @rels) = @_;
	$node->restart;
	wait_write_through($node);
	for my $r (@rels)
	{
		my ($db, $rel) = ref $r ? @$r : ('postgres', $r);
		my $n = nblocks($node, $rel, $db);
		for (my $first = 0; $first < $n; $first += 400)
		{
			my $last = $first + 399 < $n - 1 ? $first + 399 : $n - 1;
			$node->safe_psql($db, "SELECT pg_prewarm('$rel', 'buffer', 'main', $first, $last)");
			cache_drain($node);
		}
		my $c = cached_blocks($node, $rel, $db);
		cmp_ok($c, '>=', 0.9 * $n, $node->name . ": $db.$rel is cached ($c of $n blocks)");
	}
	return;
}

# (count, sum(id), sum(hashtext(pad))) of the rows (g, pad) a query makes.
sub expected_rows
{
	my ($node, $rows) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*), sum(g), sum(hashtext(p)) FROM ($rows) s(g, p)");
}

# (count, sum(id), sum(hashtext(pad))) for a table made as (id 1..$n, pad repeat($letter, 300)) and
# then changed by @changes, in order: [condition on g (the id), new pad] for
# an UPDATE, [condition, undef] for a DELETE.
sub expected
{
	my ($node, $n, $letter, @changes) = @_;
	my $pad = "repeat('$letter', 300)";
	my @updates = reverse grep { defined $_->[1] } @changes;
	my @deletes = map { "($_->[0])" } grep { !defined $_->[1] } @changes;
	my $p = @updates
	  ? 'CASE ' . join(' ', map { "WHEN $_->[0] THEN $_->[1]" } @updates) . " ELSE $pad END"
	  : $pad;
	my $where = @deletes ? 'WHERE NOT (' . join(' OR ', @deletes) . ')' : '';
	return expected_rows($node, "SELECT g, $p FROM generate_series(1, $n) g $where");
}


# The SSD Sort tests' table: "wide" in database postgres, 20000 rows of
# (id, k, 900 bytes stored plain), k a permutation of the ids' order, so a
# Sort of its rows does not fit a small work_mem.
sub wide_sort_table
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE TABLE wide (id int, k int, pad text);
		ALTER TABLE wide ALTER pad SET STORAGE PLAIN;
		INSERT INTO wide SELECT i, (i * 7919) % 20000, repeat('x', 900)
		  FROM generate_series(1, 20000) i;
		VACUUM ANALYZE wide;
	});
	return;
}

1;
