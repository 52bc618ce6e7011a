# pax tables through crashes and on a streaming standby: every change is
# WAL-logged (generic WAL), so crash recovery keeps every acknowledged
# commit and nothing of the others, and a standby replays the tables to the
# same bytes the primary reads.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

my $primary = SSDKitTest::node('pax_primary',
	init => { allows_streaming => 1 },
	conf => "flashscan.group_blocks = 4\n");
$primary->safe_psql('postgres', q{
	CREATE EXTENSION flashscan;
	CREATE EXTENSION amcheck;
	-- the ledger the crash loop checks, as a pax table with its primary key
	CREATE TABLE ssdkit_ledger (client int NOT NULL, n bigint NOT NULL, payload text,
								PRIMARY KEY (client, n)) USING pax;
	-- and a bulk load per transaction: 200 rows that commit or vanish with it
	CREATE TABLE bulk (client int, n bigint, g int, pad text) USING pax;
	CREATE INDEX bulk_g ON bulk (client, n, g);
	-- accounts that UPDATEs move money between; client k also counts its
	-- commits in account k's ver
	CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL, ver bigint NOT NULL, note text) USING pax;
	INSERT INTO acct SELECT g, 100, 0, 'start' FROM generate_series(1, 200) g;
});

# What the tables hold (and, with $directory, how the bulk table's groups
# are laid out), as one comparable value.
sub content
{
	my ($node, $directory, $db) = @_;
	my $rows = $node->safe_psql($db // 'postgres', q{
		SELECT md5(string_agg(client || ':' || n || ':' || length(payload), ',' ORDER BY client, n))
		FROM ssdkit_ledger;
		SELECT md5(string_agg(client || ':' || n || ':' || g || ':' || pad, ',' ORDER BY client, n, g))
		FROM bulk;
		SELECT md5(string_agg(id || ':' || bal || ':' || ver || ':' || note, ',' ORDER BY id))
		FROM acct;
	});
	return $rows unless $directory;
	return $rows . $node->safe_psql('postgres', q{
		SELECT md5(string_agg(first_row || ':' || nrows || ':' || nblocks || ':' || minipage_bytes
							  || ':' || frozen || ':' || aborted, ',' ORDER BY first_row))
		FROM pax_groups('bulk');
	});
}

# Crash loop: kill -9 style stops in the middle of ledger commits that each
# also load 200 rows into the bulk table.
my $bulk_sql = q{INSERT INTO bulk SELECT :client_id, (SELECT max(n) FROM ssdkit_ledger WHERE client = :client_id), g, repeat('b', 40 + g % 50) FROM generate_series(1, 200) g;};
for my $round (1 .. 3)
{
	my $acked = SSDKitTest::ledger_pgbench($primary,
		clients => 4, seconds => 20, crash_after => 3, extra_sql => $bulk_sql);
	my $n = 0;
	$n += $_ for values %$acked;
	cmp_ok($n, '>', 0, "round $round: $n commits before the crash");
	SSDKitTest::ledger_check($primary, $acked, "round $round");
	is( $primary->safe_psql('postgres', q{
			SELECT count(*) FROM (
				SELECT l.client, l.n, count(b.g) AS rows
				FROM ssdkit_ledger l LEFT JOIN bulk b ON b.client = l.client AND b.n = l.n
				GROUP BY l.client, l.n) x
			WHERE rows <> 200}),
		'0', "round $round: every committed transaction's 200 bulk rows are there");
	is( $primary->safe_psql('postgres',
			'SELECT count(*) FROM bulk b WHERE NOT EXISTS (SELECT 1 FROM ssdkit_ledger l '
			  . 'WHERE l.client = b.client AND l.n = b.n)'),
		'0', "round $round: no rows of a transaction that did not commit");
	is( $primary->safe_psql('postgres', q{
			SELECT bt_index_check('bulk_g', true)::text || bt_index_check('ssdkit_ledger_pkey', true)::text}),
		'', "round $round: indexes match the tables (bt_index_check, heapallindexed)");
}
# The ledger's single-row inserts (four clients, crashed in the middle of
# appends) share delta pages instead of taking a block each: the file has
# far fewer blocks than rows (autovacuum may have rewritten some pages).
is( $primary->safe_psql('postgres', q{
		SELECT pg_relation_size('ssdkit_ledger') / 8192 * 10 < count(*) FROM ssdkit_ledger}),
	't', 'the ledger rows share delta pages (under a tenth of a block per row)');
