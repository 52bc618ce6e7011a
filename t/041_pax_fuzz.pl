# pax against heap, row for row, on random table shapes and random DML.
#
# Each round builds one table shape twice, in heap and in pax: 1 to 1013
# columns (the widest pax takes; a wider one must be refused), of the
# built-in types below, with NULL patterns, values from 1 byte to 1 MB, and
# dropped and added columns.  Random single-row, multi-row and bulk inserts,
# updates, deletes, transactions and savepoints that commit or roll back,
# VACUUM, VACUUM FULL, CLUSTER and index builds then run on both, and after
# every step the two tables must hold the same rows: read whole, through a
# narrow projection with a qual (FlashScan), through the index, and with
# FlashScan off.  Some rounds crash the server (immediate stop) with a
# transaction in flight, and the tables must still agree, with clean
# indexes (amcheck).
#
# SSDKIT_FUZZ_SEED picks the run (the seed is printed; a failure names
# it), SSDKIT_FUZZ_ROUNDS its length.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $seed = $ENV{SSDKIT_FUZZ_SEED} // 20261125;
my $rounds = $ENV{SSDKIT_FUZZ_ROUNDS} // 8;
srand($seed);
note "pax fuzz: seed $seed, $rounds rounds";

my $node = SSDKitTest::node('pax_fuzz', preload => ['flashscan'],
	conf => "flashscan.group_blocks = 4\nmax_parallel_workers_per_gather = 0\n");
$node->safe_psql('postgres', 'CREATE EXTENSION flashscan; CREATE EXTENSION amcheck;');

sub pick { return $_[ int(rand(@_)) ]; }
sub rint { my ($lo, $hi) = @_; return $lo + int(rand($hi - $lo + 1)); }
sub word { return join('', map { pick('a' .. 'z', 'A' .. 'Z', '0' .. '9', ' ', 'é') } 1 .. $_[0]); }

# A text value from 1 byte to 1 MB (mostly short), as an SQL expression.
sub text_expr
{
	my $r = rand();
	return "'" . word(rint(1, 30)) . "'" if $r < 0.85;
	return "repeat('" . word(rint(1, 9)) . "', " . rint(50, 3000) . ")" if $r < 0.97;
	return "repeat(md5('" . rint(1, 1e6) . "'), " . rint(1000, 32768) . ")";	# up to 1 MB
}

