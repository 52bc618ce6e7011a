# pax as a logical replication source: with flashscan preloaded and
# wal_level = logical, every change of a pax table is decoded as the same
# change of a heap table would be (test_decoding, for every REPLICA
# IDENTITY), a publication replicates pax tables into heap tables on a
# subscriber through concurrent writers, aborts, savepoints, a publisher
# crash, row filters, column lists and partitions; a physical standby of
# the publisher replays the pax records; pg_walinspect names them; and
# without the preload a publication of pax tables is refused.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $pub = SSDKitTest::node('pax_pub',
	preload => ['flashscan'],
	init => { allows_streaming => 'logical' },
	conf => "max_prepared_transactions = 10\nlogical_decoding_work_mem = 64kB\n"
	  . "wal_consistency_checking = 'pax,generic'\n");
$pub->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE EXTENSION pg_walinspect;
});

# ---------------------------------------------------------------- test_decoding
# The same statements on a pax and a heap twin of each replica identity:
# the decoded changes must be the same, table name aside.
my %identity = (
	dflt => '',
	full => 'ALTER TABLE %s REPLICA IDENTITY FULL;',
	idx => 'CREATE UNIQUE INDEX %1$s_code ON %1$s (code); ALTER TABLE %1$s REPLICA IDENTITY USING INDEX %1$s_code;',
	nothing => 'ALTER TABLE %s REPLICA IDENTITY NOTHING;',
	nopk => '');
$pub->safe_psql('postgres',
	q{SELECT pg_create_logical_replication_slot('td', 'test_decoding')});
foreach my $ri (sort keys %identity)
{
	my %out;
	foreach my $am ('pax', 'heap')
	{
		my $t = "${am}_$ri";
		my $pk = $ri eq 'nopk' ? '' : 'PRIMARY KEY';
		my $ddl = sprintf($identity{$ri}, $t);
		$pub->safe_psql('postgres', qq{
			CREATE TABLE $t (id int $pk, code int NOT NULL, v text, n numeric) USING $am;
			$ddl
		});
		$pub->safe_psql('postgres',
			q{SELECT count(*) FROM pg_logical_slot_get_changes('td', NULL, NULL)});
		$pub->safe_psql('postgres', qq{
			INSERT INTO $t SELECT g, g, 'v' || g, g * 1.5 FROM generate_series(1, 6) g;
			UPDATE $t SET v = 'upd' WHERE id = 1;
			UPDATE $t SET id = 100, code = 100 WHERE id = 2;
			DELETE FROM $t WHERE id = 3;
			BEGIN; INSERT INTO $t VALUES (50, 50, 'aborted', 0); ROLLBACK;
			BEGIN;
			SAVEPOINT s; INSERT INTO $t VALUES (51, 51, 'rolled back', 0); ROLLBACK TO s;
			SAVEPOINT t; UPDATE $t SET n = NULL WHERE id = 4; RELEASE t;
			COMMIT;
			INSERT INTO $t SELECT 1000, 1000, repeat('big', 20000), 1;
			COPY $t FROM PROGRAM 'printf "20\t20\ttwenty\t2\n21\t21\t\\\\N\t\\\\N\n"';
			COPY $t FROM PROGRAM 'seq 3000 3400 | sed "s/.*/&\t&\tcopied\t1/"';
			COPY $t FROM PROGRAM 'seq 100000 120000 | sed "s/.*/&\t&\tcopied in groups of several records\t1/"';
			BEGIN;
			INSERT INTO $t SELECT g, g, 'inserted, read in a savepoint', 1 FROM generate_series(5000, 5300) g;
			SAVEPOINT s; SELECT count(*) FROM $t; ROLLBACK TO s;
			SAVEPOINT a; INSERT INTO $t SELECT g, g, 'released', 1 FROM generate_series(6000, 6300) g; RELEASE a;
			SAVEPOINT b; INSERT INTO $t SELECT g, g, 'rolled back after a read', 1 FROM generate_series(7000, 7300) g;
			SELECT count(*) FROM $t; ROLLBACK TO b;
			COMMIT;
			INSERT INTO $t SELECT 2000, 2000, string_agg(md5(g::text), ''), 1
			  FROM generate_series(1, 3000) g;
			DELETE FROM $t WHERE id = 2000;
			UPDATE $t SET v = 'updated in bulk' WHERE id BETWEEN 100000 AND 102000;
			UPDATE $t SET code = -code WHERE id BETWEEN 102001 AND 103000;
			DELETE FROM $t WHERE id = 1000;
			TRUNCATE $t;
		});
		if ($ri ne 'nopk')
		{
			$pub->safe_psql('postgres', qq{
				INSERT INTO $t VALUES (7, 7, 'x', 1) ON CONFLICT (id) DO NOTHING;
				INSERT INTO $t VALUES (7, 7, 'y', 1) ON CONFLICT (id) DO UPDATE SET v = 'upserted';
			});
		}
		$out{$am} = $pub->safe_psql('postgres', q{
			SELECT string_agg(data, E'\n' ORDER BY ord) FROM
			  (SELECT data, row_number() OVER () AS ord
			     FROM pg_logical_slot_get_changes('td', NULL, NULL, 'include-xids', '0')) c});
		$out{$am} =~ s/\b${am}_$ri\b/T/g;
	}
	cmp_ok(length($out{pax}), '>', 500, "replica identity $ri: pax changes are decoded");
	is($out{pax}, $out{heap}, "replica identity $ri: pax decodes as heap");
}

