# The guard index (access method bloomguard) on a streaming hot standby.  A
# standby has no index machinery of its own: its guard is what the redo of
# the primary's WAL (generic WAL of every insert, the build's whole pages,
# a growth's new layer) makes of it.  A row the standby sees was replayed
# after its index insert, so its key must answer true there; and the
# standby's guard must really answer (absent keys mostly false), not say
# "maybe" for everything.
#
#  1. After catch-up, every key answers true on the standby, absent keys
#     mostly false.
#  2. While the primary inserts continuously (a background loop committing
#     every 300 rows into a big guard and into one of capacity 1000 that
#     grows by layers meanwhile), the standby checks, again and again, every
#     row it sees (in new sessions and in one long session whose cached
#     state of the guard must follow the growth): 0 false negatives, and
#     the rows it sees keep growing (the checks did race the replay).
#  3. After the stream, far past the small guard's capacity: the standby's
#     bloom_guard_info shows more than one layer and is identical to the
#     primary's (physical replay), 0 false negatives, bloom_guard_filter
#     holds every key.
#     Then VACUUM builds the big guard again on the primary (three quarters
#     of its rows deleted): the standby's guard is the primary's, every key
#     answers true there, the deleted ones mostly false.
#  4. An unlogged table's guard: on the standby (init fork only) a check
#     does not answer false; after the promotion guard and table start empty
#     (from the init forks, which came by WAL) and new keys are found.
#  5. Promotion: inserts on the promoted standby (the small guard appends a
#     layer: its first growth there) are found, 0 false negatives, absent
#     keys mostly false.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;
use GuardIndexTest;

my $s_keys = 'SELECT k FROM s';
my $g_keys = 'SELECT k FROM grow';
my $s_absent = "SELECT 'absent' || i FROM generate_series(1, 20000) i";
my $g_absent = 'SELECT -generate_series(1, 20000)::int8';
my $info = q{SELECT layers || ',' || capacity || ',' || added || ',' || bytes || ',' || target_fpr || ',' || estimated_fpr FROM bloom_guard_info('grow_g')};

# ---------------------------------------------------------------- setup ----
my $primary = PostgreSQL::Test::Cluster->new('guard_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_buffers = 64MB\n");
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE s (id bigserial PRIMARY KEY, k text NOT NULL);
	INSERT INTO s (k) SELECT 'seed' || i FROM generate_series(1, 20000) i;
	CREATE INDEX s_g ON s USING bloomguard (k);
	CREATE TABLE grow (k int8 NOT NULL);
	CREATE INDEX grow_g ON grow USING bloomguard (k) WITH (capacity = 1000);
	INSERT INTO grow SELECT generate_series(1, 500);
	CREATE TABLE writer_stop (x int);
	CREATE UNLOGGED TABLE ul (k text NOT NULL);
	CREATE INDEX ul_g ON ul USING bloomguard (k);
	INSERT INTO ul SELECT 'ul' || i FROM generate_series(1, 5000) i;
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('guard_standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# ---------------------------------------------------- 1. after catch-up ----
$primary->safe_psql('postgres', q{INSERT INTO s (k) SELECT 'after-backup' || i FROM generate_series(1, 5000) i});
$primary->wait_for_catchup($standby, 'replay');
all_found($standby, 's_g', $s_keys, 25000, 'standby, caught up');
all_found($standby, 'grow_g', $g_keys, 500, 'standby, caught up, small guard');
mostly_false($standby, 's_g', $s_absent, 20000, 'standby, caught up');
is($standby->safe_psql('postgres', q{SELECT layers FROM bloom_guard_info('grow_g')}), '1',
	'standby: the small guard has one layer before the stream');

# A long session on the standby, which has read both guards already.
my $long = $standby->background_psql('postgres', on_error_stop => 0);
is($long->query(false_sql('grow_g', $g_keys)), '0/500', 'long standby session: the small guard, before the stream');

# ------------------------------------------------- 2. checks during a stream ----
my ($wout, $werr) = ('', '');
my $writer = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $primary->connstr('postgres'), '-c', q{
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 0 .. 1000000 LOOP
		EXIT WHEN EXISTS (SELECT 1 FROM writer_stop) OR clock_timestamp() > t0 + interval '60 s';
		INSERT INTO s (k) SELECT 'live' || (i * 300 + g) FROM generate_series(1, 300) g;
		INSERT INTO grow SELECT 1000000 + i * 300 + g FROM generate_series(1, 300) g;
		COMMIT;
		PERFORM pg_sleep(0.03);
	END LOOP;
END $$} ],
	'>', \$wout, '2>', \$werr);