# Crash loop over UPDATEs and DELETEs: each commit moves one unit between
# two random accounts (one statement, so concurrent ones lock in the same
# order), bumps its client's account version, and deletes and re-inserts a
# scratch row.  After each crash: the money adds up, every account is there
# once, each client's version equals its acknowledged commits, and a
# VACUUM (rewriting groups) in between changes none of it.
$primary->safe_psql('postgres', q{
	CREATE TABLE scratch (client int PRIMARY KEY, n bigint) USING pax;
	-- pgbench clients are 0 .. 3; they start from their ledger numbers so far
	INSERT INTO scratch SELECT c, coalesce((SELECT max(n) FROM ssdkit_ledger WHERE client = c), 0)
	FROM generate_series(0, 3) c;
	UPDATE acct a SET ver = s.n FROM scratch s WHERE a.id = s.client + 1;
});
my $update_sql = q{\set a random(1, 200)
\set b random(1, 200)
UPDATE acct SET bal = bal + CASE WHEN id = :a THEN -1 ELSE 1 END, note = 'moved'
	WHERE id IN (:a, :b) AND :a <> :b;
UPDATE acct SET ver = ver + 1 WHERE id = :client_id + 1;
DELETE FROM scratch WHERE client = :client_id;
INSERT INTO scratch SELECT :client_id, max(n) FROM ssdkit_ledger WHERE client = :client_id;};
for my $round (1 .. 2)
{
	my $acked = SSDKitTest::ledger_pgbench($primary,
		clients => 4, seconds => 15, crash_after => 4, extra_sql => $update_sql);
	my $n = 0;
	$n += $_ for values %$acked;
	cmp_ok($n, '>', 0, "update round $round: $n commits before the crash");
	SSDKitTest::ledger_check($primary, $acked, "update round $round");
	for my $when ('after the crash', 'after VACUUM')
	{
		is( $primary->safe_psql('postgres', q{
				SELECT count(*), count(DISTINCT id), sum(bal) FROM acct}),
			'200|200|20000', "update round $round, $when: 200 accounts, the money adds up");
		is( $primary->safe_psql('postgres', q{
				SELECT count(*) FROM (SELECT client, max(n) AS n FROM ssdkit_ledger GROUP BY client) l
				JOIN acct a ON a.id = l.client + 1 JOIN scratch s ON s.client = l.client
				WHERE a.ver <> l.n OR s.n <> l.n}),
			'0', "update round $round, $when: each client's updates and re-inserts match its commits");
		is( $primary->safe_psql('postgres', q{
				SET enable_seqscan = off; SET flashscan.enable = off;
				SELECT count(*), sum(bal) FROM acct WHERE id BETWEEN 1 AND 200}),
			'200|20000', "update round $round, $when: the same through the primary key");
		is( $primary->safe_psql('postgres', q{
				SELECT bt_index_check('acct_pkey', true)::text || bt_index_check('scratch_pkey', true)::text}),
			'', "update round $round, $when: indexes match the tables");
		$primary->safe_psql('postgres', 'VACUUM acct; VACUUM scratch');
	}
}

# A transaction whose groups are on disk (a read of the table in the same
# transaction writes them) when the server crashes: its rows never show,
# and VACUUM drops its groups.
my $before_crash = content($primary);
my $bg = $primary->background_psql('postgres', on_error_stop => 0);
$bg->query_safe('BEGIN');
$bg->query_safe(q{INSERT INTO bulk SELECT 97, 1, i, 'in flight' FROM generate_series(1, 3000) i});
is($bg->query_safe('SELECT count(*) FROM bulk WHERE client = 97'), '3000',
	'the open transaction reads its own rows');