# Two-phase decoding: a prepared transaction's changes (a group of rows, an
# update, a delete) are decoded at PREPARE, as heap's.
$pub->safe_psql('postgres',
	q{SELECT pg_create_logical_replication_slot('td2pc', 'test_decoding', false, true)});
my %twopc;
foreach my $am ('pax', 'heap')
{
	my $t = "${am}_dflt";
	my $get = q{SELECT string_agg(data, E'\n' ORDER BY ord) FROM
		(SELECT data, row_number() OVER () AS ord
		   FROM pg_logical_slot_get_changes('td2pc', NULL, NULL, 'include-xids', '0')) c};
	$pub->safe_psql('postgres', qq{
		INSERT INTO $t SELECT g, g, 'before', 1 FROM generate_series(2001, 2400) g;
		SELECT count(*) FROM pg_logical_slot_get_changes('td2pc', NULL, NULL);
		BEGIN;
		INSERT INTO $t SELECT g, g, 'prepared', 1 FROM generate_series(3000, 3300) g;
		UPDATE $t SET v = 'prepared update' WHERE id = 2005;
		DELETE FROM $t WHERE id = 2006;
		PREPARE TRANSACTION 'tp_$am';
	});
	my $at_prepare = $pub->safe_psql('postgres', $get);
	$pub->safe_psql('postgres', "COMMIT PREPARED 'tp_$am'");
	$twopc{$am} = $at_prepare . "\n--\n" . $pub->safe_psql('postgres', $get);
	$twopc{$am} =~ s/\b$t\b/T/g;
	$twopc{$am} =~ s/tp_$am/tp/g;
}
like($twopc{pax}, qr/PREPARE TRANSACTION 'tp'.*--\nCOMMIT PREPARED 'tp'/s,
	'two-phase: the prepared pax transaction is decoded at PREPARE');
is($twopc{pax}, $twopc{heap}, 'two-phase: pax decodes as heap');
# Statements that mix kinds of change keep whole groups, and decode the
# same rows as heap (in another order within the statement: sorted here).
my %mixed;
foreach my $am ('pax', 'heap')
{
	my $t = "mix_$am";
	$pub->safe_psql('postgres', qq{
		CREATE TABLE $t (id int PRIMARY KEY, v text) USING $am;
		INSERT INTO $t SELECT g * 2, 'x' FROM generate_series(1, 5000) g;
		SELECT count(*) FROM pg_logical_slot_get_changes('td', NULL, NULL);
		MERGE INTO $t USING (SELECT g AS id FROM generate_series(1, 10000) g) s ON $t.id = s.id
		  WHEN MATCHED THEN UPDATE SET v = 'u' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n');
		UPDATE $t SET id = CASE WHEN id % 3 = 0 THEN -id ELSE id END, v = 'k';
		WITH d AS (DELETE FROM $t WHERE id BETWEEN 1 AND 4000 RETURNING id)
		INSERT INTO $t SELECT id + 100000, 'm' FROM d;
	});
	$mixed{$am} = join("\n", sort split /\n/, $pub->safe_psql('postgres',
		q{SELECT data FROM pg_logical_slot_get_changes('td', NULL, NULL, 'include-xids', '0')}));
	$mixed{$am} =~ s/\b$t\b/T/g;
}
cmp_ok(length($mixed{pax}), '>', 100000, 'mixed statements: pax changes are decoded');
is($mixed{pax}, $mixed{heap}, 'mixed statements: pax decodes the rows heap does');
cmp_ok($pub->safe_psql('postgres', q{SELECT count(*) FROM pax_groups('mix_pax')}), '<', 40,
	'MERGE, partial key updates and DELETE ... INSERT CTEs keep whole groups');