# Built-in types and an SQL expression of a value of each.
my @types = (
	[ 'int2',          sub { rint(-32768, 32767) } ],
	[ 'int4',          sub { rint(-2**31, 2**31 - 1) } ],
	[ 'int8',          sub { rint(-2**40, 2**40) . '::int8' } ],
	[ 'float4',        sub { sprintf('%.3f::float4', rand(1e6) - 5e5) } ],
	[ 'float8',        sub { sprintf('%.12g::float8', (rand() - 0.5) * 1e12) } ],
	[ 'numeric',       sub { sprintf('%.6f', (rand() - 0.5) * 1e9) } ],
	[ 'numeric(12,2)', sub { sprintf('%.2f', (rand() - 0.5) * 1e8) } ],
	[ 'bool',          sub { pick('true', 'false') } ],
	[ '"char"',        sub { "'" . pick('a' .. 'z') . "'" } ],
	[ 'name',          sub { "'" . word(rint(1, 20)) . "'" } ],
	[ 'text',          \&text_expr ],
	[ 'varchar(40)',   sub { "'" . word(rint(0, 40)) . "'" } ],
	[ 'char(7)',       sub { "'" . word(rint(1, 7)) . "'" } ],
	[ 'bytea',         sub { rand() < 0.9 ? "decode(md5('" . rand() . "'), 'hex')"
							 : "decode(repeat('ab', " . rint(100, 300000) . "), 'hex')" } ],
	[ 'date',          sub { "date '2000-01-01' + " . rint(-5000, 20000) } ],
	[ 'time',          sub { "time '00:00' + interval '" . rint(0, 86399) . " s'" } ],
	[ 'timetz',        sub { "'" . sprintf('%02d:%02d:00+0%d', rint(0, 23), rint(0, 59), rint(0, 9)) . "'::timetz" } ],
	[ 'timestamp',     sub { "timestamp '2020-01-01' + interval '" . rint(0, 1e8) . " s'" } ],
	[ 'timestamptz',   sub { "timestamptz '2020-01-01 00:00+00' + interval '" . rint(0, 1e8) . " s'" } ],
	[ 'interval',      sub { "interval '" . rint(0, 1e6) . " min'" } ],
	[ 'uuid',          sub { "md5('" . rand() . "')::uuid" } ],
	[ 'json',          sub { "json_build_object('k', " . rint(0, 999) . ", 'v', '" . word(5) . "')" } ],
	[ 'jsonb',         sub { "jsonb_build_object('k', " . rint(0, 999) . ", 'a', ARRAY[1, " . rint(0, 9) . "])" } ],
	[ 'xml',           sub { "xmlparse(content '<a>" . rint(0, 999) . "</a>')" } ],
	[ 'int4[]',        sub { 'ARRAY[' . join(',', map { rint(-99, 99) } 1 .. rint(1, 6)) . ']::int4[]' } ],
	[ 'text[]',        sub { 'ARRAY[' . join(',', map { "'" . word(rint(1, 8)) . "'" } 1 .. rint(1, 4)) . ']::text[]' } ],
	[ 'float8[]',      sub { 'ARRAY[' . join(',', map { sprintf('%.3f', rand(100)) } 1 .. rint(1, 4)) . ']::float8[]' } ],
	[ 'inet',          sub { "'10." . rint(0, 255) . '.' . rint(0, 255) . '.' . rint(1, 254) . "'::inet" } ],
	[ 'cidr',          sub { "'10." . rint(0, 255) . ".0.0/16'::cidr" } ],
	[ 'macaddr',       sub { "'" . join(':', map { sprintf('%02x', rint(0, 255)) } 1 .. 6) . "'::macaddr" } ],
	[ 'point',         sub { sprintf("point(%.3f, %.3f)", rand(100), rand(100)) } ],
	[ 'box',           sub { sprintf("box(point(%.2f, %.2f), point(%.2f, %.2f))", rand(9), rand(9), rand(9), rand(9)) } ],
	[ 'circle',        sub { sprintf("circle(point(%.2f, %.2f), %.2f)", rand(9), rand(9), rand(9)) } ],
	[ 'money',         sub { sprintf('%.2f::money', rand(10000)) } ],
	[ 'bit(8)',        sub { "B'" . join('', map { rint(0, 1) } 1 .. 8) . "'" } ],
	[ 'varbit',        sub { "B'" . join('', map { rint(0, 1) } 1 .. rint(1, 40)) . "'" } ],
	[ 'tsvector',      sub { "to_tsvector('simple', '" . word(rint(1, 30)) . "')" } ],
	[ 'int4range',     sub { my $a = rint(0, 99); "int4range($a, " . ($a + rint(1, 50)) . ")" } ],
	[ 'oid',           sub { rint(0, 2**31) . '::oid' } ],
	[ 'pg_lsn',        sub { "'" . sprintf('%X/%X', rint(0, 99), rint(0, 2**31)) . "'::pg_lsn" } ],
);

my $tables = 0;

# One table shape in heap (h) and pax (p): [ [name, typeindex, nullrate], ... ]
sub new_shape
{
	my ($ncols) = @_;
	my @cols;

	# heap keeps a row's untoastable part (and an 18-byte pointer per
	# toasted value) within one page: wide shapes are mostly NULL, or heap
	# would refuse rows that pax stores
	push @cols, [ "c$_", int(rand(@types)),
		$ncols > 150 ? pick(0, 0.9, 0.95, 0.97, 1, 1, 1, 1, 1, 1) : pick(0, 0, 0.1, 0.5, 1) ]
	  for 1 .. $ncols;
	return \@cols;
}