ok(poll_for($primary, 'postgres', 'SELECT count(*) > 3000 FROM grow', 't', 30), 'the writer is inserting');

my ($checks, $bad, $first, $last) = (0, 0, undef, 0);
my $until = time + 10;
while (time < $until)
{
	# a new session, and the long one, each check both guards
	for my $how ('new', 'long')
	{
		my $sql = "SELECT (" . false_sql('s_g', $s_keys) . ") || '|' || (" . false_sql('grow_g', $g_keys) . ")";
		my $r;
		if ($how eq 'new')
		{
			my ($rc, $out, $err) = $standby->psql('postgres', $sql);
			$r = $rc == 0 ? $out : "error: $err";
		}
		else
		{
			my ($out, $failed) = $long->query($sql);
			$r = $failed ? "error: $long->{stderr}" : $out;
		}
		$checks++;
		if ($r =~ m{^(\d+)/(\d+)\|(\d+)/(\d+)$})
		{
			my ($fs, $ns, $fg, $ng) = ($1, $2, $3, $4);
			$first //= $ng;
			$last = $ng;
			if ($fs != 0 || $fg != 0)
			{
				$bad++;
				diag("standby check $checks ($how session): $fs of $ns keys of s and $fg of $ng keys of grow answer false");
			}
		}
		else
		{
			$bad++;
			diag("standby check $checks ($how session): $r");
		}
	}
	usleep(200_000);
}
$primary->safe_psql('postgres', 'INSERT INTO writer_stop VALUES (1)');
$writer->finish;
is($werr, '', 'the writer ran without an error');
cmp_ok($checks, '>=', 4, "the standby checked $checks times during the stream");
is($bad, 0, 'during the stream: no check on the standby found a key answering false');
cmp_ok($last, '>', $first // 0,
	'during the stream: the standby saw rows arrive between its checks (' . ($first // '-') . " then $last rows of grow)");

# ----------------------------------------------------- 3. far past capacity ----
$primary->safe_psql('postgres', q{INSERT INTO grow SELECT 5000000 + generate_series(1, 60000)});
$primary->wait_for_catchup($standby, 'replay');
my $ns = $primary->safe_psql('postgres', 'SELECT count(*) FROM s');
my $ng = $primary->safe_psql('postgres', 'SELECT count(*) FROM grow');
cmp_ok($ng, '>', 64000, "the small guard's table holds far more than its capacity ($ng rows)");
my $pinfo = $primary->safe_psql('postgres', $info);
my ($players) = split /,/, $pinfo;
cmp_ok($players, '>', 1, "primary: the small guard grew ($players layers)");
my $sinfo = $standby->safe_psql('postgres', $info);
my ($slayers) = split /,/, $sinfo;
cmp_ok($slayers, '>', 1, "standby: bloom_guard_info shows the growth replayed ($slayers layers)");
is($sinfo, $pinfo, 'standby: bloom_guard_info is identical to the primary\'s');
all_found($standby, 's_g', $s_keys, $ns, 'standby, after the stream');
all_found($standby, 'grow_g', $g_keys, $ng, 'standby, after the growth');
is($long->query(false_sql('grow_g', $g_keys)), "0/$ng", 'long standby session: the grown guard, all keys answer true');
is($long->query(q{SELECT layers FROM bloom_guard_info('grow_g')}), $slayers,
	'long standby session: bloom_guard_info shows every layer');
$long->quit;
mostly_false($standby, 's_g', $s_absent, 20000, 'standby, after the stream');
mostly_false($standby, 'grow_g', $g_absent, 20000, 'standby, after the growth');
is($standby->safe_psql('postgres', q{
	WITH f AS MATERIALIZED (SELECT bloom_guard_filter('grow_g') AS f)
	SELECT count(*) FILTER (WHERE NOT bloom_contains(f.f, k)) || '/' || count(*) FROM grow, f}),
	"0/$ng", 'standby: bloom_guard_filter of the grown guard holds every key');
isnt($standby->psql('postgres', q{INSERT INTO grow VALUES (1)}), 0, 'standby: read-only');

# A guard built again by VACUUM on the primary (three quarters of its rows
# deleted): the standby replays the new layer and the switch to it.
my $s_fn = $primary->safe_psql('postgres', q{SELECT pg_relation_filenode('s_g')});
$primary->safe_psql('postgres', q{DELETE FROM s WHERE id % 4 <> 0});
$primary->safe_psql('postgres', 'VACUUM s');
# (VACUUM writes no commit record, so nothing flushed its WAL yet: wait for
# the replay of all it inserted)
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
$ns = $primary->safe_psql('postgres', 'SELECT count(*) FROM s');
my $s_info = q{SELECT layers || ',' || capacity || ',' || added FROM bloom_guard_info('s_g')};
my $ps = $primary->safe_psql('postgres', $s_info);
like($ps, qr/^1,/, "primary: VACUUM built the guard again ($ps layers,capacity,keys)");
is($primary->safe_psql('postgres', q{SELECT pg_relation_filenode('s_g')}), $s_fn, 'primary: the same relfilenode');
is($standby->safe_psql('postgres', $s_info), $ps, 'standby: the rebuilt guard replayed, as on the primary');
all_found($standby, 's_g', $s_keys, $ns, 'standby, after the rebuild');
mostly_false($standby, 's_g', "SELECT k FROM (SELECT 'seed' || i AS k FROM generate_series(1, 20000) i WHERE i % 4 <> 0) d", 15000,
	'standby: keys of the deleted rows, after the rebuild');

# An unlogged table's guard: the standby has its init fork only.  Reading
# the table there fails; a check must not answer false for its keys.
my ($ust, $uerr, $uout) = sqlstate($standby, 'postgres', q{SELECT bloom_guard_contains('ul_g', 'ul1'::text)});
note("standby, a check of an unlogged table's guard: $ust '$uout' $uerr");
ok($ust ne 'OK' || $uout eq 't', "standby: a check of an unlogged table's guard does not answer false (got $ust '$uout')");

# ------------------------------------------------------------ 4. promotion ----
$standby->promote;
ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'), 'the standby is promoted');
# the unlogged table and its guard start empty (from their init forks,
# which came by WAL) and work
is($standby->safe_psql('postgres', 'SELECT count(*) FROM ul'), '0', 'promoted: the unlogged table is empty');
is($standby->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE bloom_guard_contains('ul_g', 'ul' || i)) FROM generate_series(1, 5000) i}),
	'0', 'promoted: the unlogged table\'s guard is empty');