# DDL in the transaction that buffered rows: they decode under the catalog
# they were inserted under (a type change, an added column), as heap's.
my %ddl;
foreach my $am ('pax', 'heap')
{
	my $t = "ddl_$am";
	$pub->safe_psql('postgres', qq{
		CREATE TABLE $t (id int PRIMARY KEY, c int) USING $am;
		SELECT count(*) FROM pg_logical_slot_get_changes('td', NULL, NULL);
		BEGIN;
		INSERT INTO $t SELECT g, g FROM generate_series(1, 3000) g;
		ALTER TABLE $t ALTER COLUMN c TYPE text;
		INSERT INTO $t SELECT g, 'v' || g FROM generate_series(3001, 5000) g;
		ALTER TABLE $t ADD COLUMN d int DEFAULT 7;
		INSERT INTO $t SELECT g, 'w', g FROM generate_series(5001, 6000) g;
		ALTER TABLE $t RENAME COLUMN d TO e;
		COMMIT;
	});
	$ddl{$am} = join("\n", sort split /\n/, $pub->safe_psql('postgres',
		q{SELECT data FROM pg_logical_slot_get_changes('td', NULL, NULL, 'include-xids', '0')}));
	$ddl{$am} =~ s/\b$t\b/T/g;
}
cmp_ok(length($ddl{pax}), '>', 100000, 'DDL after buffered rows: pax changes are decoded');
is($ddl{pax}, $ddl{heap}, 'DDL after buffered rows: pax decodes them as heap does');

# Decoding in order must not cost the table its groups: a bulk INSERT past
# the transaction's delta budget still fills one group.
$pub->safe_psql('postgres', q{
	CREATE TABLE bulk_groups (id int, v text) USING pax;
	INSERT INTO bulk_groups SELECT g, 'row ' || g FROM generate_series(1, 5000) g;
});
is($pub->safe_psql('postgres', q{SELECT count(*) FROM pax_groups('bulk_groups') WHERE NOT delta}),
	'1', 'a bulk INSERT under wal_level = logical writes one group');

# ---------------------------------------------------------------- a subscriber
# Publisher pax tables, subscriber heap tables (stock server: no flashscan).
my $sub = SSDKitTest::node('pax_sub', preload => [], init => { allows_streaming => 'logical' });
my $schema = q{
	CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL, note text) %s;
	CREATE TABLE hist (client int, n int, amount int, at text) %s;
	CREATE TABLE filt (id int PRIMARY KEY, v text, secret text) %s;
	CREATE TABLE part (k int NOT NULL, id int NOT NULL, v text, PRIMARY KEY (k, id)) PARTITION BY RANGE (k);
	CREATE TABLE part_lo PARTITION OF part FOR VALUES FROM (0) TO (50) %s;
	CREATE TABLE part_hi PARTITION OF part FOR VALUES FROM (50) TO (100) %s;
};
$pub->safe_psql('postgres', sprintf($schema, ('USING pax') x 5) . q{
	ALTER TABLE hist REPLICA IDENTITY FULL;
	INSERT INTO acct SELECT g, 1000, 'start' FROM generate_series(1, 100) g;
	INSERT INTO part SELECT g % 50, g, 'p' || g FROM generate_series(1, 200) g;
	INSERT INTO filt SELECT g, 'f' || g, 's' || g FROM generate_series(1, 50) g;
	CREATE PUBLICATION pub1 FOR TABLE acct, hist, filt (id, v) WHERE (id % 2 = 0);
	CREATE PUBLICATION pub2 FOR TABLE part WITH (publish_via_partition_root = true);
});
$sub->safe_psql('postgres', sprintf($schema, ('') x 5));
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub1, pub2 WITH (streaming = on)");
$sub->wait_for_subscription_sync($pub, 'sub');