sub value_expr
{
	my ($col) = @_;
	return 'NULL' if rand() < $col->[2];
	return $types[ $col->[1] ][1]->();
}

# The rows of a table, as one value: whole rows, a narrow projection with a
# qual (FlashScan's path on pax), and the same through the id index.
sub digest
{
	my ($t, $cols, $flashscan) = @_;
	my @live = grep { defined } @$cols;
	my $a = @live ? $live[0][0] : 'id';
	my $b = @live > 1 ? $live[-1][0] : 'id';
	my $set = $flashscan ? '' : 'SET flashscan.enable = off;';
	return $node->safe_psql('postgres', qq{
		$set
		SELECT count(*), md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) FROM $t r;
		SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), ''))
		FROM (SELECT ($a, $b)::text AS x FROM $t WHERE id % 3 = 1) s;
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT md5(coalesce(string_agg(r::text, E'\\n' ORDER BY id), '')) FROM $t r WHERE id % 5 = 2;
	});
}

sub same
{
	my ($n, $cols, $what) = @_;
	my $h = digest("h$n", $cols, 1);
	my $p = digest("p$n", $cols, 1);
	my $pn = digest("p$n", $cols, 0);
	if ($h ne $p || $h ne $pn)
	{
		diag "seed $seed: table $n differs after $what";
		diag "heap:\n$h\npax:\n$p\npax without FlashScan:\n$pn";
		diag "rows only in heap / only in pax:\n" . $node->safe_psql('postgres', qq{
			(SELECT 'heap', left(r::text, 400) FROM h$n r EXCEPT ALL SELECT 'heap', left(r::text, 400) FROM p$n r LIMIT 3)
			UNION ALL
			(SELECT 'pax', left(r::text, 400) FROM p$n r EXCEPT ALL SELECT 'pax', left(r::text, 400) FROM h$n r LIMIT 3)});
		return 0;
	}
	return 1;
}

# Run one statement (with {T} for the table, {TIDX} for its index) on both tables in one transaction
# context; both must succeed or both fail.
sub both
{
	my ($n, $sql, $session) = @_;
	my ($hsql, $psql) = ($sql =~ s/\{TIDX\}/h${n}_idx/gr =~ s/\{T\}/h$n/gr,
		$sql =~ s/\{TIDX\}/p${n}_idx/gr =~ s/\{T\}/p$n/gr);
	if (open(my $log, '>>', "$PostgreSQL::Test::Utils::tmp_check/fuzz_statements.sql"))
	{
		print $log "$psql;\n";
		close $log;
	}
	my ($hrc, $hout, $herr) = $node->psql('postgres', $hsql);
	my ($prc, $pout, $perr) = $node->psql('postgres', $psql);
	if (($hrc != 0) != ($prc != 0))
	{
		diag "seed $seed: table $n: heap rc $hrc ($herr), pax rc $prc ($perr) for: " . substr($sql, 0, 300);
		return 0;
	}
	return 1;
}

sub insert_rows
{
	my ($cols, $next_id, $nrows) = @_;
	my @rows;
	for (1 .. $nrows)
	{
		my @v = map { defined $_ ? value_expr($_) : () } @$cols;
		push @rows, '(' . join(', ', $$next_id++, @v) . ')';
	}
	my @names = map { defined $_ ? $_->[0] : () } @$cols;
	return 'INSERT INTO {T} (' . join(', ', 'id', @names) . ') VALUES ' . join(', ', @rows);
}