SSDKitTest::crash_restart($primary);
$bg->quit;
is(content($primary), $before_crash, 'after the crash: the in-flight rows are gone');
my $groups_before = $primary->safe_psql('postgres', q{SELECT count(*) FROM pax_groups('bulk')});
my $groups_after = $primary->safe_psql('postgres', q{
	VACUUM bulk;
	SELECT count(*) FROM pax_groups('bulk')});
cmp_ok($groups_after, '<', $groups_before,
	"VACUUM drops the crashed transaction's groups ($groups_before groups before, $groups_after after)");
is(content($primary), $before_crash, 'after VACUUM: the same rows');

# A standby from a base backup, then more writes replayed through WAL:
# bulk loads, single rows, a rolled-back load, a TRUNCATE of another table.
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('pax_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres', q{
	INSERT INTO bulk SELECT 99, i / 100, i, md5(i::text) FROM generate_series(1, 20000) i;
	INSERT INTO ssdkit_ledger VALUES (99, 1, 'single');
	BEGIN; INSERT INTO bulk SELECT 98, 1, i, 'rolled back' FROM generate_series(1, 5000) i; ROLLBACK;
	CREATE TABLE gone (a int) USING pax;
	INSERT INTO gone SELECT generate_series(1, 1000);
	TRUNCATE gone;
	INSERT INTO gone VALUES (1);
	VACUUM (FREEZE) bulk;
	UPDATE acct SET bal = bal + 1, note = 'on standby too' WHERE id % 3 = 0;
	UPDATE acct SET bal = bal - 1 WHERE id % 3 = 1;
	DELETE FROM bulk WHERE client = 99 AND g % 4 <> 0;
	VACUUM bulk;
	VACUUM acct;
});
$primary->wait_for_catchup($standby);
is(content($standby, 1), content($primary, 1), 'the standby reads the same pax tables and directory as the primary');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM gone'), '1',
	'the standby replays TRUNCATE of a pax table');
is($standby->safe_psql('postgres', q{SET enable_seqscan = off; SELECT count(*) FROM bulk WHERE client = 99 AND n = 7 AND g = 776}),
	'1', 'index scans on the standby find rows by TID');

# VACUUM gives the emptied tail of a pax file back to the file system (it
# takes two: the first rewrites the surviving rows into new groups at the
# end); the standby replays the truncation, and rows written afterwards
# reuse neither stale blocks nor stale free-list entries.
$primary->safe_psql('postgres', q{
	CREATE TABLE shrink (a int PRIMARY KEY, b text) USING pax WITH (autovacuum_enabled = false);
	INSERT INTO shrink SELECT g, repeat('s', 50) FROM generate_series(1, 50000) g;
});
my $size_full = $primary->safe_psql('postgres', q{SELECT pg_relation_size('shrink')});
$primary->safe_psql('postgres', 'DELETE FROM shrink WHERE a > 100');
$primary->safe_psql('postgres', 'VACUUM shrink');
$primary->safe_psql('postgres', 'VACUUM shrink');
my $size_vacuumed = $primary->safe_psql('postgres', q{SELECT pg_relation_size('shrink')});
cmp_ok($size_vacuumed, '<', $size_full / 4,
	"VACUUM truncates a pax file's free tail ($size_full -> $size_vacuumed bytes)");
$primary->safe_psql('postgres', q{
	INSERT INTO shrink SELECT g, 'after' FROM generate_series(50001, 60000) g;
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{SELECT count(*), sum(a), count(*) FILTER (WHERE b = 'after') FROM shrink}),
	'10100|550010050|10000', 'the standby replays the truncation and the rows written after it');
is($standby->safe_psql('postgres', q{SET enable_seqscan = off; SELECT b FROM shrink WHERE a = 77}),
	'ssssssssssssssssssssssssssssssssssssssssssssssssss', 'index fetches on the standby after the truncation');
