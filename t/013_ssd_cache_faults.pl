# ssd_cache under faults and bad configuration: SSD I/O errors fall back to
# the disk and degrade to pass-through; a damaged, foreign or outdated cache
# file is never trusted; bad settings leave the server running without the
# cache, with a WARNING that says why.
use strict;
use warnings;

use File::Copy;
use PostgreSQL::Test::Utils;
use Test::More;
use SSDKitTest;

# These tests warm the cache with sequential scans; TAC would rightly not
# admit those, so every read counts as random here (t/014 tests admission).
my $node = SSDKitTest::node('faults', cache => '32MB',
	conf => "shared_buffers = 16MB\nssd_cache.sequential_detection = none\nautovacuum = off\nfsync = on\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE t (id int, pad text);
	INSERT INTO t SELECT g, repeat('t', 300) FROM generate_series(1, 20000) g;
});
my $expect = '20000|6000000';
my $query = 'SELECT count(*), sum(length(pad)) FROM t';

sub warm
{
	for (1 .. 4)
	{
		$node->restart;
		$node->safe_psql('postgres', $query);
		SSDKitTest::cache_drain($node);
	}
	return;
}

sub set_fault
{
	my ($points) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET ssd_cache.fault_injection = '$points'");
	$node->reload;
	return;
}

sub loaded_count
{
	my @loads = slurp_file($node->logfile) =~ /preparation phase loaded (\d+) of/g;
	return $loads[-1];
}

warm();
my $cached = SSDKitTest::cache_stat($node, 'used_slots');
cmp_ok($cached, '>', 700, "table cached ($cached pages)");

# 1. SSD read errors: every hit falls back to the disk, results stay right,
#    errors are counted and logged, and repeated errors mean pass-through.
$node->restart;
is( $node->safe_psql('postgres',
		"SET ssd_cache.fault_injection = 'slot_read_error'; $query"),
	$expect, 'SSD read errors: results from the disk are right');
cmp_ok(SSDKitTest::cache_stat($node, 'errors'), '>=', 8, 'SSD read errors are counted');
is(SSDKitTest::cache_stat($node, 'mode'), 'pass-through', 'repeated errors: pass-through mode');
ok($node->log_contains(qr/ssd_cache: SSD read of block \d+ of relation .* failed: Input\/output error; using the disk copy/),
	'each error is logged');
ok($node->log_contains(qr/WARNING:  ssd_cache is now in pass-through mode: \d+ SSD errors within 60 seconds/),
	'pass-through is announced');
$node->restart;
is(SSDKitTest::cache_stat($node, 'mode'), 'write-through', 'after a restart the cache is used again');
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'SSD read errors: cache equals disk');

# 2. SSD write errors (admission and overwrite) in every process: the disk
#    gets every write, failed slots are forgotten.
warm();
set_fault('slot_write_error');
$node->safe_psql('postgres', "UPDATE t SET pad = repeat('u', 300) WHERE id % 3 = 0; CHECKPOINT;");
set_fault('');
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE pad LIKE 'u%'"), '6666',
	'SSD write errors: every update is there');
$node->restart;
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE pad LIKE 'u%'"), '6666',
	'SSD write errors: and after a restart');
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'SSD write errors: cache equals disk');

# 3. A directory write fails: the cache cannot record an invalidation, so it
#    goes pass-through and disowns its file; the next start is empty.
warm();
set_fault('dir_write_error');
$node->safe_psql('postgres', "DELETE FROM t WHERE id > 10000; VACUUM t;");
is(SSDKitTest::cache_stat($node, 'mode'), 'pass-through', 'directory write error: pass-through');
ok($node->log_contains(qr/pass-through mode: the cache directory could not be updated: Input\/output error\n.*DETAIL:  .*the cache will start empty after a restart/),
	'directory write error is explained');
set_fault('');
$node->restart;
ok($node->log_contains(qr/starting with an empty cache .* because the file has no ssd_cache header/),
	'after a directory write error the cache starts empty');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '10000', 'directory write error: data right');
$node->safe_psql('postgres', "INSERT INTO t SELECT g, repeat('t', 300) FROM generate_series(10001, 20000) g");

# 4. A corrupted directory entry is not loaded; nothing else is lost.
warm();
my $before = SSDKitTest::cache_stat($node, 'used_slots');
$node->stop;
{
	# Slot 0 is admitted first; its entry is the first of the directory,
	# which starts at block 1 of the file.
	open my $fh, '+<:raw', SSDKitTest::cache_file($node) or die $!;
	seek $fh, 8192 + 4, 0;
	print $fh "\xff\xff\xff\xff";
	close $fh;
}
$node->start;
is(loaded_count(), $before - 1, 'a corrupted entry is dropped, the others are loaded');
is($node->safe_psql('postgres', $query), $expect, 'corrupted entry: results right');
is($node->safe_psql('postgres', 'SELECT mismatched FROM ssd_cache_verify()'), '0',
	'corrupted entry: cache equals disk');