# A workload of every kind of change, by concurrent clients.
my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'transfer.sql' => q{
\set a random(1, 100)
\set b random(1, 100)
\set x random(1, 50)
BEGIN;
UPDATE acct SET bal = bal - :x WHERE id = :a;
UPDATE acct SET bal = bal + :x, note = 'moved ' || :x WHERE id = :b;
INSERT INTO hist VALUES (:client_id, :a, :x, 'transfer');
END;
},
	'abort.sql' => q{
\set a random(1, 100)
BEGIN;
UPDATE acct SET bal = bal + 1 WHERE id = :a;
SAVEPOINT s;
DELETE FROM hist WHERE client = :client_id AND amount < 10;
ROLLBACK TO s;
INSERT INTO hist VALUES (:client_id, :a, -1, 'kept');
ROLLBACK;
},
	'mixed.sql' => q{
\set i random(1, 400)
\set k random(0, 99)
INSERT INTO filt VALUES (:i + 1000, 'new' || :i, 'hidden') ON CONFLICT (id) DO UPDATE SET v = filt.v || '+';
UPDATE part SET k = :k WHERE id = :i;
DELETE FROM filt WHERE id = :i AND id % 7 = 0;
DELETE FROM hist WHERE client = :client_id AND amount = :i % 50;
});
foreach my $f (keys %scripts)
{
	open(my $fh, '>', "$dir/$f") or die $!;
	print $fh $scripts{$f};
	close $fh;
}
my @bench = ('-n', '-c', '3', '-j', '3', '-f', "$dir/transfer.sql\@5",
	'-f', "$dir/abort.sql\@1", '-f', "$dir/mixed.sql\@3");
my ($ok, $out, $err) = SSDKitTest::pgbench($pub, @bench, '-t', '150');
ok($ok, 'workload on the publisher') or diag($err);

# A crash of the publisher in the middle of a second round.
my ($bout, $berr) = ('', '');
my $bg = IPC::Run::start(
	[ 'pgbench', '-h', $pub->host, '-p', $pub->port, @bench, '-T', '20', 'postgres' ],
	'>', \$bout, '2>', \$berr);
sleep 4;
SSDKitTest::crash_restart($pub);
$bg->finish;
($ok, $out, $err) = SSDKitTest::pgbench($pub, @bench, '-t', '100');
ok($ok, 'workload after the publisher crashed') or diag($err);
# Crash recovery replayed pax's own delta-append records: the rows and
# every index entry agree.
$pub->safe_psql('postgres', 'CREATE EXTENSION amcheck');
my $pax_indexes = q{FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	  JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = t.relam
	 WHERE a.amname = 'pax'};
is($pub->safe_psql('postgres', "SELECT count(*) FROM (SELECT bt_index_check(c.oid, true) $pax_indexes) s"),
	$pub->safe_psql('postgres', "SELECT count(*) $pax_indexes"),
	'after the crash: every index of the pax tables matches its table (heapallindexed)');

# A large transaction (streamed: logical_decoding_work_mem is 64 kB).
$pub->safe_psql('postgres',
	q{INSERT INTO hist SELECT 99, g, g % 50, repeat('s', 200) FROM generate_series(1, 5000) g});

$pub->wait_for_catchup('sub');
my %query = (
	acct => 'SELECT md5(string_agg(t::text, \',\' ORDER BY id)) FROM acct t',
	hist => 'SELECT md5(string_agg(t::text, \',\' ORDER BY client, n, amount, at)) FROM hist t',
	part => 'SELECT md5(string_agg(t::text, \',\' ORDER BY k, id)) FROM part t');
foreach my $t (sort keys %query)
{
	my $want = $pub->safe_psql('postgres', $query{$t});
	is($sub->safe_psql('postgres', $query{$t}), $want, "subscriber's $t equals the publisher's");
}
is( $sub->safe_psql('postgres',
		q{SELECT md5(string_agg(id || ':' || v || ':' || coalesce(secret, '-'), ',' ORDER BY id)) FROM filt}),
	$pub->safe_psql('postgres',
		q{SELECT md5(string_agg(id || ':' || v || ':-', ',' ORDER BY id)) FROM filt WHERE id % 2 = 0}),
	'row filter and column list: the subscriber has the even rows, without the secret column');
cmp_ok($sub->safe_psql('postgres', 'SELECT count(*) FROM hist'), '>', 5000,
	'the streamed large transaction arrived');