# A standby's REPEATABLE READ transaction never sees rows vanish that a
# later VACUUM on the primary marked dead in place (no rewrite): replay
# waits for it as for heap's prune records, for max_standby_streaming_delay
# (here: forever), and then the query is cancelled as a recovery conflict,
# counted in pg_stat_database_conflicts.
$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = -1\n");
$standby->reload;
$primary->safe_psql('postgres', q{
	CREATE TABLE rr (id int PRIMARY KEY, v int) USING pax WITH (autovacuum_enabled = false);
	INSERT INTO rr SELECT g, g FROM generate_series(1, 100000) g;
	VACUUM rr;
});
$primary->wait_for_catchup($standby);
my $rr = $standby->background_psql('postgres', on_error_stop => 0);
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM rr'), '100000', 'standby: a repeatable-read count');
$primary->safe_psql('postgres', 'DELETE FROM rr WHERE id % 10 = 0');
$primary->safe_psql('postgres', 'VACUUM rr');
my $vacuumed = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$standby->poll_query_until('postgres', "SELECT pg_last_wal_receive_lsn() >= '$vacuumed'")
  or die 'the standby did not receive the VACUUM';
sleep 1;
is($rr->query_safe('SELECT count(*) FROM rr'), '100000',
	'standby: after VACUUM marked rows dead, replay waits for the older snapshot (delay -1)');
is($standby->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() < '$vacuumed'"), 't',
	'standby: replay is held back meanwhile');
$rr->query_safe('COMMIT');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM rr'), '90000',
	'standby: a new snapshot sees the delete');
# with a delay of 100 ms, the older snapshot's query is cancelled instead
$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = 100ms\n");
$standby->reload;
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM rr'), '90000', 'standby: another repeatable-read count');
$primary->safe_psql('postgres', 'DELETE FROM rr WHERE id % 10 = 1');
$primary->safe_psql('postgres', 'VACUUM rr');
$primary->wait_for_catchup($standby);
# (a standby session a replayed lock terminates counts as a conflict too)
my ($again, $err) = ('', '');
eval { $again = $rr->query('SELECT count(*) FROM rr'); $err = $rr->{stderr} // ''; 1 }
  or $err = "session ended: $@";
like("$again\n$err", qr/conflict with recovery|session ended/m,
	'standby: past max_standby_streaming_delay, the older snapshot is cancelled');
note("standby's second count: $again $err");
eval { $rr->quit };
cmp_ok($standby->safe_psql('postgres',
		"SELECT confl_snapshot FROM pg_stat_database_conflicts WHERE datname = 'postgres'"),
	'>', 0, 'standby: counted as a snapshot conflict');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM rr'), '80000',
	'standby: a new snapshot sees the second delete');
$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = 30s\n");
$standby->reload;

# VACUUM in a loop while single-row updates turn groups' dead-row bitmaps
# back into row maps (each such update frees a bitmap another writer may
# reuse): VACUUM never reads a block through its own stale directory copy,
# so none of them fails, and every update is there.
$primary->safe_psql('postgres', q{
	SET flashscan.group_blocks = 4;
	CREATE TABLE vu (id int PRIMARY KEY, v int, pad text) USING pax WITH (autovacuum_enabled = false);
	INSERT INTO vu SELECT g, 0, md5(g::text) FROM generate_series(1, 60000) g;
	DELETE FROM vu WHERE id % 1000 = 0;
	VACUUM vu;
});
my $vu = $primary->background_psql('postgres', on_error_stop => 0);
$vu->query_until(qr/updating/, "\\echo updating\n"
	  . "DO \$\$ BEGIN FOR i IN 1..30000 LOOP UPDATE vu SET v = v + 1 WHERE id = (i * 7919) % 60000 + 1 AND id % 1000 <> 0; COMMIT; END LOOP; END \$\$;\n"
	  . "\\echo updated\n");