# 4b. A truncated cache file (slots lost, directory intact) is never
#     trusted: its slots would read back as zeros, i.e. as empty pages.
warm();
$node->stop;
truncate SSDKitTest::cache_file($node), 2 * 1024 * 1024 or die "truncate: $!";
$node->start;
ok($node->log_contains(qr/starting with an empty cache .* because it is shorter than a cache of this size/),
	'a truncated cache file is refused');
is($node->safe_psql('postgres', $query), $expect, 'truncated cache file: results right');

# 5. A cache file from another cluster is never trusted.
my $other = SSDKitTest::node('other', cache => '32MB');
$other->stop;
$node->stop;
copy(SSDKitTest::cache_file($other), SSDKitTest::cache_file($node)) or die "copy: $!";
$node->start;
ok($node->log_contains(qr/starting with an empty cache .* because it belongs to another cluster/),
	'a foreign cache file is refused');
is($node->safe_psql('postgres', $query), $expect, 'foreign cache file: results right');

# 6. The server ran without ssd_cache and checkpointed: pages written then
#    never reached the cache, so its file must not be trusted.
warm();
$node->stop;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'qdtt_costing'");
$node->start;
$node->safe_psql('postgres', "UPDATE t SET pad = repeat('w', 300); CHECKPOINT;");
$node->stop;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries',
	"'" . join(',', @SSDKitTest::EXTENSIONS) . "'");
$node->start;
ok($node->log_contains(qr/starting with an empty cache .* because the latest checkpoint .* happened without ssd_cache/),
	'a cache that missed writes is refused');
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE pad LIKE 'w%'"), '20000',
	'writes made without ssd_cache are all visible');
$node->stop;

# 7. Bad configuration: the server starts without the cache and says why.
sub starts_without_cache
{
	my ($label, $why) = @_;
	$node->start;
	ok($node->log_contains(qr/WARNING:  (?:ssd_cache is off: )?.*$why/), "$label: the WARNING says why");
	is($node->safe_psql('postgres', 'SELECT mode FROM ssd_cache_stats'), 'off', "$label: mode off");
	like($node->safe_psql('postgres', 'SELECT problem FROM ssd_cache_stats'), qr/$why/,
		"$label: ssd_cache_stats shows the problem");
	is($node->safe_psql('postgres', $query), $expect, "$label: data right");
	$node->stop;
	return;
}
my $dir = $node->basedir . '/cachedir';
mkdir $dir;
$node->adjust_conf('postgresql.conf', 'ssd_cache.path', "'$dir'");
starts_without_cache('a cache path that is a directory', 'is not a regular file');

# The SSD not mounted after a reboot: the data is all on the disk.
$node->adjust_conf('postgresql.conf', 'ssd_cache.path', "'$dir/no/such/dir/cache.dat'");
starts_without_cache('a cache file in a missing directory', 'No such file or directory');

$node->adjust_conf('postgresql.conf', 'ssd_cache.path', "'" . SSDKitTest::cache_file($node) . "'");
$node->adjust_conf('postgresql.conf', 'ssd_cache.size', "'0'");
starts_without_cache('ssd_cache.size = 0', 'invalid value for parameter "ssd_cache.size": "0" \\(it must be between 1MB and 16TB\\)');
$node->adjust_conf('postgresql.conf', 'ssd_cache.size', "'lots'");
starts_without_cache('ssd_cache.size = lots', 'invalid value for parameter "ssd_cache.size": "lots"');

$node->adjust_conf('postgresql.conf', 'ssd_cache.size', "'32MB'");
$node->start;
is($node->safe_psql('postgres', $query), '20000|6000000', 'fixed configuration: server back');
SSDKitTest::amcheck_ok($node, 'faults');
$node->stop;

# 8. A page newer than the disk damaged on the SSD (write-back): it is the
#    only copy, so the query fails as it would on a damaged data-file page,
#    and a WARNING says that the damaged copy is the SSD cache's, not the
#    data file the error names.
my $wb = SSDKitTest::node('faults_wb', cache => '8MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 16MB\nssd_cache.mode = write_back\nfsync = on\nautovacuum = off\n");
$wb->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE d (id int, note text);
	INSERT INTO d SELECT g, 'row ' || g FROM generate_series(1, 100) g;
	CHECKPOINT;
	UPDATE d SET note = 'ssdcache-damage-marker-' || id WHERE id = 50;
	CHECKPOINT;
});
cmp_ok(SSDKitTest::cache_stat($wb, 'fresher_pages'), '>', 0, 'the checkpoint left the page fresher on the SSD');
$wb->stop('immediate');
my $file = SSDKitTest::cache_file($wb);
open(my $fh, '+<:raw', $file) or die "open $file: $!";
my ($pos, $page, $damaged) = (0, '', 0);
while (read($fh, $page, 8192) == 8192)
{
	if (index($page, 'ssdcache-damage-marker-50') >= 0)
	{
		seek($fh, $pos + 8000, 0);
		print $fh chr(ord(substr($page, 8000, 1)) ^ 0xff);
		$damaged++;
	}
	$pos += 8192;
	seek($fh, $pos, 0);
}
close($fh);
is($damaged, 1, 'the fresher page found in the cache file and damaged');
$wb->start;
my ($rc, $out, $err) = $wb->psql('postgres', 'SELECT count(*) FROM d');
isnt($rc, 0, 'a damaged fresher page fails the query');
like($err, qr/WARNING:  ssd_cache: block 0 of "base\/\d+\/\d+" read from the SSD cache fails its checksum/,
	'the WARNING names the SSD cache as the damaged copy');