# The reverse: a heap table published by the (stock) subscriber node,
# applied into a pax table on the publisher node.
$sub->safe_psql('postgres', q{
	CREATE TABLE rev (id int PRIMARY KEY, v text);
	INSERT INTO rev SELECT g, 'r' || g FROM generate_series(1, 300) g;
	CREATE PUBLICATION revpub FOR TABLE rev;
});
$pub->safe_psql('postgres', 'CREATE TABLE rev (id int PRIMARY KEY, v text) USING pax');
my $subconn = $sub->connstr . ' dbname=postgres';
$pub->safe_psql('postgres', "CREATE SUBSCRIPTION revsub CONNECTION '$subconn' PUBLICATION revpub");
$pub->wait_for_subscription_sync($sub, 'revsub');
$sub->safe_psql('postgres', q{
	UPDATE rev SET v = v || '+' WHERE id % 3 = 0;
	DELETE FROM rev WHERE id % 5 = 0;
	INSERT INTO rev VALUES (1000, 'late');
});
$sub->wait_for_catchup('revsub');
my $revq = q{SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM rev};
is($pub->safe_psql('postgres', $revq), $sub->safe_psql('postgres', $revq),
	'a heap publication applied into a pax table matches');
$pub->safe_psql('postgres', 'DROP SUBSCRIPTION revsub');

# The same into a pax table with no index at all (REPLICA IDENTITY FULL on
# the publishing side): the apply worker finds each row to update or delete
# with a scan and locks a copy of it, rows of the initial copy included.
$sub->safe_psql('postgres', q{
	CREATE TABLE revfull (id int, v text);
	ALTER TABLE revfull REPLICA IDENTITY FULL;
	INSERT INTO revfull SELECT g, 'r' || g FROM generate_series(1, 300) g;
	CREATE PUBLICATION revfullpub FOR TABLE revfull;
});
$pub->safe_psql('postgres', 'CREATE TABLE revfull (id int, v text) USING pax');
$pub->safe_psql('postgres', "CREATE SUBSCRIPTION revfullsub CONNECTION '$subconn' PUBLICATION revfullpub");
$pub->wait_for_subscription_sync($sub, 'revfullsub');
$sub->safe_psql('postgres', q{
	UPDATE revfull SET v = v || '+' WHERE id % 3 = 0;
	DELETE FROM revfull WHERE id % 5 = 0;
	INSERT INTO revfull VALUES (1000, 'late');
	UPDATE revfull SET v = 'later' WHERE id = 1000;
});
$sub->wait_for_catchup('revfullsub');
$revq = q{SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM revfull};
is($pub->safe_psql('postgres', $revq), $sub->safe_psql('postgres', $revq),
	'applied into a pax table without an index (rows found by a scan) matches');
ok(!$pub->log_contains(qr/attempted to lock invisible tuple/),
	'the apply worker locked every row it found');
$pub->safe_psql('postgres', 'DROP SUBSCRIPTION revfullsub');

# ---------------------------------------------------------------- a standby
# A physical standby of the publisher replays the pax records (and must
# preload flashscan to know them).
$pub->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('pax_pub_standby');
$standby->init_from_backup($pub, 'b', has_streaming => 1);
$standby->start;
$pub->safe_psql('postgres', q{
	UPDATE acct SET note = 'after the backup' WHERE id % 5 = 0;
	DELETE FROM hist WHERE n % 3 = 0;
	INSERT INTO acct VALUES (1001, 1, 'new');
});
$pub->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $query{acct}), $pub->safe_psql('postgres', $query{acct}),
	'a physical standby of the publisher replays the pax tables');
$standby->stop;

# ---------------------------------------------------------------- WAL tools
# Every kind of pax record after the slot's restart point (its changes are
# not consumed yet): a delta append, a group, a row state, an UPDATE record
# (REPLICA IDENTITY FULL, new versions in a group) and an INSERT record (a
# confirmed upsert).
$pub->safe_psql('postgres', q{
	CREATE TABLE kinds (id int PRIMARY KEY, v text) USING pax;
	ALTER TABLE kinds REPLICA IDENTITY FULL;
	INSERT INTO kinds SELECT g, 'k' FROM generate_series(1, 5000) g;
	UPDATE kinds SET id = -id;
	INSERT INTO kinds VALUES (1, 'u') ON CONFLICT (id) DO NOTHING;
});
my ($recs) = $pub->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT record_type, ',' ORDER BY record_type)
	  FROM pg_get_wal_records_info(
	         (SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'td'),
	         pg_current_wal_flush_lsn())
	 WHERE resource_manager = 'pax'});
