# ssd_cache admission policies: sequential reads are never admitted, random
# reads are, and once the cache is full TAC keeps the hot pages through a
# stream of one-touch cold reads that makes clock throw them out.
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();
use SSDKitTest;

# A tiny shared_buffers so that repeated reads reach the cache; a 16 MB
# cache (2048 slots).  fsync = on: with it off the checkpointer never calls
# sync handlers, the cache sees no checkpoint, and a crash empties it.
sub policy_node
{
	my ($name, $policy) = @_;
	my $node = SSDKitTest::node($name, cache => '16MB',
		conf => "shared_buffers = 2MB\nautovacuum = off\nssd_cache.policy = $policy\n"
		  . "fsync = on\n");
	$node->safe_psql('postgres', q{
		CREATE EXTENSION ssd_cache;
		-- hot: about 1000 pages read over and over at random
		CREATE TABLE h (id int PRIMARY KEY, pad text);
		INSERT INTO h SELECT g, repeat('h', 200) FROM generate_series(1, 33000) g;
		-- cold: 6000 pages of one row each, read once each at random
		CREATE TABLE c (id int, r float8, pad text);
		ALTER TABLE c ALTER pad SET STORAGE PLAIN;
		INSERT INTO c SELECT g, random(), repeat('c', 7000) FROM generate_series(1, 6000) g;
		CREATE INDEX ON c (r);
		CREATE TABLE c2 (LIKE c);
		ALTER TABLE c2 ALTER pad SET STORAGE PLAIN;
		INSERT INTO c2 SELECT * FROM c;
		CREATE INDEX ON c2 (r);
		VACUUM ANALYZE h; VACUUM ANALYZE c; VACUUM ANALYZE c2;
	});
	return $node;
}

# Index probes in random order (a nested loop over random keys; id = ANY()
# would visit the keys sorted, which is rightly seen as sequential).
my $hot_query = q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET enable_hashjoin = off; SET enable_mergejoin = off;
	SELECT sum(length(h.pad))
	FROM (SELECT (random() * 32999)::int + 1 AS k FROM generate_series(1, 3000)) r
	JOIN h ON h.id = r.k;
};
# The cold stream in 20 slices of about 300 pages, each drained before the
# next: the admission queue (512 pages) must not be what refuses pages here,
# the policy must.
sub cold_stream
{
	my ($node, $table) = @_;
	$table //= 'c';
	for my $i (0 .. 19)
	{
		my ($lo, $hi) = ($i / 20, ($i + 1) / 20);
		$node->safe_psql('postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT sum(length(pad)) FROM $table WHERE r >= $lo AND r < $hi;
		});
		SSDKitTest::cache_drain($node);
	}
	return;
}

sub hot_hit_ratio
{
	my ($node) = @_;
	$node->restart;				# empty shared_buffers, keep the cache
	$node->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
	$node->safe_psql('postgres', $hot_query);
	return $node->safe_psql('postgres', 'SELECT hit_ratio FROM ssd_cache_stats');
}

# 1. Sequential scans are recognised and not admitted; random reads are.
my $tac = policy_node('tac', 'tac');
$tac->restart;
$tac->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
$tac->safe_psql('postgres', 'SELECT sum(length(pad)) FROM c');
SSDKitTest::cache_drain($tac);
# Pages the setup left in the cache are hits, not classified reads.
my ($seq, $adm, $hits) = split /\|/, $tac->safe_psql('postgres',
	'SELECT sequential_reads, admissions, hits FROM ssd_cache_stats');
cmp_ok($seq + $hits, '>', 5900,
	"a sequential scan is recognised ($seq of 6000 reads, $hits cache hits)");
cmp_ok($adm, '<', 30, "and not admitted ($adm admissions)");

# 2. Warm the hot set with random reads.
for (1 .. 6)
{
	$tac->restart;
	$tac->safe_psql('postgres', $hot_query);
	SSDKitTest::cache_drain($tac);
}
my $before = hot_hit_ratio($tac);
cmp_ok($before, '>=', 0.9, "random reads are admitted: hot set hit ratio $before");

# 3. Pollution: every cold page read once, at random, more pages than the
#    cache holds.  TAC refuses them once full; the hot set stays.
cold_stream($tac);
note 'tac after the cold stream: ' . $tac->safe_psql('postgres',
	'SELECT used_slots, admissions, sequential_reads, refusals, evictions FROM ssd_cache_stats');
my ($full, $refused) = split /\|/, $tac->safe_psql('postgres',
	'SELECT used_slots = slots, refusals FROM ssd_cache_stats');