like($err, qr/ERROR:  invalid page in block 0/, 'the error is the usual damaged-page error');
$wb->stop('immediate');

# 9. The cache file replaced while the server runs (cp and mv, rsync): every
#    process keeps using the file the server locked, and the copy left at
#    the path is not trusted after a clean restart.
my $sw = SSDKitTest::node('faults_swap', cache => '16MB',
	conf => "shared_buffers = 1MB\nssd_cache.sequential_detection = none\nautovacuum = off\nfsync = on\n");
$sw->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE s (id int PRIMARY KEY, v int);
	INSERT INTO s SELECT g, 1 FROM generate_series(1, 20000) g;
	CHECKPOINT;
});
$sw->safe_psql('postgres', 'SELECT sum(v) FROM s') for 1 .. 2;
SSDKitTest::cache_drain($sw);
cmp_ok(SSDKitTest::cache_stat($sw, 'used_slots'), '>', 50, 'the table is cached');
my $swfile = SSDKitTest::cache_file($sw);
copy($swfile, "$swfile.new") or die "copy: $!";
rename("$swfile.new", $swfile) or die "rename: $!";
$sw->safe_psql('postgres', 'UPDATE s SET v = 2; CHECKPOINT;');
is($sw->safe_psql('postgres', 'SELECT sum(v) FROM s'), '40000',
	'a file put over the path while running: a new session reads the new values');
$sw->restart;
is($sw->safe_psql('postgres', 'SELECT sum(v) FROM s'), '40000', 'and after a clean restart');
ok($sw->log_contains(qr/ssd_cache: starting with an empty cache in .* because/),
	'the file found at the path after the restart was not trusted');
is(SSDKitTest::query($sw, 'SELECT mismatched FROM ssd_cache_verify()'), '0', 'no cached page differs from the disk');

# 10. The cache file truncated while the server runs, and extended again by
#     later slot writes: the cached pages read back as zeros (a valid empty
#     page to PostgreSQL), which must not be served.
$sw->safe_psql('postgres', q{
	CREATE TABLE s2 (id int, pad text);
	INSERT INTO s2 SELECT g, repeat('p', 200) FROM generate_series(1, 20000) g;
});
$sw->safe_psql('postgres', 'SELECT sum(v) FROM s') for 1 .. 2;
SSDKitTest::cache_drain($sw);
truncate($swfile, 0) or die "truncate: $!";
$sw->safe_psql('postgres', 'SELECT count(*) FROM s2') for 1 .. 2;
SSDKitTest::cache_drain($sw);
is($sw->safe_psql('postgres', 'SELECT count(*), sum(v) FROM s'), '20000|40000',
	'a cache file truncated while running: no page reads as empty');
cmp_ok(SSDKitTest::cache_stat($sw, 'errors'), '>', 0, 'the lost slots count as SSD errors');
$sw->stop;

# 11. The postmaster killed halfway through writing the fresher pages back at
#     a clean shutdown (a service manager's stop timeout): the shutdown was
#     recorded first, so the next start trusts the file as it is and has
#     every change.
my $sd = SSDKitTest::node('faults_stop', cache => '8MB', init => { allows_streaming => 1 },
	conf => "shared_buffers = 1MB\nssd_cache.mode = write_back\nfsync = on\nautovacuum = off\n"
	  . "ssd_cache.fault_injection = 'die_during_exit_write_back'\n");
$sd->safe_psql('postgres', q{
	CREATE EXTENSION ssd_cache;
	CREATE TABLE k (id int PRIMARY KEY, v int);
	INSERT INTO k SELECT g, 0 FROM generate_series(1, 20000) g;
	CHECKPOINT;
	UPDATE k SET v = 1;
	CHECKPOINT;
});
cmp_ok(SSDKitTest::cache_stat($sd, 'fresher_pages'), '>', 1, 'fresher pages before the stop');
$sd->stop('fast', fail_ok => 1);
ok($sd->log_contains(qr/killed halfway through the shutdown write-back/), 'the postmaster was killed during it');
$sd->adjust_conf('postgresql.conf', 'ssd_cache.fault_injection', undef);
ok($sd->start(fail_ok => 1), 'the next start is not refused');
is($sd->safe_psql('postgres', 'SELECT count(*), sum(v) FROM k'), '20000|20000', 'and has every change');
is(SSDKitTest::query($sd, 'SELECT mismatched FROM ssd_cache_verify()'), '0', 'no cached page is older than the disk');
SSDKitTest::amcheck_ok($sd, 'killed during the shutdown write-back');
$sd->stop;
done_testing();