is($recs, 'DELTA_INSERT,GROUP,INSERT,ROW_STATE,UPDATE', 'pg_walinspect names the pax records');
# wal_consistency_checking = 'pax,generic' gave every record of the pages
# the standby and crash recovery replayed above an image to compare with.
is($pub->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE fpi_length = 0)
	  FROM pg_get_wal_records_info(
	         (SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'td'),
	         pg_current_wal_flush_lsn())
	 WHERE resource_manager = 'pax' AND block_ref LIKE '%blkref%'}), '0',
	'every pax record carries page images for wal_consistency_checking')
  or diag($pub->safe_psql('postgres', q{
	SELECT record_type, count(*), min(start_lsn), max(start_lsn), min(description)
	  FROM pg_get_wal_records_info(
	         (SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = 'td'),
	         pg_current_wal_flush_lsn())
	 WHERE resource_manager = 'pax' AND block_ref LIKE '%blkref%' AND fpi_length = 0 GROUP BY 1}));

# Stock pg_waldump reads the WAL: it cannot load this library's
# descriptions, so it shows the records as those of custom resource
# manager 171.
# (from the slot's restart point, where pg_walinspect found them above: the
# current segment may have just begun and hold none yet)
my ($wd_start, $wd_end) = split /\|/, $pub->safe_psql('postgres', q{
	SELECT restart_lsn, pg_current_wal_flush_lsn() FROM pg_replication_slots
	 WHERE slot_name = 'td'});
my ($wd_out, $wd_err) = ('', '');
IPC::Run::run([ 'pg_waldump', '--rmgr=custom171', '--limit=5', '-p', $pub->data_dir . '/pg_wal',
		'--start', $wd_start, '--end', $wd_end ], '>', \$wd_out, '2>', \$wd_err);
like($wd_out, qr/rmgr: custom171 /, 'pg_waldump reads the pax records (as custom171)');

# pg_recvlogical reads the changes of a pax table from a slot.
my $lsn0 = $pub->safe_psql('postgres',
	q{SELECT lsn FROM pg_create_logical_replication_slot('recv', 'test_decoding')});
$pub->safe_psql('postgres', q{INSERT INTO acct VALUES (2000, 7, 'via pg_recvlogical')});
my $endpos = $pub->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my $file = "$dir/recv.out";
command_ok([ 'pg_recvlogical', '-d', $pub->connstr('postgres'), '-S', 'recv', '--start',
		'--endpos', $endpos, '--no-loop', '-f', $file ], 'pg_recvlogical runs');
like(slurp_file($file), qr/table public\.acct: INSERT: id\[integer\]:2000 bal\[integer\]:7 note\[text\]:'via pg_recvlogical'/,
	'pg_recvlogical receives the pax insert');
$pub->safe_psql('postgres', q{SELECT pg_drop_replication_slot('recv'); SELECT pg_drop_replication_slot('td')});

# ---------------------------------------------------------------- no preload
# Without flashscan preloaded, pax changes cannot be decoded: a publication
# that would cover a pax table is refused, a write warns.
my $bare = SSDKitTest::node('pax_bare', preload => [], init => { allows_streaming => 'logical' });
$bare->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE SCHEMA s;
	CREATE TABLE s.p (id int PRIMARY KEY) USING pax;
	CREATE TABLE h (id int PRIMARY KEY);
	CREATE PUBLICATION ok_heap FOR TABLE h;
});
foreach my $what ('TABLE s.p', 'TABLES IN SCHEMA s', 'ALL TABLES')
{
	my ($ret, $o, $e) = $bare->psql('postgres', "CREATE PUBLICATION bad FOR $what");
	like($e, qr/cannot publish pax table "p".*\n.*DETAIL:.*\n.*HINT:  Add flashscan to shared_preload_libraries/,
		"without the preload, CREATE PUBLICATION FOR $what is refused");
}
my ($ret, $o, $e) = $bare->psql('postgres', 'ALTER PUBLICATION ok_heap ADD TABLE s.p');
like($e, qr/cannot publish pax table "p"/, 'ALTER PUBLICATION ADD TABLE of a pax table is refused');
($ret, $o, $e) = $bare->psql('postgres', 'INSERT INTO s.p VALUES (1)');
like($e, qr/WARNING:  changes of pax table "p" are not logically decoded/,
	'a write of a pax table without the preload warns');

$bare->stop;
$sub->stop;
$pub->stop;
done_testing();