my ($vacuums, $vacuum_errors) = (0, '');
while (1)
{
	my ($ret, $out, $err) = $primary->psql('postgres', 'VACUUM vu');
	$vacuums++;
	$vacuum_errors .= $err if $ret != 0;
	last if $primary->safe_psql('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE 'DO $$ BEGIN FOR i IN 1..30000%' AND state = 'active'}) eq 't';
}
$vu->quit;
is($vacuum_errors, '', "VACUUM beside updates of groups with bitmaps: no error in $vacuums runs");
is($primary->safe_psql('postgres', q{SELECT count(*), sum(v) FROM vu}), '59940|29970',
	'every update is there');
is($primary->safe_psql('postgres', q{SELECT bt_index_check('vu_pkey', true)::text}), '',
	'index matches the table');

# With hot_standby_feedback a standby query's snapshot holds back the blocks
# a VACUUM on the primary frees, as it holds back heap's dead rows: rows
# written on the primary afterwards do not take them, and a standby cursor
# that was reading the old groups reads on (no cancellation, no error).
$standby->append_conf('postgresql.conf',
	"hot_standby_feedback = on\nmax_standby_streaming_delay = -1\n");
$standby->reload;
$primary->safe_psql('postgres', q{
	CREATE TABLE fb (id int, pad text) USING pax WITH (autovacuum_enabled = false);
	INSERT INTO fb SELECT g, repeat('f', 200) FROM generate_series(1, 20000) g;
	DELETE FROM fb WHERE id % 4 <> 0;
	CREATE FUNCTION fb_rest(c refcursor) RETURNS text LANGUAGE plpgsql AS $$
	DECLARE r record; n int := 0; bad int := 0;
	BEGIN
		LOOP
			FETCH c INTO r;
			EXIT WHEN NOT FOUND;
			n := n + 1;
			IF r.pad IS DISTINCT FROM repeat('f', 200) OR r.id % 4 <> 0 THEN bad := bad + 1; END IF;
		END LOOP;
		RETURN format('%s rows, %s wrong', n, bad);
	END $$;
});
$primary->wait_for_catchup($standby);
my $fb = $standby->background_psql('postgres', on_error_stop => 0);
$fb->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$fb->query_safe('SET LOCAL flashscan.enable = off');
$fb->query_safe('DECLARE c NO SCROLL CURSOR FOR SELECT id, pad FROM fb');
$fb->query_safe('MOVE 100 FROM c');
$primary->poll_query_until('postgres',
	'SELECT bool_or(backend_xmin IS NOT NULL) FROM pg_stat_replication')
  or die 'no feedback from the standby';
$primary->safe_psql('postgres', 'VACUUM (TRUNCATE false) fb');
$primary->safe_psql('postgres',
	q{INSERT INTO fb SELECT -g, repeat('n', 200) FROM generate_series(1, 20000) g});
$primary->wait_for_catchup($standby);
my ($fb_rest, $fb_err) = ('', '');
eval { $fb_rest = $fb->query(q{SELECT fb_rest('c')}); $fb_err = $fb->{stderr} // ''; 1 }
  or $fb_err = "session ended: $@";
is("$fb_rest$fb_err", '4900 rows, 0 wrong',
	'hot_standby_feedback: a standby cursor reads on across a VACUUM and new rows on the primary');
eval { $fb->quit };
$standby->append_conf('postgresql.conf', "hot_standby_feedback = off\n");
$standby->reload;

SSDKitTest::crash_restart($primary);
is($primary->safe_psql('postgres', q{SELECT count(*), sum(a) FROM shrink}),
	'10100|550010050', 'after a crash the truncated pax table keeps every row');

# The standby promoted, then crashed: still the same.
my $before = content($primary, 1);
$standby->promote;
SSDKitTest::crash_restart($standby);
is(content($standby, 1), $before, 'promoted and crashed standby: same tables');
is($standby->safe_psql('postgres', q{SELECT bt_index_check('bulk_g', true)::text}),
	'', 'promoted standby: index matches the table');

# pg_dump and pg_restore: the tables come back as pax tables with the same rows.
my $dump = $primary->basedir . '/pax.dump';
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump of a database with pax tables');
command_ok([ 'pg_restore', '-d', $primary->connstr('restored'), $dump ],
	'pg_restore into a new database');
is(content($primary, 0, 'restored'), content($primary, 0, 'postgres'),
	'restored pax tables hold the same rows');
is( $primary->safe_psql('restored', q{
		SELECT string_agg(c.relname || ':' || a.amname, ',' ORDER BY c.relname)
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE c.relname IN ('bulk', 'ssdkit_ledger', 'gone')}),
	'bulk:pax,gone:pax,ssdkit_ledger:pax', 'restored tables use the pax access method');

$standby->stop;
$primary->stop;
done_testing();