$standby->safe_psql('postgres', q{INSERT INTO ul SELECT 'ulp' || i FROM generate_series(1, 3000) i});
all_found($standby, 'ul_g', 'SELECT k FROM ul', 3000, 'promoted, the unlogged table\'s guard');
all_found($standby, 'grow_g', $g_keys, $ng, 'promoted, at once');
$standby->safe_psql('postgres', q{INSERT INTO s (k) SELECT 'promoted' || i FROM generate_series(1, 5000) i});
all_found($standby, 's_g', $s_keys, $ns + 5000, 'promoted, inserts after the promotion');
# inserts into the small guard until it appends a layer (its first growth
# on the promoted server: the file was extended by redo until then)
my ($play, $added_rows) = ($slayers, 0);
for my $round (1 .. 10)
{
	$standby->safe_psql('postgres',
		"INSERT INTO grow SELECT 9000000 + $added_rows + generate_series(1, 50000)");
	$added_rows += 50000;
	($play) = split /,/, $standby->safe_psql('postgres', $info);
	last if $play > $slayers;
}
cmp_ok($play, '>', $slayers, "promoted: the small guard appended a layer ($slayers, then $play after $added_rows rows)");
all_found($standby, 'grow_g', $g_keys, $ng + $added_rows, 'promoted, the small guard grown further');
mostly_false($standby, 's_g', $s_absent, 20000, 'promoted');
mostly_false($standby, 'grow_g', $g_absent, 20000, 'promoted, the small guard');

# the old primary is unaffected
all_found($primary, 'grow_g', $g_keys, $ng, 'old primary');
all_found($primary, 'ul_g', 'SELECT k FROM ul', 5000, 'old primary, the unlogged table\'s guard');

$standby->stop;
$primary->stop;
done_testing();