# wal_level = minimal (this node's): a relfilenode made in a transaction is
# not WAL-logged but made durable at commit; larger than wal_skip_threshold
# it is fsynced.  Its rows must survive a crash: a table created and loaded
# in one transaction, and one rewritten by CLUSTER and VACUUM FULL.
$node->safe_psql('postgres', q{
	BEGIN;
	CREATE TABLE minimal_ctas (id int, t text) USING pax;
	INSERT INTO minimal_ctas SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 2000) g;
	COMMIT;
	CREATE TABLE minimal_cluster (id int, t text) USING pax;
	INSERT INTO minimal_cluster SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 2000) g;
	CREATE INDEX ON minimal_cluster (id);
	DELETE FROM minimal_cluster WHERE id % 3 = 0;
	CLUSTER minimal_cluster USING minimal_cluster_id_idx;
	CREATE TABLE minimal_full AS SELECT * FROM minimal_cluster;
	ALTER TABLE minimal_full SET ACCESS METHOD pax;
	VACUUM FULL minimal_full;
});
my $minimal_before = $node->safe_psql('postgres', q{
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_ctas;
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_cluster;
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_full});
SSDKitTest::crash_restart($node);
is($node->safe_psql('postgres', q{
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_ctas;
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_cluster;
	SELECT count(*), sum(id), md5(string_agg(t, '' ORDER BY id)) FROM minimal_full}),
	$minimal_before, 'wal_level minimal: new relfilenodes keep their rows through a crash');

# A too-wide table is refused at CREATE TABLE.
{
	my $n = rint(1014, 1600);
	my ($rc, $out, $err) = $node->psql('postgres',
		"CREATE TABLE too_wide (" . join(', ', map { "c$_ int" } 1 .. $n) . ") USING pax");
	like($err, qr/tables using access method pax can have at most 1013 columns/,
		"a $n-column pax table is refused with a clear error");
}