is($full, 't', 'tac: the cold stream filled the cache');
cmp_ok($refused, '>', 1000, "tac: then refused cold pages ($refused)");
my $after = hot_hit_ratio($tac);
cmp_ok($after, '>=', $before - 0.1, "tac keeps the hot set: hit ratio $before before, $after after");
is($tac->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0', 'tac: cache equals disk');

# 3b. Temperatures outlive a crash: the admission worker saves them after
#     every checkpoint, the postmaster restores them, so a stream of pages
#     never read before, right after the restart, still cannot evict the
#     hot set (with every temperature at zero it did: the hot pages looked
#     as cold as any).
my $tfile = $tac->data_dir . '/ssd_cache.temperatures';
$tac->safe_psql('postgres', $hot_query);
SSDKitTest::cache_drain($tac);
unlink $tfile;
$tac->safe_psql('postgres', 'CHECKPOINT');
my $saved = 0;
for (1 .. 100)
{
	last if ($saved = -s $tfile);
	Time::HiRes::usleep(100_000);
}
cmp_ok($saved, '>', 0, 'a checkpoint saves the temperatures');
$tac->stop('immediate');
my $logpos = -s $tac->logfile;
$tac->start;
my $restored = 0;
$restored = $1 if slurp_file($tac->logfile, $logpos) =~ /restored the temperatures of (\d+) regions/;
cmp_ok($restored, '>', 10, "the start after a crash restores them ($restored regions)");
SSDKitTest::wait_write_through($tac);
cmp_ok(SSDKitTest::cache_stat($tac, 'used_slots'), '==', 2048, 'the cache survives the crash');
SSDKitTest::verify_ok($tac, 'after the crash');
$tac->safe_psql('postgres', 'SELECT ssd_cache_reset_stats()');
cold_stream($tac, 'c2');
my $evicted = $tac->safe_psql('postgres', 'SELECT evictions FROM ssd_cache_stats');
my $after_crash = hot_hit_ratio($tac);
cmp_ok($after_crash, '>=', $before - 0.1,
	"tac keeps the hot set through a cold stream right after a crash: hit ratio $after_crash ($evicted evictions)");

# 3c. WAL redo's reads are writes to come: they neither heat nor admit
#     (after a write load recovery read thousands of pages no query asked
#     for, and admitting them evicted as many hot pages).  A fresh table is
#     loaded and updated at random inside a large shared_buffers, so that
#     no query reads its pages from disk; recovery, in 2 MB, reads them
#     (sequential detection off, so that none is left out as sequential).
$tac->append_conf('postgresql.conf',
	"shared_buffers = 64MB\nssd_cache.sequential_detection = none\n");
$tac->restart;
$tac->safe_psql('postgres', q{
	CREATE TABLE u (id int PRIMARY KEY, pad text);
	INSERT INTO u SELECT g, repeat('u', 700) FROM generate_series(1, 30000) g;
	CHECKPOINT;
	DO $$
	BEGIN
		FOR i IN 1 .. 6000 LOOP
			UPDATE u SET pad = repeat('w', 700) WHERE id = (random() * 29999)::int + 1;
		END LOOP;
	END $$;
});
my $updated = $tac->safe_psql('postgres', q{SELECT count(*) FROM u WHERE pad = repeat('w', 700)});
$tac->stop('immediate');
$tac->append_conf('postgresql.conf', "shared_buffers = 2MB\n");
$tac->start;
my ($redo_reads, $redo_offers) = split /\|/,
  $tac->safe_psql('postgres', 'SELECT disk_reads, admissions + refusals FROM ssd_cache_stats');
cmp_ok($redo_reads, '>', 300, "crash recovery read pages from disk at random ($redo_reads)");
cmp_ok($redo_offers, '<', $redo_reads / 10,
	"and offered none of them for admission ($redo_offers offers, from the test's own queries)");
SSDKitTest::wait_write_through($tac);
SSDKitTest::verify_ok($tac, 'after the second crash');
is($tac->safe_psql('postgres', q{SELECT count(*) FROM u WHERE pad = repeat('w', 700)}),
	$updated, 'the updates survive the crash');
$tac->append_conf('postgresql.conf', "ssd_cache.sequential_detection = both\n");

# A damaged file is ignored with a LOG line; the cache runs on.
$tac->stop;
open(my $fh, '+<', $tfile) or die "open $tfile: $!";
binmode $fh;
seek($fh, 40, 0);
print $fh "garbage!";
close $fh;
$logpos = -s $tac->logfile;
$tac->start;
like(slurp_file($tac->logfile, $logpos), qr/ssd_cache: ignoring "ssd_cache.temperatures": checksum mismatch/,
	'a damaged temperature file is ignored, with a LOG line');
is($tac->safe_psql('postgres', "SELECT mode = 'write-through' FROM ssd_cache_stats"), 't',
	'and the cache runs');
$tac->stop;

# The same with clock: the cold stream evicts the hot set.
my $clock = policy_node('clock', 'clock');
for (1 .. 6)
{
	$clock->restart;
	$clock->safe_psql('postgres', $hot_query);
	SSDKitTest::cache_drain($clock);
}
my $cbefore = hot_hit_ratio($clock);
cold_stream($clock);
note 'clock after the cold stream: ' . $clock->safe_psql('postgres',
	'SELECT used_slots, admissions, sequential_reads, refusals, evictions FROM ssd_cache_stats');
my $cafter = hot_hit_ratio($clock);
cmp_ok($cafter, '<', $after - 0.2,
	"clock loses the hot set: hit ratio $cbefore before, $cafter after (tac: $after)");
$clock->stop;

# 4. Settings change with a reload, and bad values are refused.
$tac->start;
$tac->safe_psql('postgres', "ALTER SYSTEM SET ssd_cache.policy = 'clock'");
$tac->reload;
$tac->poll_query_until('postgres', "SELECT policy = 'clock' FROM ssd_cache_stats")
  or die 'policy did not change';
pass('ssd_cache.policy changes on reload');
my ($ret, $out, $err) = $tac->psql('postgres', "ALTER SYSTEM SET ssd_cache.policy = 'lru'");
like($err, qr/invalid value for parameter "ssd_cache.policy": "lru"\n.*HINT:  Available values: tac, clock/,
	'an unknown policy is refused with the choices');
($ret, $out, $err) = $tac->psql('postgres', "ALTER SYSTEM SET ssd_cache.disk_random_read_time = '-1ms'");
like($err, qr/is outside the valid range for parameter "ssd_cache.disk_random_read_time"/,
	'a negative device time is refused');
$tac->stop;
done_testing();