my $ok = 1;
for my $round (1 .. $rounds)
{
	my $n = ++$tables;
	my $r = rand();
	my $ncols = $r < 0.6 ? rint(1, 12) : $r < 0.85 ? rint(13, 120) : rint(121, 1012);
	my $cols = new_shape($ncols);
	my $next_id = 1;
	my $def = join(', ', 'id int', map { "$_->[0] $types[$_->[1]][0]" } @$cols);
	$node->safe_psql('postgres', "CREATE TABLE h$n ($def) USING heap; CREATE TABLE p$n ($def) USING pax;");
	if (open(my $log, '>>', "$PostgreSQL::Test::Utils::tmp_check/fuzz_statements.sql"))
	{
		print $log "CREATE TABLE p$n ($def) USING pax;\n";
		close $log;
	}
	note "round $round: $ncols columns";
	my $maxrows = $ncols > 200 ? 3 : $ncols > 40 ? 20 : 80;
	my $steps = $ncols > 200 ? 8 : 25;
	my $indexed = 0;

	for my $step (1 .. $steps)
	{
		my @live = grep { defined } @$cols;
		my $op = rand();
		my $sql;
		if ($op < 0.35)
		{
			$sql = insert_rows($cols, \$next_id, rint(1, $maxrows));
		}
		elsif ($op < 0.45)
		{
			# a bulk load: rows generated server-side, the same on both
			my $count = $ncols > 200 ? 20 : 500;
			my @exprs = map { defined $_ ? ($_->[2] >= 1 ? 'NULL' : "CASE WHEN g % 4 = 0 THEN NULL ELSE "
				  . $types[ $_->[1] ][1]->() . " END") : () } @$cols;
			my @names = map { defined $_ ? $_->[0] : () } @$cols;
			$sql = 'INSERT INTO {T} (' . join(', ', 'id', @names) . ') SELECT ' . $next_id
			  . ' + g' . join('', map { ", $_" } @exprs) . " FROM generate_series(0, $count - 1) g";
			$next_id += $count;
		}
		elsif ($op < 0.6 && @live)
		{
			my $c = pick(@live);
			$sql = "UPDATE {T} SET $c->[0] = " . value_expr($c) . " WHERE id % " . rint(2, 7) . ' = ' . rint(0, 1);
		}
		elsif ($op < 0.7)
		{
			$sql = 'DELETE FROM {T} WHERE id % ' . rint(3, 11) . ' = ' . rint(0, 2);
		}
		elsif ($op < 0.77)
		{
			# a transaction with a savepoint, committed or rolled back
			my $end = pick('COMMIT', 'ROLLBACK');
			$sql = 'BEGIN; ' . insert_rows($cols, \$next_id, rint(1, $maxrows))
			  . '; SAVEPOINT s; DELETE FROM {T} WHERE id % 2 = 0; ROLLBACK TO s; '
			  . 'UPDATE {T} SET id = id WHERE id % 3 = 0; ' . $end;
		}
		elsif ($op < 0.82 && @live > 1)
		{
			my @idx = grep { defined $cols->[$_] } 0 .. $#$cols;
			my $i = pick(@idx);
			$sql = "ALTER TABLE {T} DROP COLUMN $cols->[$i][0]";
			$cols->[$i] = undef;
		}
		elsif ($op < 0.86 && @$cols < 1012)
		{
			my $c = [ 'a' . (scalar(@$cols) + 1), int(rand(@types)), pick(0, 0.5) ];
			my $default = rand() < 0.5 ? ' DEFAULT ' . $types[ $c->[1] ][1]->() : '';
			# a volatile-free default the two tables compute alike
			$default = '' if $default =~ /random|now\(/;
			$sql = "ALTER TABLE {T} ADD COLUMN $c->[0] $types[$c->[1]][0]$default";
			push @$cols, $c;
		}
		elsif ($op < 0.9)
		{
			$sql = pick('VACUUM {T}', 'VACUUM (FREEZE) {T}', 'VACUUM FULL {T}', 'ANALYZE {T}');
		}
		elsif (!$indexed)
		{
			$sql = pick('CREATE INDEX {TIDX} ON {T} (id)', 'CREATE INDEX CONCURRENTLY {TIDX} ON {T} (id)');
			$indexed = 1;
		}
		else
		{
			$sql = pick('CLUSTER {T} USING {TIDX}', 'REINDEX TABLE {T}');
		}
		note "step $step: " . substr($sql =~ s/\s+/ /gr, 0, 70);
		$ok &&= both($n, $sql);
		$ok &&= same($n, $cols, "step $step: " . substr($sql, 0, 120));
		last unless $ok;
	}
	last unless $ok;

	# a crash with a transaction in flight on both tables
	if ($round % 3 == 0)
	{
		my $bg = $node->background_psql('postgres', on_error_stop => 0);
		if (open(my $log, '>>', "$PostgreSQL::Test::Utils::tmp_check/fuzz_statements.sql"))
		{
			print $log "-- crash round: in-flight transaction, then immediate stop\n";
			close $log;
		}
		$bg->query_safe('BEGIN');
		$bg->query_safe(insert_rows($cols, \$next_id, rint(1, $maxrows)) =~ s/\{T\}/h$n/r);
		$bg->query_safe(insert_rows($cols, \$next_id, rint(1, $maxrows)) =~ s/\{T\}/p$n/r);
		$bg->query_safe("DELETE FROM h$n WHERE id % 2 = 1");
		$bg->query_safe("DELETE FROM p$n WHERE id % 2 = 1");
		# the pax rows reach groups (a read by the same transaction writes them)
		$bg->query_safe("SELECT count(*) FROM p$n");
		SSDKitTest::crash_restart($node);
		$bg->quit;
		$ok &&= same($n, $cols, "a crash with a transaction in flight");
		last unless $ok;
	}
}
ok($ok, "pax and heap agree row for row (seed $seed)");

# Every index on the pax tables holds exactly their rows.
SSDKitTest::amcheck_ok($node, 'pax fuzz');
my $bad = $node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
	JOIN pg_am a ON a.oid = c.relam
	WHERE a.amname = 'pax' AND NOT i.indisvalid});
is($bad, '0', 'no invalid index on a pax table');
$node->safe_psql('postgres', q{
	SELECT bt_index_check(i.indexrelid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
	JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'pax'});
pass('bt_index_check with heapallindexed passes on every pax index');

$node->stop;
done_testing();
